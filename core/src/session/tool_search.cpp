// The tool search index (SPEC §16): tiers of name matches, then BM25 over weighted fields.
// See tool_search.hpp for the rules.

#include "mcprt/tool_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framing/utf8.hpp"
#include "util/sort_order.hpp"

namespace mcprt {
// Inside a named namespace: core sources compile as unity batches, where another file's
// helpers of the same name would clash.
namespace search_text {

// Server text is bounded before it is tokenised: a description of megabytes costs the
// index no more than its first 8 KiB (a real description is a few hundred bytes).
constexpr std::size_t kIndexedFieldMaxBytes = 8 * 1024;
constexpr std::size_t kIndexedPropertiesMax = 64;
constexpr double kBm25K1 = 1.2;
constexpr double kBm25B = 0.75;

bool is_ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word_byte(char c) {
  return is_ascii_upper(c) || is_ascii_lower(c) || is_ascii_digit(c) ||
         static_cast<unsigned char>(c) >= 0x80;  // inside a UTF-8 sequence: part of a word
}
char ascii_lower(char c) { return is_ascii_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Plurals to their singular, in place, enough for tool vocabulary: files → file,
// directories → directory, matches → match; "status", "process", "analysis" stay.
void make_singular(std::string& word) {
  if (word.size() <= 3 || word.back() != 's') return;  // every rule below ends in 's'
  if (word.size() > 4 && ends_with(word, "ies")) {
    word.resize(word.size() - 3);
    word.push_back('y');
    return;
  }
  if (word.size() > 4 && (ends_with(word, "sses") || ends_with(word, "shes") ||
                          ends_with(word, "ches") || ends_with(word, "xes"))) {
    word.resize(word.size() - 2);
    return;
  }
  if (word.size() > 3 && word.back() == 's' && !ends_with(word, "ss") && !ends_with(word, "us") &&
      !ends_with(word, "is")) {
    word.pop_back();
  }
}

bool is_stop_word(std::string_view w) {
  static constexpr std::string_view kStop[] = {
      "a",   "an",  "and", "are",  "as",   "at",  "be",   "by",   "can",  "do",   "for", "from",
      "i",   "in",  "into", "is",  "it",   "its", "me",   "my",   "of",   "on",   "or",  "our",
      "that", "the", "this", "to",  "use",  "want", "we",  "with", "you",  "your"};
  if (w.size() > 4) return false;  // no stop word is longer
  for (std::string_view s : kStop) {
    if (w == s) return true;
  }
  return false;
}

// Words a model uses for the same action (and a few nouns tool authors abbreviate): a
// query term also finds its group's other words, each at kSynonymWeight. Terms as the
// index keeps them (lowercase, singular).
constexpr double kSynonymWeight = 0.4;
constexpr std::string_view kSynonymGroups[] = {
    "create add new make insert",
    "delete remove drop erase destroy",
    "cancel kill terminate abort stop",
    "list enumerate show",
    "get fetch retrieve read obtain",
    "update edit modify change",
    "search find lookup query",
    "run execute invoke trigger",
    "navigate visit goto browse",
    "revert undo rollback",
    "send post",
    "upload put",
    "download save",
    "directory folder dir",
    "repository repo",
    "database db",
    "image picture photo",
    "email mail",
};

template <class Emit>
void for_each_synonym(std::string_view term, Emit&& emit) {
  for (std::string_view group : kSynonymGroups) {
    // Is `term` one of the group's words?
    bool member = false;
    for (std::size_t i = 0; i < group.size() && !member;) {
      std::size_t end = group.find(' ', i);
      if (end == std::string_view::npos) end = group.size();
      member = group.substr(i, end - i) == term;
      i = end + 1;
    }
    if (!member) continue;
    for (std::size_t i = 0; i < group.size();) {
      std::size_t end = group.find(' ', i);
      if (end == std::string_view::npos) end = group.size();
      if (group.substr(i, end - i) != term) emit(group.substr(i, end - i));
      i = end + 1;
    }
  }
}

// Splits `text` into raw words: runs of word bytes, broken at camelCase humps, each broken
// run followed by itself whole ("readFile" → read, File, readFile; "JavaScript" → Java,
// Script, JavaScript), so that "javascript" and "java script" both find it.
template <class Emit>
void split_words(std::string_view text, Emit&& emit) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_word_byte(text[i])) ++i;
    const std::size_t run = i;
    std::size_t start = i;
    while (i < text.size() && is_word_byte(text[i])) {
      if (i > start) {
        const char prev = text[i - 1];
        const char cur = text[i];
        const bool hump = (is_ascii_lower(prev) || is_ascii_digit(prev)) && is_ascii_upper(cur);
        const bool acronym_end = is_ascii_upper(prev) && is_ascii_upper(cur) &&
                                 i + 1 < text.size() && is_ascii_lower(text[i + 1]);
        if (hump || acronym_end) {
          emit(text.substr(start, i - start));
          start = i;
        }
      }
      ++i;
    }
    if (i > start) emit(text.substr(start, i - start));
    if (start > run) emit(text.substr(run, i - run));
  }
}

// Where for_each_term sends each term: a callable behind a plain function pointer, so the
// tokenizer exists once in the module, not once per caller.
struct TermSink {
  void* context;
  void (*emit)(void* context, std::string_view term);
};
template <class F>
TermSink sink_of(F& f) {
  return {&f, [](void* context, std::string_view term) { (*static_cast<F*>(context))(term); }};
}

// Sends each term of the first `max_bytes` of `text` to `sink`, in order. The term is built
// in `scratch` (reused: a term costs no allocation of its own).
void for_each_term(std::string_view text, std::size_t max_bytes, std::string& scratch, TermSink sink) {
  split_words(detail::utf8_prefix(text, max_bytes), [&](std::string_view w) {
    scratch.assign(w.data(), w.size());
    for (char& c : scratch) c = ascii_lower(c);
    if (is_stop_word(scratch)) return;
    make_singular(scratch);
    sink.emit(sink.context, scratch);
  });
}

std::vector<std::string> terms_of(std::string_view text, std::size_t max_bytes) {
  std::vector<std::string> out;
  std::string scratch;
  auto keep = [&](std::string_view term) { out.emplace_back(term); };
  for_each_term(text, max_bytes, scratch, sink_of(keep));
  return out;
}

// The index's terms, each with a dense id (in first-seen order): open addressing over
// FNV-1a hashes. A token costs one hash and usually one comparison, not a tree walk, and
// the web module carries less code than std::unordered_map's.
class TermTable {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  void clear() {
    terms_.clear();
    slots_.assign(1024, kEmpty);
  }
  std::size_t size() const { return terms_.size(); }

  // The id of `term`, added (with the next id) when new.
  std::size_t intern(std::string_view term) {
    if (slots_.empty() || (terms_.size() + 1) * 2 > slots_.size()) grow();
    std::size_t at = slot_of(term);
    if (slots_[at] == kEmpty) {
      slots_[at] = static_cast<std::uint32_t>(terms_.size());
      terms_.emplace_back(term);
    }
    return slots_[at];
  }

  std::size_t find(std::string_view term) const {
    if (slots_.empty()) return npos;
    const std::uint32_t id = slots_[slot_of(term)];
    return id == kEmpty ? npos : id;
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;

  static std::uint64_t hash(std::string_view s) {
    std::uint64_t h = 14695981039346656037ull;
    for (char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;
    }
    return h;
  }

  // The slot that holds `term`, or the empty slot where it would go.
  std::size_t slot_of(std::string_view term) const {
    const std::size_t mask = slots_.size() - 1;
    std::size_t at = static_cast<std::size_t>(hash(term)) & mask;
    while (slots_[at] != kEmpty && terms_[slots_[at]] != term) at = (at + 1) & mask;
    return at;
  }

  void grow() {
    slots_.assign(std::max<std::size_t>(1024, slots_.size() * 2), kEmpty);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t id = 0; id < terms_.size(); ++id) {
      std::size_t at = static_cast<std::size_t>(hash(terms_[id])) & mask;
      while (slots_[at] != kEmpty) at = (at + 1) & mask;
      slots_[at] = static_cast<std::uint32_t>(id);
    }
  }

  std::vector<std::string> terms_;
  std::vector<std::uint32_t> slots_;  // term ids; a power-of-two size, at most half full
};

// A tool's indexed text, viewed where it lives (a ToolSearchDocument, or the McpToolInfo
// and its definition), so that a rebuild copies no field.
struct DocumentView {
  std::string_view name;
  std::string_view raw_name;
  std::string_view server;
  std::string_view title;
  std::string_view description;
  std::vector<std::string_view> properties;
};

DocumentView view_of(const ToolSearchDocument& doc) {
  DocumentView v{doc.name, doc.raw_name, doc.server, doc.title, doc.description, {}};
  v.properties.assign(doc.properties.begin(), doc.properties.end());
  return v;
}

const std::string* string_member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// The title from the definition's `title` or `annotations.title`; the property names of
// inputSchema.properties (the first kIndexedPropertiesMax).
DocumentView view_of(const McpToolInfo& info) {
  DocumentView v{info.name, info.raw_name, info.server, {}, info.description, {}};
  const json& def = info.definition.get();
  if (const std::string* title = string_member(def, "title")) {
    v.title = *title;
  } else if (def.is_object()) {
    if (auto ann = def.find("annotations"); ann != def.end()) {
      if (const std::string* t = string_member(*ann, "title")) v.title = *t;
    }
  }
  const json& schema = info.input_schema.get();
  if (schema.is_object()) {
    auto props = schema.find("properties");
    if (props != schema.end() && props->is_object()) {
      for (auto it = props->begin(); it != props->end() && v.properties.size() < kIndexedPropertiesMax; ++it) {
        v.properties.emplace_back(it.key());
      }
    }
  }
  return v;
}

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

// The query with spaces and '-' read as '_' (runs collapsed), lowercased: how a model
// writes a tool name it half remembers ("read file", "read-file").
std::string name_form(std::string_view query) {
  std::string out;
  for (char c : trim(query)) {
    const char n = (c == ' ' || c == '-' || c == '\t') ? '_' : ascii_lower(c);
    if (n == '_' && !out.empty() && out.back() == '_') continue;
    out.push_back(n);
  }
  return out;
}

}  // namespace search_text

const char* to_string(ToolSearchMatch match) {
  switch (match) {
    case ToolSearchMatch::exact_name:
      return "exact-name";
    case ToolSearchMatch::name_substring:
      return "name-substring";
    case ToolSearchMatch::selected:
      return "selected";
    case ToolSearchMatch::keywords:
      break;
  }
  return "keywords";
}

std::string summarize_description(std::string_view description, std::size_t max_bytes) {
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";
  // Whitespace runs become one space; stop copying once past the cap.
  std::string flat;
  bool space = false;
  for (char c : description) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      space = !flat.empty();
      continue;
    }
    if (space) flat.push_back(' ');
    space = false;
    flat.push_back(c);
    if (flat.size() > max_bytes) break;
  }
  if (flat.size() <= max_bytes) return flat;
  if (max_bytes <= kEllipsis.size()) return std::string(detail::utf8_prefix(flat, max_bytes));
  const std::size_t budget = max_bytes - kEllipsis.size();
  std::string_view kept = detail::utf8_prefix(flat, budget);
  if (kept.size() < flat.size() && flat[kept.size()] != ' ') {
    // The cut falls inside a word: back off to the last space, unless the word is all
    // there is.
    const std::size_t last_space = kept.rfind(' ');
    if (last_space != std::string_view::npos && last_space > 0) kept = kept.substr(0, last_space);
  }
  while (!kept.empty() && (kept.back() == ' ' || kept.back() == ',' || kept.back() == ';' ||
                           kept.back() == ':')) {
    kept.remove_suffix(1);
  }
  return std::string(kept) + std::string(kEllipsis);
}

std::vector<std::string> search_terms(std::string_view text) {
  return search_text::terms_of(text, text.size());
}

ToolSearchDocument search_document(const McpToolInfo& info) {
  const search_text::DocumentView v = search_text::view_of(info);
  ToolSearchDocument doc{std::string(v.name),  std::string(v.raw_name),    std::string(v.server),
                         std::string(v.title), std::string(v.description), {}};
  doc.properties.assign(v.properties.begin(), v.properties.end());
  return doc;
}

struct ToolSearchIndex::Impl {
  struct Doc {
    std::string name;
    std::string name_lower;
    std::string raw_lower;
    std::string label_lower;  // server/tool
    std::string name_terms;  // the full name's terms, each followed by '\0' (for +term)
    double length = 0;                    // weighted length
  };
  struct Posting {
    std::size_t doc;
    double weighted_tf;
  };
  std::vector<Doc> docs;  // sorted by name (exact names are found by binary search)
  search_text::TermTable term_ids;
  std::vector<std::vector<Posting>> postings;  // by term id
  double average_length = 0;

  void build(std::vector<search_text::DocumentView> documents) {
    using search_text::kIndexedFieldMaxBytes;
    docs.clear();
    term_ids.clear();
    postings.clear();
    detail::sort_by(documents, [](const auto& a, const auto& b) { return a.name < b.name; });
    documents.erase(std::unique(documents.begin(), documents.end(),
                                [](const auto& a, const auto& b) { return a.name == b.name; }),
                    documents.end());
    docs.reserve(documents.size());
    double total_length = 0;
    // A doc's weighted term frequencies, by term id (dense; `touched` lists the ids to
    // post and reset after the doc).
    std::vector<double> tf;
    std::vector<std::size_t> touched;
    std::string scratch;
    for (std::size_t d = 0; d < documents.size(); ++d) {
      const search_text::DocumentView& src = documents[d];
      Doc doc;
      doc.name = std::string(src.name);
      doc.name_lower = search_text::lowercase(src.name);
      doc.raw_lower = search_text::lowercase(src.raw_name);
      doc.label_lower = search_text::lowercase(src.server);
      doc.label_lower.push_back('/');
      doc.label_lower += search_text::lowercase(src.raw_name);
      auto name_term = [&](std::string_view term) { doc.name_terms.append(term).push_back('\0'); };
      search_text::for_each_term(src.name, kIndexedFieldMaxBytes, scratch, search_text::sink_of(name_term));
      double weight = 0;  // the field's, for count_term
      auto count_term = [&](std::string_view term) {
        const std::size_t id = term_ids.intern(term);
        if (id == postings.size()) {
          postings.emplace_back();
          tf.push_back(0);
        }
        if (tf[id] == 0) touched.push_back(id);
        tf[id] += weight;
        doc.length += weight;
      };
      auto add_field = [&](std::string_view text, double field_weight) {
        weight = field_weight;
        search_text::for_each_term(text, kIndexedFieldMaxBytes, scratch, search_text::sink_of(count_term));
      };
      add_field(src.raw_name, kFieldWeightName);
      add_field(src.title, kFieldWeightTitle);
      add_field(src.server, kFieldWeightServer);
      add_field(src.description, kFieldWeightDescription);
      for (std::string_view p : src.properties) add_field(p, kFieldWeightProperties);
      for (std::size_t id : touched) {
        postings[id].push_back({d, tf[id]});
        tf[id] = 0;
      }
      touched.clear();
      total_length += doc.length;
      docs.push_back(std::move(doc));
    }
    average_length = docs.empty() ? 0 : total_length / static_cast<double>(docs.size());
  }

  // The doc named exactly `name`, if any.
  std::optional<std::size_t> doc_named(std::string_view name) const {
    auto it = std::lower_bound(docs.begin(), docs.end(), name,
                               [](const Doc& doc, std::string_view n) { return doc.name < n; });
    if (it == docs.end() || it->name != name) return std::nullopt;
    return static_cast<std::size_t>(it - docs.begin());
  }

  double idf(std::size_t df) const {
    const double n = static_cast<double>(docs.size());
    return std::log(1.0 + (n - static_cast<double>(df) + 0.5) / (static_cast<double>(df) + 0.5));
  }

  ToolSearchResult select(std::string_view list) const {
    ToolSearchResult out;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t comma = list.find(',', start);
      if (comma == std::string_view::npos) comma = list.size();
      const std::string wanted = search_text::trim(list.substr(start, comma - start));
      start = comma + 1;
      if (wanted.empty()) continue;
      std::optional<std::size_t> found = doc_named(wanted);
      if (!found) {
        const std::string lower = search_text::lowercase(wanted);
        for (std::size_t d = 0; d < docs.size() && !found; ++d) {
          if (docs[d].name_lower == lower || docs[d].label_lower == lower) found = d;
        }
      }
      if (!found) {
        out.not_found.push_back(wanted);
        continue;
      }
      const bool seen = std::any_of(out.hits.begin(), out.hits.end(),
                                    [&](const ToolSearchHit& h) { return h.name == docs[*found].name; });
      if (!seen) out.hits.push_back({docs[*found].name, 0, ToolSearchMatch::selected});
    }
    return out;
  }

  ToolSearchResult search(std::string_view query, std::size_t limit) const {
    const std::string q = search_text::trim(query);
    if (q.rfind("select:", 0) == 0) return select(std::string_view(q).substr(7));
    if (limit == 0) limit = kToolSearchDefaultLimit;
    limit = std::min(limit, kToolSearchMaxLimit);
    ToolSearchResult out;
    if (q.empty() || docs.empty()) return out;

    // +term: required in the name. The other words are the keywords.
    std::vector<std::string> required;
    std::string plain;  // the query without the '+' marks
    for (std::size_t i = 0; i < q.size();) {
      std::size_t end = q.find(' ', i);
      if (end == std::string::npos) end = q.size();
      std::string_view word = std::string_view(q).substr(i, end - i);
      if (word.size() > 1 && word.front() == '+') {
        for (std::string& t : search_text::terms_of(word.substr(1), word.size())) required.push_back(std::move(t));
        word.remove_prefix(1);
      }
      plain.append(word).push_back(' ');
      i = end + 1;
    }
    const std::string lower = search_text::lowercase(search_text::trim(plain));
    const std::string as_name = search_text::name_form(plain);

    std::vector<double> scores(docs.size(), 0.0);
    // The query's terms, then their synonyms (at a lower weight) that it does not hold.
    std::vector<std::string> words = search_text::terms_of(plain, plain.size());
    detail::sort_by(words, [](const std::string& a, const std::string& b) { return a < b; });
    words.erase(std::unique(words.begin(), words.end()), words.end());
    std::vector<std::pair<std::string, double>> terms;
    for (const std::string& w : words) terms.emplace_back(w, 1.0);
    for (const std::string& w : words) {
      search_text::for_each_synonym(w, [&](std::string_view syn) {
        if (!std::binary_search(words.begin(), words.end(), syn) &&
            std::none_of(terms.begin(), terms.end(), [&](const auto& t) { return t.first == syn; })) {
          terms.emplace_back(std::string(syn), search_text::kSynonymWeight);
        }
      });
    }
    for (const auto& [term, weight] : terms) {
      const std::size_t id = term_ids.find(term);
      if (id == search_text::TermTable::npos) continue;
      const auto& list = postings[id];
      const double w = weight * idf(list.size());
      for (const Posting& p : list) {
        const double norm = search_text::kBm25K1 * (1.0 - search_text::kBm25B + search_text::kBm25B * docs[p.doc].length /
                                                           std::max(average_length, 1e-9));
        scores[p.doc] += w * p.weighted_tf * (search_text::kBm25K1 + 1.0) / (p.weighted_tf + norm);
      }
    }

    struct Ranked {
      std::size_t doc;
      int tier;  // 0 exact name, 1 name substring, 2 keywords
      double score;
    };
    // The best `limit` so far, best first: a lower tier, then a higher score, then the name
    // (docs are in name order, so the lower index).
    const auto better = [](const Ranked& a, const Ranked& b) {
      if (a.tier != b.tier) return a.tier < b.tier;
      if (a.score != b.score) return a.score > b.score;
      return a.doc < b.doc;
    };
    std::vector<Ranked> top;
    top.reserve(limit + 1);
    for (std::size_t d = 0; d < docs.size(); ++d) {
      const Doc& doc = docs[d];
      if (!required.empty()) {
        const bool all = std::all_of(required.begin(), required.end(), [&](const std::string& t) {
          for (std::size_t at = doc.name_terms.find(t); at != std::string::npos;
               at = doc.name_terms.find(t, at + 1)) {
            const bool starts = at == 0 || doc.name_terms[at - 1] == '\0';
            if (starts && doc.name_terms[at + t.size()] == '\0') return true;  // a whole term
          }
          return false;
        });
        if (!all) continue;
      }
      int tier = 2;
      if (lower == doc.name_lower || lower == doc.raw_lower || lower == doc.label_lower) {
        tier = 0;
      } else if (as_name.size() >= 3 && doc.name_lower.find(as_name) != std::string::npos) {
        tier = 1;
      } else if (scores[d] <= 0) {
        continue;
      }
      const Ranked r{d, tier, scores[d]};
      if (top.size() == limit && !better(r, top.back())) continue;
      auto at = top.end();
      while (at != top.begin() && better(r, *(at - 1))) --at;
      top.insert(at, r);
      if (top.size() > limit) top.pop_back();
    }
    for (const Ranked& r : top) {
      const ToolSearchMatch match = r.tier == 0   ? ToolSearchMatch::exact_name
                                    : r.tier == 1 ? ToolSearchMatch::name_substring
                                                  : ToolSearchMatch::keywords;
      out.hits.push_back({docs[r.doc].name, r.score, match});
    }
    return out;
  }
};

ToolSearchIndex::ToolSearchIndex() : impl_(std::make_unique<Impl>()) {}
ToolSearchIndex::~ToolSearchIndex() = default;
ToolSearchIndex::ToolSearchIndex(ToolSearchIndex&&) noexcept = default;
ToolSearchIndex& ToolSearchIndex::operator=(ToolSearchIndex&&) noexcept = default;

void ToolSearchIndex::rebuild(std::vector<ToolSearchDocument> documents) {
  std::vector<search_text::DocumentView> views;
  views.reserve(documents.size());
  for (const ToolSearchDocument& doc : documents) views.push_back(search_text::view_of(doc));
  impl_->build(std::move(views));
}

void ToolSearchIndex::rebuild(const std::vector<std::shared_ptr<McpTool>>& tools) {
  std::vector<search_text::DocumentView> views;
  views.reserve(tools.size());
  for (const auto& t : tools) {
    if (t) views.push_back(search_text::view_of(t->info()));
  }
  impl_->build(std::move(views));
}

ToolSearchResult ToolSearchIndex::search(std::string_view query, std::size_t limit) const {
  return impl_->search(query, limit);
}

std::size_t ToolSearchIndex::size() const { return impl_->docs.size(); }

}  // namespace mcprt
