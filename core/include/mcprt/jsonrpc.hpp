#pragma once
// The JSON-RPC 2.0 peer: a correlation table with per-request deadlines that fails
// closed. It owns a Transport, sends requests/notifications, routes responses by id,
// dispatches incoming requests and notifications to handlers.
//
// Rules (SPEC §3.4, STYLE 6):
//  - request ids are per peer, increasing integers starting at 0 or 1 (id 0 is valid);
//  - each request has a deadline (timeout); progress may reset it, bounded by a total cap;
//  - an aborted or timed-out request sends `notifications/cancelled {requestId, reason}`
//    and completes locally (aborted / timeout); a late response is ignored;
//  - when the transport closes, every pending request fails exactly once with the close
//    error (closed / exited ...), and later requests fail at once with not_connected;
//  - responses with unknown ids are ignored (logged at debug level), never fatal;
//  - incoming requests are answered by the request handler (default: -32601).
//
// Threading: single-threaded, on the executor given at construction. All callbacks run
// on that executor, never inside the call that started them.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "mcprt/abort.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/result.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

struct RequestOptions {
  // Deadline for an answer; 0 = none.
  Millis timeout{0};
  // When a progress notification for this request arrives, restart the timeout...
  bool reset_timeout_on_progress = true;
  // ...but never past this total since the request was sent; 0 = no cap.
  Millis max_total_timeout{0};
  // Cancels the request (sends notifications/cancelled, completes with aborted).
  AbortSignal signal;
  // Called with the `params` of each notifications/progress whose progressToken equals
  // this request's token. Setting it makes the peer add `_meta.progressToken` to params.
  std::function<void(const json& progress_params)> on_progress;
};

using ResponseCallback = std::function<void(Result<json>)>;

// A request the peer sent us. Reply exactly once (later replies are ignored).
struct IncomingRequest {
  json id;
  std::string method;
  json params;
};
using Responder = std::function<void(Result<json>)>;  // Error::wire(...) → error response

class RpcPeer {
 public:
  struct Handlers {
    // Incoming request; default answers -32601 "Method not found".
    std::function<void(const IncomingRequest&, Responder)> on_request;
    // Incoming notification (progress notifications for our requests are routed to the
    // request's on_progress first and also delivered here).
    std::function<void(const std::string& method, const json& params)> on_notification;
    // The transport closed; fires once, after all pending requests were failed.
    std::function<void(const Error&)> on_close;
  };

  RpcPeer(Executor& executor, std::unique_ptr<Transport> transport, Logger* logger = nullptr);
  ~RpcPeer();  // closes the transport; pending callbacks do not run after destruction
  RpcPeer(const RpcPeer&) = delete;
  RpcPeer& operator=(const RpcPeer&) = delete;

  void start(Handlers handlers);

  // Sends a request. Returns the request id, or an error (closed, invalid) when it could
  // not be sent — then `done` never fires. Otherwise `done` fires exactly once.
  Result<json> request(const std::string& method, json params, RequestOptions options,
                       ResponseCallback done);
  Status notify(const std::string& method, json params);

  // Closes the transport; pending requests fail once with ErrorCode::closed.
  void close();
  bool closed() const;
  std::size_t pending_count() const;
  Transport& transport();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcprt
