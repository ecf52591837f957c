// mcprt_bench_roundtrip: tools/call round trips over stdio and Streamable HTTP, each set
// against a baseline measured in the same run on the same machine (SPEC §12: absolute
// times drift on these machines, ratios within one run hold).
//
// stdio, one call at a time (N calls after W warm-up calls):
//   pipe     raw pipe ping-pong: this binary re-run as a child (`--echo-child`) that
//            answers every line with a canned tools/call response; the parent writes the
//            request line and reads the response line. No JSON work on either side. This
//            is the SPEC §12 baseline ("a raw pipe ping-pong of the same bytes").
//   raw      the same request bytes written by hand to the demo server (handshake done
//            by hand too), one response line read back: the server's own cost included,
//            no client library. mcprt/raw is the client library's overhead.
//   mcprt    ClientSession + stdio transport + NativeProcessLauncher + NativeExecutor
//            against the demo server's `echo` tool.
// stdio, pipelined: M calls with at most W outstanding (--window, default 64; 0 = all M
// issued at once), throughput in calls/s, same three.
// HTTP, one call at a time: the demo server's Streamable HTTP mode (`--http 0`), a plain
// keep-alive httplib::Client POST loop (baseline) vs ClientSession + the Streamable HTTP
// transport + NativeHttpClient; and a keep-alive libcurl easy loop (`curl_easy_perform` on
// one reused handle: what libcurl itself costs, without mcprt's layers). `--time-wait N`
// then makes N more mcprt calls and counts TIME-WAIT sockets.
//
// `--cpu N` runs everything (this process, the servers it starts) on CPU N. On a virtual
// machine a round trip between two CPUs pays for waking a halted virtual CPU, and whether
// it does changes from run to run (the httplib loop's p50 jumps between about 50 and 95 µs);
// on one CPU every client pays the same context switches and the ratios measure the clients.
//
// Per call, for every runner of the sequential runs: the syscalls (stdio) and heap
// allocations of this (the client's) thread, counted around each measured block
// (bench_counters.hpp: a perf counter on raw_syscalls:sys_enter, and malloc replaced by a
// counting wrapper in this binary only). The echo child and the servers are not counted.
//
// `--trace-allocations`: one more mcprt call after each measurement (stdio, HTTP), with a
// backtrace of each of its allocations on stderr (bench_counters.hpp says how to name the frames).
//
// Output: a table on stdout, and every number as one JSON line (stdout's last line and,
// with --json FILE, that file).

#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "bench_counters.hpp"
#include "mcprt/client.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/http_client.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "mcprt/stdio_transport.hpp"

extern char** environ;

namespace {

using mcprt::json;
using Clock = std::chrono::steady_clock;

#ifdef MCPRT_DEMO_SERVER
constexpr const char* kDefaultDemoServer = MCPRT_DEMO_SERVER;
#else
constexpr const char* kDefaultDemoServer = "mcprt-demo-server";
#endif

constexpr const char* kMessage = "hello";
constexpr const char* kProtocolVersion = "2025-11-25";
// Bound on any single wait of the benchmark (a hung server fails the run, never hangs it).
constexpr mcprt::Millis kWaitLimit{30000};

struct Options {
  std::size_t calls = 1000;
  std::size_t warmup = 100;
  std::size_t pipelined = 20000;
  std::size_t window = 64;  // outstanding calls in the pipelined run; 0 = no limit
  bool stdio = true;
  bool http = true;
  std::string json_file;
  std::string server = kDefaultDemoServer;
  // The stdio server's arguments: the demo server's `--quiet`, none with --bare-server
  // (e.g. mcprt_bench_echo_server, the server of bench_compare.mjs and SPEC §12).
  std::vector<std::string> server_args{"--quiet"};
  // HTTP: which clients run (profiling one alone); ratios need "keep" and "mcprt".
  bool http_keep = true, http_fresh = true, http_mcprt = true, http_curl = true;
  // HTTP: this many more mcprt calls after the measurement, counting TIME-WAIT sockets.
  std::size_t time_wait_calls = 0;
  // stdio: one more mcprt call after the measurement, each of its allocations traced.
  bool trace_allocations = false;
  // Every thread of the run, the servers it starts included, on this CPU (-1: anywhere).
  int cpu = -1;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "mcprt_bench_roundtrip: " << why << "\n"
            << "usage: mcprt_bench_roundtrip [--calls N] [--warmup W] [--pipelined M] [--window W]\n"
            << "                             [--only stdio|http] [--json FILE] [--server PATH]\n"
            << "                             [--bare-server] [--http-clients keep,fresh,curl,mcprt]\n"
            << "                             [--time-wait N] [--trace-allocations] [--cpu N]\n";
  std::exit(2);
}

double elapsed_us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// ---------------------------------------------------------------------------------------
// Statistics

struct Stats {
  std::size_t n = 0;
  double p50 = 0, p99 = 0, mean = 0, min = 0, max = 0;
};

// Nearest-rank percentile over sorted samples.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

Stats summarize(std::vector<double> samples) {
  Stats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.n = samples.size();
  s.p50 = percentile(samples, 0.50);
  s.p99 = percentile(samples, 0.99);
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

json to_json(const Stats& s) {
  return {{"n", s.n}, {"p50_us", s.p50}, {"p99_us", s.p99}, {"mean_us", s.mean},
          {"min_us", s.min}, {"max_us", s.max}};
}

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

// Process CPU time (user + sys, all threads of this process) in µs.
double cpu_us() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto us = [](const timeval& tv) { return double(tv.tv_sec) * 1e6 + double(tv.tv_usec); };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

// ---------------------------------------------------------------------------------------
// The bytes on the wire

std::string request_line(std::uint64_t id) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "tools/call"},
              {"params", {{"name", "echo"}, {"arguments", {{"message", kMessage}}}}}}
             .dump() +
         "\n";
}

std::string response_line(std::uint64_t id) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"result", {{"content", json::array({{{"type", "text"}, {"text", kMessage}}})}}}}
             .dump() +
         "\n";
}

