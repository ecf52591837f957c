#pragma once
// std::string's order (std::less<std::string>) as one out-of-line function, for the maps the
// manager fills with a key per tool (ToolSet). In the web module this file is compiled for
// speed (platform-web/CMakeLists.txt): under -Oz, libc++'s string comparison is a chain of
// calls (operator<, compare, char_traits, min, the size and pointer accessors) per key
// compared, which was a sixth of registering a 2,000-tool listing (SPEC §12's tool path).

#include <string>

namespace mcprt::detail {

struct StringOrder {
  bool operator()(const std::string& a, const std::string& b) const;
};

}  // namespace mcprt::detail
