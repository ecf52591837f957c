#pragma once
// The loader (SPEC §7): the one call a host makes at startup.
//
//   discover_and_load_tools(ctx, services, LoaderOptions{}, [&](LoadResult r) {
//     session.registry().refresh_mcp_tools(r.tools);   // r.manager keeps them current
//     for (auto& e : r.errors) show(e.path, e.error);
//   });
//
// Discovery (discovery.hpp) → manager.connect_servers → the startup gate. A critical
// discovery failure gives no tools and one synthetic error {".mcp.json", message}; the
// host's session still starts (the result still carries an empty manager, so a later
// `/mcp reload` can connect). `done` follows the async contract (on services.executor);
// services.executor is required — without one nothing starts and `done` never runs.
// Errors: discovery errors keep their file path (and server); per-server connect/list
// failures carry the server's source path and are also logged (warn) by the loader.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/manager.hpp"

namespace mcprt {

struct LoadError {
  std::string path;   // the config file, the server's source path, or ".mcp.json"
  std::string error;  // names the server when it is about one
  std::string server; // empty for file-level errors
};

struct LoaderOptions {
  bool enable_mcp = true;  // false: no MCP work at all, an empty result
  DiscoveryOptions discovery;
  ManagerOptions manager;
  bool use_cache = true;   // false ignores services.cache_store
  std::function<void(const StatusEvent&)> on_status;  // connecting / connected / failed
};

struct LoadResult {
  std::vector<std::shared_ptr<McpTool>> tools;
  std::vector<LoadError> errors;
  std::shared_ptr<McpManager> manager;  // null when enable_mcp is false
  std::vector<std::string> connected_servers;
  std::vector<std::string> exa_api_keys;
  DiscoveryResult discovery;
};

void discover_and_load_tools(const DiscoveryContext& ctx, ManagerServices services,
                             LoaderOptions options, std::function<void(LoadResult)> done);

// Discovery only, reported in the loader's error shape.
struct DiscoverServersResult {
  DiscoveryResult discovery;
  std::vector<LoadError> errors;
};
DiscoverServersResult discover_servers_for_load(const DiscoveryContext& ctx,
                                                const DiscoveryOptions& options);

}  // namespace mcprt
