#pragma once
// A program on a pseudo-terminal (stdin, stdout and stderr), driven as a user at a terminal
// would: type bytes (keys: "\t" Tab, "\x1b[A" Up, "\r" Enter, "\x04" Ctrl-D), wait until
// some text has appeared, then let it end. The CLI tests that need a terminal (elicitation
// forms, the REPL's line editor) share it.
//
//   TerminalSession t({MCPRT_CLI, "repl"}, {.cwd = dir, .env = {{"TERM", "xterm"}}});
//   ASSERT_TRUE(t.wait_for_text("mcprt> "));
//   t.type("mcp_demo_ec\t");
//   t.wait_for_text("echo ");
//   t.type("\x04");
//   int code = t.finish();
//
// The environment and argv are built before fork(), so the child of the (threaded) test
// process calls only async-signal-safe functions (chdir, execve) before the exec. Every
// wait is bounded; the child is always reaped (SIGKILL to its process group when it
// outlives finish()'s bound or the session).

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mcprt::native::test {

class TerminalSession {
 public:
  struct Options {
    std::string cwd{};                         // empty = the test's cwd
    std::map<std::string, std::string> env{};  // set on top of the test's environment
    std::vector<std::string> unset_env{};      // removed from it
    unsigned short columns = 0;                // 0 = the pty's default
    unsigned short rows = 24;
  };

  // Starts argv[0] (a path; no PATH lookup). started() says whether that worked.
  TerminalSession(const std::vector<std::string>& argv, const Options& options);
  ~TerminalSession();
  TerminalSession(const TerminalSession&) = delete;
  TerminalSession& operator=(const TerminalSession&) = delete;

  bool started() const { return pid_ > 0; }
  // Writes `bytes` to the terminal as typed keys.
  void type(const std::string& bytes);
  // Reads what the program prints until `done(raw())` holds, the program closes the
  // terminal, or `limit` passes. Returns done(raw()).
  bool wait_for(const std::function<bool(const std::string& raw)>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(30));
  // wait_for: `text` appears in plain() at least `count` times.
  bool wait_for_text(const std::string& text, std::size_t count = 1,
                     std::chrono::milliseconds limit = std::chrono::seconds(30));
  // Reads until the program closes the terminal, then reaps it: its exit code, or -1 when
  // it had to be killed after `limit` (or died of a signal).
  int finish(std::chrono::milliseconds limit = std::chrono::seconds(60));

  // Every byte the terminal received.
  const std::string& raw() const { return raw_; }
  // raw() without carriage returns and CSI sequences (ESC '[' … final byte): what a user
  // reads, roughly.
  std::string plain() const;
  // How often `text` occurs in `in`.
  static std::size_t count(const std::string& in, const std::string& text);

 private:
  // One read with a short poll; false once the terminal is closed.
  bool pump(int timeout_ms);

  pid_t pid_ = -1;
  int master_ = -1;
  bool closed_ = false;
  std::string raw_;
};

}  // namespace mcprt::native::test
