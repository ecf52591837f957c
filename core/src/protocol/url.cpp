// The WHATWG URL Standard's basic URL parser (https://url.spec.whatwg.org/#concept-basic-url-parser),
// for the special schemes http and https, without a state override and without the
// fragment (it never goes on the wire). The structure follows the standard's states so that
// each rule can be checked against it; see mcprt/url.hpp for what is deliberately rejected.
// The input is UTF-8 and handled as bytes: every delimiter is ASCII, and percent-encoding a
// code point is percent-encoding its UTF-8 bytes.

#include "mcprt/url.hpp"

#include <array>
#include <cstdint>
#include <vector>

#include "framing/utf8.hpp"
#include "util/ascii.hpp"

namespace mcprt {

namespace {

using ascii::hex_value;
using ascii::is_alpha;
using ascii::is_digit;
using ascii::is_scheme_char;
using ascii::lower;
using ascii::npos;
bool is_slash(int c) { return c == '/' || c == '\\'; }  // '\' is '/' in special URLs

Error failure(std::string why) { return Error::make(ErrorCode::invalid_argument, std::move(why)); }

// --- Percent-encode sets (URL Standard §1.3), as bytes. ---------------------------------
bool in_c0_control_set(unsigned char c) { return c < 0x20 || c > 0x7E; }
bool in_special_query_set(unsigned char c) {
  return in_c0_control_set(c) || c == ' ' || c == '"' || c == '#' || c == '<' || c == '>' ||
         c == '\'';
}
// The path set as Node 20 (Ada) and today's browsers apply it: U+005E (^), which a 2024
// edit of the standard added, is still sent as is.
bool in_path_set(unsigned char c) {
  return in_c0_control_set(c) || c == ' ' || c == '"' || c == '#' || c == '<' || c == '>' ||
         c == '?' || c == '`' || c == '{' || c == '}';
}
bool in_userinfo_set(unsigned char c) {
  return in_path_set(c) || c == '/' || c == ':' || c == ';' || c == '=' || c == '@' ||
         (c >= '[' && c <= '^') || c == '|';
}

template <typename Set>
void encode_into(std::string& out, std::string_view text, Set in_set) {
  append_percent_encoded(out, text, [&](unsigned char c, std::size_t) { return !in_set(c); });
}

// --- IPv4 (URL Standard §3.5, "IPv4 parser"). -----------------------------------------
constexpr std::uint64_t kSaturated = std::uint64_t{1} << 40;  // "more than 32 bits"

// The IPv4 number parser: decimal, 0x hex or 0 octal; nullopt when not a number. Values
// saturate above 2^32 so that long inputs cannot overflow.
std::optional<std::uint64_t> parse_ipv4_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int radix = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    radix = 16;
  } else if (s.size() >= 2 && s[0] == '0') {
    s.remove_prefix(1);
    radix = 8;
  }
  std::uint64_t value = 0;
  for (char c : s) {
    const int d = radix == 16 ? hex_value(c) : (is_digit(c) ? c - '0' : -1);
    if (d < 0 || d >= radix) return std::nullopt;
    value = value * static_cast<std::uint64_t>(radix) + static_cast<std::uint64_t>(d);
    if (value > kSaturated) value = kSaturated;
  }
  return value;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == npos ? npos : dot - start));
    if (dot == npos) return parts;
    start = dot + 1;
  }
}

// "ends in a number": the host is an IPv4 address or nothing ("foo.1" is invalid).
bool ends_in_a_number(std::string_view host) {
  std::vector<std::string_view> parts = split_dots(host);
  if (parts.back().empty()) {
    if (parts.size() == 1) return false;
    parts.pop_back();
  }
  const std::string_view last = parts.back();
  bool all_digits = !last.empty();
  for (char c : last) all_digits = all_digits && is_digit(c);
  return all_digits || parse_ipv4_number(last).has_value();
}

