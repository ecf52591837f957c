#pragma once
// A message-level transport: sends and receives whole JSON-RPC messages. The core
// implements every transport's protocol rules on top of the platform seams:
//  - StdioTransport (stdio_transport.hpp): newline framing over a ByteStream;
//  - the HTTP transports (over HttpClient);
//  - MemoryTransport (tests/support): a linked pair.

#include <functional>
#include <string>

#include "mcprt/result.hpp"

namespace mcprt {

struct TransportHandlers {
  // One parsed JSON value per message (the transport already rejected non-JSON).
  std::function<void(json)> on_message;
  // Fires exactly once when the transport is finished (peer closed, I/O error, exited,
  // or close() completed). The error says why (ErrorCode::closed for a local close).
  std::function<void(const Error&)> on_close;
};

// All calls and handler invocations happen on the transport's executor; handlers never
// run inside start()/send()/close().
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void start(TransportHandlers handlers) = 0;
  // Queues one message. Fails at once when closed.
  virtual Status send(const json& message) = 0;
  // Idempotent; on_close fires (once) when closing finished.
  virtual void close() = 0;
  // Human-readable extra context for error messages (e.g. a stderr tail). May be empty.
  virtual std::string diagnostics() const { return {}; }
};

}  // namespace mcprt
