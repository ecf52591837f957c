// Streamable HTTP (MCP 2025-11-25) over the HttpClient seam. The rules are listed in
// mcprt/http_transport.hpp; this file is the state machine behind them:
//
//   transport phase:  idle ─start()→ open ─close()→ closing ─DELETE done/timeout→ closed
//                     open ─fatal (initialize failed, re-initialize failed)→ closed
//                     open ─fallback hook took over→ closed (silently, no on_close)
//   one POST:         HttpCall → 2xx JSON | 2xx SSE (→ resume GETs while unanswered) |
//                     202 | failure (→ session expiry, or fail just that message)
//   GET stream:       idle → open → (ended/cut → wait retry: → open) | unsupported (405)
//                     | re-initialize (404) | stopped (other refusal, too many empty
//                     reconnects, budget spent)
//   re-initialize:    a 404 with a session id → replay initialize → replay initialized →
//                     re-send the failed message(s) once → flush what was sent meanwhile →
//                     on_renewed
//                     (a 404 for the replay itself, or no answer within
//                     reinitialize_timeout_ms, closes the transport)
//   server gone:      any request that gets no HTTP answer because the connection failed
//                     (HttpFailure::Kind::connection_lost) → closed with a transport error
//   stateless POST:   (SendOptions::stateless, the 2026-07-28 wire) 2xx JSON | 2xx SSE (a
//                     break before the response fails the request, never resumed) | 4xx
//                     with this request's JSON-RPC error → that response | failure; no
//                     session id either way; its notifications/cancelled aborts the POST

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "jsonrpc/message_writer.hpp"
#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/framing.hpp"
#include "protocol/http_common.hpp"
#include "protocol/http_transports.hpp"

namespace mcprt::detail {

namespace {

constexpr std::string_view kAcceptBoth = "application/json, text/event-stream";
constexpr std::string_view kEventStream = "text/event-stream";

// Header names a message's SendOptions::headers may not replace: the transport owns them.
bool transport_owned_header(std::string_view name) {
  for (std::string_view owned : {"Content-Type", "Accept", "Authorization", "Cookie",
                                 "Mcp-Session-Id", "Last-Event-ID", "Content-Length", "Host"}) {
    if (iequals(name, owned)) return true;
  }
  return false;
}

bool is_cancelled_notification(const json& message) {
  return rpc_kind(message) == RpcKind::notification &&
         message["method"].get_ref<const std::string&>() == "notifications/cancelled";
}

// One message waiting to be (re-)sent, with what its sender said about it.
// The longest a call made right after connect waits for the first GET stream's answer.
constexpr std::int64_t kGetStreamWaitMs = 1000;

struct Outgoing {
  json message;
  SendOptions send;
};

// The state of one SSE stream across its reconnects (a POST answer and the GETs that
// resume it, or the standalone GET stream).
struct SseStream {
  std::unique_ptr<SseParser> parser;  // per HTTP response
  std::string last_event_id;          // what a reconnect sends as Last-Event-ID
  std::optional<std::int64_t> retry_ms;  // the server's last retry:
  // Reconnects in a row that got no 2xx answer. A server that answers and then ends the
  // stream is polling us (SEP-1699) and may do so for as long as the request runs, within
  // the reconnect budget:
  int failed_reconnects = 0;
  std::vector<TimePoint> reconnects;  // when each reconnect of the current window was scheduled
};

// The id key of the request a notifications/cancelled names; nullopt for any other message.
std::optional<std::string> cancelled_request_key(const json& message) {
  if (rpc_kind(message) != RpcKind::notification ||
      message["method"].get_ref<const std::string&>() != "notifications/cancelled") {
    return std::nullopt;
  }
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return std::nullopt;
  const auto request_id = params->find("requestId");
  if (request_id == params->end()) return std::nullopt;
  return rpc_id_key(*request_id);
}

class StreamableState : public std::enable_shared_from_this<StreamableState> {
 public:
  enum class Phase { idle, open, closing, closed };
  enum class GetPhase { idle, open, waiting, unsupported, stopped };

  struct Post {
    std::uint64_t seq = 0;
    std::string body;  // the message as sent (kept for a re-send)
    RpcKind kind = RpcKind::other;
    json id;                // request / response id
    std::string id_key;     // requests only
    bool is_initialize = false;
    bool is_initialized = false;  // notifications/initialized
    bool internal = false;        // a re-initialize replay: answered here, not passed up
    SendOptions send;             // its extra headers; stateless = the 2026-07-28 wire
    bool session_retry_used = false;
    bool carried_session = false;
    std::string sent_session;  // the session id it carried
    bool answered = false;
    bool sse = false;
    bool accepted_only = false;  // 202: the body, if any, is not a message
    std::string json_body;
    SseStream stream;
    std::shared_ptr<HttpCall> call;
    ScopedTimer resume_timer;
  };

  StreamableState(std::shared_ptr<HttpConnection> conn, InitializeRejectedHook hook)
      : conn_(std::move(conn)), hook_(std::move(hook)) {}

  ~StreamableState() { abort_everything(); }

  // --- Transport API -------------------------------------------------------------------

  void start(TransportHandlers handlers) {
    if (phase_ != Phase::idle) {
      if (phase_ == Phase::closed && !close_fired_) {
        // close() came before start(): report it later, never inside start().
        handlers_ = std::move(handlers);
        conn_->executor().post([weak = weak_from_this()] {
          if (auto self = weak.lock()) self->fire_close(self->closed_error());
        });
      }
      return;
    }
    handlers_ = std::move(handlers);
    phase_ = Phase::open;
    // Nothing to do until the first message: Streamable HTTP has no connect step.
  }

  Status send(const json& message, const SendOptions& send) {
    if (phase_ != Phase::open) {
      return conn_->named(Error::make(ErrorCode::closed, "connection is closed"));
    }
    if (send.stateless) {
      // The 2026-07-28 wire has no session to wait for, and no cancellation message on
      // HTTP: closing the request's stream is the cancellation.
      if (is_cancelled_notification(message)) {
        abandon_cancelled_request(message);
        return {};
      }
      post_message(message, /*session_retry_used=*/false, /*internal=*/false, send);
      return {};
    }
    if (reinitializing_) {
      drop_cancelled_from_replay(message);
      outbox_.push_back({message, send});  // goes out, in order, once the new session is up
      return {};
    }
    if (holds_for_get_stream(message)) return {};
    abandon_cancelled_request(message);
    post_message(message, /*session_retry_used=*/false, /*internal=*/false, send);
    return {};
  }

  // A server may send the requests a call causes (elicitation, sampling) on the GET stream
  // rather than on the call's own answer (the TS SDK's server does unless told otherwise),
  // and drops them while no GET stream is registered. So a call made right after connect
  // waits, in order with what follows it, until the first GET stream was answered (opened,
  // 405, refused, failed) — or kGetStreamWaitMs, whichever comes first.
  bool holds_for_get_stream(const json& message) {
    if (get_settled_ || !conn_->options().open_get_stream) return false;
    if (held_.empty()) {
      const std::string method =
          message.is_object() && message.contains("method") && message["method"].is_string()
              ? message["method"].get<std::string>()
              : std::string();
      if (method != "tools/call" && method != "prompts/get" && method != "resources/read") {
        return false;
      }
      std::weak_ptr<StreamableState> weak = weak_from_this();
      held_timer_ = ScopedTimer(conn_->executor(),
                                conn_->executor().post_after(Millis(kGetStreamWaitMs), [weak] {
                                  if (auto self = weak.lock()) {
                                    self->held_timer_.release();
                                    self->settle_get_stream();
                                  }
                                }));
    }
    held_.push_back(message);
    return true;
  }

  // The first GET stream was answered (or waited for long enough): what was held goes out.
  void settle_get_stream() {
    if (get_settled_) return;
    get_settled_ = true;
    held_timer_.reset();
    std::vector<json> held;
    held.swap(held_);
    for (const json& m : held) {
      if (!live()) return;
      abandon_cancelled_request(m);
      post_message(m, /*session_retry_used=*/false, /*internal=*/false, SendOptions{});
    }
  }

  void close() {
    switch (phase_) {
      case Phase::idle:
        phase_ = Phase::closed;
        return;
      case Phase::open:
        break;
      case Phase::closing:
      case Phase::closed:
        return;
    }
    phase_ = Phase::closing;
    abort_everything();
    if (session_id_.empty()) {
      conn_->executor().post([weak = weak_from_this()] {
        if (auto self = weak.lock()) self->finish_close();
      });
      return;
    }
    // Tell the server the session is over. Best effort and bounded: whatever happens
    // (answer, error, timeout) the close completes.
    std::weak_ptr<StreamableState> weak = weak_from_this();
    HttpCall::Events events;
    events.decorate = [weak](HttpHeaders& h) {
      if (auto self = weak.lock()) self->add_session_headers(h);
    };
    events.on_head = [weak](const HttpResponseHead&) {
      if (auto self = weak.lock()) self->finish_close();
    };
    events.on_end = [weak](Status) {
      if (auto self = weak.lock()) self->finish_close();
    };
    events.on_failure = [weak](const HttpFailure& f) {
      if (auto self = weak.lock()) {
        self->conn_->log().debug(self->conn_->prefix() + "DELETE of the session failed: " +
                                 f.error.message);
        self->finish_close();
      }
    };
    const std::int64_t bound = conn_->options().close_timeout_ms;
    delete_call_ = HttpCall::start(conn_, {"DELETE", conn_->options().url, {}, bound, false},
                                   std::move(events));
    close_timer_ = ScopedTimer(conn_->executor(),
                               conn_->executor().post_after(Millis(bound), [weak] {
                                 if (auto self = weak.lock()) {
                                   self->close_timer_.release();
                                   self->finish_close();
                                 }
                               }));
  }

  void destroy() {
    destroyed_ = true;
    handlers_ = {};
    hook_ = {};
    abort_everything();
    if (delete_call_) delete_call_->cancel();
    close_timer_.reset();
  }

  std::string diagnostics() const {
    std::string out = "Streamable HTTP " + conn_->options().url;
    if (!session_id_.empty()) out += ", session " + session_id_;
    if (!protocol_version_.empty()) out += ", protocol " + protocol_version_;
    switch (get_phase_) {
      case GetPhase::unsupported: out += ", no GET stream (405)"; break;
      case GetPhase::open: out += ", GET stream open"; break;
      default: break;
    }
    return out;
  }

 private:
  Error closed_error() const { return conn_->named(Error::make(ErrorCode::closed, "connection closed")); }

  bool live() const { return phase_ == Phase::open && !destroyed_; }

  void add_session_headers(HttpHeaders& h) const {
    if (!session_id_.empty()) h.set("Mcp-Session-Id", session_id_);
    if (!protocol_version_.empty()) h.set("MCP-Protocol-Version", protocol_version_);
  }

  // Only the configured origin names the session: an answer from where a redirect led
  // (another origin) never sets the id that later requests carry home.
  void keep_session_id(const HttpResponseHead& head) {
    if (!conn_->credentials_allowed_for(head.final_url)) return;
    if (const std::string* sid = head.headers.find("Mcp-Session-Id"); sid && !sid->empty()) {
      session_id_ = *sid;
    }
  }

  // --- POST ----------------------------------------------------------------------------

