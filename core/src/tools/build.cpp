// build_mcp_tools (SPEC §6): every server's raw definitions → named, filtered, sorted
// McpTools. Naming runs over the exposed tools of all servers at once, so a collision
// between servers is settled the same way as one inside a server.

#include <algorithm>
#include <utility>

#include "util/sort_order.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/tools.hpp"

namespace mcprt {

namespace {

struct Candidate {
  const ServerTools* server;
  const json* definition;
  std::string raw_name;
};

McpToolInfo make_info(const Candidate& c, std::string name) {
  const json& def = *c.definition;
  McpToolInfo info;
  info.name = std::move(name);
  info.raw_name = c.raw_name;
  info.server = c.server->server;
  if (auto it = def.find("description"); it != def.end() && it->is_string()) {
    info.description = it->get<std::string>();
  }
  if (auto it = def.find("inputSchema"); it != def.end() && it->is_object()) {
    info.input_schema = *it;
  } else {
    info.input_schema = json_object({{"type", "object"}});
  }
  info.label = info.server + "/" + info.raw_name;
  info.path = "mcp:" + info.server;
  if (!c.server->source.provider_name.empty()) {
    info.path += " via " + c.server->source.provider_name;
  }
  info.deferred = c.server->deferred;
  info.definition = def;
  return info;
}

}  // namespace

std::vector<std::shared_ptr<McpTool>> build_mcp_tools(Executor& executor,
                                                      const std::vector<ServerTools>& servers,
                                                      std::weak_ptr<McpToolHost> host,
                                                      const ToolBuildOptions& options) {
  std::vector<Candidate> candidates;
  for (const auto& s : servers) {
    for (const auto& def : s.definitions) {
      // tools/list already drops nameless entries; cached or host-supplied lists might not.
      if (!def.is_object()) continue;
      auto name = def.find("name");
      if (name == def.end() || !name->is_string()) continue;
      const std::string& raw = name->get_ref<const std::string&>();
      if (s.config && !tool_passes_filters(*s.config, raw)) continue;
      candidates.push_back({&s, &def, raw});
    }
  }

  std::vector<RawToolRef> refs;
  refs.reserve(candidates.size());
  for (const auto& c : candidates) refs.push_back({c.server->server, c.raw_name});
  std::vector<std::string> names = assign_tool_names(refs, options.max_tool_name_length);

  std::vector<std::shared_ptr<McpTool>> tools;
  tools.reserve(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    McpToolInfo info = make_info(candidates[i], std::move(names[i]));
    if (info.deferred) {
      tools.push_back(std::make_shared<DeferredMcpTool>(executor, std::move(info), host,
                                                        options.max_result_bytes));
    } else {
      tools.push_back(std::make_shared<McpTool>(executor, std::move(info), host,
                                                options.max_result_bytes));
    }
  }
  detail::sort_by(tools, [](const auto& a, const auto& b) { return a->name() < b->name(); });
  return tools;
}

}  // namespace mcprt
