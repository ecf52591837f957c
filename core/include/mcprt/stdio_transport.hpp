#pragma once
// The stdio transport's protocol rules (SPEC §3.2), over a platform ByteStream:
// newline-delimited JSON; a non-JSON line is logged (first 200 bytes) and skipped; a
// line over max_message_bytes closes the connection with ErrorCode::message_too_large;
// the stream ending fails the transport with "server exited (code N)" plus the stderr
// tail when the peer was a process.

#include <memory>

#include "mcprt/platform/byte_stream.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

struct StdioTransportOptions {
  std::size_t max_message_bytes = 64u * 1024 * 1024;
  std::string server_name;  // for logs and errors
  Logger* logger = nullptr;
};

std::unique_ptr<Transport> make_stdio_transport(Executor& executor,
                                                std::unique_ptr<ByteStream> stream,
                                                StdioTransportOptions options = {});

}  // namespace mcprt
