// ClientSession: the MCP client rules (SPEC §3.1, §3.4) on top of RpcPeer. The peer does
// correlation, deadlines and cancellation; this file does the handshake, version
// negotiation, pagination, answers to server requests and the error naming.

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "jsonrpc/message.hpp"
#include "jsonrpc/raw_json.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/client.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/mcp_headers.hpp"
#include "util/local_error.hpp"

namespace mcprt {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

// The 2026-07-28 wire (SPEC §14).
constexpr const char* kMetaVersion = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kMetaCapabilities = "io.modelcontextprotocol/clientCapabilities";
constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";
constexpr const char* kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";
constexpr int kHeaderMismatch = -32020;
constexpr int kMissingCapability = -32021;
constexpr int kUnsupportedVersion = -32022;
// MRTR (SEP-2322): rounds of input_required answered before giving up.
constexpr int kMaxInputRounds = 10;
// A dropped listen stream is re-opened after this, doubling up to the cap.
constexpr Millis kListenRetryFirst{1000};
constexpr Millis kListenRetryMax{30000};

// Untrusted JSON: a member of the wrong type reads as absent (json::value would throw).
std::string string_at(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}
bool is_true_at(const json& object, const char* key) {
  if (!object.is_object()) return false;
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}
int int_at(const json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : 0;
}

bool is_modern_error_code(int code) {
  return code == kHeaderMismatch || code == kMissingCapability || code == kUnsupportedVersion;
}

// Methods whose result may say input_required.
bool allows_input_required(const std::string& method) {
  return method == "tools/call" || method == "prompts/get" || method == "resources/read";
}

LogLevel log_level_of(const std::string& mcp_level) {
  if (mcp_level == "debug") return LogLevel::debug;
  if (mcp_level == "info" || mcp_level == "notice") return LogLevel::info;
  if (mcp_level == "warning") return LogLevel::warn;
  return LogLevel::error;  // error, critical, alert, emergency, or unknown
}

}  // namespace

bool is_modern_protocol_version(const std::string& version) {
  const auto& v = modern_protocol_versions();
  return std::find(v.begin(), v.end(), version) != v.end();
}

struct ClientSession::Impl : std::enable_shared_from_this<Impl> {
  Impl(Executor& ex, std::unique_ptr<Transport> transport, ClientOptions opts)
      : executor(ex),
        options(std::move(opts)),
        logger(options.logger ? options.logger : &null_logger),
        peer(std::make_unique<RpcPeer>(ex, std::move(transport), options.logger)) {}

  Executor& executor;
  ClientOptions options;
  NullLogger null_logger;
  Logger* logger;
  std::unique_ptr<RpcPeer> peer;  // reset when the session handle is destroyed
  State state = State::idle;
  ServerInfo server;
  bool destroyed = false;
  bool close_reported = false;
  std::function<void(Status)> connect_done;  // held while the handshake runs
  ScopedTimer connect_timer;

  // The era (SPEC §14). `modern_version` is what modern requests carry (also the probe's).
  bool modern = false;
  std::string modern_version;
  bool discover_version_retried = false;
  bool respawned = false;  // the server was started again after the probe ended it
  // x-mcp-header parameters of each listed tool (HTTP on the modern wire only).
  std::map<std::string, std::vector<McpHeaderParam>> header_params;
  // The listen stream (subscriptions/listen) for list changes.
  json listen_id;            // the pending listen request's id; null when none
  AbortController listen_abort;
  bool listen_acknowledged = false;
  std::uint64_t listen_generation = 0;
  Millis listen_retry = kListenRetryFirst;
  ScopedTimer listen_ack_timer;
  ScopedTimer listen_retry_timer;
  json listen_honoured = json::object();
  // The 2026-07-28 wire: the resources subscribed through the listen stream, and the
  // subscribe calls waiting for the acknowledgement of the stream that carries them.
  std::set<std::string> listen_resources;
  std::vector<std::pair<std::string, std::function<void(Status)>>> listen_waiting;
  json tools_cache_hint;  // {ttlMs, cacheScope} of the last listing; null on the 2025 wire

  // --- naming and posting ------------------------------------------------------------

  std::string prefix() const {
    return options.server_name.empty() ? std::string() : "Server \"" + options.server_name + "\": ";
  }

  Error named(Error e) const {
    const std::string p = prefix();
    if (!p.empty() && e.message.compare(0, p.size(), p) != 0) e.message = p + e.message;
    return e;
  }

  Error make_error(ErrorCode code, std::string message) const {
    return named(Error::make(code, std::move(message)));
  }

  // Runs `fn(value)` later on the executor, unless the session is gone by then.
  template <class Fn, class V>
  void post_to(Fn fn, V value) {
    if (!fn) return;
    executor.post(
        [weak = weak_from_this(), fn = std::move(fn), value = std::move(value)]() mutable {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          fn(std::move(value));
        });
  }

  // Wraps a peer completion: runs `fn` only while the session is alive.
  template <class Fn>
  ResponseCallback guarded(Fn fn) {
    return [weak = weak_from_this(), fn = std::move(fn)](Result<json> r) mutable {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      fn(*self, std::move(r));
    };
  }

  Error not_ready(const std::string& what) const {
    const char* why = state == State::closed ? "the connection is closed"
                      : state == State::idle ? "connect() has not been called"
                                             : "the handshake has not finished";
    return make_error(ErrorCode::not_connected, "cannot send " + what + ": " + why);
  }

  // --- handshake ---------------------------------------------------------------------

  void connect(std::function<void(Status)> done) {
    if (state != State::idle) {
      post_to(std::move(done),
              Status(make_error(ErrorCode::invalid_argument, "connect() may only be called once")));
      return;
    }
    state = State::connecting;
    connect_done = std::move(done);
    peer->start(make_peer_handlers());

    if (options.connect_timeout > Millis(0)) {
      connect_timer = ScopedTimer(
          executor, executor.post_after(options.connect_timeout, [weak = weak_from_this()] {
            auto self = weak.lock();
            if (!self || self->destroyed) return;
            self->connect_timer.release();
            self->on_connect_timeout();
          }));
    }

    // SPEC §14: which wire, and whether to probe for it.
    const std::string protocol = options.protocol.empty() ? "auto" : options.protocol;
    const auto& legacy = supported_protocol_versions();
    if (is_modern_protocol_version(protocol)) {
      modern_version = protocol;
      server.era_source = "pinned";
      return send_discover(/*probe=*/false);
    }
    if (protocol == "legacy") return send_initialize(legacy.front(), "initialize");
    if (std::find(legacy.begin(), legacy.end(), protocol) != legacy.end()) {
      return send_initialize(protocol, "initialize");
    }
    if (protocol != "auto") {
      return fail_connect(Error::make(
          ErrorCode::invalid_config,
          "unknown protocol \"" + protocol + "\" (use auto, legacy, 2026-07-28 or " +
              join(legacy, ", ") + ")"));
    }
    const std::string& prior = options.prior_protocol_version;
    if (is_modern_protocol_version(prior)) {
      // A stored modern verdict: nothing to ask before the first real request.
      modern_version = prior;
      server.era_source = "prior";
      return become_modern(json::object());
    }
    if (!prior.empty()) return send_initialize(legacy.front(), "prior");
    modern_version = modern_protocol_versions().front();
    server.era_source = "probe";
    send_discover(/*probe=*/true);
  }

