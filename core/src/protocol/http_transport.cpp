// make_http_transport and the auto-fallback wrapper (mode `automatic`, SPEC §3.3):
// Streamable HTTP first; when the first initialize POST is answered 400, 404 or 405 the
// wrapper swaps in a legacy SSE transport and re-sends what it had sent so far (the
// initialize, and anything queued behind it). Once a message arrived through the
// Streamable transport the choice is final.
//
//   streamable ─initialize answered 400/404/405→ legacy (once)
//   streamable ─first message arrived→ committed (no more buffering)
//
// Stateless (2026-07-28) messages go to the Streamable transport and take no part in the
// choice: they are not buffered for a replay, their answers do not commit, and their
// refusals never fall back (only an initialize does). So a session that probes with a
// stateless request and then falls back to initialize gets exactly the 2025 behaviour,
// legacy SSE included. A stateless request still unanswered when the fallback happens
// fails (the legacy transport cannot carry it).

#include "mcprt/json_object.hpp"
#include "mcprt/http_transport.hpp"

#include <map>
#include <utility>
#include <vector>

#include "mcprt/url.hpp"
#include "protocol/http_common.hpp"
#include "protocol/http_transports.hpp"

namespace mcprt {

namespace detail {
namespace {

class AutoHttpState : public std::enable_shared_from_this<AutoHttpState> {
 public:
  explicit AutoHttpState(std::shared_ptr<HttpConnection> conn) : conn_(std::move(conn)) {}

  void start(TransportHandlers handlers) {
    if (started_) return;
    started_ = true;
    handlers_ = std::move(handlers);
    std::weak_ptr<AutoHttpState> weak = weak_from_this();
    inner_ = make_streamable_http_transport(conn_, [weak](const HttpFailure& f) {
      auto self = weak.lock();
      return self && self->fall_back(f);
    });
    inner_->start(forwarding_handlers());
  }

  Status send(const json& message, const SendOptions& options) {
    if (!inner_) {
      return conn_->named(Error::make(ErrorCode::closed, "connection is not started"));
    }
    if (options.stateless) return send_stateless(message, options);
    sent_stateful_ = true;
    Status s = inner_->send_with(message, options);
    if (s && !committed_) sent_.push_back(message);
    return s;
  }

  void close() {
    if (inner_) {
      inner_->close();
    } else {
      closed_before_start_ = true;
    }
  }

  bool closed_before_start() const { return closed_before_start_; }

  std::string diagnostics() const { return inner_ ? inner_->diagnostics() : std::string(); }

  void destroy() {
    handlers_ = {};
    inner_.reset();
    retired_.reset();
  }

 private:
  Status send_stateless(const json& message, const SendOptions& options) {
    const RpcKind kind = rpc_kind(message);
    if (kind == RpcKind::notification &&
        message["method"].get_ref<const std::string&>() == "notifications/cancelled") {
      if (const auto params = message.find("params");
          params != message.end() && params->is_object()) {
        if (const auto id = params->find("requestId"); id != params->end()) {
          if (auto key = rpc_id_key(*id)) stateless_pending_.erase(*key);
        }
      }
      // After a fallback no stateless request is open any more (they failed), and legacy
      // SSE must not see 2026-07-28 traffic.
      if (fell_back_) return {};
    }
    Status s = inner_->send_with(message, options);
    if (s && kind == RpcKind::request) {
      if (auto key = rpc_id_key(message["id"])) stateless_pending_[*key] = message["id"];
    }
    return s;
  }

  // True when `message` answers a stateless request (which it then no longer waits for).
  bool answers_stateless(const json& message) {
    if (rpc_kind(message) != RpcKind::response) return false;
    const std::optional<std::string> key = rpc_id_key(message["id"]);
    return key && stateless_pending_.erase(*key) > 0;
  }

  TransportHandlers forwarding_handlers() {
    std::weak_ptr<AutoHttpState> weak = weak_from_this();
    TransportHandlers h;
    h.raw_tool_schemas = handlers_.raw_tool_schemas;
    h.on_message = [weak](json message) {
      auto self = weak.lock();
      if (!self) return;
      // Only the stateful exchange (initialize and what follows it) proves the transport.
      if (!self->answers_stateless(message) && self->sent_stateful_) {
        self->committed_ = true;
        self->sent_.clear();
      }
      if (self->handlers_.on_message) self->handlers_.on_message(std::move(message));
    };
    h.on_unreadable = [weak](const UnreadableMessage& message) {
      auto self = weak.lock();
      if (self && self->handlers_.on_unreadable) self->handlers_.on_unreadable(message);
    };
    h.on_renewed = [weak] {
      auto self = weak.lock();
      if (self && self->handlers_.on_renewed) self->handlers_.on_renewed();
    };
    h.on_close = [weak](const Error& error) {
      auto self = weak.lock();
      if (!self) return;
      auto on_close = std::move(self->handlers_.on_close);
      self->handlers_ = {};
      if (on_close) on_close(error);
    };
    return h;
  }

  bool fall_back(const HttpFailure& f) {
    if (fell_back_ || committed_) return false;
    if (f.status != 400 && f.status != 404 && f.status != 405) return false;
    fell_back_ = true;
    const std::string note = "after Streamable HTTP answered HTTP " + std::to_string(f.status) +
                             " to initialize";
    conn_->log().info(conn_->prefix() + "Streamable HTTP initialize answered HTTP " +
                      std::to_string(f.status) + "; falling back to legacy HTTP+SSE");
    // We are inside the Streamable transport's own callback: it stops itself when we
    // return true, and dies on a later turn.
    retired_ = std::move(inner_);
    conn_->executor().post([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->retired_.reset();
    });
    inner_ = make_legacy_sse_transport(conn_, note);
    inner_->start(forwarding_handlers());
    std::vector<json> replay;
    replay.swap(sent_);
    for (const json& m : replay) {
      Status s = inner_->send(m);
      if (!s) break;  // the legacy transport closed; its on_close says why
    }
    fail_stateless_pending(f.status);
    return true;
  }

  // The retired Streamable transport dropped them silently: each still gets its answer
  // (on a later turn: we are inside that transport's callback).
  void fail_stateless_pending(int status) {
    std::map<std::string, json> pending;
    pending.swap(stateless_pending_);
    if (pending.empty()) return;
    const Error error =
        conn_->named(Error::make(ErrorCode::transport,
                                 "the request was lost: the server at " + conn_->options().url +
                                     " answered HTTP " + std::to_string(status) +
                                     " to initialize and the connection moved to legacy "
                                     "HTTP+SSE, which does not carry 2026-07-28 requests",
                                 json_object({{"url", conn_->options().url}})));
    conn_->executor().post([weak = weak_from_this(), pending = std::move(pending), error] {
      auto self = weak.lock();
      if (!self) return;
      for (const auto& [key, id] : pending) {
        if (!self->handlers_.on_message) return;
        self->handlers_.on_message(synthesized_error_response(id, error));
      }
    });
  }

  std::shared_ptr<HttpConnection> conn_;
  TransportHandlers handlers_;
  std::unique_ptr<Transport> inner_;
  std::unique_ptr<Transport> retired_;
  std::vector<json> sent_;  // what the Streamable transport sent before it proved itself
  std::map<std::string, json> stateless_pending_;  // id key → id of unanswered stateless requests
  bool sent_stateful_ = false;  // a message of the 2025 wire went out (initialize, ...)
  bool started_ = false;
  bool committed_ = false;
  bool fell_back_ = false;
  bool closed_before_start_ = false;
};

class AutoHttpTransport final : public Transport {
 public:
  explicit AutoHttpTransport(std::shared_ptr<HttpConnection> conn)
      : conn_(conn), state_(std::make_shared<AutoHttpState>(std::move(conn))) {}
  ~AutoHttpTransport() override { state_->destroy(); }

  void start(TransportHandlers handlers) override {
    if (state_->closed_before_start()) {
      // Same rule as every transport: close() before start() reports on_close later.
      conn_->executor().post([h = std::move(handlers), e = conn_->named(Error::make(
                                                           ErrorCode::closed, "connection closed"))] {
        if (h.on_close) h.on_close(e);
      });
      return;
    }
    state_->start(std::move(handlers));
  }
  Status send(const json& message) override { return state_->send(message, {}); }
  Status send_with(const json& message, const SendOptions& options) override {
    return state_->send(message, options);
  }
  void close() override { state_->close(); }
  std::string diagnostics() const override { return state_->diagnostics(); }

 private:
  std::shared_ptr<HttpConnection> conn_;
  std::shared_ptr<AutoHttpState> state_;
};

}  // namespace
}  // namespace detail

Result<std::unique_ptr<Transport>> make_http_transport(Executor& executor, HttpClient& client,
                                                       HttpTransportOptions options) {
  if (!parse_http_url(options.url)) {
    std::string prefix =
        options.server_name.empty() ? std::string() : "Server \"" + options.server_name + "\": ";
    return Error::make(ErrorCode::invalid_config,
                       prefix + "\"" + options.url + "\" is not an http:// or https:// URL");
  }
  const HttpTransportMode mode = options.mode;
  auto conn = std::make_shared<detail::HttpConnection>(executor, client, std::move(options));
  std::unique_ptr<Transport> transport;
  switch (mode) {
    case HttpTransportMode::streamable:
      transport = detail::make_streamable_http_transport(std::move(conn));
      break;
    case HttpTransportMode::sse:
      transport = detail::make_legacy_sse_transport(std::move(conn));
      break;
    case HttpTransportMode::automatic:
      transport = std::make_unique<detail::AutoHttpTransport>(std::move(conn));
      break;
  }
  return transport;
}

}  // namespace mcprt
