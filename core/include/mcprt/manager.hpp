#pragma once
// The manager (SPEC §5): every server's connection, its tools and its state.
//
//   McpManager manager(services, options);
//   manager.connect_servers(discovery.configs, [&](GateResult r) {
//     // after at most startup_gate (250 ms) — or earlier when every server settled —
//     // r.tools has live tools, deferred tools from the cache for servers still
//     // connecting, and r.errors the per-server failures. Servers still pending keep
//     // loading in the background and announce their tools through on_tools_changed.
//   });
//
// Single-threaded on services.executor; callbacks follow the async contract. Destroying
// the manager disconnects every server: no process, socket or timer outlives it. Tool calls
// and wait_for_connection still in flight end once with ErrorCode::closed (posted: the
// tools that wait on them may outlive the manager); no other callback runs afterwards.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/auth.hpp"
#include "mcprt/client.hpp"
#include "mcprt/config.hpp"
#include "mcprt/discovery.hpp"
#include "mcprt/platform/byte_stream.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/platform/key_value_store.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/platform/shell_runner.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/tools.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

// What the platform supplies. Only `executor` is required; a null member is a capability
// the platform lacks (the web build has no process launcher or shell runner).
struct ManagerServices {
  Executor* executor = nullptr;
  ProcessLauncher* process_launcher = nullptr;
  HttpClient* http_client = nullptr;
  AuthStorage* auth_storage = nullptr;
  ShellRunner* shell_runner = nullptr;
  KeyValueStore* cache_store = nullptr;  // null disables the tool cache
  Logger* logger = nullptr;
  EnvLookup env;                          // connect-time env-name substitution
  WallClock wall_clock;                   // cache ages; null = the system clock is unknown → no cache
  // Replaces the built-in stdio/http transports when set (ConnectServices::transport_factory):
  // tests connect to FakeServers, hosts to in-process servers. Also makes stdio configs valid.
  std::function<Result<std::unique_ptr<Transport>>(const ServerConfig&)> transport_factory;
};

struct ManagerOptions {
  ClientInfo client_info;
  std::string cwd;                        // child cwd default (and the default root)
  // The host's input handlers (elicitation, sampling) for every server (SPEC §15).
  InputHandlers input;
  // The host's roots for servers whose config has no `roots`: nullopt = the session cwd
  // (native); declared=false = no roots capability (the web build's default).
  std::optional<ServerConfig::Roots> roots;
  // Wire for servers whose config has no `protocol` (SPEC §14).
  std::string protocol = "auto";
  // The browser: an HTTP probe that meets an opaque network failure (CORS) means legacy.
  bool probe_network_failure_means_legacy = false;
  Millis startup_gate{250};
  bool wait_for_uncached = true;          // false: the gate never waits; late tools arrive via on_tools_changed
  Millis default_timeout{30000};          // servers without `timeout` (connect + list)
  // tools/call deadline for servers without `toolTimeout` (as the TS SDK and Codex):
  // progress notifications re-arm it; `toolTimeout: 0` in a server's config means none.
  Millis default_tool_timeout{60000};
  // Cap on one call whose progress keeps re-arming its deadline; 0 = no cap. A call's own
  // CallOptions::max_total_timeout wins. Not applied when the call has no deadline.
  Millis max_tool_call_total{600000};
  Millis health_interval{0};              // ping health check; 0 = off
  Millis list_changed_debounce{100};      // coalesces bursts of tools/list_changed
  int breaker_max_closes = 5;             // closes within breaker_window open the circuit
  Millis breaker_window{30000};
  ToolBuildOptions tools;
  // Optional protocol tap (a message log, a debugging UI): every JSON-RPC message a
  // server's transport sends or receives, as the parsed value, with the server's name —
  // sent when it is queued, received before it is handled. Runs on the executor inside the
  // transport's send / receive path, so it must not call back into the manager
  // synchronously (post instead); `message` is valid during the call only. Null (the
  // default): transports are not wrapped and nothing is copied.
  std::function<void(const std::string& server, MessageDirection direction, const json& message)>
      on_message;
};

enum class ConnectionStatus { connected, connecting, disconnected };
const char* to_string(ConnectionStatus status);

// Transitions (each one is a StatusEvent):
//   connecting   → connected (tools listed) | failed (connect/list failed; no retry)
//   connected    → reconnecting (transport closed or health ping failed; retry scheduled)
//                | disconnected (lost with reconnect:false)
//                | failed (lost with the circuit breaker open: circuit_open)
//   reconnecting → connected | failed (max_attempts reached)
//   failed       → connecting (connect_servers again, reconnect_server, or a
//                  wait_for_connection that tries once more)
//   connecting | reconnecting | connected
//                → needs_auth (SPEC §13: a connect, tools/list or the live transport failed
//                  with ErrorCode::needs_auth — an authorization only the user can give)
//   needs_auth   → connecting (reconnect_server after the user logged in, or
//                  connect_servers again); nothing else leaves it: no retry timer, no
//                  backoff, no circuit-breaker count, wait_for_connection fails at once
//   any          → disconnected (disconnect_server: the server's link is closed and its tools
//                  removed; a `disconnected` row stays in server_state()/server_states()
//                  until connect_servers connects it again, remove_server or
//                  disconnect_all forgets it)
//   any          → (gone) (remove_server / disconnect_all: the server is forgotten;
//                  server_state() is nullopt)
enum class ServerPhase {
  connecting,    // first connect or tools/list in flight
  connected,
  reconnecting,  // lost; a retry is scheduled or running
  disconnected,  // closed on purpose, or lost with reconnect off
  failed,        // the last attempt failed and no retry is scheduled (or the circuit opened)
  // The server wants an OAuth authorization that needs the user (a login). Its tools stay
  // listed as deferred tools (those it had, else the cache's); calling one fails at once
  // with the needs_auth error, whose message says how to log in. to_string: "needs-auth".
  needs_auth,
};
const char* to_string(ServerPhase phase);

// A server disconnected on purpose (disconnect_server) is a row with phase and status
// `disconnected`, no last_error, no tools, its source and config hash, and `since` the
// moment it was disconnected. (A server lost with reconnect off is `disconnected` too, but
// keeps the error that ended its connection.)
struct ServerState {
  std::string name;
  ServerPhase phase = ServerPhase::disconnected;
  ConnectionStatus status = ConnectionStatus::disconnected;
  std::optional<Error> last_error;
  int attempts = 0;              // connect attempts in the current outage
  TimePoint since{};             // when the phase began (executor clock)
  std::string stderr_tail;       // stdio servers: the end of stderr at the last failure
  std::size_t tool_count = 0;
  bool tools_from_cache = false;  // the server's tools are deferred tools from the cache
  std::size_t resource_count = 0;           // its entries in resources()
  std::size_t resource_template_count = 0;  // ... resource_templates()
  std::size_t prompt_count = 0;             // ... prompts()
  // Its catalogs are about to change: being listed (after the tools, on every connection)
  // or re-listed after a list_changed. One-shot hosts wait for it before printing them.
  bool catalogs_refreshing = false;
  // A tools/list_changed re-list is scheduled (debounce) or running: the tool count is
  // about to change. One-shot hosts wait for it before printing or exiting.
  bool tools_refreshing = false;
  bool circuit_open = false;
  SourceInfo source;
  std::string config_hash;
};

// A resource, resource template or prompt a server offers (SPEC §15), as it listed it:
//   resource  {uri, name, title?, description?, mimeType?, size?, annotations?, ...}
//   template  {uriTemplate, name, title?, description?, mimeType?, annotations?, ...}
//   prompt    {name, title?, description?, arguments?: [{name, description?, required?}]}
// Entries are checked only for their key (`uri`, `uriTemplate`, `name`: a string); every
// other member is the server's, unchecked: treat it as untrusted text.
struct CatalogEntry {
  std::string server;
  SharedJson definition;
  bool from_cache = false;  // from the cache entry: the server has not listed it this run
};

