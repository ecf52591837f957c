#include "http_front.hpp"

#include <arpa/inet.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <vector>

namespace mcprt::demo {
namespace {

constexpr const char* kMcpPath = "/mcp";
// The request headers every answer allows (CORS); a preflight adds the ones it asks for.
constexpr const char* kAllowHeaders =
    "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, "
    "last-event-id, mcp-method, mcp-name, mcp-param-region";
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
// Server-defined JSON-RPC code for transport-level refusals (no session, bad headers).
constexpr int kTransportError = -32000;
constexpr std::size_t kMaxBodyBytes = 16u * 1024 * 1024;
constexpr std::size_t kMaxSessions = 256;
// Long SSE answers hold a pool thread each; httplib's default (8 here) is too few.
constexpr std::size_t kWorkerThreads = 32;
// Open standalone GET streams (one per session) hold a pool thread each: at most this many
// at once, a quarter of the pool, so that POSTs always find a thread; beyond it GET is 405.
constexpr std::size_t kMaxGetStreams = 8;
// How often a waiting answer checks that its client is still connected.
constexpr auto kDisconnectCheck = std::chrono::milliseconds(200);

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// The media type of a Content-Type value or of one Accept entry, lower-cased, without
// parameters.
std::string media_type(std::string_view value) {
  return lower(trim(value.substr(0, value.find(';'))));
}

bool accept_lists(const std::string& accept, std::string_view type) {
  std::string_view rest = accept;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    if (media_type(rest.substr(0, comma)) == type) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

bool is_valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

std::string id_key(const json& id) { return id.dump(); }

// A request DemoServer answers with this same id (valid envelope and id), or null.
const json* request_id(const json& m) {
  if (!m.is_object() || !m.contains("method")) return nullptr;
  auto id = m.find("id");
  if (id == m.end() || !is_valid_id(*id)) return nullptr;
  return &*id;
}

bool is_method(const json& m, std::string_view method) {
  if (!m.is_object()) return false;
  auto it = m.find("method");
  return it != m.end() && it->is_string() && it->get_ref<const std::string&>() == method;
}

// A tools/call that asked for progress: answered with a stream if it keeps running.
bool wants_progress(const json& m) {
  if (!is_method(m, "tools/call")) return false;
  auto params = m.find("params");
  if (params == m.end() || !params->is_object()) return false;
  auto meta = params->find("_meta");
  return meta != params->end() && meta->is_object() && meta->contains("progressToken");
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

bool is_response(const json& m) {
  return m.is_object() && !m.contains("method") && (m.contains("result") || m.contains("error"));
}

std::string sse_event(std::uint64_t id, const json& m) {
  return "event: message\nid: " + std::to_string(id) + "\ndata: " + dump(m) + "\n\n";
}

// RFC 4648 base64 (standard alphabet, padding optional); nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFFu));
    }
  }
  return out;
}

// An Mcp-Name / Mcp-Param-* value as sent: "=?base64?...?=" is decoded (MCP 2026-07-28,
// Streamable HTTP, value encoding). Nullopt = a sentinel with bad base64.
std::optional<std::string> decode_header_value(const std::string& v) {
  constexpr std::string_view kOpen = "=?base64?";
  constexpr std::string_view kClose = "?=";
  if (v.size() >= kOpen.size() + kClose.size() && v.compare(0, kOpen.size(), kOpen) == 0 &&
      v.compare(v.size() - kClose.size(), kClose.size(), kClose) == 0) {
    return base64_decode(
        std::string_view(v).substr(kOpen.size(), v.size() - kOpen.size() - kClose.size()));
  }
  return v;
}

// The header form of an argument: strings as is, integers in decimal, booleans
// true/false (anything else in its JSON form).
std::string header_form(const json& arg) {
  if (arg.is_string()) return arg.get<std::string>();
  if (arg.is_boolean()) return arg.get<bool>() ? "true" : "false";
  return dump(arg);
}

std::string random_hex(std::size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) {
    const auto b = static_cast<unsigned>(rd()) & 0xFFu;
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

void refuse(httplib::Response& res, int status, int code, const std::string& message,
            const json& id = nullptr, const json& data = nullptr) {
  res.status = status;
  json error{{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = data;
  res.set_content(dump(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}}),
                  "application/json");
}

bool protocol_version_supported(const std::string& v) {
  return std::any_of(std::begin(kSupportedProtocolVersions), std::end(kSupportedProtocolVersions),
                     [&](const char* s) { return v == s; });
}

// "[::1]:8080" → "[::1]", "127.0.0.1:8080" → "127.0.0.1".
std::string host_name_of(const std::string& host_header) {
  if (!host_header.empty() && host_header.front() == '[') {
    const auto close = host_header.find(']');
    return lower(host_header.substr(0, close == std::string::npos ? host_header.size() : close + 1));
  }
  return lower(host_header.substr(0, host_header.find(':')));
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  const std::string h = lower(host);
  if (h == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

// The messages of one POST on their way back, and which of its requests still run.
struct HttpFrontEnd::Exchange {
  std::vector<json> out;
  std::size_t written = 0;           // SSE: messages already sent
  std::map<std::string, json> pending;  // id key → id, requests not answered yet
  bool closed = false;               // the session ended: send what is there and stop
  std::uint64_t next_event_id = 1;
  // A stream_answer provider waits on data_cv_ for this exchange's messages (set under
  // mutex_ before its first wait). Until then a message needs no wake-up: an answer made
  // while its POST is handled would otherwise wake every waiting stream, an open GET
  // stream's included, once per call.
  bool waited = false;
};

struct HttpFrontEnd::Session {
  std::string id;
  std::unique_ptr<DemoServer> server;
  // Request id key → the POST waiting for its answer (for cancellation).
  std::map<std::string, std::weak_ptr<Exchange>> inflight;
  // The standalone GET stream while it is open (one per session).
  std::weak_ptr<Exchange> get_stream;
};

// TimerQueue behind the front end's mutex: every call arrives with the mutex held (from a
// DemoServer), and the timer thread is woken to recompute its next deadline.
class HttpFrontEnd::LockedScheduler final : public Scheduler {
 public:
  explicit LockedScheduler(std::condition_variable& cv) : cv_(cv) {}
  TimerId call_after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    const TimerId id = queue_.call_after(delay, std::move(fn));
    cv_.notify_all();
    return id;
  }
  void cancel(TimerId id) override { queue_.cancel(id); }
  TimerQueue& queue() { return queue_; }

 private:
  TimerQueue queue_;
  std::condition_variable& cv_;
};

HttpFrontEnd::HttpFrontEnd(HttpFrontOptions options)
    : options_(std::move(options)),
      http_(std::make_unique<httplib::Server>()),
      scheduler_(std::make_unique<LockedScheduler>(timer_cv_)) {
  // One tool-list toggle, listener registry and requestState store for every session and
  // every stateless request.
  if (!options_.server.shared) options_.server.shared = std::make_shared<DemoShared>();
  // Requests are logged here, as they arrive, also those refused before any DemoServer
  // sees them (no session, header checks).
  on_request_ = std::move(options_.server.on_request);
  options_.server.on_request = nullptr;
  auto& svr = *http_;
  svr.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  svr.set_payload_max_length(kMaxBodyBytes);
  svr.set_keep_alive_timeout(2);  // bounds how long stop() waits for idle connections
  // httplib closes a kept-alive connection after 5 requests by default: a client making
  // calls one after another would then open a connection every 5 calls and leave a
  // TIME-WAIT socket behind each time. Idle connections still close after the timeout.
  svr.set_keep_alive_max_count(std::numeric_limits<std::size_t>::max());
  // Replies go out as several small writes (chunked provider): without TCP_NODELAY a
  // reused connection stalls ~40 ms per call on Nagle + delayed ACK.
  svr.set_tcp_nodelay(true);
  // Applied to every response, errors and unknown paths included, so a browser can read
  // whatever went wrong.
  svr.set_default_headers({
      {"Access-Control-Allow-Origin", "*"},
      {"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"},
      {"Access-Control-Allow-Headers", kAllowHeaders},
      {"Access-Control-Expose-Headers", "mcp-session-id, www-authenticate"},
      {"Access-Control-Max-Age", "600"},
  });
  // The preflight allows whatever request headers the page asks for (a demo page adds a
  // server with its own headers: an API key, X-…), bounded and token characters only.
  svr.Options(kMcpPath, [](const httplib::Request& req, httplib::Response& res) {
    res.status = 204;
    const std::string asked = req.get_header_value("Access-Control-Request-Headers");
    const bool plain = asked.size() <= 1024 && std::all_of(asked.begin(), asked.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                                c == '_' || c == ',' || c == ' ';
                       });
    if (!asked.empty() && plain) {
      res.headers.erase("Access-Control-Allow-Headers");
      res.set_header("Access-Control-Allow-Headers", std::string(kAllowHeaders) + ", " + asked);
    }
  });
  svr.Post(kMcpPath, [this](const httplib::Request& q, httplib::Response& r) { on_post(q, r); });
  svr.Get(kMcpPath, [this](const httplib::Request& q, httplib::Response& r) { on_get(q, r); });
  svr.Delete(kMcpPath,
             [this](const httplib::Request& q, httplib::Response& r) { on_delete(q, r); });
  if (options_.add_routes) options_.add_routes(svr);
  timer_thread_ = std::thread([this] { timer_loop(); });
}

HttpFrontEnd::~HttpFrontEnd() {
  stop();
  if (timer_thread_.joinable()) timer_thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  while (!sessions_.empty()) end_session_locked(sessions_.begin());
  stateless_.clear();
}

int HttpFrontEnd::bind(std::string& error) {
  if (!is_loopback_host(options_.host)) {
    error = "refusing to listen on \"" + options_.host +
            "\": only loopback addresses are allowed (127.0.0.1, ::1, localhost)";
    return -1;
  }
  if (options_.port < 0 || options_.port > 65535) {
    error = "invalid port " + std::to_string(options_.port) + " (expected 0..65535)";
    return -1;
  }
  if (options_.host.find(':') != std::string::npos) http_->set_address_family(AF_INET6);
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
  } else {
    port_ = http_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ < 0) {
    error = "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
            " (address in use or not available)";
  }
  return port_;
}

bool HttpFrontEnd::run() {
  run_state_ = 1;
  const bool ok = !stop_requested_ && port_ >= 0 && http_->listen_after_bind();
  run_state_ = 2;
  return ok || stop_requested_;
}

void HttpFrontEnd::stop() {
  stop_requested_ = true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  data_cv_.notify_all();
  timer_cv_.notify_all();
  // httplib's stop() is a no-op until listen_after_bind() marked the server running, so
  // wait for that while run() is on its way there (a short window after start-up).
  while (run_state_ == 1 && !http_->is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  http_->stop();
}

std::string HttpFrontEnd::url() const {
  const bool v6 = options_.host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + options_.host + "]" : options_.host) + ":" +
         std::to_string(port_) + kMcpPath;
}

void HttpFrontEnd::timer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (auto due = scheduler_->queue().next_due()) {
      timer_cv_.wait_until(lock, *due);
    } else {
      timer_cv_.wait(lock);
    }
    if (stopping_) break;
    scheduler_->queue().run_due(TimerQueue::Clock::now());
  }
}

bool HttpFrontEnd::host_allowed(const httplib::Request& req) const {
  if (!req.has_header("Host")) return true;  // HTTP/1.0 without Host: nothing to check
  std::string name = host_name_of(req.get_header_value("Host"));
  if (name.size() > 2 && name.front() == '[') name = name.substr(1, name.size() - 2);
  return is_loopback_host(name);
}

void HttpFrontEnd::on_post(const httplib::Request& req, httplib::Response& res) {
  if (!host_allowed(req)) {
    return refuse(res, 403, kTransportError,
                  "Forbidden: Host \"" + req.get_header_value("Host") + "\" is not a loopback name");
  }
  if (options_.admit && !options_.admit(req, res)) return;
  const std::string accept = req.get_header_value("Accept");
  if (!accept_lists(accept, "application/json") || !accept_lists(accept, "text/event-stream")) {
    return refuse(res, 406, kTransportError,
                  "Not Acceptable: Accept must list both application/json and "
                  "text/event-stream (got \"" + accept + "\")");
  }
  if (media_type(req.get_header_value("Content-Type")) != "application/json") {
    return refuse(res, 415, kTransportError,
                  "Unsupported Media Type: Content-Type must be application/json (got \"" +
                      req.get_header_value("Content-Type") + "\")");
  }
  // The 2025 header rule: a version this server's legacy side does not speak is refused.
  auto legacy_version_refused = [&] {
    if (!req.has_header("MCP-Protocol-Version")) return false;
    const std::string v = req.get_header_value("MCP-Protocol-Version");
    if (protocol_version_supported(v)) return false;
    refuse(res, 400, kTransportError, "Bad Request: unsupported MCP-Protocol-Version \"" + v + "\"");
    return true;
  };
  const ProtocolMode mode = options_.server.protocol;
  json body = json::parse(req.body, nullptr, false);
  if (on_request_) {
    auto note = [&](const json& m) {
      if (request_id(m) != nullptr && m["method"].is_string()) {
        on_request_(m["method"].get_ref<const std::string&>());
      }
    };
    if (body.is_array()) {
      for (const auto& m : body) note(m);
    } else {
      note(body);
    }
  }
  if (mode == ProtocolMode::legacy && legacy_version_refused()) return;
  if (body.is_discarded()) {
    return refuse(res, 400, kParseError, "Parse error: the body is not valid JSON");
  }
  if (mode != ProtocolMode::legacy) {
    // Dual: a POST without a session whose message is modern (by _meta, method or header)
    // is served statelessly; initialize and session traffic stay on the 2025 path.
    const bool modern =
        mode == ProtocolMode::modern ||
        (!req.has_header("Mcp-Session-Id") && body.is_object() && !is_method(body, "initialize") &&
         (DemoServer::is_modern_request(mode, body) ||
          req.get_header_value("MCP-Protocol-Version") == kModernProtocolVersion));
    if (modern) return on_modern_post(req, res, body);
    if (legacy_version_refused()) return;
  }
  const bool batch = body.is_array();
  std::vector<json> messages;
  if (batch) {
    if (body.empty()) return refuse(res, 400, kInvalidRequest, "Invalid Request: empty batch");
    for (auto& m : body) messages.push_back(std::move(m));
  } else {
    messages.push_back(std::move(body));
  }
  const bool initialize = std::any_of(messages.begin(), messages.end(),
                                      [](const json& m) { return is_method(m, "initialize"); });
  if (initialize && messages.size() > 1) {
    return refuse(res, 400, kInvalidRequest,
                  "Invalid Request: initialize must be sent alone, not in a batch");
  }

  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return refuse(res, 503, kTransportError, "Service Unavailable: shutting down");
  Session* session = nullptr;
  if (initialize) {
    if (sessions_.size() >= kMaxSessions) {
      return refuse(res, 503, kTransportError,
                    "Service Unavailable: too many sessions (" + std::to_string(kMaxSessions) +
                        "); DELETE unused ones");
    }
    auto s = std::make_unique<Session>();
    s->id = random_hex(16);
    s->server = std::make_unique<DemoServer>(*scheduler_, options_.server);
    session = s.get();
    // Resource updates belong to no request: they go on the GET stream while it is open
    // and are dropped otherwise (2025-11-25 lets a server do either).
    s->server->set_notify([this, session](const json& m) {
      if (auto stream = session->get_stream.lock()) {
        stream->out.push_back(m);
        if (stream->waited) data_cv_.notify_all();
      }
    });
    sessions_.emplace(s->id, std::move(s));
  } else {
    if (!req.has_header("Mcp-Session-Id")) {
      return refuse(res, 400, kTransportError,
                    "Bad Request: no Mcp-Session-Id header (send initialize first)");
    }
    auto it = sessions_.find(req.get_header_value("Mcp-Session-Id"));
    if (it == sessions_.end()) {
      return refuse(res, 404, kTransportError,
                    "Not Found: unknown or expired session \"" +
                        req.get_header_value("Mcp-Session-Id") + "\"; initialize again");
    }
    session = it->second.get();
  }
  const std::string session_id = session->id;

  auto ex = std::make_shared<Exchange>();
  // Runs with mutex_ held: during handle() or from the timer thread.
  DemoServer::Send send = [this, ex, session](const json& m) {
    ex->out.push_back(m);
    if (m.is_object() && (m.contains("result") || m.contains("error"))) {
      if (auto id = m.find("id"); id != m.end()) {
        const std::string key = id_key(*id);
        if (ex->pending.erase(key) > 0) session->inflight.erase(key);
      }
    }
    if (ex->waited) data_cv_.notify_all();
  };
  bool progress = false;
  for (const auto& m : messages) {
    if (const json* id = request_id(m)) {
      ex->pending.emplace(id_key(*id), *id);
      session->inflight[id_key(*id)] = ex;
      progress = progress || wants_progress(m);
    }
    session->server->handle(m, send);
    if (is_method(m, "notifications/cancelled")) {
      // The task stopped without answering; its POST must stop waiting for it.
      const json& params = m.contains("params") ? m["params"] : json();
      if (params.is_object() && params.contains("requestId")) {
        const std::string key = id_key(params["requestId"]);
        auto it = session->inflight.find(key);
        if (it != session->inflight.end()) {
          if (auto waiting = it->second.lock()) waiting->pending.erase(key);
          session->inflight.erase(it);
          data_cv_.notify_all();
        }
      }
    }
  }

  if (initialize) {
    // A delayed initialize (--startup-delay-ms) has no answer yet; it always succeeds.
    const bool ok = ex->out.empty() ? !ex->pending.empty() : ex->out.front().contains("result");
    if (ok) {
      res.set_header("Mcp-Session-Id", session_id);
      log("session " + session_id + " created");
    } else {
      sessions_.erase(session_id);  // a failed initialize leaves no session behind
    }
  }
  // Messages that are not answers (list_changed from toggle_tool, a request to the client
  // from an input tool) need an SSE answer.
  const bool extra = std::any_of(ex->out.begin(), ex->out.end(),
                                 [](const json& m) { return !is_response(m); });
  if (ex->pending.empty()) {
    if (ex->out.empty()) {
      res.status = 202;
      return;
    }
    res.status = 200;
    if (extra) {
      std::string events;
      for (const auto& m : ex->out) events += sse_event(ex->next_event_id++, m);
      res.set_header("Cache-Control", "no-cache");
      res.set_content(events, "text/event-stream");
      return;
    }
    const json answer = (!batch && ex->out.size() == 1) ? ex->out.front() : json(ex->out);
    res.set_content(dump(answer), "application/json");
    return;
  }
  lock.unlock();
  stream_answer(res, ex, progress || extra, batch,
                [this, ex, session_id] { abandon_locked(*ex, session_id); }, nullptr);
}

void HttpFrontEnd::on_modern_post(const httplib::Request& req, httplib::Response& res,
                                  const json& message) {
  if (!message.is_object()) {
    return refuse(res, 400, kInvalidRequest,
                  "Invalid Request: 2026-07-28 has no batches; send one JSON-RPC object per POST");
  }
  const json* id = request_id(message);
  if (id == nullptr) {
    if (message.contains("method") && message.contains("id")) {
      return refuse(res, 400, kInvalidRequest,
                    "Invalid Request: \"id\" must be a string or an integer");
    }
    // Notifications and responses: none is defined from client to server on this wire.
    if (message.contains("method") || is_response(message)) {
      res.status = 202;
      return;
    }
    return refuse(res, 400, kInvalidRequest,
                  "Invalid Request: expected a JSON-RPC request with a string or integer id");
  }
  const json& method_value = message["method"];
  if (!method_value.is_string()) {
    return refuse(res, 400, kInvalidRequest, "Invalid Request: \"method\" must be a string", *id);
  }
  const std::string method = method_value.get<std::string>();
  const json params = message.contains("params") ? message["params"] : json(nullptr);
  // A refusal before the request reaches a DemoServer still counts as a request received.
  auto refuse_request = [&](int status, int code, const std::string& why,
                            const json& data = nullptr) {
    log("refused " + method + " (" + std::to_string(status) + ", " + std::to_string(code) +
        "): " + why);
    refuse(res, status, code, why, *id, data);
  };
  if (auto refusal = DemoServer::check_modern(method, params)) {
    return refuse_request(refusal->code == -32601 ? 404 : 400, refusal->code, refusal->message,
                          refusal->data);
  }
  const std::string version = params["_meta"][kMetaProtocolVersion].get<std::string>();
  if (!req.has_header("MCP-Protocol-Version") ||
      req.get_header_value("MCP-Protocol-Version") != version) {
    return refuse_request(400, kHeaderMismatch,
                          "Header mismatch: MCP-Protocol-Version \"" +
                              req.get_header_value("MCP-Protocol-Version") +
                              "\" must equal params._meta protocolVersion \"" + version + "\"");
  }
  if (!req.has_header("Mcp-Method") || req.get_header_value("Mcp-Method") != method) {
    return refuse_request(400, kHeaderMismatch,
                          "Header mismatch: Mcp-Method \"" + req.get_header_value("Mcp-Method") +
                              "\" must equal the method \"" + method + "\"");
  }

  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return refuse(res, 503, kTransportError, "Service Unavailable: shutting down");
  auto server = std::make_unique<DemoServer>(*scheduler_, options_.server);
  // Mcp-Name mirrors params.name (tools/call, prompts/get) or params.uri (resources/read).
  if (method == "tools/call" || method == "prompts/get" || method == "resources/read") {
    const char* field = method == "resources/read" ? "uri" : "name";
    const json& value = params.contains(field) ? params[field] : json();
    const auto sent_name = decode_header_value(req.get_header_value("Mcp-Name"));
    if (value.is_string() &&
        (!req.has_header("Mcp-Name") || !sent_name || *sent_name != value.get<std::string>())) {
      lock.unlock();
      return refuse_request(400, kHeaderMismatch,
                            "Header mismatch: Mcp-Name \"" + req.get_header_value("Mcp-Name") +
                                "\" must equal params." + field + " \"" +
                                value.get<std::string>() + "\"");
    }
  }
  if (method == "tools/call") {
    const json& name = params.contains("name") ? params["name"] : json();
    // x-mcp-header: each annotated argument must arrive as Mcp-Param-<Name> too.
    const json& args = params.contains("arguments") && params["arguments"].is_object()
                           ? params["arguments"]
                           : json::object();
    for (const auto& tool : server->listed_tools(true)) {
      if (!name.is_string() || tool.value("name", std::string()) != name.get<std::string>()) continue;
      const json props = tool["inputSchema"].value("properties", json::object());
      for (const auto& [prop, schema] : props.items()) {
        if (!schema.is_object() || !schema.contains("x-mcp-header") ||
            !schema["x-mcp-header"].is_string()) {
          continue;
        }
        const std::string header = "Mcp-Param-" + schema["x-mcp-header"].get<std::string>();
        const bool has_arg = args.contains(prop) && !args[prop].is_null();
        std::string why;
        if (!has_arg && req.has_header(header)) {
          why = header + " was sent but arguments." + prop + " is absent";
        } else if (has_arg && !req.has_header(header)) {
          why = header + " is missing (arguments." + prop + " is " + dump(args[prop]) + ")";
        } else if (has_arg) {
          const auto sent = decode_header_value(req.get_header_value(header));
          if (!sent) {
            why = header + " has a malformed =?base64?...?= value";
          } else if (*sent != header_form(args[prop])) {
            why = header + " \"" + *sent + "\" does not match arguments." + prop + " " +
                  dump(args[prop]);
          }
        }
        if (!why.empty()) {
          lock.unlock();
          return refuse_request(400, kHeaderMismatch, "Header mismatch: " + why);
        }
      }
    }
  }

  auto ex = std::make_shared<Exchange>();
  DemoServer::Send send = [this, ex](const json& m) {
    ex->out.push_back(m);
    if (is_response(m)) {
      if (auto rid = m.find("id"); rid != m.end()) ex->pending.erase(id_key(*rid));
    }
    if (ex->waited) data_cv_.notify_all();
  };
  // drop_listen: the stream ends without a result.
  DemoServer::Close close = [this, weak = std::weak_ptr<Exchange>(ex)] {
    if (auto e = weak.lock()) {
      e->closed = true;
      e->pending.clear();
    }
    data_cv_.notify_all();
  };
  ex->pending.emplace(id_key(*id), *id);
  server->handle(message, send, close);
  if (ex->pending.empty()) {
    res.status = 200;
    if (ex->out.size() == 1) {
      res.set_content(dump(ex->out.front()), "application/json");
    } else {
      std::string events;
      for (const auto& m : ex->out) events += sse_event(ex->next_event_id++, m);
      res.set_header("Cache-Control", "no-cache");
      res.set_content(events, "text/event-stream");
    }
    return;  // the DemoServer goes with this POST: stateless
  }
  // Still running (a listen stream, a slow_task): the DemoServer lives as long as the
  // response; a client that goes away takes it (and its listens and tasks) with it.
  const std::uint64_t key = next_stateless_++;
  stateless_.emplace(key, std::move(server));
  lock.unlock();
  res.set_header("X-Accel-Buffering", "no");
  stream_answer(res, ex, true, false, [this, key] { stateless_.erase(key); },
                [this, key] {
                  std::lock_guard<std::mutex> guard(mutex_);
                  stateless_.erase(key);
                });
}