  void post_message(const json& message, bool session_retry_used, bool internal,
                    const SendOptions& send = {}) {
    auto post = std::make_shared<Post>();
    post->send = send;
    post->kind = rpc_kind(message);
    if (post->kind == RpcKind::request || post->kind == RpcKind::response) {
      post->id = message["id"];
    }
    if (post->kind == RpcKind::request) {
      post->id_key = rpc_id_key(post->id).value_or("");
      const std::string& method = message["method"].get_ref<const std::string&>();
      if (method == "initialize") {
        post->is_initialize = true;
        if (!internal) {
          init_request_ = message;
          init_id_key_ = post->id_key;
        }
      }
    } else if (post->kind == RpcKind::notification &&
               message["method"].get_ref<const std::string&>() == "notifications/initialized") {
      post->is_initialized = true;
      if (!internal) initialized_notification_ = message;
    }
    post->body = thread_message_writer().text(message);
    start_post(std::move(post), session_retry_used, internal);
  }

  // A new POST of what `old` sent (its text, not its message: nothing is parsed or copied
  // again), for a re-send once the session changed.
  static std::shared_ptr<Post> resend_of(const Post& old) {
    auto post = std::make_shared<Post>();
    post->body = old.body;
    post->kind = old.kind;
    post->id = old.id;
    post->id_key = old.id_key;
    post->is_initialize = old.is_initialize;
    post->is_initialized = old.is_initialized;
    post->send = old.send;
    return post;
  }

  // Sends a Post that post_message or resend_of prepared.
  void start_post(std::shared_ptr<Post> post, bool session_retry_used, bool internal) {
    post->seq = next_seq_++;
    post->session_retry_used = session_retry_used;
    post->internal = internal;
    posts_[post->seq] = post;

    // The five events reach the transport and the post through one shared link (see
    // HttpCall::Events::context) instead of five copies of two weak pointers.
    struct Link {
      std::weak_ptr<StreamableState> state;
      std::weak_ptr<Post> post;
    };
    auto link = std::make_shared<const Link>(Link{weak_from_this(), post});
    const Link* l = link.get();
    HttpCall::Events events;
    events.context = std::move(link);
    events.decorate = [l](HttpHeaders& h) {
      auto self = l->state.lock();
      auto p = l->post.lock();
      if (!self || !p) return;
      h.set("Content-Type", "application/json");
      h.set("Accept", std::string(kAcceptBoth));
      // initialize opens a session: it never carries the old one's headers; a stateless
      // message belongs to no session at all.
      if (!p->is_initialize && !p->send.stateless) self->add_session_headers(h);
      for (const auto& [name, value] : p->send.headers) {
        if (!transport_owned_header(name)) h.set(name, value);
      }
      const std::string* sid = h.find("Mcp-Session-Id");
      p->carried_session = sid != nullptr;
      if (sid != nullptr) {
        p->sent_session = *sid;
      } else {
        p->sent_session.clear();
      }
    };
    events.on_head = [l](const HttpResponseHead& head) {
      auto self = l->state.lock();
      auto p = l->post.lock();
      if (self && p) self->on_post_head(*p, head);
    };
    events.on_chunk = [l](std::string_view bytes) {
      auto self = l->state.lock();
      auto p = l->post.lock();
      if (self && p) self->on_post_chunk(p, bytes);
    };
    events.on_end = [l](Status status) {
      auto self = l->state.lock();
      auto p = l->post.lock();
      if (self && p) self->on_post_end(p, std::move(status));
    };
    events.on_failure = [l](const HttpFailure& f) {
      auto self = l->state.lock();
      auto p = l->post.lock();
      if (self && p) self->on_post_failure(p, f);
    };
    HttpCall::Spec spec{"POST", conn_->options().url, post->body, 0, true};
    if (post->send.stateless) spec.max_error_body = kModernErrorBodyBytes;
    post->call = HttpCall::start(conn_, std::move(spec), std::move(events));
  }

  void on_post_head(Post& post, const HttpResponseHead& head) {
    if (!live()) return;
    // A stateless exchange makes no session, whatever the server says.
    if (!post.send.stateless) keep_session_id(head);
    if (!post.internal) renewal_unproven_ = false;
    // 202 Accepted carries no message (some servers still write "Accepted").
    post.accepted_only = head.status == 202;
    const std::string* type = head.headers.find("Content-Type");
    post.sse = !post.accepted_only && type != nullptr && media_type_is(*type, kEventStream);
    if (post.sse) {
      post.stream.parser = std::make_unique<SseParser>(conn_->options().max_message_bytes);
    }
  }

  void on_post_chunk(const std::shared_ptr<Post>& post, std::string_view bytes) {
    if (!live()) return;
    if (post->sse) {
      feed_stream(post->stream, bytes, post.get());
      return;
    }
    if (post->accepted_only) return;
    if (post->json_body.size() + bytes.size() > conn_->options().max_message_bytes) {
      post->call->cancel();
      fail_post(post, Error::make(ErrorCode::message_too_large,
                                  "the JSON answer from " + conn_->options().url +
                                      " exceeds the limit of " +
                                      std::to_string(conn_->options().max_message_bytes) + " bytes",
                                  json_object({{"max_bytes", conn_->options().max_message_bytes}})));
      return;
    }
    post->json_body.append(bytes);
  }

  void on_post_end(const std::shared_ptr<Post>& post, Status status) {
    if (!live()) return;
    if (post->sse) {
      stream_ended(post, std::move(status));
      return;
    }
    if (!status) {
      fail_post(post, std::move(status).error());
      return;
    }
    if (!post->json_body.empty()) {
      Result<json> body =
          parse_untrusted_json(post->json_body, {conn_->options().max_json_nesting_levels,
                                                 handlers_.raw_tool_schemas});
      post->json_body.clear();
      if (!body) {
        const Error& e = body.error();
        const bool syntax = e.data.value("reason", "") == kJsonSyntax;
        conn_->log().warn(conn_->prefix() + "unreadable answer from " + conn_->options().url +
                          ": " + e.message);
        fail_post(post, Error::make(ErrorCode::protocol,
                                    "the answer from " + conn_->options().url +
                                        (syntax ? " is neither JSON nor an event stream: "
                                                : " is not usable JSON: ") +
                                        e.message,
                                    e.data));
        return;
      }
      if (!deliver(std::move(body).value())) return;
    }
    finish_post(post);
  }

  void on_post_failure(const std::shared_ptr<Post>& post, const HttpFailure& f) {
    if (!live()) return;
    if (f.kind == HttpFailure::Kind::connection_lost) {
      lose_connection(f.error);
      return;
    }
    if (f.status == 404 && post->carried_session && !post->is_initialize && !post->internal &&
        !post->session_retry_used && init_request_ && initialized_notification_) {
      if (reinitializing_) {
        join_replay(post);  // re-sent once the replay is done
      } else if (post->sent_session != session_id_) {
        // It went out with a session that a re-initialize has replaced since: send it once
        // more with the new one (no second replay).
        posts_.erase(post->seq);
        start_post(resend_of(*post), /*session_retry_used=*/true, /*internal=*/false);
      } else {
        expire_session(post);
      }
      return;
    }
    if (post->send.stateless && post->kind == RpcKind::request && hands_up_server_error(f)) {
      if (std::optional<json> response = server_error_response(*post, f.body)) {
        posts_.erase(post->seq);
        post->answered = true;
        deliver(std::move(*response));
        return;
      }
    }
    // A 404 for the replayed notifications/initialized (internal) lands in fail_post: the
    // new session is refused too, so the re-initialize failed and the transport closes.
    if (post->is_initialize && !post->internal && !post->send.stateless && hook_) {
      // Only the first initialize may fall back: after that the server spoke Streamable HTTP.
      auto hook = std::move(hook_);
      hook_ = {};
      if (f.status != 0 && hook(f)) {
        stop_silently();
        return;
      }
    }
    fail_post(post, f.error);
  }

  // A modern server answers a request it refuses with 4xx and a JSON-RPC error (400 with
  // -32022/-32020/-32021/-32602, 404 with -32601): the session needs that error itself
  // (its code and data). 401/403 stay with the auth path (the refresh already ran, the
  // caller needs the status); 5xx is an outage, never the server's verdict on the
  // request, so it keeps the synthesized error with its status.
  static bool hands_up_server_error(const HttpFailure& f) {
    return f.kind == HttpFailure::Kind::http_answer && f.status >= 400 && f.status < 500 &&
           f.status != 401 && f.status != 403;
  }

  // `body` parsed as a JSON-RPC error response to `post`'s request (same id), or nullopt.
  std::optional<json> server_error_response(const Post& post, const std::string& body) const {
    if (body.empty()) return std::nullopt;
    Result<json> parsed = parse_untrusted_json(body, {conn_->options().max_json_nesting_levels});
    if (!parsed) return std::nullopt;
    json& message = parsed.value();
    if (rpc_kind(message) != RpcKind::response) return std::nullopt;
    const auto error = message.find("error");
    if (error == message.end() || !error->is_object()) return std::nullopt;
    const auto code = error->find("code");
    if (code == error->end() || !code->is_number_integer()) return std::nullopt;
    if (rpc_id_key(message["id"]) != post.id_key) return std::nullopt;
    return std::move(message);
  }

  // The message `post` carried cannot be delivered. initialize (and the re-initialize
  // replays) end the connection; a request fails alone; anything else is logged.
  void fail_post(const std::shared_ptr<Post>& post, Error error) {
    posts_.erase(post->seq);
    if (post->internal) {
      Error e = conn_->named(std::move(error));
      e.message = conn_->prefix() + "the session expired and re-initializing failed: " +
                  e.message.substr(conn_->prefix().size());
      fail_transport(std::move(e));
      return;
    }
    if (post->is_initialize) {
      fail_transport(conn_->named(std::move(error)));
      return;
    }
    if (post->kind == RpcKind::request) {
      if (post->answered) return;
      post->answered = true;
      deliver(synthesized_error_response(post->id, conn_->named(std::move(error))));
      return;
    }
    conn_->log().warn(conn_->prefix() + "could not deliver " +
                      (post->kind == RpcKind::response ? std::string("a response")
                                                       : "a notification") +
                      ": " + error.message);
  }

  void finish_post(const std::shared_ptr<Post>& post) {
    if (!live()) return;
    if (post->kind == RpcKind::request && !post->answered) {
      fail_post(post, Error::make(ErrorCode::protocol, "the server answered the request at " +
                                                           conn_->options().url +
                                                           " without a JSON-RPC response"));
      return;
    }
    posts_.erase(post->seq);
    if (post->is_initialized) {
      if (post->internal) {
        complete_reinitialize();
      } else if (conn_->options().open_get_stream) {
        open_get_stream();
      }
    }
  }

  // --- SSE streams (POST answers, their resumptions, the GET stream) --------------------

