// The JSON Schema 2020-12 validator (mcprt/json_schema.hpp). One pass over the schema
// as it is: each subschema's members are read in the order the json object keeps them
// (sorted), a keyword that depends on siblings (additionalProperties, items, then/else,
// min/maxContains) looks them up, and unevaluatedProperties/Items run last, over the
// annotations (evaluated property names, item indices) that the subschemas which passed
// collected. Annotations are collected only below a subschema that has an unevaluated*
// keyword, so the common schema pays nothing for them.

#include "mcprt/json_schema.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace mcprt {

namespace json_schema_detail {

// ---------------------------------------------------------------------------------------
// The pattern matcher: an ECMA-262 subset, parsed into a small tree and matched by a
// backtracker with an explicit continuation list. A single-character atom under a
// quantifier is counted in a loop (no recursion per character); every step is counted.

using Ranges = std::vector<std::pair<char32_t, char32_t>>;  // inclusive, any order

struct ReNode {
  enum Kind : std::uint8_t { chars, begin, end, word_boundary, not_word_boundary, group };
  Kind kind = chars;
  bool negated = false;  // chars: the class is [^...]
  bool greedy = true;
  std::uint32_t min = 1, max = 1;
  Ranges ranges;                          // chars
  std::vector<std::vector<ReNode>> alts;  // group
};
using ReSeq = std::vector<ReNode>;

constexpr std::uint32_t kReUnbounded = 0xFFFFFFFFu;
// Nested matcher calls (about one per atom matched outside a single-character loop, e.g.
// per iteration of a group): bounds the native stack whatever the text's length.
constexpr std::size_t kReMaxDepth = 4000;
constexpr char32_t kMaxCodePoint = 0x10FFFF;

std::vector<char32_t> decode_utf8(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? c : (c & (0x7F >> len));
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += static_cast<std::size_t>(len);
  }
  return out;
}

Ranges digit_ranges() { return {{'0', '9'}}; }
Ranges word_ranges() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
Ranges space_ranges() {
  return {{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}
// `r` sorted and disjoint (the class escapes' tables are).
Ranges complement(const Ranges& r) {
  Ranges out;
  char32_t next = 0;
  for (const auto& [lo, hi] : r) {
    if (lo > next) out.emplace_back(next, lo - 1);
    if (hi + 1 > next) next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

class ReParser {
 public:
  explicit ReParser(std::string_view pattern) : p_(decode_utf8(pattern)) {}

  // The whole pattern as one group; sets error() when it cannot be used.
  ReNode parse() {
    ReNode top = parse_group_body(0);
    if (error_.empty() && i_ < p_.size()) error_ = "unmatched ')'";
    return top;
  }
  const std::string& error() const { return error_; }

 private:
  bool at(char32_t c) const { return i_ < p_.size() && p_[i_] == c; }

  ReNode parse_group_body(int depth) {
    ReNode g;
    g.kind = ReNode::group;
    if (depth > 32) {
      error_ = "groups nested too deeply";
      return g;
    }
    g.alts.emplace_back();
    while (error_.empty() && i_ < p_.size() && !at(')')) {
      if (at('|')) {
        ++i_;
        g.alts.emplace_back();
        continue;
      }
      ReNode atom;
      if (!parse_atom(atom, depth)) return g;
      parse_quantifier(atom);
      g.alts.back().push_back(std::move(atom));
    }
    return g;
  }

  bool parse_atom(ReNode& n, int depth) {
    char32_t c = p_[i_++];
    switch (c) {
      case '^':
        n.kind = ReNode::begin;
        return true;
      case '$':
        n.kind = ReNode::end;
        return true;
      case '.':
        n.negated = true;
        n.ranges = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};
        return true;
      case '*':
      case '+':
      case '?':
        return fail("nothing to repeat");
      case '[':
        return parse_class(n);
      case '(': {
        if (at('?')) {
          if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
            i_ += 2;
          } else {
            return fail("lookaround and named groups are not supported");
          }
        }
        n = parse_group_body(depth + 1);
        if (!error_.empty()) return false;
        if (!at(')')) return fail("missing ')'");
        ++i_;
        return true;
      }
      case '\\': {
        if (i_ >= p_.size()) return fail("'\\' at the end");
        char32_t e = p_[i_];
        if (e == 'b' || e == 'B') {
          ++i_;
          n.kind = e == 'b' ? ReNode::word_boundary : ReNode::not_word_boundary;
          return true;
        }
        return parse_escape(n.ranges);
      }
      default:
        n.ranges = {{c, c}};
        return true;
    }
  }

  // After '\\'; appends what the escape matches.
  bool parse_escape(Ranges& out) {
    char32_t e = p_[i_++];
    auto add = [&](Ranges r) {
      out.insert(out.end(), r.begin(), r.end());
      return true;
    };
    switch (e) {
      case 'd':
        return add(digit_ranges());
      case 'D':
        return add(complement(digit_ranges()));
      case 'w':
        return add(word_ranges());
      case 'W':
        return add(complement(word_ranges()));
      case 's':
        return add(space_ranges());
      case 'S':
        return add(complement(space_ranges()));
      case 'n':
        return add({{'\n', '\n'}});
      case 'r':
        return add({{'\r', '\r'}});
      case 't':
        return add({{'\t', '\t'}});
      case 'f':
        return add({{'\f', '\f'}});
      case 'v':
        return add({{'\v', '\v'}});
      case '0':
        return add({{0, 0}});
      case 'x':
      case 'u': {
        int digits = e == 'x' ? 2 : 4;
        char32_t v = 0;
        for (int k = 0; k < digits; ++k, ++i_) {
          if (i_ >= p_.size()) return fail("incomplete \\x or \\u escape");
          char32_t h = p_[i_];
          int d = h >= '0' && h <= '9'   ? int(h - '0')
                  : h >= 'a' && h <= 'f' ? int(h - 'a' + 10)
                  : h >= 'A' && h <= 'F' ? int(h - 'A' + 10)
                                         : -1;
          if (d < 0) return fail("bad hex digit in \\x or \\u escape");
          v = v * 16 + static_cast<char32_t>(d);
        }
        return add({{v, v}});
      }
      default:
        if ((e >= '1' && e <= '9') || e == 'k') return fail("backreferences are not supported");
        if (e == 'p' || e == 'P') return fail("\\p{...} is not supported");
        if (e == 'c') return fail("\\c is not supported");
        return add({{e, e}});  // an identity escape: \. \\ \/ \- ...
    }
  }

  bool parse_class(ReNode& n) {
    if (at('^')) {
      n.negated = true;
      ++i_;
    }
    // [] and [^] are allowed, as in ECMA-262: they match nothing / any character.
    while (i_ < p_.size() && !at(']')) {
      Ranges item;
      if (!parse_class_atom(item)) return false;
      if (at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']' && item.size() == 1 &&
          item[0].first == item[0].second) {
        ++i_;
        Ranges hi;
        if (!parse_class_atom(hi)) return false;
        if (hi.size() != 1 || hi[0].first != hi[0].second)
          return fail("a class range ends in a class");
        if (hi[0].first < item[0].first) return fail("a class range out of order");
        item[0].second = hi[0].first;
      }
      n.ranges.insert(n.ranges.end(), item.begin(), item.end());
    }
    if (!at(']')) return fail("missing ']'");
    ++i_;
    return true;
  }

  bool parse_class_atom(Ranges& out) {
    char32_t c = p_[i_++];
    if (c != '\\') {
      out.emplace_back(c, c);
      return true;
    }
    if (i_ >= p_.size()) return fail("'\\' at the end");
    if (p_[i_] == 'b') {  // [\b] is a backspace
      ++i_;
      out.emplace_back(8, 8);
      return true;
    }
    return parse_escape(out);
  }

  bool read_number(std::uint32_t& v) {
    std::size_t start = i_;
    v = 0;
    while (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '9') {
      if (v > 100000)
        v = 100001;  // capped; refused below
      else
        v = v * 10 + static_cast<std::uint32_t>(p_[i_] - '0');
      ++i_;
    }
    return i_ > start;
  }

  void parse_quantifier(ReNode& n) {
    if (i_ >= p_.size()) return;
    std::uint32_t lo = 0, hi = 0;
    char32_t c = p_[i_];
    if (c == '*' || c == '+' || c == '?') {
      ++i_;
      lo = c == '+' ? 1 : 0;
      hi = c == '?' ? 1 : kReUnbounded;
    } else if (c == '{') {
      std::size_t save = i_++;
      if (!read_number(lo)) {
        i_ = save;  // not a quantifier: '{' is a literal (Annex B)
        return;
      }
      hi = lo;
      if (at(',')) {
        ++i_;
        if (!read_number(hi)) hi = kReUnbounded;
      }
      if (!at('}')) {
        i_ = save;
        return;
      }
      ++i_;
      if (lo > 100000 || (hi != kReUnbounded && hi > 100000)) {
        fail("a repetition count over 100000");
        return;
      }
      if (hi < lo) {
        fail("numbers out of order in {} quantifier");
        return;
      }
    } else {
      return;
    }
    if (n.kind == ReNode::begin || n.kind == ReNode::end || n.kind == ReNode::word_boundary ||
        n.kind == ReNode::not_word_boundary) {
      fail("nothing to repeat");
      return;
    }
    n.min = lo;
    n.max = hi;
    if (at('?')) {
      n.greedy = false;
      ++i_;
    }
    if (i_ < p_.size() && (p_[i_] == '*' || p_[i_] == '+' || p_[i_] == '?'))
      fail("nothing to repeat");
  }

  bool fail(const char* why) {
    if (error_.empty()) error_ = why;
    return false;
  }

  std::vector<char32_t> p_;
  std::size_t i_ = 0;
  std::string error_;
};

// A continuation: what is left to match after the current node, as a linked list living
// on the matcher's stack.
struct ReCont {
  const ReSeq* seq = nullptr;  // resume seq at idx ...
  std::size_t idx = 0;
  const ReNode* rep = nullptr;  // ... or another iteration of rep (count done, started at pos)
  std::uint32_t count = 0;
  std::size_t start = 0;
  const ReCont* next = nullptr;
};

class ReMatcher {
 public:
  ReMatcher(const std::vector<char32_t>& text, std::size_t max_steps)
      : t_(text), steps_left_(max_steps) {}

  // Whether the pattern matches anywhere in the text (ECMA-262 search, as `pattern` means).
  bool search(const ReNode& top) {
    for (std::size_t start = 0; start <= t_.size(); ++start) {
      if (once(top, start, nullptr)) return true;
      if (limited) return false;
    }
    return false;
  }
  bool limited = false;

 private:
  bool tick() {
    if (steps_left_ == 0 || depth_ > kReMaxDepth) {
      limited = true;
      return false;
    }
    --steps_left_;
    return true;
  }

  bool char_matches(const ReNode& n, std::size_t pos) const {
    if (pos >= t_.size()) return false;
    char32_t c = t_[pos];
    bool in = false;
    for (const auto& [lo, hi] : n.ranges) {
      if (c >= lo && c <= hi) {
        in = true;
        break;
      }
    }
    return in != n.negated;
  }
  bool is_word(std::size_t pos) const {
    if (pos >= t_.size()) return false;
    char32_t c = t_[pos];
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }

  bool resume(const ReCont* k, std::size_t pos) {
    if (!k) return true;
    if (k->rep) {
      // An iteration that matched nothing cannot be followed by another (ECMA-262's empty
      // check): the loop stops there.
      if (pos == k->start && k->count > k->rep->min) return false;
      return repeat(*k->rep, k->count, pos, k->next);
    }
    return seq(*k->seq, k->idx, pos, k->next);
  }

  // Counts its own depth: each matched atom nests one call deeper.
  bool seq(const ReSeq& s, std::size_t i, std::size_t pos, const ReCont* k) {
    ++depth_;
    bool ok = seq_at(s, i, pos, k);
    --depth_;
    return ok;
  }
  bool seq_at(const ReSeq& s, std::size_t i, std::size_t pos, const ReCont* k) {
    if (!tick()) return false;
    if (i == s.size()) return resume(k, pos);
    const ReNode& n = s[i];
    ReCont after{&s, i + 1, nullptr, 0, 0, k};
    if (n.kind == ReNode::chars && (n.min != 1 || n.max != 1)) {
      std::size_t most = 0;
      while ((n.max == kReUnbounded || most < n.max) && char_matches(n, pos + most)) ++most;
      if (most < n.min) return false;
      bool ok = false;
      if (n.greedy) {
        for (std::size_t c = most + 1; c-- > n.min && !ok && !limited;)
          ok = seq(s, i + 1, pos + c, k);
      } else {
        for (std::size_t c = n.min; c <= most && !ok && !limited; ++c)
          ok = seq(s, i + 1, pos + c, k);
      }
      return ok;
    }
    if (n.kind == ReNode::group && (n.min != 1 || n.max != 1)) return repeat(n, 0, pos, &after);
    return once(n, pos, &after);
  }

  bool once(const ReNode& n, std::size_t pos, const ReCont* k) {
    switch (n.kind) {
      case ReNode::chars:
        return char_matches(n, pos) && resume(k, pos + 1);
      case ReNode::begin:
        return pos == 0 && resume(k, pos);
      case ReNode::end:
        return pos == t_.size() && resume(k, pos);
      case ReNode::word_boundary:
      case ReNode::not_word_boundary: {
        bool at_boundary = (pos > 0 && is_word(pos - 1)) != is_word(pos);
        return at_boundary == (n.kind == ReNode::word_boundary) && resume(k, pos);
      }
      case ReNode::group:
        for (const ReSeq& alt : n.alts) {
          if (seq(alt, 0, pos, k)) return true;
          if (limited) break;
        }
        return false;
    }
    return false;
  }

  // `count` iterations of group `n` are done; `k` follows the loop.
  bool repeat(const ReNode& n, std::uint32_t count, std::size_t pos, const ReCont* k) {
    if (!tick()) return false;
    bool can_more = n.max == kReUnbounded || count < n.max;
    ReCont again{nullptr, 0, &n, count + 1, pos, k};
    if (n.greedy) {
      return (can_more && once(n, pos, &again)) || (!limited && count >= n.min && resume(k, pos));
    }
    return (count >= n.min && resume(k, pos)) || (!limited && can_more && once(n, pos, &again));
  }

  const std::vector<char32_t>& t_;
  std::size_t steps_left_;
  std::size_t depth_ = 0;
};

// ---------------------------------------------------------------------------------------
// Paths, names, numbers.

struct PathSeg {
  std::string_view name;  // a key or keyword; empty with is_index
  std::size_t index = 0;
  bool is_index = false;
};

// Message parts joined (one out-of-line function instead of a chain of operator+ at every
// failure site: the wasm module is size-bound).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

std::string render_pointer(const std::vector<PathSeg>& path) {
  std::string out;
  for (const PathSeg& s : path) {
    out += '/';
    if (s.is_index) {
      out += std::to_string(s.index);
      continue;
    }
    for (char c : s.name) {
      if (c == '~')
        out += "~0";
      else if (c == '/')
        out += "~1";
      else
        out += c;
    }
  }
  return out;
}

// One lookup function for every key: nlohmann's find(const char(&)[N]) is a template
// instantiated once per literal length.
json::const_iterator member(const json& object, std::string_view key) { return object.find(key); }
bool has_member(const json& object, std::string_view key) {
  return member(object, key) != object.end();
}

bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::trunc(d) == d;
}

const char* instance_type(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return is_integral(v) ? "integer" : "number";
    default:
      return "binary";
  }
}

bool has_type(const json& v, std::string_view t) {
  if (t == "integer") return is_integral(v);
  if (t == "number") return v.is_number();
  return t == instance_type(v);
}

bool valid_type_name(std::string_view t) {
  static constexpr std::array<std::string_view, 7> kNames = {"array",  "boolean", "integer", "null",
                                                             "number", "object",  "string"};
  return std::find(kNames.begin(), kNames.end(), t) != kNames.end();
}

// -1, 0, 1: integers of any sign and width compare exactly; otherwise as doubles.
int compare_numbers(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    bool au = a.is_number_unsigned(), bu = b.is_number_unsigned();
    if (au != bu) {
      // One signed, one unsigned: a negative signed one is the smaller.
      const json& s = au ? b : a;
      const json& u = au ? a : b;
      std::int64_t sv = s.get<std::int64_t>();
      int s_vs_u = sv < 0 ? -1
                          : (static_cast<std::uint64_t>(sv) < u.get<std::uint64_t>()   ? -1
                             : static_cast<std::uint64_t>(sv) > u.get<std::uint64_t>() ? 1
                                                                                       : 0);
      return au ? -s_vs_u : s_vs_u;
    }
    if (au) {
      auto x = a.get<std::uint64_t>(), y = b.get<std::uint64_t>();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    auto x = a.get<std::int64_t>(), y = b.get<std::int64_t>();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  double x = a.get<double>(), y = b.get<double>();
  return x < y ? -1 : x > y ? 1 : 0;
}

bool is_multiple_of(const json& v, const json& m) {
  if (v.is_number_integer() && m.is_number_integer()) {
    auto magnitude = [](const json& n) {
      if (n.is_number_unsigned()) return n.get<std::uint64_t>();
      std::int64_t s = n.get<std::int64_t>();
      return s < 0 ? static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(s)
                   : static_cast<std::uint64_t>(s);
    };
    return magnitude(v) % magnitude(m) == 0;
  }
  double x = v.get<double>(), d = m.get<double>();
  double q = x / d;
  if (!std::isfinite(q)) return std::fmod(x, d) == 0;
  // Decimal divisors are not exact in binary (0.0075 / 0.0001 = 75.00000000000001).
  return std::fabs(q - std::nearbyint(q)) <= 1e-9 * std::max(1.0, std::fabs(q));
}

// A non-negative integer keyword value (maxLength: 2 or 2.0).
bool read_count(const json& v, std::size_t& out) {
  if (!is_integral(v)) return false;
  if (v.is_number_unsigned()) {
    out = static_cast<std::size_t>(std::min<std::uint64_t>(v.get<std::uint64_t>(), SIZE_MAX));
  } else if (v.is_number_integer()) {
    std::int64_t i = v.get<std::int64_t>();
    if (i < 0) return false;
    out =
        static_cast<std::size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(i), SIZE_MAX));
  } else {
    double d = v.get<double>();
    if (d < 0) return false;
    out = d >= static_cast<double>(SIZE_MAX) ? SIZE_MAX : static_cast<std::size_t>(d);
  }
  return true;
}

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  out.append(s.substr(0, 80));
  if (s.size() > 80) out += "...";
  return out + "\"";
}

// ---------------------------------------------------------------------------------------
// Keywords.

enum class Kw : std::uint8_t {
  defs,
  id,
  ref,
  additional_properties,
  all_of,
  any_of,
  const_,
  contains,
  definitions,
  dependent_required,
  dependent_schemas,
  else_,
  enum_,
  exclusive_maximum,
  exclusive_minimum,
  if_,
  items,
  max_items,
  max_length,
  max_properties,
  maximum,
  min_items,
  min_length,
  min_properties,
  minimum,
  multiple_of,
  not_,
  one_of,
  pattern,
  pattern_properties,
  prefix_items,
  properties,
  property_names,
  required,
  then,
  type,
  unevaluated_items,
  unevaluated_properties,
  unique_items,
  max_contains,
  min_contains,
  anchor,
  other
};

struct KwName {
  std::string_view name;
  Kw kw;
};
// Sorted by (length, name): the search compares lengths, and bytes only among keywords of
// the same length (the lookup runs for every member of every subschema evaluated).
constexpr std::array<KwName, 42> kKeywords = {{
    {"if", Kw::if_},
    {"$id", Kw::id},
    {"not", Kw::not_},
    {"$ref", Kw::ref},
    {"else", Kw::else_},
    {"enum", Kw::enum_},
    {"then", Kw::then},
    {"type", Kw::type},
    {"$defs", Kw::defs},
    {"allOf", Kw::all_of},
    {"anyOf", Kw::any_of},
    {"const", Kw::const_},
    {"items", Kw::items},
    {"oneOf", Kw::one_of},
    {"$anchor", Kw::anchor},
    {"maximum", Kw::maximum},
    {"minimum", Kw::minimum},
    {"pattern", Kw::pattern},
    {"contains", Kw::contains},
    {"maxItems", Kw::max_items},
    {"minItems", Kw::min_items},
    {"required", Kw::required},
    {"maxLength", Kw::max_length},
    {"minLength", Kw::min_length},
    {"multipleOf", Kw::multiple_of},
    {"properties", Kw::properties},
    {"definitions", Kw::definitions},
    {"maxContains", Kw::max_contains},
    {"minContains", Kw::min_contains},
    {"prefixItems", Kw::prefix_items},
    {"uniqueItems", Kw::unique_items},
    {"maxProperties", Kw::max_properties},
    {"minProperties", Kw::min_properties},
    {"propertyNames", Kw::property_names},
    {"dependentSchemas", Kw::dependent_schemas},
    {"exclusiveMaximum", Kw::exclusive_maximum},
    {"exclusiveMinimum", Kw::exclusive_minimum},
    {"unevaluatedItems", Kw::unevaluated_items},
    {"dependentRequired", Kw::dependent_required},
    {"patternProperties", Kw::pattern_properties},
    {"additionalProperties", Kw::additional_properties},
    {"unevaluatedProperties", Kw::unevaluated_properties},
}};

Kw keyword_of(std::string_view name) {
  auto it = std::lower_bound(
      kKeywords.begin(), kKeywords.end(), name, [](const KwName& k, std::string_view n) {
        return k.name.size() != n.size() ? k.name.size() < n.size() : k.name < n;
      });
  return it != kKeywords.end() && it->name == name ? it->kw : Kw::other;
}

bool is_schema(const json& v) { return v.is_object() || v.is_boolean(); }
bool is_schema_array(const json& v, bool non_empty) {
  if (!v.is_array() || (non_empty && v.empty())) return false;
  return std::all_of(v.begin(), v.end(), [](const json& e) { return is_schema(e); });
}
bool is_schema_map(const json& v) {
  return v.is_object() &&
         std::all_of(v.begin(), v.end(), [](const json& e) { return is_schema(e); });
}
bool is_string_array(const json& v) {
  return v.is_array() &&
         std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); });
}

// Why a keyword's value cannot be used, or null. (Patterns and $refs are checked where
// they are compiled and resolved.)
const char* shape_error(Kw kw, const json& v) {
  std::size_t n = 0;
  switch (kw) {
    case Kw::type:
      if (v.is_string())
        return valid_type_name(v.get_ref<const std::string&>()) ? nullptr : "unknown type name";
      if (!v.is_array()) return "must be a string or an array of strings";
      for (const json& t : v) {
        if (!t.is_string() || !valid_type_name(t.get_ref<const std::string&>()))
          return "unknown type name";
      }
      return nullptr;
    case Kw::enum_:
      return v.is_array() ? nullptr : "must be an array";
    case Kw::multiple_of:
      return v.is_number() && v.get<double>() > 0 ? nullptr : "must be a number greater than 0";
    case Kw::maximum:
    case Kw::exclusive_maximum:
    case Kw::minimum:
    case Kw::exclusive_minimum:
      return v.is_number() ? nullptr : "must be a number";
    case Kw::max_length:
    case Kw::min_length:
    case Kw::max_items:
    case Kw::min_items:
    case Kw::max_properties:
    case Kw::min_properties:
    case Kw::max_contains:
    case Kw::min_contains:
      return read_count(v, n) ? nullptr : "must be a non-negative integer";
    case Kw::pattern:
    case Kw::ref:
    case Kw::id:
    case Kw::anchor:
      return v.is_string() ? nullptr : "must be a string";
    case Kw::unique_items:
      return v.is_boolean() ? nullptr : "must be a boolean";
    case Kw::required:
      return is_string_array(v) ? nullptr : "must be an array of strings";
    case Kw::dependent_required:
      if (!v.is_object()) return "must be an object of string arrays";
      for (const json& e : v) {
        if (!is_string_array(e)) return "must be an object of string arrays";
      }
      return nullptr;
    case Kw::additional_properties:
    case Kw::contains:
    case Kw::items:
    case Kw::not_:
    case Kw::if_:
    case Kw::then:
    case Kw::else_:
    case Kw::property_names:
    case Kw::unevaluated_items:
    case Kw::unevaluated_properties:
      return is_schema(v) ? nullptr : "must be a schema (an object or a boolean)";
    case Kw::all_of:
    case Kw::any_of:
    case Kw::one_of:
      return is_schema_array(v, true) ? nullptr : "must be a non-empty array of schemas";
    case Kw::prefix_items:
      return is_schema_array(v, true) ? nullptr : "must be a non-empty array of schemas";
    case Kw::properties:
    case Kw::pattern_properties:
    case Kw::dependent_schemas:
    case Kw::defs:
    case Kw::definitions:
      return is_schema_map(v) ? nullptr : "must be an object of schemas";
    case Kw::const_:
    case Kw::other:
      return nullptr;
  }
  return nullptr;
}

// Calls f(keyword, index-or-key segment, subschema) for every direct subschema of `s`.
template <class F>
void for_each_subschema(const json& s, F&& f) {
  if (!s.is_object()) return;
  for (auto it = s.begin(); it != s.end(); ++it) {
    Kw kw = keyword_of(it.key());
    const json& v = it.value();
    switch (kw) {
      case Kw::additional_properties:
      case Kw::contains:
      case Kw::not_:
      case Kw::if_:
      case Kw::then:
      case Kw::else_:
      case Kw::property_names:
      case Kw::unevaluated_items:
      case Kw::unevaluated_properties:
        if (is_schema(v)) f(it.key(), PathSeg{}, v);
        break;
      case Kw::items:  // draft-7's array form is walked too, for its $ids
      case Kw::all_of:
      case Kw::any_of:
      case Kw::one_of:
      case Kw::prefix_items:
        if (is_schema(v)) {
          f(it.key(), PathSeg{}, v);
        } else if (v.is_array()) {
          for (std::size_t i = 0; i < v.size(); ++i) f(it.key(), PathSeg{{}, i, true}, v[i]);
        }
        break;
      case Kw::properties:
      case Kw::pattern_properties:
      case Kw::dependent_schemas:
      case Kw::defs:
      case Kw::definitions:
        if (v.is_object()) {
          for (auto m = v.begin(); m != v.end(); ++m) f(it.key(), PathSeg{m.key()}, m.value());
        }
        break;
      default:
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------
// URIs, for $id and $ref.

std::string_view strip_fragment(std::string_view u) { return u.substr(0, u.find('#')); }

bool has_scheme(std::string_view u) {
  std::size_t colon = u.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  return u.find_first_of("/?#") > colon;
}

std::string resolve_uri(std::string_view base, std::string_view ref) {
  if (has_scheme(ref)) return std::string(ref);
  std::string_view b = strip_fragment(base);
  if (ref.empty()) return std::string(b);
  if (ref[0] == '#') return std::string(b).append(ref);
  std::size_t scheme_end = has_scheme(b) ? b.find(':') + 1 : 0;
  if (ref.size() > 1 && ref[0] == '/' && ref[1] == '/')
    return std::string(b.substr(0, scheme_end)).append(ref);
  std::size_t path_start = scheme_end;
  if (b.substr(scheme_end, 2) == "//") {
    path_start = b.find('/', scheme_end + 2);
    if (path_start == std::string_view::npos) path_start = b.size();
  }
  if (ref[0] == '/') return std::string(b.substr(0, path_start)).append(ref);
  std::size_t slash = b.rfind('/');
  std::string_view dir = slash == std::string_view::npos || slash < path_start
                             ? b.substr(0, path_start)
                             : b.substr(0, slash + 1);
  std::string out(dir);
  if (dir.size() == path_start && path_start > scheme_end) out += '/';
  return out.append(ref);
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto hex = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// RFC 6901 inside `doc`, or null.
const json* follow_pointer(const json& doc, std::string_view pointer) {
  const json* cur = &doc;
  std::size_t i = 0;
  while (i < pointer.size()) {
    if (pointer[i] != '/') return nullptr;
    std::size_t end = pointer.find('/', i + 1);
    if (end == std::string_view::npos) end = pointer.size();
    std::string token;
    for (std::size_t k = i + 1; k < end; ++k) {
      if (pointer[k] == '~' && k + 1 < end && (pointer[k + 1] == '0' || pointer[k + 1] == '1')) {
        token += pointer[++k] == '0' ? '~' : '/';
      } else {
        token += pointer[k];
      }
    }
    if (cur->is_object()) {
      auto it = cur->find(token);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array()) {
      if (token.empty() || token.size() > 9) return nullptr;
      std::size_t idx = 0;
      for (char c : token) {
        if (c < '0' || c > '9') return nullptr;
        idx = idx * 10 + static_cast<std::size_t>(c - '0');
      }
      if (idx >= cur->size()) return nullptr;
      cur = &(*cur)[idx];
    } else {
      return nullptr;
    }
    i = end;
  }
  return cur;
}

// Every embedded resource ($id) and anchor of a schema document, with absolute URIs.
struct SchemaIndex {
  struct Resource {
    std::string uri;  // without fragment
    const json* schema;
  };
  struct Anchor {
    std::string base;
    std::string name;
    const json* schema;
  };
  std::vector<Resource> resources;  // [0] is the root
  std::vector<Anchor> anchors;
  bool overflow = false;

  void build(const json& root, std::size_t max_depth) {
    std::string base;
    if (root.is_object()) {
      if (auto id = member(root, "$id"); id != root.end() && id->is_string()) {
        base = resolve_uri("", id->get_ref<const std::string&>());
      }
    }
    resources.push_back({std::string(strip_fragment(base)), &root});
    visit(root, base, 0, max_depth, true);
  }

  const Resource* resource_of(const json* schema) const {
    for (const Resource& r : resources) {
      if (r.schema == schema) return &r;
    }
    return nullptr;
  }

 private:
  void visit(const json& s, std::string base, std::size_t depth, std::size_t max_depth, bool root) {
    if (!s.is_object()) return;
    if (depth > max_depth || resources.size() + anchors.size() > 10000) {
      overflow = true;
      return;
    }
    if (!root) {
      if (auto id = member(s, "$id"); id != s.end() && id->is_string()) {
        const std::string& v = id->get_ref<const std::string&>();
        base = resolve_uri(base, v);
        if (!v.empty() && v[0] == '#') {  // draft-7's plain-name $id
          anchors.push_back({std::string(strip_fragment(base)), v.substr(1), &s});
        } else {
          resources.push_back({std::string(strip_fragment(base)), &s});
        }
      }
    }
    if (auto a = member(s, "$anchor"); a != s.end() && a->is_string()) {
      anchors.push_back({std::string(strip_fragment(base)), a->get<std::string>(), &s});
    }
    for_each_subschema(s, [&](std::string_view, const PathSeg&, const json& sub) {
      visit(sub, base, depth + 1, max_depth, false);
    });
  }
};

// ---------------------------------------------------------------------------------------
// The evaluation.

// What passing subschemas evaluated, for unevaluatedProperties / unevaluatedItems.
struct Annotations {
  std::vector<const std::string*> props;  // keys of the instance object
  bool all_props = false;
  std::size_t items = 0;  // items [0, items) evaluated
  bool all_items = false;
  std::vector<std::size_t> contained;  // indices `contains` matched

  void merge(const Annotations& o) {
    props.insert(props.end(), o.props.begin(), o.props.end());
    all_props = all_props || o.all_props;
    items = std::max(items, o.items);
    all_items = all_items || o.all_items;
    contained.insert(contained.end(), o.contained.begin(), o.contained.end());
  }
  bool has_prop(const std::string* key) const {
    return all_props || std::find(props.begin(), props.end(), key) != props.end();
  }
  bool has_item(std::size_t i) const {
    return all_items || i < items ||
           std::find(contained.begin(), contained.end(), i) != contained.end();
  }
};

class Validator {
 public:
  Validator(const json& root, const SchemaLimits& limits) : root_(root), limits_(limits) {}

  std::optional<SchemaError> run(const json& instance) {
    base_ = &root_base();
    eval(root_, instance, nullptr);
    return std::move(error_);
  }

  // check_json_schema: every subschema's keywords, $refs and patterns.
  std::optional<SchemaError> check() {
    base_ = &root_base();
    check_node(root_, 0);
    return std::move(error_);
  }

 private:
  void check_node(const json& s, std::size_t depth) {
    if (error_ || s.is_boolean()) return;
    if (!s.is_object()) {
      bad({"a schema must be an object or a boolean, got ", instance_type(s)});
      return;
    }
    if (depth > limits_.max_depth) {
      hard(SchemaErrorKind::limit,
           {"the schema is nested deeper than ", std::to_string(limits_.max_depth)});
      return;
    }
    const std::string* saved_base = base_;
    if (&s != &root_ && has_member(s, "$id")) {
      ensure_index();
      if (const auto* r = index_->resource_of(&s)) base_ = &r->uri;
    }
    for (auto it = s.begin(); it != s.end() && !error_; ++it) {
      Kw kw = keyword_of(it.key());
      KeyGuard kg(kpath_, it.key());
      if (const char* why = shape_error(kw, it.value())) {
        bad({it.key(), " ", why});
      } else if (kw == Kw::pattern) {
        pattern(it.value().get_ref<const std::string&>());
      } else if (kw == Kw::pattern_properties) {
        for (auto p = it.value().begin(); p != it.value().end() && !error_; ++p) pattern(p.key());
      } else if (kw == Kw::ref) {
        resolve(it.value().get_ref<const std::string&>());
      }
    }
    for_each_subschema(s, [&](std::string_view key, const PathSeg& seg, const json& sub) {
      if (error_) return;
      KeyGuard kg(kpath_, key);
      if (seg.is_index || !seg.name.empty()) kpath_.push_back(seg);
      check_node(sub, depth + 1);
      if (seg.is_index || !seg.name.empty()) kpath_.pop_back();
    });
    base_ = saved_base;
  }

  struct KeyGuard {
    KeyGuard(std::vector<PathSeg>& p, std::string_view name) : path(p) { path.push_back({name}); }
    KeyGuard(std::vector<PathSeg>& p, std::size_t index) : path(p) {
      path.push_back({{}, index, true});
    }
    ~KeyGuard() { path.pop_back(); }
    std::vector<PathSeg>& path;
  };
  struct Quiet {
    explicit Quiet(int& q) : q(q) { ++q; }
    ~Quiet() { --q; }
    int& q;
  };

  const std::string& root_base() {
    if (!root_.is_object()) return empty_base_;
    auto id = member(root_, "$id");
    if (id == root_.end() || !id->is_string()) return empty_base_;
    ensure_index();
    return index_->resources[0].uri;
  }

  void ensure_index() {
    if (index_) return;
    index_ = std::make_unique<SchemaIndex>();
    index_->build(root_, limits_.max_depth);
  }

  // Records the first failure; a mismatch inside a quiet evaluation (anyOf's branches, not,
  // if, contains) only decides that evaluation and is not reported.
  bool fail(std::initializer_list<std::string_view> message) {
    if (quiet_ == 0 && !error_) {
      error_ = SchemaError{SchemaErrorKind::mismatch, render_pointer(ipath_),
                           render_pointer(kpath_), cat(message)};
    }
    return false;
  }
  // A schema error or a limit ends the whole validation, quiet or not.
  bool hard(SchemaErrorKind kind, std::initializer_list<std::string_view> message) {
    stopped_ = true;
    if (!error_ || error_->kind == SchemaErrorKind::mismatch) {
      error_ = SchemaError{kind, render_pointer(ipath_), render_pointer(kpath_), cat(message)};
    }
    return false;
  }
  bool bad(std::initializer_list<std::string_view> message) {
    return hard(SchemaErrorKind::bad_schema, message);
  }

  // The compiled pattern for a string of the schema (compiled once per validation).
  const ReNode* pattern(const std::string& source) {
    for (const auto& [src, node] : patterns_) {
      if (src == &source) return node.get();
    }
    ReParser parser(source);
    auto node = std::make_unique<ReNode>(parser.parse());
    if (!parser.error().empty()) {
      bad({"unsupported pattern ", quote(source), ": ", parser.error()});
      return nullptr;
    }
    patterns_.emplace_back(&source, std::move(node));
    return patterns_.back().second.get();
  }
  // 1 match, 0 no match, -1 stopped (schema error or limit).
  int matches(const std::string& source, const std::string& text) {
    const ReNode* re = pattern(source);
    if (!re) return -1;
    std::vector<char32_t> t = decode_utf8(text);
    ReMatcher m(t, limits_.max_pattern_steps);
    bool ok = m.search(*re);
    if (m.limited) {
      hard(SchemaErrorKind::limit, {"pattern ", quote(source), " took more than ",
                                    std::to_string(limits_.max_pattern_steps), " steps"});
      return -1;
    }
    return ok ? 1 : 0;
  }

  // The schema a $ref names (and its base URI), or null after a schema error.
  const json* resolve(const std::string& ref, const std::string** new_base = nullptr) {
    // "#..." against a document without $ids: the common case, no index needed.
    bool plain = !ref.empty() && ref[0] == '#' && base_->empty() && !index_;
    std::string uri_part;
    std::string fragment;
    const SchemaIndex::Resource* resource = nullptr;
    if (plain) {
      fragment = percent_decode(std::string_view(ref).substr(1));
      if (!fragment.empty() && fragment[0] != '/') {
        ensure_index();  // an anchor
        resource = &index_->resources[0];
      }
    } else {
      ensure_index();
      std::string full = resolve_uri(*base_, ref);
      std::size_t hash = full.find('#');
      uri_part = full.substr(0, hash);
      if (hash != std::string::npos)
        fragment = percent_decode(std::string_view(full).substr(hash + 1));
      for (const auto& r : index_->resources) {
        if (r.uri == uri_part) {
          resource = &r;
          break;
        }
      }
      if (!resource) {
        bad({"$ref ", quote(ref), " does not resolve (remote references are not fetched)"});
        return nullptr;
      }
    }
    const json& doc = resource ? *resource->schema : root_;
    const json* target = nullptr;
    if (fragment.empty() || fragment[0] == '/') {
      target = follow_pointer(doc, fragment);
    } else {
      for (const auto& a : index_->anchors) {
        if (a.name == fragment && a.base == (resource ? resource->uri : std::string())) {
          target = a.schema;
          break;
        }
      }
    }
    if (!target || !is_schema(*target)) {
      bad({"$ref ", quote(ref), " does not resolve to a schema"});
      return nullptr;
    }
    if (new_base) *new_base = resource ? &resource->uri : base_;
    return target;
  }

  bool eval(const json& s, const json& inst, Annotations* ann) {
    if (s.is_boolean()) {
      if (s.get<bool>()) return true;
      return fail({"no value is allowed here (the schema is false)"});
    }
    if (!s.is_object())
      return bad({"a schema must be an object or a boolean, got ", instance_type(s)});
    if (++steps_ > limits_.max_steps) {
      return hard(SchemaErrorKind::limit,
                  {"validation took more than ", std::to_string(limits_.max_steps), " steps"});
    }
    if (depth_ >= limits_.max_depth) {
      return hard(SchemaErrorKind::limit, {"the schema and value are nested deeper than ",
                                           std::to_string(limits_.max_depth), " levels"});
    }
    ++depth_;
    const std::string* saved_base = base_;
    bool ok = eval_object(s, inst, ann);
    base_ = saved_base;
    --depth_;
    return ok;
  }

  bool eval_object(const json& s, const json& inst, Annotations* ann) {
    const json* un_props = nullptr;
    const json* un_items = nullptr;
    if (inst.is_object()) {
      if (auto u = member(s, "unevaluatedProperties"); u != s.end()) un_props = &*u;
    } else if (inst.is_array()) {
      if (auto u = member(s, "unevaluatedItems"); u != s.end()) un_items = &*u;
    }
    Annotations local;
    Annotations* a = (ann || un_props || un_items) ? &local : nullptr;

    for (auto it = s.begin(); it != s.end(); ++it) {
      Kw kw = keyword_of(it.key());
      if (kw == Kw::other || kw == Kw::unevaluated_items || kw == Kw::unevaluated_properties)
        continue;
      KeyGuard kg(kpath_, it.key());
      const json& v = it.value();
      if (const char* why = shape_error(kw, v)) return bad({it.key(), " ", why});
      if (!keyword(kw, s, v, inst, a)) return false;
    }
    if (un_props && !unevaluated_properties(*un_props, inst, *a)) return false;
    if (un_items && !unevaluated_items(*un_items, inst, *a)) return false;
    if (ann) ann->merge(local);
    return true;
  }

  bool keyword(Kw kw, const json& s, const json& v, const json& inst, Annotations* a) {
    switch (kw) {
      case Kw::id:
        if (&s != &root_) {
          ensure_index();
          if (const auto* r = index_->resource_of(&s)) base_ = &r->uri;
        }
        return true;
      case Kw::ref:
        return ref(v.get_ref<const std::string&>(), inst, a);
      case Kw::type:
        return type(v, inst);
      case Kw::enum_:
        for (const json& e : v) {
          if (e == inst) return true;
        }
        return fail({"value ", show(inst), " is not one of ", show(v)});
      case Kw::const_:
        return v == inst || fail({"value ", show(inst), " is not the constant ", show(v)});
      case Kw::multiple_of:
      case Kw::maximum:
      case Kw::exclusive_maximum:
      case Kw::minimum:
      case Kw::exclusive_minimum: {
        if (!inst.is_number()) return true;
        const int c = kw == Kw::multiple_of ? 0 : compare_numbers(inst, v);
        const char* what = kw == Kw::multiple_of
                               ? (is_multiple_of(inst, v) ? nullptr : "a multiple of ")
                           : kw == Kw::maximum           ? (c <= 0 ? nullptr : "at most ")
                           : kw == Kw::exclusive_maximum ? (c < 0 ? nullptr : "less than ")
                           : kw == Kw::minimum           ? (c >= 0 ? nullptr : "at least ")
                                                         : (c > 0 ? nullptr : "more than ");
        return !what || fail({"expected ", what, show(v), ", got ", show(inst)});
      }
      case Kw::max_length:
      case Kw::min_length: {
        if (!inst.is_string()) return true;
        std::size_t limit = 0, n = code_points(inst.get_ref<const std::string&>());
        read_count(v, limit);
        bool max = kw == Kw::max_length;
        return (max ? n <= limit : n >= limit) ||
               fail({"expected at ", (max ? "most " : "least "), std::to_string(limit),
                     " characters, got ", std::to_string(n)});
      }
      case Kw::pattern: {
        if (!inst.is_string()) return true;
        int m = matches(v.get_ref<const std::string&>(), inst.get_ref<const std::string&>());
        return m > 0 || (m == 0 && fail({quote(inst.get_ref<const std::string&>()),
                                         " does not match the pattern ",
                                         quote(v.get_ref<const std::string&>())}));
      }
      case Kw::max_items:
      case Kw::min_items:
      case Kw::max_properties:
      case Kw::min_properties: {
        bool items = kw == Kw::max_items || kw == Kw::min_items;
        if (items ? !inst.is_array() : !inst.is_object()) return true;
        std::size_t limit = 0, n = inst.size();
        read_count(v, limit);
        bool max = kw == Kw::max_items || kw == Kw::max_properties;
        return (max ? n <= limit : n >= limit) ||
               fail({"expected at ", (max ? "most " : "least "), std::to_string(limit),
                     (items ? " items, got " : " properties, got "), std::to_string(n)});
      }
      case Kw::unique_items:
        return !inst.is_array() || !v.get<bool>() || unique(inst);
      case Kw::contains:
        return contains(s, v, inst, a);
      case Kw::prefix_items: {
        if (!inst.is_array()) return true;
        std::size_t n = std::min(v.size(), inst.size());
        for (std::size_t i = 0; i < n; ++i) {
          KeyGuard kg(kpath_, i);
          KeyGuard ig(ipath_, i);
          if (!eval(v[i], inst[i], nullptr)) return false;
        }
        if (a) a->items = std::max(a->items, n);
        return true;
      }
      case Kw::items: {
        if (!inst.is_array()) return true;
        auto prefix = member(s, "prefixItems");
        std::size_t from = prefix != s.end() && prefix->is_array() ? prefix->size() : 0;
        for (std::size_t i = from; i < inst.size(); ++i) {
          KeyGuard ig(ipath_, i);
          if (!eval(v, inst[i], nullptr)) return false;
        }
        if (a) a->all_items = true;
        return true;
      }
      case Kw::required:
        if (!inst.is_object()) return true;
        for (const json& name : v) {
          if (!has_member(inst, name.get_ref<const std::string&>())) {
            return fail({"missing required property ", quote(name.get_ref<const std::string&>())});
          }
        }
        return true;
      case Kw::dependent_required:
        if (!inst.is_object()) return true;
        for (auto d = v.begin(); d != v.end(); ++d) {
          if (!has_member(inst, d.key())) continue;
          for (const json& name : d.value()) {
            if (!has_member(inst, name.get_ref<const std::string&>())) {
              return fail({"property ", quote(d.key()), " requires property ",
                           quote(name.get_ref<const std::string&>())});
            }
          }
        }
        return true;
      case Kw::properties: {
        if (!inst.is_object()) return true;
        // Both objects keep their keys sorted: one merge walk instead of a lookup per key.
        auto p = v.begin();
        auto m = inst.begin();
        while (p != v.end() && m != inst.end()) {
          int order = p.key().compare(m.key());
          if (order < 0) {
            ++p;
          } else if (order > 0) {
            ++m;
          } else {
            KeyGuard kg(kpath_, p.key());
            KeyGuard ig(ipath_, m.key());
            if (!eval(p.value(), m.value(), nullptr)) return false;
            if (a) a->props.push_back(&m.key());
            ++p;
            ++m;
          }
        }
        return true;
      }
      case Kw::pattern_properties:
        if (!inst.is_object()) return true;
        for (auto p = v.begin(); p != v.end(); ++p) {
          KeyGuard kg(kpath_, p.key());
          for (auto m = inst.begin(); m != inst.end(); ++m) {
            int hit = matches(p.key(), m.key());
            if (hit < 0) return false;
            if (hit == 0) continue;
            KeyGuard ig(ipath_, m.key());
            if (!eval(p.value(), m.value(), nullptr)) return false;
            if (a) a->props.push_back(&m.key());
          }
        }
        return true;
      case Kw::additional_properties:
        return additional_properties(s, v, inst, a);
      case Kw::property_names:
        if (!inst.is_object()) return true;
        for (auto m = inst.begin(); m != inst.end(); ++m) {
          json name = m.key();
          KeyGuard ig(ipath_, m.key());
          bool ok;
          {
            Quiet q(quiet_);
            ok = eval(v, name, nullptr);
          }
          if (stopped_) return false;
          if (!ok) return fail({"property name ", quote(m.key()), " does not match propertyNames"});
        }
        return true;
      case Kw::dependent_schemas:
        if (!inst.is_object()) return true;
        for (auto d = v.begin(); d != v.end(); ++d) {
          if (!has_member(inst, d.key())) continue;
          KeyGuard kg(kpath_, d.key());
          if (!eval(d.value(), inst, a)) return false;
        }
        return true;
      case Kw::all_of:
        for (std::size_t i = 0; i < v.size(); ++i) {
          KeyGuard kg(kpath_, i);
          if (!eval(v[i], inst, a)) return false;
        }
        return true;
      case Kw::any_of:
      case Kw::one_of:
        return any_or_one_of(kw == Kw::one_of, v, inst, a);
      case Kw::not_: {
        bool ok;
        {
          Quiet q(quiet_);
          ok = eval(v, inst, nullptr);
        }
        if (stopped_) return false;
        return !ok || fail({"value must not match the schema in not"});
      }
      case Kw::if_: {
        bool ok;
        Annotations if_ann;
        {
          Quiet q(quiet_);
          ok = eval(v, inst, a ? &if_ann : nullptr);
        }
        if (stopped_) return false;
        if (ok && a) a->merge(if_ann);
        auto branch = member(s, ok ? "then" : "else");
        if (branch == s.end()) return true;
        if (const char* why = shape_error(Kw::then, *branch))
          return bad({ok ? "then " : "else ", why});
        kpath_.back() = PathSeg{ok ? "then" : "else"};
        return eval(*branch, inst, a);
      }
      default:
        return true;  // handled with a sibling ($defs, then, else, maxContains, ...)
    }
  }

  bool type(const json& v, const json& inst) {
    if (v.is_string()) {
      const std::string& t = v.get_ref<const std::string&>();
      return has_type(inst, t) || fail({"expected ", t, ", got ", instance_type(inst)});
    }
    std::string names;
    for (const json& t : v) {
      if (has_type(inst, t.get_ref<const std::string&>())) return true;
      if (!names.empty()) names += " or ";
      names += t.get_ref<const std::string&>();
    }
    return fail({"expected ", (names.empty() ? std::string("no type") : names), ", got ",
                 instance_type(inst)});
  }

  // Pairwise, each comparison a step: a sort would need an order consistent with JSON
  // equality (1 == 1.0), and its instantiations cost the wasm module ~4 KB; an array too
  // large for the step budget is a limit error, not a pass.
  bool unique(const json& inst) {
    for (std::size_t y = 1; y < inst.size(); ++y) {
      steps_ += y;
      if (steps_ > limits_.max_steps) {
        return hard(SchemaErrorKind::limit,
                    {"uniqueItems over ", std::to_string(inst.size()), " items took more than ",
                     std::to_string(limits_.max_steps), " steps"});
      }
      for (std::size_t x = 0; x < y; ++x) {
        if (inst[x] == inst[y]) {
          return fail({"items ", std::to_string(x), " and ", std::to_string(y), " are equal"});
        }
      }
    }
    return true;
  }

  bool contains(const json& s, const json& v, const json& inst, Annotations* a) {
    if (!inst.is_array()) return true;
    std::size_t min = 1, max = SIZE_MAX;
    if (auto m = member(s, "minContains"); m != s.end() && !read_count(*m, min))
      return bad({"minContains must be a non-negative integer"});
    if (auto m = member(s, "maxContains"); m != s.end() && !read_count(*m, max))
      return bad({"maxContains must be a non-negative integer"});
    std::size_t found = 0;
    for (std::size_t i = 0; i < inst.size(); ++i) {
      bool ok;
      {
        Quiet q(quiet_);
        KeyGuard ig(ipath_, i);
        ok = eval(v, inst[i], nullptr);
      }
      if (stopped_) return false;
      if (ok) {
        ++found;
        if (a) a->contained.push_back(i);
      }
    }
    if (found < min) {
      return fail({"expected at least ", std::to_string(min), " item(s) matching contains, got ",
                   std::to_string(found)});
    }
    if (found > max) {
      return fail({"expected at most ", std::to_string(max), " item(s) matching contains, got ",
                   std::to_string(found)});
    }
    return true;
  }

  bool additional_properties(const json& s, const json& v, const json& inst, Annotations* a) {
    if (!inst.is_object()) return true;
    auto props = member(s, "properties");
    auto patterns = member(s, "patternProperties");
    // Sorted keys on both sides, as in `properties`.
    bool have_props = props != s.end() && props->is_object();
    auto p = have_props ? props->begin() : s.end();
    for (auto m = inst.begin(); m != inst.end(); ++m) {
      if (have_props) {
        while (p != props->end() && p.key() < m.key()) ++p;
        if (p != props->end() && p.key() == m.key()) continue;
      }
      bool matched = false;
      if (patterns != s.end() && patterns->is_object()) {
        for (auto p = patterns->begin(); p != patterns->end() && !matched; ++p) {
          int hit = matches(p.key(), m.key());
          if (hit < 0) return false;
          matched = hit > 0;
        }
      }
      if (matched) continue;
      KeyGuard ig(ipath_, m.key());
      if (v.is_boolean() && !v.get<bool>())
        return fail({"property ", quote(m.key()), " is not allowed"});
      if (!eval(v, m.value(), nullptr)) return false;
    }
    if (a) a->all_props = true;
    return true;
  }

  bool unevaluated_properties(const json& v, const json& inst, Annotations& a) {
    KeyGuard kg(kpath_, std::string_view("unevaluatedProperties"));
    if (!is_schema(v)) return bad({"unevaluatedProperties must be a schema"});
    for (auto m = inst.begin(); m != inst.end(); ++m) {
      if (a.has_prop(&m.key())) continue;
      KeyGuard ig(ipath_, m.key());
      if (v.is_boolean() && !v.get<bool>())
        return fail({"property ", quote(m.key()), " is not allowed (unevaluated)"});
      if (!eval(v, m.value(), nullptr)) return false;
    }
    a.all_props = true;
    return true;
  }

  bool unevaluated_items(const json& v, const json& inst, Annotations& a) {
    KeyGuard kg(kpath_, std::string_view("unevaluatedItems"));
    if (!is_schema(v)) return bad({"unevaluatedItems must be a schema"});
    for (std::size_t i = 0; i < inst.size(); ++i) {
      if (a.has_item(i)) continue;
      KeyGuard ig(ipath_, i);
      if (v.is_boolean() && !v.get<bool>())
        return fail({"item ", std::to_string(i), " is not allowed (unevaluated)"});
      if (!eval(v, inst[i], nullptr)) return false;
    }
    a.all_items = true;
    return true;
  }

  bool any_or_one_of(bool one, const json& v, const json& inst, Annotations* a) {
    std::size_t passed = 0, first = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      Annotations branch;
      bool ok;
      {
        Quiet q(quiet_);
        KeyGuard kg(kpath_, i);
        ok = eval(v[i], inst, a ? &branch : nullptr);
      }
      if (stopped_) return false;
      if (!ok) continue;
      if (passed++ == 0) first = i;
      if (a) a->merge(branch);
      if (one && passed > 1) {
        return fail({"value matches oneOf schemas ", std::to_string(first), " and ",
                     std::to_string(i), ", expected exactly one"});
      }
      // anyOf stops at the first match unless annotations are collected.
      if (!one && !a) return true;
    }
    if (passed > 0) return true;
    // Say why the first alternative failed: often the one the value was meant to match.
    std::string why;
    {
      std::optional<SchemaError> saved = std::move(error_);
      error_.reset();
      KeyGuard kg(kpath_, std::size_t{0});
      eval(v[0], inst, nullptr);
      if (error_ && error_->kind == SchemaErrorKind::mismatch) {
        why = " (schema 0: " + to_string(*error_) + ")";
      }
      error_ = std::move(saved);
    }
    return fail({"value matches none of the ", (one ? "oneOf" : "anyOf"), " schemas", why});
  }

  bool ref(const std::string& r, const json& inst, Annotations* a) {
    // Resolved once per ($ref, base) in a validation: a $ref under `items` is met per item.
    const std::string* new_base = nullptr;
    const json* target = nullptr;
    for (const ResolvedRef& c : resolved_) {
      if (c.ref == &r && c.base == base_) {
        target = c.target;
        new_base = c.new_base;
        break;
      }
    }
    if (!target) {
      target = resolve(r, &new_base);
      if (!target) return false;
      resolved_.push_back({&r, base_, target, new_base});
    }
    for (const auto& [sch, in] : active_refs_) {
      if (sch == target && in == &inst)
        return bad({"$ref ", quote(r), " is a cycle that never reaches the value"});
    }
    active_refs_.emplace_back(target, &inst);
    const std::string* saved = base_;
    base_ = new_base;
    bool ok = eval(*target, inst, a);
    base_ = saved;
    active_refs_.pop_back();
    return ok;
  }

  struct ResolvedRef {
    const std::string* ref;
    const std::string* base;
    const json* target;
    const std::string* new_base;
  };

  const json& root_;
  const SchemaLimits& limits_;
  const std::string empty_base_;
  std::vector<ResolvedRef> resolved_;
  std::unique_ptr<SchemaIndex> index_;
  const std::string* base_ = nullptr;
  std::vector<PathSeg> ipath_, kpath_;
  std::vector<std::pair<const json*, const json*>> active_refs_;
  std::vector<std::pair<const std::string*, std::unique_ptr<ReNode>>> patterns_;
  std::optional<SchemaError> error_;
  std::size_t steps_ = 0, depth_ = 0;
  int quiet_ = 0;
  bool stopped_ = false;
};

}  // namespace json_schema_detail

std::string to_string(const SchemaError& error) {
  return (error.instance_path.empty() ? std::string("(root)") : error.instance_path) + ": " +
         error.message;
}

std::optional<SchemaError> validate_json_schema(const json& schema, const json& instance,
                                                const SchemaLimits& limits) {
  if (schema.is_boolean() && schema.get<bool>()) return std::nullopt;
  json_schema_detail::Validator v(schema, limits);
  return v.run(instance);
}

bool json_schema_validation_available() { return true; }

std::optional<SchemaError> check_json_schema(const json& schema, const SchemaLimits& limits) {
  json_schema_detail::Validator v(schema, limits);
  return v.check();
}

}  // namespace mcprt