std::string initialize_request() {
  return json{{"jsonrpc", "2.0"},
              {"id", 0},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", kProtocolVersion},
                {"capabilities", json::object()},
                {"clientInfo", {{"name", "bench-baseline"}, {"version", "0"}}}}}}
      .dump();
}

std::string initialized_notification() {
  return json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump();
}

// ---------------------------------------------------------------------------------------
// A child process over raw pipes (the baselines do their own I/O, no mcprt involved)

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // Blocks until a whole line (without '\n') is read. False on EOF or error.
  bool read_line(std::string& line) {
    for (;;) {
      auto nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        line.assign(buf_, pos_, nl - pos_);
        pos_ = nl + 1;
        if (pos_ == buf_.size()) {
          buf_.clear();
          pos_ = 0;
        }
        return true;
      }
      if (pos_ > 0) {
        buf_.erase(0, pos_);
        pos_ = 0;
      }
      char chunk[65536];
      ssize_t r = ::read(fd_, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      buf_.append(chunk, static_cast<std::size_t>(r));
    }
  }

 private:
  int fd_;
  std::string buf_;
  std::size_t pos_ = 0;
};

class RawChild {
 public:
  RawChild() = default;
  RawChild(const RawChild&) = delete;
  RawChild& operator=(const RawChild&) = delete;
  ~RawChild() { stop(); }

  // Spawns argv[0] (a path) with stdin/stdout as pipes; stderr piped when capture_stderr,
  // else inherited.
  bool spawn(const std::vector<std::string>& argv, bool capture_stderr, std::string& err) {
    int in[2], out[2], errp[2] = {-1, -1};
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 ||
        (capture_stderr && ::pipe2(errp, O_CLOEXEC) != 0)) {
      err = std::string("pipe2: ") + std::strerror(errno);
      return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    if (capture_stderr) posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int rc = ::posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    if (capture_stderr) ::close(errp[1]);
    to_child_ = in[1];
    from_child_ = out[0];
    stderr_ = errp[0];
    if (rc != 0) {
      pid_ = -1;
      err = "cannot start " + argv[0] + ": " + std::strerror(rc);
      return false;
    }
    reader_ = std::make_unique<LineReader>(from_child_);
    return true;
  }

  int to_child() const { return to_child_; }
  int stderr_fd() const { return stderr_; }
  LineReader& reader() { return *reader_; }
  pid_t pid() const { return pid_; }

