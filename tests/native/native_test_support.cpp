#include "native_test_support.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <sstream>

namespace mcprt::native::test {

NativeProcessOptions fast_options() {
  NativeProcessOptions o;
  o.stdin_close_grace = Millis(150);
  o.sigterm_grace = Millis(150);
  // close() gives every child the stdin grace first, also one that has not written yet:
  // these tests close children that are about to write or to exit on EOF (cat), and a
  // loaded machine must not turn that into a SIGTERM race. The production default (SIGTERM
  // at once for a child that never wrote) has its own test.
  o.silent_stdin_close_grace = o.stdin_close_grace;
  return o;
}

const std::string& self_exe() {
  static const std::string path = [] {
    char buf[4096];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return std::string();
    return std::string(buf, static_cast<std::size_t>(n));
  }();
  return path;
}

ProcessSpec scripted(const std::string& scenario, std::vector<std::string> extra_args) {
  ProcessSpec spec;
  spec.command = self_exe();
  spec.args.push_back("--scripted-server=" + scenario);
  for (auto& a : extra_args) spec.args.push_back(std::move(a));
  spec.label = scenario;
  return spec;
}

bool pump_until(NativeExecutor& ex, const std::function<bool()>& pred, Millis limit) {
  return ex.run_until(pred, limit);
}

bool poll_until(NativeExecutor& ex, const std::function<bool()>& pred, Millis limit) {
  if (pred()) return true;
  bool holds = false;
  auto ticker = std::make_shared<std::function<void()>>();
  ScopedTimer timer;
  *ticker = [&ex, &pred, &holds, &timer, ticker_weak = std::weak_ptr(ticker)] {
    timer.release();
    holds = pred();
    if (holds) return;
    if (auto t = ticker_weak.lock()) timer = ScopedTimer(ex, ex.post_after(Millis(10), *t));
  };
  timer = ScopedTimer(ex, ex.post_after(Millis(10), *ticker));
  ex.run_until([&] { return holds; }, limit);
  return pred();
}

void CapturingLogger::log(LogLevel level, std::string_view message) {
  std::lock_guard lock(mutex_);
  lines_.emplace_back(level, std::string(message));
}

std::vector<std::string> CapturingLogger::lines(LogLevel at_least) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [level, line] : lines_) {
    if (static_cast<int>(level) >= static_cast<int>(at_least)) out.push_back(line);
  }
  return out;
}

bool CapturingLogger::contains(std::string_view needle, LogLevel at_least) const {
  return count(needle, at_least) > 0;
}

std::size_t CapturingLogger::count(std::string_view needle, LogLevel at_least) const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [level, line] : lines_) {
    if (static_cast<int>(level) >= static_cast<int>(at_least) &&
        line.find(needle) != std::string::npos) {
      ++n;
    }
  }
  return n;
}

namespace {

// Parses /proc/<pid>/stat: "pid (comm) state ppid ...". comm may hold spaces and ')'.
// False when the process is gone, including when it exits between the open and the read
// (the read then fails with ESRCH: an ifstream's buffer throws on that, and every process on
// the machine is looked at, so one exiting meanwhile is common under a parallel ctest).
bool read_stat(const std::string& pid_dir, ProcessEntry& entry, pid_t& ppid) {
  const int fd = ::open(("/proc/" + pid_dir + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text;
  char buffer[1024];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno != EINTR) break;
    if (n > 0) text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (n < 0) return false;
  std::size_t open = text.find('(');
  std::size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  entry.pid = static_cast<pid_t>(std::atol(text.c_str()));
  entry.comm = text.substr(open + 1, close - open - 1);
  std::istringstream rest(text.substr(close + 1));
  long parent = 0;
  rest >> entry.state >> parent;
  ppid = static_cast<pid_t>(parent);
  return true;
}

}  // namespace

std::vector<ProcessEntry> children_of_self() {
  std::vector<ProcessEntry> out;
  const pid_t self = ::getpid();
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    ProcessEntry entry;
    pid_t ppid = 0;
    if (read_stat(e->d_name, entry, ppid) && ppid == self) out.push_back(entry);
  }
  ::closedir(dir);
  return out;
}

char process_state(pid_t pid) {
  ProcessEntry entry;
  pid_t ppid = 0;
  if (!read_stat(std::to_string(pid), entry, ppid)) return 0;
  return entry.state;
}

ByteStreamHandlers StreamRecorder::handlers() {
  ByteStreamHandlers h;
  h.on_data = [this](std::string_view bytes) {
    if (closed_count > 0) data_after_close = true;
    data.append(bytes);
  };
  h.on_closed = [this](const StreamClosed& c) {
    ++closed_count;
    closed = c;
  };
  return h;
}

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

bool loopback_port_accepts(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace mcprt::native::test
