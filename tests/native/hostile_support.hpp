#pragma once
// Tools for the hostile-server regression suite (tests/native/hostile_*_test.cpp): run the
// real CLI against a misbehaving server and measure what it cost, and a loopback TCP server
// that answers with raw bytes (for what an HTTP library would refuse to produce: header
// floods, broken framing, crafted redirects).
//
//   RawHttpServer evil([](RawHttpServer::Connection& c) {
//     c.write("HTTP/1.1 200 OK\r\n");
//     for (int i = 0; i < 2'000'000 && c.write("X-Flood: 1\r\n"); ++i) {}
//   });
//   MeasuredRun r = run_measured({MCPRT_CLI, "tools", "--config", cfg}, {.timeout = Millis(20000)});
//   EXPECT_EQ(r.exit_code, 1);  EXPECT_LT(r.peak_rss_kib, kHostileRssLimitKib);  EXPECT_TRUE(r.leftovers.empty());

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcprt/platform/executor.hpp"

namespace mcprt::native::test {

// The memory bound of a hostile run of the CLI: 64 MiB, where a well-behaved run peaks near
// 17 MiB and the bugs it guards against took 235–480 MB. Sanitizer builds carry shadow
// memory and ASan keeps freed blocks in a quarantine of up to 256 MiB, so their peak is
// several times a plain build's (ASan: 150–237 MiB for the same runs); the bound grows
// with them and still sits below the unbounded cases.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr long kHostileRssLimitKib = 448 * 1024;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr long kHostileRssLimitKib = 448 * 1024;
#else
inline constexpr long kHostileRssLimitKib = 64 * 1024;
#endif
#else
inline constexpr long kHostileRssLimitKib = 64 * 1024;
#endif

struct RunOptions {
  std::string cwd;                               // empty = the test's cwd
  std::map<std::string, std::string> env;        // set on top of the test's environment
  std::vector<std::string> unset_env;            // removed from it
  std::string stdin_text;                        // written to the child's stdin, then EOF
  Millis timeout{20000};                         // SIGKILL of the child's process group after it
};

struct MeasuredRun {
  int exit_code = -1;       // -1 when it did not exit normally
  int term_signal = 0;      // the signal that ended it, or 0
  bool timed_out = false;   // killed by run_measured after RunOptions::timeout
  std::string out;          // stdout
  std::string err;          // stderr
  long peak_rss_kib = 0;    // the child's peak resident set (wait4's ru_maxrss)
  double wall_ms = 0;       // spawn to exit
  // Processes the child started that were still running once it exited (found through
  // PR_SET_CHILD_SUBREAPER: orphans re-parent to the test process). They are killed and
  // reaped before run_measured returns; the list says what they were ("pid comm").
  std::vector<std::string> leftovers;
};

// Runs argv[0] (a path; no PATH lookup) with argv, captures stdout/stderr, and measures it.
// The child runs in its own process group. Never throws; a spawn failure is exit_code -1
// with `err` saying why.
MeasuredRun run_measured(const std::vector<std::string>& argv, const RunOptions& options = {});

// A TCP server on 127.0.0.1 (ephemeral port). Every accepted connection runs the handler
// on its own thread; the handler gets the request head already read (request line and
// header fields, up to the blank line) and may read the body and write anything. Every
// request head read is recorded. Destruction closes the listener and every connection
// (blocked writes fail, reads return 0) and joins the threads.
class RawHttpServer {
 public:
  struct Request {
    std::string method;
    std::string target;
    std::vector<std::pair<std::string, std::string>> headers;  // as received
    std::string body;  // Content-Length bytes, when the handler called read_body()
    // The first field named `name` (ASCII case-insensitive), or "".
    std::string header(const std::string& name) const;
    bool has_header(const std::string& name) const;
  };

  class Connection {
   public:
    const Request& request() const { return request_; }
    // Reads the request body (Content-Length) into request().body; false on EOF/error.
    bool read_body();
    // Writes all bytes; false once the peer is gone or the server is shutting down.
    bool write(std::string_view bytes);
    // Reads the next request head on this (keep-alive) connection; false on EOF.
    bool next_request();
    // True once the server is being destroyed (handlers that loop should stop).
    bool stopping() const;

   private:
    friend class RawHttpServer;
    int fd_ = -1;
    std::string buffer_;  // bytes read past the current head
    Request request_;
    RawHttpServer* server_ = nullptr;
  };

  using Handler = std::function<void(Connection&)>;

  explicit RawHttpServer(Handler handler);
  ~RawHttpServer();
  RawHttpServer(const RawHttpServer&) = delete;
  RawHttpServer& operator=(const RawHttpServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path = "/") const;  // http://127.0.0.1:<port><path>
  std::vector<Request> requests() const;  // every head read so far, in order
  std::size_t request_count() const;
  std::size_t connection_count() const;   // connections accepted so far

 private:
  void accept_loop();
  void serve(int fd);
  void record(const Request& r);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> connections_{0};
  mutable std::mutex mutex_;
  std::vector<Request> requests_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace mcprt::native::test
