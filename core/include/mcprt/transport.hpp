#pragma once
// A message-level transport: sends and receives whole JSON-RPC messages. The core
// implements every transport's protocol rules on top of the platform seams:
//  - StdioTransport (stdio_transport.hpp): newline framing over a ByteStream;
//  - the HTTP transports (over HttpClient);
//  - MemoryTransport (tests/support): a linked pair.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mcprt/result.hpp"

namespace mcprt {

// Messages from a server nest at most this deep (arrays and objects; SPEC §17): deeper is
// a per-message error, never a stack overflow. Transports take it as an option.
inline constexpr std::size_t kDefaultMaxJsonNestingLevels = 128;

// A message that arrived but could not be used: not JSON, nested deeper than the
// transport's limit, or holding invalid UTF-8. The transport has already logged it at
// warn level (naming the server); the connection stays up.
struct UnreadableMessage {
  // What was wrong and where, e.g. "invalid UTF-8 at byte 57" (never quotes the input).
  std::string problem;
  // The message's top-level "id" as a shallow scan found it (a number, or a string); null
  // when there was none or it could not be read.
  json id;
  // It has a top-level "method": a request or notification from the server, so `id` is
  // the server's own request id, not an answer to one of ours.
  bool has_method = false;
  std::size_t size_bytes = 0;
};

struct TransportHandlers {
  // One parsed JSON value per message (the transport already rejected non-JSON).
  std::function<void(json)> on_message;
  // Fires exactly once when the transport is finished (peer closed, I/O error, exited,
  // or close() completed). The error says why (ErrorCode::closed for a local close).
  std::function<void(const Error&)> on_close;
  // Optional: a message that could not be parsed (see UnreadableMessage). The RpcPeer uses
  // it to fail the request such a message answers at once, instead of at its timeout.
  // (Last, so that `{on_message, on_close}` initializers keep meaning what they meant.)
  std::function<void(const UnreadableMessage&)> on_unreadable;
  // Optional: the transport replaced the server's session with a new one on its own (a
  // Streamable HTTP session expired, HTTP 404, and was initialized again). Messages keep
  // flowing, but what the server kept per session (resource subscriptions) is gone. Fires
  // after the new session took the messages that were waiting for it.
  std::function<void()> on_renewed;
  // The core's RpcPeer sets this: a tools/list answer may keep each tool's inputSchema as
  // the raw text the server sent (checked as JSON, parsed later; the RpcPeer hands every
  // other message on as plain JSON). The core's transports honour it; a transport of the
  // host's own may ignore it, and a wrapper that reads messages should leave it false.
  bool raw_tool_schemas = false;
};

// What the sender knows about one outgoing message beyond its JSON (SPEC §14). Only the
// HTTP transports use it; the others ignore it.
struct SendOptions {
  // Extra HTTP request headers for this message's POST: on the 2026-07-28 wire
  // MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* (already encoded by the
  // session). Sent, like every protocol header, to the configured origin only.
  std::vector<std::pair<std::string, std::string>> headers;
  // The message belongs to the stateless 2026-07-28 wire: no session id, no GET stream, no
  // DELETE, no resumption; a broken stream loses the request; a notifications/cancelled is
  // not POSTed (the transport closes the request's stream instead).
  bool stateless = false;
};

// All calls and handler invocations happen on the transport's executor; handlers never
// run inside start()/send()/close().
class Transport {
 public:
  virtual ~Transport() = default;
  virtual void start(TransportHandlers handlers) = 0;
  // Queues one message. Fails at once when closed.
  virtual Status send(const json& message) = 0;
  // Queues one message with what the sender knows about it (SendOptions). Transports that
  // have no use for it keep this default.
  virtual Status send_with(const json& message, const SendOptions& options) {
    (void)options;
    return send(message);
  }
  // Idempotent; on_close fires (once) when closing finished.
  virtual void close() = 0;
  // Human-readable extra context for error messages (e.g. a stderr tail). May be empty.
  virtual std::string diagnostics() const { return {}; }
};

// Which way a message went past a tap (make_tapped_transport, ManagerOptions::on_message).
enum class MessageDirection { send, receive };
const char* to_string(MessageDirection direction);  // "send" | "receive"
using MessageTap = std::function<void(MessageDirection direction, const json& message)>;

// `inner`, with `tap` shown every message it sends (as it is queued, whether or not the
// send succeeds) and receives (before the handler gets it). The tap runs on the executor
// inside send() and the receive path and must not re-enter the transport. Unreadable
// messages are not shown (they were never parsed).
std::unique_ptr<Transport> make_tapped_transport(std::unique_ptr<Transport> inner, MessageTap tap);

}  // namespace mcprt
