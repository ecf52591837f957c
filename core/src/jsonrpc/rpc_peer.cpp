// RpcPeer: the correlation table. Every pending request lives in `pending` until exactly
// one of these removes it: its response, its deadline, its abort signal, or the transport
// closing. Whoever removes it posts the completion; nothing else can complete it again.

#include <algorithm>
#include <map>
#include <utility>

#include "jsonrpc/message.hpp"
#include "jsonrpc/raw_json.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/jsonrpc.hpp"

namespace mcprt {
namespace {

constexpr const char* kProgressMethod = "notifications/progress";
constexpr const char* kCancelledMethod = "notifications/cancelled";

std::string ms_text(Millis d) { return std::to_string(d.count()) + " ms"; }

}  // namespace

struct RpcPeer::Impl : std::enable_shared_from_this<Impl> {
  struct Pending {
    std::string method;
    ResponseCallback done;
    Millis timeout{0};
    bool reset_on_progress = true;
    Millis max_total{0};
    TimePoint sent_at;
    ScopedTimer deadline;
    bool deadline_is_total_cap = false;  // which bound the armed timer stands for
    AbortSignal signal;
    std::uint64_t abort_listener = 0;
    std::function<void(const json&)> on_progress;
    bool stateless = false;  // RequestOptions::send.stateless, for its notifications/cancelled
    bool raw_tool_schemas = false;  // RequestOptions::raw_tool_schemas
  };

  Impl(Executor& ex, std::unique_ptr<Transport> t, Logger* l)
      : executor(ex), transport(std::move(t)), logger(l ? l : &null_logger) {}

  Executor& executor;
  std::unique_ptr<Transport> transport;
  NullLogger null_logger;
  Logger* logger;
  Handlers handlers;
  bool started = false;
  bool closed = false;          // no more sends; set by close() or the transport closing
  bool close_reported = false;  // the transport's on_close arrived
  bool destroyed = false;       // the RpcPeer handle is gone: run no user callback
  std::optional<Error> close_reason;
  std::int64_t next_id = 0;
  std::map<std::int64_t, Pending> pending;  // ordered: close fails requests oldest first
  // Nodes of `pending` whose requests completed, reused by the next requests: a request in
  // steady state allocates no map node.
  std::vector<std::map<std::int64_t, Pending>::node_type> spare_nodes;
  // {"id", "jsonrpc": "2.0", "method", "params"}, refilled for each request with params: the
  // envelope's members are allocated once, not per request (make_request builds a new one).
  json request_envelope;

  // The request message for `id`: the reused envelope holding `params` (moved in), or a
  // new message for a request without params (JSON-RPC omits the member).
  const json& request_message(std::int64_t id, const std::string& method, json& params,
                              json& fresh) {
    if (params.is_null()) return fresh = detail::make_request(id, method, json());
    if (!request_envelope.is_object()) {
      request_envelope = detail::make_request(0, std::string(), json::object());
    }
    request_envelope["id"] = id;
    request_envelope["method"].get_ref<std::string&>() = method;
    request_envelope["params"] = std::move(params);
    return request_envelope;
  }

  // A map node for a new pending request, reused when one is spare.
  Pending& add_pending(std::int64_t id) {
    if (spare_nodes.empty()) return pending.emplace(id, Pending{}).first->second;
    auto node = std::move(spare_nodes.back());
    spare_nodes.pop_back();
    node.key() = id;
    return pending.insert(std::move(node)).position->second;
  }

  // Removes a pending request, keeping its (emptied) node for the next one; at most 64
  // are kept, so a burst does not pin its memory.
  Pending take_pending(std::map<std::int64_t, Pending>::iterator it) {
    auto node = pending.extract(it);
    Pending p = std::move(node.mapped());
    if (spare_nodes.size() < 64) {
      node.mapped() = Pending{};
      spare_nodes.push_back(std::move(node));
    }
    return p;
  }