Result<std::string> parse_ipv4(std::string_view host) {
  std::vector<std::string_view> parts = split_dots(host);
  if (parts.back().empty() && parts.size() > 1) parts.pop_back();
  if (parts.size() > 4) {
    return failure("the host \"" + std::string(host) + "\" ends in a number but has more than four parts");
  }
  std::vector<std::uint64_t> numbers;
  for (std::string_view part : parts) {
    const std::optional<std::uint64_t> n = parse_ipv4_number(part);
    if (!n) {
      return failure("the host \"" + std::string(host) + "\" ends in a number but \"" + std::string(part) +
                     "\" is not an IPv4 number");
    }
    numbers.push_back(*n);
  }
  for (std::size_t i = 0; i + 1 < numbers.size(); ++i) {
    if (numbers[i] > 255) return failure("the IPv4 address \"" + std::string(host) + "\" has a part over 255");
  }
  const std::uint64_t limit = std::uint64_t{1} << (8 * (5 - numbers.size()));
  if (numbers.back() >= limit) {
    return failure("the IPv4 address \"" + std::string(host) + "\" is out of range");
  }
  std::uint64_t address = numbers.back();
  for (std::size_t i = 0; i + 1 < numbers.size(); ++i) address += numbers[i] << (8 * (3 - i));
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) {
    if (!out.empty()) out += '.';
    out += std::to_string((address >> shift) & 0xFF);
  }
  return out;
}

// --- IPv6 (URL Standard §3.5, "IPv6 parser" and "IPv6 serializer"). ---------------------
Result<std::array<std::uint16_t, 8>> parse_ipv6(std::string_view in) {
  std::array<std::uint16_t, 8> address{};
  const Error bad = failure("\"[" + std::string(in) + "]\" is not an IPv6 address");
  std::size_t piece = 0;
  std::optional<std::size_t> compress;
  std::size_t p = 0;
  auto at = [&](std::size_t i) -> int { return i < in.size() ? static_cast<unsigned char>(in[i]) : -1; };
  if (at(p) == ':') {
    if (at(p + 1) != ':') return bad;
    p += 2;
    compress = ++piece;
  }
  while (at(p) != -1) {
    if (piece == 8) return bad;
    if (at(p) == ':') {
      if (compress) return bad;
      ++p;
      compress = ++piece;
      continue;
    }
    unsigned value = 0;
    std::size_t length = 0;
    while (length < 4 && at(p) != -1 && hex_value(static_cast<char>(at(p))) >= 0) {
      value = value * 0x10 + static_cast<unsigned>(hex_value(static_cast<char>(at(p))));
      ++p;
      ++length;
    }
    if (at(p) == '.') {
      if (length == 0) return bad;
      p -= length;
      if (piece > 6) return bad;
      int numbers_seen = 0;
      while (at(p) != -1) {
        int ipv4_piece = -1;
        if (numbers_seen > 0) {
          if (at(p) == '.' && numbers_seen < 4) {
            ++p;
          } else {
            return bad;
          }
        }
        if (at(p) == -1 || !is_digit(static_cast<char>(at(p)))) return bad;
        while (at(p) != -1 && is_digit(static_cast<char>(at(p)))) {
          const int number = at(p) - '0';
          if (ipv4_piece == -1) {
            ipv4_piece = number;
          } else if (ipv4_piece == 0) {
            return bad;  // no leading zeros
          } else {
            ipv4_piece = ipv4_piece * 10 + number;
          }
          if (ipv4_piece > 255) return bad;
          ++p;
        }
        address[piece] = static_cast<std::uint16_t>(address[piece] * 0x100 + ipv4_piece);
        ++numbers_seen;
        if (numbers_seen == 2 || numbers_seen == 4) ++piece;
      }
      if (numbers_seen != 4) return bad;
      break;
    }
    if (at(p) == ':') {
      ++p;
      if (at(p) == -1) return bad;
    } else if (at(p) != -1) {
      return bad;
    }
    address[piece] = static_cast<std::uint16_t>(value);
    ++piece;
  }
  if (compress) {
    std::size_t swaps = piece - *compress;
    piece = 7;
    while (piece != 0 && swaps > 0) {
      std::swap(address[piece], address[*compress + swaps - 1]);
      --piece;
      --swaps;
    }
  } else if (piece != 8) {
    return bad;
  }
  return address;
}

std::string serialize_ipv6(const std::array<std::uint16_t, 8>& address) {
  // The first longest run of two or more zero pieces is written "::".
  std::optional<std::size_t> compress;
  std::size_t best = 1;
  for (std::size_t i = 0; i < 8;) {
    std::size_t j = i;
    while (j < 8 && address[j] == 0) ++j;
    if (j - i > best) {
      best = j - i;
      compress = i;
    }
    i = j == i ? i + 1 : j;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "[";
  bool ignore0 = false;
  for (std::size_t i = 0; i < 8; ++i) {
    if (ignore0 && address[i] == 0) continue;
    ignore0 = false;
    if (compress && *compress == i) {
      out += i == 0 ? "::" : ":";
      ignore0 = true;
      continue;
    }
    std::string piece;
    std::uint16_t v = address[i];
    do {
      piece.insert(piece.begin(), kHex[v & 0xF]);
      v = static_cast<std::uint16_t>(v >> 4);
    } while (v != 0);
    out += piece;
    if (i != 7) out += ':';
  }
  return out + "]";
}

// --- Punycode (RFC 3492), for hosts already written in ASCII. -------------------------
constexpr std::uint32_t kBase = 36, kTmin = 1, kTmax = 26, kSkew = 38, kDamp = 700;
constexpr std::uint32_t kInitialBias = 72, kInitialN = 128;
constexpr std::uint32_t kMaxInt = 0x7FFFFFFF;

std::uint32_t adapt(std::uint32_t delta, std::uint32_t points, bool first) {
  delta = first ? delta / kDamp : delta / 2;
  delta += delta / points;
  std::uint32_t k = 0;
  while (delta > ((kBase - kTmin) * kTmax) / 2) {
    delta /= kBase - kTmin;
    k += kBase;
  }
  return k + (kBase - kTmin + 1) * delta / (delta + kSkew);
}

std::uint32_t threshold(std::uint32_t k, std::uint32_t bias) {
  if (k <= bias) return kTmin;
  if (k >= bias + kTmax) return kTmax;
  return k - bias;
}

std::optional<std::u32string> punycode_decode(std::string_view in) {
  std::u32string out;
  const std::size_t delimiter = in.rfind('-');
  std::size_t p = 0;
  if (delimiter != npos) {
    for (std::size_t i = 0; i < delimiter; ++i) out += static_cast<char32_t>(static_cast<unsigned char>(in[i]));
    p = delimiter + 1;
  }
  std::uint32_t n = kInitialN, i = 0, bias = kInitialBias;
  while (p < in.size()) {
    const std::uint32_t old_i = i;
    std::uint32_t w = 1;
    for (std::uint32_t k = kBase;; k += kBase) {
      if (p >= in.size()) return std::nullopt;
      const char c = ascii::to_lower(in[p++]);
      std::uint32_t digit;
      if (c >= 'a' && c <= 'z') {
        digit = static_cast<std::uint32_t>(c - 'a');
      } else if (is_digit(c)) {
        digit = static_cast<std::uint32_t>(c - '0') + 26;
      } else {
        return std::nullopt;
      }
      if (digit > (kMaxInt - i) / w) return std::nullopt;
      i += digit * w;
      const std::uint32_t t = threshold(k, bias);
      if (digit < t) break;
      if (w > kMaxInt / (kBase - t)) return std::nullopt;
      w *= kBase - t;
    }
    const auto points = static_cast<std::uint32_t>(out.size() + 1);
    bias = adapt(i - old_i, points, old_i == 0);
    if (i / points > kMaxInt - n) return std::nullopt;
    n += i / points;
    i %= points;
    if (n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF)) return std::nullopt;
    out.insert(out.begin() + i, static_cast<char32_t>(n));
    ++i;
  }
  return out;
}

