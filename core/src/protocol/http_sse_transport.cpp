// Legacy HTTP+SSE (MCP 2024-11-05) over the HttpClient seam (rules in
// mcprt/http_transport.hpp):
//
//   idle ─start()→ connecting (GET stream, waiting for `endpoint`) → open (POSTs go out)
//   connecting/open ─stream ended, refused, bad endpoint, a POST that finds no server→
//                    closed (on_close with why)
//   any ─close()→ closed (on_close(closed), posted)
//
// Messages sent before the endpoint arrived wait in order. Every answer arrives on the
// stream; a POST only has to be accepted (2xx). The endpoint must be on the origin of the
// CONFIGURED URL (not of wherever a redirect of the stream led): every POST carries the
// credentials, so a redirected stream cannot move them to another origin.

#include <map>
#include <utility>
#include <vector>

#include "framing/utf8.hpp"
#include "jsonrpc/message_writer.hpp"
#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/framing.hpp"
#include "mcprt/url.hpp"
#include "protocol/http_common.hpp"
#include "protocol/http_transports.hpp"

namespace mcprt::detail {

namespace {

class LegacySseState : public std::enable_shared_from_this<LegacySseState> {
 public:
  enum class Phase { idle, connecting, open, closed };

  struct Post {
    std::uint64_t seq = 0;
    RpcKind kind = RpcKind::other;
    json id;
    bool is_initialize = false;
    std::shared_ptr<HttpCall> call;
  };

  LegacySseState(std::shared_ptr<HttpConnection> conn, std::string fallback_note)
      : conn_(std::move(conn)), fallback_note_(std::move(fallback_note)) {}
  ~LegacySseState() { abort_everything(); }

  void start(TransportHandlers handlers) {
    if (phase_ != Phase::idle) {
      if (phase_ == Phase::closed && !close_fired_) {
        handlers_ = std::move(handlers);
        post_close(closed_error());
      }
      return;
    }
    handlers_ = std::move(handlers);
    phase_ = Phase::connecting;
    open_stream();
  }

  Status send(const json& message) {
    if (phase_ != Phase::connecting && phase_ != Phase::open) {
      return conn_->named(Error::make(ErrorCode::closed, "connection is closed"));
    }
    if (phase_ == Phase::connecting) {
      outbox_.push_back(message);
      return {};
    }
    post_message(message);
    return {};
  }

  void close() {
    if (phase_ == Phase::closed) return;
    const bool started = phase_ != Phase::idle;
    phase_ = Phase::closed;
    abort_everything();
    if (started) post_close(closed_error());
  }

  void destroy() {
    destroyed_ = true;
    handlers_ = {};
    abort_everything();
  }

  std::string diagnostics() const {
    std::string out = "legacy HTTP+SSE " + conn_->options().url;
    if (!endpoint_.empty()) out += ", endpoint " + endpoint_;
    return out;
  }

 private:
  Error closed_error() const {
    return conn_->named(Error::make(ErrorCode::closed, "connection closed"));
  }

  bool live() const {
    return (phase_ == Phase::connecting || phase_ == Phase::open) && !destroyed_;
  }

  void open_stream() {
    std::weak_ptr<LegacySseState> weak = weak_from_this();
    HttpCall::Events events;
    events.decorate = [](HttpHeaders& h) { h.set("Accept", "text/event-stream"); };
    events.on_head = [weak](const HttpResponseHead& head) {
      auto self = weak.lock();
      if (!self || !self->live()) return;
      self->stream_url_ = head.final_url;
      if (!media_type_is(head.headers.get("Content-Type"), "text/event-stream")) {
        self->fail(Error::make(ErrorCode::protocol,
                               "GET " + head.final_url + " did not answer with an event stream "
                               "(Content-Type: " + sanitize_utf8(utf8_prefix(
                                   head.headers.get("Content-Type"), 100)) + ")"));
      }
    };
    events.on_chunk = [weak](std::string_view bytes) {
      if (auto self = weak.lock(); self && self->live()) self->on_stream_bytes(bytes);
    };
    events.on_end = [weak](Status status) {
      auto self = weak.lock();
      if (!self || !self->live()) return;
      std::string what = "the server closed the SSE stream (" + self->stream_url_ + ")";
      if (!status) what = "the SSE stream from " + self->stream_url_ + " broke: " + status.error().message;
      self->fail(Error::make(status ? ErrorCode::closed : status.error().code, std::move(what)));
    };
    events.on_failure = [weak](const HttpFailure& f) {
      auto self = weak.lock();
      if (!self || !self->live()) return;
      if (f.kind == HttpFailure::Kind::connection_lost) {
        self->lose_connection(f.error);
      } else {
        self->fail(f.error);
      }
    };
    stream_call_ = HttpCall::start(conn_, {"GET", conn_->options().url, {}, 0, true}, std::move(events));
  }

