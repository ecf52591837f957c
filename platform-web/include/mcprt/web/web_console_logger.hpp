#pragma once
// WebConsoleLogger: the Logger seam over the JS console (console.debug/info/warn/error),
// each line prefixed "[mcprt] ". Messages below `min_level` are dropped. With a host id
// (set_host: the JS runtime's id) lines go to Module.mcprtLog(host, level, message)
// instead, where js/index.js hands them to the runtime's `log` option or the console.
// [x] levels → console methods   [x] a host's own log function
// [ ] structured fields (messages are plain text)

#include <string_view>

#include "mcprt/platform/logger.hpp"

namespace mcprt::web {

class WebConsoleLogger final : public Logger {
 public:
  explicit WebConsoleLogger(LogLevel min_level = LogLevel::info) : min_level_(min_level) {}
  void log(LogLevel level, std::string_view message) override;
  void set_min_level(LogLevel level) { min_level_ = level; }
  LogLevel min_level() const { return min_level_; }
  // 0 (the default): the console.
  void set_host(int host_id) { host_id_ = host_id; }

 private:
  LogLevel min_level_;
  int host_id_ = 0;
};

}  // namespace mcprt::web