  // Feeds bytes of one SSE response; each event's data is one JSON-RPC message. `owner`
  // is the POST this stream answers (null for the GET stream).
  void feed_stream(SseStream& stream, std::string_view bytes, Post* owner) {
    SseParser& parser = *stream.parser;
    std::vector<std::string> datas;
    Status s = parser.feed(bytes, [&](const SseEvent& ev) {
      // An empty data is the 2025-11-25 "priming" event: it only carries the id.
      if (ev.event == "message" && !ev.data.empty()) datas.push_back(ev.data);
    });
    if (!parser.last_event_id().empty()) stream.last_event_id = parser.last_event_id();
    if (parser.retry_ms()) stream.retry_ms = *parser.retry_ms();
    for (std::string& data : datas) {
      Result<json> message =
          parse_untrusted_json(data, {conn_->options().max_json_nesting_levels,
                                      handlers_.raw_tool_schemas});
      if (!message) {
        report_unreadable_message(data, message.error(), conn_->prefix(), &conn_->log(),
                                  handlers_);
        if (!live()) return;
        continue;
      }
      if (!deliver(std::move(message).value())) return;
    }
    if (!s && live()) {
      Error e = conn_->named(std::move(s).error());
      if (owner) {
        // The rest of this stream is unusable; the request fails (no resume: the
        // server would replay the same oversized event).
        auto post = posts_.find(owner->seq);
        if (post != posts_.end()) {
          auto p = post->second;
          p->call->cancel();
          fail_post(p, std::move(e));
        }
      } else {
        conn_->log().warn(e.message + "; closing the GET stream");
        stop_get_stream(GetPhase::stopped);
      }
      return;
    }
    if (owner && owner->kind == RpcKind::request && owner->answered && live()) {
      // The response is in, so the server should end this stream now. Do not depend on
      // it: an open stream holds a connection (natively, a worker thread) per request.
      auto it = posts_.find(owner->seq);
      if (it != posts_.end()) {
        auto p = it->second;
        if (p->call) p->call->cancel();
        p->call.reset();
        finish_post(p);
      }
    }
  }

  // A POST's SSE answer (or a resumption of it) ended or was cut. `answered_http` says
  // whether this attempt got a 2xx answer at all.
  void stream_ended(const std::shared_ptr<Post>& post, Status status, bool answered_http = true) {
    post->call.reset();
    if (post->kind != RpcKind::request || post->answered) {
      finish_post(post);
      return;
    }
    SseStream& stream = post->stream;
    const std::string why = status ? "the server ended the SSE stream before answering"
                                   : "the SSE stream broke before the answer (" +
                                         status.error().message + ")";
    if (post->send.stateless) {
      // 2026-07-28 streams cannot be resumed: the request is lost (the caller may send it
      // again with a new id).
      fail_post(post, Error::make(ErrorCode::transport,
                                  "the SSE stream from " + conn_->options().url +
                                      (status ? " ended before the response"
                                              : " broke before the response (" +
                                                    status.error().message + ")") +
                                      "; the request was lost (2026-07-28 streams cannot "
                                      "be resumed)",
                                  json_object({{"url", conn_->options().url}})));
      return;
    }
    if (stream.last_event_id.empty()) {
      fail_post(post, Error::make(ErrorCode::transport,
                                  why + " and sent no event id to resume from"));
      return;
    }
    if (!reconnect_allowed(stream, answered_http)) {
      fail_post(post, Error::make(ErrorCode::transport,
                                  why + "; gave up resuming after " +
                                      std::to_string(conn_->options().max_resume_attempts) +
                                      " failed attempts"));
      return;
    }
    if (!take_reconnect(stream)) {
      fail_post(post, budget_error("the SSE stream of this request"));
      return;
    }
    std::weak_ptr<StreamableState> weak = weak_from_this();
    std::weak_ptr<Post> wpost = post;
    post->resume_timer = ScopedTimer(
        conn_->executor(), conn_->executor().post_after(retry_delay(stream), [weak, wpost] {
          auto self = weak.lock();
          auto p = wpost.lock();
          if (!self || !p) return;
          p->resume_timer.release();
          if (self->live()) self->resume_post(p);
        }));
  }

  bool reconnect_allowed(SseStream& stream, bool answered_http) const {
    stream.failed_reconnects = answered_http ? 0 : stream.failed_reconnects + 1;
    return stream.failed_reconnects < conn_->options().max_resume_attempts;
  }

  // Spends one reconnect of `stream`'s budget (max_reconnects_per_window within any
  // reconnect_window_ms); false when it is spent. Bounded memory: the list never holds
  // more than the budget (a vector: a handful of time points).
  bool take_reconnect(SseStream& stream) const {
    const HttpTransportOptions& o = conn_->options();
    if (o.max_reconnects_per_window <= 0) return true;
    const TimePoint now = conn_->executor().now();
    const Millis window(o.reconnect_window_ms);
    std::size_t expired = 0;
    while (expired < stream.reconnects.size() && now - stream.reconnects[expired] >= window) ++expired;
    stream.reconnects.erase(stream.reconnects.begin(),
                            stream.reconnects.begin() + static_cast<std::ptrdiff_t>(expired));
    if (stream.reconnects.size() >= static_cast<std::size_t>(o.max_reconnects_per_window)) {
      return false;
    }
    stream.reconnects.push_back(now);
    return true;
  }

  Error budget_error(const std::string& what) const {
    const HttpTransportOptions& o = conn_->options();
    return Error::make(ErrorCode::protocol,
                       "the server at " + o.url + " keeps ending " + what + " (" +
                           std::to_string(o.max_reconnects_per_window) + " reconnects within " +
                           std::to_string(o.reconnect_window_ms) +
                           " ms, the reconnect budget); not reconnecting again",
                       json_object({{"url", o.url},
                            {"max_reconnects_per_window", o.max_reconnects_per_window},
                            {"reconnect_window_ms", o.reconnect_window_ms}}));
  }

  // The client gave up on a request (timeout, abort) and tells the server so: nothing
  // from that request's stream matters any more, so stop reading or resuming it (an open
  // stream holds a connection).
  void abandon_cancelled_request(const json& message) {
    const std::optional<std::string> key = cancelled_request_key(message);
    if (!key) return;
    for (auto it = posts_.begin(); it != posts_.end(); ++it) {
      const std::shared_ptr<Post>& p = it->second;
      if (p->kind != RpcKind::request || p->internal || p->id_key != *key) continue;
      if (p->call) p->call->cancel();
      p->resume_timer.reset();
      posts_.erase(it);
      return;
    }
  }