void HttpFrontEnd::stream_answer(httplib::Response& res, const std::shared_ptr<Exchange>& ex,
                                 bool sse, bool batch, std::function<void()> abandon,
                                 std::function<void()> release) {
  res.status = 200;
  if (sse) res.set_header("Cache-Control", "no-cache");
  auto provider = [this, ex, sse, batch, abandon](std::size_t, httplib::DataSink& sink) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (sse) {
        while (ex->written < ex->out.size()) {
          const std::string event = sse_event(ex->next_event_id++, ex->out[ex->written++]);
          lock.unlock();
          const bool ok = sink.write(event.data(), event.size());
          lock.lock();
          if (!ok) {
            abandon();
            return false;
          }
        }
      }
      if (ex->pending.empty() || ex->closed || stopping_) {
        std::string tail;
        if (!sse && !ex->out.empty()) {
          tail = dump((!batch && ex->out.size() == 1) ? ex->out.front() : json(ex->out));
        }
        lock.unlock();
        // A cancelled JSON answer ends empty: the client stopped waiting for it.
        if (!tail.empty() && !sink.write(tail.data(), tail.size())) return false;
        sink.done();
        return true;
      }
      ex->waited = true;
      data_cv_.wait_for(lock, kDisconnectCheck);
      lock.unlock();
      const bool connected = sink.is_writable();
      lock.lock();
      if (!connected) {
        abandon();
        return false;
      }
    }
  };
  httplib::ContentProviderResourceReleaser releaser;
  if (release) releaser = [release](bool) { release(); };
  res.set_chunked_content_provider(sse ? "text/event-stream" : "application/json", provider,
                                   releaser);
}

void HttpFrontEnd::abandon_locked(Exchange& ex, const std::string& session_id) {
  auto it = sessions_.find(session_id);
  if (it == sessions_.end()) {
    ex.pending.clear();
    return;
  }
  Session& session = *it->second;
  for (const auto& [key, id] : ex.pending) {
    session.inflight.erase(key);
    log("client of request " + key + " disconnected; cancelling it");
    session.server->handle(json{{"jsonrpc", "2.0"},
                                {"method", "notifications/cancelled"},
                                {"params", {{"requestId", id}, {"reason", "client disconnected"}}}},
                           DemoServer::Send());
  }
  ex.pending.clear();
}

void HttpFrontEnd::end_session_locked(
    std::map<std::string, std::unique_ptr<Session>>::iterator it) {
  for (auto& [key, weak] : it->second->inflight) {
    if (auto ex = weak.lock()) ex->closed = true;
  }
  if (auto stream = it->second->get_stream.lock()) stream->closed = true;
  sessions_.erase(it);  // the DemoServer stops its tasks, sending nothing more
  data_cv_.notify_all();
}

void HttpFrontEnd::on_get(const httplib::Request& req, httplib::Response& res) {
  if (!host_allowed(req)) return refuse(res, 403, kTransportError, "Forbidden: Host not loopback");
  if (options_.admit && !options_.admit(req, res)) return;
  if (options_.server.protocol == ProtocolMode::modern) {
    res.set_header("Allow", "POST, OPTIONS");
    return refuse(res, 405, kTransportError,
                  "Method Not Allowed: 2026-07-28 has no GET stream (use subscriptions/listen)");
  }
  // The session's standalone SSE stream (2025-11-25 "Listening for Messages from the
  // Server"). It carries what belongs to no request (notifications/resources/updated of
  // the session's subscriptions) and stays open until the session ends or the client goes
  // away; offering it also spares browsers a refused request (which Chromium logs as an
  // error).
  if (!req.has_header("Mcp-Session-Id")) {
    return refuse(res, 400, kTransportError, "Bad Request: no Mcp-Session-Id header");
  }
  if (!accept_lists(req.get_header_value("Accept"), "text/event-stream")) {
    return refuse(res, 406, kTransportError, "Not Acceptable: Accept must list text/event-stream");
  }
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = sessions_.find(req.get_header_value("Mcp-Session-Id"));
  if (it == sessions_.end()) {
    return refuse(res, 404, kTransportError, "Not Found: unknown or expired session");
  }
  Session& session = *it->second;
  if (!session.get_stream.expired()) {
    return refuse(res, 409, kTransportError, "Conflict: this session's GET stream is already open");
  }
  if (open_get_streams_ >= kMaxGetStreams) {
    res.set_header("Allow", "POST, DELETE, OPTIONS");
    return refuse(
        res, 405, kTransportError,
        "Method Not Allowed: " + std::to_string(kMaxGetStreams) + " GET streams are open already");
  }
  auto ex = std::make_shared<Exchange>();
  ex->pending.emplace("get", nullptr);  // never answered: open until closed
  session.get_stream = ex;
  ++open_get_streams_;
  lock.unlock();
  res.set_header("X-Accel-Buffering", "no");
  stream_answer(
      res, ex, /*sse=*/true, /*batch=*/false, [] {},
      [this] {
        std::lock_guard<std::mutex> guard(mutex_);
        --open_get_streams_;
      });
}

void HttpFrontEnd::on_delete(const httplib::Request& req, httplib::Response& res) {
  if (!host_allowed(req)) return refuse(res, 403, kTransportError, "Forbidden: Host not loopback");
  if (options_.admit && !options_.admit(req, res)) return;
  if (options_.server.protocol == ProtocolMode::modern ||
      (options_.server.protocol == ProtocolMode::dual && !req.has_header("Mcp-Session-Id"))) {
    res.set_header("Allow", options_.server.protocol == ProtocolMode::modern ? "POST, OPTIONS"
                                                                             : "POST, DELETE, OPTIONS");
    return refuse(res, 405, kTransportError,
                  "Method Not Allowed: 2026-07-28 has no sessions to delete");
  }
  if (!req.has_header("Mcp-Session-Id")) {
    return refuse(res, 400, kTransportError, "Bad Request: no Mcp-Session-Id header");
  }
  const std::string id = req.get_header_value("Mcp-Session-Id");
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    return refuse(res, 404, kTransportError, "Not Found: unknown or expired session");
  }
  end_session_locked(it);
  log("session " + id + " deleted by the client");
  res.status = 200;
}

void HttpFrontEnd::log(const std::string& line) const {
  if (options_.server.log) options_.server.log(line);
}

}  // namespace mcprt::demo