  // Closes stdin (the servers exit on EOF), then SIGTERM after a grace period, then reaps.
  void stop() {
    if (to_child_ >= 0) ::close(to_child_);
    to_child_ = -1;
    if (pid_ > 0) {
      int status = 0;
      for (int i = 0; i < 100; ++i) {
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        if (i == 50) ::kill(pid_, SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
      }
    }
    if (from_child_ >= 0) ::close(from_child_);
    if (stderr_ >= 0) ::close(stderr_);
    from_child_ = stderr_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int stderr_ = -1;
  std::unique_ptr<LineReader> reader_;
};

// `--echo-child RESPONSE`: answers every input line with RESPONSE (+ '\n') until EOF.
int run_echo_child(const std::string& response) {
  const std::string line = response + "\n";
  LineReader in(STDIN_FILENO);
  std::string req;
  while (in.read_line(req)) {
    if (!write_all(STDOUT_FILENO, line.data(), line.size())) return 1;
  }
  return 0;
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

// One benchmarked way of making a call. The measurements of several runners are
// interleaved in blocks (A B C A B C ...), so a burst of load from elsewhere on the machine
// hits every runner alike and the ratios of one run stay meaningful.
struct Runner {
  std::string label;
  std::function<bool(std::string& err)> call;  // one complete round trip
  std::vector<double> samples;                  // µs, timed calls only
  double cpu = 0;                               // process CPU µs over the timed calls
  std::uint64_t syscalls = 0;                   // this thread's, over the timed calls
  std::uint64_t allocations = 0;                // this thread's, over the timed calls
  double cpu_per_call() const { return per_call(cpu); }
  double syscalls_per_call() const { return per_call(static_cast<double>(syscalls)); }
  double allocations_per_call() const { return per_call(static_cast<double>(allocations)); }
  double per_call(double total) const {
    return samples.empty() ? 0 : total / static_cast<double>(samples.size());
  }
};

// The syscall counter of the thread that runs the calls (null when it cannot be opened).
const bench::SyscallCounter* g_syscalls = nullptr;

constexpr std::size_t kBlock = 50;

bool measure_interleaved(const std::vector<Runner*>& runners, const Options& opt,
                         std::string& err) {
  for (Runner* r : runners) {
    for (std::size_t i = 0; i < opt.warmup; ++i) {
      if (!r->call(err)) {
        err = r->label + " (warm-up): " + err;
        return false;
      }
    }
    r->samples.clear();
    r->samples.reserve(opt.calls);
    r->cpu = 0;
    r->syscalls = 0;
    r->allocations = 0;
  }
  for (std::size_t done = 0; done < opt.calls; done += kBlock) {
    const std::size_t n = std::min(kBlock, opt.calls - done);
    for (Runner* r : runners) {
      const double cpu0 = cpu_us();
      const std::uint64_t a0 = bench::allocations();
      const std::uint64_t s0 = g_syscalls ? g_syscalls->read() : 0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto t0 = Clock::now();
        if (!r->call(err)) {
          err = r->label + ": " + err;
          return false;
        }
        r->samples.push_back(elapsed_us(t0, Clock::now()));
      }
      // The second read() is itself one syscall: not the calls'.
      if (g_syscalls) r->syscalls += g_syscalls->read() - s0 - 1;
      r->allocations += bench::allocations() - a0;
      r->cpu += cpu_us() - cpu0;
    }
  }
  return true;
}

bool is_result_line(const std::string& line, std::string& err) {
  auto j = json::parse(line, nullptr, false);
  if (j.is_object() && j.contains("result")) return true;
  err = "unexpected answer: " + line.substr(0, 200);
  return false;
}

// Raw write-line → read-line round trips with `child`; the request lines are built before
// the run, so the baseline does no JSON work at all. The last answer is kept in
// `last_line` (checked after the run: it proves the exchange was the real one).
Runner raw_runner(std::string label, RawChild& child, std::size_t count, std::string& last_line) {
  auto reqs = std::make_shared<std::vector<std::string>>();
  reqs->reserve(count);
  for (std::size_t i = 0; i < count; ++i) reqs->push_back(request_line(i + 1));
  auto next = std::make_shared<std::size_t>(0);
  return Runner{std::move(label), [&child, &last_line, reqs, next](std::string& err) {
                  if (*next >= reqs->size()) {
                    err = "more calls than prepared requests";
                    return false;
                  }
                  const std::string& req = (*reqs)[(*next)++];
                  if (!write_all(child.to_child(), req.data(), req.size()) ||
                      !child.reader().read_line(last_line)) {
                    err = "the child stopped answering";
                    return false;
                  }
                  return true;
                }, {}, 0};
}

// M request lines, one write per line as a client does. Without a window (0) a writer
// thread writes them all while this thread reads the M answers; with a window W, W lines
// go out first and then one more for each answer read (what a client with W calls in
// flight does). Returns calls/s.
bool raw_pipelined(RawChild& child, std::size_t m, std::size_t window, std::uint64_t first_id,
                   const std::function<std::string(std::uint64_t)>& next_request,
                   double& calls_per_s, std::string& err) {
  std::vector<std::string> reqs;
  reqs.reserve(m);
  for (std::size_t i = 0; i < m; ++i) reqs.push_back(next_request(first_id + i));
  std::atomic<bool> write_ok{true};
  std::string line;
  std::size_t got = 0;
  const auto t0 = Clock::now();
  if (window > 0) {
    std::size_t sent = 0;
    auto send_next = [&] {
      const std::string& r = reqs[sent++];
      if (!write_all(child.to_child(), r.data(), r.size())) write_ok = false;
    };
    while (sent < std::min(window, m) && write_ok) send_next();
    while (got < m && write_ok && child.reader().read_line(line)) {
      ++got;
      if (sent < m) send_next();
    }
  }
  std::thread writer;
  if (window == 0) {
    writer = std::thread([&] {
      for (const auto& r : reqs) {
        if (!write_all(child.to_child(), r.data(), r.size())) {
          write_ok = false;
          return;
        }
      }
    });
    while (got < m && child.reader().read_line(line)) ++got;
  }
  const auto t1 = Clock::now();
  if (writer.joinable()) writer.join();
  if (got < m || !write_ok) {
    err = "pipelined run: " + std::to_string(got) + " of " + std::to_string(m) + " answers";
    return false;
  }
  calls_per_s = static_cast<double>(m) / (elapsed_us(t0, t1) / 1e6);
  return true;
}

// Handshake by hand with a demo server over raw pipes.
bool raw_handshake(RawChild& child, std::string& err) {
  std::string init = initialize_request() + "\n";
  std::string line;
  if (!write_all(child.to_child(), init.data(), init.size()) || !child.reader().read_line(line)) {
    err = "demo server: no answer to initialize";
    return false;
  }
  auto j = json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("result")) {
    err = "demo server: bad initialize answer: " + line.substr(0, 200);
    return false;
  }
  std::string note = initialized_notification() + "\n";
  return write_all(child.to_child(), note.data(), note.size());
}

// ---------------------------------------------------------------------------------------
// mcprt sessions

struct SessionRun {
  std::shared_ptr<mcprt::ClientSession> session;
  bool closed = false;
};

bool connect_session(mcprt::native::NativeExecutor& ex, std::unique_ptr<mcprt::Transport> t,
                     const std::string& name, SessionRun& run, std::string& err) {
  mcprt::ClientOptions co;
  co.server_name = name;
  co.on_close = [&run](const mcprt::Error&) { run.closed = true; };
  run.session = mcprt::ClientSession::create(ex, std::move(t), co);
  std::optional<mcprt::Status> st;
  run.session->connect([&](mcprt::Status s) { st = std::move(s); });
  if (!ex.run_until([&] { return st.has_value(); }, kWaitLimit)) {
    err = name + ": connect() did not complete";
    return false;
  }
  if (!st->ok()) {
    err = st->error().describe();
    return false;
  }
  return true;
}

void close_session(mcprt::native::NativeExecutor& ex, SessionRun& run) {
  if (!run.session) return;
  run.session->close();
  ex.run_until([&] { return run.closed; }, mcprt::Millis(5000));
  run.session.reset();
}

bool call_once(mcprt::native::NativeExecutor& ex, mcprt::ClientSession& s, std::string& err) {
  std::optional<mcprt::Result<json>> r;
  s.call_tool("echo", json{{"message", kMessage}}, {}, [&](mcprt::Result<json> x) { r = std::move(x); });
  if (!ex.run_until([&] { return r.has_value(); }, kWaitLimit)) {
    err = "tools/call did not complete";
    return false;
  }
  if (!r->ok()) {
    err = r->error().describe();
    return false;
  }
  return true;
}

// --trace-allocations: one more call with a backtrace of each of its allocations on stderr.
bool trace_one_call(mcprt::native::NativeExecutor& ex, mcprt::ClientSession& s, std::string& err) {
  if (!bench::allocations_counted()) return true;
  std::fprintf(stderr, "mcprt_bench_roundtrip: the allocations of one more mcprt call:\n");
  bench::trace_allocations(true);
  const bool traced = call_once(ex, s, err);
  bench::trace_allocations(false);
  return traced;
}

// M calls, at most `window` in flight (0: all issued at once): each completion issues the
// next call, as a host with that many calls in flight does.
bool mcprt_pipelined(mcprt::native::NativeExecutor& ex, mcprt::ClientSession& s, std::size_t m,
                     std::size_t window, double& calls_per_s, std::string& err) {
  std::size_t done = 0, failed = 0, issued = 0;
  std::string first_error;
  std::function<void()> issue = [&] {
    ++issued;
    s.call_tool("echo", json{{"message", kMessage}}, {}, [&](mcprt::Result<json> r) {
      ++done;
      if (!r.ok() && failed++ == 0) first_error = r.error().describe();
      if (issued < m) issue();
    });
  };
  const auto t0 = Clock::now();
  const std::size_t first = window == 0 ? m : std::min(window, m);
  while (issued < first) issue();
  const bool all = ex.run_until([&] { return done == m; }, mcprt::Millis(120000));
  const auto t1 = Clock::now();
  if (!all || failed > 0) {
    err = "pipelined run: " + std::to_string(done) + " of " + std::to_string(m) +
          " completed, " + std::to_string(failed) + " failed" +
          (first_error.empty() ? "" : " (first: " + first_error + ")");
    return false;
  }
  calls_per_s = static_cast<double>(m) / (elapsed_us(t0, t1) / 1e6);
  return true;
}

// ---------------------------------------------------------------------------------------
// Output

void print_header() {
  std::printf("  %-50s %10s %10s %10s\n", "", "p50 µs", "p99 µs", "mean µs");
}
void print_row(const char* label, const Stats& s) {
  std::printf("  %-50s %10.1f %10.1f %10.1f\n", label, s.p50, s.p99, s.mean);
}
void print_ratio(const char* label, const Stats& a, const Stats& b) {
  std::printf("  %-50s %9.2fx %9.2fx %9.2fx\n", label, ratio(a.p50, b.p50), ratio(a.p99, b.p99),
              ratio(a.mean, b.mean));
}
json ratio_json(const Stats& a, const Stats& b) {
  return {{"p50", ratio(a.p50, b.p50)}, {"p99", ratio(a.p99, b.p99)},
          {"mean", ratio(a.mean, b.mean)}};
}

// ---------------------------------------------------------------------------------------
// stdio

bool bench_stdio(const Options& opt, json& out, std::string& err) {
  const std::string self = self_exe();
  const std::string canned = response_line(1);
  const std::size_t total = opt.warmup + opt.calls;
  std::printf("\nstdio: tools/call echo {\"message\":\"%s\"}, one call at a time, %zu calls "
              "(+%zu warm-up), interleaved in blocks of %zu\n",
              kMessage, opt.calls, opt.warmup, kBlock);
  std::printf("  request %zu bytes, response %zu bytes (with '\\n')\n", request_line(1).size(),
              canned.size());

  // The echo child (baseline), the demo server driven by hand, and the demo server driven
  // by mcprt, all alive at once so their calls can be interleaved.
  RawChild echo_child, raw_server;
  if (!echo_child.spawn({self, "--echo-child", canned.substr(0, canned.size() - 1)}, false, err))
    return false;
  std::vector<std::string> server_argv{opt.server};
  server_argv.insert(server_argv.end(), opt.server_args.begin(), opt.server_args.end());
  if (!raw_server.spawn(server_argv, false, err)) return false;
  if (!raw_handshake(raw_server, err)) return false;

  mcprt::native::NativeExecutor ex;
  mcprt::native::NativeProcessLauncher launcher(ex);
  mcprt::ProcessSpec spec;
  spec.command = opt.server;
  spec.args = opt.server_args;
  spec.label = "demo";
  auto stream = launcher.launch(spec);
  if (!stream.ok()) {
    err = stream.error().describe();
    return false;
  }
  mcprt::StdioTransportOptions to;
  to.server_name = "demo";
  SessionRun run;
  struct Closer {
    mcprt::native::NativeExecutor& ex;
    SessionRun& run;
    ~Closer() { close_session(ex, run); }
  } closer{ex, run};
  if (!connect_session(ex, mcprt::make_stdio_transport(ex, std::move(stream).value(), to), "demo",
                       run, err))
    return false;

  std::string pipe_last, raw_last;
  Runner pipe = raw_runner("raw pipe ping-pong", echo_child, total, pipe_last);
  Runner raw = raw_runner("raw client -> demo server", raw_server, total, raw_last);
  Runner mc{"mcprt", [&](std::string& e) { return call_once(ex, *run.session, e); }, {}, 0};
  if (!measure_interleaved({&pipe, &raw, &mc}, opt, err)) return false;
  if (!is_result_line(pipe_last, err) || !is_result_line(raw_last, err)) return false;
  if (opt.trace_allocations && !trace_one_call(ex, *run.session, err)) return false;
  const Stats pipe_stats = summarize(pipe.samples), raw_stats = summarize(raw.samples),
              mcprt_stats = summarize(mc.samples);

  print_header();
  print_row("baseline: raw pipe ping-pong (echo child)", pipe_stats);
  print_row("raw client -> demo server (same bytes)", raw_stats);
  print_row("mcprt ClientSession -> demo server", mcprt_stats);
  print_ratio("ratio mcprt / raw pipe ping-pong", mcprt_stats, pipe_stats);
  print_ratio("ratio mcprt / raw client -> demo server", mcprt_stats, raw_stats);
  std::printf("  client CPU (user+sys) per call: mcprt %.1f µs, raw client %.1f µs (%.2fx)\n",
              mc.cpu_per_call(), raw.cpu_per_call(), ratio(mc.cpu_per_call(), raw.cpu_per_call()));
  // What building the caller's `arguments` ({"message": "hello"}) costs: part of mcprt's
  // count (call_once builds it per call, as a host does), not of the library's work.
  const std::uint64_t args0 = bench::allocations();
  { json args{{"message", kMessage}}; }
  const std::uint64_t args_allocations = bench::allocations() - args0;
  json counts = json::object();
  if (g_syscalls) {
    std::printf("  syscalls per call (client thread): pipe ping-pong %.2f, raw client %.2f, "
                "mcprt %.2f\n",
                pipe.syscalls_per_call(), raw.syscalls_per_call(), mc.syscalls_per_call());
    counts["syscalls_per_call"] = {{"pipe", pipe.syscalls_per_call()},
                                   {"raw_demo", raw.syscalls_per_call()},
                                   {"mcprt", mc.syscalls_per_call()}};
  }
  if (bench::allocations_counted()) {
    std::printf("  heap allocations per call (client thread): pipe ping-pong %.2f, raw client "
                "%.2f, mcprt %.2f (of which %llu build the caller's arguments object)\n",
                pipe.allocations_per_call(), raw.allocations_per_call(),
                mc.allocations_per_call(), static_cast<unsigned long long>(args_allocations));
    counts["allocations_per_call"] = {{"pipe", pipe.allocations_per_call()},
                                      {"raw_demo", raw.allocations_per_call()},
                                      {"mcprt", mc.allocations_per_call()},
                                      {"mcprt_arguments", args_allocations}};
  }

  json pipelined = nullptr;
  if (opt.pipelined > 0) {
    double pipe_tput = 0, raw_tput = 0, mcprt_tput = 0;
    if (!raw_pipelined(echo_child, opt.pipelined, opt.window, 1'000'000, request_line, pipe_tput,
                       err) ||
        !raw_pipelined(raw_server, opt.pipelined, opt.window, 1'000'000, request_line, raw_tput,
                       err) ||
        !mcprt_pipelined(ex, *run.session, opt.pipelined, opt.window, mcprt_tput, err))
      return false;
    if (opt.window == 0) {
      std::printf("\nstdio: pipelined, %zu calls issued without waiting\n", opt.pipelined);
    } else {
      std::printf("\nstdio: pipelined, %zu calls, at most %zu in flight\n", opt.pipelined,
                  opt.window);
    }
    std::printf("  %-50s %10s\n", "", "calls/s");
    std::printf("  %-50s %10.0f\n", "raw pipe (echo child)", pipe_tput);
    std::printf("  %-50s %10.0f\n", "raw client -> demo server", raw_tput);
    std::printf("  %-50s %10.0f\n", "mcprt ClientSession -> demo server", mcprt_tput);
    std::printf("  %-50s %9.2fx\n", "ratio mcprt / raw client -> demo server",
                ratio(mcprt_tput, raw_tput));
    pipelined = {{"calls", opt.pipelined},
                 {"window", opt.window},
                 {"pipe_calls_per_s", pipe_tput},
                 {"raw_demo_calls_per_s", raw_tput},
                 {"mcprt_calls_per_s", mcprt_tput},
                 {"ratio_mcprt_raw_demo", ratio(mcprt_tput, raw_tput)}};
  }

  out = {{"pipe", to_json(pipe_stats)},
         {"raw_demo", to_json(raw_stats)},
         {"mcprt", to_json(mcprt_stats)},
         {"ratio_mcprt_pipe", ratio_json(mcprt_stats, pipe_stats)},
         {"ratio_mcprt_raw_demo", ratio_json(mcprt_stats, raw_stats)},
         {"cpu_per_call_us",
          {{"mcprt", mc.cpu_per_call()}, {"raw_demo", raw.cpu_per_call()},
           {"pipe", pipe.cpu_per_call()}}},
         {"counts", counts},
         {"pipelined", pipelined}};
  return true;
}

// ---------------------------------------------------------------------------------------
// HTTP

// Starts `server --http 0` and reads its stderr until it names its URL.
bool start_http_server(RawChild& child, const Options& opt, std::string& url, int& port,
                       std::thread& drain, std::string& err) {
  if (!child.spawn({opt.server, "--http", "0", "--quiet"}, true, err)) return false;
  const std::string marker = "listening on ";
  std::string seen, buf;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    pollfd p{child.stderr_fd(), POLLIN, 0};
    int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (::poll(&p, 1, std::max(ms, 1)) <= 0) continue;
    char chunk[4096];
    ssize_t r = ::read(child.stderr_fd(), chunk, sizeof chunk);
    if (r <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(r));
    std::size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      seen += line + "\n";
      auto at = line.find(marker);
      if (at == std::string::npos) continue;
      url = line.substr(at + marker.size());
      while (!url.empty() && std::isspace(static_cast<unsigned char>(url.back()))) url.pop_back();
      // http://127.0.0.1:<port>/mcp
      auto colon = url.rfind(':');
      port = colon == std::string::npos ? 0 : std::atoi(url.c_str() + colon + 1);
      if (port <= 0) {
        err = "cannot read the port in \"" + line + "\"";
        return false;
      }
      // Keep reading stderr so the server never blocks on a full pipe.
      const int fd = child.stderr_fd();
      drain = std::thread([fd] {
        char c[4096];
        while (::read(fd, c, sizeof c) > 0) {
        }
      });
      return true;
    }
  }
  err = "`" + opt.server + " --http 0` did not print \"listening on http://...\" within 10 s" +
        (seen.empty() ? std::string() : "; its stderr:\n" + seen);
  return false;
}

