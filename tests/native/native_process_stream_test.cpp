// NativeProcessLauncher / its ByteStream against real child processes: `cat`, `sleep`,
// `sh`, and this binary acting as a scripted server.

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "mcprt/native/executor.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace native_process_stream_test {  // this file's own names in a unity batch
namespace {

using test::CapturingLogger;
using test::fast_options;
using test::poll_until;
using test::pump_until;
using test::scripted;
using test::StreamRecorder;

ProcessSpec command(std::string cmd, std::vector<std::string> args = {}) {
  ProcessSpec spec;
  spec.command = std::move(cmd);
  spec.args = std::move(args);
  spec.label = spec.command;
  return spec;
}

std::string pattern(std::size_t n) {
  std::string s;
  s.reserve(n);
  for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>('A' + (i * 7) % 26));
  return s;
}

// Reads the pid from a "<word> <pid>" line.
pid_t pid_after(const std::string& text, const std::string& word) {
  std::size_t at = text.find(word + " ");
  if (at == std::string::npos) return 0;
  return static_cast<pid_t>(std::atol(text.c_str() + at + word.size() + 1));
}

bool gone_or_zombie(pid_t pid) {
  char st = test::process_state(pid);
  return st == 0 || st == 'Z' || st == 'X';
}

class ProcessStreamTest : public ::testing::Test {
 protected:
  std::unique_ptr<ByteStream> launch(const ProcessSpec& spec) {
    auto r = launcher_.launch(spec);
    EXPECT_TRUE(r.ok()) << r.error();
    if (!r.ok()) return nullptr;
    return std::move(r).value();
  }
  bool wait_closed(StreamRecorder& rec) {
    return pump_until(ex_, [&] { return rec.closed_count > 0; });
  }

  NativeExecutor ex_;
  CapturingLogger log_;
  NativeProcessLauncher launcher_{ex_, &log_, fast_options()};
};

TEST_F(ProcessStreamTest, EchoesBytesThroughCat) {
  auto s = launch(command("cat"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(s->write("hello ").ok());
  ASSERT_TRUE(s->write("world\n").ok());
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.data.size() >= 12; }));
  EXPECT_EQ(rec.data, "hello world\n");
}

TEST_F(ProcessStreamTest, HandlersNeverRunInsideStartWriteOrClose) {
  char dir[] = "/tmp/mcprt-stream-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string wrote = std::string(dir) + "/wrote";
  auto s = launch(scripted("burst_then_exit", {"100", wrote}));
  ASSERT_TRUE(s);
  // The child's bytes are in the pipe before start() (however slowly it starts: a
  // sanitizer build, a loaded machine).
  ASSERT_TRUE(poll_until(ex_, [&] { return ::access(wrote.c_str(), F_OK) == 0; }));
  ::unlink(wrote.c_str());
  ::rmdir(dir);
  StreamRecorder rec;
  s->start(rec.handlers());
  EXPECT_TRUE(rec.data.empty());
  EXPECT_EQ(rec.closed_count, 0);
  s->close();
  EXPECT_EQ(rec.closed_count, 0);
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.data.size(), 100u) << "output written before start() is still delivered";
}

TEST_F(ProcessStreamTest, BigWriteDoesNotBlockTheLoopWhileThePeerReadsSlowly) {
  auto s = launch(scripted("slow_cat"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  const std::string payload = pattern(4 * 1024 * 1024);  // far beyond a pipe's 64 KiB
  ASSERT_TRUE(s->write(payload).ok()) << "write() queues; it must not wait for the peer";

  bool ticked = false;
  std::size_t received_at_tick = 0;
  ex_.post_after(Millis(1), [&] {
    ticked = true;
    received_at_tick = rec.data.size();
  });
  ASSERT_TRUE(pump_until(ex_, [&] { return ticked; }));
  EXPECT_LT(received_at_tick, payload.size())
      << "the timer ran while the write was still in progress";

  ASSERT_TRUE(pump_until(ex_, [&] { return rec.data.size() >= payload.size(); }));
  EXPECT_TRUE(rec.data == payload) << "bytes were lost, duplicated or reordered";
  s->close();
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->exit_code, 0);
}

// write_copy: the caller keeps (and reuses) its buffer, as the stdio transport does. A
// write the pipe cannot take at once, and a burst behind it, keep their bytes and order
// even though the caller overwrites the buffer right after each call.
TEST_F(ProcessStreamTest, WriteCopyKeepsBytesTheCallerReusesAtOnce) {
  auto s = launch(scripted("slow_cat"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  std::string buffer = pattern(1024 * 1024);  // beyond a pipe's 64 KiB: part of it waits
  std::string expected = buffer;
  ASSERT_TRUE(s->write_copy(buffer).ok());
  for (char c : std::string("xyz")) {
    buffer.assign(1000, c);  // the reused buffer, overwritten while the first write waits
    expected += buffer;
    ASSERT_TRUE(s->write_copy(buffer).ok());
  }
  buffer.assign(buffer.size(), '!');
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.data.size() >= expected.size(); }));
  EXPECT_TRUE(rec.data == expected) << "bytes were lost, duplicated, reordered or overwritten";
  s->close();
  ASSERT_TRUE(wait_closed(rec));
}

