#pragma once
// JSON text → json value, the one way the core and the platforms parse.

#include <cstddef>
#include <string>
#include <string_view>

#include "mcprt/result.hpp"

namespace mcprt {

// Where and why a text is not JSON (parse_json).
struct JsonSyntaxError {
  std::size_t position = 0;  // characters read, including the offending one
  std::string message;       // nlohmann's, which may quote the input
};

// `text` as a json value, without exceptions: a discarded value (is_discarded()) when it
// is not JSON, and then `*error`, when given, says where and why. Every JSON parse of the
// core and the platforms goes through here (in the web module that is one nlohmann parser
// instead of three). Text from a server or a file goes through the core's
// parse_untrusted_json, which bounds its depth first and builds on this.
json parse_json(std::string_view text, bool allow_comments = false, JsonSyntaxError* error = nullptr);

}  // namespace mcprt
