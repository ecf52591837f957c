#pragma once
// The OAuth fixture (`mcprt-oauth-fixture`, demo/oauth/) as a child process of a native
// test: spawned with the given flags, its ready line (one JSON object on stdout) parsed,
// its stderr (one line per request) collected by a thread. The destructor stops it with
// SIGTERM (SIGKILL if it does not exit) and reaps it.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace mcprt::native::test {

class OAuthFixtureProcess {
  using Clock = std::chrono::steady_clock;
  // A safety net against a hung fixture, not a performance expectation.
  static constexpr auto kDeadline = std::chrono::seconds(20);

 public:
  explicit OAuthFixtureProcess(std::vector<std::string> args = {}) {
    int out[2];
    int err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
      error_ = std::string("pipe: ") + std::strerror(errno);
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(MCPRT_OAUTH_FIXTURE)};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, MCPRT_OAUTH_FIXTURE, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
    if (rc != 0) {
      pid_ = -1;
      error_ = std::string("posix_spawn " MCPRT_OAUTH_FIXTURE ": ") + std::strerror(rc);
      return;
    }
    reader_ = std::thread([this] { read_all(); });
    std::unique_lock<std::mutex> lock(mutex_);
    const bool got = cv_.wait_for(lock, kDeadline, [&] { return ready_.has_value() || eof_; });
    if (!got || !ready_) {
      error_ = "the fixture printed no ready line; stdout: " + out_ + " stderr: " + log_;
    }
  }

  ~OAuthFixtureProcess() {
    stop_with(SIGTERM);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (reader_.joinable()) reader_.join();  // EOF once the fixture is gone
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }

  OAuthFixtureProcess(const OAuthFixtureProcess&) = delete;
  OAuthFixtureProcess& operator=(const OAuthFixtureProcess&) = delete;

  // Empty when the fixture is up; otherwise why not.
  const std::string& error() const { return error_; }
  // The ready line: mcp_url, resource_metadata_url, issuer, as_url, admin_url, mcp_port,
  // as_port, secret_prefixes.
  const nlohmann::json& ready() const {
    static const nlohmann::json kNone = nlohmann::json::object();
    return ready_ ? *ready_ : kNone;
  }
  int mcp_port() const { return ready().value("mcp_port", -1); }
  int as_port() const { return ready().value("as_port", -1); }
  std::string log() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
  }

  // Sends `sig` and reaps the fixture: its wait status, or nullopt when it did not exit
  // within the deadline (the destructor then kills it).
  std::optional<int> stop_with(int sig) {
    if (pid_ <= 0) return std::nullopt;
    ::kill(pid_, sig);
    const auto deadline = Clock::now() + kDeadline;
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      // Bounded polling of the process table; not a timing assertion.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return std::nullopt;
  }

  // For a fixture expected to exit by itself (bad flags): its wait status.
  std::optional<int> wait_exit() {
    if (pid_ <= 0) return std::nullopt;
    int status = 0;
    if (::waitpid(pid_, &status, 0) != pid_) return std::nullopt;
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    return status;
  }

 private:
  // Reads stdout and stderr until both end; the first stdout line is the ready line.
  void read_all() {
    pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
    int open = 2;
    while (open > 0) {
      const int rc = ::poll(fds, 2, -1);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) break;
      for (auto& p : fds) {
        if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[4096];
        const ssize_t n = ::read(p.fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        std::lock_guard<std::mutex> lock(mutex_);
        if (n <= 0) {
          p.fd = -1;
          --open;
          continue;
        }
        std::string& into = (&p == &fds[0]) ? out_ : log_;
        into.append(buf, static_cast<std::size_t>(n));
        if (&p == &fds[0] && !ready_) {
          const auto nl = out_.find('\n');
          if (nl != std::string::npos) {
            auto j = nlohmann::json::parse(out_.substr(0, nl), nullptr, false);
            if (j.is_object()) ready_ = std::move(j);
            cv_.notify_all();
          }
        }
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    eof_ = true;
    cv_.notify_all();
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string error_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::string out_;
  std::string log_;
  std::optional<nlohmann::json> ready_;
  bool eof_ = false;
  std::thread reader_;
};

}  // namespace mcprt::native::test
