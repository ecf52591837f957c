#pragma once
// Helpers shared by the native integration tests: the path of this binary (it doubles as
// the scripted stdio server), specs for its scenarios, a capturing logger, bounded loop
// pumping, and process-table checks.

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/native/executor.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "mcprt/platform/byte_stream.hpp"
#include "mcprt/platform/logger.hpp"

namespace mcprt::native::test {

// Upper bound for any wait in these tests. It is a safety net so a broken build fails
// instead of hanging, not a performance expectation.
inline constexpr Millis kWaitLimit{20000};

// Close-sequence grace periods short enough to keep the suite quick.
NativeProcessOptions fast_options();

// /proc/self/exe.
const std::string& self_exe();

// A ProcessSpec that runs this binary as the scripted server `scenario` (see
// scripted_server.hpp), with `extra_args` after the scenario flag.
ProcessSpec scripted(const std::string& scenario, std::vector<std::string> extra_args = {});

// Pumps `ex` until `pred` or kWaitLimit; returns pred(). `pred` is checked after each
// handler, so it must depend on what the loop's handlers do.
bool pump_until(NativeExecutor& ex, const std::function<bool()>& pred, Millis limit = kWaitLimit);

// Like pump_until, for conditions outside the loop (the process table): a 10 ms ticker
// keeps the pump waking up to re-check `pred`.
bool poll_until(NativeExecutor& ex, const std::function<bool()>& pred, Millis limit = kWaitLimit);

// A thread-safe logger that keeps every line.
class CapturingLogger final : public Logger {
 public:
  void log(LogLevel level, std::string_view message) override;
  std::vector<std::string> lines(LogLevel at_least = LogLevel::debug) const;
  bool contains(std::string_view needle, LogLevel at_least = LogLevel::debug) const;
  std::size_t count(std::string_view needle, LogLevel at_least = LogLevel::debug) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<LogLevel, std::string>> lines_;
};

// A process this process could still be responsible for.
struct ProcessEntry {
  pid_t pid = 0;
  char state = '?';
  std::string comm;
};
// Every process whose parent is this process (zombies included).
std::vector<ProcessEntry> children_of_self();
// State letter of `pid` from /proc ('Z' zombie, ...) or 0 when there is no such process.
char process_state(pid_t pid);

// A 127.0.0.1 TCP port nobody listens on right now (bound and closed at once), for a
// server a test starts with its port given.
int free_loopback_port();
// Whether something accepts TCP connections on 127.0.0.1:`port`.
bool loopback_port_accepts(int port);

// The ByteStream handlers a test usually wants: collect data, remember the end.
struct StreamRecorder {
  std::string data;
  int closed_count = 0;
  std::optional<StreamClosed> closed;
  bool data_after_close = false;

  ByteStreamHandlers handlers();
};

}  // namespace mcprt::native::test