  void on_stream_bytes(std::string_view bytes) {
    std::vector<SseEvent> events;
    Status s = parser_.feed(bytes, [&](const SseEvent& ev) { events.push_back(ev); });
    for (SseEvent& ev : events) {
      if (ev.event == "endpoint") {
        on_endpoint(ev.data);
      } else if (ev.event == "message") {
        Result<json> message =
            parse_untrusted_json(ev.data, {conn_->options().max_json_nesting_levels,
                                           handlers_.raw_tool_schemas});
        if (!message) {
          report_unreadable_message(ev.data, message.error(), conn_->prefix(), &conn_->log(),
                                    handlers_);
          if (!live()) return;
          continue;
        }
        if (handlers_.on_message) {
          got_message_ = true;
          handlers_.on_message(std::move(message).value());
        }
      } else {
        conn_->log().debug(conn_->prefix() + "ignoring SSE event \"" +
                           sanitize_utf8(utf8_prefix(ev.event, 100)) + "\"");
      }
      if (!live()) return;
    }
    if (!s) fail(std::move(s).error());
  }

  void on_endpoint(std::string_view data) {
    while (!data.empty() && (data.back() == ' ' || data.back() == '\r' || data.back() == '\n')) {
      data.remove_suffix(1);
    }
    const std::optional<std::string> url = resolve_url(stream_url_, data);
    const std::string shown = sanitize_utf8(utf8_prefix(data, 200));
    if (!url) {
      fail(Error::make(ErrorCode::protocol, "the SSE endpoint event is not a usable URL: " + shown));
      return;
    }
    // Relative endpoints resolve against the stream's final URL (that is where the event
    // came from), but only the configured origin may receive the POSTs (SPEC §17).
    const std::string& configured = conn_->options().url;
    if (!same_origin(*url, configured)) {
      std::string why = "the SSE endpoint " + *url +
                        " is not on the same origin as the configured URL " + configured;
      if (!same_origin(stream_url_, configured)) {
        why += " (the stream was redirected to " + stream_url_ + ")";
      }
      fail(Error::make(ErrorCode::protocol, why + "; refusing to send messages there",
                       json_object({{"endpoint", *url}, {"url", configured}, {"stream_url", stream_url_}})));
      return;
    }
    if (!endpoint_.empty()) {
      if (*url != endpoint_) conn_->log().debug(conn_->prefix() + "the SSE endpoint moved to " + *url);
      endpoint_ = *url;
      return;
    }
    endpoint_ = *url;
    phase_ = Phase::open;
    std::vector<json> outbox;
    outbox.swap(outbox_);
    for (const json& m : outbox) {
      if (!live()) return;
      post_message(m);
    }
  }

