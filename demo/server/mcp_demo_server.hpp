#pragma once
// The demo MCP server's protocol logic, independent of how bytes arrive. A front end
// (demo_server.cpp: newline JSON-RPC over stdio; later Streamable HTTP) parses or frames
// messages and hands each one to `DemoServer::handle` with a `send` callback for that
// message's answers.
//
// Implements:
//  [x] initialize (version negotiation), notifications/initialized, ping
//  [x] an optional startup delay before the initialize answer (slow-server tests)
//  [x] tools/list (one page), tools/call: echo, add, now, word_count, slow_task, fail,
//      and the front end's DemoServerOptions::extra_tools
//  [x] notifications/progress for slow_task when the call has _meta.progressToken
//  [x] notifications/cancelled (stops a running slow_task; no result is sent)
//  [x] JSON-RPC errors: -32700 parse, -32600 invalid request, -32601 unknown method,
//      -32602 invalid params / unknown tool
//  [x] resources (SPEC §15): resources/list (demo://readme text/markdown, demo://logo.png
//      image/png as a base64 blob, demo://ticker text/plain "tick N"), resources/templates/
//      list (demo://notes/{name}), resources/read (notes alpha, beta, gamma; anything else
//      is -32002 resource not found), resources/subscribe and /unsubscribe (2025 wire);
//      the ticker advances every DemoServerOptions::ticker_interval while anyone is
//      subscribed to it and each advance sends notifications/resources/updated to its
//      subscribers only
//  [x] prompts: prompts/list, prompts/get for `greet` (name, style?) and `summarize` (uri:
//      the resource embedded as a `resource` content block)
//  [x] completion/complete: ref/prompt arguments (greet.style, summarize.uri) and
//      ref/resource demo://notes/{name} (values starting with the typed prefix)
//  [ ] logging (not advertised; answered with -32601)
//  [ ] resource or prompt list changes (the lists are fixed; listChanged is advertised so
//      that clients subscribe, and nothing is ever sent)
//  [ ] JSON-RPC batches (answered with -32600; removed from MCP in 2025-06-18)
//  With DemoServerOptions::protocol (the --protocol flag):
//  [x] modern (MCP 2026-07-28, stateless): no initialize (-32601); server/discover;
//      every request's params._meta must carry io.modelcontextprotocol/protocolVersion
//      and .../clientCapabilities (-32602), the version must be 2026-07-28 (-32022 with
//      data {supported, requested}); results carry resultType "complete"; tools/list
//      carries ttlMs and cacheScope "public"; subscriptions/listen (acknowledged, then
//      notifications/tools/list_changed, each with _meta subscriptionId = the listen id);
//      the resource, prompt and completion methods as on the 2025 wire (no
//      resources/subscribe: a listen's `resourceSubscriptions` [uri...] subscribes to the
//      known ones, acknowledged as that subset, and the updates arrive on the listen
//      stream; resourcesListChanged and promptsListChanged are left out of the subset)
//  [x] MRTR for the input tools (ask_name, ask_model, list_roots, two_rounds):
//      input_required results with inputRequests and a server-issued, single-use
//      requestState; in legacy mode the same tools send elicitation/create,
//      sampling/createMessage or roots/list to the client and finish on its answer
//  [x] dual: initialize starts a 2025 session on this connection; requests whose _meta
//      names a protocolVersion (and server/discover, subscriptions/listen) are modern
//  [x] test tools (DemoServerOptions::test_tools): the input tools above, toggle_tool
//      (adds/removes `bonus`, notifies every listen stream and, in 2025, the caller's
//      connection), drop_listen (ends every listen stream abruptly), region_echo
//      (an x-mcp-header "Region" argument, checked by the HTTP front end)
//  [x] early-request policies for 2025 probe tests (exit or stay silent before
//      initialize) and a one-line log per request received (on_request)
//
// Threading: single-threaded. `handle` and every timer run on the front end's loop
// thread; `send` is called on that thread, during `handle` or later from a timer (for
// slow_task). The front end keeps each `send` callable until the request it belongs to
// is answered, cancelled, or `cancel_all()` ran.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "timer_queue.hpp"

