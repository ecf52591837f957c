#pragma once
// SpdlogLogger: the native Logger, spdlog writing to stderr.
//
// Implements:
//  [x] Logger::log at debug/info/warn/error with a configurable threshold
//  [x] MCPRT_LOG_LEVEL=debug|info|warn|error|off overrides the threshold (read once, at
//      construction, when options.read_env is set)
//  [x] thread-safe: platform threads may log directly
//  [ ] no file sinks or rotation: hosts that want those build their own Logger
//
// The spdlog logger is private to this object (not registered in spdlog's global
// registry), so several SpdlogLoggers can coexist and none collides with the host's.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "mcprt/platform/logger.hpp"

namespace mcprt::native {

struct SpdlogLoggerOptions {
  // Messages below this level are dropped. nullopt = log nothing.
  std::optional<LogLevel> level = LogLevel::info;
  // Let MCPRT_LOG_LEVEL override `level`.
  bool read_env = true;
  // Shown in every line: "[12:00:00.123] [mcprt] [info] message".
  std::string name = "mcprt";
};

class SpdlogLogger final : public Logger {
 public:
  explicit SpdlogLogger(SpdlogLoggerOptions options = {});
  ~SpdlogLogger() override;
  SpdlogLogger(const SpdlogLogger&) = delete;
  SpdlogLogger& operator=(const SpdlogLogger&) = delete;

  void log(LogLevel level, std::string_view message) override;

  // nullopt = off. Thread-safe.
  void set_level(std::optional<LogLevel> level);
  std::optional<LogLevel> level() const;
  bool enabled(LogLevel level) const;

  // "debug"|"trace" → debug, "info", "warn"|"warning", "error"|"err"|"critical" → error,
  // "off"|"none"|"quiet" → disabled (case-insensitive). Anything else: error, with
  // `ok` false. Returns {ok, level}.
  struct ParsedLevel {
    bool ok = false;
    std::optional<LogLevel> level;
  };
  static ParsedLevel parse_level(std::string_view text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcprt::native