enum class CatalogKind { resources, resource_templates, prompts };
const char* to_string(CatalogKind kind);  // "resources", "resource templates", "prompts"

struct StatusEvent {
  std::string server;
  ServerPhase phase = ServerPhase::connecting;
  std::optional<Error> error;
  SourceInfo source;
  std::size_t tool_count = 0;
};

struct GateResult {
  std::vector<std::shared_ptr<McpTool>> tools;  // the manager's whole tool set at the gate
  std::map<std::string, Error> errors;          // servers that failed before the gate
  std::vector<std::string> connected;           // settled and connected
  std::vector<std::string> deferred;            // still connecting, served from the cache
  std::vector<std::string> pending;             // still connecting, no cache (wait_for_uncached=false)
  // In ServerPhase::needs_auth at the gate; each also has its ErrorCode::needs_auth error in
  // `errors` (the message says how to log in) and, if it had or cached any, deferred tools.
  std::vector<std::string> needs_auth;
};

class McpManager {
 public:
  McpManager(ManagerServices services, ManagerOptions options);
  ~McpManager();
  McpManager(const McpManager&) = delete;
  McpManager& operator=(const McpManager&) = delete;

  // The per-server pipeline (§5.2) for every config in parallel, then the gate (§5.4).
  // Servers already connected or pending are skipped (their state is reported as is).
  // Configs are expected to be validated; an invalid one is a per-server error.
  void connect_servers(std::vector<ServerConfig> configs, std::function<void(GateResult)> done);

  ConnectionStatus connection_status(const std::string& name) const;
  std::optional<ServerState> server_state(const std::string& name) const;
  std::vector<ServerState> server_states() const;  // sorted by name
  std::map<std::string, SourceInfo> sources() const;

  // Always sorted by name.
  const std::vector<std::shared_ptr<McpTool>>& tools() const;
  std::shared_ptr<McpTool> find_tool(const std::string& name) const;
  // The server's `instructions` (from its initialize result, or its cache entry before it
  // connects); empty when it gave none or is unknown. Untrusted server text.
  std::string instructions(const std::string& name) const;
  // The server's config as the manager runs it; null when unknown. Valid until the
  // manager's next change of its servers (connect_servers, reload, disconnect).
  const ServerConfig* server_config(const std::string& name) const;
  // The live session, or null.
  std::shared_ptr<ClientSession> connection(const std::string& name) const;

  // The catalogs (SPEC §15): every server's resources, resource templates and prompts,
  // sorted by (server, uri | uriTemplate | name). A server lists them once its tools are
  // listed, again after notifications/{resources,prompts}/list_changed and on every
  // reconnect; they are saved in its tool cache entry, so a restart shows them (from_cache)
  // before the server answers. A server without the capability has none (never an error);
  // a failed listing keeps what the server had and is a warning naming it. A server that
  // is disconnected or removed takes its entries with it.
  std::vector<CatalogEntry> resources() const;
  std::vector<CatalogEntry> resource_templates() const;
  std::vector<CatalogEntry> prompts() const;
  const std::vector<CatalogEntry>& catalog(CatalogKind kind) const;
  // The server that offers `uri`: the first (by name) that lists it as a resource, else the
  // first with a template that matches it (RFC 6570 simple expansion: each {var} matches
  // one or more characters other than '/'; {+var} / {#var} any). Empty when none does.
  std::string server_for_resource(const std::string& uri) const;

  // resources/read, prompts/get and completion/complete on `server`, sent like a tool call:
  // a server still connecting or reconnecting is waited for (within the call's deadline),
  // the deadline defaults to the server's toolTimeout, an unknown / failed / needs-auth
  // server fails at once with an error naming it. Results are the raw MCP results
  // (ClientSession::read_resource, get_prompt, complete).
  void read_resource(const std::string& server, const std::string& uri, CallOptions options,
                     std::function<void(Result<json>)> done);
  void get_prompt(const std::string& server, const std::string& name, json arguments,
                  CallOptions options, std::function<void(Result<json>)> done);
  void complete(const std::string& server, json ref, const std::string& argument,
                const std::string& value, json context, CallOptions options,
                std::function<void(Result<json>)> done);

