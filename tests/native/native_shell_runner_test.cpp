// NativeShellRunner against real `/bin/sh` commands.

#include <gtest/gtest.h>
#include <unistd.h>

#include <optional>
#include <string>

#include "mcprt/native/executor.hpp"
#include "mcprt/native/shell_runner.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace native_shell_runner_test {  // this file's own names in a unity batch
namespace {

using test::poll_until;
using test::pump_until;

struct ShellRunnerTest : ::testing::Test {
  NativeExecutor ex;
  std::optional<NativeShellRunner> runner{std::in_place, ex};

  std::optional<Result<std::string>> run(const std::string& command, Millis timeout = Millis(10000)) {
    std::optional<Result<std::string>> out;
    runner->run(command, timeout, [&](Result<std::string> r) { out.emplace(std::move(r)); });
    EXPECT_FALSE(out) << "never inside run()";
    EXPECT_TRUE(pump_until(ex, [&] { return out.has_value(); }));
    return out;
  }
};

TEST_F(ShellRunnerTest, ReturnsTheCompleteStdoutOnSuccess) {
  auto r = run("printf 'tok'; printf 'en\\n'; echo noise >&2");
  ASSERT_TRUE(r && r->ok()) << (r ? r->error().describe() : "no result");
  EXPECT_EQ(**r, "token\n");
  EXPECT_EQ(runner->running(), 0u);
}

TEST_F(ShellRunnerTest, RunsThroughTheShell) {
  auto r = run("A=4; echo $((A * 2)) | tr 8 9");
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(**r, "9\n");
}

TEST_F(ShellRunnerTest, NonZeroExitIsAnErrorWithCodeAndFirstStderrLine) {
  auto r = run("echo partial; echo 'not logged in' >&2; echo second >&2; exit 3");
  ASSERT_TRUE(r);
  ASSERT_FALSE(r->ok());
  EXPECT_EQ(r->error().code, ErrorCode::exited);
  EXPECT_NE(r->error().message.find("code 3"), std::string::npos) << r->error().message;
  EXPECT_NE(r->error().message.find("not logged in"), std::string::npos);
  EXPECT_EQ(r->error().message.find("second"), std::string::npos);
}

TEST_F(ShellRunnerTest, StdinIsEmptySoReadersDoNotHang) {
  auto r = run("cat; echo done", Millis(10000));
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(**r, "done\n");
}

TEST_F(ShellRunnerTest, TimeoutKillsTheWholeProcessGroup) {
  // The shell starts a background sleeper and reports its pid, then blocks.
  const std::string pidfile = "/tmp/mcprt_shell_runner_" + std::to_string(::getpid());
  auto r = run("sleep 30 & echo $! > " + pidfile + "; wait", Millis(2000));
  ASSERT_TRUE(r);
  ASSERT_FALSE(r->ok());
  EXPECT_EQ(r->error().code, ErrorCode::timeout);
  FILE* f = std::fopen(pidfile.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int pid = 0;
  ASSERT_EQ(std::fscanf(f, "%d", &pid), 1);
  std::fclose(f);
  std::remove(pidfile.c_str());
  // The grandchild got SIGKILL with its group. It is not our child: once dead it is gone
  // or a zombie waiting for init.
  EXPECT_TRUE(poll_until(ex, [&] {
    const char state = test::process_state(pid);
    return state == 0 || state == 'Z';
  }));
  EXPECT_EQ(runner->running(), 0u);
}

TEST_F(ShellRunnerTest, ConcurrentCommandsCompleteIndependently) {
  std::optional<Result<std::string>> slow, fast;
  runner->run("sleep 0.3; echo slow", Millis(10000), [&](Result<std::string> r) { slow.emplace(std::move(r)); });
  runner->run("echo fast", Millis(10000), [&](Result<std::string> r) { fast.emplace(std::move(r)); });
  ASSERT_TRUE(pump_until(ex, [&] { return fast.has_value(); }));
  ASSERT_TRUE(fast->ok());
  EXPECT_EQ(**fast, "fast\n");
  ASSERT_TRUE(pump_until(ex, [&] { return slow.has_value(); }));
  EXPECT_EQ(**slow, "slow\n");
}

TEST_F(ShellRunnerTest, DestroyingTheRunnerKillsCommandsAndDropsTheirCallbacks) {
  bool called = false;
  runner->run("sleep 30", Millis(60000), [&](Result<std::string>) { called = true; });
  EXPECT_EQ(runner->running(), 1u);
  runner.reset();
  ex.run_for(Millis(50));
  EXPECT_FALSE(called);
  for (const auto& child : test::children_of_self()) {
    EXPECT_NE(child.comm, "sh");
    EXPECT_NE(child.comm, "sleep");
  }
}

}  // namespace
}  // namespace native_shell_runner_test
}  // namespace mcprt::native
