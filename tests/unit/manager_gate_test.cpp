// The manager's per-server pipeline and startup gate (SPEC §5.2–§5.4, §9 rows about the
// gate), with FakeServers behind transport_factory and a ManualExecutor: time only moves
// when a test advances it, so "returns before 250 ms" is exact.

#include <gmock/gmock.h>

#include "manager_test_fixture.hpp"

namespace mcprt::testing {
namespace manager_gate_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

using ManagerGate = ManagerTest;

TEST_F(ManagerGate, Gate_ReturnsAsSoonAsEveryServerSettled_WithoutWaitingForTheGate) {
  serve("alpha", tools_of({"read", "write"}));
  serve("beta", tools_of({"search"}));
  start({config("beta"), config("alpha")});
  ex.run_until_idle();

  ASSERT_TRUE(gate.has_value());
  EXPECT_EQ(ex.now(), TimePoint(Millis(0)));  // the clock never moved to the 250 ms gate
  EXPECT_THAT(gate->connected, UnorderedElementsAre("alpha", "beta"));
  EXPECT_THAT(gate->errors, IsEmpty());
  EXPECT_THAT(tool_names_of(gate->tools),
              ElementsAre("mcp_alpha_read", "mcp_alpha_write", "mcp_beta_search"));
  EXPECT_EQ(manager->connection_status("alpha"), ConnectionStatus::connected);
  EXPECT_NE(manager->connection("beta"), nullptr);
  EXPECT_EQ(manager->server_state("alpha")->tool_count, 2u);
}

TEST_F(ManagerGate, Gate_FiresDoneExactlyOnceAndNeverInsideConnectServers) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  EXPECT_EQ(gate_calls, 0);
  ex.run_until_idle();
  ex.advance(Millis(1000));
  EXPECT_EQ(gate_calls, 1);
}

TEST_F(ManagerGate, Gate_EmptyConfigListAnswersAtOnceWithNothing) {
  start({});
  ex.run_until_idle();
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->tools, IsEmpty());
  EXPECT_THAT(gate->errors, IsEmpty());
}

TEST_F(ManagerGate, Sec9_ListPendingAtGateWithCacheHit_DeferredToolsReturnedAtTheGate) {
  serve("fast", tools_of({"ping"}));
  serve("slow", tools_of({"query"}), {"tools/list"});
  seed_cache(config("slow"), tools_of({"query", "schema"}));
  start({config("fast"), config("slow")});
  ex.run_until_idle();
  EXPECT_FALSE(gate.has_value());
  ex.advance(Millis(249));
  EXPECT_FALSE(gate.has_value());
  ex.advance(Millis(1));

  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->connected, ElementsAre("fast"));
  EXPECT_THAT(gate->deferred, ElementsAre("slow"));
  EXPECT_THAT(gate->pending, IsEmpty());
  EXPECT_THAT(tool_names_of(gate->tools),
              ElementsAre("mcp_fast_ping", "mcp_slow_query", "mcp_slow_schema"));
  EXPECT_TRUE(all_deferred("slow"));
  EXPECT_FALSE(manager->find_tool("mcp_fast_ping")->info().deferred);
  auto st = manager->server_state("slow");
  EXPECT_TRUE(st->tools_from_cache);
  EXPECT_EQ(st->status, ConnectionStatus::connecting);
}

TEST_F(ManagerGate, Sec9_ListPendingAtGateWithoutCache_GateWaitsForIt) {
  serve("slow", tools_of({"query"}), {"tools/list"});
  start({config("slow")});
  ex.advance(Millis(250));
  EXPECT_FALSE(gate.has_value());
  ex.advance(Millis(5000));
  EXPECT_FALSE(gate.has_value());

  answer_held_list("slow", tools_of({"query"}));
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->connected, ElementsAre("slow"));
  EXPECT_THAT(tool_names_of(gate->tools), ElementsAre("mcp_slow_query"));
  EXPECT_FALSE(manager->find_tool("mcp_slow_query")->info().deferred);
}