  // A subscription to one resource of `server`: every notifications/resources/updated for
  // `uri` reaches `on_updated` (its params: {uri, title?}). It lives until
  // unsubscribe_resource or the manager's end, across reconnects (the manager subscribes
  // again on every connection). `done` gets the first subscribe's outcome (a server that
  // is not connected yet is waited for; one without `resources.subscribe` fails with
  // invalid_argument, and the subscription is then gone). Returns the subscription's id.
  //
  // After a reconnect: once the new session took the subscription again, `on_updated` gets
  // {uri, resubscribed: true}, since a change while no session was subscribed was never
  // notified (read the resource again). If the server refuses it then (a JSON-RPC error,
  // or it no longer offers subscriptions), the subscription ends and `on_ended` gets that
  // error, naming the server and the uri; a failed connection leaves it for the next one.
  // `on_ended` runs at most once, and nothing follows it; neither runs after the manager's end.
  std::uint64_t subscribe_resource(const std::string& server, const std::string& uri,
                                   std::function<void(const json& params)> on_updated,
                                   std::function<void(Status)> done = nullptr,
                                   std::function<void(const Error&)> on_ended = nullptr);
  // Ends the subscription (resources/unsubscribe once no other subscription of the same
  // server and uri is left). Unknown ids are ignored.
  void unsubscribe_resource(std::uint64_t id);

  // Completes once `name` is connected, or fails: unknown server, timeout (the server's
  // timeout), circuit open, disconnected on purpose. A disconnected server with reconnect
  // enabled is reconnected.
  //
  // A server in needs_auth fails at once with its ErrorCode::needs_auth error (no attempt:
  // nothing changes until the user logs in).
  //
  // Tool calls through tool_host() made while their server is connecting or reconnecting
  // wait the same way (the retry then runs at once instead of after its backoff), bounded
  // by the call's timeout when that is shorter than the server's, and then go to the new
  // connection; a server that is failed, circuit-open, needs-auth or down with reconnect
  // off fails the call at once.
  void wait_for_connection(const std::string& name, AbortSignal signal, std::function<void(Status)> done);
  // Closes and reconnects one server now; resets its circuit breaker. Also the way out of
  // needs_auth: a host calls it once the user logged in (`done` gets the new attempt's
  // outcome; another needs_auth error if the authorization is still missing).
  void reconnect_server(const std::string& name, std::function<void(Status)> done);
  // §5.6. `done` fires once every transport closed (each failure isolated).
  // disconnect_server leaves the server as a `disconnected` row (ServerState) until it is
  // connected again; remove_server disconnects it the same way and forgets it;
  // disconnect_all disconnects and forgets every server. None touches another server.
  void disconnect_server(const std::string& name, std::function<void()> done = nullptr);
  void remove_server(const std::string& name, std::function<void()> done = nullptr);
  void disconnect_all(std::function<void()> done = nullptr);

  // Listeners; the returned id removes them. Tools-changed fires after any change of
  // tools() (a late server, list_changed, a reconnect, a disconnect).
  std::uint64_t on_tools_changed(std::function<void()> listener);
  std::uint64_t on_status(std::function<void(const StatusEvent&)> listener);
  // Fires after any change of a catalog of `server` (listed, re-listed, from the cache,
  // gone with the server); once per kind that changed.
  std::uint64_t on_catalog_changed(
      std::function<void(const std::string& server, CatalogKind kind)> listener);
  void remove_listener(std::uint64_t id);

  // The McpToolHost the manager's tools call through (also for child sessions).
  std::shared_ptr<McpToolHost> tool_host() const;
  Executor& executor() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcprt
