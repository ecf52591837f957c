#pragma once
// The ShellRunner seam (SPEC §2.4): runs the `!command` of a connect-time env/header value.
// Native: `/bin/sh -c` with a timeout. Web: none (a `!` value there is dropped with a
// warning). Tests: a fake.

#include <functional>
#include <string>

#include "mcprt/platform/executor.hpp"
#include "mcprt/result.hpp"

namespace mcprt {

class ShellRunner {
 public:
  virtual ~ShellRunner() = default;

  // Runs `command` through the shell. `done` (async contract, on the runner's executor)
  // gets the complete stdout on exit code 0, else an Error: non-zero exit (with the code
  // and the first line of stderr), timeout (the process group is killed), spawn failure.
  virtual void run(const std::string& command, Millis timeout,
                   std::function<void(Result<std::string>)> done) = 0;
};

}  // namespace mcprt
