// SpdlogLogger: level parsing, the MCPRT_LOG_LEVEL override and the threshold.

#include <gtest/gtest.h>
#include <stdlib.h>

#include "mcprt/native/logger.hpp"

namespace mcprt::native {
namespace native_logger_test {  // this file's own names in a unity batch
namespace {

// Sets MCPRT_LOG_LEVEL for one test and restores the previous value.
class ScopedLogEnv {
 public:
  explicit ScopedLogEnv(const char* value) {
    if (const char* old = std::getenv("MCPRT_LOG_LEVEL")) old_ = old;
    if (value) {
      ::setenv("MCPRT_LOG_LEVEL", value, 1);
    } else {
      ::unsetenv("MCPRT_LOG_LEVEL");
    }
  }
  ~ScopedLogEnv() {
    if (old_) {
      ::setenv("MCPRT_LOG_LEVEL", old_->c_str(), 1);
    } else {
      ::unsetenv("MCPRT_LOG_LEVEL");
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(SpdlogLogger, ParseLevelAcceptsNamesCaseInsensitively) {
  EXPECT_EQ(SpdlogLogger::parse_level("DEBUG").level, LogLevel::debug);
  EXPECT_EQ(SpdlogLogger::parse_level("trace").level, LogLevel::debug);
  EXPECT_EQ(SpdlogLogger::parse_level("Info").level, LogLevel::info);
  EXPECT_EQ(SpdlogLogger::parse_level("warning").level, LogLevel::warn);
  EXPECT_EQ(SpdlogLogger::parse_level("err").level, LogLevel::error);
  auto off = SpdlogLogger::parse_level("off");
  EXPECT_TRUE(off.ok);
  EXPECT_FALSE(off.level.has_value());
  EXPECT_FALSE(SpdlogLogger::parse_level("loud").ok);
}

TEST(SpdlogLogger, EnvironmentOverridesTheConfiguredLevel) {
  ScopedLogEnv env("debug");
  SpdlogLogger logger(SpdlogLoggerOptions{.level = LogLevel::error});
  EXPECT_EQ(logger.level(), LogLevel::debug);
  EXPECT_TRUE(logger.enabled(LogLevel::debug));
}

TEST(SpdlogLogger, EnvironmentOffSilencesEverything) {
  ScopedLogEnv env("off");
  SpdlogLogger logger;
  EXPECT_FALSE(logger.level().has_value());
  EXPECT_FALSE(logger.enabled(LogLevel::error));
}

TEST(SpdlogLogger, InvalidEnvironmentValueKeepsTheConfiguredLevel) {
  ScopedLogEnv env("shouty");
  SpdlogLogger logger(SpdlogLoggerOptions{.level = LogLevel::warn});
  EXPECT_EQ(logger.level(), LogLevel::warn);
}

TEST(SpdlogLogger, ThresholdDropsLowerLevelsUnlessEnvIsIgnored) {
  ScopedLogEnv env("debug");
  SpdlogLogger logger(SpdlogLoggerOptions{.level = LogLevel::warn, .read_env = false});
  EXPECT_FALSE(logger.enabled(LogLevel::info));
  EXPECT_TRUE(logger.enabled(LogLevel::warn));
  logger.set_level(LogLevel::info);
  EXPECT_TRUE(logger.enabled(LogLevel::info));
  logger.set_level(std::nullopt);
  EXPECT_FALSE(logger.enabled(LogLevel::error));
}

TEST(SpdlogLogger, EveryLineIsRedacted) {
  SpdlogLogger logger(SpdlogLoggerOptions{.level = LogLevel::debug, .read_env = false});
  ::testing::internal::CaptureStderr();
  logger.warn("GET http://alice:PW@h/x?api_key=K&q=1 failed; Authorization: Bearer tok123");
  const std::string written = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(written.find("GET http://***@h/x?api_key=***&q=1 failed; Authorization: Bearer ***"),
            std::string::npos)
      << written;
  EXPECT_EQ(written.find("PW"), std::string::npos) << written;
  EXPECT_EQ(written.find("tok123"), std::string::npos) << written;
}

}  // namespace
}  // namespace native_logger_test
}  // namespace mcprt::native
