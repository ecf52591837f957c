#pragma once
// Raw tool schemas (SPEC §12's tool path: a tools/list of 2,000 tools within 1.5× of
// Node's JSON.parse of the same bytes, native and wasm).
//
// A listed tool's inputSchema is most of a tools/list answer's bytes (80% in the
// benchmark's listing), and the runtime rarely needs it as a DOM: what the model is given
// (the web runtime's tools()) and the tool cache's file want it as text. So when asked,
// the parser checks such a schema exactly as it checks everything else (syntax, UTF-8,
// depth, number range) but keeps it as the text the server sent instead of building it:
// a placeholder json value, a binary value of subtype kRawJsonSubtype holding the text.
// JSON text never yields a binary value, so a placeholder cannot be forged by a server.
//
// Placeholders only ever stand at one place: `result.tools[*].inputSchema` of a message
// (a tools/list answer), and only where it is an object. They stay inside the core: the
// RpcPeer restores them in every message but the answers to a request that asked for them
// (RequestOptions::raw_tool_schemas), the tap gets a restored copy, ClientSession's public
// list_tools gets restored values, and a definition made shared (detail::share_definition)
// parses its schema when something first reads it.

#include <cstdint>
#include <string>
#include <string_view>

#include "mcprt/json_text.hpp"
#include "mcprt/result.hpp"

namespace mcprt::detail {

inline constexpr std::uint64_t kRawJsonSubtype = 0x6d63;  // "mc"

// A placeholder holding `text` (already checked to be one JSON value).
json make_raw_json(std::string_view text);
bool is_raw_json(const json& value);
// The text of a placeholder (empty for anything else).
std::string_view raw_json_text(const json& value);
// The value a placeholder stands for.
json parse_raw_json(const json& placeholder);

// The definition's inputSchema, when it is a placeholder, becomes its value.
void restore_raw_schema(json& definition);
// Every placeholder of a message (`result.tools[*].inputSchema`) becomes its value.
void restore_raw_tool_schemas(json& message);
// Whether a message holds a placeholder.
bool has_raw_tool_schemas(const json& message);

// `object` as value.dump(-1, ' ', false, error_handler_t::replace) writes it, but its member
// `key` written as `raw` (whatever it holds now: it is not read).
void dump_with_raw_member(const json& object, std::string_view key, std::string_view raw,
                          std::string& out);

// `value` as value.dump(-1, ' ', false, error_handler_t::replace) writes it, but each
// placeholder within its first three levels (a definition's member, or an entry's member
// in an array of them) written as the text it holds.
void dump_keeping_raw(const json& value, std::string& out);

// parse_json (no comments), with every object at `result.tools[*].inputSchema` kept as a
// placeholder. Accepts and refuses exactly what parse_json does, with the same errors.
json parse_json_keeping_raw_tool_schemas(std::string_view text, JsonSyntaxError* error,
                                         std::size_t max_depth);

}  // namespace mcprt::detail
