// WebRuntime: the loader, the manager and their tools behind the JS `createRuntime()`
// (js/index.js). One runtime = one WebExecutor + WebFetchHttpClient + WebIndexedDbStore +
// WebConsoleLogger + the manager of the last load.
// [x] discoverAndLoad({servers}): a programmatic provider over the JS object (mcpServers
//     shape), stdio unavailable, built-in file providers off
// [x] tools, callTool (AbortSignal, progress), status, reload, disconnectServer,
//     disconnectAll, tools-changed and status events, dispose
// [x] addServer / removeServer: one server connected or removed through the live manager
//     (connect_servers of that config alone, remove_server), every other connection left
//     as it is; a changed config of a known server replaces its connection, one that
//     fails validation or takes another server's endpoint is refused
// [x] the protocol tap (ManagerOptions::on_message) while JS listens
//     (Module.mcprtRuntimeListens): each message dumped once, with its server and
//     direction, to Module.mcprtRuntimeMessage
// [x] OAuth (SPEC §13): an OAuthClient over WebCrypto, WebCredentialStore (IndexedDB
//     "credentials" beside the tool cache) and WebAuthorizer (js/index.js's onAuthorize or
//     its popup) answers every http/sse server's 401; authLogin / authLogout / authStatus
//     (never a token). Not interactive unless the host gave onAuthorize (a popup opened
//     without a click is blocked): a server that wants a sign-in goes needs-auth until
//     authLogin, which then reconnects it
// [x] the host's input handlers (SPEC §15, §3.4): with js/index.js's onElicit / onSample
//     (options "elicit" / "sample": true) the manager's InputHandlers hand each request to
//     JS as an "elicit" / "sample" event whose call id is the request's; JS answers it
//     once through answerInput(id, json). `roots`: false (the default: not declared) or
//     [{uri: "file://..."}]; `protocol`: the wire for every server (default "auto")
// [x] the catalogs (SPEC §15): resources, resource templates and prompts of every server
//     (catalogJson), resources/read, prompts/get, completion/complete and
//     resources/subscribe on one server (serverRequest), unsubscribe, catalog-changed and
//     resource-updated events; tool annotations and whether they are trusted
//     (`trustedServers`), the catalog counts in status
// [x] tool search (SPEC §16): a ToolRegistry + McpSession over the manager with
//     createRuntime's `toolSearch` options (the core's index and loaded set, not JS):
//     toolCatalogJson (every tool with its summary), searchToolsJson, loadToolsJson,
//     loadedToolsJson, resetLoadedTools, toolSearchActive, setToolSearch, catalogText and
//     visibleToolsJson (what the model is given: the loaded tools and, while search is
//     active, mcp_tool_search, which callTool runs). A change of the visible set while
//     search is active is a "toolsChanged" event too
// [ ] bearer tokens from the page (AuthStorage for auth.type "bearer"), custom claim filters
//
// Protocol between C++ and js/index.js: methods take JSON strings and a call id; answers
// and events go to Module.mcprtRuntimeEvent(runtimeId, kind, callId, json) with kind
// "resolve" | "reject" | "progress" | "toolsChanged" | "status" | "elicit" | "sample"
// (the last two: a server's input request, answered by answerInput) | "catalogChanged"
// ({server, kind: CatalogKind's number}, or null when a load replaced every catalog) |
// "resourceUpdated" (a subscription's update; the call id is the subscribe call's) |
// "subscriptionEnded" (the manager ended that subscription: its error); the protocol tap's
// messages to Module.mcprtRuntimeMessage(runtimeId, server, sent, json). The JS side
// dispatches both outside the wasm stack (queueMicrotask), in order, so listeners may call
// back freely.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/json_object.hpp"
#include "mcprt/abort.hpp"
#include "mcprt/discovery.hpp"
#include "mcprt/input.hpp"
#include "mcprt/json_text.hpp"
#include "mcprt/loader.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/oauth.hpp"
#include "mcprt/session.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/tool_search.hpp"
#include "mcprt/tools.hpp"
#include "mcprt/version.hpp"
#include "mcprt/web/web_authorizer.hpp"
#include "mcprt/web/web_console_logger.hpp"
#include "mcprt/web/web_credential_store.hpp"
#include "mcprt/web/web_crypto.hpp"
#include "mcprt/web/web_executor.hpp"
#include "mcprt/web/web_fetch_http_client.hpp"
#include "mcprt/web/web_indexeddb_store.hpp"

EM_JS(void, mcprt_js_runtime_event, (int runtime_id, const char* kind, int call_id, const char* payload), {
  var handler = Module["mcprtRuntimeEvent"];
  if (handler) handler(runtime_id, UTF8ToString(kind), call_id, UTF8ToString(payload));
});

// The protocol tap's messages (while JS listens): the message as it is, not copied into an
// event object (a tools/list answer may be megabytes).
// clang-format off
EM_JS(bool, mcprt_js_runtime_listens, (int runtime_id), {
  var listens = Module["mcprtRuntimeListens"];
  return !!(listens && listens(runtime_id));
});
EM_JS(void, mcprt_js_runtime_message, (int runtime_id, const char* server, bool sent, const char* message), {
  var handler = Module["mcprtRuntimeMessage"];
  if (handler) handler(runtime_id, UTF8ToString(server), sent, UTF8ToString(message));
});
// clang-format on

namespace mcprt::web {
namespace {

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The objects below are filled field by field: an initializer list ({{"key", value}, ...})
// builds a temporary array per pair and costs several times the code (SPEC §12's size
// budget; nlohmann keeps object keys sorted either way, so the JSON text is the same).

json error_json(const Error& e) {
  json out = json::object();
  out["code"] = to_string(e.code);
  out["message"] = e.message;
  if (e.is_wire()) out["wireCode"] = e.wire_code;
  if (!e.data.is_null()) out["data"] = e.data;
  return out;
}

json source_json(const SourceInfo& s) {
  json out = json::object();
  out["provider"] = s.provider;
  out["providerName"] = s.provider_name;
  out["path"] = s.path;
  out["level"] = to_string(s.level);
  return out;
}

// `object_text` (a JSON object) with `"key": value_text` added last.
std::string with_member(std::string object_text, const char* key, std::string_view value_text) {
  object_text.pop_back();  // '}'
  if (object_text.size() > 1) object_text += ',';
  object_text += '"';
  object_text += key;
  object_text += "\":";
  object_text += value_text;
  object_text += '}';
  return object_text;
}

// A tool as JS sees it, inputSchema last: the schema goes out as SharedJson writes it, so a
// schema the server listed is the text it sent, never parsed in the module (SPEC §12).
std::string tool_text(const McpTool& tool) {
  const McpToolInfo& i = tool.info();
  json out = json::object();
  out["name"] = i.name;
  out["server"] = i.server;
  out["tool"] = i.raw_name;
  out["description"] = i.description;
  out["label"] = i.label;
  out["deferred"] = i.deferred;
  out["path"] = i.path;
  out["annotations"] = tool.annotations();
  out["annotationsTrusted"] = i.annotations_trusted;
  return with_member(dump(out), "inputSchema", i.input_schema.dump());
}

json state_json(const ServerState& s) {
  json out = json::object();
  out["name"] = s.name;
  out["status"] = to_string(s.status);
  out["phase"] = to_string(s.phase);
  out["attempts"] = s.attempts;
  out["toolCount"] = s.tool_count;
  out["toolsFromCache"] = s.tools_from_cache;
  out["resourceCount"] = s.resource_count;
  out["resourceTemplateCount"] = s.resource_template_count;
  out["promptCount"] = s.prompt_count;
  out["catalogsRefreshing"] = s.catalogs_refreshing;
  out["circuitOpen"] = s.circuit_open;
  out["source"] = source_json(s.source);
  out["error"] = s.last_error ? error_json(*s.last_error) : json(nullptr);
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

// (A `const char*` fallback: a std::string argument was built at each call site.)
std::string string_option(const json& options, const char* key, const char* fallback) {
  auto it = options.find(key);
  return it != options.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// `key` of `options`, null when absent.
json member_or_null(const json& options, const char* key) {
  auto it = options.find(key);
  return it != options.end() ? *it : json(nullptr);
}

// What auth.status() shows of a server: never a token, a secret or a code.
json auth_status_json(const OAuthStatus& s) {
  json out = json::object();
  out["server"] = s.server;
  out["url"] = s.url;
  out["signedIn"] = (s.has_access_token && !s.expired) || s.has_refresh_token;
  out["issuer"] = s.issuer;
  out["resource"] = s.resource;
  out["clientId"] = s.client_id;
  out["clientSource"] = s.client_source;
  out["grant"] = to_string(s.grant);
  out["hasAccessToken"] = s.has_access_token;
  out["hasRefreshToken"] = s.has_refresh_token;
  out["expiresAt"] = s.expires_at_unix_ms ? json(*s.expires_at_unix_ms) : json(nullptr);
  out["expired"] = s.expired;
  out["scopes"] = s.scopes;
  return out;
}

// createRuntime's `toolSearch` ({mode, threshold, tokenBudget}; js/index.js turns the
// "auto" | "on" | "off" shorthand into that and checks it).
ToolSearchOptions tool_search_options(const json& value) {
  ToolSearchOptions out;
  if (!value.is_object()) return out;
  if (auto mode = parse_tool_search_mode(string_option(value, "mode", "auto"))) out.mode = *mode;
  // (long long: the instantiation the other options use.)
  out.auto_tool_threshold = static_cast<std::size_t>(number_option<long long>(
      value, "threshold", static_cast<long long>(out.auto_tool_threshold)));
  out.auto_token_budget =
      static_cast<std::size_t>(number_option<long long>(value, "tokenBudget", 0));
  return out;
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
    logger_.set_host(js_id_);
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
    // Servers whose tool annotations the host trusts (annotationsTrusted).
    if (auto it = options.find("trustedServers"); it != options.end() && it->is_array()) {
      for (const auto& name : *it) {
        if (name.is_string()) manager_options_.tools.trusted_servers.push_back(name.get<std::string>());
      }
    }
    manager_options_.protocol = string_option(options, "protocol", "auto");
    // In a page a CORS refusal of the probe's new headers and a dead server are the same
    // opaque TypeError: the probe reads it as a 2025 server (SPEC §14), initialize then
    // tells which it was.
    manager_options_.probe_network_failure_means_legacy = true;
    // Always installed (a manager outlives a later onMessage); nothing is built or copied
    // unless JS listens.
    manager_options_.on_message = [this, alive = std::weak_ptr<bool>(alive_)](
                                      const std::string& server, MessageDirection direction,
                                      const json& message) {
      if (!alive.expired() && mcprt_js_runtime_listens(js_id_)) {
        mcprt_js_runtime_message(js_id_, server.c_str(), direction == MessageDirection::send,
                                 dump(message).c_str());
      }
    };
    install_input_handlers(options);

    // cache: true (default) | false | {database, store}
    auto cache = options.find("cache");
    bool use_cache = true;
    std::string database = kDefaultIndexedDbName;
    std::string store = kDefaultIndexedDbStore;
    if (cache != options.end() && cache->is_boolean()) use_cache = cache->get<bool>();
    if (cache != options.end() && cache->is_object()) {
      database = string_option(*cache, "database", database.c_str());
      store = string_option(*cache, "store", store.c_str());
    }
    if (use_cache) store_ = std::make_unique<WebIndexedDbStore>(executor_, database, store);

    // credentials: {database, store} (default the tool cache's database, store
    // "credentials"); they persist whatever `cache` says.
    std::string credential_db = database;
    std::string credential_store = kDefaultCredentialStore;
    if (auto c = options.find("credentials"); c != options.end() && c->is_object()) {
      credential_db = string_option(*c, "database", credential_db.c_str());
      credential_store = string_option(*c, "store", credential_store.c_str());
    }
    credentials_ = std::make_unique<WebCredentialStore>(executor_, credential_db, credential_store);
    authorizer_ = std::make_unique<WebAuthorizer>(
        executor_, string_option(options, "redirectUri", ""), js_id_);
    OAuthClientOptions oauth;
    oauth.executor = &executor_;
    oauth.http = &http_;
    oauth.crypto = &crypto_;
    oauth.store = credentials_.get();
    oauth.authorizer = authorizer_.get();
    oauth.logger = silent_ ? static_cast<Logger*>(&null_logger_) : &logger_;
    oauth.interactive = bool_option(options, "interactiveAuth", false);
    oauth.login_hint = [](const std::string& server) {
      return "sign in with runtime.auth.login(\"" + server + "\")";
    };
    oauth.client_metadata_url = string_option(options, "clientMetadataUrl", "");
    oauth.client_name =
        string_option(options, "oauthClientName", manager_options_.client_info.name.c_str());
    oauth.client_uri = string_option(options, "clientUri", "");
    oauth.application_type = string_option(options, "applicationType", "web");
    oauth.authorize_timeout =
        Millis(number_option<long long>(options, "authorizeTimeoutMs", 300000));
    oauth_ = std::make_unique<OAuthClient>(std::move(oauth));

    session_ = std::make_unique<McpSession>(
        registry_, silent_ ? static_cast<Logger*>(&null_logger_) : &logger_,
        tool_search_options(member_or_null(options, "toolSearch")));
    // What the model sees changed without the manager's tools changing (a search loaded
    // tools, loadTools, resetLoadedTools). With search inactive the registry follows the
    // manager, whose own event covers it.
    registry_.on_changed([this] {
      if (session_ && session_->tool_search_active()) emit("toolsChanged", 0, nullptr);
    });
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
    return manager_ ? tools_text(manager_->tools()) : "[]";
  }

  // A JSON array of tool_text.
  template <class Tools>
  static std::string tools_text(const Tools& tools) {
    std::string out = "[";
    for (const auto& t : tools) {
      if (out.size() > 1) out += ',';
      out += tool_text(*t);
    }
    out += ']';
    return out;
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

  // An MCP tool by its name (a deferred one is loaded first, as when the model calls it
  // by name: SPEC §16), or a tool of the registry (mcp_tool_search).
  void call_tool(int call_id, const std::string& name, const std::string& args_text, bool progress) {
    std::shared_ptr<McpTool> mcp_tool = manager_ ? manager_->find_tool(name) : nullptr;
    ToolPtr tool = mcp_tool;
    if (mcp_tool && session_->tool_search_active() && !registry_.contains(name)) {
      session_->load_tools({name});
    }
    if (!tool) tool = registry_.find(name);
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
                 json out = json::object();
                 out["content"] = t.content;
                 out["structuredContent"] = t.structured_content;
                 out["isError"] = t.is_error;
                 out["text"] = t.text;
                 out["truncated"] = t.truncated;
                 if (t.error_code) out["errorCode"] = to_string(*t.error_code);
                 resolve(call_id, out);
               });
  }

  // --- tool search (SPEC §16) ---

  bool tool_search_active() const { return session_->tool_search_active(); }

  // New options ({mode, threshold, tokenBudget}), applied at once; the visible set may
  // change either way, so JS hears of it.
  void set_tool_search(const std::string& options_text) {
    session_->set_tool_search(tool_search_options(parse_json(options_text)));
    emit("toolsChanged", 0, nullptr);
  }

  // [{name, server, summary, loaded}] of every MCP tool, sorted by name.
  std::string tool_catalog() const {
    json out = json::array();
    if (!manager_) return dump(out);
    for (const ToolCatalogEntry& e : session_->catalog()) {
      json entry = json::object();
      entry["name"] = e.name;
      entry["server"] = e.server;
      entry["summary"] = e.summary;
      entry["loaded"] = e.loaded;
      out.push_back(std::move(entry));
    }
    return dump(out);
  }

  std::string catalog_text() const { return manager_ ? session_->catalog_text() : std::string(); }

  // The hits of `query` (keywords or "select:a,b"), best first, without loading them:
  // [{name, server, match, score, summary}].
  std::string search_tools(const std::string& query, int limit) const {
    json out = json::array();
    if (!manager_) return dump(out);
    for (const ToolSearchHit& hit : session_->search_tools(query, limit > 0 ? limit : 0).hits) {
      std::shared_ptr<McpTool> tool = manager_->find_tool(hit.name);
      json entry = json::object();
      entry["name"] = hit.name;
      entry["server"] = tool ? tool->info().server : std::string();
      entry["match"] = to_string(hit.match);
      entry["score"] = hit.score;
      entry["summary"] = tool ? summarize_description(tool->info().description) : std::string();
      out.push_back(std::move(entry));
    }
    return dump(out);
  }

  // Loads the tools named in the JSON array `names_text`; answers the names that are no
  // MCP tool.
  std::string load_tools(const std::string& names_text) {
    json names = parse_json(names_text);
    std::vector<std::string> list;
    if (names.is_array()) {
      for (const auto& n : names) {
        if (n.is_string()) list.push_back(n.get<std::string>());
      }
    }
    return dump(json(session_->load_tools(list)));
  }

  std::string loaded_tools() const { return dump(json(session_->loaded_tools())); }

  void reset_loaded_tools() { session_->reset_loaded_tools(); }

  // What the model is given: every registered tool, sorted by name. MCP tools as tools()
  // shows them; a tool of the runtime's own (mcp_tool_search) as {name, description,
  // inputSchema}.
  std::string visible_tools() const {
    std::string out = "[";
    for (const ToolPtr& tool : registry_.tools()) {
      if (out.size() > 1) out += ',';
      std::shared_ptr<McpTool> mcp_tool = manager_ ? manager_->find_tool(tool->name()) : nullptr;
      if (mcp_tool) {
        out += tool_text(*mcp_tool);
        continue;
      }
      json entry = json::object();
      entry["name"] = tool->name();
      entry["description"] = tool->description();
      entry["inputSchema"] = tool->input_schema();
      out += dump(entry);
    }
    out += ']';
    return out;
  }

  void abort_call(int call_id, const std::string& reason) {
    auto it = calls_.find(call_id);
    if (it == calls_.end()) return;
    auto controller = it->second;
    calls_.erase(it);
    controller->abort(reason.empty() ? "aborted" : reason);
  }

  // The catalog of CatalogKind `kind` (0 resources, 1 resource templates, 2 prompts) as
  // [{server, fromCache, definition}] — the definition as the server listed it, untrusted:
  // js/index.js picks the members it shows. Resources also say whether their server takes
  // resources/subscribe (`subscribable`).
  std::string catalog(int kind) const {
    json out = json::array();
    if (!manager_ || kind < 0 || kind > 2) return dump(out);
    std::string last_server;
    bool last_subscribable = false;
    for (const CatalogEntry& e : manager_->catalog(static_cast<CatalogKind>(kind))) {
      json entry = json::object();
      entry["server"] = e.server;
      entry["fromCache"] = e.from_cache;
      entry["definition"] = e.definition.get();
      if (kind == 0) {
        if (e.server != last_server) {
          last_server = e.server;
          last_subscribable = can_subscribe(e.server);
        }
        entry["subscribable"] = last_subscribable;
      }
      out.push_back(std::move(entry));
    }
    return dump(out);
  }

  // One request to one server (js/index.js names the server; a resource URI without one
  // goes to the server that offers it): "read" {uri} (resources/read), "prompt" {name,
  // arguments} (prompts/get), "complete" {ref, argument, value, context}
  // (completion/complete) resolve with the raw MCP result and abortCall aborts them;
  // "subscribe" {uri} resolves with {id, server} once the server took the subscription,
  // whose updates are "resourceUpdated" events of this call id until unsubscribe(id), or
  // until a "subscriptionEnded" event of this call id (the server refused it again after a
  // reconnect; McpManager::subscribe_resource).
  void server_request(int call_id, const std::string& method, std::string server,
                      const std::string& params_text) {
    json params = parse_json(params_text);
    if (!manager_ || !params.is_object()) {
      reject(call_id, Error::make(ErrorCode::invalid_argument,
                                  manager_ ? "the request is not a JSON object"
                                           : "nothing loaded (call discoverAndLoad first)"));
      return;
    }
    const std::string uri = string_option(params, "uri", "");
    const bool by_uri = method == "read" || method == "subscribe";
    if (server.empty() && by_uri) server = manager_->server_for_resource(uri);
    if (server.empty()) {
      reject(call_id, Error::make(ErrorCode::invalid_argument,
                                  by_uri ? "no server offers the resource \"" + uri + "\""
                                         : method + ": no server given"));
      return;
    }
    auto alive = std::weak_ptr<bool>(alive_);
    if (method == "subscribe") {
      auto id = std::make_shared<std::uint64_t>(0);
      *id = manager_->subscribe_resource(
          server, uri,
          [this, alive, call_id, server](const json& update) {
            if (alive.expired()) return;
            json out = update.is_object() ? update : json::object();
            out["server"] = server;
            emit("resourceUpdated", call_id, out);
          },
          [this, alive, call_id, server, id](Status s) {
            if (alive.expired()) return;
            if (!s) return reject(call_id, s.error());
            json out = json::object();
            out["id"] = *id;
            out["server"] = server;
            resolve(call_id, out);
          },
          [this, alive, call_id](const Error& e) {
            if (!alive.expired()) emit("subscriptionEnded", call_id, error_json(e));
          });
      return;
    }
    auto controller = std::make_shared<AbortController>();
    calls_[call_id] = controller;
    CallOptions options;
    options.signal = controller->signal();
    auto done = [this, alive, call_id](Result<json> r) {
      if (alive.expired()) return;
      calls_.erase(call_id);
      if (!r) return reject(call_id, r.error());
      resolve(call_id, r.value());
    };
    if (method == "prompt") {
      manager_->get_prompt(server, string_option(params, "name", ""),
                           member_or_null(params, "arguments"), std::move(options), std::move(done));
    } else if (method == "complete") {
      manager_->complete(server, member_or_null(params, "ref"), string_option(params, "argument", ""),
                         string_option(params, "value", ""), member_or_null(params, "context"),
                         std::move(options), std::move(done));
    } else {
      manager_->read_resource(server, uri, std::move(options), std::move(done));
    }
  }

  // Ends a subscription by the id serverRequest("subscribe") resolved with (js/index.js
  // forgets its ids when a load replaces the manager).
  void unsubscribe(double id) {
    if (manager_) manager_->unsubscribe_resource(static_cast<std::uint64_t>(id));
  }

  // js/index.js's own warnings, through the runtime's logger: its level, its secret
  // masking (WebConsoleLogger), the page's log function or the console.
  void warn(const std::string& message) {
    if (!silent_) logger_.warn(message);
  }

  void disconnect_server(int call_id, const std::string& name) {
    if (!manager_) {
      resolve(call_id, nullptr);
      return;
    }
    manager_->disconnect_server(name, manager_done(call_id));
  }

  // One server more, a known one again (a disconnected or failed one reconnects), or a
  // known one with a changed config (its connection is replaced): discovered with the
  // others (substitution, validation, one endpoint one server), then connected alone; the
  // other servers' connections are left as they are. A config that does not pass is
  // refused and the server keeps the one it had. js/index.js loads (nothing) first.
  void add_server(int call_id, const std::string& name, const std::string& config_text) {
    if (!manager_) {  // (js/index.js loads first)
      reject(call_id, Error::make(ErrorCode::invalid_argument, "nothing loaded"));
      return;
    }
    // Not an object: discovery refuses it below, naming the server.
    json config = parse_json(config_text);
    json& servers = server_map();
    json& entry = servers[name];  // null when the server is new
    json old = std::move(entry);
    const bool replace = !old.is_null() && dump(old) != dump(config);
    entry = std::move(config);
    auto found = discover_servers_for_load(discovery_context(), discovery_options());
    std::string refused;
    for (const LoadError& e : found.errors) {
      if (e.server == name) refused = e.error;
    }
    for (const ShadowedServer& twin : found.discovery.shadowed) {
      // One endpoint, one connection: it lost to another entry, or would take the endpoint
      // of a server the manager has.
      const bool lost = twin.name == name;
      if (lost || (twin.shadowed_by == name && manager_->server_state(twin.name))) {
        refused = "Server \"";
        refused.append(name).append("\" has the same endpoint as \"");
        refused.append(lost ? twin.shadowed_by : twin.name).append("\"");
      }
    }
    if (!refused.empty()) {
      if (old.is_null()) {
        servers.erase(name);
      } else {
        servers[name] = std::move(old);
      }
      reject(call_id, Error::make(ErrorCode::invalid_config, refused));
      return;
    }
    register_oauth_servers(found.discovery.configs);
    // None when it is disabled: kept, nothing connected.
    std::vector<ServerConfig> configs;
    for (ServerConfig& c : found.discovery.configs) {
      if (c.name == name) configs.push_back(std::move(c));
    }
    // The old connection goes at once (its session closes in the background).
    if (replace) manager_->remove_server(name);
    // If a newer load drops the manager first, this never runs; js/index.js rejects the
    // call then. js/index.js reads the answer from the server's state (status, tools).
    manager_->connect_servers(std::move(configs),
                              [this, alive = std::weak_ptr<bool>(alive_), call_id](GateResult) {
                                if (!alive.expired()) resolve(call_id, nullptr);
                              });
  }

  // Forgets the server (its config too: a reload does not bring it back) and closes it. An
  // entry it shadowed (the same endpoint under another name) connects in its place, as a
  // reload would connect it; the call resolves once that one has settled too.
  void remove_server(int call_id, const std::string& name) {
    std::set<std::string> twins;
    if (manager_) {
      for (const ShadowedServer& twin :
           discover_servers_for_load(discovery_context(), discovery_options()).discovery.shadowed) {
        if (twin.shadowed_by == name) twins.insert(twin.name);
      }
    }
    server_map().erase(name);
    if (oauth_servers_.erase(name)) oauth_->remove_server(name);
    if (!manager_) {
      resolve(call_id, nullptr);
      return;
    }
    auto found = discover_servers_for_load(discovery_context(), discovery_options());
    std::vector<ServerConfig> freed;
    for (const ServerConfig& c : found.discovery.configs) {
      if (twins.count(c.name) != 0 && !manager_->server_state(c.name)) freed.push_back(c);
    }
    if (freed.empty()) return manager_->remove_server(name, manager_done(call_id));
    register_oauth_servers(found.discovery.configs);
    manager_->remove_server(name);
    manager_->connect_servers(std::move(freed), [this, alive = std::weak_ptr<bool>(alive_), call_id](GateResult) {
      if (!alive.expired()) resolve(call_id, nullptr);
    });
  }

  void disconnect_all(int call_id) {
    if (!manager_) {
      resolve(call_id, nullptr);
      return;
    }
    manager_->disconnect_all(manager_done(call_id));
  }

  // A sign-in now (the user step through onAuthorize or the popup), then a reconnect of
  // the server so that it leaves needs-auth; resolves with its auth status.
  void auth_login(int call_id, const std::string& name) {
    auth_change(call_id, name, "auth.login", &OAuthClient::login, /*answer_status=*/true);
  }

  // Forgets the server's tokens and reconnects it (it then shows needs-auth).
  void auth_logout(int call_id, const std::string& name) {
    auth_change(call_id, name, "auth.logout", &OAuthClient::logout, /*answer_status=*/false);
  }

  void auth_change(int call_id, const std::string& name, const char* what,
                   void (OAuthClient::*change)(const std::string&, std::function<void(Status)>),
                   bool answer_status) {
    if (!oauth_) {
      reject(call_id, Error::make(ErrorCode::invalid_argument,
                                  std::string(what) + ": the runtime was disposed"));
      return;
    }
    (oauth_.get()->*change)(name, [this, alive = std::weak_ptr<bool>(alive_), call_id, name,
                                   answer_status](Status s) {
      if (alive.expired()) return;
      if (!s) {
        reject(call_id, s.error());
        return;
      }
      after_auth_change(name, [this, call_id, name, answer_status] {
        if (answer_status) return resolve_auth_status(call_id, name);
        resolve(call_id, nullptr);
      });
    });
  }

  // name empty → every http/sse server of the last load, in name order; else that one
  // (null when the runtime does not know it).
  void auth_status(int call_id, const std::string& name) {
    if (!oauth_) {
      resolve(call_id, name.empty() ? json::array() : json(nullptr));
      return;
    }
    if (!name.empty()) {
      if (oauth_servers_.count(name) == 0) {
        resolve(call_id, nullptr);
        return;
      }
      resolve_auth_status(call_id, name);
      return;
    }
    auto names =
        std::make_shared<std::vector<std::string>>(oauth_servers_.begin(), oauth_servers_.end());
    collect_auth_status(call_id, names, std::make_shared<json>(json::array()));
  }

  // JS's answer to an "elicit" or "sample" event (js/index.js checks its shape first):
  // elicit {action, content?}; sample {result} or {error}. An unknown or answered id does
  // nothing.
  void answer_input(int input_id, const std::string& answer_text) {
    json answer = parse_json(answer_text);
    if (!answer.is_object()) answer = json::object();
    auto it = inputs_.find(input_id);
    if (it == inputs_.end()) return;
    PendingInput pending = std::move(it->second);
    inputs_.erase(it);
    if (pending.elicit) {
      const std::string action = string_option(answer, "action", "decline");
      ElicitAnswer a = ElicitAnswer::decline();
      if (action == "accept") {
        auto content = answer.find("content");
        a = ElicitAnswer::accept_with(content != answer.end() && content->is_object() ? *content
                                                                                       : json::object());
      } else if (action == "cancel") {
        a = ElicitAnswer::cancel();
      }
      pending.elicit(std::move(a));
      return;
    }
    auto result = answer.find("result");
    if (result != answer.end() && result->is_object()) {
      pending.sample(*result);
    } else {
      pending.sample(
          Error::make(ErrorCode::invalid_argument,
                      string_option(answer, "error", "the sampling handler gave no result")));
    }
  }

  // Everything stops: no event reaches JS afterwards.
  void dispose() { shut_down(); }

 private:
  // The manager's InputHandlers and roots from createRuntime's options. A handler only
  // when JS has one (a capability is declared only then); the requests wait in
  // inputs_ until answer_input.
  void install_input_handlers(const json& options) {
    if (bool_option(options, "elicit", false)) {
      manager_options_.input.elicit = [this, alive = std::weak_ptr<bool>(alive_)](
                                          const Elicitation& e, ElicitReply reply) {
        if (alive.expired()) return reply(ElicitAnswer::cancel());
        const int id = next_input_++;
        inputs_[id].elicit = std::move(reply);
        json out = json::object();
        out["server"] = e.server;
        out["message"] = e.message;
        if (e.mode == Elicitation::Mode::url) {
          out["mode"] = "url";
          out["url"] = e.url;
          if (!e.elicitation_id.empty()) out["elicitationId"] = e.elicitation_id;
        } else {
          out["mode"] = "form";
          out["requestedSchema"] = e.requested_schema;
        }
        emit("elicit", id, out);
      };
    }
    if (bool_option(options, "sample", false)) {
      manager_options_.input.sample = [this, alive = std::weak_ptr<bool>(alive_)](
                                          const SamplingRequest& r, SampleReply reply) {
        if (alive.expired()) return reply(Error::make(ErrorCode::closed, "the runtime was disposed"));
        const int id = next_input_++;
        inputs_[id].sample = std::move(reply);
        json out = json::object();
        out["server"] = r.server;
        out["params"] = r.params;
        emit("sample", id, out);
      };
    }
    // roots: false / absent = not declared (a page has no file root of its own); a list of
    // file:// URIs, which js/index.js turned into paths.
    ServerConfig::Roots roots;
    roots.declared = false;
    if (auto it = options.find("rootPaths"); it != options.end() && it->is_array()) {
      roots.declared = true;
      for (const auto& path : *it) {
        if (path.is_string()) roots.directories.push_back(path.get<std::string>());
      }
    }
    manager_options_.roots = std::move(roots);
  }

  // Whether `server` is connected and its capabilities say `resources.subscribe`.
  bool can_subscribe(const std::string& server) const {
    std::shared_ptr<ClientSession> session = manager_->connection(server);
    if (!session) return false;
    const json& capabilities = session->server().capabilities;
    auto resources = capabilities.find("resources");
    if (resources == capabilities.end() || !resources->is_object()) return false;
    auto subscribe = resources->find("subscribe");
    return subscribe != resources->end() && subscribe->is_boolean() && subscribe->get<bool>();
  }

  // The server map inside servers_ (the mcpServers shape or the bare map).
  json& server_map() {
    auto it = servers_.find("mcpServers");
    if (it == servers_.end()) return servers_;
    if (!it->is_object()) *it = json::object();
    return *it;
  }

  DiscoveryContext discovery_context() const {
    DiscoveryContext ctx;
    ctx.cwd = "/";
    ctx.app_name = "mcprt";
    ctx.app_display_name = source_label_;
    return ctx;
  }

  DiscoveryOptions discovery_options() const {
    DiscoveryOptions d;
    d.use_builtin_providers = false;
    d.stdio_available = false;
    d.extra_providers.push_back(make_programmatic_provider(
        "page", source_label_, 100, SourceInfo::Level::user, servers_, source_label_));
    return d;
  }

  // A manager callback that resolves `call_id`. It never runs if a newer load drops the
  // manager first: js/index.js rejects such calls when it starts a load.
  std::function<void()> manager_done(int call_id) {
    return [this, alive = std::weak_ptr<bool>(alive_), call_id] {
      if (!alive.expired()) resolve(call_id, nullptr);
    };
  }

  void load(int call_id) {
    const int generation = ++generation_;
    drop_manager();
    DiscoveryContext ctx = discovery_context();
    LoaderOptions options;
    options.discovery = discovery_options();
    options.manager = manager_options_;
    options.use_cache = store_ != nullptr;
    options.on_status = [this, alive = std::weak_ptr<bool>(alive_)](const StatusEvent& e) {
      if (!alive.expired()) emit_status(e);
    };
    register_oauth_servers(discover_servers_for_load(ctx, options.discovery).discovery.configs);
    ManagerServices services;
    services.executor = &executor_;
    services.http_client = &http_;
    services.cache_store = store_.get();
    services.auth_storage = oauth_.get();
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
      catalog_listener_ = manager_->on_catalog_changed(
          [this, alive = std::weak_ptr<bool>(alive_)](const std::string& server, CatalogKind kind) {
            if (alive.expired()) return;
            json out = json::object();
            out["server"] = server;
            out["kind"] = static_cast<int>(kind);
            emit("catalogChanged", 0, out);
          });
    }
    // After the listener above: the tools-changed event reaches JS before the session's
    // refresh changes the registry.
    session_->bind(manager_);
    json errors = json::array();
    for (const auto& e : r.errors) {
      errors.push_back(json_object({{"path", e.path}, {"error", e.error}, {"server", e.server}}));
    }
    json warnings = json::array();
    for (const auto& w : r.discovery.warnings) warnings.push_back(w.describe());
    const json rest = json_object({{"errors", errors},
                                   {"warnings", warnings},
                                   {"connectedServers", r.connected_servers},
                                   {"needsAuthServers", r.needs_auth_servers}});
    emit_text("resolve", call_id, with_member(dump(rest), "tools", tools_text(r.tools)));
    emit("toolsChanged", 0, nullptr);
    emit("catalogChanged", 0, nullptr);  // what the servers listed before the listener
  }