std::string punycode_encode(const std::u32string& in) {
  std::string out;
  for (char32_t c : in) {
    if (c < 0x80) out += static_cast<char>(c);
  }
  const std::size_t basic = out.size();
  std::size_t handled = basic;
  if (basic > 0) out += '-';
  std::uint32_t n = kInitialN, delta = 0, bias = kInitialBias;
  while (handled < in.size()) {
    std::uint32_t m = 0x10FFFF + 1;
    for (char32_t c : in) {
      if (c >= n && c < m) m = static_cast<std::uint32_t>(c);
    }
    delta += (m - n) * static_cast<std::uint32_t>(handled + 1);
    n = m;
    for (char32_t c : in) {
      if (c < n) ++delta;
      if (c == n) {
        std::uint32_t q = delta;
        for (std::uint32_t k = kBase;; k += kBase) {
          const std::uint32_t t = threshold(k, bias);
          if (q < t) break;
          const std::uint32_t d = t + (q - t) % (kBase - t);
          out += static_cast<char>(d < 26 ? 'a' + d : '0' + (d - 26));
          q = (q - t) / (kBase - t);
        }
        out += static_cast<char>(q < 26 ? 'a' + q : '0' + (q - 26));
        bias = adapt(delta, static_cast<std::uint32_t>(handled + 1), handled == basic);
        delta = 0;
        ++handled;
      }
    }
    ++delta;
    ++n;
  }
  return out;
}

// Code points that are valid IDNA (UTS-46, non-transitional) as they stand and are not
// right-to-left, so a label made of them needs no mapping, normalization or bidi check:
// the few scripts mcprt can vouch for without the IDNA tables.
bool is_plainly_valid_idna(char32_t c) {
  if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') return true;
  return (c >= 0x00E0 && c <= 0x00FF && c != 0x00F7) ||       // Latin-1 lower case, no ÷
         (c >= 0x03AC && c <= 0x03CE && c != 0x03C2) ||       // Greek lower case, no final sigma
         (c >= 0x0430 && c <= 0x045F) ||                      // Cyrillic lower case
         (c >= 0x3041 && c <= 0x3096) ||                      // Hiragana
         (c >= 0x30A1 && c <= 0x30FA) ||                      // Katakana
         (c >= 0x4E00 && c <= 0x9FA5) ||                      // CJK Unified Ideographs
         (c >= 0xAC00 && c <= 0xD7A3);                        // Hangul syllables
}

// An "xn--" label: a browser decodes and validates it (UTS-46); mcprt accepts it only when
// the check above can vouch for every decoded code point.
std::optional<std::string> check_punycode_label(std::string_view label) {
  const std::string_view payload = label.substr(4);
  const std::optional<std::u32string> decoded = punycode_decode(payload);
  if (!decoded || decoded->empty()) return "\"" + std::string(label) + "\" is not valid punycode";
  bool any_non_ascii = false;
  for (char32_t c : *decoded) {
    if (!is_plainly_valid_idna(c)) {
      return "the punycode label \"" + std::string(label) +
             "\" decodes to characters mcprt cannot validate without IDNA tables";
    }
    any_non_ascii = any_non_ascii || c >= 0x80;
  }
  if (!any_non_ascii || punycode_encode(*decoded) != payload) {
    return "the punycode label \"" + std::string(label) + "\" is not in canonical form";
  }
  return std::nullopt;
}

