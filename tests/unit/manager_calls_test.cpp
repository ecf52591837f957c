// Tool calls through the manager (SPEC §5.5, §6, issue 9 item 5): the default tools/call
// timeout (60 s, reset by progress, capped by a total maximum; toolTimeout 0 = none), and
// calls made during an outage, which wait for the reconnect within their timeout instead
// of failing at once. Time moves only when the test advances it.

#include <gmock/gmock.h>

#include "manager_test_fixture.hpp"

namespace mcprt::testing {
namespace manager_calls_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;

class ManagerCalls : public ManagerTest {
 protected:
  // Each new connection to `name` serves a tool `read` that answers "ok"; `hold` leaves a
  // method unanswered.
  void serve_read(const std::string& name, std::vector<std::string> hold = {}) {
    farm.on_connect(name, [hold](FakeServer& s) {
      s.set_tools({tool("read")});
      s.on_tool("read", [](const json&) -> Result<json> {
        return json{{"content", {{{"type", "text"}, {"text", "ok"}}}}};
      });
      for (const auto& m : hold) s.hold(m);
    });
  }
};

Error exited() { return Error::make(ErrorCode::exited, "server exited (code 1)"); }

TEST_F(ManagerCalls, DefaultToolTimeout_ANeverAnsweringToolFailsAfter60sAndIsCancelled) {
  serve("alpha", tools_of({"hang"}), {"tools/call"});
  start({config("alpha")});
  ex.run_until_idle();
  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "hang", json::object(), CallOptions{}, probe.callback());
  ex.advance(Millis(59999));
  EXPECT_EQ(probe.done, 0);
  ex.advance(Millis(1));
  ASSERT_EQ(probe.done, 1);
  ASSERT_FALSE(probe.result->ok());
  EXPECT_EQ(probe.result->error().code, ErrorCode::timeout);
  EXPECT_THAT(probe.error_message(), HasSubstr("Server \"alpha\""));
  EXPECT_THAT(probe.error_message(), HasSubstr("60000 ms"));
  // The server is told the request is abandoned.
  EXPECT_EQ(farm.latest("alpha")->notifications("notifications/cancelled").size(), 1u);
}

TEST_F(ManagerCalls, DefaultToolTimeout_ProgressResetsItUpToTheTotalMaximum) {
  options.max_tool_call_total = Millis(180000);
  serve("alpha", tools_of({"long"}), {"tools/call"});
  start({config("alpha")});
  ex.run_until_idle();
  CallProbe probe;
  CallOptions call;
  int progress_seen = 0;
  call.on_progress = [&](const json&) { ++progress_seen; };
  manager->tool_host()->call_tool("alpha", "long", json::object(), call, probe.callback());
  ex.run_until_idle();
  const json token = farm.latest("alpha")->last_request("tools/call")["params"]["_meta"]["progressToken"];
  // Progress every 50 s keeps the call alive past 60 s ...
  for (int i = 1; i <= 3; ++i) {
    ex.advance(Millis(50000));
    farm.latest("alpha")->notify("notifications/progress", {{"progressToken", token}, {"progress", i}});
    ex.run_until_idle();
    EXPECT_EQ(probe.done, 0) << "after " << i * 50 << " s";
  }
  EXPECT_EQ(progress_seen, 3);
  // ... but not past the total maximum.
  ex.advance(Millis(29999));
  EXPECT_EQ(probe.done, 0);
  ex.advance(Millis(1));
  ASSERT_EQ(probe.done, 1);
  EXPECT_EQ(probe.result->error().code, ErrorCode::timeout);
  EXPECT_THAT(probe.error_message(), HasSubstr("maximum total time"));
}

TEST_F(ManagerCalls, ToolTimeoutZeroMeansNoTimeoutAtAll) {
  serve("alpha", tools_of({"hang"}), {"tools/call"});
  start({config("alpha", {{"toolTimeout", 0}})});
  ex.run_until_idle();
  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "hang", json::object(), CallOptions{}, probe.callback());
  ex.advance(Millis(2 * 60 * 60 * 1000));
  EXPECT_EQ(probe.done, 0);
  FakeServer* s = farm.latest("alpha");
  s->reply(s->last_request("tools/call")["id"], {{"content", json::array()}});
  ex.run_until_idle();
  ASSERT_EQ(probe.done, 1);
  EXPECT_TRUE(probe.result->ok());
}

TEST_F(ManagerCalls, ConfiguredToolTimeoutWinsOverTheDefault) {
  serve("alpha", tools_of({"hang"}), {"tools/call"});
  start({config("alpha", {{"toolTimeout", 1500}})});
  ex.run_until_idle();
  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "hang", json::object(), CallOptions{}, probe.callback());
  ex.advance(Millis(1500));
  ASSERT_EQ(probe.done, 1);
  EXPECT_THAT(probe.error_message(), HasSubstr("1500 ms"));
}

TEST_F(ManagerCalls, Outage_ACallMadeWhileReconnectingWaitsAndGoesThroughAfterTheReconnect) {
  serve_read("alpha");
  start({config("alpha")});
  ex.run_until_idle();
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::reconnecting);

  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "read", json::object(), CallOptions{}, probe.callback());
  ex.run_until_idle();
  // Someone needs the server now: the retry runs at once instead of after the backoff,
  // and the call goes to the new connection.
  ASSERT_EQ(probe.done, 1);
  ASSERT_TRUE(probe.result->ok()) << probe.error_message();
  EXPECT_EQ(farm.attempts("alpha"), 2u);
  EXPECT_EQ(farm.latest("alpha")->requests("tools/call").size(), 1u);
}

TEST_F(ManagerCalls, Outage_ACallWaitsForASlowReconnectWithinItsTimeout) {
  serve_read("alpha");
  start({config("alpha", {{"toolTimeout", 10000}})});
  ex.run_until_idle();
  // The next process takes a while to start: its initialize is held.
  serve_read("alpha", {"initialize"});
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();

  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "read", json::object(), CallOptions{}, probe.callback());
  ex.advance(Millis(4000));
  EXPECT_EQ(probe.done, 0);
  FakeServer* s = farm.latest("alpha");
  s->reply(s->last_request("initialize")["id"],
           {{"protocolVersion", "2025-11-25"}, {"capabilities", {{"tools", json::object()}}},
            {"serverInfo", {{"name", "alpha"}, {"version", "1"}}}});
  ex.run_until_idle();
  ASSERT_EQ(probe.done, 1);
  EXPECT_TRUE(probe.result->ok()) << probe.error_message();
}

TEST_F(ManagerCalls, Outage_ACallFailsWithinItsTimeoutWhenTheServerStaysDown) {
  serve_read("alpha");
  start({config("alpha", {{"toolTimeout", 3000}})});
  ex.run_until_idle();
  farm.fail_connect("alpha", Error::make(ErrorCode::transport, "connection refused"));
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();

  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "read", json::object(), CallOptions{}, probe.callback());
  ex.advance(Millis(2999));
  EXPECT_EQ(probe.done, 0);
  ex.advance(Millis(1));
  ASSERT_EQ(probe.done, 1);
  ASSERT_FALSE(probe.result->ok());
  EXPECT_THAT(probe.error_message(), HasSubstr("Server \"alpha\""));
  EXPECT_THAT(probe.error_message(), HasSubstr("connection refused"));
}

TEST_F(ManagerCalls, Outage_AnAbortedWaitReportsAbortAndNeverCalls) {
  serve_read("alpha");
  start({config("alpha")});
  ex.run_until_idle();
  serve_read("alpha", {"initialize"});
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();

  AbortController abort;
  CallOptions call;
  call.signal = abort.signal();
  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "read", json::object(), call, probe.callback());
  ex.advance(Millis(100));
  abort.abort();
  ex.run_until_idle();
  ASSERT_EQ(probe.done, 1);
  EXPECT_EQ(probe.result->error().code, ErrorCode::aborted);
}

TEST_F(ManagerCalls, Outage_ReconnectOffStillFailsAtOnce) {
  serve_read("alpha");
  start({config("alpha", {{"reconnect", false}})});
  ex.run_until_idle();
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  CallProbe probe;
  manager->tool_host()->call_tool("alpha", "read", json::object(), CallOptions{}, probe.callback());
  ex.run_until_idle();
  ASSERT_EQ(probe.done, 1);
  EXPECT_THAT(probe.error_message(), HasSubstr("reconnect is off"));
  EXPECT_EQ(farm.attempts("alpha"), 1u);
}

}  // namespace
}  // namespace manager_calls_test
}  // namespace mcprt::testing
