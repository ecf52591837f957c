// make_http_transport and the auto-fallback wrapper (mode `automatic`, SPEC §3.3):
// Streamable HTTP first; when the first initialize POST is answered 400, 404 or 405 the
// wrapper swaps in a legacy SSE transport and re-sends what it had sent so far (the
// initialize, and anything queued behind it). Once a message arrived through the
// Streamable transport the choice is final.
//
//   streamable ─initialize answered 400/404/405→ legacy (once)
//   streamable ─first message arrived→ committed (no more buffering)

#include "mcprt/http_transport.hpp"

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

  Status send(const json& message) {
    if (!inner_) {
      return conn_->named(Error::make(ErrorCode::closed, "connection is not started"));
    }
    Status s = inner_->send(message);
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
  TransportHandlers forwarding_handlers() {
    std::weak_ptr<AutoHttpState> weak = weak_from_this();
    TransportHandlers h;
    h.on_message = [weak](json message) {
      auto self = weak.lock();
      if (!self) return;
      self->committed_ = true;
      self->sent_.clear();
      if (self->handlers_.on_message) self->handlers_.on_message(std::move(message));
    };
    h.on_unreadable = [weak](const UnreadableMessage& message) {
      auto self = weak.lock();
      if (self && self->handlers_.on_unreadable) self->handlers_.on_unreadable(message);
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
    return true;
  }

  std::shared_ptr<HttpConnection> conn_;
  TransportHandlers handlers_;
  std::unique_ptr<Transport> inner_;
  std::unique_ptr<Transport> retired_;
  std::vector<json> sent_;  // what the Streamable transport sent before it proved itself
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
  Status send(const json& message) override { return state_->send(message); }
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