// --- Host parser (URL Standard §3.5, special hosts). ----------------------------------
bool is_forbidden_domain_code_point(unsigned char c) {
  if (c <= 0x20 || c == 0x7F) return true;  // C0 controls, space, DELETE
  switch (c) {
    case '#':
    case '%':
    case '/':
    case ':':
    case '<':
    case '>':
    case '?':
    case '@':
    case '[':
    case '\\':
    case ']':
    case '^':
    case '|': return true;
    default: return false;
  }
}

Result<std::string> parse_host(std::string_view input) {
  if (input.front() == '[') {
    if (input.back() != ']' || input.size() < 2) {
      return failure("the host \"" + std::string(input) + "\" opens '[' but does not end with ']'");
    }
    Result<std::array<std::uint16_t, 8>> address = parse_ipv6(input.substr(1, input.size() - 2));
    if (!address) return std::move(address).error();
    return serialize_ipv6(*address);
  }
  std::string domain;
  domain.reserve(input.size());
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (input[i] == '%' && i + 2 < input.size() && hex_value(input[i + 1]) >= 0 &&
        hex_value(input[i + 2]) >= 0) {
      domain += static_cast<char>(hex_value(input[i + 1]) * 16 + hex_value(input[i + 2]));
      i += 2;
    } else {
      domain += input[i];
    }
  }
  for (char c : domain) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return failure("the host \"" + std::string(input) +
                     "\" is not ASCII: a browser would map it with IDNA (UTS-46), which mcprt "
                     "does not do; write it in punycode (xn--...)");
    }
  }
  domain = lower(domain);
  for (char c : domain) {
    if (is_forbidden_domain_code_point(static_cast<unsigned char>(c))) {
      return failure("the host \"" + std::string(input) + "\" contains a character not allowed in a host");
    }
  }
  for (std::string_view label : split_dots(domain)) {
    if (label.substr(0, 4) == "xn--") {
      if (std::optional<std::string> why = check_punycode_label(label)) return failure(*why);
    }
  }
  if (ends_in_a_number(domain)) return parse_ipv4(domain);
  return domain;
}

// --- The basic URL parser. --------------------------------------------------------------
std::string preprocess(std::string_view raw) {
  std::size_t begin = 0;
  std::size_t end = raw.size();
  while (begin < end && static_cast<unsigned char>(raw[begin]) <= 0x20) ++begin;
  while (end > begin && static_cast<unsigned char>(raw[end - 1]) <= 0x20) --end;
  std::string out;
  out.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    if (raw[i] != '\t' && raw[i] != '\n' && raw[i] != '\r') out += raw[i];
  }
  return out;
}

int default_port(std::string_view scheme) { return scheme == "https" ? 443 : 80; }

bool is_single_dot(std::string_view s) { return s == "." || lower(s) == "%2e"; }
bool is_double_dot(std::string_view s) {
  if (s.size() != 2 && s.size() != 4 && s.size() != 6) return false;
  const std::string l = lower(s);
  return l == ".." || l == ".%2e" || l == "%2e." || l == "%2e%2e";
}

class Parser {
 public:
  Parser(std::string input, const Url* base) : in_(std::move(input)), base_(base) {}

  Result<Url> run() {
    if (!detail::is_valid_utf8(in_)) return failure("it is not valid UTF-8");
    // Scheme start and scheme states.
    std::size_t k = 0;
    bool has_scheme = false;
    if (!in_.empty() && is_alpha(in_[0])) {
      while (k < in_.size() && is_scheme_char(in_[k])) ++k;
      has_scheme = k < in_.size() && in_[k] == ':';
    }
    if (!has_scheme) {
      // No scheme state: relative to the base, or nothing.
      if (!base_) return failure("it is not an absolute URL (no scheme)");
      url_.scheme = base_->scheme;
      return relative();
    }
    url_.scheme = lower(std::string_view(in_).substr(0, k));
    if (url_.scheme != "http" && url_.scheme != "https") {
      return failure("the scheme \"" + url_.scheme + "\" is not http or https");
    }
    p_ = k + 1;
    // "special relative or authority": with a base of the same scheme, "http:x" and
    // "http:/x" are relative references; otherwise any slashes (even none) lead to the
    // authority ("special authority slashes" and "ignore slashes").
    if (base_ && base_->scheme == url_.scheme && !(at(p_) == '/' && at(p_ + 1) == '/')) {
      return relative();
    }
    while (is_slash(at(p_))) ++p_;
    return authority();
  }

