#pragma once
// The MCP client session (SPEC §3.1, §3.4): one initialized connection to one server.
//
//   auto session = ClientSession::create(executor, std::move(transport), options);
//   session->connect([&](Status s) { ... });     // initialize → check version → initialized
//   session->list_tools([&](Result<std::vector<json>> tools) { ... });  // follows nextCursor
//   session->call_tool("echo", {{"message","hi"}}, CallOptions{...}, [&](Result<json> r) {...});
//
// Server requests are answered: ping → {}, roots/list → the session cwd as a file:// root,
// anything else → -32601. Progress notifications go to the CallOptions::on_progress of the
// call they belong to; every other notification (list_changed, message, cancelled, ...) is
// handed to `ClientOptions::on_notification`. `notifications/message` is also written to
// the logger (level mapped, prefixed with the server name).
//
// Errors: every Error a session reports has its message prefixed `Server "<name>": ` when
// ClientOptions::server_name is set. Codes are kept (wire errors stay ErrorCode::wire with
// their JSON-RPC code).
//
// Threading and lifetime: single-threaded on `executor`. Every callback runs on the
// executor, never inside the call that started it, and never after the session is
// destroyed (destroying the session closes the transport). The executor and the logger
// must outlive the session. Create through `create`; the session's state lives in a shared
// Impl that in-flight callbacks reach through weak references.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/abort.hpp"
#include "mcprt/input.hpp"
#include "mcprt/jsonrpc.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/result.hpp"
#include "mcprt/transport.hpp"
#include "mcprt/version.hpp"

namespace mcprt {

// The initialize-era (stateful) versions, newest first. initialize offers the first; the
// server's answer must be one of these.
inline const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> v{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return v;
}

// The stateless versions (SPEC §14: no initialize, `_meta` on every request), newest first.
inline const std::vector<std::string>& modern_protocol_versions() {
  static const std::vector<std::string> v{"2026-07-28"};
  return v;
}

// Whether `version` is one of modern_protocol_versions().
bool is_modern_protocol_version(const std::string& version);

struct ClientInfo {
  std::string name = "mcprt";
  std::string version = MCPRT_VERSION;
};

struct ClientOptions {
  ClientInfo client_info;
  // Label used in error messages and logs: `Server "<name>": ...`.
  std::string server_name;
  // Whole handshake (initialize + initialized) deadline; 0 = none. Default 30 s.
  Millis connect_timeout{30000};
  // Deadline of each tools/list page; 0 = none.
  Millis request_timeout{30000};
  // Which wire (SPEC §14): "auto" probes for the 2026-07-28 wire and falls back to
  // initialize; a modern version ("2026-07-28") speaks only that; "legacy" or a 2025-era
  // version speaks only initialize (offering that version first).
  std::string protocol = "auto";
  // A stored verdict (the protocolVersion the server's cache entry holds): with "auto", a
  // modern one connects without any probe or handshake request, a legacy one goes straight
  // to initialize. Empty = none.
  std::string prior_protocol_version;
  // The transport is HTTP: modern requests carry the MCP-Protocol-Version / Mcp-Method /
  // Mcp-Name / Mcp-Param-* headers, x-mcp-header annotations are enforced, and the probe
  // classifies HTTP answers (§14). False (stdio, memory): `_meta` only.
  bool http = false;
  // stdio probe deadline (server/discover); an unanswered probe means legacy. 0 = none.
  Millis probe_timeout{2000};
  // HTTP: a probe that fails without any HTTP answer means legacy instead of an outage.
  // For the browser, where a CORS refusal (a server that does not allow the new headers)
  // and a dead server are the same opaque TypeError; a dead server then fails initialize.
  bool probe_network_failure_means_legacy = false;
  // When the probe ended the connection (a stdio server that exits on any request before
  // initialize; in the browser, an HTTP probe refused by CORS), a new transport to the same
  // server for the initialize handshake, made once. Null = the connect fails instead.
  std::function<Result<std::unique_ptr<Transport>>()> respawn;
  // The host's handlers for elicitation and sampling; capabilities follow what is set.
  InputHandlers input;
  // Roots answered to roots/list; nullopt = the roots capability is not declared.
  std::optional<std::vector<Root>> roots;
  // Server notifications except notifications/progress (list_changed, message, ...).
  std::function<void(const std::string& method, const json& params)> on_notification;
  // The connection ended, for any reason (transport closed or failed, close() called, or
  // a failed connect closed it). Fires once, after pending requests were failed and after
  // connect's callback when the handshake was still running.
  std::function<void(const Error&)> on_close;
  // The connection went on with a new server session (a Streamable HTTP session expired and
  // the transport initialized a new one): what the server kept per session, resource
  // subscriptions above all, is gone, and what it lists may have changed (a restart).
  std::function<void()> on_session_renewed;
  Logger* logger = nullptr;
  // tools/list guard: fail after this many pages (0 = no limit).
  std::size_t max_list_pages = 1000;
};

struct ServerInfo {
  std::string protocol_version;
  json server_info;   // {name, version, ...}
  json capabilities;  // the server's capabilities object
  std::string instructions;
  // The 2026-07-28 wire: no session, `_meta` on every request (is_modern_protocol_version).
  bool modern = false;
  // How the era was settled, for logs and benchmarks: "probe" (server/discover answered
  // or a modern error), "prior" (the stored verdict), "pinned" (config), "fallback" (the
  // probe said legacy), "initialize" (legacy without probe).
  std::string era_source;
};

struct CallOptions {
  Millis timeout{0};            // per-call deadline; 0 = none
  Millis max_total_timeout{0};  // cap when progress keeps resetting the deadline
  AbortSignal signal;
  std::function<void(const json& progress_params)> on_progress;
  // The tool's definition when the session has not listed it itself (a cached tool): the
  // 2026-07-28 HTTP wire mirrors its x-mcp-header properties as Mcp-Param-* headers.
  json tool_definition;
};

class ClientSession {
 public:
  enum class State {
    idle,        // → connecting (connect)
    connecting,  // → ready (handshake ok) | closed (failure, close)
    ready,       // → closed (transport closed or close())
    closed,      // final
  };

