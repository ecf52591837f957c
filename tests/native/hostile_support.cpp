#include "hostile_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "mcprt/platform/http_client.hpp"

extern char** environ;

namespace mcprt::native::test {

namespace {

using Clock = std::chrono::steady_clock;

// Direct children of this process: pid → comm.
std::map<pid_t, std::string> direct_children() {
  std::map<pid_t, std::string> out;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(f)), {});
    // pid (comm) state ppid ...; comm may hold spaces and parentheses.
    const auto open = stat.find('(');
    const auto close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == self) out[std::stoi(name)] = stat.substr(open + 1, close - open - 1);
  }
  return out;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

MeasuredRun run_measured(const std::vector<std::string>& argv, const RunOptions& options) {
  MeasuredRun run;
  if (argv.empty()) {
    run.err = "run_measured: empty argv";
    return run;
  }
  // Orphans of the child re-parent to us while it runs, so that leaks can be seen.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const auto before = direct_children();

  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    run.err = std::string("run_measured: pipe: ") + std::strerror(errno);
    return run;
  }
  // Build argv/envp before fork: nothing after fork() may allocate.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::map<std::string, std::string> env_map;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env_map[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& k : options.unset_env) env_map.erase(k);
  for (const auto& [k, v] : options.env) env_map[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env_map) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    run.err = std::string("run_measured: fork: ") + std::strerror(errno);
    return run;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) _exit(126);
    ::execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with the kill below
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  set_nonblocking(in[1]);
  set_nonblocking(out[0]);
  set_nonblocking(err[0]);

  std::size_t written = 0;
  int stdin_fd = in[1];
  if (options.stdin_text.empty()) {
    ::close(stdin_fd);
    stdin_fd = -1;
  }
  int fds[2] = {out[0], err[0]};
  std::string* sinks[2] = {&run.out, &run.err};
  const auto deadline = start + options.timeout;
  int status = 0;
  rusage usage{};
  bool exited = false;
  // After the child exited, its output is drained for a moment more: a leaked grandchild
  // may hold the pipes open, and must not stall the test until the timeout.
  std::optional<Clock::time_point> drain_until;
  while (fds[0] >= 0 || fds[1] >= 0) {
    if (!exited && ::wait4(pid, &status, WNOHANG, &usage) == pid) {
      exited = true;
      run.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      drain_until = Clock::now() + std::chrono::milliseconds(200);
    }
    if (drain_until && Clock::now() >= *drain_until) break;
    std::vector<pollfd> p;
    for (int fd : fds) {
      if (fd >= 0) p.push_back({fd, POLLIN, 0});
    }
    if (stdin_fd >= 0) p.push_back({stdin_fd, POLLOUT, 0});
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      ::killpg(pid, SIGKILL);
      break;
    }
    ::poll(p.data(), p.size(), static_cast<int>(std::min<long long>(left.count(), exited ? 20 : 50)));
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0) continue;
      char buf[65536];
      for (;;) {
        const ssize_t n = ::read(fds[i], buf, sizeof buf);
        if (n > 0) {
          sinks[i]->append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          ::close(fds[i]);
          fds[i] = -1;
        }
        break;
      }
    }
    if (stdin_fd >= 0) {
      const ssize_t n = ::write(stdin_fd, options.stdin_text.data() + written,
                                options.stdin_text.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == options.stdin_text.size()) {
        ::close(stdin_fd);
        stdin_fd = -1;
      }
    }
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  if (stdin_fd >= 0) ::close(stdin_fd);

  while (!exited && ::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (!exited) run.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  run.peak_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.term_signal = WTERMSIG(status);

  // Whatever the child left running is now ours: report it, then kill and reap it. Killing
  // a leftover re-parents its own children to us in turn (a shell's subshell), so look
  // again until a scan finds nobody new (at most 100 rounds: each reaps what it found).
  bool found = true;
  for (int round = 0; found && round < 100; ++round) {
    found = false;
    for (const auto& [child, comm] : direct_children()) {
      if (before.count(child)) continue;
      found = true;
      run.leftovers.push_back(std::to_string(child) + " " + comm);
      const pid_t group = ::getpgid(child);
      if (group > 0 && group != ::getpgrp()) ::killpg(group, SIGKILL);
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
    }
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  return run;
}

// ------------------------------------------------------------------ RawHttpServer

std::string RawHttpServer::Request::header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return "";
}

bool RawHttpServer::Request::has_header(const std::string& name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& h) { return iequals(h.first, name); });
}

bool RawHttpServer::Connection::write(std::string_view bytes) {
  while (!bytes.empty()) {
    if (stopping()) return false;
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool RawHttpServer::Connection::stopping() const { return server_->stopping_.load(); }

bool RawHttpServer::Connection::next_request() {
  // A head larger than this is not something the tests send.
  constexpr std::size_t kMaxHead = 1 << 20;
  std::size_t end;
  while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (buffer_.size() > kMaxHead || stopping()) return false;
    char buf[8192];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
  const std::string head = buffer_.substr(0, end);
  buffer_.erase(0, end + 4);
  request_ = Request{};
  std::istringstream lines(head);
  std::string line;
  std::getline(lines, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::istringstream request_line(line);
  request_line >> request_.method >> request_.target;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    const auto first = value.find_first_not_of(" \t");
    value = first == std::string::npos ? "" : value.substr(first);
    request_.headers.emplace_back(line.substr(0, colon), value);
  }
  server_->record(request_);
  return true;
}

bool RawHttpServer::Connection::read_body() {
  const std::string length = request_.header("Content-Length");
  std::size_t want = 0;
  try {
    want = length.empty() ? 0 : std::stoul(length);
  } catch (...) {
    return false;
  }
  while (buffer_.size() < want) {
    if (stopping()) return false;
    char buf[8192];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
  request_.body = buffer_.substr(0, want);
  buffer_.erase(0, want);
  // Keep the recorded copy in step with the body (tests read requests()).
  std::lock_guard lock(server_->mutex_);
  for (auto it = server_->requests_.rbegin(); it != server_->requests_.rend(); ++it) {
    if (it->method == request_.method && it->target == request_.target && it->body.empty()) {
      it->body = request_.body;
      break;
    }
  }
  return true;
}

RawHttpServer::RawHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::listen(listen_fd_, 64);
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

RawHttpServer::~RawHttpServer() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    threads = std::move(threads_);
  }
  for (auto& t : threads) t.join();
}

std::string RawHttpServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<RawHttpServer::Request> RawHttpServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

std::size_t RawHttpServer::request_count() const {
  std::lock_guard lock(mutex_);
  return requests_.size();
}

std::size_t RawHttpServer::connection_count() const { return connections_.load(); }

void RawHttpServer::record(const Request& r) {
  std::lock_guard lock(mutex_);
  requests_.push_back(r);
}

void RawHttpServer::accept_loop() {
  while (!stopping_) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;  // shut down
    }
    ++connections_;
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void RawHttpServer::serve(int fd) {
  Connection c;
  c.fd_ = fd;
  c.server_ = this;
  if (c.next_request()) handler_(c);
  std::lock_guard lock(mutex_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
}

}  // namespace mcprt::native::test