  void post_message(const json& message) {
    auto post = std::make_shared<Post>();
    post->seq = next_seq_++;
    post->kind = rpc_kind(message);
    if (post->kind == RpcKind::request || post->kind == RpcKind::response) post->id = message["id"];
    post->is_initialize = post->kind == RpcKind::request &&
                          message["method"].get_ref<const std::string&>() == "initialize";
    posts_[post->seq] = post;

    std::weak_ptr<LegacySseState> weak = weak_from_this();
    std::weak_ptr<Post> wpost = post;
    HttpCall::Events events;
    events.decorate = [](HttpHeaders& h) {
      h.set("Content-Type", "application/json");
      h.set("Accept", "application/json, text/event-stream");
    };
    // The answer comes on the stream; only acceptance matters here.
    events.on_end = [weak, wpost](Status) {
      auto self = weak.lock();
      auto p = wpost.lock();
      if (self && p) self->posts_.erase(p->seq);
    };
    events.on_failure = [weak, wpost](const HttpFailure& f) {
      auto self = weak.lock();
      auto p = wpost.lock();
      if (!self || !p || !self->live()) return;
      if (f.kind == HttpFailure::Kind::connection_lost) {
        self->lose_connection(f.error);  // the server is gone: every request fails once
      } else {
        self->post_failed(p, f.error);
      }
    };
    std::string body = thread_message_writer().text(message);
    post->call = HttpCall::start(conn_, {"POST", endpoint_, std::move(body), 0, true}, std::move(events));
  }

  // Same choice as Streamable HTTP: initialize ends the connection, a request fails
  // alone (synthesized error response), anything else is logged.
  void post_failed(const std::shared_ptr<Post>& post, const Error& error) {
    posts_.erase(post->seq);
    if (post->is_initialize) {
      fail(error);
      return;
    }
    Error e = conn_->named(error);
    if (post->kind == RpcKind::request) {
      if (handlers_.on_message) handlers_.on_message(synthesized_error_response(post->id, e));
      return;
    }
    conn_->log().warn(conn_->prefix() + "could not deliver a message: " +
                      e.message.substr(conn_->prefix().size()));
  }

  void abort_everything() {
    if (stream_call_) stream_call_->cancel();
    stream_call_.reset();
    for (auto& [seq, p] : posts_) {
      if (p->call) p->call->cancel();
    }
    posts_.clear();
    outbox_.clear();
  }

  void lose_connection(const Error& cause) {
    fail(Error::make(ErrorCode::transport, cause.message, cause.data));
  }

  void fail(Error error) {
    if (phase_ == Phase::closed) return;
    phase_ = Phase::closed;
    abort_everything();
    Error e = conn_->named(std::move(error));
    if (!fallback_note_.empty() && !got_message_) e.message += " (" + fallback_note_ + ")";
    conn_->log().warn(e.message);
    fire_close(e);
  }

  void post_close(Error error) {
    conn_->executor().post([weak = weak_from_this(), error = std::move(error)] {
      if (auto self = weak.lock()) self->fire_close(error);
    });
  }

  void fire_close(const Error& error) {
    if (close_fired_ || destroyed_) return;
    close_fired_ = true;
    auto on_close = std::move(handlers_.on_close);
    handlers_ = {};
    if (on_close) on_close(error);
  }

  std::shared_ptr<HttpConnection> conn_;
  std::string fallback_note_;
  TransportHandlers handlers_;
  Phase phase_ = Phase::idle;
  bool close_fired_ = false;
  bool destroyed_ = false;
  bool got_message_ = false;

  std::shared_ptr<HttpCall> stream_call_;
  SseParser parser_{conn_->options().max_message_bytes};
  std::string stream_url_;
  std::string endpoint_;
  std::vector<json> outbox_;
  std::map<std::uint64_t, std::shared_ptr<Post>> posts_;
  std::uint64_t next_seq_ = 1;
};

class LegacySseTransport final : public Transport {
 public:
  LegacySseTransport(std::shared_ptr<HttpConnection> conn, std::string fallback_note)
      : state_(std::make_shared<LegacySseState>(std::move(conn), std::move(fallback_note))) {}
  ~LegacySseTransport() override { state_->destroy(); }

  void start(TransportHandlers handlers) override { state_->start(std::move(handlers)); }
  Status send(const json& message) override { return state_->send(message); }
  void close() override { state_->close(); }
  std::string diagnostics() const override { return state_->diagnostics(); }

 private:
  std::shared_ptr<LegacySseState> state_;
};

}  // namespace

std::unique_ptr<Transport> make_legacy_sse_transport(std::shared_ptr<HttpConnection> conn,
                                                     std::string fallback_note) {
  return std::make_unique<LegacySseTransport>(std::move(conn), std::move(fallback_note));
}

}  // namespace mcprt::detail
