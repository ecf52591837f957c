#pragma once
// Reading JSON that a server (or a cache file) wrote: SPEC §17 "Bounded input".
//
// Every place where bytes from outside become a json value goes through
// parse_untrusted_json, which refuses a nesting deeper than the limit before any DOM is
// built. That bound is what keeps the rest of the core safe: nlohmann's copy, dump() and
// comparison recurse once per level, so a 66k-deep array would overflow the stack in
// whatever touched it first. Code downstream may recurse over parsed server values, but
// only because their depth is at most the limit here (plus the few levels the host's own
// wrapping adds).
//
// Nothing here throws; every error is a value whose message says what was wrong and at
// which byte (0-based, in `text`).

#include <cstddef>
#include <string>
#include <string_view>

#include "mcprt/json_text.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/result.hpp"
#include "mcprt/transport.hpp"

namespace mcprt::detail {

struct JsonLimits {
  // Arrays and objects nested inside each other; `[]` is 1 level, `{"a":[1]}` is 2.
  std::size_t max_nesting_levels = kDefaultMaxJsonNestingLevels;
  // Keep each object at result.tools[*].inputSchema as its checked raw text (raw_json.hpp).
  bool raw_tool_schemas = false;
};

// Why parse_untrusted_json refused a text (in Error::data["reason"]).
inline constexpr const char* kJsonTooDeep = "too_deep";
inline constexpr const char* kJsonInvalidUtf8 = "invalid_utf8";
inline constexpr const char* kJsonSyntax = "syntax";

// The value, or ErrorCode::protocol with data {reason, byte_offset} and one of:
//   "JSON nesting deeper than 128 levels at byte 128"   (the bracket that opened level 129)
//   "invalid UTF-8 at byte 57"                          (nlohmann rejects it in strings)
//   "not JSON at byte 0: syntax error while parsing value - invalid literal"
// The message never quotes the input (it may be anything), so it is safe to log as is.
// Depth is checked as the parser opens each container, so a text stops being built at the
// first bracket past the limit; a text broken before that point is reported as broken.
Result<json> parse_untrusted_json(std::string_view text, const JsonLimits& limits = {});

// What a shallow scan of a message that did not parse says about it: its top-level "id"
// (when it is a number, or a string without escapes that is valid UTF-8) and whether it
// has a top-level "method". Linear in the text, no recursion, no DOM; never fails (finds
// nothing on text that is not an object).
struct ShallowMessageScan {
  json id;  // null when absent or unusable
  bool has_method = false;
};
ShallowMessageScan scan_message_envelope(std::string_view text);

// What a transport does with a message it could not parse (the one code path for stdio,
// Streamable HTTP and legacy SSE): logs it at warn level —
//   `Server "x": unreadable message (130001 bytes, id 3): JSON nesting deeper than 128
//    levels at byte 128: [[[[...`
// (with the first `shown_bytes` of the text, made valid UTF-8) — and hands an
// UnreadableMessage to handlers.on_unreadable, which may close or destroy the transport.
void report_unreadable_message(std::string_view text, const Error& parse_error,
                               const std::string& prefix, Logger* logger,
                               const TransportHandlers& handlers, std::size_t shown_bytes = 200);

}  // namespace mcprt::detail