  void send_initialize(const std::string& version, const char* era_source) {
    server.era_source = era_source;
    json params = json::object();
    params["protocolVersion"] = version;
    params["capabilities"] = declared_client_capabilities(options.input, options.roots);
    params["clientInfo"]["name"] = options.client_info.name;
    params["clientInfo"]["version"] = options.client_info.version;
    auto sent = peer->request(
        "initialize", params, RequestOptions{},
        guarded([](Impl& self, Result<json> r) { self.on_initialize_answer(std::move(r)); }));
    if (!sent) fail_connect(std::move(sent).error());
  }

  // server/discover: the stdio probe, the HTTP probe, or (pinned) the first request.
  void send_discover(bool probe) {
    RequestOptions ro;
    ro.timeout = (probe && !options.http && options.probe_timeout > Millis(0))
                     ? options.probe_timeout
                     : options.request_timeout;
    json params = json::object();
    params = with_meta(std::move(params));
    ro.send = modern_send_options("server/discover", params, nullptr);
    auto sent = peer->request("server/discover", std::move(params), std::move(ro),
                              guarded([probe](Impl& self, Result<json> r) {
                                self.on_discover_answer(probe, std::move(r));
                              }));
    if (!sent) fail_connect(std::move(sent).error());
  }

  // The first modern version of ours that `supported` (untrusted) lists.
  std::optional<std::string> mutual_modern_version(const json& supported) const {
    if (!supported.is_array()) return std::nullopt;
    for (const auto& mine : modern_protocol_versions()) {
      for (const auto& theirs : supported) {
        if (theirs.is_string() && theirs.get_ref<const std::string&>() == mine) return mine;
      }
    }
    return std::nullopt;
  }

  Error no_mutual_version(const json& supported) const {
    return Error::make(ErrorCode::unsupported_version,
                       "no protocol version in common (server supports " +
                           detail::describe_json(supported, 120) + "; client supports " +
                           join(modern_protocol_versions(), ", ") + ")");
  }

  void on_discover_answer(bool probe, Result<json> answer) {
    if (!connect_done) return;  // the handshake already ended (timeout, close)
    if (answer.ok()) {
      const json& result = answer.value();
      if (!result.is_object()) {
        return fail_connect(Error::make(ErrorCode::protocol,
                                        "server/discover returned a non-object result: " +
                                            detail::describe_json(result)));
      }
      auto versions = result.find("supportedVersions");
      if (versions == result.end() || !versions->is_array()) {
        // Not a DiscoverResult: some 2025 servers answer any method with {}.
        if (probe) return send_initialize(supported_protocol_versions().front(), "fallback");
        return fail_connect(Error::make(ErrorCode::protocol,
                                        "server/discover returned no supportedVersions array"));
      }
      if (auto mutual = mutual_modern_version(*versions)) {
        modern_version = *mutual;
      } else if (probe) {
        // A server that lists only initialize-era versions: speak those.
        return send_initialize(supported_protocol_versions().front(), "fallback");
      } else {
        return fail_connect(no_mutual_version(*versions));
      }
      return become_modern(result);
    }
    Error e = std::move(answer).error();
    if (e.is_wire() && e.wire_code == kUnsupportedVersion) {
      // Modern evidence: never fall back to initialize on it (SPEC §14).
      const json supported = e.data.is_object() ? e.data.value("supported", json()) : json();
      auto mutual = mutual_modern_version(supported);
      // Retried once even when the mutual version is the one just sent (a server may
      // refuse the first request whatever it carried).
      if (mutual && !discover_version_retried) {
        discover_version_retried = true;
        modern_version = *mutual;
        return send_discover(probe);
      }
      return fail_connect(no_mutual_version(supported));
    }
    if (e.is_wire() && is_modern_error_code(e.wire_code)) return fail_connect(std::move(e));
    if (!probe) return fail_connect(std::move(e));
    const ErrorCode local = detail::local_code(e);
    if (peer->closed()) {
      // The server ended the connection over the probe: a stdio server that exits on any
      // request before initialize, or (the browser) an HTTP transport that met an opaque
      // network failure. Start it again, once, for the initialize handshake.
      const bool again = !options.http || (options.probe_network_failure_means_legacy &&
                                           local == ErrorCode::transport);
      if (!again || !options.respawn || respawned) return fail_connect(std::move(e));
      respawned = true;
      auto transport = options.respawn();
      if (!transport.ok()) return fail_connect(std::move(transport).error());
      logger->info(prefix() + "the connection ended over server/discover (" + e.message +
                   "); connecting again for the initialize handshake");
      // Destroying the old peer silences it (its close must not end this session).
      peer = std::make_unique<RpcPeer>(executor, std::move(transport.value()), options.logger);
      peer->start(make_peer_handlers());
      return send_initialize(supported_protocol_versions().front(), "fallback");
    }
    bool legacy = false;
    if (options.http) {
      // 401/403 are authorization, 5xx and network failures outages: never a verdict.
      if (local == ErrorCode::http_status) {
        const int status = int_at(e.data, "status");
        legacy = status >= 400 && status < 500 && status != 401 && status != 403;
      } else if (local == ErrorCode::transport) {
        legacy = options.probe_network_failure_means_legacy;
      } else {
        legacy = e.is_wire();  // a JSON-RPC error that is not a modern one
      }
    } else {
      legacy = e.is_wire() || local == ErrorCode::timeout;
    }
    if (!legacy) return fail_connect(std::move(e));
    logger->debug(prefix() + "probe: " + e.message + "; using initialize");
    send_initialize(supported_protocol_versions().front(), "fallback");
  }

  void become_modern(const json& discover) {
    modern = true;
    server.modern = true;
    server.protocol_version = modern_version;
    server.capabilities = json::object();
    if (auto it = discover.find("capabilities"); it != discover.end() && it->is_object()) {
      server.capabilities = *it;
    }
    if (auto meta = discover.find("_meta"); meta != discover.end() && meta->is_object()) {
      if (auto info = meta->find(kMetaServerInfo); info != meta->end() && info->is_object()) {
        server.server_info = *info;
      }
    }
    if (auto it = discover.find("instructions"); it != discover.end() && it->is_string()) {
      server.instructions = it->get<std::string>();
    }
    state = State::ready;
    connect_timer.reset();
    finish_connect(Status());
    start_listen();
  }

  void on_connect_timeout() {
    if (!connect_done) return;
    std::string message = "connection timed out after " +
                          std::to_string(options.connect_timeout.count()) +
                          " ms during the initialize handshake";
    if (std::string diag = peer->transport().diagnostics(); !diag.empty()) {
      message += " (" + diag + ")";
    }
    fail_connect(Error::make(ErrorCode::timeout, std::move(message)));
  }

