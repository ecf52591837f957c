#pragma once
// JSON text → json value, the one way the core and the platforms parse.

#include <cstddef>
#include <string>
#include <string_view>

#include "mcprt/result.hpp"

namespace mcprt {

// Where and why a text is not JSON (parse_json).
struct JsonSyntaxError {
  std::size_t position = 0;  // bytes read, including the offending one (at the end: size + 1)
  // "syntax error while parsing object key - unexpected '}'; expected string literal",
  // "syntax error while parsing value - invalid string: ill-formed UTF-8 byte", ...:
  // nlohmann's words, never quoting the input.
  std::string message;
};

// `text` as a json value, without exceptions: a discarded value (is_discarded()) when it
// is not JSON, and then `*error`, when given, says where and why. Every JSON parse of the
// core and the platforms goes through here: mcprt's own parser (core/src/jsonrpc/
// json_text.cpp), which builds the DOM nlohmann's strict parser would, several times
// faster. Text from a server or a file goes through the core's parse_untrusted_json,
// which bounds its depth first and builds on this.
json parse_json(std::string_view text, bool allow_comments = false, JsonSyntaxError* error = nullptr);

}  // namespace mcprt