// TCP sockets of the machine's network namespace by state, from /proc/net/tcp{,6}.
struct SocketCounts {
  std::size_t time_wait_all = 0;
  std::size_t time_wait_port = 0;    // local or remote port == the port asked about
  std::size_t established_port = 0;  // ditto
};

SocketCounts count_sockets(int port) {
  SocketCounts c;
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      // "  sl  local_address rem_address   st ...": addresses are HEXIP:HEXPORT
      std::istringstream fields(line);
      std::string sl, local, remote, state;
      if (!(fields >> sl >> local >> remote >> state)) continue;
      auto port_of = [](const std::string& a) {
        const auto colon = a.rfind(':');
        return colon == std::string::npos ? -1
                                          : static_cast<int>(std::strtol(a.c_str() + colon + 1,
                                                                         nullptr, 16));
      };
      const bool ours = port_of(local) == port || port_of(remote) == port;
      if (state == "06") {
        ++c.time_wait_all;
        if (ours) ++c.time_wait_port;
      } else if (state == "01" && ours) {
        ++c.established_port;
      }
    }
  }
  return c;
}

// A plain httplib::Client session: initialize and notifications/initialized by hand, then
// one tools/call echo POST per call().
struct HttplibSession {
  HttplibSession(int port, std::string path, bool keep_alive)
      : cli("127.0.0.1", port), path(std::move(path)), keep_alive(keep_alive) {
    cli.set_keep_alive(keep_alive);
    // Without TCP_NODELAY httplib's separate header and body writes can meet Nagle +
    // delayed ACK; the baseline is the best a plain client does.
    cli.set_tcp_nodelay(true);
  }
  ~HttplibSession() {
    if (opened) cli.Delete(path.c_str(), headers);
  }

