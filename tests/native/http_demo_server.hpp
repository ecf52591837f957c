#pragma once
// The demo MCP server (`mcprt-demo-server --http PORT`) as a child process of a native test.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace mcprt::native::test {

// The demo server as a child process serving HTTP; its stderr is read until the
// "listening on" line (to learn the port), then drained by a thread so a chatty server
// never blocks on a full pipe. The destructor kills and reaps it.
class HttpDemoServer {
  using Clock = std::chrono::steady_clock;
  // A safety net against a hung server, not a performance expectation.
  static constexpr auto kDeadline = std::chrono::seconds(20);

 public:
  explicit HttpDemoServer(std::vector<std::string> args = {"--http", "0"}) {
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) {
      error_ = std::string("pipe: ") + std::strerror(errno);
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(MCPRT_DEMO_SERVER)};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, MCPRT_DEMO_SERVER, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(err[1]);
    from_stderr_ = err[0];
    if (rc != 0) {
      pid_ = -1;
      error_ = std::string("posix_spawn " MCPRT_DEMO_SERVER ": ") + std::strerror(rc);
      return;
    }
    read_until_listening();
    if (port_ > 0) drain_ = std::thread([this] { drain(); });
  }

  ~HttpDemoServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (drain_.joinable()) drain_.join();  // EOF once the server is gone
    if (from_stderr_ >= 0) ::close(from_stderr_);
  }

  HttpDemoServer(const HttpDemoServer&) = delete;
  HttpDemoServer& operator=(const HttpDemoServer&) = delete;

  int port() const { return port_; }
  const std::string& error() const { return error_; }
  std::string log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
  }

  // Sends `sig` and reaps the server: its exit status, or nullopt when it did not exit
  // within the deadline (it is then killed by the destructor).
  std::optional<int> stop_with(int sig) {
    if (pid_ <= 0) return std::nullopt;
    ::kill(pid_, sig);
    const auto deadline = Clock::now() + kDeadline;
    while (Clock::now() < deadline) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      // Bounded polling of the process table; not a timing assertion.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
  }

  // Waits (bounded) until the server logged `needle`.
  bool wait_log(const std::string& needle) {
    const auto deadline = Clock::now() + kDeadline;
    while (Clock::now() < deadline) {
      if (log().find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  // For servers expected to exit by themselves (bad arguments): exit status and log.
  std::optional<int> wait_exit() {
    read_to_eof();
    int status = 0;
    if (pid_ <= 0 || ::waitpid(pid_, &status, 0) != pid_) return std::nullopt;
    pid_ = -1;
    return status;
  }

 private:
  // Reads stderr into log_ until `done()`, EOF or the deadline.
  template <class Done>
  void read_while_not(Done done) {
    const auto deadline = Clock::now() + kDeadline;
    while (!done()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return;
      pollfd p{from_stderr_, POLLIN, 0};
      const int rc = ::poll(&p, 1, static_cast<int>(left));
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(from_stderr_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      std::lock_guard<std::mutex> lock(mutex_);
      log_.append(buf, static_cast<std::size_t>(n));
    }
  }

  void read_until_listening() {
    static const std::regex kListening(R"(listening on http://127\.0\.0\.1:(\d+)/mcp\n)");
    read_while_not([&] {
      std::smatch m;
      std::lock_guard<std::mutex> lock(mutex_);
      if (!std::regex_search(log_, m, kListening)) return false;
      port_ = std::stoi(m[1].str());
      return true;
    });
    if (port_ <= 0) error_ = "the server printed no \"listening on\" line; stderr: " + log();
  }

  void read_to_eof() {
    read_while_not([] { return false; });
  }

  void drain() { read_to_eof(); }

  pid_t pid_ = -1;
  int from_stderr_ = -1;
  int port_ = -1;
  std::string error_;
  mutable std::mutex mutex_;
  std::string log_;
  std::thread drain_;
};

}  // namespace mcprt::native::test
