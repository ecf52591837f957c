// mcprt-demo-server: the demo MCP server over stdio (newline-delimited JSON-RPC), or,
// with `--http PORT`, over Streamable HTTP on a loopback address (http_front.hpp).
//
// One thread, one poll() loop over stdin/stdout plus a timer queue, so a slow_task keeps
// running while other requests are served and a client that stops reading never blocks
// the loop (output is buffered; input is paused while the buffer is large). Exits 0 on
// stdin EOF, after flushing what it can. Logs go to stderr only; stdout carries nothing
// but protocol messages.
//
// Native (POSIX) only: it is never built for wasm.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

#include "http_front.hpp"
#include "mcp_demo_server.hpp"
#include "timer_queue.hpp"

#ifndef MCPRT_DEMO_VERSION
#define MCPRT_DEMO_VERSION "0.0.0"
#endif

namespace {

using mcprt::demo::DemoServer;
using mcprt::demo::TimerQueue;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxLineBytes = 16u * 1024 * 1024;
// Stop reading requests while this much output waits for a slow reader.
constexpr std::size_t kOutputHighWater = 4u * 1024 * 1024;
constexpr std::size_t kReadChunk = 64 * 1024;
// On stdin EOF, how long to keep trying to hand pending output to a slow reader.
constexpr auto kFlushOnExitLimit = std::chrono::seconds(2);

void log_line(std::string_view line) {
  std::string out = "[mcprt-demo-server] ";
  out.append(line);
  out.push_back('\n');
  // Best effort: a failed log write must not affect the protocol.
  ssize_t ignored = ::write(STDERR_FILENO, out.data(), out.size());
  (void)ignored;
}

void print_usage() {
  std::string text =
      "usage: mcprt-demo-server [--http PORT [--host HOST]] [--startup-delay-ms N]\n"
      "                         [--ticker-ms N]\n"
      "                         [--protocol legacy|2026|dual] [--ttl-ms N]\n"
      "                         [--cache-scope public|private]\n"
      "                         [--exit-on-early-request | --ignore-early-requests]\n"
      "                         [--log-requests] [--verbose] [--quiet] [--version] [--help]\n"
      "\n"
      "A demo MCP server speaking newline-delimited JSON-RPC on stdin/stdout.\n"
      "Tools: echo, add, now, word_count, slow_task, fail. Resources: demo://readme,\n"
      "demo://logo.png, demo://ticker (subscribable), demo://notes/{name}. Prompts: greet,\n"
      "summarize (with argument completion).\n"
      "  --protocol legacy|2026|dual\n"
      "               legacy: MCP 2025-11-25 and older (initialize, sessions);\n"
      "               2026: MCP 2026-07-28 only (stateless: server/discover, _meta on\n"
      "               every request, input_required results, subscriptions/listen;\n"
      "               initialize is -32601); dual: both on one connection or URL.\n"
      "               Without this flag: legacy with the six tools above only. With it\n"
      "               (any value) the test tools are listed too: ask_name (elicitation),\n"
      "               ask_model (sampling), list_roots (roots), two_rounds (2026 only: two\n"
      "               input rounds), toggle_tool (adds/removes the tool `bonus` and\n"
      "               notifies), drop_listen (ends every listen stream abruptly),\n"
      "               region_echo (argument `region` mirrored as Mcp-Param-Region)\n"
      "  --ttl-ms N   ttlMs of 2026 server/discover and tools/list results (default 0)\n"
      "  --cache-scope public|private\n"
      "               cacheScope of those results (default public)\n"
      "  --exit-on-early-request\n"
      "               legacy, stdio: exit(1) at once if the first request is not\n"
      "               initialize (like servers that die on a probe)\n"
      "  --ignore-early-requests\n"
      "               legacy, stdio: never answer requests that come before initialize\n"
      "  --log-requests\n"
      "               one stderr line per request received, before any check, exactly\n"
      "               \"[mcprt-demo-server] request <method>\" (also with --quiet)\n"
      "  --http PORT  serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio\n"
      "               (0 = any free port; the real one is printed to stderr as\n"
      "               \"listening on http://...\"); stops on SIGINT/SIGTERM\n"
      "  --host HOST  loopback address to listen on (default 127.0.0.1; also ::1,\n"
      "               localhost); other addresses are refused\n"
      "  --ticker-ms N\n"
      "               demo://ticker changes every N ms while subscribed (default 2000)\n"
      "  --startup-delay-ms N\n"
      "               answer initialize only after N ms (plays a slow-starting server)\n"
      "  --verbose    log every message received and sent (to stderr)\n"
      "  --quiet      log nothing\n";
  ssize_t ignored = ::write(STDOUT_FILENO, text.data(), text.size());
  (void)ignored;
}

// Pipes and sockets are switched to non-blocking so a full pipe never stalls the loop.
// Terminals and files are left alone: their flags are shared with the parent process.
void make_nonblocking_if_pipe(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return;
  if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) return;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

class StdioLoop {
 public:
  StdioLoop(DemoServer& server, TimerQueue& timers) : server_(server), timers_(timers) {}