TEST_F(ManagerGate, Gate_WaitForUncachedFalse_ReturnsPendingAtTheGateAndToolsArriveLater) {
  options.wait_for_uncached = false;
  serve("slow", tools_of({"query"}), {"tools/list"});
  start({config("slow")});
  ex.advance(Millis(250));
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->pending, ElementsAre("slow"));
  EXPECT_THAT(gate->tools, IsEmpty());

  const int before = tools_changed;
  answer_held_list("slow", tools_of({"query"}));
  EXPECT_GT(tools_changed, before);
  EXPECT_THAT(tool_names(), ElementsAre("mcp_slow_query"));
  EXPECT_EQ(manager->connection_status("slow"), ConnectionStatus::connected);
}

TEST_F(ManagerGate, Sec9_ConnectFailure_RecordedForThatServerWhileOthersContinue) {
  serve("good", tools_of({"read"}));
  farm.on_connect("bad", [](FakeServer& s) {
    s.on("initialize", [](const json&) -> Result<json> {
      return Error::wire(rpc_code::kInternalError, "database is locked");
    });
  });
  farm.fail_connect("gone", Error::make(ErrorCode::transport, "command \"x\" not found in PATH"));
  start({config("good"), config("bad"), config("gone")});
  ex.run_until_idle();

  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->connected, ElementsAre("good"));
  ASSERT_EQ(gate->errors.count("bad"), 1u);
  EXPECT_THAT(gate->errors.at("bad").message, HasSubstr("Server \"bad\""));
  EXPECT_THAT(gate->errors.at("bad").message, HasSubstr("database is locked"));
  ASSERT_EQ(gate->errors.count("gone"), 1u);
  EXPECT_THAT(gate->errors.at("gone").message, HasSubstr("Server \"gone\": command"));
  EXPECT_THAT(tool_names(), ElementsAre("mcp_good_read"));
  EXPECT_EQ(phase("bad"), ServerPhase::failed);
  EXPECT_EQ(manager->connection_status("bad"), ConnectionStatus::disconnected);
  // A failure the gate reports is not also logged as a late failure.
  EXPECT_FALSE(log.has(LogLevel::warn, "database is locked"));
  // The failed transport was closed (nothing leaks).
  EXPECT_TRUE(farm.latest("bad")->closed());
}

TEST_F(ManagerGate, Sec9_ConnectTimeout_RecordedWithTheServersTimeout) {
  serve("hang", {}, {"initialize"});
  serve("good", tools_of({"read"}));
  start({config("hang", {{"timeout", 2000}}), config("good")});
  ex.advance(Millis(1999));
  EXPECT_FALSE(gate.has_value());
  ex.advance(Millis(1));
  ASSERT_TRUE(gate.has_value());
  ASSERT_EQ(gate->errors.count("hang"), 1u);
  EXPECT_EQ(gate->errors.at("hang").code, ErrorCode::timeout);
  EXPECT_THAT(gate->errors.at("hang").message, HasSubstr("Server \"hang\""));
  EXPECT_THAT(gate->connected, ElementsAre("good"));
}

TEST_F(ManagerGate, Sec9_InvalidServerConfig_SkippedWithItsValidationErrorAndNoConnection) {
  serve("good", tools_of({"read"}));
  ServerConfig bad = config("bad");
  bad.type = TransportType::http;
  bad.command.clear();
  bad.url = "ftp://nowhere";
  start({bad, config("good")});
  ex.run_until_idle();

  ASSERT_TRUE(gate.has_value());
  ASSERT_EQ(gate->errors.count("bad"), 1u);
  EXPECT_EQ(gate->errors.at("bad").code, ErrorCode::invalid_config);
  EXPECT_THAT(gate->errors.at("bad").message, HasSubstr("Server \"bad\""));
  EXPECT_EQ(farm.attempts("bad"), 0u);
  EXPECT_THAT(gate->connected, ElementsAre("good"));
  EXPECT_EQ(manager->sources().count("bad"), 1u);  // its source is still known
}

TEST_F(ManagerGate, Gate_LateSuccessReplacesOnlyThatServersSliceAndFiresToolsChanged) {
  serve("fast", tools_of({"ping"}));
  serve("slow", tools_of({"query"}), {"tools/list"});
  seed_cache(config("slow"), tools_of({"old_query"}));
  start({config("fast"), config("slow")});
  ex.advance(Millis(250));
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(tool_names(), ElementsAre("mcp_fast_ping", "mcp_slow_old_query"));
  const auto fast_tool = manager->find_tool("mcp_fast_ping");

  const int before = tools_changed;
  answer_held_list("slow", tools_of({"query", "stats"}));
  EXPECT_GT(tools_changed, before);
  EXPECT_THAT(tool_names(), ElementsAre("mcp_fast_ping", "mcp_slow_query", "mcp_slow_stats"));
  EXPECT_FALSE(all_deferred("slow"));
  EXPECT_FALSE(manager->server_state("slow")->tools_from_cache);
  // The other server's tool is the same definition, still live.
  EXPECT_EQ(manager->find_tool("mcp_fast_ping")->info().definition, fast_tool->info().definition);
  EXPECT_FALSE(manager->find_tool("mcp_fast_ping")->info().deferred);
  // And the cache now holds the live list.
  EXPECT_THAT(store.entries().at(ToolCache::key_for("slow")), HasSubstr("\"stats\""));
}

TEST_F(ManagerGate, Sec9_LateBackgroundToolLoadFailure_LoggedAfterTheGate) {
  serve("slow", tools_of({"query"}), {"tools/list"});
  seed_cache(config("slow"), tools_of({"query"}));
  start({config("slow")});
  ex.advance(Millis(250));
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->errors, IsEmpty());
  EXPECT_FALSE(log.has(LogLevel::warn, "Server \"slow\""));

  FakeServer* s = farm.latest("slow");
  s->reply_error(s->last_request("tools/list")["id"], rpc_code::kInternalError, "index corrupt");
  ex.run_until_idle();

  EXPECT_TRUE(log.has(LogLevel::warn, "Server \"slow\""));
  EXPECT_TRUE(log.has(LogLevel::warn, "index corrupt"));
  EXPECT_EQ(phase("slow"), ServerPhase::failed);
  EXPECT_THAT(tool_names(), IsEmpty());  // the cached tools of a server that failed are gone
}

TEST_F(ManagerGate, Tools_ThatRequireTaskSupportAreHiddenLiveAndCachedWithADebugLineNamingThem) {
  json task_only = tool("render");
  task_only["execution"] = {{"taskSupport", "required"}};
  json optional_task = tool("search");
  optional_task["execution"] = {{"taskSupport", "optional"}};
  // "slow" is still listing at the gate: its tools come from the cache.
  seed_cache(config("slow"), {tool("ping"), task_only});
  serve("slow", {tool("ping"), task_only}, {"tools/list"});
  serve("live", {tool("read"), task_only, optional_task});
  start({config("live"), config("slow")});
  ex.advance(options.startup_gate);
  ASSERT_TRUE(gate.has_value());
  EXPECT_EQ(tool_names_of(gate->tools),
            (std::vector<std::string>{"mcp_live_read", "mcp_live_search", "mcp_slow_ping"}));
  EXPECT_TRUE(log.has(LogLevel::debug, "Server \"live\": hides 1 tool that requires task support"));
  EXPECT_TRUE(log.has(LogLevel::debug, "Server \"slow\": hides 1 tool that requires task support"));
  EXPECT_TRUE(log.has(LogLevel::debug, "this host runs no tasks): render"));
  // The cache keeps the raw list: a host with task support gets the tool from it.
  EXPECT_THAT(store.entries().at(ToolCache::key_for("live")), HasSubstr("\"render\""));
}

TEST_F(ManagerGate, Tools_ThatRequireTaskSupportAreListedWhenTheHostDeclaresIt) {
  options.tools.task_support = true;
  json task_only = tool("render");
  task_only["execution"] = {{"taskSupport", "required"}};
  serve("live", {tool("read"), task_only});
  start({config("live")});
  ex.run_until_idle();
  EXPECT_EQ(tool_names(), (std::vector<std::string>{"mcp_live_read", "mcp_live_render"}));
  EXPECT_FALSE(log.has(LogLevel::debug, "task support"));
}

TEST_F(ManagerGate, Pipeline_SuccessfulListIsWrittenToTheCache) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  ASSERT_EQ(store.entries().count(ToolCache::key_for("alpha")), 1u);
  auto hit = decode_cache_entry(store.entries().at(ToolCache::key_for("alpha")), config("alpha"),
                                kWallMs);
  ASSERT_TRUE(hit.has_value());
  ASSERT_EQ(hit->tools.size(), 1u);
  EXPECT_EQ(hit->tools[0]["name"], "read");
}

// Answers every token request with "tok-<server>", later (async contract).
class FakeAuthStorage final : public AuthStorage {
 public:
  explicit FakeAuthStorage(Executor& ex) : ex_(ex) {}
  void get_token(const AuthRequest& request, TokenCallback done) override {
    ex_.post([done = std::move(done), name = request.server_name] {
      done(std::optional<std::string>("tok-" + name));
    });
  }
  void refresh_token(const AuthRequest& request, const std::string&, TokenCallback done) override {
    get_token(request, std::move(done));
  }

 private:
  Executor& ex_;
};

TEST_F(ManagerGate, Pipeline_ConnectsWithConnectTimeValuesAndStdioAuthButCachesUnresolved) {
  FakeAuthStorage auth(ex);
  auth_storage = &auth;
  env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "SECRET_NAME") return std::string("s3cret");
    return std::nullopt;
  };
  serve("alpha", tools_of({"read"}));
  const ServerConfig cfg =
      config("alpha", {{"env", {{"API_KEY", "SECRET_NAME"}}}, {"auth", {{"type", "bearer"}}}});
  start({cfg});
  ex.run_until_idle();

  auto used = farm.last_config("alpha");
  ASSERT_TRUE(used.has_value());
  EXPECT_EQ(used->env.at("API_KEY"), "s3cret");
  EXPECT_EQ(used->env.at("OAUTH_ACCESS_TOKEN"), "tok-alpha");
  EXPECT_EQ(manager->connection_status("alpha"), ConnectionStatus::connected);
  // The cache entry is keyed by the unresolved config and holds no secret.
  const std::string& entry = store.entries().at(ToolCache::key_for("alpha"));
  EXPECT_TRUE(decode_cache_entry(entry, cfg, kWallMs).has_value());
  EXPECT_EQ(entry.find("s3cret"), std::string::npos);
  EXPECT_EQ(entry.find("tok-alpha"), std::string::npos);
}

TEST_F(ManagerGate, Pipeline_AlreadyConnectedServerIsSkippedOnASecondCall) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  gate.reset();
  start({config("alpha")});
  ex.run_until_idle();
  ASSERT_TRUE(gate.has_value());
  EXPECT_EQ(farm.attempts("alpha"), 1u);
  EXPECT_THAT(gate->connected, ElementsAre("alpha"));
}

TEST_F(ManagerGate, Pipeline_ConnectingOneMoreServerLeavesTheConnectedOnesAlone) {
  serve("alpha", tools_of({"read"}));
  serve("beta", tools_of({"search"}));
  start({config("alpha")});
  ex.run_until_idle();
  FakeServer* alpha = farm.latest("alpha");
  gate.reset();
  start({config("beta")});
  ex.run_until_idle();
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->connected, ElementsAre("beta"));
  EXPECT_EQ(farm.attempts("alpha"), 1u);
  EXPECT_EQ(farm.latest("alpha"), alpha);
  EXPECT_FALSE(alpha->closed());
  EXPECT_EQ(alpha->requests("initialize").size(), 1u);
  EXPECT_EQ(alpha->requests("tools/list").size(), 1u);
  EXPECT_THAT(tool_names(), ElementsAre("mcp_alpha_read", "mcp_beta_search"));
}

TEST_F(ManagerGate, Status_EventsForConnectingConnectedAndFailed) {
  serve("alpha", tools_of({"read", "write"}));
  farm.fail_connect("broken", Error::make(ErrorCode::transport, "spawn failed"));
  start({config("alpha"), config("broken")});
  ex.run_until_idle();

  auto find_event = [&](const std::string& server, ServerPhase p) -> const StatusEvent* {
    for (const auto& e : events) {
      if (e.server == server && e.phase == p) return &e;
    }
    return nullptr;
  };
  ASSERT_NE(find_event("alpha", ServerPhase::connecting), nullptr);
  const StatusEvent* connected = find_event("alpha", ServerPhase::connected);
  ASSERT_NE(connected, nullptr);
  EXPECT_EQ(connected->tool_count, 2u);
  EXPECT_EQ(connected->source.provider_name, "Test");
  const StatusEvent* failed = find_event("broken", ServerPhase::failed);
  ASSERT_NE(failed, nullptr);
  ASSERT_TRUE(failed->error.has_value());
  EXPECT_THAT(failed->error->message, HasSubstr("spawn failed"));
}

