// NativeHost: the native services built together, plus blocking wrappers over the loader
// (see mcprt/native/host.hpp for the checklist).
#include "mcprt/native/host.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "mcprt/native/discovery.hpp"
#include "mcprt/native/file_store.hpp"
#include "mcprt/native/file_system.hpp"
#include "mcprt/native/http_client.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "mcprt/native/shell_runner.hpp"

namespace mcprt::native {
namespace {

namespace fs = std::filesystem;

// The CLI's --config: one `{"mcpServers": …}` file instead of the built-in providers. The
// file is read again on every discovery, so `/mcp reload` sees edits.
class ConfigFileProvider final : public ConfigProvider {
 public:
  ConfigFileProvider(std::string path, FileSystem& files) : path_(std::move(path)), files_(files) {}
  std::string id() const override { return "config"; }
  std::string display_name() const override { return "config file"; }
  int priority() const override { return 1000; }
  std::vector<ParsedConfig> load(const DiscoveryContext&) const override {
    ParseOptions o;
    o.source = SourceInfo{"config", "config file", path_, SourceInfo::Level::native};
    auto text = files_.read_file(path_);
    if (!text.ok()) {
      ParsedConfig p;
      p.source = o.source;
      p.errors.push_back(ConfigError{path_, "", text.error().message, 0, 0});
      return {std::move(p)};
    }
    if (!text->has_value()) {
      ParsedConfig p;
      p.source = o.source;
      p.errors.push_back(ConfigError{path_, "", "the config file does not exist", 0, 0});
      return {std::move(p)};
    }
    return {parse_mcp_servers_json(**text, path_, o)};
  }

 private:
  std::string path_;
  FileSystem& files_;
};

}  // namespace

Millis default_timeout_from_env(Logger* logger) {
  if (const char* v = std::getenv("MCPRT_TIMEOUT_MS")) {
    char* end = nullptr;
    long long ms = std::strtoll(v, &end, 10);
    if (end != v && *end == '\0' && ms >= 0) return Millis(ms);
    if (logger) {
      logger->warn(std::string("ignoring MCPRT_TIMEOUT_MS=\"") + v +
                   "\" (not a non-negative integer)");
    }
  }
  return Millis(30000);
}

struct NativeHost::Impl {
  explicit Impl(NativeHostOptions o)
      : options(std::move(o)),
        logger(options.log),
        processes(executor, &logger),
        http(executor),
        shell(executor, &logger) {
    std::error_code ec;
    fs::path dir = options.cwd.empty() ? fs::current_path(ec) : fs::absolute(options.cwd, ec);
    cwd = dir.lexically_normal().string();
    if (cwd.size() > 1 && cwd.back() == '/') cwd.pop_back();
    if (!options.config_file.empty()) {
      config_file = fs::absolute(options.config_file, ec).lexically_normal().string();
    }
    ctx = make_native_discovery_context(cwd, files, options.app_name);
    ctx.app_display_name = options.app_display_name;
    if (options.use_cache) {
      std::string cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
      if (!cache_dir.empty()) store = std::make_unique<NativeFileStore>(cache_dir, executor);
    }
  }

  DiscoveryOptions discovery_options() {
    DiscoveryOptions o = options.loader.discovery;
    o.extra_trust.merge(granted_trust);
    if (!config_file.empty()) {
      o.use_builtin_providers = false;
      o.extra_providers.push_back(std::make_shared<ConfigFileProvider>(config_file, files));
    }
    return o;
  }

  ManagerServices services() {
    ManagerServices s;
    s.executor = &executor;
    s.process_launcher = &processes;
    s.http_client = &http;
    s.shell_runner = &shell;
    s.cache_store = store.get();
    s.auth_storage = auth.get();
    s.logger = &logger;
    s.env = native_env_lookup();
    s.wall_clock = system_wall_clock();
    return s;
  }

  bool run_until(const std::function<bool()>& pred, Millis limit) {
    return executor.run_until(pred, limit);
  }

