#pragma once
// The HTTP request headers of the 2026-07-28 wire (SPEC §14): MCP-Protocol-Version,
// Mcp-Method, Mcp-Name and the `x-mcp-header` mirrors Mcp-Param-<Name>, with the value
// encoding of the Streamable HTTP transport. Pure functions: no I/O, nothing throws, no
// state; the session builds the headers and hands them to Transport::send_with
// (SendOptions::headers), the HTTP transport only sends them.
//
//   auto params = x_mcp_header_params(tool_definition);   // once per tools/list entry
//   if (!params) exclude the tool, warn with params.error().message;
//   auto headers = modern_request_headers("2026-07-28", "tools/call", call_params);
//   auto mirrors = mcp_param_headers(*params, call_params["arguments"]);
//
// VALUE ENCODING (Mcp-Name and Mcp-Param-*): a string as it is, an integer in decimal
// (also a JSON number with no fractional part, e.g. 42.0 → "42"; only within
// ±(2^53−1), the range the spec allows), a boolean as `true`/`false`. Text that is not
// "safe ASCII" — any byte outside 0x20..0x7E (so non-ASCII, control characters, tab, CR,
// LF) or a leading/trailing space — and text that itself looks like the sentinel (starts
// with `=?base64?` and ends with `?=`) is sent as `=?base64?<standard, padded base64 of
// the UTF-8 bytes>?=`. The empty string is safe ASCII and is sent as an empty value.
// Example: "Hello, 世界" → `=?base64?SGVsbG8sIOS4lueVjA==?=`.
//
// ANNOTATION RULES (a tool breaking any of them is invalid, to be excluded from the
// tools a host sees on HTTP): each `x-mcp-header` value is a non-empty RFC 9110 token
// (1*tchar: no space, colon, control or non-ASCII character), case-insensitively unique
// within the tool's inputSchema, on a property whose `type` is `string`, `integer` or
// `boolean` (a type list of one of them plus `null` is accepted; `number`, `object`,
// `array`, `null` and a missing type are not), statically reachable from the schema
// root through a chain of `properties` keys only (nested objects are fine; an annotation
// under `items`, `prefixItems`, `additionalProperties`, `allOf`/`anyOf`/`oneOf`/`not`,
// `if`/`then`/`else`, `$defs`, `dependentSchemas`, ... or on the root itself is not).
// `const`, `default`, `enum` and `examples` hold data, not schemas, and are not searched.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcprt/result.hpp"

namespace mcprt {

// One `x-mcp-header` annotation of a tool's input schema.
struct McpHeaderParam {
  std::string property;           // the annotated property's own name (last of `path`)
  std::string header;             // the annotation value: the header is Mcp-Param-<header>
  std::vector<std::string> path;  // the `properties` keys from the root to the property
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The header text of one JSON value (see VALUE ENCODING), or nullopt for null, a
// missing value, an object, an array, a fractional number or an integer outside
// ±(2^53−1) (such values are not mirrored).
std::optional<std::string> mcp_header_value(const json& value);

// The annotations of one tool definition (`inputSchema.properties...["x-mcp-header"]`),
// depth first, properties by name (json objects keep their keys sorted). A tool without
// annotations (or without an inputSchema) → empty. Invalid (see ANNOTATION RULES) →
// ErrorCode::protocol whose message names the tool, the property path (or where an unreachable
// annotation sits) and the rule, e.g. `tool "t": property "region": x-mcp-header "Bad Name" is not
// an RFC 9110 token`; data: {path: [keys]} or {at: "inputSchema/..."}.
Result<std::vector<McpHeaderParam>> x_mcp_header_params(const json& tool);

// `Mcp-Param-<header>: <value>` for each annotation whose value is present in
// `arguments` at its path and encodable (mcp_header_value); omitted otherwise (absent,
// null, object, array, fraction, integer out of range). In the order of `params`.
HeaderList mcp_param_headers(const std::vector<McpHeaderParam>& params, const json& arguments);

// `MCP-Protocol-Version: <version>`, `Mcp-Method: <method>` and, for tools/call and
// prompts/get `params.name`, for resources/read `params.uri`, `Mcp-Name: <encoded>`
// (omitted when that field is missing or not encodable).
HeaderList modern_request_headers(const std::string& version, const std::string& method,
                                  const json& params);

}  // namespace mcprt