  // The OAuth client answers for every http/sse server with its config's oauth settings.
  // The loader discovers on its own; this discovery of the same (programmatic) source
  // comes first so that the settings are there before the first request.
  void register_oauth_servers(const std::vector<ServerConfig>& configs) {
    std::set<std::string> names;
    for (const ServerConfig& config : configs) {
      if (config.type == TransportType::stdio) continue;
      oauth_->set_server(OAuthServer::from_config(config));
      names.insert(config.name);
    }
    for (const std::string& old : oauth_servers_) {
      if (names.count(old) == 0) oauth_->remove_server(old);
    }
    oauth_servers_ = std::move(names);
  }

  // After a login or logout: the server reconnects (with the new tokens, or to show that
  // it needs a sign-in) before `then` runs; a server the manager does not have skips that.
  void after_auth_change(const std::string& name, std::function<void()> then) {
    if (!manager_ || !manager_->server_state(name)) {
      then();
      return;
    }
    manager_->reconnect_server(
        name, [alive = std::weak_ptr<bool>(alive_), then = std::move(then)](Status) {
          if (!alive.expired()) then();  // the outcome shows in status() and the status events
        });
  }

  void resolve_auth_status(int call_id, const std::string& name) {
    oauth_->status(name,
                   [this, alive = std::weak_ptr<bool>(alive_), call_id](Result<OAuthStatus> r) {
                     if (alive.expired()) return;
                     if (!r)
                       reject(call_id, r.error());
                     else
                       resolve(call_id, auth_status_json(*r));
                   });
  }

