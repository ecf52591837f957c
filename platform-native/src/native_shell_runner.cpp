// NativeShellRunner: `/bin/sh -c` through NativeProcessLauncher (which already gives a
// process group, pipes on the loop, exit detection and kill-on-destroy). What it
// implements is listed in mcprt/native/shell_runner.hpp.

#include "mcprt/native/shell_runner.hpp"

#include <cstdint>
#include <map>
#include <utility>

#include "mcprt/native/process_launcher.hpp"

namespace mcprt::native {

namespace {

// A `!command` value is a token or a password, not a file: more than this is a mistake
// (and must not grow the host's memory without bound).
constexpr std::size_t kMaxOutputBytes = 1024 * 1024;

std::string first_line(const std::string& text) {
  std::size_t b = text.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  std::string line = text.substr(b, text.find('\n', b) - b);
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

}  // namespace

struct NativeShellRunner::Impl : std::enable_shared_from_this<NativeShellRunner::Impl> {
  struct Job {
    std::unique_ptr<ByteStream> stream;
    std::string out;
    bool too_large = false;
    std::function<void(Result<std::string>)> done;
    TimerId timer = kNoTimer;
  };

  Impl(NativeExecutor& ex, Logger* logger) : executor(ex), launcher(ex, logger) {}

  NativeExecutor& executor;
  NativeProcessLauncher launcher;
  std::map<std::uint64_t, Job> jobs;  // declared after the launcher: streams die first
  std::uint64_t next_id = 1;
  bool destroyed = false;

  void run(const std::string& command, Millis timeout, std::function<void(Result<std::string>)> done) {
    ProcessSpec spec;
    spec.command = "/bin/sh";
    // stdin from /dev/null: a command that reads stdin gets EOF instead of waiting for
    // the timeout. The extra first line only costs one line number in sh's messages.
    spec.args = {"-c", "exec </dev/null\n" + command};
    spec.label = "shell command";
    Result<std::unique_ptr<ByteStream>> stream = launcher.launch(spec);
    if (!stream.ok()) {
      Error e = Error::make(ErrorCode::transport, "cannot start /bin/sh: " + stream.error().message);
      executor.post([done = std::move(done), e = std::move(e)]() mutable { done(std::move(e)); });
      return;
    }
    const std::uint64_t id = next_id++;
    Job& job = jobs[id];
    job.stream = std::move(stream).value();
    job.done = std::move(done);
    std::weak_ptr<Impl> weak = shared_from_this();
    job.timer = executor.post_after(timeout, [weak, id, timeout] {
      auto self = weak.lock();
      if (!self) return;
      auto it = self->jobs.find(id);
      if (it == self->jobs.end()) return;
      it->second.timer = kNoTimer;
      // Destroying the stream SIGKILLs the process group and reaps the child.
      self->finish(id, Error::make(ErrorCode::timeout, "the command timed out after " +
                                                           std::to_string(timeout.count()) + " ms"));
    });
    ByteStreamHandlers handlers;
    handlers.on_data = [weak, id](std::string_view data) {
      auto self = weak.lock();
      if (!self) return;
      auto it = self->jobs.find(id);
      if (it == self->jobs.end()) return;
      Job& j = it->second;
      if (j.out.size() + data.size() > kMaxOutputBytes) {
        j.too_large = true;
        return;
      }
      j.out.append(data);
    };
    handlers.on_closed = [weak, id](const StreamClosed& closed) {
      auto self = weak.lock();
      if (!self) return;
      auto it = self->jobs.find(id);
      if (it == self->jobs.end()) return;
      Result<std::string> result = self->outcome(it->second, closed);
      // Not from inside the stream's own callback: the stream is destroyed in finish().
      self->executor.post([weak, id, result = std::move(result)]() mutable {
        if (auto s = weak.lock()) s->finish(id, std::move(result));
      });
    };
    job.stream->start(std::move(handlers));
  }

  Result<std::string> outcome(Job& job, const StreamClosed& closed) {
    if (closed.exit_code && *closed.exit_code == 0) {
      if (job.too_large) {
        return Error::make(ErrorCode::protocol, "the command printed more than " +
                                                    std::to_string(kMaxOutputBytes) + " bytes");
      }
      return std::move(job.out);
    }
    std::string message;
    if (closed.exit_code && *closed.exit_code > 0) {
      message = "the command exited with code " + std::to_string(*closed.exit_code);
    } else if (closed.exit_code) {
      message = "the command was killed by signal " + std::to_string(-*closed.exit_code);
    } else {
      message = "the command ended: " + closed.error.message;
    }
    if (std::string line = first_line(closed.stderr_tail); !line.empty()) message += ": " + line;
    json data = json::object();
    if (closed.exit_code) data["exit_code"] = *closed.exit_code;
    return Error::make(ErrorCode::exited, std::move(message), std::move(data));
  }

  void finish(std::uint64_t id, Result<std::string> result) {
    auto node = jobs.extract(id);
    if (node.empty()) return;
    Job job = std::move(node.mapped());
    if (job.timer != kNoTimer) executor.cancel_timer(job.timer);
    job.stream.reset();
    if (!destroyed && job.done) job.done(std::move(result));
  }
};

NativeShellRunner::NativeShellRunner(NativeExecutor& executor, Logger* logger)
    : impl_(std::make_shared<Impl>(executor, logger)) {}

NativeShellRunner::~NativeShellRunner() {
  impl_->destroyed = true;
  for (auto& [id, job] : impl_->jobs) {
    if (job.timer != kNoTimer) impl_->executor.cancel_timer(job.timer);
  }
  impl_->jobs.clear();  // kills and reaps every command still running
}

void NativeShellRunner::run(const std::string& command, Millis timeout,
                            std::function<void(Result<std::string>)> done) {
  impl_->run(command, timeout, std::move(done));
}

std::size_t NativeShellRunner::running() const { return impl_->jobs.size(); }

}  // namespace mcprt::native