  static std::shared_ptr<ClientSession> create(Executor& executor,
                                               std::unique_ptr<Transport> transport,
                                               ClientOptions options);
  ~ClientSession();

  // Runs the handshake: initialize (newest protocol version, roots capability,
  // client_info) → check the server's protocolVersion → notifications/initialized, all
  // under connect_timeout. On failure the transport is closed and the error names the
  // server (e.g. `Server "x": unsupported protocol version "1999-01-01" (client supports
  // 2025-11-25, ...)`). `done` fires once (posted), also when connect() is called twice
  // (invalid_argument) or close() interrupts it (closed).
  void connect(std::function<void(Status)> done);

  // tools/list, following nextCursor until absent (an empty nextCursor counts as absent).
  // Fails after max_list_pages pages or on a repeated cursor (ErrorCode::protocol), and
  // when a page's `tools` is not an array. Entries that are not objects with a string
  // `name` are dropped with a warning. Each page is one request under request_timeout;
  // `signal` aborts the page in flight. Returns the raw tool definitions.
  // Like every call below, fails with not_connected (posted) unless the session is ready.
  void list_tools(std::function<void(Result<std::vector<json>>)> done, AbortSignal signal = {});
  // list_tools as the manager reads it: a definition's inputSchema may stay the raw text
  // the server sent (checked as JSON, not yet parsed: a value only the core reads, see
  // core/src/jsonrpc/raw_json.hpp), which the manager's shared definitions parse when the
  // schema is first read. Hosts use list_tools.
  void list_tools_raw(std::function<void(Result<std::vector<json>>)> done, AbortSignal signal = {});