TEST_F(ProcessStreamTest, FullPipeToOneChildBlocksNeitherTheLoopNorAnotherChild) {
  auto stuck = launch(command("sleep", {"1000"}));  // never reads its stdin
  auto lively = launch(command("cat"));
  ASSERT_TRUE(stuck && lively);
  StreamRecorder stuck_rec, lively_rec;
  stuck->start(stuck_rec.handlers());
  lively->start(lively_rec.handlers());

  ASSERT_TRUE(stuck->write(pattern(8 * 1024 * 1024)).ok());
  ASSERT_TRUE(stuck->write("more").ok());
  ASSERT_TRUE(lively->write("ping\n").ok());
  ASSERT_TRUE(pump_until(ex_, [&] { return lively_rec.data == "ping\n"; }));

  bool ticked = false;
  ex_.post_after(Millis(5), [&] { ticked = true; });
  ASSERT_TRUE(pump_until(ex_, [&] { return ticked; }));

  stuck->close();  // sleep ignores stdin EOF: this takes the SIGTERM step
  ASSERT_TRUE(wait_closed(stuck_rec));
  EXPECT_EQ(stuck_rec.closed->error.code, ErrorCode::closed);
  EXPECT_EQ(stuck_rec.closed->exit_code, -SIGTERM);
}

TEST_F(ProcessStreamTest, ReportsExitCodeAndStderrTailWhenTheChildExits) {
  auto s = launch(scripted("crash_at_start"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::exited);
  EXPECT_EQ(rec.closed->exit_code, 3);
  EXPECT_NE(rec.closed->error.message.find("exited (code 3)"), std::string::npos)
      << rec.closed->error.message;
  EXPECT_NE(rec.closed->stderr_tail.find("cannot open the database"), std::string::npos)
      << rec.closed->stderr_tail;
  EXPECT_EQ(s->diagnostics_tail(), rec.closed->stderr_tail);
  EXPECT_TRUE(log_.contains("stderr: scripted server: cannot open the database", LogLevel::debug));
}

TEST_F(ProcessStreamTest, SignalDeathIsReportedAsNegativeExitCode) {
  auto s = launch(command("sh", {"-c", "kill -KILL $$"}));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::exited);
  EXPECT_EQ(rec.closed->exit_code, -SIGKILL);
  EXPECT_NE(rec.closed->error.message.find("signal 9"), std::string::npos)
      << rec.closed->error.message;
}