namespace mcprt::demo {

using json = nlohmann::json;

// Which protocol eras a DemoServer answers.
enum class ProtocolMode {
  legacy,  // 2025-11-25 and older: initialize, sessions, server→client requests
  modern,  // 2026-07-28 only: stateless, _meta on every request, MRTR, listen streams
  dual,    // both: initialize starts a legacy session, modern requests are stateless
};

// Legacy mode: requests (not notifications) that arrive before initialize.
enum class EarlyRequests {
  answer,  // served as usual (the default)
  exit,    // the process exits with status 1 at once (servers that die on a probe)
  ignore,  // never answered (a probe times out)
};

inline constexpr const char* kModernProtocolVersion = "2026-07-28";
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";

inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kUnsupportedProtocolVersion = -32022;

class DemoServer;
struct DemoShared;

// A tool a front end adds to the built-in ones (the OAuth fixture's issue tracker).
// `call` gets the call's `arguments` object and returns the CallToolResult; it runs where
// DemoServer::handle runs (see Threading above).
struct ExtraTool {
  json definition;  // as tools/list shows it; its "name" must differ from the built-ins'
  std::function<json(const json& arguments)> call;
};

struct DemoServerOptions {
  std::string server_name = "mcprt-demo-server";
  std::string server_version = "0.0.0";
  // Receives one log line (no trailing newline). Null = no logging.
  std::function<void(std::string_view line)> log;
  // Log every message received and sent, not only lifecycle events and problems.
  bool verbose = false;
  // Answer initialize only after this long (0 = at once): plays a slow-starting server
  // for tests of the startup gate and the tool cache, and for startup benchmarks. Other
  // requests are answered as usual meanwhile.
  std::chrono::milliseconds startup_delay{0};
  // Listed after the built-in tools and called by name.
  std::vector<ExtraTool> extra_tools;

  // Which protocol era(s) this server answers.
  ProtocolMode protocol = ProtocolMode::legacy;
  // Lists the test tools (ask_name, ask_model, list_roots, toggle_tool, drop_listen,
  // region_echo; two_rounds for modern requests only) after the six built-in ones.
  bool test_tools = false;
  // ttlMs on modern server/discover and tools/list results.
  std::int64_t ttl_ms = 0;
  // cacheScope of the same results: "public" or "private".
  std::string cache_scope = "public";
  // Legacy mode: what to do with a request that arrives before initialize.
  EarlyRequests early_requests = EarlyRequests::answer;
  // EarlyRequests::exit: called instead of answering; should not return (the stdio front
  // end exits the process with status 1). Null = std::_Exit(1).
  std::function<void()> exit_now;
  // Called with the method of every request received (before any check). Null = none.
  std::function<void(std::string_view method)> on_request;
  // State every DemoServer of one process shares (tool list toggle, listen streams,
  // issued requestStates). Null = the DemoServer makes its own. Copying the options
  // shares it, which is how the HTTP front end gives it to every session.
  std::shared_ptr<DemoShared> shared;
  // How often demo://ticker advances while someone is subscribed to it.
  std::chrono::milliseconds ticker_interval{2000};
};

// Protocol versions this server speaks, newest first.
inline constexpr const char* kSupportedProtocolVersions[] = {"2025-11-25", "2025-06-18",
                                                             "2025-03-26", "2024-11-05"};
inline constexpr const char* kLatestProtocolVersion = "2025-11-25";

inline constexpr const char* kTickerUri = "demo://ticker";
// resources/read and resources/subscribe of a URI this server does not have (MCP
// 2025-11-25, "Error Handling" of resources).
inline constexpr int kResourceNotFound = -32002;

// slow_task limits (also published in its input schema).
inline constexpr int kSlowTaskMaxSteps = 1000;
inline constexpr int kSlowTaskMaxIntervalMs = 60000;

class DemoServer {
 public:
  using Send = std::function<void(const json& message)>;
  // Ends the answer stream of one request without a result (HTTP: the POST's response is
  // closed). A front end without such streams (stdio) passes none.
  using Close = std::function<void()>;

