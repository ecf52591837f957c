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
  // The text opens more containers than max_depth: `position` is then the offset of the
  // bracket that opened the level past it (0-based), and `message` is empty.
  bool too_deep = false;
};

// `text` as a json value, without exceptions: a discarded value (is_discarded()) when it
// is not JSON, and then `*error`, when given, says where and why. Every JSON parse of the
// core and the platforms goes through here: mcprt's own parser (core/src/jsonrpc/
// json_text.cpp), which builds the DOM nlohmann's strict parser would, several times
// faster. Text from a server or a file goes through the core's parse_untrusted_json,
// which bounds its depth (max_depth: arrays and objects nested inside each other) and
// builds on this.
inline constexpr std::size_t kNoJsonDepthLimit = static_cast<std::size_t>(-1);
json parse_json(std::string_view text, bool allow_comments = false,
                JsonSyntaxError* error = nullptr, std::size_t max_depth = kNoJsonDepthLimit);

}  // namespace mcprt
