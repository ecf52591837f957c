#pragma once
// NativeProcessLauncher: the native ProcessLauncher (byte_stream.hpp), posix_spawn for
// the spawn (its cost does not grow with the host's size) and asio pipes on the
// NativeExecutor's loop for the I/O.
//
// Implements (SPEC §3.2):
//  [x] argv [command, ...args]; PATH lookup in the child's PATH (spec.env may override
//      it), a clear error when not found: `command "xyz" not found in PATH`
//  [x] cwd (checked before spawning; a chdir that still fails is a launch error naming the
//      command and the directory), env = parent env overlaid with spec.env, or the
//      minimal set HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG, TMPDIR
//  [x] own process group (the child is the group leader), so the whole tree is signalled
//  [x] pipes created close-on-exec, so one server never inherits another's stdin/stdout
//      (a leaked stdin write end would stop "close stdin" from ever reaching EOF)
//  [x] the child starts with default SIGPIPE and an empty signal mask, whatever the host
//      did (this launcher ignores SIGPIPE in the host, see below)
//  [x] stdout read asynchronously, handed to on_data in order on the loop; after a read
//      shorter than the buffer (the pipe is drained) the next read waits for epoll's next
//      edge instead of trying read(2) at once (no read that only returns EAGAIN)
//  [x] writes go out at once from write() when nothing is queued (one write(2), no async
//      operation); what the pipe does not take is queued and written asynchronously
//      (partial writes handled; a full pipe never blocks the loop or other servers)
//  [x] stderr drained continuously into a ring buffer (last 64 KiB, diagnostics_tail) and
//      forwarded to the logger at debug level, line by line, lines capped
//  [x] exit detection by pidfd (Linux ≥ 5.3; a 25 ms waitid poll otherwise): child exit
//      ends the stream at once with {exited, exit_code, stderr_tail}, after the stdout
//      bytes already written were delivered; stdout EOF waits `eof_exit_wait` for the exit
//      code, then ends the stream anyway and terminates the process
//  [x] after the leader exits, stragglers left in its group are SIGKILLed, then the child
//      is reaped (signals are only sent before the reap, so a recycled pid is never hit)
//  [x] close(): close stdin → wait stdin_close_grace → SIGTERM the group → wait
//      sigterm_grace → SIGKILL the group; idempotent; on_closed once with
//      ErrorCode::closed (exit_code set), as soon as the child exited (a child that exits
//      on stdin EOF ends the stream then, not after a grace). A child that has not written
//      a byte to stdout yet (still starting, e.g. node loading its modules, or hung) gets
//      silent_stdin_close_grace instead: it has no answer to finish, and waiting for it to
//      boot only to read EOF held every one-shot run up by the whole stdin grace. Waits
//      are timers on the loop, never sleeps.
//  [x] destructor: SIGKILL the group and reap the child (waitpid after SIGKILL, which
//      returns at once for anything but a process stuck in the kernel); no callbacks
//  [ ] no pty, no Windows
//
// Host-wide side effect: constructing a NativeProcessLauncher sets SIGPIPE to SIG_IGN in
// this process (once), because asio writes to pipes with write(2): a server that dies
// with unread input would otherwise kill the host. Children get SIG_DFL back.
//
// Threading: launch(), the streams and all their callbacks belong to the executor's loop
// thread. Destroy the streams before the executor.

#include <cstddef>
#include <memory>

#include "mcprt/native/executor.hpp"
#include "mcprt/platform/byte_stream.hpp"
#include "mcprt/platform/logger.hpp"

namespace mcprt::native {

struct NativeProcessOptions {
  // close(): after closing stdin, how long the child gets to exit on its own.
  Millis stdin_close_grace{1000};
  // close() of a child that never wrote to stdout: how long before the SIGTERM.
  Millis silent_stdin_close_grace{0};
  // close(): after SIGTERM to the group, how long before SIGKILL.
  Millis sigterm_grace{1000};
  // After stdout EOF, how long to wait for the exit code before ending the stream anyway.
  Millis eof_exit_wait{200};
  // Last stderr bytes kept per process (diagnostics_tail, StreamClosed::stderr_tail).
  std::size_t stderr_tail_bytes = 64 * 1024;
  // stderr lines longer than this are cut (with a marker) before they are logged.
  std::size_t stderr_log_line_bytes = 2048;
  // Size of one stdout read.
  std::size_t read_chunk_bytes = 32 * 1024;
};

class NativeProcessLauncher final : public ProcessLauncher {
 public:
  // `logger` may be null (stderr then only feeds the tail). Both references must outlive
  // the launcher and every stream it made.
  explicit NativeProcessLauncher(NativeExecutor& executor, Logger* logger = nullptr,
                                 NativeProcessOptions options = {});
  ~NativeProcessLauncher() override;

  Result<std::unique_ptr<ByteStream>> launch(const ProcessSpec& spec) override;

  const NativeProcessOptions& options() const { return options_; }

 private:
  NativeExecutor& executor_;
  Logger* logger_;
  NativeProcessOptions options_;
};

// The environment a child would get for `spec` ("KEY=VALUE" entries), and the PATH lookup
// the launcher does. Exposed for tests and for hosts that show what will run.
std::vector<std::string> child_environment(const ProcessSpec& spec);
// Resolves `command` like execvp would with `path_var` (a PATH value) and `cwd` (for
// relative commands containing '/'). Error: `command "x" not found in PATH`.
Result<std::string> resolve_command(const std::string& command, const std::string& path_var,
                                    const std::string& cwd);

}  // namespace mcprt::native