  void send(const mcprt::demo::json& message) {
    out_ += message.dump(-1, ' ', false, mcprt::demo::json::error_handler_t::replace);
    out_.push_back('\n');
  }

  int run() {
    while (!(stdin_eof_ && out_.empty()) && !stdout_broken_) {
      if (!flush()) break;
      if (stdin_eof_) {
        if (Clock::now() > eof_at_ + kFlushOnExitLimit) {
          log_line("stdout not drained after stdin closed; exiting anyway");
          break;
        }
      }
      pollfd fds[2];
      nfds_t n = 0;
      int in_index = -1;
      int out_index = -1;
      if (!stdin_eof_ && out_.size() < kOutputHighWater) {
        in_index = static_cast<int>(n);
        fds[n++] = pollfd{STDIN_FILENO, POLLIN, 0};
      }
      if (!out_.empty()) {
        out_index = static_cast<int>(n);
        fds[n++] = pollfd{STDOUT_FILENO, POLLOUT, 0};
      }
      const int rc = ::poll(fds, n, poll_timeout_ms());
      if (rc < 0 && errno != EINTR) {
        log_line(std::string("poll failed: ") + std::strerror(errno));
        return 1;
      }
      if (rc > 0 && in_index >= 0 && (fds[in_index].revents & (POLLIN | POLLHUP | POLLERR))) {
        read_stdin();
      }
      if (rc > 0 && out_index >= 0 && (fds[out_index].revents & (POLLERR | POLLNVAL))) {
        stdout_broken_ = true;
      }
      timers_.run_due(Clock::now());
    }
    if (stdout_broken_) {
      log_line("stdout closed; exiting");
      server_.cancel_all();
      return 0;
    }
    log_line("stdin closed; exiting");
    return 0;
  }

 private:
  int poll_timeout_ms() const {
    int timeout = -1;
    if (auto due = timers_.next_due()) {
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*due - Clock::now());
      // Round up so the timer is due when poll returns.
      timeout = wait.count() <= 0 ? 0 : static_cast<int>(wait.count()) + 1;
    }
    if (stdin_eof_) {
      const int flush_poll_ms = 50;
      timeout = timeout < 0 ? flush_poll_ms : std::min(timeout, flush_poll_ms);
    }
    return timeout;
  }

  // Writes what stdout accepts now. Returns false when stdout is gone.
  bool flush() {
    while (!out_.empty()) {
      const ssize_t n = ::write(STDOUT_FILENO, out_.data(), out_.size());
      if (n > 0) {
        out_.erase(0, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      stdout_broken_ = true;
      return false;
    }
    return true;
  }

  void read_stdin() {
    char buf[kReadChunk];
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return;
      log_line(std::string("stdin read failed: ") + std::strerror(errno));
      on_eof();
      return;
    }
    if (n == 0) {
      on_eof();
      return;
    }
    feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }

  void feed(std::string_view bytes) {
    auto sender = [this](const mcprt::demo::json& m) { send(m); };
    while (!bytes.empty()) {
      const auto nl = bytes.find('\n');
      const std::string_view part = bytes.substr(0, nl);
      if (!discarding_) {
        if (line_.size() + part.size() > kMaxLineBytes) {
          // Answer once and drop the rest of this line, instead of buffering without
          // bound.
          log_line("message over " + std::to_string(kMaxLineBytes) + " bytes; dropped");
          send(mcprt::demo::json{{"jsonrpc", "2.0"},
                                 {"id", nullptr},
                                 {"error",
                                  {{"code", -32700},
                                   {"message", "Parse error: message too large"}}}});
          discarding_ = true;
          line_.clear();
        } else {
          line_.append(part);
        }
      }
      if (nl == std::string_view::npos) break;
      bytes.remove_prefix(nl + 1);
      if (!discarding_) {
        std::string line = std::move(line_);
        line_.clear();
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") != std::string::npos) {
          server_.handle_text(line, sender);
        }
      }
      discarding_ = false;
    }
  }

