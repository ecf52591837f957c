// The loader facade (SPEC §7): discovery → manager.connect_servers → the startup gate,
// reported as tools + {path, error} entries.
#include "mcprt/loader.hpp"

#include <exception>
#include <utility>

namespace mcprt {
namespace {

// The path a critical discovery failure is reported under (the seed's convention).
constexpr const char* kSyntheticErrorPath = ".mcp.json";

LoadError to_load_error(const ConfigError& e) {
  // File-level errors keep their line and column; per-server messages already name the
  // server and travel with the file as `path`.
  return LoadError{e.path, e.line > 0 ? e.describe() : e.message, e.server};
}

}  // namespace

DiscoverServersResult discover_servers_for_load(const DiscoveryContext& ctx,
                                                const DiscoveryOptions& options) {
  DiscoverServersResult out;
  try {
    out.discovery = discover_servers(ctx, options);
  } catch (const std::exception& e) {
    out.discovery = DiscoveryResult{};
    out.errors.push_back({kSyntheticErrorPath, std::string("MCP discovery failed: ") + e.what(), ""});
    return out;
  } catch (...) {
    out.discovery = DiscoveryResult{};
    out.errors.push_back({kSyntheticErrorPath, "MCP discovery failed: unknown error", ""});
    return out;
  }
  for (const auto& e : out.discovery.errors) out.errors.push_back(to_load_error(e));
  return out;
}

void discover_and_load_tools(const DiscoveryContext& ctx, ManagerServices services,
                             LoaderOptions options, std::function<void(LoadResult)> done) {
  if (!services.executor || !done) return;  // nothing could ever complete
  Executor& executor = *services.executor;
  if (!options.enable_mcp) {
    executor.post([done = std::move(done)] { done(LoadResult{}); });
    return;
  }

  DiscoverServersResult found = discover_servers_for_load(ctx, options.discovery);
  Logger* logger = services.logger;
  if (logger) {
    for (const auto& e : found.errors) logger->warn("MCP config: " + (e.path.empty() ? e.error : e.path + ": " + e.error));
    for (const auto& w : found.discovery.warnings) logger->warn("MCP config: " + w.describe());
  }

  if (!options.use_cache) services.cache_store = nullptr;
  if (options.manager.cwd.empty()) options.manager.cwd = ctx.cwd;
  auto manager = std::make_shared<McpManager>(services, options.manager);
  if (options.on_status) manager->on_status(options.on_status);

  auto result = std::make_shared<LoadResult>();
  result->errors = std::move(found.errors);
  result->exa_api_keys = found.discovery.exa_api_keys;
  result->discovery = std::move(found.discovery);

  std::vector<ServerConfig> configs = result->discovery.configs;
  // The callback holds the manager until the gate answered: the host has no other handle
  // on it before then.
  manager->connect_servers(
      std::move(configs), [manager, result, logger, done = std::move(done)](GateResult gate) mutable {
        LoadResult r = std::move(*result);
        r.tools = std::move(gate.tools);
        r.connected_servers = std::move(gate.connected);
        for (auto& [name, error] : gate.errors) {
          std::string path;
          if (auto it = r.discovery.sources.find(name); it != r.discovery.sources.end()) {
            path = it->second.path;
          }
          if (logger) {
            logger->warn("MCP server \"" + name + "\"" + (path.empty() ? "" : " (" + path + ")") +
                         " failed: " + error.message);
          }
          r.errors.push_back(LoadError{std::move(path), error.message, name});
        }
        r.manager = std::move(manager);
        done(std::move(r));
      });
}

}  // namespace mcprt