 private:
  int at(std::size_t i) const { return i < in_.size() ? static_cast<unsigned char>(in_[i]) : -1; }

  void copy_base_authority() {
    url_.username = base_->username;
    url_.password = base_->password;
    url_.host = base_->host;
    url_.port = base_->port;
    url_.explicit_port = base_->explicit_port;
  }

  Result<Url> relative() {
    const int c = at(p_);
    if (is_slash(c)) {
      // Relative slash state.
      if (is_slash(at(p_ + 1))) {
        p_ += 2;
        while (is_slash(at(p_))) ++p_;
        return authority();
      }
      copy_base_authority();
      ++p_;
      return path();
    }
    copy_base_authority();
    path_.clear();
    std::string_view base_path = base_->path;
    base_path.remove_prefix(1);
    for (std::string_view seg : split_on(base_path, '/')) path_.emplace_back(seg);
    url_.query = base_->query;
    url_.has_query = base_->has_query;
    if (c == '?') {
      ++p_;
      return query();
    }
    if (c == '#' || c == -1) return finish();
    url_.query.clear();
    url_.has_query = false;
    if (!path_.empty()) path_.pop_back();
    return path();
  }

  static std::vector<std::string_view> split_on(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
      const std::size_t i = s.find(sep, start);
      parts.push_back(s.substr(start, i == npos ? npos : i - start));
      if (i == npos) return parts;
      start = i + 1;
    }
  }

  Result<Url> authority() {
    std::size_t end = p_;
    while (end < in_.size() && !is_slash(at(end)) && in_[end] != '?' && in_[end] != '#') ++end;
    const std::string_view auth = std::string_view(in_).substr(p_, end - p_);
    std::string_view host_port = auth;
    // Userinfo runs to the LAST '@' of the authority; its first ':' starts the password.
    if (const std::size_t at_sign = auth.rfind('@'); at_sign != npos) {
      const std::string_view userinfo = auth.substr(0, at_sign);
      const std::size_t colon = userinfo.find(':');
      encode_into(url_.username, userinfo.substr(0, colon), in_userinfo_set);
      if (colon != npos) encode_into(url_.password, userinfo.substr(colon + 1), in_userinfo_set);
      host_port = auth.substr(at_sign + 1);
      if (host_port.empty()) return failure("there is no host after the userinfo");
    }
    // Host state: a ':' outside brackets starts the port.
    std::size_t colon = npos;
    bool inside_brackets = false;
    for (std::size_t i = 0; i < host_port.size(); ++i) {
      if (host_port[i] == ':' && !inside_brackets) {
        colon = i;
        break;
      }
      if (host_port[i] == '[') inside_brackets = true;
      if (host_port[i] == ']') inside_brackets = false;
    }
    const std::string_view host_text = host_port.substr(0, colon);
    if (host_text.empty()) return failure("the host is empty");
    Result<std::string> host = parse_host(host_text);
    if (!host) return std::move(host).error();
    url_.host = std::move(host).value();
    url_.port = default_port(url_.scheme);
    if (colon != npos) {
      const std::string_view port_text = host_port.substr(colon + 1);
      std::uint32_t port = 0;
      for (char c : port_text) {
        if (!is_digit(c)) return failure("the port \"" + std::string(port_text) + "\" is not a number");
        port = port * 10 + static_cast<std::uint32_t>(c - '0');
        if (port > 65535) return failure("the port \"" + std::string(port_text) + "\" is over 65535");
      }
      if (!port_text.empty()) {
        // A browser accepts port 0; nothing can be reached there, so it is an error here.
        if (port == 0) return failure("port 0 cannot be connected to");
        url_.port = static_cast<int>(port);
        url_.explicit_port = url_.port != default_port(url_.scheme);
      }
    }
    p_ = end;
    // Path start state.
    if (is_slash(at(p_))) ++p_;
    return path();
  }

  Result<Url> path() {
    std::string buffer;
    for (;; ++p_) {
      const int c = at(p_);
      if (c == -1 || is_slash(c) || c == '?' || c == '#') {
        const bool slash = is_slash(c);
        if (is_double_dot(buffer)) {
          if (!path_.empty()) path_.pop_back();
          if (!slash) path_.emplace_back();
        } else if (is_single_dot(buffer)) {
          if (!slash) path_.emplace_back();
        } else {
          path_.push_back(buffer);
        }
        buffer.clear();
        if (c == '?') {
          ++p_;
          url_.query.clear();
          return query();
        }
        if (c != '/' && c != '\\') return finish();
      } else {
        const char byte = static_cast<char>(c);
        encode_into(buffer, std::string_view(&byte, 1), in_path_set);
      }
    }
  }

  Result<Url> query() {
    url_.has_query = true;
    url_.query.clear();
    std::size_t end = in_.find('#', p_);
    if (end == npos) end = in_.size();
    encode_into(url_.query, std::string_view(in_).substr(p_, end - p_), in_special_query_set);
    return finish();
  }

  Result<Url> finish() {
    url_.path.clear();
    for (const std::string& seg : path_) {
      url_.path += '/';
      url_.path += seg;
    }
    if (url_.path.empty()) url_.path = "/";
    url_.userinfo = url_.username;
    if (!url_.password.empty()) url_.userinfo += ":" + url_.password;
    return std::move(url_);
  }

  std::string in_;
  const Url* base_;
  std::size_t p_ = 0;
  Url url_;
  std::vector<std::string> path_;
};

}  // namespace