  // --- completion ------------------------------------------------------------------

  void post_completion(ResponseCallback done, Result<json> result) {
    if (!done) return;
    executor.post(
        [weak = weak_from_this(), done = std::move(done), result = std::move(result)]() mutable {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          done(std::move(result));
        });
  }

  // Removes the request and posts its completion. No-op when it already completed.
  void complete(std::int64_t id, Result<json> result) {
    auto it = pending.find(id);
    if (it == pending.end()) return;
    Pending p = take_pending(it);
    p.deadline.reset();
    if (p.abort_listener != 0) p.signal.remove_listener(p.abort_listener);
    post_completion(std::move(p.done), std::move(result));
  }

  void fail_all_pending(const Error& error) {
    auto all = std::move(pending);
    pending.clear();
    for (auto& [id, p] : all) {
      p.deadline.reset();
      if (p.abort_listener != 0) p.signal.remove_listener(p.abort_listener);
      post_completion(std::move(p.done), error);
    }
  }

  // --- deadlines and cancellation ----------------------------------------------------

  // (Re)arms the request's timer at the earlier of "timeout after now" and the total cap.
  void arm_deadline(std::int64_t id, Pending& p) {
    p.deadline.reset();
    const TimePoint now = executor.now();
    std::optional<TimePoint> at;
    if (p.timeout > Millis(0)) at = now + p.timeout;
    p.deadline_is_total_cap = false;
    if (p.max_total > Millis(0)) {
      const TimePoint cap = p.sent_at + p.max_total;
      if (!at || cap <= *at) {
        at = cap;
        p.deadline_is_total_cap = true;
      }
    }
    if (!at) return;
    const Millis delay = std::max(Millis(0), *at - now);
    p.deadline = ScopedTimer(executor, executor.post_after(delay, [weak = weak_from_this(), id] {
      if (auto self = weak.lock()) self->on_deadline(id);
    }));
  }

  void on_deadline(std::int64_t id) {
    auto it = pending.find(id);
    if (it == pending.end()) return;
    Pending& p = it->second;
    p.deadline.release();  // this timer just fired; nothing to cancel
    std::string message = "Request " + p.method + " timed out after " +
                          ms_text(p.deadline_is_total_cap ? p.max_total : p.timeout);
    if (p.deadline_is_total_cap && p.timeout > Millis(0)) message += " (maximum total time)";
    send_cancelled(id, p, message);
    complete(id, Error::make(ErrorCode::timeout, message));
  }

  void on_abort(std::int64_t id) {
    auto it = pending.find(id);
    if (it == pending.end()) return;
    Pending& p = it->second;
    p.abort_listener = 0;  // the signal dropped its listeners when it fired
    const std::string& reason = p.signal.reason();
    std::string message = "Request " + p.method + " aborted";
    if (!reason.empty() && reason != "aborted") message += ": " + reason;
    send_cancelled(id, p, reason.empty() ? "aborted" : reason);
    complete(id, Error::make(ErrorCode::aborted, message));
  }

  void send_cancelled(std::int64_t id, const Pending& p, const std::string& reason) {
    // MCP: "The initialize request MUST NOT be cancelled by clients"; the session closes
    // the connection instead.
    if (p.method == "initialize" || closed) return;
    SendOptions send;
    send.stateless = p.stateless;
    auto st = transport->send_with(
        detail::make_notification(kCancelledMethod, json_object({{"requestId", id}, {"reason", reason}})),
        send);
    if (!st) logger->debug("Could not send notifications/cancelled: " + st.error().describe());
  }

  // --- transport events --------------------------------------------------------------

  void on_transport_close(const Error& error) {
    if (close_reported) return;
    close_reported = true;
    closed = true;
    if (!close_reason) close_reason = error;
    fail_all_pending(error);
    // Posted after the failures above, so the owner sees every request fail first.
    executor.post([weak = weak_from_this(), error] {
      auto self = weak.lock();
      if (!self || self->destroyed || !self->handlers.on_close) return;
      self->handlers.on_close(error);
    });
  }

  void on_transport_message(json message) {
    if (message.is_array()) {
      // JSON-RPC batches (MCP 2025-03-26 allowed receiving them): handle each element.
      if (message.empty()) {
        logger->warn("Ignoring an empty JSON-RPC batch");
        return;
      }
      for (auto& element : message) {
        if (destroyed || closed) return;
        handle_message(std::move(element));
      }
      return;
    }
    if (message.is_object()) settle_raw_tool_schemas(message);
    handle_message(std::move(message));
  }

  // The transport keeps tools/list schemas raw (raw_json.hpp) for whoever asked for them;
  // every other message goes on as plain JSON. (Only a top-level object has any.)
  void settle_raw_tool_schemas(json& message) {
    auto result = message.find("result");
    if (result == message.end() || !result->is_object() || !result->contains("tools")) return;
    if (auto id = message.find("id"); id != message.end()) {
      const auto key = detail::id_as_integer(*id);
      auto it = key ? pending.find(*key) : pending.end();
      if (it != pending.end() && it->second.raw_tool_schemas) return;
    }
    detail::restore_raw_tool_schemas(message);
  }

  void handle_message(json raw) {
    if (destroyed || closed) return;
    detail::Message m = detail::classify_message(std::move(raw));
    // What is left of the message (its envelope, once the result or params moved out) is
    // freed now and without allocating, not by nlohmann's destructor (dispose_json).
    detail::dispose_json(raw);
    switch (m.kind) {
      case detail::MessageKind::response:
        return handle_response(std::move(m));
      case detail::MessageKind::request:
        return handle_request(std::move(m));
      case detail::MessageKind::notification:
        return handle_notification(m);
      case detail::MessageKind::invalid:
        return handle_invalid(m);
    }
  }

  void handle_response(detail::Message m) {
    const auto id = detail::id_as_integer(m.id);
    if (!id || pending.find(*id) == pending.end()) {
      // Normal after a timeout or abort (the answer raced the cancellation).
      logger->debug("Ignoring response with unknown id " + detail::describe_json(m.id));
      return;
    }
    if (m.error) {
      complete(*id, std::move(*m.error));
    } else {
      complete(*id, std::move(m.result));
    }
  }

  void handle_request(detail::Message m) {
    IncomingRequest request{std::move(m.id), std::move(m.method), std::move(m.params)};
    Responder respond = make_responder(request.id);
    if (handlers.on_request) {
      handlers.on_request(request, std::move(respond));
    } else {
      respond(Error::wire(rpc_code::kMethodNotFound, "Method not found: " + request.method));
    }
  }

  void handle_notification(const detail::Message& m) {
    if (m.method == kProgressMethod) route_progress(m.params);
    if (destroyed || closed || !handlers.on_notification) return;
    handlers.on_notification(m.method, m.params);
  }

  void route_progress(const json& params) {
    if (!params.is_object()) return;
    auto token = params.find("progressToken");
    if (token == params.end()) return;
    const auto id = detail::id_as_integer(*token);
    if (!id) return;
    auto it = pending.find(*id);
    if (it == pending.end() || !it->second.on_progress) return;
    Pending& p = it->second;
    if (p.reset_on_progress && p.timeout > Millis(0)) arm_deadline(*id, p);
    // A copy: the callback may abort the request, which erases `p`.
    auto on_progress = p.on_progress;
    on_progress(params);
  }

