// WebRuntime: the loader, the manager and their tools behind the JS `createRuntime()`
// (js/index.js). One runtime = one WebExecutor + WebFetchHttpClient + WebIndexedDbStore +
// WebConsoleLogger + the manager of the last load.
// [x] discoverAndLoad({servers}): a programmatic provider over the JS object (mcpServers
//     shape), stdio unavailable, built-in file providers off
// [x] tools, callTool (AbortSignal, progress), status, reload, disconnectServer,
//     disconnectAll, tools-changed and status events, dispose
// [ ] auth storage (bearer tokens from the page), custom claim filters
//
// Protocol between C++ and js/index.js: methods take JSON strings and a call id; answers
// and events go to Module.mcprtRuntimeEvent(runtimeId, kind, callId, json) with kind
// "resolve" | "reject" | "progress" | "toolsChanged" | "status". The JS side dispatches
// them outside the wasm stack (queueMicrotask), so listeners may call back freely.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/abort.hpp"
#include "mcprt/discovery.hpp"
#include "mcprt/loader.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/tools.hpp"
#include "mcprt/web/web_console_logger.hpp"
#include "mcprt/web/web_executor.hpp"
#include "mcprt/web/web_fetch_http_client.hpp"
#include "mcprt/web/web_indexeddb_store.hpp"

EM_JS(void, mcprt_js_runtime_event, (int runtime_id, const char* kind, int call_id, const char* payload), {
  var handler = Module["mcprtRuntimeEvent"];
  if (handler) handler(runtime_id, UTF8ToString(kind), call_id, UTF8ToString(payload));
});