  void on_eof() {
    if (stdin_eof_) return;
    stdin_eof_ = true;
    eof_at_ = Clock::now();
    // A last message without its newline still counts.
    if (!discarding_ && line_.find_first_not_of(" \t\r") != std::string::npos) {
      std::string line = std::move(line_);
      line_.clear();
      server_.handle_text(line, [this](const mcprt::demo::json& m) { send(m); });
    }
    // The client is gone: running tasks stop without an answer.
    server_.cancel_all();
  }

  DemoServer& server_;
  TimerQueue& timers_;
  std::string out_;
  std::string line_;
  bool discarding_ = false;
  bool stdin_eof_ = false;
  bool stdout_broken_ = false;
  Clock::time_point eof_at_{};
};

// Serves Streamable HTTP until SIGINT/SIGTERM. The signals are blocked in every thread
// and taken by sigwait() here, so no handler runs inside httplib or the DemoServer.
int run_http(mcprt::demo::HttpFrontOptions options) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // before any thread starts

  mcprt::demo::HttpFrontEnd front(std::move(options));
  std::string error;
  if (front.bind(error) < 0) {
    log_line(error);
    return 2;
  }
  // Always printed (also with --quiet): tests and scripts read the port from it.
  log_line("listening on " + front.url());
  bool served = true;
  std::thread server([&] {
    served = front.run();
    // Wake the sigwait below if the server ended on its own.
    ::kill(::getpid(), SIGTERM);
  });
  int sig = 0;
  ::sigwait(&stop_signals, &sig);
  front.stop();
  server.join();
  if (!served) {
    log_line("the HTTP server failed");
    return 1;
  }
  log_line(std::string("stopped (") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ")");
  return 0;
}

bool parse_port(std::string_view text, int& port) {
  if (text.empty() || text.size() > 5) return false;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > 65535) return false;
  port = v;
  return true;
}

// Up to 12 digits: enough for TTLs far above the 24 h cap a client applies.
bool parse_ttl(std::string_view text, std::int64_t& ms) {
  if (text.empty() || text.size() > 12) return false;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  ms = v;
  return true;
}