  void on_initialize_answer(Result<json> answer) {
    if (!connect_done) return;  // the handshake already ended (timeout, close)
    if (!answer.ok()) return fail_connect(std::move(answer).error());
    const json& result = answer.value();
    if (!result.is_object()) {
      return fail_connect(
          Error::make(ErrorCode::protocol,
                      "initialize returned a non-object result: " + detail::describe_json(result)));
    }
    auto version = result.find("protocolVersion");
    if (version == result.end() || !version->is_string()) {
      return fail_connect(
          Error::make(ErrorCode::protocol, "initialize result has no string protocolVersion"));
    }
    const auto& versions = supported_protocol_versions();
    const std::string& v = version->get_ref<const std::string&>();
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) {
      return fail_connect(Error::make(ErrorCode::unsupported_version,
                                      "unsupported protocol version \"" + v +
                                          "\" (client supports " + join(versions, ", ") + ")"));
    }
    server.protocol_version = v;
    if (auto it = result.find("serverInfo"); it != result.end() && it->is_object()) {
      server.server_info = *it;
    }
    if (auto it = result.find("capabilities"); it != result.end() && it->is_object()) {
      server.capabilities = *it;
    } else {
      server.capabilities = json::object();
    }
    if (auto it = result.find("instructions"); it != result.end() && it->is_string()) {
      server.instructions = it->get<std::string>();
    }
    if (auto st = peer->notify("notifications/initialized"); !st) {
      return fail_connect(std::move(st).error());
    }
    state = State::ready;
    connect_timer.reset();
    finish_connect(Status());
  }

  void fail_connect(Error error) {
    if (!connect_done) return;
    state = State::closed;
    connect_timer.reset();
    // Take the error before closing: closing fails the initialize request, which must
    // not be mistaken for the reason.
    Error reason = named(std::move(error));
    peer->close();
    finish_connect(Status(std::move(reason)));
  }

  void finish_connect(Status status) {
    auto done = std::move(connect_done);
    connect_done = nullptr;
    post_to(std::move(done), std::move(status));
  }

  // --- what the server sends us ------------------------------------------------------

  RpcPeer::Handlers make_peer_handlers() {
    RpcPeer::Handlers h;
    std::weak_ptr<Impl> weak = weak_from_this();
    h.on_request = [weak](const IncomingRequest& request, Responder respond) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->answer_server_request(request, std::move(respond));
    };
    h.on_notification = [weak](const std::string& method, const json& params) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->on_server_notification(method, params);
    };
    h.on_close = [weak](const Error& error) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->on_connection_closed(error);
    };
    h.on_renewed = [weak] {
      auto self = weak.lock();
      if (self && !self->destroyed && self->options.on_session_renewed) self->options.on_session_renewed();
    };
    return h;
  }

  void answer_server_request(const IncomingRequest& request, const Responder& respond) {
    if (request.method == "ping") return respond(json::object());
    if (request.method == "elicitation/create" || request.method == "sampling/createMessage" ||
        request.method == "roots/list") {
      return fulfil_input(request.method, request.params,
                          [respond](Result<json> r) { respond(std::move(r)); });
    }
    respond(Error::wire(rpc_code::kMethodNotFound, "Method not found: " + request.method));
  }

  // --- host input (SPEC §15): 2025 server requests and 2026 MRTR input requests ---------

  // Answers one input request through the host's handlers. `reply` runs once (maybe later,
  // maybe inside this call); an Error is a JSON-RPC error for a 2025 request, a failed
  // call for MRTR.
  void fulfil_input(const std::string& method, const json& params,
                    std::function<void(Result<json>)> reply) {
    auto once = std::make_shared<std::function<void(Result<json>)>>(std::move(reply));
    auto answer = [weak = weak_from_this(), once](Result<json> r) {
      auto self = weak.lock();
      if (!self || self->destroyed || !*once) return;
      auto fn = std::move(*once);
      *once = nullptr;
      fn(std::move(r));
    };
    auto undeclared = [&](const char* what) {
      answer(Error::wire(rpc_code::kMethodNotFound, "Method not found: " + method +
                                                        " (this client does not declare " + what));
    };
    if (method == "roots/list") {
      if (!options.roots) return undeclared("roots)");
      return answer(roots_list_result(*options.roots));
    }
    if (method == "sampling/createMessage") {
      if (!options.input.sample) return undeclared("sampling)");
      SamplingRequest request{options.server_name, params};
      return options.input.sample(request, answer);
    }
    if (method == "elicitation/create") {
      if (!options.input.elicit) return undeclared("elicitation)");
      auto parsed = parse_elicitation(options.server_name, params);
      if (!parsed.ok()) {
        return answer(Error::wire(rpc_code::kInvalidParams, parsed.error().message));
      }
      Elicitation e = std::move(parsed.value());
      const bool offered = e.mode == Elicitation::Mode::form ? options.input.elicit_form
                                                             : options.input.elicit_url;
      if (!offered) {
        return answer(Error::wire(rpc_code::kInvalidParams,
                                  e.mode == Elicitation::Mode::form
                                      ? "this client does not offer form elicitation"
                                      : "this client does not offer url elicitation"));
      }
      const Elicitation::Mode mode = e.mode;
      json schema = e.requested_schema;
      return options.input.elicit(e, [answer, mode, schema](ElicitAnswer a) {
        if (a.action == ElicitAnswer::Action::accept && mode == Elicitation::Mode::form) {
          a.content = apply_elicitation_defaults(schema, std::move(a.content));
        }
        answer(elicit_result_json(a, mode));
      });
    }
    answer(Error::wire(rpc_code::kMethodNotFound, "Method not found: " + method));
  }

  void on_server_notification(const std::string& method, const json& params) {
    // Progress already reached the call it belongs to (RpcPeer routes it by token).
    if (method == "notifications/progress") return;
    if (method == "notifications/subscriptions/acknowledged") return on_listen_acknowledged(params);
    if (method == "notifications/cancelled" && is_listen_id(params.is_object()
                                                               ? params.value("requestId", json())
                                                               : json())) {
      // The server tore the listen stream down: stop waiting on it, open another.
      listen_abort.abort("the server ended the listen stream");
      return;
    }
    if (method == "notifications/message") log_server_message(params);
    if (options.on_notification) options.on_notification(method, params);
  }

  void log_server_message(const json& params) {
    if (!params.is_object()) return;
    std::string level = "info";
    if (auto it = params.find("level"); it != params.end() && it->is_string()) {
      level = it->get<std::string>();
    }
    std::string text = options.server_name.empty() ? std::string("Server")
                                                   : "Server \"" + options.server_name + "\"";
    if (auto it = params.find("logger"); it != params.end() && it->is_string()) {
      text += " [" + it->get<std::string>() + "]";
    }
    text += ": ";
    if (auto it = params.find("data"); it != params.end()) {
      text += it->is_string() ? it->get<std::string>() : detail::describe_json(*it, 2000);
    }
    logger->log(log_level_of(level), text);
  }

  void on_connection_closed(const Error& error) {
    if (close_reported) return;
    close_reported = true;
    // Normally the initialize request failed first (the peer fails requests before it
    // reports the close); this covers a handshake that had nothing in flight.
    if (connect_done) fail_connect(error);
    state = State::closed;
    connect_timer.reset();
    stop_listen_timers();
    if (options.on_close) options.on_close(named(error));
  }

  // --- the modern wire: _meta, headers, resultType, retries, MRTR ----------------------

  // params + the `_meta` envelope (the caller's own _meta keys win).
  json with_meta(json params) const {
    if (params.is_null()) params = json::object();
    if (!params.is_object()) return params;  // the peer sends it; the server refuses it
    json& meta = params["_meta"];
    if (!meta.is_object()) meta = json::object();
    if (!meta.contains(kMetaVersion)) meta[kMetaVersion] = modern_version;
    if (!meta.contains(kMetaCapabilities)) {
      meta[kMetaCapabilities] = declared_client_capabilities(options.input, options.roots);
    }
    if (!meta.contains(kMetaClientInfo)) {
      json& info = meta[kMetaClientInfo];
      info["name"] = options.client_info.name;
      info["version"] = options.client_info.version;
    }
    return params;
  }

  SendOptions modern_send_options(const std::string& method, const json& params,
                                  const json& tool_definition) const {
    SendOptions so;
    so.stateless = true;
    if (!options.http) return so;
    so.headers = modern_request_headers(modern_version, method, params);
    if (method != "tools/call" || !params.is_object()) return so;
    // The tool's x-mcp-header parameters: from this session's listing, else the
    // definition the caller passed (a cached tool).
    const std::vector<McpHeaderParam>* hp = nullptr;
    Result<std::vector<McpHeaderParam>> from_definition = std::vector<McpHeaderParam>{};
    if (auto it = header_params.find(string_at(params, "name")); it != header_params.end()) {
      hp = &it->second;
    } else if (tool_definition.is_object()) {
      from_definition = x_mcp_header_params(tool_definition);
      if (from_definition.ok()) hp = &from_definition.value();
    }
    auto args = params.find("arguments");
    if (hp && args != params.end()) {
      for (auto& h : mcp_param_headers(*hp, *args)) so.headers.push_back(std::move(h));
    }
    return so;
  }

  // One request on either wire. Legacy: straight to the peer. Modern: `_meta`, headers,
  // the -32022 and -32020 retries, resultType, and MRTR rounds; `done` sees the final
  // complete result or the error.
  struct ModernOp {
    std::string method;
    json params;  // as the caller gave them (no _meta envelope, no input responses)
    RequestOptions options;
    json tool_definition;
    ResponseCallback done;
    int rounds = 0;
    bool version_retried = false;
    bool header_retried = false;
    json input_responses;  // this round's, null when none
    json request_state;    // the server's requestState, echoed as received; null when none
    std::size_t inputs_waiting = 0;
    std::uint64_t abort_listener = 0;
    bool finished = false;
  };

  Result<json> send(const std::string& method, json params, RequestOptions ro,
                    ResponseCallback done, json tool_definition = nullptr) {
    if (!modern) return peer->request(method, std::move(params), std::move(ro), std::move(done));
    auto op = std::make_shared<ModernOp>();
    op->method = method;
    op->params = std::move(params);
    op->options = std::move(ro);
    op->tool_definition = std::move(tool_definition);
    op->done = std::move(done);
    return send_round(op);
  }

  Result<json> send_round(const std::shared_ptr<ModernOp>& op) {
    json params = op->params;
    if (!op->input_responses.is_null() || !op->request_state.is_null()) {
      if (params.is_null()) params = json::object();
      if (!op->input_responses.is_null()) params["inputResponses"] = op->input_responses;
      if (!op->request_state.is_null()) params["requestState"] = op->request_state;
    }
    params = with_meta(std::move(params));
    RequestOptions ro = op->options;
    ro.send = modern_send_options(op->method, params, op->tool_definition);
    return peer->request(op->method, std::move(params), std::move(ro),
                         guarded([op](Impl& self, Result<json> r) {
                           self.on_modern_answer(op, std::move(r));
                         }));
  }

  // A retry round started from a completion: a send failure ends the operation.
  void resend(const std::shared_ptr<ModernOp>& op) {
    if (op->finished) return;
    auto sent = send_round(op);
    if (!sent) finish_op(op, named(std::move(sent).error()));
  }

  void finish_op(const std::shared_ptr<ModernOp>& op, Result<json> result) {
    if (op->finished) return;
    op->finished = true;
    if (op->abort_listener) {
      op->options.signal.remove_listener(op->abort_listener);
      op->abort_listener = 0;
    }
    auto done = std::move(op->done);
    op->done = nullptr;
    if (done) done(std::move(result));
  }

  void on_modern_answer(const std::shared_ptr<ModernOp>& op, Result<json> answer) {
    if (op->finished) return;
    if (!answer.ok()) {
      Error e = std::move(answer).error();
      if (e.is_wire() && e.wire_code == kUnsupportedVersion && !op->version_retried) {
        // The server wants another version: take a mutual one (for the whole session)
        // and retry this request once.
        op->version_retried = true;
        const json supported = e.data.is_object() ? e.data.value("supported", json()) : json();
        if (auto mutual = mutual_modern_version(supported)) {
          modern_version = *mutual;
          server.protocol_version = *mutual;
          return resend(op);
        }
        return finish_op(op, named(no_mutual_version(supported)));
      }
      if (e.is_wire() && e.wire_code == kHeaderMismatch && op->method == "tools/call" &&
          !op->header_retried) {
        // Our headers disagree with the server's idea of the tool: re-list, retry once.
        op->header_retried = true;
        logger->debug(prefix() + e.message + ": re-listing, retrying once");
        op->tool_definition = nullptr;
        list(kToolsList, [weak = weak_from_this(), op](Result<std::vector<json>>) {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          self->resend(op);
        }, op->options.signal);
        return;
      }
      return finish_op(op, std::move(e));
    }
    json& result = answer.value();
    if (!result.is_object()) return finish_op(op, std::move(answer));
    std::string type = "complete";  // a missing resultType is a complete result
    if (auto it = result.find("resultType"); it != result.end()) {
      if (!it->is_string()) {
        return finish_op(op, make_error(ErrorCode::protocol,
                                        op->method + " returned a resultType that is not a string"));
      }
      type = it->get<std::string>();
    }
    if (type == "complete") return finish_op(op, std::move(answer));
    if (type == "input_required" && allows_input_required(op->method)) {
      return on_input_required(op, std::move(result));
    }
    finish_op(op, make_error(ErrorCode::protocol, op->method + " returned an unknown resultType \"" + type + "\""));
  }

  // MRTR (SEP-2322): fulfil every input request, then retry with a new id carrying the
  // responses and the server's requestState exactly as received.
  void on_input_required(const std::shared_ptr<ModernOp>& op, json result) {
    if (++op->rounds > kMaxInputRounds) {
      return finish_op(op, make_error(ErrorCode::protocol,
                                      op->method + ": the server still asked for input after " +
                                          std::to_string(kMaxInputRounds) + " rounds; giving up"));
    }
    json requests = json::object();
    if (auto it = result.find("inputRequests"); it != result.end() && !it->is_null()) {
      if (!it->is_object()) {
        return finish_op(op, make_error(ErrorCode::protocol,
                                        op->method + ": inputRequests is not an object"));
      }
      requests = std::move(*it);
    }
    op->request_state = nullptr;
    if (auto it = result.find("requestState"); it != result.end() && !it->is_null()) {
      op->request_state = std::move(*it);
    }
    if (requests.empty() && op->request_state.is_null()) {
      return finish_op(op, make_error(ErrorCode::protocol,
                                      op->method + ": input_required without inputRequests or requestState"));
    }
    op->input_responses = requests.empty() ? json(nullptr) : json::object();
    if (requests.empty()) return resend(op);
    if (op->options.signal.aborted()) {
      return finish_op(op, make_error(ErrorCode::aborted, "Request " + op->method + " aborted"));
    }
    op->abort_listener = op->options.signal.add_listener([weak = weak_from_this(), op] {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      op->abort_listener = 0;
      const std::string& why = op->options.signal.reason();
      self->finish_op(op, self->make_error(ErrorCode::aborted,
                                           "Request " + op->method + " aborted" +
                                               (why.empty() || why == "aborted" ? "" : ": " + why)));
    });
    op->inputs_waiting = requests.size();
    for (auto& [key, request] : requests.items()) {
      std::string method;
      json params;
      if (request.is_object()) {
        method = string_at(request, "method");
        if (auto p = request.find("params"); p != request.end()) params = *p;
      }
      fulfil_input(method, params, [weak = weak_from_this(), op, key = key](Result<json> r) {
        auto self = weak.lock();
        if (!self || self->destroyed || op->finished) return;
        if (!r.ok()) {
          Error e = std::move(r).error();
          return self->finish_op(op, self->make_error(
                                         ErrorCode::protocol,
                                         op->method + ": input request \"" + key +
                                             "\" could not be answered: " + e.message));
        }
        op->input_responses[key] = std::move(r.value());
        if (--op->inputs_waiting > 0) return;
        if (op->abort_listener) {
          op->options.signal.remove_listener(op->abort_listener);
          op->abort_listener = 0;
        }
        self->resend(op);
      });
      if (op->finished) return;
    }
  }

  // --- the listen stream (subscriptions/listen) -------------------------------------------

  bool is_listen_id(const json& id) const {
    if (listen_id.is_null() || id.is_null()) return false;
    return detail::id_as_integer(id) == detail::id_as_integer(listen_id);
  }

  // The list changes the server says it sends (SPEC §15: tools, prompts, resources), as
  // subscriptions/listen names them. Without a discover result (a stored verdict) the
  // capabilities are unknown: ask for all three.
  json listen_notifications() const {
    json wanted = json::object();
    for (const auto& [capability, field] :
         {std::pair<const char*, const char*>{"tools", "toolsListChanged"},
          {"prompts", "promptsListChanged"},
          {"resources", "resourcesListChanged"}}) {
      auto cap = server.capabilities.find(capability);
      if (server.capabilities.empty() ||
          (cap != server.capabilities.end() && is_true_at(*cap, "listChanged"))) {
        wanted[field] = true;
      }
    }
    if (!listen_resources.empty()) {
      json uris = json::array();
      for (const auto& uri : listen_resources) uris.push_back(uri);
      wanted["resourceSubscriptions"] = std::move(uris);
    }
    return wanted;
  }

  // The subscriptions changed: the stream is replaced by one that carries them (the old
  // one's end is not a drop: its generation is over).
  void restart_listen() {
    if (!listen_id.is_null()) {
      ++listen_generation;
      listen_id = nullptr;
      listen_abort.abort("the subscriptions changed");
    }
    listen_retry_timer.reset();
    listen_ack_timer.reset();
    listen_retry = kListenRetryFirst;
    start_listen();
  }

  // Subscribe calls learn whether the stream now open honours their resource.
  void settle_listen_waiting(const std::optional<Error>& failure) {
    auto waiting = std::move(listen_waiting);
    listen_waiting.clear();
    for (auto& [uri, done] : waiting) {
      Status st;
      if (failure) {
        st = Status(*failure);
      } else {
        auto honoured = listen_honoured.find("resourceSubscriptions");
        bool found = false;
        if (honoured != listen_honoured.end() && honoured->is_array()) {
          for (const auto& h : *honoured) found = found || (h.is_string() && h == uri);
        }
        if (!found) {
          listen_resources.erase(uri);  // not asked for again on later streams
          st = Status(make_error(ErrorCode::invalid_argument,
                                 "subscriptions/listen: the server did not honour the "
                                 "subscription to " + uri));
        }
      }
      post_to(std::move(done), std::move(st));
    }
  }

  bool wants_listen() const { return !listen_notifications().empty(); }

  void start_listen() {
    if (!modern || state != State::ready || !wants_listen()) return;
    const std::uint64_t generation = ++listen_generation;
    listen_abort = AbortController();
    listen_acknowledged = false;
    RequestOptions ro;  // no deadline: the stream lives as long as the connection
    ro.signal = listen_abort.signal();
    json params = json::object();
    params["notifications"] = listen_notifications();
    auto sent = send("subscriptions/listen", std::move(params), std::move(ro),
                     guarded([generation](Impl& self, Result<json> r) {
                       self.on_listen_end(generation, std::move(r));
                     }));
    if (!sent) {
      logger->warn(prefix() + "could not open the listen stream: " + sent.error().message);
      return schedule_listen();
    }
    listen_id = sent.value();
    if (options.request_timeout > Millis(0)) {
      listen_ack_timer = ScopedTimer(
          executor, executor.post_after(options.request_timeout, [weak = weak_from_this(), generation] {
            auto self = weak.lock();
            if (!self || self->destroyed || self->listen_generation != generation) return;
            self->listen_ack_timer.release();
            if (!self->listen_acknowledged) {
              self->listen_abort.abort("no acknowledgement of the listen request");
            }
          }));
    }
  }

  void on_listen_acknowledged(const json& params) {
    if (!params.is_object()) return;
    json id;
    if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
      id = meta->value(kMetaSubscriptionId, json());
    }
    if (!is_listen_id(id)) return;
    listen_acknowledged = true;
    listen_ack_timer.reset();
    listen_retry = kListenRetryFirst;
    auto honoured = params.find("notifications");
    listen_honoured = honoured != params.end() && honoured->is_object() ? *honoured : json::object();
    settle_listen_waiting(std::nullopt);
  }

  void on_listen_end(std::uint64_t generation, Result<json> r) {
    if (generation != listen_generation) return;
    listen_id = nullptr;
    listen_ack_timer.reset();
    if (!listen_waiting.empty()) {
      settle_listen_waiting(r.ok() ? make_error(ErrorCode::protocol,
                                                "the server ended the listen stream before "
                                                "acknowledging it")
                                   : named(r.error()));
    }
    if (state != State::ready) return;
    if (!r.ok()) {
      const Error& e = r.error();
      if (e.is_wire() && e.wire_code == rpc_code::kMethodNotFound) {
        logger->info(prefix() + "no subscriptions/listen: list changes show at the next connect");
        return;
      }
      logger->warn(prefix() + "the listen stream ended: " + e.message + "; re-opening in " +
                   std::to_string(listen_retry.count()) + " ms");
    } else {
      logger->debug(prefix() + "the server closed the listen stream; re-opening in " +
                    std::to_string(listen_retry.count()) + " ms");
    }
    schedule_listen();
  }

  void schedule_listen() {
    const Millis delay = listen_retry;
    listen_retry = std::min(listen_retry * 2, kListenRetryMax);
    listen_retry_timer = ScopedTimer(
        executor, executor.post_after(delay, [weak = weak_from_this()] {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          self->listen_retry_timer.release();
          self->start_listen();
        }));
  }

  // Tools from elsewhere (a fresh cache entry) held to the rules of a listing.
  std::vector<json> adopt_tools(std::vector<json> tools) {
    auto op = std::make_shared<ListOp>();
    std::vector<json> kept;
    for (auto& tool : tools) {
      if (tool.is_object() && tool.value("name", json()).is_string() && keep_for_headers(op, tool)) {
        kept.push_back(std::move(tool));
      }
    }
    if (modern && options.http) header_params = std::move(op->header_params);
    return kept;
  }

  // --- requests ----------------------------------------------------------------------

  // What a paged list reads: the method, the page's array, the string field an entry must
  // have, the server capability that offers it, and what an entry is called in logs.
  struct ListKind {
    const char* method;
    const char* key;
    const char* id_field;
    const char* capability;
    const char* noun;
  };
  static constexpr ListKind kToolsList{"tools/list", "tools", "name", "tools", "tool"};
  static constexpr ListKind kResourcesList{"resources/list", "resources", "uri", "resources",
                                           "resource"};
  static constexpr ListKind kTemplatesList{"resources/templates/list", "resourceTemplates",
                                           "uriTemplate", "resources", "resource template"};
  static constexpr ListKind kPromptsList{"prompts/list", "prompts", "name", "prompts", "prompt"};

  struct ListOp {
    const ListKind* kind = &kToolsList;
    std::function<void(Result<std::vector<json>>)> done;
    AbortSignal signal;
    std::vector<json> entries;
    std::set<std::string> cursors;
    std::size_t pages = 0;
    std::map<std::string, std::vector<McpHeaderParam>> header_params;  // tools only
    json cache_hint;  // tools only: the first page's ttlMs / cacheScope (the 2026-07-28 wire)
    bool raw_schemas = false;  // tools only: list_tools_raw
  };

  // Whether the server's capabilities offer `capability`; true when they are unknown (a
  // stored verdict connects without a discover result).
  bool offers(const char* capability) const {
    return server.capabilities.empty() ||
           (server.capabilities.is_object() && server.capabilities.contains(capability));
  }

  void list(const ListKind& kind, std::function<void(Result<std::vector<json>>)> done,
            AbortSignal signal, bool raw_schemas = false) {
    if (state != State::ready) {
      post_to(std::move(done), Result<std::vector<json>>(not_ready(kind.method)));
      return;
    }
    // A server without the capability has none: an empty list, nothing asked.
    if (&kind != &kToolsList && !offers(kind.capability)) {
      post_to(std::move(done), Result<std::vector<json>>(std::vector<json>()));
      return;
    }
    auto op = std::make_shared<ListOp>();
    op->kind = &kind;
    op->done = std::move(done);
    op->signal = std::move(signal);
    op->raw_schemas = raw_schemas;
    request_page(op, std::nullopt);
  }

  void request_page(const std::shared_ptr<ListOp>& op, const std::optional<std::string>& cursor) {
    json params = cursor ? json_object({{"cursor", *cursor}}) : json(nullptr);
    RequestOptions ro;
    ro.timeout = options.request_timeout;
    ro.signal = op->signal;
    ro.raw_tool_schemas = op->raw_schemas;
    auto sent = send(
        op->kind->method, std::move(params), std::move(ro),
        guarded([op](Impl& self, Result<json> r) { self.on_page(op, std::move(r)); }));
    // Also reached from inside list(): post, never call back synchronously.
    if (!sent) finish_list(op, named(std::move(sent).error()));
  }

  void finish_list(const std::shared_ptr<ListOp>& op, Result<std::vector<json>> result) {
    if (result.ok() && op->kind == &kToolsList) {
      if (modern && options.http) header_params = std::move(op->header_params);
      tools_cache_hint = std::move(op->cache_hint);
    }
    post_to(std::move(op->done), std::move(result));
  }

  // The 2026-07-28 HTTP wire: a tool whose x-mcp-header annotations break the rules is
  // left out (and never called); the others' header parameters are kept for calls.
  bool keep_for_headers(const std::shared_ptr<ListOp>& op, const json& tool) {
    if (!modern || !options.http) return true;
    auto hp = x_mcp_header_params(tool);
    const std::string name = string_at(tool, "name");
    if (!hp.ok()) {
      logger->warn(prefix() + "leaving out tool \"" + name + "\": " + hp.error().message);
      return false;
    }
    if (!hp.value().empty()) op->header_params[name] = std::move(hp.value());
    return true;
  }

  void on_page(const std::shared_ptr<ListOp>& op, Result<json> answer) {
    const ListKind& kind = *op->kind;
    if (!answer.ok()) {
      // Unknown capabilities and a server without the method: it has none.
      if (&kind != &kToolsList && server.capabilities.empty() && op->pages == 0 &&
          answer.error().is_wire() && answer.error().wire_code == rpc_code::kMethodNotFound) {
        return finish_list(op, std::vector<json>());
      }
      return finish_list(op, named(std::move(answer).error()));
    }
    json& page = answer.value();
    ++op->pages;
    auto list_error = [&](std::string message) {
      finish_list(op, make_error(ErrorCode::protocol, std::move(message)));
    };
    if (!page.is_object()) {
      return list_error(std::string(kind.method) + " returned a non-object result: " +
                        detail::describe_json(page));
    }
    if (modern && op->pages == 1 && &kind == &kToolsList) {
      // SEP-2549: missing or negative ttlMs is 0 (stale at once), a missing scope private.
      std::int64_t ttl = 0;
      if (auto t = page.find("ttlMs"); t != page.end() && t->is_number_integer()) {
        ttl = std::max<std::int64_t>(0, t->get<std::int64_t>());
      }
      std::string scope = "private";
      if (auto c = page.find("cacheScope"); c != page.end() && c->is_string() &&
                                            c->get_ref<const std::string&>() == "public") {
        scope = "public";
      }
      op->cache_hint = json::object();
      op->cache_hint["ttlMs"] = ttl;
      op->cache_hint["cacheScope"] = std::move(scope);
    }
    auto entries = page.find(kind.key);
    if (entries == page.end() || !entries->is_array()) {
      return list_error(std::string(kind.method) + " result has no \"" + kind.key +
                        "\" array (page " + std::to_string(op->pages) + ")");
    }
    std::size_t index = 0;
    for (auto& entry : *entries) {
      std::string problem;
      if (!entry.is_object()) {
        problem = "not an object";
      } else if (auto id = entry.find(kind.id_field); id == entry.end() || !id->is_string()) {
        problem = std::string("no string \"") + kind.id_field + "\"";
      }
      if (!problem.empty()) {
        detail::restore_raw_schema(entry);
        logger->warn(prefix() + "ignoring " + kind.noun + " " + std::to_string(index) + " of " +
                     kind.method + " page " + std::to_string(op->pages) + ": " + problem + ": " +
                     detail::describe_json(entry));
      } else if (&kind != &kToolsList || keep_for_headers(op, entry)) {
        op->entries.push_back(std::move(entry));
      }
      ++index;
    }

    auto next = page.find("nextCursor");
    if (next == page.end() || next->is_null() ||
        (next->is_string() && next->get_ref<const std::string&>().empty())) {
      return finish_list(op, std::move(op->entries));
    }
    if (!next->is_string()) {
      return list_error(std::string(kind.method) + " returned a nextCursor that is not a string: " +
                        detail::describe_json(*next));
    }
    std::string cursor = next->get<std::string>();
    if (!op->cursors.insert(cursor).second) {
      return list_error(std::string(kind.method) + " returned the cursor \"" + cursor +
                        "\" twice; stopping to avoid an endless listing");
    }
    if (options.max_list_pages != 0 && op->pages >= options.max_list_pages) {
      return list_error(std::string(kind.method) + " still had more pages after " +
                        std::to_string(op->pages) + " pages; stopping");
    }
    request_page(op, cursor);
  }

  // What must hold of a request's (object) result: empty, or what is wrong with it.
  using ResultCheck = std::string (*)(const json& result);

  static std::string has_array(const json& result, const char* key) {
    auto it = result.find(key);
    return it != result.end() && it->is_array() ? std::string()
                                                : std::string("a result without a \"") + key + "\" array";
  }

  // A request whose answer must be an object that passes `check`; its failures (not ready,
  // refused arguments, errors, a bad shape) reach `done` named, never synchronously.
  void request_object(const std::string& method, const std::string& what, json params,
                      CallOptions call, ResultCheck check, std::function<void(Result<json>)> done) {
    RequestOptions ro;
    ro.timeout = call.timeout;
    ro.max_total_timeout = call.max_total_timeout;
    ro.signal = std::move(call.signal);
    ro.on_progress = std::move(call.on_progress);
    const std::size_t slot = add_object_call(std::move(done), what, check);
    auto sent = send(method, std::move(params), std::move(ro), ObjectAnswer{this, slot},
                     std::move(call.tool_definition));
    if (sent) return;
    auto unsent = std::move(object_calls[slot].done);
    release_object_call(slot);
    post_to(std::move(unsent), Result<json>(named(std::move(sent).error())));
  }

  // The calls request_object has in flight, by slot: the caller's callback and what its
  // answer must be. Slots are reused, so a call in steady state allocates nothing here.
  struct ObjectCall {
    std::function<void(Result<json>)> done;
    std::string what;
    ResultCheck check = nullptr;
  };
  std::vector<ObjectCall> object_calls;
  std::vector<std::size_t> free_object_calls;

  // The peer's callback for the call in `slot`. Two words and trivially copyable, so
  // std::function keeps it without allocating (a lambda holding a weak_ptr or the caller's
  // callback is allocated). A plain pointer to the session is safe: only the peer and a
  // ModernOp hold this callback; the peer goes with the session handle (~ClientSession) and
  // runs nothing after, and a ModernOp runs it from a member function of the live session.
  struct ObjectAnswer {
    Impl* session;
    std::size_t slot;
    void operator()(Result<json> r) const { session->on_object_answer(slot, std::move(r)); }
  };
  static_assert(std::is_trivially_copyable_v<ObjectAnswer> && sizeof(ObjectAnswer) <= 16);

  std::size_t add_object_call(std::function<void(Result<json>)> done, const std::string& what,
                              ResultCheck check) {
    std::size_t slot = object_calls.size();
    if (free_object_calls.empty()) {
      object_calls.emplace_back();
    } else {
      slot = free_object_calls.back();
      free_object_calls.pop_back();
    }
    ObjectCall& call = object_calls[slot];
    call.done = std::move(done);
    call.what = what;  // into the slot's buffer when it is large enough
    call.check = check;
    return slot;
  }

  // Frees a slot. Once no call is in flight, a table grown past 64 slots (a burst) is
  // dropped, so that the burst does not pin its memory.
  void release_object_call(std::size_t slot) {
    object_calls[slot].done = nullptr;
    free_object_calls.push_back(slot);
    if (free_object_calls.size() == object_calls.size() && object_calls.size() > 64) {
      object_calls.clear();
      object_calls.shrink_to_fit();
      free_object_calls.clear();
      free_object_calls.shrink_to_fit();
    }
  }

  void on_object_answer(std::size_t slot, Result<json> r) {
    auto self = weak_from_this().lock();  // held while `done` runs: it may drop the handle
    if (!self || destroyed) return;
    ObjectCall& call = object_calls[slot];
    auto done = std::move(call.done);
    if (!r.ok()) {
      r = named(std::move(r).error());
    } else {
      std::string problem = !r.value().is_object()
                                ? "a non-object result: " + detail::describe_json(r.value())
                            : call.check ? call.check(r.value())
                                         : std::string();
      if (!problem.empty()) r = make_error(ErrorCode::protocol, call.what + " returned " + problem);
    }
    release_object_call(slot);
    if (done) done(std::move(r));
  }

  // Refuses (posted) what cannot be sent: not ready, or a capability the server lacks.
  bool refuse(const std::string& what, const char* capability, std::function<void(Result<json>)>& done) {
    if (state != State::ready) {
      post_to(std::move(done), Result<json>(not_ready(what)));
      return true;
    }
    if (capability && !offers(capability)) {
      post_to(std::move(done), Result<json>(make_error(
                                   ErrorCode::invalid_argument,
                                   what + ": the server does not offer " + capability)));
      return true;
    }
    return false;
  }

  void call_tool(const std::string& name, json arguments, CallOptions call,
                 std::function<void(Result<json>)> done) {
    const std::string what = "tools/call " + name;
    if (refuse(what, nullptr, done)) return;
    if (arguments.is_null()) arguments = json::object();
    if (!arguments.is_object()) {
      post_to(std::move(done),
              Result<json>(make_error(ErrorCode::invalid_argument, what + ": arguments must be an object")));
      return;
    }
    json params = json::object();
    params["name"] = name;
    params["arguments"] = std::move(arguments);
    request_object("tools/call", "tools/call", std::move(params), std::move(call), nullptr, std::move(done));
  }

  void read_resource(const std::string& uri, CallOptions call, std::function<void(Result<json>)> done) {
    const std::string what = "resources/read " + uri;
    if (refuse(what, "resources", done)) return;
    request_object("resources/read", what, json_object({{"uri", uri}}), std::move(call),
                   [](const json& r) { return has_array(r, "contents"); }, std::move(done));
  }

  void get_prompt(const std::string& name, json arguments, CallOptions call,
                  std::function<void(Result<json>)> done) {
    const std::string what = "prompts/get " + name;
    if (refuse(what, "prompts", done)) return;
    if (arguments.is_null()) arguments = json::object();
    bool strings = arguments.is_object();
    for (const auto& [key, value] : arguments.items()) strings = strings && value.is_string();
    if (!strings) {
      post_to(std::move(done), Result<json>(make_error(
                                   ErrorCode::invalid_argument,
                                   what + ": arguments must be an object of strings")));
      return;
    }
    json params = json::object();
    params["name"] = name;
    if (!arguments.empty()) params["arguments"] = std::move(arguments);
    request_object("prompts/get", what, std::move(params), std::move(call),
                   [](const json& r) { return has_array(r, "messages"); }, std::move(done));
  }

  void complete(json ref, const std::string& argument, const std::string& value, json context,
                CallOptions call, std::function<void(Result<json>)> done) {
    const std::string what = "completion/complete " + argument;
    if (refuse(what, "completions", done)) return;
    const std::string type = ref.is_object() ? ref.value("type", std::string()) : std::string();
    const bool valid_ref = (type == "ref/prompt" && ref.contains("name") && ref["name"].is_string()) ||
                           (type == "ref/resource" && ref.contains("uri") && ref["uri"].is_string());
    if (!valid_ref || !(context.is_null() || context.is_object())) {
      post_to(std::move(done),
              Result<json>(make_error(ErrorCode::invalid_argument,
                                      what + ": ref must be {\"type\":\"ref/prompt\",\"name\":...} or "
                                             "{\"type\":\"ref/resource\",\"uri\":...} and the "
                                             "context an object of the arguments already given")));
      return;
    }
    json params = json::object();
    params["ref"] = std::move(ref);
    params["argument"] = json_object({{"name", argument}, {"value", value}});
    if (context.is_object() && !context.empty()) params["context"]["arguments"] = std::move(context);
    request_object("completion/complete", what, std::move(params), std::move(call),
                   [](const json& r) -> std::string {
                     auto c = r.find("completion");
                     if (c == r.end() || !c->is_object()) return "a result without a \"completion\" object";
                     return has_array(*c, "values");
                   },
                   std::move(done));
  }

  // resources/subscribe or resources/unsubscribe {uri} (the 2025 wire).
  void subscription(const std::string& uri, bool on, std::function<void(Status)> done) {
    const std::string method = on ? "resources/subscribe" : "resources/unsubscribe";
    const std::string what = method + " " + uri;
    std::function<void(Result<json>)> answered = [done = std::move(done)](Result<json> r) {
      done(r.ok() ? Status() : Status(std::move(r).error()));
    };
    if (refuse(what, "resources", answered)) return;
    auto resources = server.capabilities.find("resources");
    // A stored verdict leaves the capabilities unknown: ask (the stream says what it honours).
    const bool unknown = modern && server.capabilities.empty();
    if (!unknown && (resources == server.capabilities.end() || !is_true_at(*resources, "subscribe"))) {
      post_to(std::move(answered),
              Result<json>(make_error(ErrorCode::invalid_argument,
                                      what + ": the server does not offer resource subscriptions")));
      return;
    }
    if (modern) {
      // The 2026-07-28 wire has no resources/subscribe: the listen stream carries the set.
      if (on) {
        listen_resources.insert(uri);
        listen_waiting.emplace_back(uri, [answered = std::move(answered)](Status st) {
          answered(st.ok() ? Result<json>(json::object()) : Result<json>(std::move(st).error()));
        });
      } else {
        listen_resources.erase(uri);
        post_to(std::move(answered), Result<json>(json::object()));
      }
      restart_listen();
      return;
    }
    CallOptions call;
    call.timeout = options.request_timeout;
    request_object(method, what, json_object({{"uri", uri}}), std::move(call), nullptr,
                   std::move(answered));
  }

  void ping(std::function<void(Status)> done, Millis timeout) {
    if (state != State::ready) {
      post_to(std::move(done), Status(not_ready("ping")));
      return;
    }
    RequestOptions ro;
    ro.timeout = timeout;
    auto shared_done = std::make_shared<std::function<void(Status)>>(std::move(done));
    // The 2026-07-28 wire has no ping: server/discover is the cheapest request it has.
    auto sent = send(modern ? "server/discover" : "ping", nullptr, std::move(ro),
                              guarded([shared_done](Impl& self, Result<json> r) {
                                auto fn = std::move(*shared_done);
                                if (!fn) return;
                                fn(r.ok() ? Status() : Status(self.named(std::move(r).error())));
                              }));
    if (!sent) post_to(std::move(*shared_done), Status(named(std::move(sent).error())));
  }

  Result<json> request(const std::string& method, json params, RequestOptions ro,
                       ResponseCallback done) {
    if (state != State::ready) return not_ready(method);
    auto sent = send(method, std::move(params), std::move(ro),
                              guarded([done = std::move(done)](Impl& self, Result<json> r) {
                                if (!done) return;
                                if (!r.ok()) return done(self.named(std::move(r).error()));
                                done(std::move(r));
                              }));
    if (!sent) return named(std::move(sent).error());
    return sent;
  }

  void close() {
    if (connect_done) {
      return fail_connect(
          Error::make(ErrorCode::closed, "connection closed during the initialize handshake"));
    }
    state = State::closed;
    connect_timer.reset();
    stop_listen_timers();
    peer->close();  // idempotent
  }

  void stop_listen_timers() {
    listen_ack_timer.reset();
    listen_retry_timer.reset();
  }
};