  // tools/call {name, arguments} (null arguments are sent as {}). The result is the raw
  // CallToolResult object (content, isError, ...). A JSON-RPC error answer is an Error
  // (wire); isError results are successes here. Timeouts, aborts and progress follow
  // CallOptions (see RpcPeer: an abort or timeout sends notifications/cancelled).
  void call_tool(const std::string& name, json arguments, CallOptions options,
                 std::function<void(Result<json>)> done);

  // resources/list, resources/templates/list and prompts/list: paged and guarded as
  // list_tools; entries without a string `uri`, `uriTemplate` or `name` are dropped with a
  // warning. A server whose capabilities lack `resources` (`prompts`) has none: an empty
  // list, and nothing is asked (with unknown capabilities, a -32601 answer is one too).
  void list_resources(std::function<void(Result<std::vector<json>>)> done, AbortSignal signal = {});
  void list_resource_templates(std::function<void(Result<std::vector<json>>)> done,
                               AbortSignal signal = {});
  void list_prompts(std::function<void(Result<std::vector<json>>)> done, AbortSignal signal = {});

  // resources/read {uri} → the raw ReadResourceResult, whose `contents` is an array (text
  // or base64 `blob` entries); on the 2026-07-28 wire the server may ask for input first
  // (MRTR, as for tools). Fails with invalid_argument when the server offers no resources.
  void read_resource(const std::string& uri, CallOptions options,
                     std::function<void(Result<json>)> done);
  // resources/subscribe / resources/unsubscribe {uri} (the server must say
  // `resources.subscribe`, else invalid_argument); notifications/resources/updated then
  // reach on_notification. On the 2026-07-28 wire there is no such request: the listen
  // stream is opened again with the uri in `resourceSubscriptions`, and subscribe succeeds
  // once the server's acknowledgement honours it (else invalid_argument).
  void subscribe_resource(const std::string& uri, std::function<void(Status)> done);
  void unsubscribe_resource(const std::string& uri, std::function<void(Status)> done);

  // prompts/get {name, arguments} → the raw GetPromptResult (its `messages` an array).
  // `arguments`: null or an object of strings (invalid_argument otherwise).
  void get_prompt(const std::string& name, json arguments, CallOptions options,
                  std::function<void(Result<json>)> done);

  // completion/complete: `ref` is {"type":"ref/prompt","name":N} or
  // {"type":"ref/resource","uri":U} (a template), `argument` and `value` the argument being
  // typed, `context` null or an object of the arguments already given. → the raw
  // CompleteResult ({completion: {values, total?, hasMore?}}, `values` an array).
  void complete(json ref, const std::string& argument, const std::string& value, json context,
                CallOptions options, std::function<void(Result<json>)> done);

  // ping → Status (an empty result object is success).
  void ping(std::function<void(Status)> done, Millis timeout = Millis(0));

  // Generic request for methods the session does not wrap.
  // Only once ready; errors (returned or passed to `done`) are prefixed like all others.
  Result<json> request(const std::string& method, json params, RequestOptions options,
                       ResponseCallback done);

  // Closes the connection; pending requests fail once with ErrorCode::closed, a running
  // connect() fails with ErrorCode::closed. Idempotent.
  void close();

  // SEP-2549 (the 2026-07-28 wire): {ttlMs, cacheScope} of the last complete tools/list
  // (a missing or negative ttlMs is 0, a missing scope "private"); null before one, and
  // always on the 2025 wire. The manager stores it with the tool cache entry.
  json tools_cache_hint() const;
  // Tool definitions this session did not list itself (a cache entry still fresh by its
  // ttlMs) made its own: the rules of a listing apply (on HTTP, a tool with invalid
  // x-mcp-header annotations is dropped with a warning) and their header parameters are
  // kept for calls. Returns the definitions kept.
  std::vector<json> adopt_tools(std::vector<json> tools);

  State state() const;
  const ServerInfo& server() const;

  const std::string& name() const;
  RpcPeer& peer();

 private:
  ClientSession(Executor& executor, std::unique_ptr<Transport> transport, ClientOptions options);
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcprt
