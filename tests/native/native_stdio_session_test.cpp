// The full native stdio stack — NativeProcessLauncher → make_stdio_transport →
// ClientSession — against the scripted servers (scripted_server.hpp), the demo server and
// the real npm @modelcontextprotocol/server-everything.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include "mcprt/abort.hpp"
#include "mcprt/client.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "mcprt/stdio_transport.hpp"
#include "blocking_session_test.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace native_stdio_session_test {  // this file's own names in a unity batch
namespace {

using test::BlockingSessionTest;
using test::CapturingLogger;
using test::fast_options;
using test::pump_until;
using test::scripted;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::set<std::string> tool_names(const std::vector<json>& tools) {
  std::set<std::string> names;
  for (const json& t : tools) names.insert(t.value("name", ""));
  return names;
}

std::string first_text(const json& result) {
  if (!result.contains("content") || !result["content"].is_array() || result["content"].empty()) {
    return {};
  }
  return result["content"][0].value("text", "");
}

// Peak resident memory of this process, in KiB (VmHWM), and a way to reset it.
long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      long kib = 0;
      in >> kib;
      return kib;
    }
    std::getline(in, key);
  }
  return -1;
}
long current_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      long kib = 0;
      in >> kib;
      return kib;
    }
    std::getline(in, key);
  }
  return -1;
}
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

class StdioSession : public BlockingSessionTest {
 protected:
  struct Setup {
    std::string name = "scripted";
    Millis connect_timeout{15000};
    std::size_t max_message_bytes = StdioTransportOptions{}.max_message_bytes;
  };

  Status connect(const ProcessSpec& spec, Setup setup) {
    auto stream = launcher_.launch(spec);
    if (!stream.ok()) return std::move(stream).error();
    StdioTransportOptions to;
    to.server_name = setup.name;
    to.logger = &log_;
    to.max_message_bytes = setup.max_message_bytes;
    auto transport = make_stdio_transport(ex_, std::move(stream).value(), to);
    return connect_session(std::move(transport), setup.name, setup.connect_timeout);
  }

  NativeProcessLauncher launcher_{ex_, &log_, fast_options()};
};

// ---- scripted servers ------------------------------------------------------------------

TEST_F(StdioSession, OkServerConnectsListsToolsEchoesAndAnswersPing) {
  ASSERT_TRUE(connect(scripted("ok"), {.name = "ok"}).ok());
  EXPECT_EQ(session_->state(), ClientSession::State::ready);
  EXPECT_EQ(session_->server().server_info.value("name", ""), "scripted-ok");

  auto tools = list_tools();
  ASSERT_TRUE(tools.ok()) << tools.error();
  EXPECT_EQ(tool_names(tools.value()), (std::set<std::string>{"echo", "add"}));

  auto echoed = call("echo", {{"message", "hello over a pipe"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
  EXPECT_EQ(first_text(echoed.value()), "hello over a pipe");

  std::optional<Status> pong;
  session_->ping([&](Status s) { pong = std::move(s); });
  ASSERT_TRUE(pump_until(ex_, [&] { return pong.has_value(); }));
  EXPECT_TRUE(pong->ok()) << pong->error();
}

TEST_F(StdioSession, CloseOfAnIdleOkServerEndsWithClosed) {
  ASSERT_TRUE(connect(scripted("ok"), {.name = "ok"}).ok());
  ASSERT_TRUE(close_session());
  EXPECT_EQ(closed_with_->code, ErrorCode::closed);
}

TEST_F(StdioSession, LaunchFailureNamesTheMissingCommand) {
  ProcessSpec spec;
  spec.command = "mcprt-definitely-missing-server";
  spec.label = "missing";
  Status s = connect(spec, {.name = "missing"});
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.error().message, "command \"mcprt-definitely-missing-server\" not found in PATH"))
      << s.error();
}

TEST_F(StdioSession, CrashAtStartFailsConnectWithExitCodeAndStderr) {
  Status s = connect(scripted("crash_at_start"), {.name = "crashy"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::exited) << s.error();
  const std::string& m = s.error().message;
  EXPECT_TRUE(contains(m, "Server \"crashy\"")) << m;
  EXPECT_TRUE(contains(m, "exited (code 3); stderr: scripted server: cannot open the database"))
      << m;
}

TEST_F(StdioSession, HangingInitializeTimesOutNamingTheServer) {
  Status s = connect(scripted("hang_initialize"), {.name = "sleepy", .connect_timeout = Millis(300)});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::timeout) << s.error();
  EXPECT_TRUE(contains(s.error().message, "Server \"sleepy\"")) << s.error();
  // A failed connect closes the transport: the child goes away (the listener checks it is
  // reaped once the session is destroyed).
  EXPECT_TRUE(pump_until(ex_, [&] { return closed_with_.has_value(); }));
}

TEST_F(StdioSession, GarbageLinesAreSkippedAndCallsStillSucceed) {
  ASSERT_TRUE(connect(scripted("garbage_lines"), {.name = "noisy"}).ok());
  auto tools = list_tools();
  ASSERT_TRUE(tools.ok()) << tools.error();
  EXPECT_EQ(tools.value().size(), 2u);
  auto echoed = call("echo", {{"message", "still works"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
  EXPECT_EQ(first_text(echoed.value()), "still works");
  EXPECT_TRUE(log_.contains("not JSON", LogLevel::warn));
  EXPECT_TRUE(log_.contains("this is not json", LogLevel::warn));
}

TEST_F(StdioSession, OversizedLineClosesTheConnectionWithMessageTooLarge) {
  ProcessSpec spec = scripted("huge_line");
  spec.env["MCPRT_SCRIPTED_HUGE_BYTES"] = std::to_string(8 * 1024 * 1024);
  Status s = connect(spec, {.name = "huge", .max_message_bytes = 1024 * 1024});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::message_too_large) << s.error();
  EXPECT_TRUE(contains(s.error().message, "Server \"huge\"")) << s.error();
  ASSERT_TRUE(pump_until(ex_, [&] { return closed_with_.has_value(); }));
  EXPECT_EQ(closed_with_->code, ErrorCode::message_too_large) << *closed_with_;
}

TEST_F(StdioSession, A100MBLineIsRejectedWithBoundedMemory) {
  // The real thing: the server writes a whole 100 MB line (the client keeps draining its
  // stdout while closing). With an 8 MiB limit the client must hold at most ~8 MiB of it
  // (plus reallocation and sanitizer-shadow slack), never the whole line.
  ASSERT_TRUE(reset_peak_rss()) << "cannot reset VmHWM through /proc/self/clear_refs";
  const long before_kib = current_rss_kib();
  ProcessSpec spec = scripted("huge_line");  // default: 100,000,000 bytes
  Status s = connect(spec, {.name = "huge", .max_message_bytes = 8u * 1024 * 1024});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::message_too_large) << s.error();
  const long growth_mib = (peak_rss_kib() - before_kib) / 1024;
  EXPECT_LT(growth_mib, 64) << "peak RSS grew by " << growth_mib
                            << " MiB while reading a 100 MB line with an 8 MiB limit";
}

TEST_F(StdioSession, FloodedStderrNeitherDeadlocksNorBreaksCalls) {
  ProcessSpec spec = scripted("flood_stderr");
  spec.env["MCPRT_SCRIPTED_FLOOD_BYTES"] = std::to_string(8 * 1024 * 1024);
  ASSERT_TRUE(connect(spec, {.name = "chatty"}).ok());
  auto tools = list_tools();
  ASSERT_TRUE(tools.ok()) << tools.error();
  auto echoed = call("echo", {{"message", "through the flood"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
  EXPECT_EQ(first_text(echoed.value()), "through the flood");
  EXPECT_GT(log_.count("stderr: flood line", LogLevel::debug), 1000u)
      << "stderr lines are forwarded to the log at debug level";
}

TEST_F(StdioSession, ExitDuringACallFailsThatCallWithTheExitCode) {
  ASSERT_TRUE(connect(scripted("exit_mid_call"), {.name = "quitter"}).ok());
  auto r = call("echo", {{"message", "bye"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::exited) << r.error();
  EXPECT_TRUE(contains(r.error().message, "Server \"quitter\"")) << r.error();
  EXPECT_TRUE(contains(r.error().message, "exited (code 7)")) << r.error();
  EXPECT_TRUE(contains(r.error().message, "exit_mid_call: exiting on tools/call")) << r.error();
  ASSERT_TRUE(pump_until(ex_, [&] { return closed_with_.has_value(); }));
  EXPECT_EQ(closed_with_->code, ErrorCode::exited);
}

TEST_F(StdioSession, CloseFinishesWhenTheServerIgnoresStdinClose) {
  ASSERT_TRUE(connect(scripted("ignore_stdin_close"), {.name = "stubborn"}).ok());
  ASSERT_TRUE(close_session()) << "close must escalate to SIGTERM";
  EXPECT_EQ(closed_with_->code, ErrorCode::closed);
}

TEST_F(StdioSession, CloseFinishesWhenTheServerAlsoIgnoresSigterm) {
  ASSERT_TRUE(connect(scripted("ignore_sigterm"), {.name = "immortal"}).ok());
  ASSERT_TRUE(close_session()) << "close must escalate to SIGKILL";
  EXPECT_EQ(closed_with_->code, ErrorCode::closed);
}

// ---- the demo server -------------------------------------------------------------------

ProcessSpec demo_server() {
  ProcessSpec spec;
  spec.command = MCPRT_DEMO_SERVER;
  spec.label = "demo";
  return spec;
}

TEST_F(StdioSession, DemoServerListsItsSixTools) {
  ASSERT_TRUE(connect(demo_server(), {.name = "demo"}).ok());
  auto tools = list_tools();
  ASSERT_TRUE(tools.ok()) << tools.error();
  EXPECT_EQ(tool_names(tools.value()),
            (std::set<std::string>{"echo", "add", "now", "word_count", "slow_task", "fail"}));
}

TEST_F(StdioSession, DemoServerAddsNumbers) {
  ASSERT_TRUE(connect(demo_server(), {.name = "demo"}).ok());
  auto r = call("add", {{"a", 2}, {"b", 40}});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value()["structuredContent"]["sum"], 42);
  EXPECT_EQ(first_text(r.value()), "42");
}

TEST_F(StdioSession, DemoServerFailToolReturnsIsErrorResult) {
  ASSERT_TRUE(connect(demo_server(), {.name = "demo"}).ok());
  auto r = call("fail", {{"message", "as designed"}});
  ASSERT_TRUE(r.ok()) << "a tool error is a result, not a protocol error: " << r.error();
  EXPECT_EQ(r.value().value("isError", false), true);
  EXPECT_EQ(first_text(r.value()), "as designed");
}

TEST_F(StdioSession, DemoServerSlowTaskReportsProgressAndCanBeCancelled) {
  ASSERT_TRUE(connect(demo_server(), {.name = "demo"}).ok());
  AbortController abort;
  int progress_seen = 0;
  CallOptions options;
  options.signal = abort.signal();
  options.on_progress = [&](const json& params) {
    EXPECT_TRUE(params.contains("progress")) << params.dump();
    if (++progress_seen == 2) abort.abort("the user changed their mind");
  };
  std::optional<Result<json>> result;
  session_->call_tool("slow_task", {{"steps", 1000}, {"interval_ms", 10}}, std::move(options),
                      [&](Result<json> r) { result = std::move(r); });
  ASSERT_TRUE(pump_until(ex_, [&] { return result.has_value(); }));
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->error().code, ErrorCode::aborted) << result->error();
  EXPECT_GE(progress_seen, 2);
  // The connection survives the cancellation.
  auto echoed = call("echo", {{"message", "after cancel"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
  EXPECT_EQ(first_text(echoed.value()), "after cancel");
}

// ---- @modelcontextprotocol/server-everything (npm) -------------------------------------

std::string server_everything_script() {
  return std::string(MCPRT_SOURCE_DIR) +
         "/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
}

TEST_F(StdioSession, ServerEverythingConnectsListsCallsEchoAndClosesInBoundedTime) {
  const std::string script = server_everything_script();
  struct stat st {};
  ASSERT_EQ(::stat(script.c_str(), &st), 0)
      << script << " is missing: install the npm dev dependencies first "
      << "(scripts/bootstrap, or `npm install` in " << MCPRT_SOURCE_DIR << ")";

  // Default grace periods: this server ignores stdin EOF, so close() takes the SIGTERM step.
  NativeProcessLauncher launcher(ex_, &log_);
  ProcessSpec spec;
  spec.command = "node";
  spec.args = {script, "stdio"};
  spec.label = "everything";
  auto stream = launcher.launch(spec);
  ASSERT_TRUE(stream.ok()) << stream.error();
  StdioTransportOptions to;
  to.server_name = "everything";
  to.logger = &log_;
  ClientOptions co;
  co.server_name = "everything";
  co.logger = &log_;
  co.roots = roots_from_directories({"/tmp"});
  co.on_close = [this](const Error& e) { closed_with_ = e; };
  co.on_notification = [this](const std::string& method, const json&) {
    notifications_.push_back(method);
  };
  session_ = ClientSession::create(ex_, make_stdio_transport(ex_, std::move(stream).value(), to), co);
  std::optional<Status> connected;
  session_->connect([&](Status s) { connected = std::move(s); });
  ASSERT_TRUE(pump_until(ex_, [&] { return connected.has_value(); }));
  ASSERT_TRUE(connected->ok()) << connected->error();

  auto tools = list_tools();
  ASSERT_TRUE(tools.ok()) << tools.error();
  EXPECT_GT(tools.value().size(), 10u);
  EXPECT_TRUE(tool_names(tools.value()).count("echo"));

  auto echoed = call("echo", {{"message", "hi from mcprt"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
  EXPECT_EQ(first_text(echoed.value()), "Echo: hi from mcprt");

  // Let its roots/list request (id 0) and list_changed burst arrive and be handled; the
  // session must stay up through them.
  ex_.run_for(Millis(300));
  EXPECT_EQ(session_->state(), ClientSession::State::ready);

  session_->close();
  ASSERT_TRUE(pump_until(ex_, [&] { return closed_with_.has_value(); }, Millis(10000)))
      << "close() must finish (stdin close is ignored by this server → SIGTERM)";
  EXPECT_EQ(closed_with_->code, ErrorCode::closed);
  session_.reset();
}

}  // namespace
}  // namespace native_stdio_session_test
}  // namespace mcprt::native