  // The server's retry: within [min_retry_ms, max_retry_ms]: a server cannot make us
  // reconnect in a tight loop (retry: 0) nor park a request for hours.
  Millis retry_delay(const SseStream& stream) const {
    std::int64_t ms = stream.retry_ms.value_or(conn_->options().default_retry_ms);
    if (ms > conn_->options().max_retry_ms) ms = conn_->options().max_retry_ms;
    if (ms < conn_->options().min_retry_ms) ms = conn_->options().min_retry_ms;
    return Millis(ms);
  }

  // GET with Last-Event-ID: the server replays what the broken stream missed, including
  // (eventually) the response.
  void resume_post(const std::shared_ptr<Post>& post) {
    std::weak_ptr<StreamableState> weak = weak_from_this();
    std::weak_ptr<Post> wpost = post;
    HttpCall::Events events;
    events.decorate = [weak, wpost](HttpHeaders& h) {
      auto self = weak.lock();
      auto p = wpost.lock();
      if (!self || !p) return;
      h.set("Accept", std::string(kEventStream));
      self->add_session_headers(h);
      h.set("Last-Event-ID", p->stream.last_event_id);
    };
    events.on_head = [weak, wpost](const HttpResponseHead& head) {
      auto self = weak.lock();
      auto p = wpost.lock();
      if (!self || !p || !self->live()) return;
      self->keep_session_id(head);
      p->sse = true;
      p->stream.parser = std::make_unique<SseParser>(self->conn_->options().max_message_bytes);
    };
    events.on_chunk = [weak, wpost](std::string_view bytes) {
      auto self = weak.lock();
      auto p = wpost.lock();
      if (self && p && self->live()) self->feed_stream(p->stream, bytes, p.get());
    };
    events.on_end = [weak, wpost](Status status) {
      auto self = weak.lock();
      auto p = wpost.lock();
      if (self && p && self->live()) self->stream_ended(p, std::move(status));
    };
    events.on_failure = [weak, wpost](const HttpFailure& f) {
      auto self = weak.lock();
      auto p = wpost.lock();
      if (!self || !p || !self->live()) return;
      if (f.kind == HttpFailure::Kind::connection_lost) {
        // The stream broke and the server does not even take the connection: it is gone.
        self->lose_connection(f.error);
        return;
      }
      if (f.status == 0 && f.kind != HttpFailure::Kind::not_followed) {
        // No answer in time: try again, a bounded number of times.
        self->stream_ended(p, Status(f.error), /*answered_http=*/false);
        return;
      }
      Error e = f.error;
      e.message = "could not resume the SSE stream: " + e.message;
      self->fail_post(p, std::move(e));
    };
    post->call = HttpCall::start(conn_, {"GET", conn_->options().url, {}, 0, true}, std::move(events));
  }

  // --- the standalone GET stream -------------------------------------------------------

  void open_get_stream() {
    if (!live() || reinitializing_) return;
    if (get_phase_ != GetPhase::idle && get_phase_ != GetPhase::waiting) return;
    get_phase_ = GetPhase::open;
    std::weak_ptr<StreamableState> weak = weak_from_this();
    HttpCall::Events events;
    events.decorate = [weak](HttpHeaders& h) {
      auto self = weak.lock();
      if (!self) return;
      h.set("Accept", std::string(kEventStream));
      self->add_session_headers(h);
      if (!self->get_stream_.last_event_id.empty()) {
        h.set("Last-Event-ID", self->get_stream_.last_event_id);
      }
    };
    events.on_head = [weak](const HttpResponseHead& head) {
      auto self = weak.lock();
      if (!self || !self->live()) return;
      self->keep_session_id(head);
      self->get_route_seen_ = true;
      self->renewal_unproven_ = false;
      self->get_stream_.parser =
          std::make_unique<SseParser>(self->conn_->options().max_message_bytes);
      self->settle_get_stream();
    };
    events.on_chunk = [weak](std::string_view bytes) {
      auto self = weak.lock();
      if (self && self->live()) self->feed_stream(self->get_stream_, bytes, nullptr);
    };
    events.on_end = [weak](Status status) {
      auto self = weak.lock();
      if (self && self->live()) self->get_stream_ended(status);
    };
    events.on_failure = [weak](const HttpFailure& f) {
      auto self = weak.lock();
      if (!self || !self->live()) return;
      self->settle_get_stream();
      if (!self->live()) return;
      if (f.kind == HttpFailure::Kind::connection_lost) {
        self->lose_connection(f.error);
      } else if (f.status == 405) {
        self->conn_->log().debug(self->conn_->prefix() +
                                 "the server offers no GET stream (HTTP 405)");
        self->stop_get_stream(GetPhase::unsupported);
      } else if (f.status == 0 && f.kind != HttpFailure::Kind::not_followed) {
        self->get_stream_ended(Status(f.error), /*answered_http=*/false);
      } else if (f.status == 404 && self->get_route_seen_ && !self->renewal_unproven_ &&
                 self->get_call_ && self->get_call_->url() == self->conn_->options().url &&
                 self->can_renew_session()) {
        // The session expired while only the GET stream used it (the MCP rule for a 404
        // to a request with a session id: start a new session). The re-initialize opens
        // the stream again. Not when the server never served the stream (no route: 404
        // for 405), right after a renewal (it would renew forever), or when the 404 came
        // from where a redirect led.
        self->expire_session(nullptr);
      } else {
        self->conn_->log().warn(self->conn_->prefix() + "the GET stream was refused: " +
                                f.error.message);
        self->stop_get_stream(GetPhase::stopped);
      }
    };
    get_call_ = HttpCall::start(conn_, {"GET", conn_->options().url, {}, 0, true}, std::move(events));
  }

  void get_stream_ended(const Status& status, bool answered_http = true) {
    get_call_.reset();
    if (!reconnect_allowed(get_stream_, answered_http)) {
      conn_->log().warn(conn_->prefix() + "could not reopen the GET stream after " +
                        std::to_string(conn_->options().max_resume_attempts) +
                        " attempts; server notifications outside requests are lost");
      stop_get_stream(GetPhase::stopped);
      return;
    }
    if (!take_reconnect(get_stream_)) {
      conn_->log().warn(conn_->named(budget_error("the GET stream")).message +
                        "; server notifications outside requests are lost");
      stop_get_stream(GetPhase::stopped);
      return;
    }
    if (!status) {
      conn_->log().debug(conn_->prefix() + "the GET stream broke: " + status.error().message);
    }
    get_phase_ = GetPhase::waiting;
    std::weak_ptr<StreamableState> weak = weak_from_this();
    get_timer_ = ScopedTimer(conn_->executor(),
                             conn_->executor().post_after(retry_delay(get_stream_), [weak] {
                               if (auto self = weak.lock()) {
                                 self->get_timer_.release();
                                 self->open_get_stream();
                               }
                             }));
  }

  void stop_get_stream(GetPhase phase) {
    if (get_call_) get_call_->cancel();
    get_call_.reset();
    get_timer_.reset();
    get_phase_ = phase;
  }

  // --- session expiry ------------------------------------------------------------------

  // A 404 for the current session may start a new one: the handshake to replay is known
  // and no replay runs yet.
  bool can_renew_session() const {
    return !session_id_.empty() && !reinitializing_ && init_request_ && initialized_notification_;
  }

  // The session expired: `post` (null when the GET stream met the 404) goes out again once
  // initialize and initialized were replayed.
  void expire_session(const std::shared_ptr<Post>& post) {
    if (renewal_unproven_) {
      // Renewing again would loop (each renewal makes the session layer subscribe and list
      // again): the connection fails, and its owner reconnects with its backoff.
      fail_transport(conn_->named(Error::make(
          ErrorCode::protocol, "the session expired again (HTTP 404) before the one just "
                               "re-initialized answered anything: the server keeps no session")));
      return;
    }
    if (post) join_replay(post);
    conn_->log().info(conn_->prefix() + "the session expired (HTTP 404); re-initializing");
    reinitializing_ = true;
    reinit_answered_ = false;
    session_id_.clear();
    protocol_version_.clear();
    stop_get_stream(GetPhase::idle);
    get_stream_ = SseStream{};
    if (const std::int64_t bound = conn_->options().reinitialize_timeout_ms; bound > 0) {
      reinit_timer_ =
          ScopedTimer(conn_->executor(),
                      conn_->executor().post_after(Millis(bound), [weak = weak_from_this(), bound] {
                        auto self = weak.lock();
                        if (!self) return;
                        self->reinit_timer_.release();
                        if (!self->live() || !self->reinitializing_) return;
                        self->fail_transport(self->conn_->named(Error::make(
                            ErrorCode::timeout,
                            "the session expired and re-initializing did not finish within " +
                                std::to_string(bound) + " ms")));
                      }));
    }
    post_message(*init_request_, false, /*internal=*/true);
  }

  // `post` met the 404 of an expired session: it goes out once more after the replay.
  void join_replay(const std::shared_ptr<Post>& post) {
    posts_.erase(post->seq);
    expired_.push_back(resend_of(*post));
  }

  // The client cancelled a request whose POST met the 404: the server never saw it, so it
  // is not re-sent after the replay.
  void drop_cancelled_from_replay(const json& message) {
    const std::optional<std::string> key = cancelled_request_key(message);
    if (!key) return;
    for (auto it = expired_.begin(); it != expired_.end(); ++it) {
      if ((*it)->kind == RpcKind::request && (*it)->id_key == *key) {
        expired_.erase(it);
        return;
      }
    }
  }

  // The replayed initialize was answered (its response never goes up: the session layer
  // already has one).
  void on_reinitialize_response(const json& response) {
    const auto result = response.find("result");
    if (result == response.end() || !result->is_object()) {
      std::string detail = "the server answered initialize with an error";
      if (auto err = response.find("error"); err != response.end() && err->is_object()) {
        if (auto m = err->find("message"); m != err->end() && m->is_string()) {
          detail += ": " + m->get<std::string>();
        }
      }
      fail_transport(conn_->named(Error::make(
          ErrorCode::protocol, "the session expired and re-initializing failed: " + detail)));
      return;
    }
    if (auto v = result->find("protocolVersion"); v != result->end() && v->is_string()) {
      protocol_version_ = v->get<std::string>();
    }
    reinit_answered_ = true;
    for (auto& [seq, p] : posts_) {
      if (p->internal && p->is_initialize) p->answered = true;
    }
    post_message(*initialized_notification_, false, /*internal=*/true);
  }

  void complete_reinitialize() {
    reinitializing_ = false;
    reinit_timer_.reset();
    std::vector<std::shared_ptr<Post>> expired;
    expired.swap(expired_);
    std::vector<Outgoing> outbox;
    outbox.swap(outbox_);
    for (std::shared_ptr<Post>& post : expired) {
      if (!live()) return;
      start_post(std::move(post), /*session_retry_used=*/true, /*internal=*/false);
    }
    for (const Outgoing& m : outbox) {
      if (!live()) return;
      if (reinitializing_) {
        outbox_.push_back(m);
      } else {
        post_message(m.message, false, false, m.send);
      }
    }
    renewal_unproven_ = true;
    open_get_stream();
    if (live() && handlers_.on_renewed) handlers_.on_renewed();
  }

  // --- delivery ------------------------------------------------------------------------

  // Hands one message (or each element of a batch) up, noting responses on the way.
  // Returns false when the transport stopped meanwhile (a handler closed it).
  bool deliver(json message) {
    if (message.is_array()) {
      for (json& element : message) {
        if (!deliver(std::move(element))) return false;
      }
      return live();
    }
    if (!live()) return false;
    if (rpc_kind(message) == RpcKind::response) {
      const std::optional<std::string> key = rpc_id_key(message["id"]);
      if (key && reinitializing_ && !reinit_answered_ && *key == init_id_key_) {
        on_reinitialize_response(message);
        return live();
      }
      if (key) note_answered(*key, message);
    }
    if (handlers_.on_message) handlers_.on_message(std::move(message));
    return live();
  }

  void note_answered(const std::string& key, const json& response) {
    if (key == init_id_key_ && protocol_version_.empty() && !reinitializing_) {
      if (auto r = response.find("result"); r != response.end() && r->is_object()) {
        if (auto v = r->find("protocolVersion"); v != r->end() && v->is_string()) {
          protocol_version_ = v->get<std::string>();
        }
      }
    }
    for (auto& [seq, p] : posts_) {
      if (p->kind == RpcKind::request && !p->internal && p->id_key == key) p->answered = true;
    }
  }

  // --- ending --------------------------------------------------------------------------

  void abort_everything() {
    held_.clear();
    held_timer_.reset();
    for (auto& [seq, p] : posts_) {
      if (p->call) p->call->cancel();
      p->resume_timer.reset();
    }
    posts_.clear();
    if (get_call_) get_call_->cancel();
    get_call_.reset();
    get_timer_.reset();
    reinitializing_ = false;
    reinit_timer_.reset();
    outbox_.clear();
    expired_.clear();
  }

  // The server is evidently gone (a request got no HTTP answer because the connection
  // failed): close, so that every pending request fails once (the RpcPeer fails them on
  // on_close) and the owner reconnects.
  void lose_connection(const Error& cause) {
    // The cause already says what happened ("could not connect (connection refused)", "the
    // server closed the connection without answering"): nothing is added to it.
    fail_transport(conn_->named(Error::make(ErrorCode::transport, cause.message, cause.data)));
  }

  void fail_transport(Error error) {
    if (phase_ == Phase::closed) return;
    conn_->log().warn(error.message);
    phase_ = Phase::closed;
    abort_everything();
    fire_close(error);
  }

  // The fallback hook took over: stop without a word (no on_close, nothing else).
  void stop_silently() {
    phase_ = Phase::closed;
    close_fired_ = true;
    abort_everything();
    handlers_ = {};
  }

  void finish_close() {
    if (phase_ != Phase::closing) return;
    phase_ = Phase::closed;
    if (delete_call_) delete_call_->cancel();
    delete_call_.reset();
    close_timer_.reset();
    fire_close(closed_error());
  }

  void fire_close(const Error& error) {
    if (close_fired_ || destroyed_) return;
    close_fired_ = true;
    auto on_close = std::move(handlers_.on_close);
    handlers_ = {};  // nothing runs after on_close
    if (on_close) on_close(error);
  }

  std::shared_ptr<HttpConnection> conn_;
  InitializeRejectedHook hook_;
  TransportHandlers handlers_;
  Phase phase_ = Phase::idle;
  bool close_fired_ = false;
  bool destroyed_ = false;

  std::string session_id_;
  std::string protocol_version_;
  std::optional<json> init_request_;
  std::string init_id_key_;
  std::optional<json> initialized_notification_;

  std::map<std::uint64_t, std::shared_ptr<Post>> posts_;
  std::uint64_t next_seq_ = 1;

  GetPhase get_phase_ = GetPhase::idle;
  SseStream get_stream_;
  std::shared_ptr<HttpCall> get_call_;
  ScopedTimer get_timer_;

  bool reinitializing_ = false;
  bool reinit_answered_ = false;
  // A re-initialize completed and nothing sent on the new session has been answered 2xx
  // since: a 404 now means the server keeps no session at all, not that one expired.
  bool renewal_unproven_ = false;
  // The server has answered a GET stream request 2xx: it has the route, so a 404 there is
  // about the session (a server without a GET route may answer 404 instead of 405).
  bool get_route_seen_ = false;
  // POSTs that met the 404, re-sent after re-initializing.
  std::vector<std::shared_ptr<Post>> expired_;
  std::vector<Outgoing> outbox_;   // messages sent while re-initializing
  // Calls made before the first GET stream was answered (holds_for_get_stream).
  bool get_settled_ = false;
  std::vector<json> held_;
  ScopedTimer held_timer_;
  ScopedTimer reinit_timer_;   // reinitialize_timeout_ms

  std::shared_ptr<HttpCall> delete_call_;
  ScopedTimer close_timer_;
};

class StreamableHttpTransport final : public Transport {
 public:
  StreamableHttpTransport(std::shared_ptr<HttpConnection> conn, InitializeRejectedHook hook)
      : state_(std::make_shared<StreamableState>(std::move(conn), std::move(hook))) {}
  ~StreamableHttpTransport() override { state_->destroy(); }

  void start(TransportHandlers handlers) override { state_->start(std::move(handlers)); }
  Status send(const json& message) override { return state_->send(message, {}); }
  Status send_with(const json& message, const SendOptions& options) override {
    return state_->send(message, options);
  }
  void close() override { state_->close(); }
  std::string diagnostics() const override { return state_->diagnostics(); }

 private:
  std::shared_ptr<StreamableState> state_;
};

}  // namespace

std::unique_ptr<Transport> make_streamable_http_transport(std::shared_ptr<HttpConnection> conn,
                                                          InitializeRejectedHook hook) {
  return std::make_unique<StreamableHttpTransport>(std::move(conn), std::move(hook));
}

}  // namespace mcprt::detail
