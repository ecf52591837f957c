// The manager's runtime health (SPEC §5.5 and the §9 "transport drops at runtime" row):
// drop detection, reconnect backoff, the circuit breaker, reconnect:false, ping health
// checks and debounced tools/list_changed. Time moves only when the test advances it.

#include <gmock/gmock.h>

#include "manager_test_fixture.hpp"

namespace mcprt::testing {
namespace manager_health_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using ManagerHealth = ManagerTest;

Error exited(const std::string& tail = "") {
  json data = json::object();
  if (!tail.empty()) data["stderr"] = tail;
  return Error::make(ErrorCode::exited, "server exited (code 1)", data);
}

TEST_F(ManagerHealth, Sec9_TransportDropDetectedAtOnceAndReconnects) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  ASSERT_EQ(manager->connection_status("alpha"), ConnectionStatus::connected);

  farm.latest("alpha")->close_with_error(exited("panic: out of memory"));
  ex.run_until_idle();  // no time passes: the drop is seen at once

  auto st = manager->server_state("alpha");
  EXPECT_EQ(st->phase, ServerPhase::reconnecting);
  EXPECT_EQ(st->status, ConnectionStatus::connecting);
  ASSERT_TRUE(st->last_error.has_value());
  EXPECT_THAT(st->last_error->message, HasSubstr("Server \"alpha\""));
  EXPECT_THAT(st->last_error->message, HasSubstr("server exited (code 1)"));
  EXPECT_EQ(st->stderr_tail, "panic: out of memory");
  EXPECT_EQ(manager->connection("alpha"), nullptr);
  EXPECT_TRUE(all_deferred("alpha"));  // tools stay registered, as deferred tools

  ex.advance(Millis(499));
  EXPECT_EQ(farm.attempts("alpha"), 1u);
  ex.advance(Millis(1));
  EXPECT_EQ(farm.attempts("alpha"), 2u);
  EXPECT_EQ(manager->connection_status("alpha"), ConnectionStatus::connected);
  EXPECT_FALSE(all_deferred("alpha"));
  EXPECT_EQ(farm.latest("alpha")->requests("tools/list").size(), 1u);  // re-listed
}

TEST_F(ManagerHealth, Sec9_TransportDrop_PendingCallFailsOnceAndStatusIsNeverStale) {
  farm.on_connect("alpha", [](FakeServer& s) {
    s.set_tools({tool("slow")});
    s.hold("tools/call");
  });
  start({config("alpha")});
  ex.run_until_idle();
  int calls_done = 0;
  std::optional<Result<json>> got;
  manager->tool_host()->call_tool("alpha", "slow", json::object(), CallOptions{},
                                  [&](Result<json> r) {
                                    ++calls_done;
                                    got = std::move(r);
                                  });
  ex.run_until_idle();
  std::vector<ConnectionStatus> seen_in_events;
  manager->on_status([&](const StatusEvent&) {
    seen_in_events.push_back(manager->connection_status("alpha"));
  });
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  EXPECT_EQ(calls_done, 1);
  ASSERT_FALSE(got->ok());
  for (auto s : seen_in_events) EXPECT_NE(s, ConnectionStatus::connected);
}

TEST_F(ManagerHealth, Reconnect_BackoffDoubles500_1000_2000_4000UpToTheCap) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha", {{"reconnect", {{"maxDelayMs", 6000}}}})});
  ex.run_until_idle();
  farm.fail_connect("alpha", Error::make(ErrorCode::transport, "connection refused"));
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  for (int i = 0; i < 7; ++i) ex.advance_to_next_timer();

  auto times = farm.attempt_times("alpha");
  ASSERT_EQ(times.size(), 8u);
  std::vector<long long> gaps;
  TimePoint drop = times[0];  // the drop happened at the first connect's time (0)
  for (std::size_t i = 1; i < times.size(); ++i) {
    gaps.push_back((times[i] - (i == 1 ? drop : times[i - 1])).count());
  }
  EXPECT_THAT(gaps, ElementsAre(500, 1000, 2000, 4000, 6000, 6000, 6000));
  EXPECT_EQ(phase("alpha"), ServerPhase::reconnecting);
  EXPECT_EQ(manager->server_state("alpha")->attempts, 7);
}

TEST_F(ManagerHealth, Reconnect_StopsAfterMaxAttemptsAndReportsFailed) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha", {{"reconnect", {{"maxAttempts", 3}}}})});
  ex.run_until_idle();
  farm.fail_connect("alpha", Error::make(ErrorCode::transport, "connection refused"));
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  ex.advance(Millis(120000));
  EXPECT_EQ(farm.attempts("alpha"), 4u);  // the first connect + 3 retries
  auto st = manager->server_state("alpha");
  EXPECT_EQ(st->phase, ServerPhase::failed);
  EXPECT_THAT(st->last_error->message, HasSubstr("connection refused"));
}

TEST_F(ManagerHealth, Breaker_OpensOnFiveClosesIn30sAndReconnectServerResetsIt) {
  serve("flaky", tools_of({"read"}));
  start({config("flaky")});
  ex.run_until_idle();
  for (int close = 1; close <= 5; ++close) {
    ASSERT_EQ(manager->connection_status("flaky"), ConnectionStatus::connected) << close;
    farm.latest("flaky")->close_with_error(exited());
    ex.run_until_idle();
    ex.advance(Millis(500));
  }
  auto st = manager->server_state("flaky");
  EXPECT_TRUE(st->circuit_open);
  EXPECT_EQ(st->phase, ServerPhase::failed);
  EXPECT_EQ(farm.attempts("flaky"), 5u);
  ex.advance(Millis(120000));
  EXPECT_EQ(farm.attempts("flaky"), 5u);  // no more reconnects

  std::optional<Status> waited;
  manager->wait_for_connection("flaky", {}, [&](Status s) { waited = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(waited.has_value());
  ASSERT_FALSE(waited->ok());
  EXPECT_THAT(waited->error().message, HasSubstr("circuit open"));

  std::optional<Status> reconnected;
  manager->reconnect_server("flaky", [&](Status s) { reconnected = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(reconnected.has_value());
  EXPECT_TRUE(reconnected->ok()) << *reconnected;
  EXPECT_FALSE(manager->server_state("flaky")->circuit_open);
  EXPECT_EQ(manager->connection_status("flaky"), ConnectionStatus::connected);
}

TEST_F(ManagerHealth, Breaker_ClosesSpreadBeyondTheWindowKeepReconnecting) {
  serve("flaky", tools_of({"read"}));
  start({config("flaky")});
  ex.run_until_idle();
  for (int close = 1; close <= 8; ++close) {
    ASSERT_EQ(manager->connection_status("flaky"), ConnectionStatus::connected) << close;
    farm.latest("flaky")->close_with_error(exited());
    ex.run_until_idle();
    ex.advance(Millis(10000));  // 4 closes at most in any 30 s
  }
  EXPECT_FALSE(manager->server_state("flaky")->circuit_open);
  EXPECT_EQ(manager->connection_status("flaky"), ConnectionStatus::connected);
}

TEST_F(ManagerHealth, Sec9_ReconnectFalse_StaysDisconnectedAndLaterCallsFailClearly) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha", {{"reconnect", false}})});
  ex.run_until_idle();
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  EXPECT_EQ(phase("alpha"), ServerPhase::disconnected);
  ex.advance(Millis(120000));
  EXPECT_EQ(farm.attempts("alpha"), 1u);

  std::optional<Result<json>> got;
  manager->tool_host()->call_tool("alpha", "read", json::object(), CallOptions{},
                                  [&](Result<json> r) { got = std::move(r); });
  std::optional<Status> waited;
  manager->wait_for_connection("alpha", {}, [&](Status s) { waited = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(got->ok());
  EXPECT_EQ(got->error().code, ErrorCode::not_connected);
  EXPECT_THAT(got->error().message, HasSubstr("Server \"alpha\""));
  EXPECT_THAT(got->error().message, HasSubstr("reconnect is off"));
  ASSERT_TRUE(waited.has_value());
  EXPECT_FALSE(waited->ok());
  EXPECT_EQ(farm.attempts("alpha"), 1u);
}

TEST_F(ManagerHealth, WaitForConnection_WhileReconnectingTriggersAnAttemptAtOnce) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha", {{"reconnect", {{"initialDelayMs", 20000}}}})});
  ex.run_until_idle();
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  std::optional<Status> waited;
  manager->wait_for_connection("alpha", {}, [&](Status s) { waited = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(waited.has_value());
  EXPECT_TRUE(waited->ok()) << *waited;
  EXPECT_EQ(farm.attempts("alpha"), 2u);
  EXPECT_EQ(ex.now(), TimePoint(Millis(0)));
}

TEST_F(ManagerHealth, ListChanged_DebouncesABurstIntoOneToolsList) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  FakeServer* s = farm.latest("alpha");
  ASSERT_EQ(s->requests("tools/list").size(), 1u);
  s->set_tools(tools_of({"read", "write"}));
  const int before = tools_changed;
  for (int i = 0; i < 5; ++i) {
    s->notify("notifications/tools/list_changed");
    ex.advance(Millis(20));
  }
  EXPECT_EQ(s->requests("tools/list").size(), 1u);  // still inside the debounce
  ex.advance(Millis(100));
  EXPECT_EQ(s->requests("tools/list").size(), 2u);
  EXPECT_THAT(tool_names(), ElementsAre("mcp_alpha_read", "mcp_alpha_write"));
  EXPECT_GT(tools_changed, before);
  EXPECT_THAT(store.entries().at(ToolCache::key_for("alpha")), HasSubstr("\"write\""));
  ex.advance(Millis(10000));
  EXPECT_EQ(s->requests("tools/list").size(), 2u);
}

TEST_F(ManagerHealth, ListChanged_StateSaysToolsRefreshingUntilTheReListLanded) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  EXPECT_FALSE(manager->server_state("alpha")->tools_refreshing);
  FakeServer* s = farm.latest("alpha");
  s->set_tools(tools_of({"read", "write"}));
  s->hold("tools/list");
  s->notify("notifications/tools/list_changed");
  ex.run_until_idle();
  EXPECT_TRUE(manager->server_state("alpha")->tools_refreshing);  // inside the debounce
  ex.advance(options.list_changed_debounce);
  ASSERT_EQ(s->requests("tools/list").size(), 2u);
  EXPECT_TRUE(manager->server_state("alpha")->tools_refreshing);  // the re-list is running
  answer_held_list("alpha", tools_of({"read", "write"}));
  EXPECT_FALSE(manager->server_state("alpha")->tools_refreshing);
  EXPECT_EQ(manager->server_state("alpha")->tool_count, 2u);
}

TEST_F(ManagerHealth, Health_FailedPingClosesTheConnectionAndReconnects) {
  options.health_interval = Millis(1000);
  farm.on_connect("alpha", [](FakeServer& s) {
    s.set_tools({tool("read")});
    s.hold("ping");
  });
  start({config("alpha", {{"timeout", 2000}})});
  ex.run_until_idle();
  ex.advance(Millis(1000));
  EXPECT_EQ(farm.latest("alpha")->requests("ping").size(), 1u);
  ex.advance(Millis(2000));  // the ping times out
  EXPECT_EQ(phase("alpha"), ServerPhase::reconnecting);
  EXPECT_THAT(manager->server_state("alpha")->last_error->message, HasSubstr("health check"));
  EXPECT_TRUE(farm.all("alpha")[0]->closed());
  ex.advance(Millis(500));
  EXPECT_EQ(farm.attempts("alpha"), 2u);
  EXPECT_EQ(manager->connection_status("alpha"), ConnectionStatus::connected);
}

TEST_F(ManagerHealth, Health_MethodNotFoundAnswerToPingCountsAsAlive) {
  options.health_interval = Millis(1000);
  farm.on_connect("alpha", [](FakeServer& s) {
    s.set_tools({tool("read")});
    s.on("ping", [](const json&) -> Result<json> {
      return Error::wire(rpc_code::kMethodNotFound, "Method not found");
    });
  });
  start({config("alpha")});
  ex.run_until_idle();
  ex.advance(Millis(3500));
  EXPECT_EQ(farm.latest("alpha")->requests("ping").size(), 3u);
  EXPECT_EQ(manager->connection_status("alpha"), ConnectionStatus::connected);
  EXPECT_EQ(farm.attempts("alpha"), 1u);
}

TEST_F(ManagerHealth, Health_OffByDefault_NoPings) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  ex.advance(Millis(600000));
  EXPECT_TRUE(farm.latest("alpha")->requests("ping").empty());
}

TEST_F(ManagerHealth, Status_EventsForReconnectingAndConnectedAgain) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  events.clear();
  farm.latest("alpha")->close_with_error(exited());
  ex.run_until_idle();
  ex.advance(Millis(500));
  std::vector<ServerPhase> phases;
  for (const auto& e : events) phases.push_back(e.phase);
  EXPECT_THAT(phases, ElementsAre(ServerPhase::reconnecting, ServerPhase::connected));
  ASSERT_TRUE(events[0].error.has_value());
  EXPECT_THAT(events[0].error->message, HasSubstr("exited"));
}

}  // namespace
}  // namespace manager_health_test
}  // namespace mcprt::testing
