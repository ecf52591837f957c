#pragma once
// file:// URIs for local paths (the roots a client advertises). Platform-neutral string
// work only: no filesystem access.

#include <string>
#include <string_view>

namespace mcprt::detail {

// "/home/me/my project" → "file:///home/me/my%20project". Bytes outside RFC 3986 `pchar`
// and "/" are percent-encoded (space, %, #, ?, non-ASCII, controls, ...). A path without
// a leading "/" (e.g. "C:/work") gets one, and "\" becomes "/".
std::string file_uri_from_path(std::string_view path);

// The last component of a path, ignoring trailing separators: "/a/b/" → "b"; "/" → "/".
std::string path_basename(std::string_view path);

}  // namespace mcprt::detail