std::string Url::origin() const {
  std::string out = scheme + "://" + host;
  if (port != default_port(scheme)) out += ":" + std::to_string(port);
  return out;
}

std::string Url::to_string() const {
  std::string out = scheme + "://";
  if (!userinfo.empty()) out += userinfo + "@";
  out += host;
  if (explicit_port) out += ":" + std::to_string(port);
  out += path;
  if (has_query) out += "?" + query;
  return out;
}

Result<Url> parse_http_url_checked(std::string_view text, const Url* base) {
  return Parser(preprocess(text), base).run();
}

std::optional<Url> parse_http_url(std::string_view text) {
  Result<Url> url = parse_http_url_checked(text);
  if (!url) return std::nullopt;
  return std::move(url).value();
}

std::optional<std::string> resolve_url(std::string_view base_text, std::string_view reference) {
  const std::optional<Url> base = parse_http_url(base_text);
  if (!base) return std::nullopt;
  Result<Url> url = parse_http_url_checked(reference, &*base);
  if (!url) return std::nullopt;
  return url->to_string();
}

bool same_origin(std::string_view a, std::string_view b) {
  const std::optional<Url> ua = parse_http_url(a);
  const std::optional<Url> ub = parse_http_url(b);
  return ua && ub && same_origin(*ua, *ub);
}

bool same_origin(const Url& a, const Url& b) {
  return a.scheme == b.scheme && a.host == b.host && a.port == b.port;
}

std::string form_decode(std::string_view component) {
  std::string out;
  out.reserve(component.size());
  for (std::size_t i = 0; i < component.size(); ++i) {
    const char c = component[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%' && i + 2 < component.size() && hex_value(component[i + 1]) >= 0 &&
               hex_value(component[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(component[i + 1]) * 16 + hex_value(component[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace mcprt
