// The loader facade (SPEC §7): discovery → manager.connect_servers → the startup gate,
// reported as tools + {path, error} entries.
#include "mcprt/loader.hpp"

#include <exception>
#include <utility>

namespace mcprt {
namespace {

// The path a critical discovery failure is reported under (the seed's convention).
[[maybe_unused]] constexpr const char* kSyntheticErrorPath = ".mcp.json";

LoadError to_load_error(const ConfigError& e) {
  // File-level errors keep their line and column; per-server messages already name the
  // server and travel with the file as `path`.
  return LoadError{e.path, e.line > 0 ? e.describe() : e.message, e.server};
}

}  // namespace

DiscoverServersResult discover_servers_for_load(const DiscoveryContext& ctx,
                                                const DiscoveryOptions& options) {
  DiscoverServersResult out;
#if defined(__cpp_exceptions)
  // A provider's file system or a host callback may still throw (bad_alloc, a platform
  // error); it becomes a load error instead of ending the host.
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
#else
  // Built without exceptions (the web module): nothing can be caught.
  out.discovery = discover_servers(ctx, options);
#endif
  for (const auto& e : out.discovery.errors) out.errors.push_back(to_load_error(e));
  return out;
}

namespace {

// One load: discovery done, maybe waiting for the host's trust answer, then connect.
struct LoadRun : std::enable_shared_from_this<LoadRun> {
  DiscoveryContext ctx;
  ManagerServices services;
  LoaderOptions options;
  std::function<void(LoadResult)> done;
  DiscoverServersResult found;
  TrustStore granted;
  std::vector<LoadError> trust_errors;
  bool answered = false;

  void log_problems() {
    Logger* logger = services.logger;
    if (!logger) return;
    for (const auto& e : found.errors) logger->warn("MCP config: " + (e.path.empty() ? e.error : e.path + ": " + e.error));
    for (const auto& w : found.discovery.warnings) logger->warn("MCP config: " + w.describe());
  }

  bool selected(const std::string& server) const {
    return !options.select_servers || options.select_servers(server);
  }

  // The pending servers the trust callback is asked about.
  std::vector<ProjectServer> to_ask() const {
    std::vector<ProjectServer> out;
    for (const auto& p : found.discovery.pending) {
      if (selected(p.name)) out.push_back(p);
    }
    return out;
  }

  void ask_or_connect() {
    if (to_ask().empty() || !options.trust) return connect();
    // The callback runs on the executor, never inside discover_and_load_tools.
    auto self = shared_from_this();
    services.executor->post([self] { self->ask(); });
  }

  void ask() {
    // `token` tells whether the host kept `answer`: if no copy of it is left once the
    // callback returned and it was not called, nothing can answer any more, so the load
    // goes on with nothing trusted instead of waiting forever.
    auto token = std::make_shared<char>(0);
    auto self = shared_from_this();
    auto answer = [self, token](TrustAnswer a) {
      if (self->answered) return;
      self->answered = true;
      // Finish on the executor: the host may answer from inside the callback.
      self->services.executor->post([self, a = std::move(a)]() mutable { self->apply(std::move(a)); });
    };
    options.trust(to_ask(), std::move(answer));
    if (!answered && token.use_count() == 1) {
      answered = true;
      connect();
    }
  }

  void apply(TrustAnswer a) {
    std::map<std::string, std::string> grants;
    for (const auto& p : found.discovery.pending) {
      if (!selected(p.name)) continue;  // never shown to the user
      auto it = a.servers.find(p.name);
      if (a.trust_folder || (it != a.servers.end() && it->second)) grants[p.name] = p.hash;
    }
    if (grants.empty()) return connect();
    const std::string folder = found.discovery.project_folder;
    granted.projects[folder].insert(grants.begin(), grants.end());
    if (a.remember) {
      const std::string user_file = native_user_config_path(ctx);
      Status s = Error::make(ErrorCode::invalid_argument, "no file system to record trust in");
      if (ctx.fs) s = record_project_trust(*ctx.fs, user_file, folder, grants, /*replace=*/false);
      if (!s.ok()) {
        std::string msg = "cannot record the trust of " + folder + " (trusted for this run only): " +
                          s.error().message;
        if (services.logger) services.logger->warn("MCP trust: " + msg);
        trust_errors.push_back(LoadError{user_file, msg, ""});
      }
    }
    // Rediscover: the trusted entries now go through substitution and validation like any
    // other, and an entry changed since the question (another hash) stays pending.
    DiscoveryOptions again = options.discovery;
    again.extra_trust.merge(granted);
    found = discover_servers_for_load(ctx, again);
    log_problems();
    connect();
  }

  void connect() {
    if (!options.use_cache) services.cache_store = nullptr;
    if (options.manager.cwd.empty()) options.manager.cwd = ctx.cwd;
    auto manager = std::make_shared<McpManager>(services, options.manager);
    if (options.on_status) manager->on_status(options.on_status);

    auto result = std::make_shared<LoadResult>();
    result->errors = std::move(found.errors);
    for (auto& e : trust_errors) result->errors.push_back(std::move(e));
    result->exa_api_keys = found.discovery.exa_api_keys;
    result->discovery = std::move(found.discovery);
    result->granted_trust = granted;
    Logger* logger = services.logger;
    if (logger) {
      for (const auto& p : result->discovery.pending) {
        logger->info("MCP server \"" + p.name + "\" (" + p.config.source.path + ") is not trusted; not started");
      }
    }

    std::vector<ServerConfig> configs;
    for (const auto& c : result->discovery.configs) {
      if (selected(c.name)) configs.push_back(c);
    }
    // The callback holds the manager until the gate answered: the host has no other handle
    // on it before then.
    manager->connect_servers(
        std::move(configs), [manager, result, logger, done = std::move(done)](GateResult gate) mutable {
          LoadResult r = std::move(*result);
          r.tools = std::move(gate.tools);
          r.connected_servers = std::move(gate.connected);
          r.needs_auth_servers = std::move(gate.needs_auth);
          for (auto& [name, error] : gate.errors) {
            std::string path;
            if (auto it = r.discovery.sources.find(name); it != r.discovery.sources.end()) {
              path = it->second.path;
            }
            if (logger) {
              logger->warn(
                  "MCP server \"" + name + "\"" + (path.empty() ? "" : " (" + path + ")") +
                  (error.code == ErrorCode::needs_auth ? " needs authorization: " : " failed: ") +
                  error.message);
            }
            r.errors.push_back(LoadError{std::move(path), error.message, name});
          }
          r.manager = std::move(manager);
          done(std::move(r));
        });
  }
};

}  // namespace

void discover_and_load_tools(const DiscoveryContext& ctx, ManagerServices services,
                             LoaderOptions options, std::function<void(LoadResult)> done) {
  if (!services.executor || !done) return;  // nothing could ever complete
  Executor& executor = *services.executor;
  if (!options.enable_mcp) {
    executor.post([done = std::move(done)] { done(LoadResult{}); });
    return;
  }

  auto run = std::make_shared<LoadRun>();
  run->ctx = ctx;
  run->services = services;
  run->options = std::move(options);
  run->done = std::move(done);
  run->found = discover_servers_for_load(ctx, run->options.discovery);
  run->log_problems();
  run->ask_or_connect();
}

}  // namespace mcprt