bool parse_delay(std::string_view text, int& ms) {
  if (text.empty() || text.size() > 6) return false;
  int v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > 600000) return false;
  ms = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool verbose = false;
  bool quiet = false;
  int http_port = -1;  // -1 = stdio
  std::string host = "127.0.0.1";
  bool host_given = false;
  int startup_delay_ms = 0;
  int ticker_ms = 2000;
  bool protocol_given = false;
  mcprt::demo::ProtocolMode protocol = mcprt::demo::ProtocolMode::legacy;
  std::int64_t ttl_ms = 0;
  std::string cache_scope = "public";
  auto early = mcprt::demo::EarlyRequests::answer;
  bool log_requests = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg == "--quiet" || arg == "-q") {
      quiet = true;
    } else if (arg == "--version") {
      std::printf("mcprt-demo-server %s\n", MCPRT_DEMO_VERSION);
      return 0;
    } else if (arg == "--http" || arg == "--host") {
      if (i + 1 >= argc) {
        log_line(std::string(arg) + " needs a value (see --help)");
        return 2;
      }
      const std::string_view value = argv[++i];
      if (arg == "--host") {
        host = std::string(value);
        host_given = true;
      } else if (!parse_port(value, http_port)) {
        log_line("--http: invalid port \"" + std::string(value) + "\" (expected 0..65535)");
        return 2;
      }
    } else if (arg == "--startup-delay-ms") {
      if (i + 1 >= argc || !parse_delay(argv[i + 1], startup_delay_ms)) {
        log_line("--startup-delay-ms needs a number of milliseconds (0..600000)");
        return 2;
      }
      ++i;
    } else if (arg == "--ticker-ms") {
      if (i + 1 >= argc || !parse_delay(argv[i + 1], ticker_ms) || ticker_ms < 10) {
        log_line("--ticker-ms needs a number of milliseconds (10..600000)");
        return 2;
      }
      ++i;
    } else if (arg == "--protocol") {
      const std::string_view value = i + 1 < argc ? std::string_view(argv[i + 1]) : "";
      if (value == "legacy") {
        protocol = mcprt::demo::ProtocolMode::legacy;
      } else if (value == "2026" || value == "2026-07-28") {
        protocol = mcprt::demo::ProtocolMode::modern;
      } else if (value == "dual") {
        protocol = mcprt::demo::ProtocolMode::dual;
      } else {
        log_line("--protocol needs legacy, 2026 or dual (got \"" + std::string(value) + "\")");
        return 2;
      }
      protocol_given = true;
      ++i;
    } else if (arg == "--ttl-ms") {
      if (i + 1 >= argc || !parse_ttl(argv[i + 1], ttl_ms)) {
        log_line("--ttl-ms needs a number of milliseconds (0..999999999999)");
        return 2;
      }
      ++i;
    } else if (arg == "--cache-scope") {
      const std::string_view value = i + 1 < argc ? std::string_view(argv[i + 1]) : "";
      if (value != "public" && value != "private") {
        log_line("--cache-scope needs public or private (got \"" + std::string(value) + "\")");
        return 2;
      }
      cache_scope = std::string(value);
      ++i;
    } else if (arg == "--exit-on-early-request" || arg == "--ignore-early-requests") {
      const auto wanted = arg == "--exit-on-early-request" ? mcprt::demo::EarlyRequests::exit
                                                           : mcprt::demo::EarlyRequests::ignore;
      if (early != mcprt::demo::EarlyRequests::answer && early != wanted) {
        log_line("--exit-on-early-request and --ignore-early-requests exclude each other");
        return 2;
      }
      early = wanted;
    } else if (arg == "--log-requests") {
      log_requests = true;
    } else if (arg == "--help" || arg == "-h") {
      print_usage();
      return 0;
    } else {
      log_line("unknown argument: " + std::string(arg) + " (see --help)");
      return 2;
    }
  }
  // A client that closes our stdout (or a socket) must not kill us mid-write; write()
  // reports EPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  if (host_given && http_port < 0) {
    log_line("--host needs --http PORT (see --help)");
    return 2;
  }
  if (early != mcprt::demo::EarlyRequests::answer &&
      (http_port >= 0 || protocol != mcprt::demo::ProtocolMode::legacy)) {
    log_line("--exit-on-early-request and --ignore-early-requests need stdio and the legacy "
             "protocol (see --help)");
    return 2;
  }
  auto apply_protocol = [&](mcprt::demo::DemoServerOptions& o) {
    o.protocol = protocol;
    o.ticker_interval = std::chrono::milliseconds(ticker_ms);
    o.test_tools = protocol_given;
    o.ttl_ms = ttl_ms;
    o.cache_scope = cache_scope;
    o.early_requests = early;
    o.exit_now = [] {
      log_line("exit 1");
      ::_exit(1);
    };
    if (log_requests) {
      o.on_request = [](std::string_view method) { log_line("request " + std::string(method)); };
    }
  };
  if (http_port >= 0) {
    if (!mcprt::demo::is_loopback_host(host)) {
      log_line("refusing --host " + host +
               ": only loopback addresses are allowed on this machine (127.0.0.1, ::1, "
               "localhost)");
      return 2;
    }
    mcprt::demo::HttpFrontOptions http;
    http.host = host;
    http.port = http_port;
    http.server.server_version = MCPRT_DEMO_VERSION;
    http.server.verbose = verbose && !quiet;
    http.server.startup_delay = std::chrono::milliseconds(startup_delay_ms);
    apply_protocol(http.server);
    if (!quiet) http.server.log = log_line;
    if (!quiet) log_line(std::string("mcprt-demo-server ") + MCPRT_DEMO_VERSION + " starting (HTTP)");
    return run_http(std::move(http));
  }
  make_nonblocking_if_pipe(STDIN_FILENO);
  make_nonblocking_if_pipe(STDOUT_FILENO);

  TimerQueue timers;
  mcprt::demo::DemoServerOptions options;
  options.server_version = MCPRT_DEMO_VERSION;
  options.verbose = verbose && !quiet;
  options.startup_delay = std::chrono::milliseconds(startup_delay_ms);
  apply_protocol(options);
  if (!quiet) options.log = log_line;
  DemoServer server(timers, options);
  StdioLoop loop(server, timers);
  if (!quiet) log_line(std::string("mcprt-demo-server ") + MCPRT_DEMO_VERSION + " ready on stdio");
  return loop.run();
}
