#include "framing/utf8.hpp"

namespace mcprt::detail {

namespace {

// sequence_at() and the length of the maximal invalid subpart to replace by one U+FFFD
// (`*bad`, on 0): the bytes up to the one at fault, at least one.
std::size_t sequence_length(std::string_view s, std::size_t i, std::size_t* bad) {
  std::size_t at = 0;
  const std::size_t n = utf8_sequence_at(s, i, &at);
  *bad = at == 0 ? 1 : at;
  return n;
}

}  // namespace

std::size_t utf8_sequence_at(std::string_view s, std::size_t i, std::size_t* at) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  *at = 0;
  if (c < 0x80) return 1;
  std::size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (std::size_t k = 1; k <= need; ++k) {
    const unsigned char l = k == 1 ? lo : 0x80;
    const unsigned char h = k == 1 ? hi : 0xBF;
    if (i + k >= s.size() || b(k) < l || b(k) > h) {
      *at = k;
      return 0;
    }
  }
  return need + 1;
}

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t bad = 0;
    const std::size_t n = sequence_length(s, i, &bad);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t bad = 0;
    const std::size_t n = sequence_length(s, i, &bad);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i += bad;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t end = max_bytes;
  // Step back over continuation bytes to the start of the sequence that straddles the cut.
  std::size_t k = end;
  while (k > 0 && end - k < 3 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) end = k;
  return s.substr(0, end);
}

}  // namespace mcprt::detail