TEST_F(ProcessStreamTest, StderrTailKeepsOnlyTheLast64KiBAndEndsWithTheLastLine) {
  auto s = launch(scripted("stderr_tail"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  const std::string& tail = rec.closed->stderr_tail;
  EXPECT_EQ(rec.closed->exit_code, 1);
  EXPECT_LE(tail.size(), 64u * 1024);
  EXPECT_GT(tail.size(), 60u * 1024);
  ASSERT_GE(tail.size(), 10u);
  EXPECT_EQ(tail.substr(tail.size() - 10), "LAST LINE\n");
  EXPECT_EQ(tail.find("stderr line 0\n"), std::string::npos) << "the oldest bytes were dropped";
}

TEST_F(ProcessStreamTest, LongStderrLinesAreCutBeforeLogging) {
  NativeProcessOptions o = fast_options();
  o.stderr_log_line_bytes = 16;
  NativeProcessLauncher launcher(ex_, &log_, o);
  auto r = launcher.launch(command("sh", {"-c", "echo 0123456789abcdefghijklmnop >&2"}));
  ASSERT_TRUE(r.ok()) << r.error();
  StreamRecorder rec;
  r.value()->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_TRUE(log_.contains("stderr: 0123456789abcdef ...(line cut)")) << ::testing::PrintToString(log_.lines());
  EXPECT_NE(rec.closed->stderr_tail.find("0123456789abcdefghijklmnop"), std::string::npos)
      << "the tail keeps the whole line";
}

TEST_F(ProcessStreamTest, DeliversEveryStdoutByteWrittenBeforeTheExit) {
  const std::size_t n = 1024 * 1024;
  auto s = launch(scripted("burst_then_exit", {std::to_string(n)}));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_FALSE(rec.data_after_close);
  EXPECT_EQ(rec.closed->error.code, ErrorCode::exited);
  EXPECT_EQ(rec.closed->exit_code, 0);
  ASSERT_EQ(rec.data.size(), n);
  for (std::size_t i = 0; i < n; i += 4093) {
    ASSERT_EQ(rec.data[i], static_cast<char>('a' + i % 26)) << "at byte " << i;
  }
}

TEST_F(ProcessStreamTest, ExitIsDetectedEvenWhileAGrandchildKeepsStdoutOpen) {
  auto s = launch(scripted("grandchild_exit"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::exited);
  EXPECT_EQ(rec.closed->exit_code, 5);
  const pid_t grandchild = pid_after(rec.data, "grandchild");
  ASSERT_GT(grandchild, 0) << "stdout written before the exit was delivered: " << rec.data;
  EXPECT_TRUE(poll_until(ex_, [&] { return gone_or_zombie(grandchild); }))
      << "the straggler left in the server's process group was killed";
}

TEST_F(ProcessStreamTest, StdoutClosedWhileRunningEndsTheStreamAndTerminatesTheChild) {
  auto s = launch(scripted("stdout_close"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::transport);
  EXPECT_FALSE(rec.closed->exit_code.has_value());
  EXPECT_NE(rec.closed->error.message.find("closed its stdout"), std::string::npos);
  const pid_t pid = pid_after(rec.closed->stderr_tail, "pid");
  ASSERT_GT(pid, 0) << rec.closed->stderr_tail;
  // The stream is still alive: it must terminate and reap the child on its own.
  EXPECT_TRUE(poll_until(ex_, [&] { return test::process_state(pid) == 0; }))
      << "state " << test::process_state(pid);
}

TEST_F(ProcessStreamTest, CloseEndsAChildThatExitsOnStdinEofWithoutSignalsOrWaitingOutTheGrace) {
  // A grace far beyond the wait limit: the stream can only end in time if the exit itself
  // ends it.
  NativeProcessOptions slow = fast_options();
  slow.stdin_close_grace = Millis(10 * 60 * 1000);
  NativeProcessLauncher launcher(ex_, &log_, slow);
  auto r = launcher.launch(command("cat"));
  ASSERT_TRUE(r.ok()) << r.error();
  auto s = std::move(r).value();
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(s->write("hello\n").ok());
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.data == "hello\n"; }));  // it answered
  s->close();
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::closed);
  EXPECT_EQ(rec.closed->exit_code, 0);  // exited on EOF: no signal was sent
}

TEST_F(ProcessStreamTest, CloseOfAChildThatNeverWroteSendsSigtermWithoutTheStdinGrace) {
  // ignore_stdin_close stays up after EOF; it has written nothing (still "starting").
  NativeProcessOptions slow = fast_options();
  slow.stdin_close_grace = Millis(10 * 60 * 1000);
  slow.silent_stdin_close_grace = NativeProcessOptions{}.silent_stdin_close_grace;  // the default
  NativeProcessLauncher launcher(ex_, &log_, slow);
  auto r = launcher.launch(scripted("ignore_stdin_close"));
  ASSERT_TRUE(r.ok()) << r.error();
  auto s = std::move(r).value();
  StreamRecorder rec;
  s->start(rec.handlers());
  s->close();
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::closed);
  EXPECT_EQ(rec.closed->exit_code, -SIGTERM);
}

