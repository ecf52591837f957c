#pragma once
// NativeShellRunner: the ShellRunner seam (SPEC §2.4 `!command` values) on `/bin/sh -c`.
//
// Implements:
//  [x] runs `/bin/sh -c <command>` through NativeProcessLauncher: its own process group,
//      the host's environment and current directory, stdin from /dev/null (a command
//      that reads stdin sees EOF instead of hanging until the timeout)
//  [x] exit code 0 → the complete stdout (untrimmed; the caller trims)
//  [x] non-zero exit → Error{exited} with the code and the first line of stderr
//  [x] timeout → the whole process group is SIGKILLed and reaped, Error{timeout}
//  [x] spawn failure → Error{transport}
//  [x] completions posted on the executor's loop, never inside run()
//  [x] destroying the runner kills every command still running; their callbacks never run
//  [ ] no cancellation of a single command (the seam has none; the resolver drops results
//      it no longer wants)
//
// Threading: run() and the callbacks belong to the executor's loop thread.

#include <functional>
#include <memory>
#include <string>

#include "mcprt/native/executor.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/platform/shell_runner.hpp"

namespace mcprt::native {

class NativeShellRunner final : public ShellRunner {
 public:
  // `logger` may be null. Both must outlive the runner.
  explicit NativeShellRunner(NativeExecutor& executor, Logger* logger = nullptr);
  ~NativeShellRunner() override;
  NativeShellRunner(const NativeShellRunner&) = delete;
  NativeShellRunner& operator=(const NativeShellRunner&) = delete;

  void run(const std::string& command, Millis timeout,
           std::function<void(Result<std::string>)> done) override;

  // Commands started and not finished yet (for tests).
  std::size_t running() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcprt::native