std::shared_ptr<ClientSession> ClientSession::create(Executor& executor,
                                                     std::unique_ptr<Transport> transport,
                                                     ClientOptions options) {
  return std::shared_ptr<ClientSession>(
      new ClientSession(executor, std::move(transport), std::move(options)));
}

ClientSession::ClientSession(Executor& executor, std::unique_ptr<Transport> transport,
                             ClientOptions options)
    : impl_(std::make_shared<Impl>(executor, std::move(transport), std::move(options))) {}

ClientSession::~ClientSession() {
  impl_->destroyed = true;
  impl_->connect_timer.reset();
  impl_->stop_listen_timers();
  impl_->connect_done = nullptr;
  // Destroying the peer closes the transport and silences everything it had posted.
  impl_->peer.reset();
}

void ClientSession::connect(std::function<void(Status)> done) { impl_->connect(std::move(done)); }

void ClientSession::list_tools(std::function<void(Result<std::vector<json>>)> done,
                               AbortSignal signal) {
  impl_->list(Impl::kToolsList, std::move(done), std::move(signal));
}

void ClientSession::list_tools_raw(std::function<void(Result<std::vector<json>>)> done,
                                   AbortSignal signal) {
  impl_->list(Impl::kToolsList, std::move(done), std::move(signal), /*raw_schemas=*/true);
}

