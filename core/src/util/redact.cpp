// Secret redaction (see mcprt/redact.hpp). Self-contained on purpose: Error::make calls it,
// so it must not depend on the URL parser or anything else that makes errors.

#include "mcprt/redact.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

#include "util/ascii.hpp"

namespace mcprt {

namespace {

using ascii::hex_value;
using ascii::is_alpha;
using ascii::is_digit;
using ascii::is_scheme_char;
using ascii::npos;

// SPEC §17's list (`api_key` is covered by `key`), plus two spellings of the same idea.
constexpr std::string_view kSecretWords[] = {"key",    "token", "secret", "password",
                                             "passwd", "auth",  "sig",    "credential"};

// Characters of a parameter/field name in free text ("api_key", "X-Amz-Signature", "a%5Fkey").
bool is_name_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '_' || c == '-' || c == '.' || c == '%';
}
// RFC 7235 token68 plus what real tokens use.
bool is_token_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
         c == '/' || c == '=';
}
bool is_space_or_tab(char c) { return c == ' ' || c == '\t'; }

bool equals_ci(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii::to_lower(a[i]) != ascii::to_lower(b[i])) return false;
  }
  return true;
}

// Where a URL ends in free text.
bool ends_url(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c <= 0x20 || c == 0x7F) return true;
  switch (c) {
    case '"':
    case '\'': {
      // Only a closing quote: a browser keeps "'" in userinfo, paths and even hosts, and
      // '"' in a host ("http://u:it's@h/", "http://a'b/").
      if (i + 1 >= text.size()) return true;
      const auto next = static_cast<unsigned char>(text[i + 1]);
      return next <= 0x20 || std::string_view(".,;:!?)]}>\\").find(static_cast<char>(next)) != npos;
    }
    case '<':
    case '>': return true;
    case '\\': return i + 1 < text.size() && text[i + 1] == '"';  // a quote escaped in JSON text
    default: return false;
  }
}

// Where an unquoted value of a free-text `name=value` ends.
bool ends_value(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u <= 0x20 || u == 0x7F) return true;
  switch (c) {
    case '&':
    case ';':
    case ',':
    case '"':
    case '\'':
    case '<':
    case '>':
    case ')':
    case ']':
    case '}':
    case '`': return true;
    default: return false;
  }
}

// Userinfo of URLs nested in the rest of a URL ("https://proxy/fetch/http://u:pw@x/",
// "?next=http://u:pw@x/"), masked in `out` from `from` on.
void mask_nested_userinfo(std::string& out, std::size_t from) {
  for (std::size_t sep = out.find("://", from); sep != npos; sep = out.find("://", sep + 3)) {
    const std::size_t start = sep + 3;
    std::size_t end = out.find_first_of("/?#&;", start);
    if (end == npos) end = out.size();
    const std::size_t at = std::string_view(out).substr(start, end - start).rfind('@');
    if (at == npos || at == 0 || std::string_view(out).substr(start, at) == kRedactedMask) continue;
    out.replace(start, at, kRedactedMask);
  }
}

void append_redacted_url(std::string& out, std::string_view url) {
  std::size_t pos = 0;
  // The authority starts after "scheme:" and the slashes (of either kind) that follow; for
  // http(s) even without slashes ("http:user:pw@h" is http://user:pw@h/ to a browser).
  // Tabs and newlines are skipped the way a browser removes them.
  std::size_t authority = npos;
  const std::size_t colon = url.find(':');
  std::string scheme;
  if (colon != npos && colon > 0 && is_alpha(url[0])) {
    bool valid = true;
    for (std::size_t i = 0; i < colon && valid; ++i) {
      const char c = url[i];
      if (c == '\t' || c == '\n' || c == '\r') continue;
      if (!is_scheme_char(c)) valid = false;
      scheme += ascii::to_lower(c);
    }
    if (valid) {
      std::size_t a = colon + 1;
      while (a < url.size() &&
             (url[a] == '/' || url[a] == '\\' || url[a] == '\t' || url[a] == '\n' || url[a] == '\r')) {
        ++a;
      }
      const bool special = scheme == "http" || scheme == "https" || scheme == "ws" ||
                           scheme == "wss" || scheme == "ftp";
      if (a > colon + 1 || special) authority = a;
    }
  } else if (url.substr(0, 2) == "//" || url.substr(0, 2) == "\\\\") {
    authority = 2;  // scheme-relative
  }
  if (authority != npos) {
    std::size_t end = url.find_first_of("/?#", authority);
    if (end == npos) end = url.size();
    const std::size_t at = url.substr(authority, end - authority).rfind('@');
    out.append(url.substr(0, authority));
    pos = authority;
    if (at != npos && at > 0) {
      out.append(kRedactedMask);
      pos = authority + at;  // the '@' is copied below
    }
    // A ':' that ends the authority goes with the rest, so that a nested "://" starting
    // there is seen ("http://h:/" + "/u:pw@x").
    std::size_t split = end;
    while (split > pos && url[split - 1] == ':') --split;
    out.append(url.substr(pos, split - pos));
    pos = split;
  }
  // URLs nested in the rest first, so that the parameters below are read from the same
  // text a second pass reads (masking a nested userinfo can remove an '=').
  std::string rest(url.substr(pos));
  mask_nested_userinfo(rest, 0);
  url = rest;
  pos = 0;
  std::size_t params = url.find_first_of("?#", pos);
  if (params == npos) params = url.size();
  out.append(url.substr(pos, params - pos));
  pos = params;
  while (pos < url.size()) {
    out += url[pos++];  // the separator
    std::size_t end = url.find_first_of("&;#", pos);
    if (end == npos) end = url.size();
    const std::string_view pair = url.substr(pos, end - pos);
    const std::size_t eq = pair.find('=');
    if (eq != npos && eq + 1 < pair.size() && is_secret_name(pair.substr(0, eq))) {
      out.append(pair.substr(0, eq + 1));
      out.append(kRedactedMask);
    } else if (const std::size_t q = pair.find('?'); q != npos) {
      // A URL nested in a value ("next=https://x/?token=t"): its own parameters follow
      // the '?'. (Inside a secret value, above, a '?' is just part of what is masked.)
      out.append(pair.substr(0, q));
      end = pos + q;
    } else {
      out.append(pair);
    }
    pos = end;
  }
}

