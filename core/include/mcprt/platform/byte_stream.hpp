#pragma once
// The ByteStream / ProcessLauncher seam: a platform moves bytes to and from a child
// process; the core does the framing (framing/newline_framer) and the protocol.
// Native: Boost.Process (platform-native/src/native_process_launcher.cpp).
// Web: not available. Tests: an in-memory pair (tests/support).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/platform/executor.hpp"
#include "mcprt/result.hpp"

namespace mcprt {

// Why a byte stream ended. `exit_code` is set when a child process exited (negative =
// killed by signal -N); `stderr_tail` holds what the child last wrote to stderr.
struct StreamClosed {
  Error error;  // ErrorCode::closed (local close), exited, or transport
  std::optional<int> exit_code;
  std::string stderr_tail;
};

struct ByteStreamHandlers {
  // Bytes from the peer (stdout for a child), in order. Any chunking.
  std::function<void(std::string_view)> on_data;
  // Fires once, when the stream is finished for any reason (peer EOF/exit, I/O error,
  // or after close() completed). No on_data after it.
  std::function<void(const StreamClosed&)> on_closed;
};

// All calls and all handler invocations happen on the executor the stream was created
// with. Handlers never run inside start()/write()/close().
class ByteStream {
 public:
  virtual ~ByteStream() = default;  // destruction closes (forcefully) and never blocks long

  // Starts delivering data. Call once.
  virtual void start(ByteStreamHandlers handlers) = 0;

  // Queues bytes for the peer. Never blocks: bytes are buffered and written as the peer
  // drains them. Fails when the stream is closed.
  virtual Status write(std::string bytes) = 0;

  // The same, from bytes the caller keeps: a stream that can write them at once (the usual
  // case for a drained pipe) copies nothing; the default copies them into write().
  virtual Status write_copy(std::string_view bytes) { return write(std::string(bytes)); }

  // Graceful close (for a child: close stdin, wait, SIGTERM the group, wait, SIGKILL).
  // Idempotent. on_closed fires when the close finished.
  virtual void close() = 0;

  // The last bytes the peer wrote to its diagnostic channel (stderr), if any.
  virtual std::string diagnostics_tail() const { return {}; }
};

struct ProcessSpec {
  std::string command;
  std::vector<std::string> args;
  // Overlaid on the inherited environment (or on the minimal set, see inherit_env).
  std::map<std::string, std::string> env;
  std::string cwd;  // empty = the host's current directory
  enum class InheritEnv { full, minimal } inherit_env = InheritEnv::full;
  // Label used in logs and errors (the server name).
  std::string label;
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Spawns the process. A spawn failure (command not found, bad cwd) is returned here.
  virtual Result<std::unique_ptr<ByteStream>> launch(const ProcessSpec& spec) = 0;
};

}  // namespace mcprt
