#pragma once
// A Logger that keeps every line, for tests that assert what was logged.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/platform/logger.hpp"

namespace mcprt::testing {

class CapturingLogger final : public Logger {
 public:
  void log(LogLevel level, std::string_view message) override {
    lines.push_back({level, std::string(message)});
  }
  // Whether a line at exactly `level` contains `part`.
  bool has(LogLevel level, const std::string& part) const {
    for (const auto& [l, m] : lines) {
      if (l == level && m.find(part) != std::string::npos) return true;
    }
    return false;
  }
  std::vector<std::pair<LogLevel, std::string>> lines;
};

}  // namespace mcprt::testing