  NativeHostOptions options;
  std::string cwd;
  std::string config_file;
  // Declared in dependency order: destroyed in reverse, the executor last.
  NativeExecutor executor;
  SpdlogLogger logger;
  NativeFileSystem files;
  NativeProcessLauncher processes;
  NativeHttpClient http;
  NativeShellRunner shell;
  std::unique_ptr<NativeFileStore> store;
  std::shared_ptr<AuthStorage> auth;  // after the manager, before the HTTP client and executor
  DiscoveryContext ctx;
  ToolRegistry registry{executor};
  std::shared_ptr<McpManager> manager;
  McpSession session{registry, &logger, options.tool_search};
  ResourceToolsBinding resource_tools{registry, options.resource_tools, &logger};
  std::unique_ptr<McpCommandController> commands;
  TrustStore granted_trust;  // what load()'s trust callback granted (recorded or not)
  bool shut_down = false;
};

NativeHost::NativeHost(NativeHostOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  if (impl_->options.make_auth_storage) impl_->auth = impl_->options.make_auth_storage(*this);
}

NativeHost::~NativeHost() {
  shutdown();
  impl_->commands.reset();
  impl_->resource_tools.unbind();
  impl_->session.unbind();
  impl_->manager.reset();
  // Let closures posted by the teardown run while everything they may touch still exists.
  impl_->executor.poll();
}

Status NativeHost::check() const {
  std::error_code ec;
  if (!fs::is_directory(impl_->cwd, ec)) {
    return Error::make(ErrorCode::invalid_argument,
                       "the working directory \"" + impl_->cwd + "\" is not a directory");
  }
  if (impl_->config_file.empty()) return {};
  auto text = impl_->files.read_file(impl_->config_file);
  if (!text.ok()) return Error::make(ErrorCode::invalid_config, text.error().message);
  if (!text->has_value()) {
    return Error::make(ErrorCode::invalid_config,
                       "cannot read config file " + impl_->config_file + ": it does not exist");
  }
  ParsedConfig parsed = parse_mcp_servers_json(**text, impl_->config_file);
  for (const auto& e : parsed.errors) {
    if (e.server.empty()) return e.to_error();  // the file itself is unusable
  }
  return {};
}

LoadResult NativeHost::load(Millis limit) {
  Impl& d = *impl_;
  LoaderOptions lo = d.options.loader;
  lo.discovery = d.discovery_options();
  lo.use_cache = lo.use_cache && d.store != nullptr;
  if (lo.manager.cwd.empty()) lo.manager.cwd = d.cwd;
  if (std::getenv("MCPRT_TIMEOUT_MS")) lo.manager.default_timeout = default_timeout_from_env(&d.logger);
  if (d.options.keep_full_results && !lo.manager.tools.spill) {
    ResultFilesOptions files = d.options.result_files;
    if (files.dir.empty()) {
      const std::string cache =
          d.options.cache_dir.empty() ? default_cache_dir() : d.options.cache_dir;
      if (!cache.empty()) files.dir = (fs::path(cache) / "results").string();
    }
    if (!files.dir.empty()) {
      lo.manager.tools.spill = make_result_files_spill(std::move(files), &d.logger);
    }
  }

  auto result = std::make_shared<std::optional<LoadResult>>();
  discover_and_load_tools(d.ctx, d.services(), std::move(lo),
                          [result](LoadResult r) { *result = std::move(r); });
  d.run_until([&] { return result->has_value(); }, limit);
  LoadResult out;
  if (result->has_value()) {
    out = **result;
  } else {
    out.errors.push_back({"", "MCP servers did not finish loading in time", ""});
  }
  d.granted_trust.merge(out.granted_trust);
  d.manager = out.manager;
  d.session.bind(d.manager);
  d.resource_tools.bind(d.manager);
  McpCommandOptions co;
  co.discover = [this] { return discover(); };
  co.fs = &d.files;
  co.user_config_path = user_config_path();
  co.trust_command = d.options.trust_command;
  co.login = d.options.login;
  d.commands = std::make_unique<McpCommandController>(d.session, std::move(co), out.discovery);
  return out;
}

DiscoveryResult NativeHost::discover() {
  return discover_servers_for_load(impl_->ctx, impl_->discovery_options()).discovery;
}

DiscoveryOptions NativeHost::discovery_options() const { return impl_->discovery_options(); }

bool NativeHost::run_until(const std::function<bool()>& pred, Millis limit) {
  return impl_->run_until(pred, limit);
}

bool NativeHost::wait(const std::function<void(std::function<void()> complete)>& op, Millis limit) {
  auto done = std::make_shared<bool>(false);
  op([done] { *done = true; });
  return impl_->run_until([done] { return *done; }, limit);
}

Result<ToolResult> NativeHost::call(const std::string& name, json arguments,
                                    HostCallOptions options) {
  if (arguments.is_null()) arguments = json::object();
  if (arguments.is_discarded()) {
    return Error::make(ErrorCode::invalid_argument,
                       "the arguments of tool \"" + name + "\" are not valid JSON");
  }
  if (!arguments.is_object()) {
    const std::string type = arguments.type_name();
    return Error::make(ErrorCode::invalid_argument, "the arguments of tool \"" + name +
                                                        "\" must be a JSON object, not " +
                                                        (type == "array" ? "an " : "a ") + type);
  }
  Impl& d = *impl_;
  AbortController abort;
  auto out = std::make_shared<std::optional<Result<ToolResult>>>();
  // Progress reaches the caller only while call() runs: a tool that ignores the abort may
  // still report after call() returned, when what on_progress refers to may be gone.
  auto listening = std::make_shared<bool>(true);
  struct StopListening {
    std::shared_ptr<bool> flag;
    ~StopListening() { *flag = false; }
  } stop_listening{listening};
  ToolCallOptions call_options;
  call_options.signal = abort.signal();
  if (options.on_progress) {
    call_options.on_progress = [listening, f = std::move(options.on_progress)](const json& p) {
      if (*listening) f(p);
    };
  }
  d.registry.call(name, std::move(arguments), std::move(call_options),
                  [out](Result<ToolResult> r) { *out = std::move(r); });

  const TimePoint deadline = d.executor.now() + options.timeout;
  std::optional<Error> stopped;
  while (!out->has_value() && !stopped) {
    const TimePoint now = d.executor.now();
    if (now >= deadline) {
      stopped = Error::make(ErrorCode::timeout,
                            "the call of tool \"" + name + "\" did not finish within " +
                                std::to_string(options.timeout.count()) + " ms; it was cancelled");
      break;
    }
    // Wake at the deadline, and every stop_check to ask `stop` while nothing happens.
    Millis slice = std::chrono::duration_cast<Millis>(deadline - now) + Millis(1);
    if (options.stop) slice = std::min(slice, options.stop_check);
    std::optional<std::string> reason;
    d.run_until(
        [&] {
          if (out->has_value()) return true;
          if (options.stop) reason = options.stop();
          return reason.has_value();
        },
        slice);
    if (reason && !out->has_value()) stopped = Error::make(ErrorCode::aborted, *reason);
  }
  if (!stopped) return std::move(**out);
  // The tool listens to the signal: its server gets notifications/cancelled, and the call
  // completes with ErrorCode::aborted (which names the server and the tool).
  abort.abort(stopped->message);
  d.run_until([&] { return out->has_value(); }, options.abort_settle);
  if (stopped->code == ErrorCode::aborted && out->has_value() && !(*out)->ok()) {
    return (*out)->error();
  }
  return *stopped;
}

void NativeHost::shutdown(Millis limit) {
  Impl& d = *impl_;
  if (d.shut_down) return;
  d.shut_down = true;
  if (!d.manager) return;
  wait([&](std::function<void()> complete) { d.manager->disconnect_all(std::move(complete)); },
       limit);
}

NativeExecutor& NativeHost::executor() { return impl_->executor; }
Logger& NativeHost::logger() { return impl_->logger; }
ManagerServices NativeHost::services() { return impl_->services(); }
const DiscoveryContext& NativeHost::discovery_context() const { return impl_->ctx; }
const std::string& NativeHost::cwd() const { return impl_->cwd; }
std::string NativeHost::user_config_path() const {
  return impl_->config_file.empty() ? native_user_config_path(impl_->ctx) : impl_->config_file;
}
ToolRegistry& NativeHost::registry() { return impl_->registry; }
McpSession& NativeHost::session() { return impl_->session; }
McpCommandController& NativeHost::commands() { return *impl_->commands; }
std::shared_ptr<McpManager> NativeHost::manager() const { return impl_->manager; }

}  // namespace mcprt::native
