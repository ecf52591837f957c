#pragma once
// The loader (SPEC §7): the one call a host makes at startup.
//
//   discover_and_load_tools(ctx, services, LoaderOptions{}, [&](LoadResult r) {
//     session.registry().refresh_mcp_tools(r.tools);   // r.manager keeps them current
//     for (auto& e : r.errors) show(e.path, e.error);
//   });
//
// Discovery (discovery.hpp) → project trust → manager.connect_servers → the startup gate.
//
// Project trust (SPEC §17): discovery leaves untrusted project entries pending (listed,
// never connected). With a `trust` callback the loader asks the host about them before
// connecting anything: the callback runs on services.executor (posted, never inside
// discover_and_load_tools) with every pending server, and the host answers — at once or
// later, on the executor — through `answer`. Trusted servers are recorded in the user
// file (native_user_config_path(ctx), through ctx.fs) unless the answer says otherwise,
// then discovery runs again so they are substituted and validated like any entry; what
// stays pending is in LoadResult::discovery.pending. If every copy of `answer` is
// destroyed unanswered, nothing is trusted and the load goes on. Without a callback
// nothing is asked. A critical
// discovery failure gives no tools and one synthetic error {".mcp.json", message}; the
// host's session still starts (the result still carries an empty manager, so a later
// `/mcp reload` can connect). `done` follows the async contract (on services.executor);
// services.executor is required — without one nothing starts and `done` never runs.
// Errors: discovery errors keep their file path (and server); per-server connect/list
// failures carry the server's source path and are also logged (warn) by the loader; so
// does a server that needs authorization (also named in needs_auth_servers).

#include <functional>
#include <map>
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

// The host's answer about the pending servers it was asked about.
struct TrustAnswer {
  bool trust_folder = false;           // trust every server it was asked about
  std::map<std::string, bool> servers; // per server name: true = trust; absent/false = not
  bool remember = true;                // record the trusted ones in the user file
};
// `pending`: the untrusted project servers (name, folder, source file, transport and the
// command + args or URL as written: ProjectServer::config; describe_launch() and
// connect_time_commands() say it in one line). Call `answer` once; later calls are ignored.
using TrustCallback =
    std::function<void(const std::vector<ProjectServer>& pending, std::function<void(TrustAnswer)> answer)>;

struct LoaderOptions {
  bool enable_mcp = true;  // false: no MCP work at all, an empty result
  TrustCallback trust;     // null = pending project servers stay pending (not asked)
  DiscoveryOptions discovery;
  ManagerOptions manager;
  bool use_cache = true;   // false ignores services.cache_store
  std::function<void(const StatusEvent&)> on_status;  // connecting / connected / failed
  // Null: every discovered server connects. Otherwise only those it says yes to: the rest
  // stay in the result's discovery (sources, pending, errors) but are never started, and
  // `trust` is asked only about pending servers it says yes to. The CLI's `call` starts
  // the tool's server alone this way.
  std::function<bool(const std::string& server)> select_servers;
};

struct LoadResult {
  std::vector<std::shared_ptr<McpTool>> tools;
  std::vector<LoadError> errors;
  std::shared_ptr<McpManager> manager;  // null when enable_mcp is false
  std::vector<std::string> connected_servers;
  // Servers in ServerPhase::needs_auth at the gate (SPEC §13): each also has a LoadError
  // whose message says how to log in, and its cached tools (if any) are deferred tools.
  std::vector<std::string> needs_auth_servers;
  std::vector<std::string> exa_api_keys;
  DiscoveryResult discovery;  // .pending: the project servers that were not trusted
  // What the trust callback granted in this load (recorded or not): a host that
  // rediscovers later (`/mcp reload`) passes it as DiscoveryOptions::extra_trust.
  TrustStore granted_trust;
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