  // One status() after another into `out`, then resolves the array.
  void collect_auth_status(int call_id, std::shared_ptr<std::vector<std::string>> names,
                           std::shared_ptr<json> out) {
    if (out->size() == names->size() || !oauth_) {
      resolve(call_id, *out);
      return;
    }
    const std::string name = (*names)[out->size()];
    oauth_->status(name, [this, alive = std::weak_ptr<bool>(alive_), call_id, names,
                          out](Result<OAuthStatus> r) {
      if (alive.expired()) return;
      if (!r) {
        reject(call_id, r.error());
        return;
      }
      out->push_back(auth_status_json(*r));
      collect_auth_status(call_id, names, out);
    });
  }

  void drop_manager() {
    if (!manager_) return;
    manager_->remove_listener(tools_listener_);
    manager_->remove_listener(catalog_listener_);
    session_->bind(nullptr);  // the model's tools go with the manager's (the session holds it too)
    auto old = std::move(manager_);
    manager_.reset();
    // Its tools, catalogs and subscriptions vanish now; destroying it closes every connection.
    old.reset();
    emit("toolsChanged", 0, nullptr);
    emit("catalogChanged", 0, nullptr);
  }

  void shut_down() {
    if (!alive_) return;
    alive_.reset();  // every pending callback now sees an expired token
    ++generation_;
    auto calls = std::move(calls_);  // abort listeners may reach back into calls_
    calls_.clear();
    for (auto& [id, controller] : calls) controller->abort("runtime disposed");
    if (manager_) {
      manager_->remove_listener(tools_listener_);
      manager_->remove_listener(catalog_listener_);
    }
    if (session_) session_->unbind();
    manager_.reset();
    // Requests still with JS: their sessions are gone, and a reply after that is ignored.
    inputs_.clear();
    oauth_.reset();  // after the manager, whose transports ask it for tokens
    authorizer_.reset();
    credentials_.reset();
    store_.reset();
  }

  void emit_status(const StatusEvent& e) {
    json out = json::object();
    out["server"] = e.server;
    out["phase"] = to_string(e.phase);
    out["toolCount"] = e.tool_count;
    out["source"] = source_json(e.source);
    out["error"] = e.error ? error_json(*e.error) : json(nullptr);
    emit("status", 0, out);
  }

  void resolve(int call_id, const json& value) { emit("resolve", call_id, value); }
  void reject(int call_id, const Error& error) { emit("reject", call_id, error_json(error)); }
  void emit(const char* kind, int call_id, const json& payload) { emit_text(kind, call_id, dump(payload)); }
  void emit_text(const char* kind, int call_id, const std::string& payload) {
    if (!alive_) return;
    mcprt_js_runtime_event(js_id_, kind, call_id, payload.c_str());
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
  WebCrypto crypto_{executor_};
  std::unique_ptr<WebCredentialStore> credentials_;
  std::unique_ptr<WebAuthorizer> authorizer_;
  std::unique_ptr<OAuthClient> oauth_;  // declared after what it uses: destroyed first
  std::set<std::string> oauth_servers_;
  ManagerOptions manager_options_;
  // The model's view of the tools (SPEC §16): the session keeps the registry's MCP part
  // to the manager's tools (all, or the loaded ones and mcp_tool_search).
  ToolRegistry registry_{executor_};
  std::unique_ptr<McpSession> session_;  // declared after the registry: destroyed first
  json servers_ = json::object();
  bool loaded_ = false;
  int generation_ = 0;
  std::shared_ptr<McpManager> manager_;
  std::uint64_t tools_listener_ = 0;
  std::uint64_t catalog_listener_ = 0;
  std::map<int, std::shared_ptr<AbortController>> calls_;
  // Input requests JS has not answered yet, by the id of their "elicit"/"sample" event.
  int next_input_ = 1;
  // (One map for both kinds: each map type is code of its own in the module.)
  struct PendingInput {
    ElicitReply elicit;  // set for an "elicit" event
    SampleReply sample;  // set for a "sample" event
  };
  std::map<int, PendingInput> inputs_;
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
      .function("catalogJson", &WebRuntime::catalog)
      .function("serverRequest", &WebRuntime::server_request)
      .function("unsubscribe", &WebRuntime::unsubscribe)
      .function("warn", &WebRuntime::warn)
      .function("disconnectServer", &WebRuntime::disconnect_server)
      .function("addServer", &WebRuntime::add_server)
      .function("removeServer", &WebRuntime::remove_server)
      .function("disconnectAll", &WebRuntime::disconnect_all)
      .function("authLogin", &WebRuntime::auth_login)
      .function("authLogout", &WebRuntime::auth_logout)
      .function("authStatus", &WebRuntime::auth_status)
      .function("answerInput", &WebRuntime::answer_input)
      .function("toolSearchActive", &WebRuntime::tool_search_active)
      .function("setToolSearch", &WebRuntime::set_tool_search)
      .function("toolCatalogJson", &WebRuntime::tool_catalog)
      .function("catalogText", &WebRuntime::catalog_text)
      .function("searchToolsJson", &WebRuntime::search_tools)
      .function("loadToolsJson", &WebRuntime::load_tools)
      .function("loadedToolsJson", &WebRuntime::loaded_tools)
      .function("resetLoadedTools", &WebRuntime::reset_loaded_tools)
      .function("visibleToolsJson", &WebRuntime::visible_tools)
      .function("dispose", &WebRuntime::dispose);
}