namespace mcprt::web {
namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// JSON text from JS, or a discarded value. Parsed over a pointer range, as the core's
// parses are: every nlohmann parser instantiation the module carries costs ~8 KB of wasm.
json parse_json(std::string_view text) { return json::parse(text.begin(), text.end(), nullptr, false); }

json error_json(const Error& e) {
  json out = {{"code", to_string(e.code)}, {"message", e.message}};
  if (e.is_wire()) out["wireCode"] = e.wire_code;
  if (!e.data.is_null()) out["data"] = e.data;
  return out;
}

json source_json(const SourceInfo& s) {
  return {{"provider", s.provider}, {"providerName", s.provider_name}, {"path", s.path},
          {"level", to_string(s.level)}};
}

json tool_json(const McpTool& tool) {
  const McpToolInfo& i = tool.info();
  return {{"name", i.name},
          {"server", i.server},
          {"tool", i.raw_name},
          {"description", i.description},
          {"inputSchema", i.input_schema},
          {"label", i.label},
          {"deferred", i.deferred},
          {"path", i.path}};
}

json state_json(const ServerState& s) {
  json out = {{"name", s.name},
              {"status", to_string(s.status)},
              {"phase", to_string(s.phase)},
              {"attempts", s.attempts},
              {"toolCount", s.tool_count},
              {"toolsFromCache", s.tools_from_cache},
              {"circuitOpen", s.circuit_open},
              {"source", source_json(s.source)},
              {"error", nullptr}};
  if (s.last_error) out["error"] = error_json(*s.last_error);
  return out;
}

LogLevel parse_level(const json& options, bool* silent) {
  *silent = false;
  auto it = options.find("logLevel");
  if (it == options.end() || !it->is_string()) return LogLevel::warn;
  const std::string v = it->get<std::string>();
  if (v == "debug") return LogLevel::debug;
  if (v == "info") return LogLevel::info;
  if (v == "error") return LogLevel::error;
  if (v == "silent") *silent = true;
  return LogLevel::warn;
}

template <class T>
T number_option(const json& options, const char* key, T fallback) {
  auto it = options.find(key);
  if (it == options.end() || !it->is_number() || it->get<double>() < 0) return fallback;
  return static_cast<T>(it->get<double>());
}

bool bool_option(const json& options, const char* key, bool fallback) {
  auto it = options.find(key);
  return it != options.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string string_option(const json& options, const char* key, std::string fallback) {
  auto it = options.find(key);
  return it != options.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

class WebRuntime {
 public:
  WebRuntime(int js_id, const std::string& options_text) : js_id_(js_id) {
    json options = parse_json(options_text);
    if (!options.is_object()) options = json::object();
    bool silent = false;
    const LogLevel level = parse_level(options, &silent);
    logger_.set_min_level(level);
    silent_ = silent;

    manager_options_.client_info.name = string_option(options, "clientName", "mcprt-web");
    manager_options_.client_info.version = string_option(options, "clientVersion", MCPRT_VERSION);
    manager_options_.cwd = "/";
    manager_options_.startup_gate = Millis(number_option<long long>(options, "startupGateMs", 250));
    manager_options_.wait_for_uncached = bool_option(options, "waitForUncached", true);
    manager_options_.default_timeout = Millis(number_option<long long>(options, "timeoutMs", 30000));
    manager_options_.default_tool_timeout = Millis(number_option<long long>(
        options, "toolTimeoutMs", manager_options_.default_tool_timeout.count()));
    source_label_ = string_option(options, "sourceName", "page");

    // cache: true (default) | false | {database, store}
    auto cache = options.find("cache");
    bool use_cache = true;
    std::string database = kDefaultIndexedDbName;
    std::string store = kDefaultIndexedDbStore;
    if (cache != options.end() && cache->is_boolean()) use_cache = cache->get<bool>();
    if (cache != options.end() && cache->is_object()) {
      database = string_option(*cache, "database", database);
      store = string_option(*cache, "store", store);
    }
    if (use_cache) store_ = std::make_unique<WebIndexedDbStore>(executor_, database, store);
  }

  ~WebRuntime() { shut_down(); }

  // Replaces the configuration: the previous manager (if any) is disconnected first.
  void discover_and_load(int call_id, const std::string& servers_text) {
    json document = parse_json(servers_text);
    if (!document.is_object()) {
      reject(call_id, Error::make(ErrorCode::invalid_argument,
                                  "discoverAndLoad: `servers` must be an object of server configs "
                                  "(the mcpServers shape)"));
      return;
    }
    servers_ = std::move(document);
    loaded_ = true;
    load(call_id);
  }

  void reload(int call_id) {
    if (!loaded_) {
      reject(call_id, Error::make(ErrorCode::invalid_argument,
                                  "reload: nothing loaded yet (call discoverAndLoad first)"));
      return;
    }
    load(call_id);
  }

  std::string tools() const {
    json out = json::array();
    if (manager_) {
      for (const auto& t : manager_->tools()) out.push_back(tool_json(*t));
    }
    return dump(out);
  }

  // name empty → every server; unknown name → null.
  std::string status(const std::string& name) const {
    if (name.empty()) {
      json out = json::array();
      if (manager_) {
        for (const auto& s : manager_->server_states()) out.push_back(state_json(s));
      }
      return dump(out);
    }
    if (!manager_) return "null";
    auto state = manager_->server_state(name);
    return state ? dump(state_json(*state)) : "null";
  }

  void call_tool(int call_id, const std::string& name, const std::string& args_text, bool progress) {
    std::shared_ptr<McpTool> tool = manager_ ? manager_->find_tool(name) : nullptr;
    if (!tool) {
      reject(call_id, Error::make(ErrorCode::invalid_argument, "callTool: no tool named \"" + name + "\""));
      return;
    }
    json args = parse_json(args_text);
    if (args.is_discarded() || !(args.is_object() || args.is_null())) {
      reject(call_id, Error::make(ErrorCode::invalid_argument,
                                  "callTool " + name + ": arguments must be a JSON object"));
      return;
    }
    if (args.is_null()) args = json::object();
    auto controller = std::make_shared<AbortController>();
    calls_[call_id] = controller;
    ToolCallOptions options;
    options.signal = controller->signal();
    if (progress) {
      options.on_progress = [this, alive = std::weak_ptr<bool>(alive_), call_id](const json& params) {
        if (!alive.expired()) emit("progress", call_id, params);
      };
    }
    tool->call(std::move(args), std::move(options),
               [this, alive = std::weak_ptr<bool>(alive_), call_id](Result<ToolResult> r) {
                 if (alive.expired()) return;
                 calls_.erase(call_id);
                 if (!r) {
                   reject(call_id, r.error());
                   return;
                 }
                 const ToolResult& t = r.value();
                 resolve(call_id, {{"content", t.content},
                                   {"structuredContent", t.structured_content},
                                   {"isError", t.is_error},
                                   {"text", t.text},
                                   {"truncated", t.truncated}});
               });
  }

  void abort_call(int call_id, const std::string& reason) {
    auto it = calls_.find(call_id);
    if (it == calls_.end()) return;
    auto controller = it->second;
    calls_.erase(it);
    controller->abort(reason.empty() ? "aborted" : reason);
  }

  void disconnect_server(int call_id, const std::string& name) {
    if (!manager_) {
      resolve(call_id, nullptr);
      return;
    }
    manager_->disconnect_server(name, [this, alive = std::weak_ptr<bool>(alive_), call_id] {
      if (!alive.expired()) resolve(call_id, nullptr);
    });
  }

  void disconnect_all(int call_id) {
    if (!manager_) {
      resolve(call_id, nullptr);
      return;
    }
    manager_->disconnect_all([this, alive = std::weak_ptr<bool>(alive_), call_id] {
      if (!alive.expired()) resolve(call_id, nullptr);
    });
  }

  // Everything stops: no event reaches JS afterwards.
  void dispose() { shut_down(); }

 private:
  void load(int call_id) {
    const int generation = ++generation_;
    drop_manager();
    DiscoveryContext ctx;
    ctx.cwd = "/";
    ctx.app_name = "mcprt";
    ctx.app_display_name = source_label_;
    LoaderOptions options;
    options.discovery.use_builtin_providers = false;
    options.discovery.stdio_available = false;
    options.discovery.extra_providers.push_back(make_programmatic_provider(
        "page", source_label_, 100, SourceInfo::Level::user, servers_, source_label_));
    options.manager = manager_options_;
    options.use_cache = store_ != nullptr;
    options.on_status = [this, alive = std::weak_ptr<bool>(alive_)](const StatusEvent& e) {
      if (!alive.expired()) emit_status(e);
    };
    ManagerServices services;
    services.executor = &executor_;
    services.http_client = &http_;
    services.cache_store = store_.get();
    services.logger = silent_ ? static_cast<Logger*>(&null_logger_) : &logger_;
    services.wall_clock = system_wall_clock();
    discover_and_load_tools(ctx, services, std::move(options),
                            [this, alive = std::weak_ptr<bool>(alive_), call_id, generation](LoadResult r) {
                              if (alive.expired()) return;
                              if (generation != generation_) {
                                // A newer load replaced this one while it ran.
                                reject(call_id, Error::make(ErrorCode::aborted,
                                                            "replaced by a newer discoverAndLoad or reload"));
                                return;
                              }
                              adopt(std::move(r), call_id);
                            });
  }

  void adopt(LoadResult r, int call_id) {
    manager_ = r.manager;
    if (manager_) {
      tools_listener_ = manager_->on_tools_changed([this, alive = std::weak_ptr<bool>(alive_)] {
        if (!alive.expired()) emit("toolsChanged", 0, nullptr);
      });
    }
    json tools = json::array();
    for (const auto& t : r.tools) tools.push_back(tool_json(*t));
    json errors = json::array();
    for (const auto& e : r.errors) {
      errors.push_back({{"path", e.path}, {"error", e.error}, {"server", e.server}});
    }
    json warnings = json::array();
    for (const auto& w : r.discovery.warnings) warnings.push_back(w.describe());
    resolve(call_id, {{"tools", tools},
                      {"errors", errors},
                      {"warnings", warnings},
                      {"connectedServers", r.connected_servers},
                      {"needsAuthServers", r.needs_auth_servers}});
    emit("toolsChanged", 0, nullptr);
  }

  void drop_manager() {
    if (!manager_) return;
    manager_->remove_listener(tools_listener_);
    auto old = std::move(manager_);
    manager_.reset();
    // Its tools vanish now; destroying it closes every connection.
    old.reset();
    emit("toolsChanged", 0, nullptr);
  }

  void shut_down() {
    if (!alive_) return;
    alive_.reset();  // every pending callback now sees an expired token
    ++generation_;
    auto calls = std::move(calls_);  // abort listeners may reach back into calls_
    calls_.clear();
    for (auto& [id, controller] : calls) controller->abort("runtime disposed");
    if (manager_) manager_->remove_listener(tools_listener_);
    manager_.reset();
    store_.reset();
  }

  void emit_status(const StatusEvent& e) {
    json out = {{"server", e.server},
                {"phase", to_string(e.phase)},
                {"toolCount", e.tool_count},
                {"source", source_json(e.source)},
                {"error", nullptr}};
    if (e.error) out["error"] = error_json(*e.error);
    emit("status", 0, out);
  }

  void resolve(int call_id, const json& value) { emit("resolve", call_id, value); }
  void reject(int call_id, const Error& error) { emit("reject", call_id, error_json(error)); }
  void emit(const char* kind, int call_id, const json& payload) {
    if (!alive_) return;
    mcprt_js_runtime_event(js_id_, kind, call_id, dump(payload).c_str());
  }

  int js_id_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool silent_ = false;
  std::string source_label_;
  WebExecutor executor_;
  WebConsoleLogger logger_;
  NullLogger null_logger_;
  WebFetchHttpClient http_{executor_};
  std::unique_ptr<WebIndexedDbStore> store_;
  ManagerOptions manager_options_;
  json servers_ = json::object();
  bool loaded_ = false;
  int generation_ = 0;
  std::shared_ptr<McpManager> manager_;
  std::uint64_t tools_listener_ = 0;
  std::map<int, std::shared_ptr<AbortController>> calls_;
};

}  // namespace mcprt::web

EMSCRIPTEN_BINDINGS(mcprt_runtime) {
  using mcprt::web::WebRuntime;
  emscripten::class_<WebRuntime>("WebRuntime")
      .constructor<int, const std::string&>()
      .function("discoverAndLoad", &WebRuntime::discover_and_load)
      .function("reload", &WebRuntime::reload)
      .function("toolsJson", &WebRuntime::tools)
      .function("statusJson", &WebRuntime::status)
      .function("callTool", &WebRuntime::call_tool)
      .function("abortCall", &WebRuntime::abort_call)
      .function("disconnectServer", &WebRuntime::disconnect_server)
      .function("disconnectAll", &WebRuntime::disconnect_all)
      .function("dispose", &WebRuntime::dispose);
}
