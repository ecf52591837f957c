#pragma once
// The tool path of SPEC §12 ("tools/list of 2,000 tools: parsed and registered"), shared by
// the native benchmark (bench_tool_path.cpp) and the wasm one (bench_tool_path_wasm.cpp
// toolPathRun; both driven by bench_compare.mjs): the bytes of a tools/list answer become the
// manager's tool set by the steps the runtime takes for a listing — the transport's
// parse_untrusted_json as the RpcPeer asks for it (each tool's inputSchema checked and kept
// as its text: jsonrpc/raw_json.hpp), ClientSession's page check (an object with a string
// "name") moving each definition out of the message, and the manager's ToolSet::replace
// with the shared definitions (names assigned, McpTool objects built; the schemas are
// parsed when first read, which none of this does).

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/platform/executor.hpp"
#include "tools/tool_set.hpp"

namespace mcprt::bench {

// The registered set (null when the text is not a tools/list answer). The caller destroys
// it outside the timed part: registered tools live on in a runtime.
inline std::unique_ptr<detail::ToolSet> register_listed_tools(json message, Executor& executor) {
  auto result = message.find("result");
  if (result == message.end() || !result->is_object()) return nullptr;
  auto tools = result->find("tools");
  if (tools == result->end() || !tools->is_array()) return nullptr;
  std::vector<json> definitions;
  definitions.reserve(tools->size());
  for (json& tool : *tools) {
    auto name = tool.is_object() ? tool.find("name") : tool.end();
    if (tool.is_object() && name != tool.end() && name->is_string()) definitions.push_back(std::move(tool));
  }
  auto set = std::make_unique<detail::ToolSet>(executor, std::weak_ptr<McpToolHost>(), ToolBuildOptions{});
  set->replace("bench", nullptr, SourceInfo{}, detail::share_definitions(std::move(definitions)),
               /*deferred=*/false);
  return set;
}

// The transport's parse of a message, as the RpcPeer asks for it.
inline Result<json> parse_listing(std::string_view text) {
  detail::JsonLimits limits;
  limits.raw_tool_schemas = true;
  return detail::parse_untrusted_json(text, limits);
}

inline std::unique_ptr<detail::ToolSet> parse_and_register(std::string_view text, Executor& executor) {
  auto message = parse_listing(text);
  if (!message.ok()) return nullptr;
  return register_listed_tools(std::move(message).value(), executor);
}

}  // namespace mcprt::bench
