#pragma once
// WebConsoleLogger: the Logger seam over the JS console (console.debug/info/warn/error),
// each line prefixed "[mcprt] ". Messages below `min_level` are dropped.
// [x] levels → console methods   [ ] structured fields (messages are plain text)

#include <string_view>

#include "mcprt/platform/logger.hpp"

namespace mcprt::web {

class WebConsoleLogger final : public Logger {
 public:
  explicit WebConsoleLogger(LogLevel min_level = LogLevel::info) : min_level_(min_level) {}
  void log(LogLevel level, std::string_view message) override;
  void set_min_level(LogLevel level) { min_level_ = level; }
  LogLevel min_level() const { return min_level_; }

 private:
  LogLevel min_level_;
};

}  // namespace mcprt::web
