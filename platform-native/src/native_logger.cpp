// SpdlogLogger (see mcprt/native/logger.hpp).

#include "mcprt/native/logger.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "mcprt/redact.hpp"

namespace mcprt::native {

namespace {

spdlog::level::level_enum to_spdlog(std::optional<LogLevel> level) {
  if (!level) return spdlog::level::off;
  switch (*level) {
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

std::optional<LogLevel> from_spdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return LogLevel::debug;
    case spdlog::level::info: return LogLevel::info;
    case spdlog::level::warn: return LogLevel::warn;
    case spdlog::level::err:
    case spdlog::level::critical: return LogLevel::error;
    default: return std::nullopt;
  }
}

}  // namespace

struct SpdlogLogger::Impl {
  std::shared_ptr<spdlog::logger> logger;
};

SpdlogLogger::SpdlogLogger(SpdlogLoggerOptions options) : impl_(std::make_unique<Impl>()) {
  // stderr, so that a host's stdout (e.g. `mcprt tools --json`) stays machine-readable.
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  impl_->logger = std::make_shared<spdlog::logger>(options.name, std::move(sink));
  impl_->logger->set_pattern("[%H:%M:%S.%e] [%n] [%^%l%$] %v");
  std::optional<LogLevel> level = options.level;
  if (options.read_env) {
    if (const char* env = std::getenv("MCPRT_LOG_LEVEL"); env && *env) {
      ParsedLevel parsed = parse_level(env);
      if (parsed.ok) {
        level = parsed.level;
      } else {
        impl_->logger->warn("MCPRT_LOG_LEVEL=\"{}\" is not one of debug, info, warn, error, off; "
                            "keeping the default level",
                            env);
      }
    }
  }
  set_level(level);
}

SpdlogLogger::~SpdlogLogger() = default;

void SpdlogLogger::log(LogLevel level, std::string_view message) {
  const spdlog::level::level_enum spd = to_spdlog(level);
  if (!impl_->logger->should_log(spd)) return;  // no redaction cost for dropped lines
  // Every line is masked here (SPEC §17), whoever wrote it: a server's stderr forwarded at
  // debug level, a URL in a connect failure, a header in a trace.
  impl_->logger->log(spd, "{}", redact_secrets(message));
}

void SpdlogLogger::set_level(std::optional<LogLevel> level) {
  impl_->logger->set_level(to_spdlog(level));
}

std::optional<LogLevel> SpdlogLogger::level() const { return from_spdlog(impl_->logger->level()); }

bool SpdlogLogger::enabled(LogLevel level) const {
  return impl_->logger->should_log(to_spdlog(level));
}

SpdlogLogger::ParsedLevel SpdlogLogger::parse_level(std::string_view text) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t == "debug" || t == "trace") return {true, LogLevel::debug};
  if (t == "info") return {true, LogLevel::info};
  if (t == "warn" || t == "warning") return {true, LogLevel::warn};
  if (t == "error" || t == "err" || t == "critical") return {true, LogLevel::error};
  if (t == "off" || t == "none" || t == "quiet") return {true, std::nullopt};
  return {false, std::nullopt};
}

}  // namespace mcprt::native