  std::string who() const { return keep_alive ? "keep-alive baseline" : "new-connection baseline"; }

  bool open(std::string& err) {
    headers = {{"Accept", "application/json, text/event-stream"}};
    auto res = cli.Post(path.c_str(), headers, initialize_request(), "application/json");
    if (!res || res->status != 200) {
      err = who() + ": initialize failed (" +
            (res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error())) + ")";
      return false;
    }
    if (res->has_header("Mcp-Session-Id"))
      headers.emplace("Mcp-Session-Id", res->get_header_value("Mcp-Session-Id"));
    headers.emplace("MCP-Protocol-Version", kProtocolVersion);
    res = cli.Post(path.c_str(), headers, initialized_notification(), "application/json");
    if (!res || res->status / 100 != 2) {
      err = who() + ": notifications/initialized was refused";
      return false;
    }
    opened = true;
    return true;
  }

  bool call(std::string& err) {
    auto body = request_line(next_id++);
    body.pop_back();
    auto r = cli.Post(path.c_str(), headers, body, "application/json");
    if (!r || r->status != 200 || r->body.find("\"result\"") == std::string::npos) {
      err = "tools/call failed (" +
            (r ? "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200)
               : httplib::to_string(r.error())) +
            ")";
      return false;
    }
    return true;
  }

  httplib::Client cli;
  std::string path;
  bool keep_alive;
  bool opened = false;
  httplib::Headers headers;
  std::uint64_t next_id = 1;
};