  // Why a modern request is refused before it is served.
  struct Refusal {
    int code = 0;
    std::string message;
    json data;  // null = no data member
  };

  explicit DemoServer(Scheduler& scheduler, DemoServerOptions options = {});
  ~DemoServer();  // cancels running tasks (they send nothing more), ends its listens
  DemoServer(const DemoServer&) = delete;
  DemoServer& operator=(const DemoServer&) = delete;

  // One raw message (a line of stdio, a POST body). Bad JSON → -32700 with id null.
  void handle_text(std::string_view text, const Send& send);
  // One parsed JSON-RPC message: a request (answered through `send`, now or later), a
  // notification (never answered) or a response (to a request this server sent a legacy
  // client for an input tool; others are ignored). `close` belongs to this message's
  // answer stream (see Close).
  void handle(const json& message, const Send& send, const Close& close = {});

  // True when `message` (a request) is served on the 2026-07-28 wire by a server in
  // `mode`: always in modern mode, never in legacy mode; in dual mode when its _meta
  // names a protocolVersion or its method exists only in 2026 (server/discover,
  // subscriptions/listen).
  static bool is_modern_request(ProtocolMode mode, const json& message);
  // The envelope checks of a modern request, in order: an unknown method (-32601), a
  // missing _meta key (-32602), an unsupported version (-32022). Nullopt = acceptable.
  static std::optional<Refusal> check_modern(const std::string& method, const json& params);
  // The tools a tools/list would show now, for a modern or a legacy request.
  json listed_tools(bool modern) const;

  // Where messages that answer no request go (notifications/resources/updated of a 2025
  // session): the HTTP front end passes the session's standalone GET stream. Unset, they
  // go through the `send` of the resources/subscribe request (stdio: the one output).
  void set_notify(Send notify) { notify_ = std::move(notify); }

  // Stops every running slow_task without answering and ends this server's resource
  // subscriptions (stdin EOF, session end).
  void cancel_all();

  std::size_t running_tasks() const { return tasks_.size(); }
  bool initialized() const { return initialized_; }
  // The version agreed in initialize; empty before it.
  const std::string& protocol_version() const { return protocol_version_; }

  // The tool definitions returned by tools/list.
  static json tool_definitions();
  // What resources/list, resources/templates/list and prompts/list return.
  static json resource_definitions();
  static json resource_template_definitions();
  static json prompt_definitions();

 private:
  struct Task {
    json request_id;
    json progress_token;  // null when the caller asked for no progress
    int steps = 0;
    int done = 0;
    int interval_ms = 0;
    bool modern = false;
    Scheduler::TimerId timer = 0;
    Send send;
  };
  // A legacy input tool waiting for the client's answer to our request.
  struct Outgoing {
    json call_id;  // the tools/call being served
    std::string tool;
    std::string method;  // what we asked
    int round = 0;       // the round the answer feeds
    json data;           // what earlier rounds gathered
    Send send;
  };
  // One question of an input tool (see input_step in the .cpp).
  struct Ask {
    std::string key;
    std::string method;
    json params;
    std::string capability;  // the client capability it needs
  };
  struct Step {
    std::optional<Ask> ask;  // set: ask this next (round + 1)
    json data;               // carried to the next round
    json result;             // no ask: the CallToolResult
  };