TEST_F(ProcessStreamTest, CloseSendsSigtermWhenTheChildIgnoresStdinEof) {
  auto s = launch(scripted("ignore_stdin_close"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(s->write(R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n").ok());
  ASSERT_TRUE(pump_until(ex_, [&] { return !rec.data.empty(); }));  // it answered: the grace applies
  s->close();
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::closed);
  EXPECT_EQ(rec.closed->exit_code, -SIGTERM);
}

TEST_F(ProcessStreamTest, CloseSendsSigkillWhenTheChildAlsoIgnoresSigterm) {
  auto s = launch(scripted("ignore_sigterm"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(poll_until(ex_, [&] { return s->diagnostics_tail().find("ready") != std::string::npos; }));
  s->close();
  ASSERT_TRUE(wait_closed(rec));
  EXPECT_EQ(rec.closed->error.code, ErrorCode::closed);
  EXPECT_EQ(rec.closed->exit_code, -SIGKILL);
}

TEST_F(ProcessStreamTest, CloseIsIdempotentAndOnClosedFiresOnce) {
  auto s = launch(command("cat"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  s->close();
  s->close();
  ASSERT_TRUE(wait_closed(rec));
  s->close();
  ex_.run_for(Millis(50));
  EXPECT_EQ(rec.closed_count, 1);
  Status w = s->write("late");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, ErrorCode::closed);
}

TEST_F(ProcessStreamTest, WriteFailsOnceCloseStarted) {
  auto s = launch(command("cat"));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  s->close();
  Status w = s->write("too late");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, ErrorCode::closed);
  ASSERT_TRUE(wait_closed(rec));
}

TEST_F(ProcessStreamTest, ClosingOneChildsStdinReachesItWhileAnotherChildRuns) {
  // If the first child's stdin pipe leaked into the second (no close-on-exec), closing it
  // here would not give the first child EOF, and it would end by SIGTERM instead.
  auto first = launch(command("cat"));
  auto second = launch(command("cat"));
  ASSERT_TRUE(first && second);
  StreamRecorder first_rec, second_rec;
  first->start(first_rec.handlers());
  second->start(second_rec.handlers());
  first->close();
  ASSERT_TRUE(wait_closed(first_rec));
  EXPECT_EQ(first_rec.closed->exit_code, 0);
  EXPECT_EQ(second_rec.closed_count, 0);
}

TEST_F(ProcessStreamTest, DestructorKillsAndReapsARunningChildAtOnce) {
  auto s = launch(command("sleep", {"1000"}));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_EQ(test::children_of_self().size(), 1u);
  s.reset();
  EXPECT_TRUE(test::children_of_self().empty()) << "killed and reaped inside the destructor";
  ex_.run_for(Millis(20));
  EXPECT_EQ(rec.closed_count, 0) << "no callback after destruction";
}

TEST_F(ProcessStreamTest, DestructorKillsTheWholeProcessGroup) {
  auto s = launch(command("sh", {"-c", "sleep 1000 & echo \"grandchild $!\"; wait"}));
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.data.find('\n') != std::string::npos; }));
  const pid_t grandchild = pid_after(rec.data, "grandchild");
  ASSERT_GT(grandchild, 0);
  s.reset();
  EXPECT_TRUE(poll_until(ex_, [&] { return gone_or_zombie(grandchild); }));
}

TEST_F(ProcessStreamTest, DestroyingTheStreamInsideItsOwnCallbackIsSafe) {
  std::unique_ptr<ByteStream> s = launch(command("sh", {"-c", "echo hi; sleep 1000"}));
  ASSERT_TRUE(s);
  bool got = false;
  ByteStreamHandlers h;
  h.on_data = [&](std::string_view) {
    got = true;
    s.reset();
  };
  h.on_closed = [&](const StreamClosed&) { ADD_FAILURE() << "on_closed after destruction"; };
  s->start(std::move(h));
  ASSERT_TRUE(pump_until(ex_, [&] { return got; }));
  ex_.run_for(Millis(20));
  EXPECT_FALSE(s);
}

TEST_F(ProcessStreamTest, CommandNotFoundIsAClearLaunchError) {
  auto r = launcher_.launch(command("mcprt-no-such-command-xyz"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::transport);
  EXPECT_NE(r.error().message.find("command \"mcprt-no-such-command-xyz\" not found in PATH"),
            std::string::npos)
      << r.error();
}

TEST_F(ProcessStreamTest, CommandLookupUsesTheChildsPath) {
  ProcessSpec spec = command("cat");
  spec.env["PATH"] = "/mcprt-nonexistent-dir";
  auto r = launcher_.launch(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not found in PATH"), std::string::npos) << r.error();
}

TEST_F(ProcessStreamTest, MissingWorkingDirectoryIsALaunchError) {
  ProcessSpec spec = command("cat");
  spec.cwd = "/mcprt-nonexistent-dir/sub";
  auto r = launcher_.launch(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("working directory \"/mcprt-nonexistent-dir/sub\""),
            std::string::npos)
      << r.error();
}

TEST_F(ProcessStreamTest, ChildGetsCwdOverlaidEnvAndItsOwnProcessGroup) {
  ::setenv("MCPRT_PARENT_ONLY", "from-parent", 1);
  char tmpl[] = "/tmp/mcprt-native-cwd-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ProcessSpec spec = scripted("print_env", {"MCPRT_SET", "MCPRT_PARENT_ONLY", "HOME"});
  spec.cwd = dir;
  spec.env["MCPRT_SET"] = "overlaid";
  spec.env["HOME"] = "/home/overridden";
  auto s = launch(spec);
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  ::rmdir(dir.c_str());
  auto out = nlohmann::json::parse(rec.data, nullptr, false);
  ASSERT_TRUE(out.is_object()) << rec.data;
  EXPECT_EQ(out["cwd"], dir);
  EXPECT_EQ(out["env"]["MCPRT_SET"], "overlaid");
  EXPECT_EQ(out["env"]["MCPRT_PARENT_ONLY"], "from-parent");
  EXPECT_EQ(out["env"]["HOME"], "/home/overridden");
  EXPECT_EQ(out["pgid"], out["pid"]) << "the child leads its own process group";
  EXPECT_NE(out["pgid"].get<long>(), static_cast<long>(::getpgid(0)));
}

TEST_F(ProcessStreamTest, MinimalEnvironmentInheritsOnlyTheSafeSet) {
  ::setenv("MCPRT_PARENT_ONLY", "from-parent", 1);
  ProcessSpec spec = scripted("print_env", {"MCPRT_PARENT_ONLY", "PATH", "MCPRT_SET"});
  spec.inherit_env = ProcessSpec::InheritEnv::minimal;
  spec.env["MCPRT_SET"] = "overlaid";
  auto s = launch(spec);
  ASSERT_TRUE(s);
  StreamRecorder rec;
  s->start(rec.handlers());
  ASSERT_TRUE(wait_closed(rec));
  auto out = nlohmann::json::parse(rec.data, nullptr, false);
  ASSERT_TRUE(out.is_object()) << rec.data;
  EXPECT_TRUE(out["env"]["MCPRT_PARENT_ONLY"].is_null());
  EXPECT_EQ(out["env"]["MCPRT_SET"], "overlaid");
  ASSERT_NE(std::getenv("PATH"), nullptr);
  EXPECT_EQ(out["env"]["PATH"], std::getenv("PATH"));
}

TEST(ChildEnvironment, OverlayReplacesInheritedValuesWithoutDuplicates) {
  ::setenv("MCPRT_DUP", "old", 1);
  ProcessSpec spec;
  spec.env["MCPRT_DUP"] = "new";
  int found = 0;
  for (const std::string& e : child_environment(spec)) {
    if (e.rfind("MCPRT_DUP=", 0) == 0) {
      ++found;
      EXPECT_EQ(e, "MCPRT_DUP=new");
    }
  }
  EXPECT_EQ(found, 1);
}

TEST(ResolveCommand, FindsExecutablesInPathOrder) {
  auto r = resolve_command("sh", "/mcprt-nonexistent:/bin:/usr/bin", "");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value(), "/bin/sh");
}

TEST(ResolveCommand, RelativePathWithSlashIsResolvedAgainstCwd) {
  auto r = resolve_command("./sh", "", "/bin");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value(), "/bin/./sh");
  auto missing = resolve_command("./mcprt-nope", "", "/bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("command \"./mcprt-nope\" not found"), std::string::npos);
}

}  // namespace
}  // namespace native_process_stream_test
}  // namespace mcprt::native