// The same session by libcurl's easy interface: one handle reused for every POST (libcurl
// keeps the connection), curl_easy_perform on this thread. Set up as NativeHttpClient sets
// up its handles where that changes the wire (TCP_NODELAY is libcurl's default), so
// mcprt / this is what mcprt's layers add to libcurl itself.
struct CurlEasySession {
  explicit CurlEasySession(std::string url) : url(std::move(url)) {}
  ~CurlEasySession() {
    if (easy != nullptr && session_header != nullptr) {  // end the session, as the others do
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "DELETE");
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "");
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, 0L);
      curl_easy_perform(easy);
    }
    if (headers != nullptr) curl_slist_free_all(headers);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }

  bool open(std::string& err) {
    easy = curl_easy_init();
    if (easy == nullptr) {
      err = "libcurl easy loop: curl_easy_init failed";
      return false;
    }
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &CurlEasySession::on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &CurlEasySession::on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, this);
    set_headers(nullptr);
    if (!post(initialize_request(), err) || status != 200) {
      if (err.empty()) err = "libcurl easy loop: initialize failed (HTTP " + std::to_string(status) + ")";
      return false;
    }
    set_headers(session_header);
    if (!post(initialized_notification(), err) || status / 100 != 2) {
      if (err.empty()) err = "libcurl easy loop: notifications/initialized was refused";
      return false;
    }
    return true;
  }

  bool call(std::string& err) {
    auto line = request_line(next_id++);
    line.pop_back();
    if (!post(line, err)) return false;
    if (status != 200 || body.find("\"result\"") == std::string::npos) {
      err = "tools/call failed (HTTP " + std::to_string(status) + ": " + body.substr(0, 200) + ")";
      return false;
    }
    return true;
  }

 private:
  bool post(const std::string& data, std::string& err) {
    body.clear();
    status = 0;
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, data.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(data.size()));
    const CURLcode rc = curl_easy_perform(easy);
    if (rc != CURLE_OK) {
      err = std::string("libcurl easy loop: ") + curl_easy_strerror(rc);
      return false;
    }
    long code = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    status = static_cast<int>(code);
    return true;
  }

  // The request headers: the two of every POST, and the session's once it has one.
  void set_headers(const char* session) {
    if (headers != nullptr) curl_slist_free_all(headers);
    headers = curl_slist_append(nullptr, "Accept: application/json, text/event-stream");
    headers = curl_slist_append(headers, "Content-Type: application/json");
    if (session != nullptr) {
      headers = curl_slist_append(headers, session);
      headers = curl_slist_append(headers, (std::string("MCP-Protocol-Version: ") + kProtocolVersion).c_str());
    }
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* self) {
    static_cast<CurlEasySession*>(self)->body.append(data, size * n);
    return size * n;
  }
  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self) {
    auto* s = static_cast<CurlEasySession*>(self);
    std::string_view line(data, size * n);
    constexpr std::string_view kName = "mcp-session-id:";
    if (line.size() > kName.size() &&
        std::equal(kName.begin(), kName.end(), line.begin(),
                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
      while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
      s->session_line.assign(line);
      s->session_header = s->session_line.c_str();
    }
    return size * n;
  }

  std::string url;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string session_line;
  const char* session_header = nullptr;
  std::string body;
  int status = 0;
  std::uint64_t next_id = 1;
};