  void handle_request(const json& id, const std::string& method, const json& params,
                      const Send& send, const Close& close);
  void handle_modern(const json& id, const std::string& method, const json& params,
                     const Send& send, const Close& close);
  void handle_notification(const std::string& method, const json& params);
  void handle_response(const json& message);
  void on_initialize(const json& id, const json& params, const Send& send);
  void on_tools_list(const json& id, const json& params, const Send& send, bool modern);
  void on_tools_call(const json& id, const json& params, const Send& send, bool modern);
  void on_listen(const json& id, const json& params, const Send& send, const Close& close);
  // resources/list, resources/templates/list, prompts/list: one page, like tools/list.
  void on_catalog_list(const json& id, const std::string& method, const json& params,
                       const Send& send, bool modern);
  void on_resources_read(const json& id, const json& params, const Send& send, bool modern);
  void on_subscribe(const json& id, const std::string& method, const json& params,
                    const Send& send);
  void on_prompts_get(const json& id, const json& params, const Send& send, bool modern);
  void on_complete(const json& id, const json& params, const Send& send, bool modern);
  // Adds a subscriber of `uri` (a listen's when `listen_id` is not null) and starts the
  // ticker when it is the ticker's first.
  void add_resource_subscriber(const std::string& uri, const Send& send, const json& listen_id);
  // Removes this server's subscribers of `uri` (every uri when empty) that belong to
  // `listen` (null json: the 2025 subscriptions; nullopt: all of them), and stops the
  // ticker when nobody is left on it.
  void remove_resource_subscribers(const std::string& uri, const std::optional<json>& listen);
  static void advance_ticker(DemoShared& shared, Scheduler& scheduler,
                             std::chrono::milliseconds interval);
  bool is_input_tool(const std::string& name, bool modern) const;
  void call_input_tool(const json& id, const std::string& name, const json& params,
                       const Send& send, bool modern);
  Step input_step(const std::string& tool, int round, const json& data, const json& answer) const;
  void toggle_bonus(const json& id, const Send& send, bool modern);
  void drop_listens(const json& id, const Send& send, bool modern);
  void start_slow_task(const json& id, const json& args, const json& progress_token,
                       const Send& send, bool modern);
  void step_slow_task(std::uint64_t task_id);
  void cancel_request(const json& request_id, const std::string& reason);
  void remove_listens();

  void reply(const Send& send, const json& id, json result);
  // A tools/call (or other) result, with resultType "complete" on the modern wire.
  void reply_result(const Send& send, const json& id, json result, bool modern);
  void reply_error(const Send& send, const json& id, int code, std::string message,
                   json data = nullptr);
  void emit(const Send& send, const json& message);
  void log(const std::string& line) const;

  Scheduler& scheduler_;
  DemoServerOptions options_;
  std::shared_ptr<DemoShared> shared_;
  bool initialized_ = false;
  bool session_started_ = false;  // an initialize was received (legacy session)
  std::string protocol_version_;
  std::string client_name_;
  json client_capabilities_ = json::object();  // from initialize
  std::map<std::uint64_t, Task> tasks_;
  std::map<Scheduler::TimerId, Send> delayed_initialize_;  // --startup-delay-ms answers
  std::map<std::string, Outgoing> outgoing_;               // our request id → its tool
  std::uint64_t next_task_id_ = 1;
  std::uint64_t next_outgoing_id_ = 1;
  Send notify_;
};

// What every DemoServer of one process shares. Accessed only where DemoServer::handle
// runs (one thread at a time; the HTTP front end holds its lock).
struct DemoShared {
  struct Listener {
    DemoServer* owner = nullptr;
    json id;  // the subscriptions/listen request's id (= the subscriptionId)
    bool tools = false;  // toolsListChanged was asked for and honoured
    DemoServer::Send send;
    DemoServer::Close close;  // null on stdio: dropped with notifications/cancelled
  };
  struct IssuedState {
    std::string tool;
    std::string key;  // the inputRequests key the retry must answer
    int round = 0;
    json data;
  };
  bool bonus = false;  // toggle_tool's extra tool is listed
  std::map<std::uint64_t, Listener> listeners;
  std::uint64_t next_listener = 1;
  std::map<std::string, IssuedState> states;  // requestState → what it continues
  std::vector<std::string> state_order;       // oldest first, for the bound
  std::uint64_t next_state = 1;
  // Resource subscriptions: a 2025 resources/subscribe, or one uri of a 2026 listen.
  struct ResourceSubscriber {
    DemoServer* owner = nullptr;
    std::string uri;
    json listen_id;  // null: a 2025 subscription; else the listen it belongs to
    DemoServer::Send send;
  };
  std::map<std::uint64_t, ResourceSubscriber> resource_subscribers;
  std::uint64_t next_resource_subscriber = 1;
  // demo://ticker: its "tick N" and the timer that advances it while it has subscribers.
  std::uint64_t ticks = 0;
  Scheduler::TimerId ticker_timer = 0;
};

}  // namespace mcprt::demo