// One pass over free text. Nothing is copied until the first secret is found, so text
// without secrets costs one scan and no allocation.
class Redactor {
 public:
  // The only bytes a secret can be found at: a URL's or header's ':', a pair's '=', the
  // 'b' of "bearer". Everything else is skipped with one table lookup.
  static bool is_trigger(char c) {
    static constexpr auto kTable = [] {
      std::array<bool, 256> t{};
      t[':'] = t['='] = t['b'] = t['B'] = true;
      return t;
    }();
    return kTable[static_cast<unsigned char>(c)];
  }

  explicit Redactor(std::string_view text) : text_(text) {}

  // Returns false (and leaves `out` untouched) when nothing needs masking.
  bool run(std::string& out) {
    std::size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (!is_trigger(c)) {
        ++i;
        continue;
      }
      std::size_t next = npos;
      if (c == ':') {
        next = try_url(i);
        if (next == npos) next = try_json_pair(i);
        if (next == npos) next = try_authorization_header(i);
      } else if (c == '=') {
        next = try_key_value(i);
      } else if (c == 'b' || c == 'B') {
        next = try_bearer(i);
      }
      i = next == npos ? i + 1 : next;
    }
    if (!changed_) return false;
    flush(text_.size());
    out = std::move(out_);
    return true;
  }

 private:
  void flush(std::size_t to) {
    if (!changed_) {
      changed_ = true;
      out_.reserve(text_.size() + 8);
    }
    out_.append(text_.substr(copied_, to - copied_));
    copied_ = to;
  }
  // A secret that needs no masking (empty, or masked already) is passed over the same way
  // as one just masked, so a second pass reads the text as the first did.
  std::size_t handled(std::size_t to) {
    if (to > done_) done_ = to;
    return to;
  }
  void mask_span(std::size_t from, std::size_t to) {
    flush(from);
    out_.append(kRedactedMask);
    copied_ = done_ = to;
  }

  // `scheme://...` (or `http:`/`https:` + anything) with the ':' at `colon`.
  std::size_t try_url(std::size_t colon) {
    std::size_t s = colon;
    while (s > done_ && is_scheme_char(text_[s - 1])) --s;
    while (s < colon && !is_alpha(text_[s])) ++s;
    if (colon - s < 2) return npos;
    const std::string_view scheme = text_.substr(s, colon - s);
    auto slash = [&](std::size_t k) {
      return k < text_.size() && (text_[k] == '/' || text_[k] == '\\');
    };
    const bool special = equals_ci(scheme, "http") || equals_ci(scheme, "https");
    const bool slashes = slash(colon + 1) && slash(colon + 2);
    if (!slashes && !(special && colon + 1 < text_.size() && !ends_url(text_, colon + 1))) {
      return npos;
    }
    // A quote in userinfo may look like a closing one ("http://u':p@h/"): when an '@'
    // follows within what can be the authority, the URL reaches at least past it. Only a
    // stretch that can be userinfo as a browser writes it counts (so that masking a pair
    // in it, which removes its '?' or '/', cannot make it userinfo on a second pass).
    std::size_t e = colon + 1;
    while (slash(e)) ++e;
    const std::size_t authority = e;
    auto last_userinfo_at = [&](std::size_t from) {
      std::size_t last_at = npos;
      for (std::size_t k = from; k < text_.size(); ++k) {
        const char c = text_[k];
        if (c == '@') {
          last_at = k;
        } else if (!(is_alpha(c) || is_digit(c) || std::string_view("-._~!$&'()*+,%:").find(c) != npos)) {
          break;
        }
      }
      return last_at;
    };
    if (const std::size_t at = last_userinfo_at(authority); at != npos) e = at + 1;
    while (e < text_.size() && !ends_url(text_, e)) ++e;
    // The mask replaces the authority up to its last '@' (which need not be in that
    // stretch: "https://a=b\xF4@c':d@e/"), and "***@" followed by the rest is such a
    // stretch for a second pass, which would then reach a later '@' ("c':d@") and mask on.
    // Followed here, so that one pass is what repeating it gives (each round reaches past
    // one more '@'; every character is searched at most twice).
    const std::size_t path_at = text_.find_first_of("/?#", authority);
    std::size_t mask_at = npos;
    for (std::size_t searched = authority;;) {
      const std::size_t authority_end = std::min(path_at, e);
      for (; searched < authority_end; ++searched) {
        if (text_[searched] == '@') mask_at = searched;
      }
      if (mask_at == npos) break;
      const std::size_t next_at = last_userinfo_at(mask_at + 1);
      if (next_at == npos || next_at < e) break;
      e = next_at + 1;
      while (e < text_.size() && !ends_url(text_, e)) ++e;
    }
    const std::string_view whole = text_.substr(s, e - s);
    const std::size_t whole_end = e;
    // Sentence punctuation after a URL is not part of it.
    while (e > colon + 1) {
      const char last = text_[e - 1];
      // '`' too: a browser leaves it unescaped in a query, so only a closing one is markup.
      const bool trim = last == '.' || last == ',' || last == ';' || last == ':' || last == '!' || last == '`' ||
                        last == '?' || (last == ')' && whole.find('(') == npos) ||
                        (last == ']' && whole.find('[') == npos);
      if (!trim) break;
      --e;
    }
    std::string redacted;
    append_redacted_url(redacted, text_.substr(s, e - s));
    // ...unless it is all a secret value has ("?token=:)."): when the trimmed URL ends in
    // an empty value that the whole one masks, the whole one is taken.
    if (e < whole_end && !redacted.empty() && redacted.back() == '=') {
      std::string full;
      append_redacted_url(full, whole);
      if (full != redacted + std::string(text_.substr(e, whole_end - e))) {
        e = whole_end;
        redacted = std::move(full);
      }
    }
    if (redacted != text_.substr(s, e - s)) {
      flush(s);
      out_.append(redacted);
      copied_ = e;
    }
    done_ = e;  // masked or not, the URL is not read again as a name or scheme
    return e;
  }

  // `name=value`, `name="value"`, `name='value'` with a secret name.
  std::size_t try_key_value(std::size_t eq) {
    std::size_t s = eq;
    while (s > done_ && is_name_char(text_[s - 1])) --s;
    if (s == eq || !is_secret_name(text_.substr(s, eq - s))) return npos;
    std::size_t v = eq + 1;
    std::size_t e = npos;
    if (v < text_.size() && (text_[v] == '"' || text_[v] == '\'')) {
      const char quote = text_[v++];
      e = text_.find(quote, v);
    }
    if (e == npos) {
      // Unquoted, or a quote never closed: the value ends where an unquoted one would (not
      // at the end of the text, which would swallow the rest of a message).
      e = v;
      while (e < text_.size() && !ends_value(text_[e])) ++e;
    }
    if (e == v || text_.substr(v, e - v) == kRedactedMask) return handled(e);
    mask_span(v, e);
    return e;
  }

  // JSON `"name": "value"` with a secret name; `colon` is the ':'.
  std::size_t try_json_pair(std::size_t colon) {
    std::size_t j = colon;
    while (j > 0 && is_space_or_tab(text_[j - 1])) --j;
    if (j == 0 || text_[j - 1] != '"') return npos;
    const std::size_t name_end = j - 1;
    std::size_t name_start = name_end;
    while (name_start > 0 && text_[name_start - 1] != '"' && name_end - name_start < 128) --name_start;
    if (name_start == 0 || text_[name_start - 1] != '"' || name_start - 1 < done_) return npos;
    if (!is_secret_name(text_.substr(name_start, name_end - name_start))) return npos;
    std::size_t v = colon + 1;
    while (v < text_.size() && is_space_or_tab(text_[v])) ++v;
    if (v >= text_.size() || text_[v] != '"') return npos;
    ++v;
    std::size_t e = v;
    while (e < text_.size() && text_[e] != '"') e += text_[e] == '\\' ? 2 : 1;
    if (e > text_.size()) e = text_.size();
    if (e == v || text_.substr(v, e - v) == kRedactedMask) return handled(e);
    mask_span(v, e);
    return e;
  }

  // `Authorization: <scheme> <credentials>` (and Proxy-Authorization): the credentials.
  // Bearer is also caught on its own below; this covers Basic and other schemes.
  std::size_t try_authorization_header(std::size_t colon) {
    std::size_t s = colon;
    while (s > done_ && (is_alpha(text_[s - 1]) || text_[s - 1] == '-')) --s;
    const std::string_view name = text_.substr(s, colon - s);
    if (!equals_ci(name, "authorization") && !equals_ci(name, "proxy-authorization")) return npos;
    std::size_t v = colon + 1;
    while (v < text_.size() && is_space_or_tab(text_[v])) ++v;
    std::size_t w = v;
    while (w < text_.size() && is_alpha(text_[w])) ++w;
    std::size_t t = w;
    while (t < text_.size() && is_space_or_tab(text_[t])) ++t;
    if (text_.substr(t, kRedactedMask.size()) == kRedactedMask) return handled(t + kRedactedMask.size());
    if (t == w || t >= text_.size() || !is_token_char(text_[t])) t = v;  // no scheme word
    std::size_t e = t;
    while (e < text_.size() && is_token_char(text_[e])) ++e;
    if (e == t || text_.substr(t, e - t) == kRedactedMask) return handled(e);
    mask_span(t, e);
    return e;
  }

  // `Bearer <token>`, any case, as a word.
  std::size_t try_bearer(std::size_t b) {
    if (b > 0 && (is_alpha(text_[b - 1]) || is_digit(text_[b - 1]))) return npos;
    if (!equals_ci(text_.substr(b, 6), "bearer")) return npos;
    std::size_t t = b + 6;
    const std::size_t after_word = t;
    while (t < text_.size() && is_space_or_tab(text_[t])) ++t;
    if (t == after_word) return npos;
    if (text_.substr(t, kRedactedMask.size()) == kRedactedMask) return handled(t + kRedactedMask.size());
    std::size_t e = t;
    while (e < text_.size() && is_token_char(text_[e])) ++e;
    if (e == t || text_.substr(t, e - t) == kRedactedMask) return e == t ? npos : handled(e);
    mask_span(t, e);
    return e;
  }

  std::string_view text_;
  std::string out_;
  std::size_t copied_ = 0;  // text_ up to here is in out_ (once anything changed)
  std::size_t done_ = 0;    // text_ up to here belongs to a URL or secret already handled
  bool changed_ = false;
};

}  // namespace

bool is_secret_name(std::string_view name) {
  // Decoded and lower-cased into a stack buffer: this runs for every "name=" and JSON key
  // in every error message, so it does not allocate for names of ordinary length.
  char small[64];
  std::string large;
  char* lowered = small;
  if (name.size() > sizeof small) {
    large.resize(name.size());
    lowered = large.data();
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%' && i + 2 < name.size() && hex_value(name[i + 1]) >= 0 &&
        hex_value(name[i + 2]) >= 0) {
      lowered[n++] =
          ascii::to_lower(static_cast<char>(hex_value(name[i + 1]) * 16 + hex_value(name[i + 2])));
      i += 2;
    } else {
      lowered[n++] = ascii::to_lower(name[i]);
    }
  }
  const std::string_view text(lowered, n);
  for (std::string_view word : kSecretWords) {
    if (text.find(word) != npos) return true;
  }
  return false;
}

std::string redact_url(std::string_view url) {
  std::string out;
  out.reserve(url.size());
  append_redacted_url(out, url);
  return out;
}

namespace {

// One pass is meant to leave nothing a second one masks (try_url follows a masked
// userinfo's '@' on: "https://a=b\xF4@c':d@e/" becomes "https://***@e/" at once). Passes
// still repeat until nothing changes, at most kMaxPasses, as a backstop for interactions
// between the rules; text with nothing to mask costs the one pass that finds nothing.
constexpr int kMaxPasses = 4;

bool redact_until_stable(std::string_view text, std::string& out) {
  if (!Redactor(text).run(out)) return false;
  for (int pass = 1; pass < kMaxPasses; ++pass) {
    std::string next;
    if (!Redactor(out).run(next) || next == out) break;
    out = std::move(next);
  }
  return true;
}

}  // namespace

std::string redact_secrets(std::string_view text) {
  std::string out;
  if (!redact_until_stable(text, out)) return std::string(text);
  return out;
}

bool redact_secrets_in_place(std::string& text) {
  std::string out;
  if (!redact_until_stable(text, out)) return false;
  text = std::move(out);
  return true;
}

}  // namespace mcprt