bool bench_http(const Options& opt, json& out, std::string& err) {
  RawChild server;
  std::thread drain;
  std::string url;
  int port = 0;
  struct Joiner {
    RawChild& s;
    std::thread& t;
    ~Joiner() {
      if (s.pid() > 0) ::kill(s.pid(), SIGTERM);
      if (t.joinable()) t.join();
    }
  } joiner{server, drain};
  if (!start_http_server(server, opt, url, port, drain, err)) return false;
  const std::string path = url.substr(url.find('/', url.find("//") + 2));

  std::printf("\nhttp: tools/call echo over Streamable HTTP (%s), one call at a time, %zu calls "
              "(+%zu warm-up), interleaved in blocks of %zu\n",
              url.c_str(), opt.calls, opt.warmup, kBlock);

  // Baselines: the same POSTs from a plain httplib::Client, keep-alive (the baseline) and
  // a new connection per call (what NativeHttpClient did before it moved to libcurl).
  HttplibSession keep(port, path, true), fresh(port, path, false);
  if (opt.http_keep && !keep.open(err)) return false;
  if (opt.http_fresh && !fresh.open(err)) return false;
  CurlEasySession curl(url);
  if (opt.http_curl && !curl.open(err)) return false;

  mcprt::native::NativeExecutor ex;
  mcprt::native::NativeHttpClient http(ex);
  SessionRun run;
  struct Closer {
    mcprt::native::NativeExecutor& ex;
    SessionRun& run;
    ~Closer() { close_session(ex, run); }
  } closer{ex, run};
  if (opt.http_mcprt || opt.time_wait_calls > 0) {
    mcprt::HttpTransportOptions to;
    to.url = url;
    to.server_name = "demo-http";
    to.mode = mcprt::HttpTransportMode::streamable;
    auto t = mcprt::make_http_transport(ex, http, to);
    if (!t.ok()) {
      err = t.error().describe();
      return false;
    }
    if (!connect_session(ex, std::move(t).value(), "demo-http", run, err)) return false;
  }

  Runner base{"httplib keep-alive", [&](std::string& e) { return keep.call(e); }, {}, 0};
  Runner fr{"httplib new connection", [&](std::string& e) { return fresh.call(e); }, {}, 0};
  Runner cu{"libcurl easy loop", [&](std::string& e) { return curl.call(e); }, {}, 0};
  Runner mc{"mcprt", [&](std::string& e) { return call_once(ex, *run.session, e); }, {}, 0};
  std::vector<Runner*> runners;
  if (opt.http_keep) runners.push_back(&base);
  if (opt.http_fresh) runners.push_back(&fr);
  if (opt.http_curl) runners.push_back(&cu);
  if (opt.http_mcprt) runners.push_back(&mc);
  if (!measure_interleaved(runners, opt, err)) return false;
  if (opt.http_mcprt && opt.trace_allocations && !trace_one_call(ex, *run.session, err)) {
    return false;
  }
  const Stats base_stats = summarize(base.samples), fresh_stats = summarize(fr.samples),
              mcprt_stats = summarize(mc.samples), curl_stats = summarize(cu.samples);

  print_header();
  if (opt.http_keep) print_row("baseline: httplib::Client keep-alive POST loop", base_stats);
  if (opt.http_fresh) print_row("httplib::Client, new connection per POST", fresh_stats);
  if (opt.http_curl) print_row("libcurl easy loop, keep-alive, one thread", curl_stats);
  if (opt.http_mcprt) print_row("mcprt ClientSession + NativeHttpClient", mcprt_stats);
  if (opt.http_mcprt && opt.http_keep) {
    print_ratio("ratio mcprt / httplib keep-alive loop", mcprt_stats, base_stats);
  }
  if (opt.http_mcprt && opt.http_fresh) {
    print_ratio("ratio mcprt / httplib new connection per POST", mcprt_stats, fresh_stats);
  }
  if (opt.http_curl && opt.http_keep) {
    print_ratio("ratio libcurl easy loop / httplib keep-alive loop", curl_stats, base_stats);
  }
  if (opt.http_mcprt && opt.http_curl) {
    print_ratio("ratio mcprt / libcurl easy loop", mcprt_stats, curl_stats);
  }
  std::printf("  client CPU (user+sys) per call: mcprt %.1f µs, httplib keep-alive %.1f µs, "
              "httplib new connection %.1f µs, libcurl easy loop %.1f µs\n",
              mc.cpu_per_call(), base.cpu_per_call(), fr.cpu_per_call(), cu.cpu_per_call());
  if (bench::allocations_counted()) {
    std::printf("  heap allocations per call (client thread): mcprt %.1f, httplib keep-alive %.1f, "
                "libcurl easy loop %.1f\n",
                mc.allocations_per_call(), base.allocations_per_call(), cu.allocations_per_call());
  }
  if (opt.http_keep && base_stats.p50 > 10000) {
    // A keep-alive round trip of tens of ms on loopback is a TCP stall, not work.
    std::printf("  note: keep-alive p50 over 10 ms = Nagle/delayed-ACK stalls on the reused\n"
                "        connection (a server writing a response in several small writes\n"
                "        without TCP_NODELAY); that ratio then measures the stall, not mcprt\n");
  }

  out = {{"url", url},
         {"baseline_httplib", to_json(base_stats)},
         {"httplib_new_connection", to_json(fresh_stats)},
         {"mcprt", to_json(mcprt_stats)},
         {"libcurl_easy_loop", to_json(curl_stats)},
         {"ratio_mcprt_baseline", ratio_json(mcprt_stats, base_stats)},
         {"ratio_libcurl_easy_baseline", ratio_json(curl_stats, base_stats)},
         {"ratio_mcprt_libcurl_easy", ratio_json(mcprt_stats, curl_stats)},
         {"ratio_mcprt_new_connection", ratio_json(mcprt_stats, fresh_stats)},
         {"cpu_per_call_us",
          {{"mcprt", mc.cpu_per_call()},
           {"libcurl_easy_loop", cu.cpu_per_call()},
           {"baseline_httplib", base.cpu_per_call()},
           {"httplib_new_connection", fr.cpu_per_call()}}},
         {"allocations_per_call",
          {{"mcprt", mc.allocations_per_call()},
           {"libcurl_easy_loop", cu.allocations_per_call()},
           {"baseline_httplib", base.allocations_per_call()}}}};

  if (opt.time_wait_calls > 0) {
    // Connection reuse over many calls: sockets in TIME-WAIT (the state a closed TCP
    // connection leaves behind on the side that closed first) before and after, counted
    // machine-wide (what `ss -tan state time-wait | wc -l` counts, without its header) and
    // on the demo server's port only (the other agents on this machine make their own).
    const SocketCounts before = count_sockets(port);
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < opt.time_wait_calls; ++i) {
      if (!call_once(ex, *run.session, err)) {
        err = "time-wait run, call " + std::to_string(i + 1) + ": " + err;
        return false;
      }
    }
    const double secs = elapsed_us(t0, Clock::now()) / 1e6;
    const SocketCounts after = count_sockets(port);
    std::printf("\nhttp: %zu sequential mcprt calls in %.1f s (%.0f calls/s)\n",
                opt.time_wait_calls, secs, static_cast<double>(opt.time_wait_calls) / secs);
    std::printf("  TIME-WAIT sockets, whole machine: %zu before, %zu after\n",
                before.time_wait_all, after.time_wait_all);
    std::printf("  TIME-WAIT sockets on port %d:     %zu before, %zu after\n", port,
                before.time_wait_port, after.time_wait_port);
    std::printf("  established connections on port %d (both ends, the GET stream's included): "
                "%zu before, %zu after\n",
                port, before.established_port, after.established_port);
    out["time_wait"] = {{"calls", opt.time_wait_calls},
                        {"seconds", secs},
                        {"time_wait_all", {before.time_wait_all, after.time_wait_all}},
                        {"time_wait_port", {before.time_wait_port, after.time_wait_port}},
                        {"established_port", {before.established_port, after.established_port}}};
  }
  return true;
}

std::size_t parse_count(const char* s, const char* flag) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') usage(std::string("bad number for ") + flag);
  return static_cast<std::size_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--echo-child") return run_echo_child(argv[2]);

  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--calls") {
      opt.calls = parse_count(value(), "--calls");
    } else if (a == "--warmup") {
      opt.warmup = parse_count(value(), "--warmup");
    } else if (a == "--pipelined") {
      opt.pipelined = parse_count(value(), "--pipelined");
    } else if (a == "--window") {
      opt.window = parse_count(value(), "--window");
    } else if (a == "--only") {
      std::string w = value();
      if (w != "stdio" && w != "http") usage("--only takes stdio or http");
      opt.stdio = w == "stdio";
      opt.http = w == "http";
    } else if (a == "--http-clients") {
      const std::string w = "," + std::string(value()) + ",";
      opt.http_keep = w.find(",keep,") != std::string::npos;
      opt.http_fresh = w.find(",fresh,") != std::string::npos;
      opt.http_mcprt = w.find(",mcprt,") != std::string::npos;
      opt.http_curl = w.find(",curl,") != std::string::npos;
      if (!opt.http_keep && !opt.http_fresh && !opt.http_mcprt && !opt.http_curl) {
        usage("--http-clients takes a comma-separated list of keep, fresh, curl, mcprt");
      }
    } else if (a == "--time-wait") {
      opt.time_wait_calls = parse_count(value(), "--time-wait");
    } else if (a == "--json") {
      opt.json_file = value();
    } else if (a == "--server") {
      opt.server = value();
    } else if (a == "--trace-allocations") {
      opt.trace_allocations = true;
    } else if (a == "--bare-server") {
      opt.server_args.clear();
    } else if (a == "--cpu") {
      opt.cpu = static_cast<int>(parse_count(value(), "--cpu"));
    } else if (a == "--help" || a == "-h") {
      usage("tools/call round trips, mcprt vs baselines (SPEC §12)");
    } else {
      usage("unknown argument " + a);
    }
  }
  if (opt.calls == 0) usage("--calls must be at least 1");
  if (opt.cpu >= 0) {
    // Before any server starts: children inherit the mask.
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(opt.cpu, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
      usage("--cpu: no such CPU " + std::to_string(opt.cpu));
    }
  }
  // The baselines write to pipes and sockets with plain write(2).
  ::signal(SIGPIPE, SIG_IGN);
  const bench::SyscallCounter syscalls;
  if (syscalls.ok()) {
    g_syscalls = &syscalls;
  } else {
    std::printf("  (syscalls per call not counted: %s)\n", syscalls.why_not().c_str());
  }
  if (!bench::allocations_counted()) {
    std::printf("  (heap allocations not counted: sanitizer build)\n");
  }
  // NativeHttpClient would take a proxy from the environment (loopback too, as curl does);
  // the baselines never do. Everything here talks to 127.0.0.1 directly.
  for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                           "ALL_PROXY", "no_proxy", "NO_PROXY"}) {
    ::unsetenv(name);
  }

  double load[3] = {0, 0, 0};
  ::getloadavg(load, 3);
  const long nproc = ::sysconf(_SC_NPROCESSORS_ONLN);
  std::printf("mcprt_bench_roundtrip  calls=%zu warmup=%zu pipelined=%zu  nproc=%ld  "
              "load=%.2f %.2f %.2f%s\n  server: %s\n",
              opt.calls, opt.warmup, opt.pipelined, nproc, load[0], load[1], load[2],
              opt.cpu >= 0 ? ("  cpu=" + std::to_string(opt.cpu)).c_str() : "",
              opt.server.c_str());

  json report = {{"bench", "roundtrip"},
                 {"calls", opt.calls},
                 {"warmup", opt.warmup},
                 {"pipelined", opt.pipelined},
                 {"nproc", nproc},
                 {"loadavg", {load[0], load[1], load[2]}},
                 {"cpu", opt.cpu},
                 {"unix_time", static_cast<long long>(std::time(nullptr))}};
  int rc = 0;
  if (opt.stdio) {
    json r;
    std::string err;
    if (bench_stdio(opt, r, err)) {
      report["stdio"] = r;
    } else {
      std::fprintf(stderr, "stdio benchmark failed: %s\n", err.c_str());
      report["stdio"] = {{"error", err}};
      rc = 1;
    }
  }
  if (opt.http) {
    json r;
    std::string err;
    if (bench_http(opt, r, err)) {
      report["http"] = r;
    } else {
      std::fprintf(stderr, "http benchmark failed: %s\n", err.c_str());
      report["http"] = {{"error", err}};
      rc = 1;
    }
  }
  std::fflush(stdout);
  const std::string line = report.dump();
  std::printf("\nJSON %s\n", line.c_str());
  if (!opt.json_file.empty()) {
    std::ofstream f(opt.json_file);
    f << line << "\n";
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", opt.json_file.c_str());
      rc = 1;
    }
  }
  return rc;
}
