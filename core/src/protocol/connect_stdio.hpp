#pragma once
// The stdio branch of connect_to_server (connect.cpp): launch the server through
// ConnectServices::process_launcher and speak the stdio transport over its pipes. A file
// of its own so that a host without processes links connect_to_server without the stdio
// transport: the web module (platform-web/core/omitted_core_parts.cpp) defines it as the
// answer for a platform without a ProcessLauncher.

#include <memory>
#include <string>

#include "mcprt/config.hpp"
#include "mcprt/connect.hpp"
#include "mcprt/result.hpp"
#include "mcprt/transport.hpp"

namespace mcprt::detail {

// `Server "<name>": ` — the prefix connect_to_server's errors carry.
inline std::string connect_error_prefix(const std::string& name) { return "Server \"" + name + "\": "; }

// Without a process launcher: ErrorCode::invalid_config, `Server "<name>": stdio servers
// are not available on this platform`. Else the launch error (prefixed) or the transport.
Result<std::unique_ptr<Transport>> make_stdio_connection(const ServerConfig& config,
                                                         const ConnectServices& services,
                                                         const ConnectOptions& options);

}  // namespace mcprt::detail
