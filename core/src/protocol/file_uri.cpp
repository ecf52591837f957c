#include "protocol/file_uri.hpp"

#include <algorithm>
#include <string>

#include "mcprt/url.hpp"

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
  std::string out = "file://";
  if (path.empty() || (path.front() != '/' && path.front() != '\\')) out += '/';
  std::string slashes(path);
  std::replace(slashes.begin(), slashes.end(), '\\', '/');
  append_percent_encoded(out, slashes, [](unsigned char c, std::size_t) { return keep_in_path(c); });
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