  void handle_invalid(const detail::Message& m) {
    if (m.looks_like == detail::LooksLike::request) {
      logger->warn("Invalid JSON-RPC request: " + m.problem);
      const json id = detail::is_valid_id(m.id) ? m.id : json(nullptr);
      send_or_log(detail::make_error_response(id, rpc_code::kInvalidRequest,
                                              "Invalid Request: " + m.problem));
      return;
    }
    if (m.looks_like == detail::LooksLike::response) {
      const auto id = detail::id_as_integer(m.id);
      if (id && pending.find(*id) != pending.end()) {
        const std::string method = pending.find(*id)->second.method;
        complete(*id, Error::make(ErrorCode::protocol,
                                  "Invalid response to " + method + ": " + m.problem));
        return;
      }
    }
    // Never answer a broken response or an error: two peers would echo errors forever.
    logger->warn("Ignoring invalid JSON-RPC message: " + m.problem);
  }

  // A message the transport could not parse. It was logged there; what is left is to
  // answer for it: the request it answers fails now (else it would wait for its timeout),
  // a request from the server gets -32700 (else the server would wait), and anything
  // else is dropped.
  void on_transport_unreadable(const UnreadableMessage& u) {
    if (destroyed || closed) return;
    if (u.has_method) {
      if (detail::is_valid_id(u.id)) {
        send_or_log(detail::make_error_response(u.id, rpc_code::kParseError,
                                                "Parse error: " + u.problem));
      }
      return;
    }
    const auto id = detail::id_as_integer(u.id);
    auto it = id ? pending.find(*id) : pending.end();
    if (it == pending.end()) {
      logger->debug("Unreadable message matches no pending request (id " +
                    detail::describe_json(u.id) + ")");
      return;
    }
    json data = json_object({{"problem", u.problem}, {"size_bytes", u.size_bytes}});
    complete(*id, Error::make(ErrorCode::protocol,
                              "Unreadable response to " + it->second.method + ": " + u.problem,
                              std::move(data)));
  }

  Responder make_responder(json id) {
    auto replied = std::make_shared<bool>(false);
    return [weak = weak_from_this(), id = std::move(id), replied](Result<json> result) {
      if (*replied) return;
      *replied = true;
      auto self = weak.lock();
      if (!self || self->closed) return;
      if (result.ok()) {
        self->send_or_log(detail::make_result_response(id, std::move(result).value()));
        return;
      }
      const Error& e = result.error();
      if (e.is_wire()) {
        self->send_or_log(detail::make_error_response(id, e.wire_code, e.message, e.data));
      } else {
        // A local failure while serving the request is an internal error for the peer.
        self->send_or_log(detail::make_error_response(id, rpc_code::kInternalError, e.message));
      }
    };
  }

  void send_or_log(const json& message) {
    auto st = transport->send(message);
    if (!st) logger->debug("Could not send JSON-RPC message: " + st.error().describe());
  }

  Error not_connected(const std::string& what) const {
    std::string message = "Cannot send " + what + ": the connection is closed";
    if (close_reason) message += " (" + close_reason->message + ")";
    return Error::make(ErrorCode::not_connected, std::move(message));
  }
};

RpcPeer::RpcPeer(Executor& executor, std::unique_ptr<Transport> transport, Logger* logger)
    : impl_(std::make_shared<Impl>(executor, std::move(transport), logger)) {}

RpcPeer::~RpcPeer() {
  Impl& d = *impl_;
  d.destroyed = true;
  // Drop the table without completing anything: timers are cancelled by their
  // ScopedTimers, abort listeners removed so a later abort() finds nothing of ours.
  auto all = std::move(d.pending);
  d.pending.clear();
  for (auto& [id, p] : all) {
    if (p.abort_listener != 0) p.signal.remove_listener(p.abort_listener);
  }
  if (!d.closed) {
    d.closed = true;
    d.transport->close();
  }
  // Handlers are not cleared here: one may be running right now (the owner destroyed us
  // from inside it). The Impl, and with it the handlers, goes when the last posted
  // closure that locked it returns; `destroyed` keeps them from being called again.
}

void RpcPeer::start(Handlers handlers) {
  Impl& d = *impl_;
  if (d.started) return;
  d.started = true;
  d.handlers = std::move(handlers);
  std::weak_ptr<Impl> weak = impl_;
  TransportHandlers th;
  th.raw_tool_schemas = true;
  th.on_message = [weak](json message) {
    if (auto self = weak.lock(); self && !self->destroyed) {
      self->on_transport_message(std::move(message));
    }
  };
  th.on_unreadable = [weak](const UnreadableMessage& message) {
    if (auto self = weak.lock(); self && !self->destroyed) self->on_transport_unreadable(message);
  };
  th.on_close = [weak](const Error& error) {
    if (auto self = weak.lock(); self && !self->destroyed) self->on_transport_close(error);
  };
  th.on_renewed = [weak] {
    auto self = weak.lock();
    if (self && !self->destroyed && !self->closed && self->handlers.on_renewed) self->handlers.on_renewed();
  };
  d.transport->start(std::move(th));
}

Result<json> RpcPeer::request(const std::string& method, json params, RequestOptions options,
                              ResponseCallback done) {
  Impl& d = *impl_;
  if (d.closed) return d.not_connected(method);
  if (options.signal.aborted()) {
    return Error::make(ErrorCode::aborted, "Request " + method + " aborted before it was sent");
  }
  const std::int64_t id = d.next_id;
  if (options.on_progress) {
    if (params.is_null()) params = json::object();
    if (!params.is_object()) {
      return Error::make(ErrorCode::invalid_argument,
                         "Request " + method + ": progress needs object params");
    }
    json& meta = params["_meta"];
    if (meta.is_null()) meta = json::object();
    if (!meta.is_object()) {
      return Error::make(ErrorCode::invalid_argument,
                         "Request " + method + ": params._meta is not an object");
    }
    // The request id doubles as the progress token: unique per peer, and easy to route.
    meta["progressToken"] = id;
  }
  json fresh;
  const json& message = d.request_message(id, method, params, fresh);
  Status sent = d.transport->send_with(message, options.send);
  // The params leave the envelope with this call (a large argument is not kept until the
  // next request). dispose_json frees them, or a fresh message, without allocating.
  detail::dispose_json(&message == &d.request_envelope ? d.request_envelope["params"] : fresh);
  if (!sent) return std::move(sent).error();
  ++d.next_id;

  Impl::Pending& p = d.add_pending(id);
  p.method = method;
  p.done = std::move(done);
  p.timeout = options.timeout;
  p.reset_on_progress = options.reset_timeout_on_progress;
  p.max_total = options.max_total_timeout;
  p.sent_at = d.executor.now();
  p.on_progress = std::move(options.on_progress);
  p.stateless = options.send.stateless;
  p.raw_tool_schemas = options.raw_tool_schemas;
  d.arm_deadline(id, p);
  p.signal = std::move(options.signal);
  if (p.signal.can_abort()) {
    p.abort_listener = p.signal.add_listener([weak = std::weak_ptr<Impl>(impl_), id] {
      if (auto self = weak.lock(); self && !self->destroyed) self->on_abort(id);
    });
  }
  return json(id);
}

Status RpcPeer::notify(const std::string& method, json params) {
  Impl& d = *impl_;
  if (d.closed) return d.not_connected(method);
  return d.transport->send(detail::make_notification(method, std::move(params)));
}

Status RpcPeer::notify(const std::string& method, json params, const SendOptions& send) {
  Impl& d = *impl_;
  if (d.closed) return d.not_connected(method);
  return d.transport->send_with(detail::make_notification(method, std::move(params)), send);
}

void RpcPeer::close() {
  Impl& d = *impl_;
  if (d.closed) return;
  d.closed = true;
  Error error = Error::make(ErrorCode::closed, "Connection closed");
  d.close_reason = error;
  d.fail_all_pending(error);
  d.transport->close();
}

bool RpcPeer::closed() const { return impl_->closed; }

std::size_t RpcPeer::pending_count() const { return impl_->pending.size(); }

Transport& RpcPeer::transport() { return *impl_->transport; }

}  // namespace mcprt
