// TerminalSession (terminal_session.hpp): forkpty + execve with a prepared environment.
#include "terminal_session.hpp"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace mcprt::native::test {

TerminalSession::TerminalSession(const std::vector<std::string>& argv, const Options& options) {
  // Everything the child needs, built before fork().
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string item = *e;
    auto eq = item.find('=');
    if (eq != std::string::npos) env[item.substr(0, eq)] = item.substr(eq + 1);
  }
  for (const auto& name : options.unset_env) env.erase(name);
  for (const auto& [name, value] : options.env) env[name] = value;
  std::vector<std::string> env_items;
  for (const auto& [name, value] : env) env_items.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& item : env_items) envp.push_back(item.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = argv;
  std::vector<char*> args;
  for (auto& w : words) args.push_back(w.data());
  args.push_back(nullptr);
  const std::string cwd = options.cwd;

  winsize size{};
  size.ws_row = options.rows;
  size.ws_col = options.columns;
  pid_ = ::forkpty(&master_, nullptr, nullptr, options.columns ? &size : nullptr);
  if (pid_ == 0) {
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
}

TerminalSession::~TerminalSession() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  if (master_ >= 0) ::close(master_);
}

void TerminalSession::type(const std::string& bytes) {
  if (master_ < 0 || closed_) return;
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(master_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

bool TerminalSession::pump(int timeout_ms) {
  if (master_ < 0 || closed_) return false;
  pollfd pfd{master_, POLLIN, 0};
  int ready = ::poll(&pfd, 1, timeout_ms);
  if (ready <= 0) return true;
  char buf[4096];
  ssize_t n = ::read(master_, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {  // EIO: the program closed the terminal
    closed_ = true;
    return false;
  }
  raw_.append(buf, static_cast<std::size_t>(n));
  return true;
}

bool TerminalSession::wait_for(const std::function<bool(const std::string& raw)>& done,
                               std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done(raw_) && std::chrono::steady_clock::now() < deadline) {
    if (!pump(50)) break;
  }
  return done(raw_);
}

bool TerminalSession::wait_for_text(const std::string& text, std::size_t n,
                                    std::chrono::milliseconds limit) {
  return wait_for([&](const std::string&) { return count(plain(), text) >= n; }, limit);
}

int TerminalSession::finish(std::chrono::milliseconds limit) {
  if (pid_ <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!closed_ && std::chrono::steady_clock::now() < deadline) pump(100);
  int status = 0;
  if (!closed_) ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (!closed_) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string TerminalSession::plain() const {
  std::string out;
  for (std::size_t i = 0; i < raw_.size(); ++i) {
    if (raw_[i] == '\r') continue;
    if (raw_[i] == '\x1b' && i + 1 < raw_.size() && raw_[i + 1] == '[') {
      i += 2;
      while (i < raw_.size() && !(raw_[i] >= '@' && raw_[i] <= '~')) ++i;
      continue;
    }
    out.push_back(raw_[i]);
  }
  return out;
}

std::size_t TerminalSession::count(const std::string& in, const std::string& text) {
  if (text.empty()) return 0;
  std::size_t n = 0;
  for (auto at = in.find(text); at != std::string::npos; at = in.find(text, at + text.size())) ++n;
  return n;
}

}  // namespace mcprt::native::test
