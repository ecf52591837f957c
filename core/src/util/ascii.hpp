#pragma once
// ASCII character helpers, locale-free, shared by the URL parser, redaction, header matching
// and config checks. One definition each: the sources also build as unity batches (a parent
// project's CMAKE_UNITY_BUILD; tests/package), where each file's helpers of the same name
// would collide.

#include <cstddef>
#include <string>
#include <string_view>

namespace mcprt::ascii {

inline constexpr std::size_t npos = std::string_view::npos;

inline char to_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
// RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
inline bool is_scheme_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.';
}
// 0-15 for a hex digit (either case), else -1.
inline int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  const char l = to_lower(c);
  return l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = to_lower(c);
  return out;
}

}  // namespace mcprt::ascii
