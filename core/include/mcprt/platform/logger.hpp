#pragma once
// The Logger seam. Native: spdlog. Web: console. Tests: a capturing logger.

#include <string>
#include <string_view>

namespace mcprt {

enum class LogLevel { debug, info, warn, error };

class Logger {
 public:
  virtual ~Logger() = default;
  virtual void log(LogLevel level, std::string_view message) = 0;

  void debug(std::string_view m) { log(LogLevel::debug, m); }
  void info(std::string_view m) { log(LogLevel::info, m); }
  void warn(std::string_view m) { log(LogLevel::warn, m); }
  void error(std::string_view m) { log(LogLevel::error, m); }
};

// Discards everything; the default when a host supplies no logger.
class NullLogger final : public Logger {
 public:
  void log(LogLevel, std::string_view) override {}
};

}  // namespace mcprt