TEST_F(ManagerGate, ToolHost_CallsTheLiveSessionUnderTheServersToolTimeout) {
  farm.on_connect("alpha", [](FakeServer& s) {
    s.set_tools({tool("slow")});
    s.hold("tools/call");
  });
  start({config("alpha", {{"toolTimeout", 1500}})});
  ex.run_until_idle();
  std::optional<Result<json>> got;
  manager->tool_host()->call_tool("alpha", "slow", json::object(), CallOptions{},
                                  [&](Result<json> r) { got = std::move(r); });
  ex.advance(Millis(1499));
  EXPECT_FALSE(got.has_value());
  ex.advance(Millis(1));
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(got->ok());
  EXPECT_EQ(got->error().code, ErrorCode::timeout);
}

TEST_F(ManagerGate, ToolHost_CallToUnknownServerFailsLaterWithNotConnectedNamingIt) {
  make();
  std::optional<Result<json>> got;
  manager->tool_host()->call_tool("nope", "x", json::object(), CallOptions{},
                                  [&](Result<json> r) { got = std::move(r); });
  EXPECT_FALSE(got.has_value());  // never inside the call
  ex.run_until_idle();
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(got->ok());
  EXPECT_EQ(got->error().code, ErrorCode::not_connected);
  EXPECT_THAT(got->error().message, HasSubstr("Server \"nope\""));
}

TEST_F(ManagerGate, WaitForConnection_CompletesWhenThePendingServerConnects) {
  serve("slow", tools_of({"query"}), {"tools/list"});
  start({config("slow")});
  ex.run_until_idle();
  std::optional<Status> waited;
  manager->wait_for_connection("slow", {}, [&](Status s) { waited = std::move(s); });
  ex.advance(Millis(100));
  EXPECT_FALSE(waited.has_value());
  answer_held_list("slow", tools_of({"query"}));
  ASSERT_TRUE(waited.has_value());
  EXPECT_TRUE(waited->ok()) << *waited;
}

TEST_F(ManagerGate, WaitForConnection_TimesOutAfterTheServersTimeout) {
  serve("slow", tools_of({"query"}), {"tools/list"});
  start({config("slow", {{"timeout", 60000}})});
  ex.run_until_idle();
  // The wait has its own bound even when the connect attempt would take longer.
  std::optional<Status> waited;
  manager->wait_for_connection("slow", {}, [&](Status s) { waited = std::move(s); });
  ex.advance(Millis(59999));
  EXPECT_FALSE(waited.has_value());
  ex.advance(Millis(1));
  ASSERT_TRUE(waited.has_value());
  ASSERT_FALSE(waited->ok());
  EXPECT_THAT(waited->error().message, HasSubstr("Server \"slow\""));
}

TEST_F(ManagerGate, WaitForConnection_AbortSignalEndsTheWaitWithAborted) {
  serve("slow", tools_of({"query"}), {"tools/list"});
  start({config("slow")});
  ex.run_until_idle();
  AbortController abort;
  std::optional<Status> waited;
  manager->wait_for_connection("slow", abort.signal(), [&](Status s) { waited = std::move(s); });
  ex.run_until_idle();
  abort.abort();
  ex.run_until_idle();
  ASSERT_TRUE(waited.has_value());
  ASSERT_FALSE(waited->ok());
  EXPECT_EQ(waited->error().code, ErrorCode::aborted);
}

TEST_F(ManagerGate, WaitForConnection_UnknownServerFailsClearly) {
  make();
  std::optional<Status> waited;
  manager->wait_for_connection("ghost", {}, [&](Status s) { waited = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(waited.has_value());
  ASSERT_FALSE(waited->ok());
  EXPECT_THAT(waited->error().message, HasSubstr("Server \"ghost\": unknown server"));
}

}  // namespace
}  // namespace manager_gate_test
}  // namespace mcprt::testing
