#pragma once
// The JSON-RPC 2.0 peer: a correlation table with per-request deadlines that fails
// closed. It owns a Transport, sends requests/notifications, routes responses by id,
// dispatches incoming requests and notifications to handlers.
//
// Rules (SPEC §3.4, STYLE 6):
//  - request ids are per peer, increasing integers starting at 0 (id 0 is valid and is
//    never tested for truthiness); incoming ids of any valid type (number or string) are
//    echoed back unchanged;
//  - each request has a deadline (timeout); progress may reset it, bounded by a total cap;
//  - an aborted or timed-out request sends `notifications/cancelled {requestId, reason}`
//    (never for `initialize`, which MCP forbids cancelling) and completes locally with
//    ErrorCode::aborted / ErrorCode::timeout ("Request tools/call timed out after 5000 ms");
//    a late response is ignored;
//  - when the transport closes, every pending request fails exactly once with the close
//    error (closed / exited ...), and later requests fail at once with not_connected;
//  - responses with unknown ids are ignored (logged at debug level), never fatal; a
//    response id that is a string of digits ("7") matches request 7;
//  - incoming requests are answered by the request handler (default: -32601);
//  - malformed input never crashes the peer: a broken request is answered with -32600,
//    a broken response fails the request it names with ErrorCode::protocol, anything else
//    is logged and dropped; a batch (array) is handled element by element;
//  - a message the transport could not parse (TransportHandlers::on_unreadable: not JSON,
//    too deep, invalid UTF-8) whose top-level id names a pending request fails that
//    request at once with ErrorCode::protocol ("Unreadable response to tools/list: invalid
//    UTF-8 at byte 57"); one with a "method" and an id (a server request) is answered
//    -32700; anything else is dropped (the transport already logged it at warn level).
//
// Threading: single-threaded, on the executor given at construction. Every completion
// (ResponseCallback, on_close) is posted to that executor, never run inside the call that
// started it. on_request / on_notification / on_progress run from the transport's message
// callback (already on the executor). The executor and the logger must outlive the peer.
// Lifetime: after the peer is destroyed no callback runs; the transport is closed.

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
  // Handed to Transport::send_with with the request (HTTP headers of the 2026-07-28 wire).
  // A notifications/cancelled the peer sends for this request carries the same
  // `stateless` flag (and no headers).
  SendOptions send;
  // For the core's ClientSession: a tools/list answer may keep each tool's inputSchema as
  // the raw text the server sent (TransportHandlers::raw_tool_schemas). Off: the result is
  // plain JSON.
  bool raw_tool_schemas = false;
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
    // The transport renewed the server's session on its own (TransportHandlers::on_renewed).
    std::function<void()> on_renewed;
  };

  RpcPeer(Executor& executor, std::unique_ptr<Transport> transport, Logger* logger = nullptr);
  ~RpcPeer();  // closes the transport; pending callbacks do not run after destruction
  RpcPeer(const RpcPeer&) = delete;
  RpcPeer& operator=(const RpcPeer&) = delete;

  // Starts the transport and installs the handlers. Call once; later calls are ignored.
  void start(Handlers handlers);

  // Sends a request. Returns the request id, or an error when it could not be sent
  // (not_connected after close, aborted when options.signal already aborted,
  // invalid_argument when progress was asked for but params is not an object, or the
  // transport's send error) — then `done` never fires. Otherwise `done` fires exactly once.
  // `params` null means "no params member".
  Result<json> request(const std::string& method, json params, RequestOptions options,
                       ResponseCallback done);
  // Sends a notification (params null = none). Fails at once with not_connected after close.
  Status notify(const std::string& method, json params = nullptr);
  Status notify(const std::string& method, json params, const SendOptions& send);

  // Closes the transport; pending requests fail once with ErrorCode::closed (at once,
  // posted), and Handlers::on_close fires when the transport reports it closed.
  // Idempotent.
  void close();
  bool closed() const;
  std::size_t pending_count() const;
  Transport& transport();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcprt
