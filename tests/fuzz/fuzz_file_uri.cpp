// file:// URIs for the roots a client advertises (roots/list answers the session's cwd,
// which may be any path a user or a repository chose): file_uri_from_path and
// path_basename over arbitrary bytes.
//
// Invariants:
//  - the URI starts with "file:///" and holds only RFC 3986 path characters and %XX
//    escapes (upper-case hex), so no space, '#', '?', control or non-ASCII byte survives;
//  - %XX-decoding the part after "file://" gives the path back, with '\' turned into '/'
//    and a leading '/' added when it had none;
//  - the basename has no separator unless it is exactly "/", is a suffix of the path
//    without its trailing separators, and is empty only for an empty path.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "protocol/file_uri.hpp"

namespace {

bool is_path_char(unsigned char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("-._~!$&'()*+,;=:@/").find(static_cast<char>(c)) != std::string_view::npos;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;  // lower case is not what the encoder writes
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view path = mcprt::fuzz::as_text(bytes, size);

  const std::string uri = mcprt::detail::file_uri_from_path(path);
  FUZZ_CHECK(uri.rfind("file:///", 0) == 0);
  std::string decoded;
  for (std::size_t i = 7; i < uri.size(); ++i) {
    const auto c = static_cast<unsigned char>(uri[i]);
    if (c == '%') {
      FUZZ_CHECK(i + 2 < uri.size() && hex(uri[i + 1]) >= 0 && hex(uri[i + 2]) >= 0);
      decoded += static_cast<char>(hex(uri[i + 1]) * 16 + hex(uri[i + 2]));
      i += 2;
    } else {
      FUZZ_CHECK(is_path_char(c));
      decoded += static_cast<char>(c);
    }
  }
  std::string expected(path);
  for (char& c : expected) {
    if (c == '\\') c = '/';
  }
  if (expected.empty() || expected.front() != '/') expected.insert(expected.begin(), '/');
  FUZZ_CHECK(decoded == expected);

  const std::string base = mcprt::detail::path_basename(path);
  std::string_view trimmed = path;
  while (trimmed.size() > 1 && (trimmed.back() == '/' || trimmed.back() == '\\')) trimmed.remove_suffix(1);
  if (base != "/") {
    FUZZ_CHECK(base.find_first_of("/\\") == std::string::npos);
    FUZZ_CHECK(trimmed.size() >= base.size() &&
               trimmed.compare(trimmed.size() - base.size(), base.size(), base) == 0);
  } else {
    FUZZ_CHECK(trimmed == "/" || trimmed == "\\");
  }
  FUZZ_CHECK(base.empty() == path.empty());
  return 0;
}
