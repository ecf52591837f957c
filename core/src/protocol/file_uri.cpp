#include "protocol/file_uri.hpp"

namespace mcprt::detail {
namespace {

// RFC 3986 pchar without pct-encoded: unreserved / sub-delims / ":" / "@"; plus "/" as
// the segment separator.
bool keep_in_path(unsigned char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '-':
    case '.':
    case '_':
    case '~':  // unreserved
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':  // sub-delims
    case ':':
    case '@':
    case '/':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string file_uri_from_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "file://";
  if (path.empty() || (path.front() != '/' && path.front() != '\\')) out += '/';
  for (char ch : path) {
    const auto c = static_cast<unsigned char>(ch == '\\' ? '/' : ch);
    if (keep_in_path(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
  return out;
}

std::string path_basename(std::string_view path) {
  auto is_sep = [](char c) { return c == '/' || c == '\\'; };
  while (path.size() > 1 && is_sep(path.back())) path.remove_suffix(1);
  if (path.size() == 1 && is_sep(path.front())) return "/";
  const auto pos = path.find_last_of("/\\");
  if (pos == std::string_view::npos) return std::string(path);
  return std::string(path.substr(pos + 1));
}

}  // namespace mcprt::detail
