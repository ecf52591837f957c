// The manager's shutdown (SPEC §5.6): disconnect_server, disconnect_all with the epoch
// guard, reconnect_server, and destruction with work in flight.

#include <gmock/gmock.h>

#include "manager_test_fixture.hpp"

namespace mcprt::testing {
namespace manager_shutdown_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using ManagerShutdown = ManagerTest;

TEST_F(ManagerShutdown, DisconnectServer_RemovesOnlyItsToolsClosesItAndNeverReconnects) {
  serve("alpha", tools_of({"read"}));
  serve("beta", tools_of({"search"}));
  start({config("alpha"), config("beta")});
  ex.run_until_idle();
  const int before = tools_changed;
  bool done = false;
  manager->disconnect_server("alpha", [&] { done = true; });
  EXPECT_FALSE(done);
  ex.run_until_idle();

  EXPECT_TRUE(done);
  EXPECT_TRUE(farm.latest("alpha")->closed());
  EXPECT_FALSE(farm.latest("beta")->closed());
  EXPECT_THAT(tool_names(), ElementsAre("mcp_beta_search"));
  EXPECT_GT(tools_changed, before);
  EXPECT_EQ(phase("alpha"), ServerPhase::disconnected);
  EXPECT_EQ(manager->sources().count("alpha"), 0u);
  EXPECT_EQ(manager->connection_status("alpha"), ConnectionStatus::disconnected);
  ex.advance(Millis(120000));
  EXPECT_EQ(farm.attempts("alpha"), 1u);

  std::optional<Status> waited;
  manager->wait_for_connection("alpha", {}, [&](Status s) { waited = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(waited.has_value());
  ASSERT_FALSE(waited->ok());
  EXPECT_THAT(waited->error().message, HasSubstr("Server \"alpha\": was disconnected"));
}

TEST_F(ManagerShutdown, DisconnectServer_LeavesADisconnectedRowUntilItIsConnectedAgain) {
  serve("alpha", tools_of({"read", "write"}));
  serve("beta", tools_of({"search"}));
  start({config("alpha"), config("beta")});
  ex.run_until_idle();
  const std::string hash = manager->server_state("alpha")->config_hash;
  ex.advance(Millis(5000));
  manager->disconnect_server("alpha");
  ex.run_until_idle();

  auto row = manager->server_state("alpha");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->name, "alpha");
  EXPECT_EQ(row->phase, ServerPhase::disconnected);
  EXPECT_EQ(row->status, ConnectionStatus::disconnected);
  EXPECT_EQ(row->tool_count, 0u);
  EXPECT_FALSE(row->last_error.has_value());
  EXPECT_EQ(row->source.path, "/test/mcp.json");
  EXPECT_EQ(row->config_hash, hash);
  EXPECT_EQ(row->since, ex.now());
  std::vector<std::string> listed;
  for (const auto& st : manager->server_states())
    listed.push_back(st.name + ":" + to_string(st.phase));
  EXPECT_THAT(listed, ElementsAre("alpha:disconnected", "beta:connected"));
  std::optional<Status> reconnected;
  manager->reconnect_server("alpha", [&](Status s) { reconnected = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(reconnected.has_value());
  ASSERT_FALSE(reconnected->ok());
  EXPECT_THAT(reconnected->error().message, HasSubstr("was disconnected"));

  start({config("alpha")});
  ex.run_until_idle();
  EXPECT_EQ(phase("alpha"), ServerPhase::connected);
  EXPECT_EQ(manager->server_state("alpha")->tool_count, 2u);
  EXPECT_EQ(farm.attempts("alpha"), 2u);
  EXPECT_EQ(farm.attempts("beta"), 1u);
}

TEST_F(ManagerShutdown, ServerStates_ListsLiveServersAndDisconnectedRowsTogetherInNameOrder) {
  for (const char* n : {"a", "b", "c", "d", "e"}) serve(n, tools_of({"x"}));
  start({config("e"), config("d"), config("c"), config("b"), config("a")});
  ex.run_until_idle();
  auto listed = [&] {
    std::vector<std::string> out;
    for (const auto& st : manager->server_states())
      out.push_back(st.name + ":" + to_string(st.phase));
    return out;
  };
  manager->disconnect_server("a");
  manager->disconnect_server("c");
  manager->disconnect_server("e");
  ex.run_until_idle();
  EXPECT_THAT(listed(), ElementsAre("a:disconnected", "b:connected", "c:disconnected",
                                    "d:connected", "e:disconnected"));
  manager->disconnect_server("b");
  manager->disconnect_server("d");
  ex.run_until_idle();
  EXPECT_THAT(listed(), ElementsAre("a:disconnected", "b:disconnected", "c:disconnected",
                                    "d:disconnected", "e:disconnected"));
}

TEST_F(ManagerShutdown, RemoveServer_ClosesItAndForgetsItLeavingTheOthersAlone) {
  serve("alpha", tools_of({"read"}));
  serve("beta", tools_of({"search"}));
  start({config("alpha"), config("beta")});
  ex.run_until_idle();
  bool done = false;
  manager->remove_server("alpha", [&] { done = true; });
  ex.run_until_idle();

  EXPECT_TRUE(done);
  EXPECT_TRUE(farm.latest("alpha")->closed());
  EXPECT_FALSE(manager->server_state("alpha").has_value());
  ASSERT_EQ(manager->server_states().size(), 1u);
  EXPECT_EQ(manager->server_states()[0].name, "beta");
  EXPECT_THAT(tool_names(), ElementsAre("mcp_beta_search"));
  EXPECT_EQ(events.back().server, "alpha");
  EXPECT_EQ(events.back().phase, ServerPhase::disconnected);
  EXPECT_FALSE(farm.latest("beta")->closed());
  EXPECT_EQ(farm.attempts("beta"), 1u);
}

TEST_F(ManagerShutdown, RemoveServer_ForgetsADisconnectedRowAndDisconnectAllForgetsEveryRow) {
  serve("a", tools_of({"x"}));
  serve("b", tools_of({"y"}));
  start({config("a"), config("b")});
  ex.run_until_idle();
  manager->disconnect_server("a");
  manager->disconnect_server("b");
  ex.run_until_idle();
  ASSERT_EQ(manager->server_states().size(), 2u);
  manager->remove_server("a");
  ex.run_until_idle();
  EXPECT_FALSE(manager->server_state("a").has_value());
  EXPECT_TRUE(manager->server_state("b").has_value());
  manager->disconnect_all();
  ex.run_until_idle();
  EXPECT_THAT(manager->server_states(), IsEmpty());
}

TEST_F(ManagerShutdown, DisconnectServer_FailsItsWaitersAndEmitsDisconnected) {
  serve("slow", tools_of({"q"}), {"tools/list"});
  start({config("slow")});
  ex.run_until_idle();
  std::optional<Status> waited;
  manager->wait_for_connection("slow", {}, [&](Status s) { waited = std::move(s); });
  manager->disconnect_server("slow");
  ex.run_until_idle();
  ASSERT_TRUE(waited.has_value());
  EXPECT_FALSE(waited->ok());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().phase, ServerPhase::disconnected);
  EXPECT_EQ(events.back().server, "slow");
}

TEST_F(ManagerShutdown, DisconnectAll_ClosesEveryConnectionAtOnceAndClearsEverything) {
  serve("a", tools_of({"x"}));
  serve("b", tools_of({"y"}));
  serve("c", tools_of({"z"}), {"initialize"});  // still connecting
  start({config("a"), config("b"), config("c")});
  ex.run_until_idle();
  bool done = false;
  manager->disconnect_all([&] { done = true; });
  ex.run_until_idle();

  EXPECT_TRUE(done);
  for (const char* n : {"a", "b", "c"}) EXPECT_TRUE(farm.latest(n)->closed()) << n;
  EXPECT_THAT(manager->tools(), IsEmpty());
  EXPECT_THAT(manager->sources(), IsEmpty());
  EXPECT_THAT(manager->server_states(), IsEmpty());
  // The open gate answered with what was left.
  ASSERT_TRUE(gate.has_value());
  ex.advance(Millis(120000));
  EXPECT_EQ(farm.attempts("a"), 1u);
  EXPECT_EQ(farm.attempts("c"), 1u);
}

TEST_F(ManagerShutdown, DisconnectAll_EpochGuard_ConnectFinishingAfterwardsIsClosedAndIgnored) {
  serve("late", tools_of({"x"}), {"initialize"});
  start({config("late")});
  ex.run_until_idle();
  FakeServer* server = farm.latest("late");
  const json init = server->last_request("initialize");
  ASSERT_FALSE(init.is_null());

  bool done = false;
  manager->disconnect_all([&] { done = true; });
  // The server answers initialize after the disconnect (the answer crosses the close).
  server->reply(init["id"], {{"protocolVersion", "2025-11-25"},
                             {"capabilities", json::object()},
                             {"serverInfo", {{"name", "late"}}}});
  ex.run_until_idle();
  ex.advance(Millis(60000));

  EXPECT_TRUE(done);
  EXPECT_TRUE(server->closed());
  EXPECT_TRUE(server->requests("tools/list").empty());
  EXPECT_FALSE(manager->server_state("late").has_value());
  EXPECT_THAT(manager->tools(), IsEmpty());
  EXPECT_EQ(manager->connection("late"), nullptr);
}

TEST_F(ManagerShutdown, DisconnectAll_ThenConnectServersAgainStartsFresh) {
  serve("a", tools_of({"x"}));
  start({config("a")});
  ex.run_until_idle();
  manager->disconnect_all();
  ex.run_until_idle();
  gate.reset();
  start({config("a")});
  ex.run_until_idle();
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->connected, ElementsAre("a"));
  EXPECT_EQ(farm.attempts("a"), 2u);
  EXPECT_THAT(tool_names(), ElementsAre("mcp_a_x"));
}

TEST_F(ManagerShutdown, DisconnectAll_WithNothingConnectedStillCompletesLater) {
  make();
  bool done = false;
  manager->disconnect_all([&] { done = true; });
  EXPECT_FALSE(done);
  ex.run_until_idle();
  EXPECT_TRUE(done);
}

TEST_F(ManagerShutdown, ReconnectServer_ClosesTheLiveConnectionAndConnectsAnew) {
  serve("a", tools_of({"x"}));
  start({config("a")});
  ex.run_until_idle();
  FakeServer* first = farm.latest("a");
  std::optional<Status> result;
  manager->reconnect_server("a", [&](Status s) { result = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok()) << *result;
  EXPECT_TRUE(first->closed());
  EXPECT_EQ(farm.attempts("a"), 2u);
  EXPECT_EQ(manager->connection_status("a"), ConnectionStatus::connected);
}

// A reconnect still waiting for its server (here: initialize never answered) when the
// manager goes (a host replacing it on reload) ends once with `closed`: a caller waiting on
// it (an auth login, /mcp reconnect) is not left hanging.
TEST_F(ManagerShutdown, Destruction_EndsAReconnectStillWaitingWithClosed) {
  serve("a", tools_of({"x"}));
  start({config("a")});
  ex.run_until_idle();
  farm.on_connect("a", [](FakeServer& s) {
    s.set_tools({tool("x")});
    s.hold("initialize");
  });
  std::vector<Status> reconnected;
  manager->reconnect_server("a", [&](Status s) { reconnected.push_back(std::move(s)); });
  ex.run_until_idle();
  EXPECT_TRUE(reconnected.empty()) << "initialize is held: the attempt is still waiting";

  manager.reset();
  ex.run_until_idle();
  ASSERT_EQ(reconnected.size(), 1u);
  EXPECT_EQ(reconnected[0].error().code, ErrorCode::closed) << reconnected[0];
  EXPECT_THAT(reconnected[0].error().message, HasSubstr("a"));
}

TEST_F(ManagerShutdown, Destruction_WithEverythingInFlight_NoCallbackAfterwardsAndNoTimersLeft) {
  options.health_interval = Millis(1000);
  serve("live", tools_of({"x"}));
  serve("hung", tools_of({"y"}), {"initialize"});
  serve("dropped", tools_of({"z"}));
  serve("busy", tools_of({"w"}));
  farm.on_connect("busy", [](FakeServer& s) {
    s.set_tools({tool("w")});
    s.hold("tools/call");
  });
  start({config("live"), config("hung"), config("dropped"), config("busy")});
  ex.run_until_idle();
  farm.latest("dropped")->close_with_error(Error::make(ErrorCode::exited, "gone"));
  ex.run_until_idle();  // "dropped" now waits for its retry timer

  int late_callbacks = 0;
  manager->on_tools_changed([&] { ++late_callbacks; });
  manager->on_status([&](const StatusEvent&) { ++late_callbacks; });
  std::vector<Status> waits;
  manager->wait_for_connection("hung", {}, [&](Status s) { waits.push_back(s); });
  manager->disconnect_server("live", [&] { ++late_callbacks; });
  std::vector<Result<json>> calls;
  manager->tool_host()->call_tool("busy", "w", json::object(), CallOptions{},
                                  [&](Result<json> r) { calls.push_back(r); });
  auto host = manager->tool_host();
  const int gates_before = gate_calls;

  manager.reset();
  ex.run_until_idle();
  ex.advance(Millis(600000));

  EXPECT_EQ(late_callbacks, 0);
  EXPECT_EQ(gate_calls, gates_before);
  // What tools wait on ends once with `closed` instead of hanging.
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].error().code, ErrorCode::closed) << waits[0];
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].error().code, ErrorCode::closed) << calls[0];
  EXPECT_EQ(ex.pending_timers(), 0u);
  for (const char* n : {"live", "hung", "dropped", "busy"}) {
    for (FakeServer* s : farm.all(n)) EXPECT_TRUE(s->closed()) << n;
  }
  // A tool host that outlives the manager answers "not connected" instead of crashing.
  std::optional<Result<json>> got;
  host->call_tool("live", "x", json::object(), CallOptions{}, [&](Result<json> r) { got = r; });
  ex.run_until_idle();
  ASSERT_TRUE(got.has_value());
  EXPECT_FALSE(got->ok());
}

}  // namespace
}  // namespace manager_shutdown_test
}  // namespace mcprt::testing
