#pragma once
// The stdio transport's protocol rules (SPEC §3.2), over a platform ByteStream:
//  - newline-delimited JSON both ways (send() writes one serialized message + "\n");
//  - a line that cannot be used — not JSON, nested deeper than max_json_nesting_levels,
//    invalid UTF-8 — is logged at warn level (`Server "<name>": unreadable message (N
//    bytes, id 3): invalid UTF-8 at byte 57: <its first 200 bytes>`), handed to
//    TransportHandlers::on_unreadable (with its top-level id, found by a shallow scan, so
//    the RpcPeer fails the request it answers at once) and skipped; the connection stays up;
//  - a line over max_message_bytes closes the connection with
//    ErrorCode::message_too_large (`Server "<name>": message exceeds the limit of N bytes`);
//  - the stream ending maps to on_close:
//      process exit   → ErrorCode::exited,
//                       `Server "<name>": server exited (code N); stderr: <tail>`
//                       (`(killed by signal N)` for a signal; no "; stderr" part when the
//                       tail is empty; Error::data holds exit_code / signal / stderr),
//      local close()  → ErrorCode::closed,
//      anything else  → the stream's error code, prefixed with the server name.
//
// Lifecycle: created → start() → open → (close() | over-size line | stream end) →
// closing → closed. on_close fires exactly once, when the stream has finished; no handler
// runs after it. Incoming lines are no longer delivered once closing started. Handlers
// run on `executor` (they come from the stream's callbacks), never inside
// start()/send()/close(). Destroying the transport destroys the stream (a forced close)
// and runs no handler. close() before start() makes start() post on_close(closed).

#include <memory>
#include <string>

#include "mcprt/platform/byte_stream.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

struct StdioTransportOptions {
  std::size_t max_message_bytes = 64u * 1024 * 1024;
  // Deepest nesting of arrays/objects accepted in a message; deeper is unreadable.
  std::size_t max_json_nesting_levels = kDefaultMaxJsonNestingLevels;
  std::string server_name;  // for logs and errors
  Logger* logger = nullptr;  // not owned; must outlive the transport; null = no logging
};

std::unique_ptr<Transport> make_stdio_transport(Executor& executor,
                                                std::unique_ptr<ByteStream> stream,
                                                StdioTransportOptions options = {});

}  // namespace mcprt
