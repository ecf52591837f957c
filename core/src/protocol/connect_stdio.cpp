#include "protocol/connect_stdio.hpp"

#include <utility>

#include "mcprt/stdio_transport.hpp"

namespace mcprt::detail {

Result<std::unique_ptr<Transport>> make_stdio_connection(const ServerConfig& config,
                                                         const ConnectServices& services,
                                                         const ConnectOptions& options) {
  if (!services.process_launcher) {
    return Error::make(ErrorCode::invalid_config,
                       connect_error_prefix(config.name) + "stdio servers are not available on this platform");
  }
  ProcessSpec spec;
  spec.command = config.command;
  spec.args = config.args;
  spec.env = config.env;
  spec.cwd = config.cwd.empty() ? options.cwd : config.cwd;
  spec.label = config.name;
  auto stream = services.process_launcher->launch(spec);
  if (!stream.ok()) {
    Error e = std::move(stream).error();
    e.message = connect_error_prefix(config.name) + e.message;
    return e;
  }
  StdioTransportOptions stdio;
  stdio.max_message_bytes = options.max_message_bytes;
  stdio.max_json_nesting_levels = options.max_json_nesting_levels;
  stdio.server_name = config.name;
  stdio.logger = services.logger;
  return make_stdio_transport(*services.executor, std::move(stream.value()), stdio);
}

}  // namespace mcprt::detail