void ClientSession::list_resources(std::function<void(Result<std::vector<json>>)> done,
                                   AbortSignal signal) {
  impl_->list(Impl::kResourcesList, std::move(done), std::move(signal));
}

void ClientSession::list_resource_templates(std::function<void(Result<std::vector<json>>)> done,
                                            AbortSignal signal) {
  impl_->list(Impl::kTemplatesList, std::move(done), std::move(signal));
}

void ClientSession::list_prompts(std::function<void(Result<std::vector<json>>)> done,
                                 AbortSignal signal) {
  impl_->list(Impl::kPromptsList, std::move(done), std::move(signal));
}

void ClientSession::read_resource(const std::string& uri, CallOptions options,
                                  std::function<void(Result<json>)> done) {
  impl_->read_resource(uri, std::move(options), std::move(done));
}

void ClientSession::subscribe_resource(const std::string& uri, std::function<void(Status)> done) {
  impl_->subscription(uri, true, std::move(done));
}

void ClientSession::unsubscribe_resource(const std::string& uri, std::function<void(Status)> done) {
  impl_->subscription(uri, false, std::move(done));
}

void ClientSession::get_prompt(const std::string& name, json arguments, CallOptions options,
                               std::function<void(Result<json>)> done) {
  impl_->get_prompt(name, std::move(arguments), std::move(options), std::move(done));
}

void ClientSession::complete(json ref, const std::string& argument, const std::string& value,
                             json context, CallOptions options,
                             std::function<void(Result<json>)> done) {
  impl_->complete(std::move(ref), argument, value, std::move(context), std::move(options),
                  std::move(done));
}

void ClientSession::call_tool(const std::string& name, json arguments, CallOptions options,
                              std::function<void(Result<json>)> done) {
  impl_->call_tool(name, std::move(arguments), std::move(options), std::move(done));
}

void ClientSession::ping(std::function<void(Status)> done, Millis timeout) {
  impl_->ping(std::move(done), timeout);
}

Result<json> ClientSession::request(const std::string& method, json params, RequestOptions options,
                                    ResponseCallback done) {
  return impl_->request(method, std::move(params), std::move(options), std::move(done));
}

void ClientSession::close() { impl_->close(); }

ClientSession::State ClientSession::state() const { return impl_->state; }

const ServerInfo& ClientSession::server() const { return impl_->server; }

const std::string& ClientSession::name() const { return impl_->options.server_name; }

RpcPeer& ClientSession::peer() { return *impl_->peer; }

json ClientSession::tools_cache_hint() const { return impl_->tools_cache_hint; }

std::vector<json> ClientSession::adopt_tools(std::vector<json> tools) {
  return impl_->adopt_tools(std::move(tools));
}

}  // namespace mcprt
