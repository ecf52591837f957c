// The needs-auth phase (SPEC §13): a connect, tools/list or live transport that fails with
// ErrorCode::needs_auth puts the server in ServerPhase::needs_auth — never `failed`, no
// retry, backoff or breaker churn — with its tools (its own, else the cache's) listed as
// deferred tools that fail at once with the login hint, until reconnect_server after a
// login. Other servers are untouched. Time moves only when the test advances it.

#include <gmock/gmock.h>

#include "manager_test_fixture.hpp"
#include "mcprt/http_transport.hpp"

namespace mcprt::testing {
namespace manager_auth_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr const char* kHint = "run `mcprt auth login alpha`";

Error login_needed() {
  return Error::make(ErrorCode::needs_auth,
                     std::string("Server \"alpha\": the server needs an authorization; ") + kHint);
}

class ManagerAuth : public ManagerTest {
 protected:
  // Each new connection to `name` serves a tool `read` that answers "ok".
  void serve_read(const std::string& name) {
    farm.on_connect(name, [](FakeServer& s) {
      s.set_tools({tool("read")});
      s.on_tool("read", [](const json&) -> Result<json> {
        return json{{"content", {{{"type", "text"}, {"text", "ok"}}}}};
      });
    });
  }

  std::vector<ServerPhase> phases_of(const std::string& server) const {
    std::vector<ServerPhase> out;
    for (const auto& e : events) {
      if (e.server == server) out.push_back(e.phase);
    }
    return out;
  }

  // Calls the registered tool `name` as an agent would; the outcome lands in the result.
  std::optional<Result<ToolResult>> call_registered(const std::string& name) {
    std::optional<Result<ToolResult>> got;
    auto t = manager->find_tool(name);
    EXPECT_NE(t, nullptr) << name;
    if (!t) return got;
    t->call(json::object(), {}, [&](Result<ToolResult> r) { got = std::move(r); });
    ex.run_until_idle();  // no time passes
    return got;
  }
};

TEST_F(ManagerAuth, ToStringIsNeedsAuth) {
  EXPECT_STREQ(to_string(ServerPhase::needs_auth), "needs-auth");
}

TEST_F(ManagerAuth, ConnectNeedingAuth_PhaseNeedsAuthNeverFailed_NoRetryOrBackoff) {
  farm.fail_connect("alpha", login_needed());
  start({config("alpha")});
  ex.run_until_idle();

  ASSERT_EQ(gate_calls, 1);
  EXPECT_THAT(gate->needs_auth, ElementsAre("alpha"));
  ASSERT_TRUE(gate->errors.count("alpha"));
  EXPECT_EQ(gate->errors["alpha"].code, ErrorCode::needs_auth);
  EXPECT_THAT(gate->errors["alpha"].message, HasSubstr(kHint));

  auto st = manager->server_state("alpha");
  EXPECT_EQ(st->phase, ServerPhase::needs_auth);
  EXPECT_EQ(st->status, ConnectionStatus::disconnected);
  EXPECT_FALSE(st->circuit_open);
  ASSERT_TRUE(st->last_error.has_value());
  EXPECT_EQ(st->last_error->code, ErrorCode::needs_auth);
  EXPECT_THAT(phases_of("alpha"), ElementsAre(ServerPhase::connecting, ServerPhase::needs_auth));
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().error.has_value());
  EXPECT_THAT(events.back().error->message, HasSubstr(kHint));

  // Nothing changes until the user logs in: no attempt, however long we wait.
  ex.advance(Millis(10 * 60 * 1000));
  EXPECT_EQ(farm.attempts("alpha"), 1u);
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
  EXPECT_THAT(phases_of("alpha"), ElementsAre(ServerPhase::connecting, ServerPhase::needs_auth));
}

TEST_F(ManagerAuth, InitializeAnsweredWithNeedsAuth_IsNeedsAuthToo) {
  // The transport fails the handshake itself (a 401 the OAuth client could not answer).
  farm.on_connect("alpha", [](FakeServer& s) { s.hold("initialize"); });
  start({config("alpha")});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::connecting);
  farm.latest("alpha")->close_with_error(login_needed());
  ex.run_until_idle();

  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
  EXPECT_EQ(manager->server_state("alpha")->last_error->code, ErrorCode::needs_auth);
  ex.advance(Millis(60000));
  EXPECT_EQ(farm.attempts("alpha"), 1u);
}

TEST_F(ManagerAuth, CachedToolsStayListedAsDeferred) {
  ServerConfig cfg = config("alpha");
  seed_cache(cfg, tools_of({"read", "write"}));
  farm.fail_connect("alpha", login_needed());
  start({cfg});
  ex.run_until_idle();

  ASSERT_EQ(gate_calls, 1);
  EXPECT_THAT(tool_names_of(gate->tools), ElementsAre("mcp_alpha_read", "mcp_alpha_write"));
  EXPECT_THAT(gate->needs_auth, ElementsAre("alpha"));
  EXPECT_TRUE(all_deferred("alpha"));
  auto st = manager->server_state("alpha");
  EXPECT_EQ(st->phase, ServerPhase::needs_auth);
  EXPECT_TRUE(st->tools_from_cache);
  EXPECT_EQ(st->tool_count, 2u);
}

TEST_F(ManagerAuth, CallingADeferredToolAnswersAtOnceWithTheLoginHint) {
  ServerConfig cfg = config("alpha");
  seed_cache(cfg, tools_of({"read"}));
  farm.fail_connect("alpha", login_needed());
  start({cfg});
  ex.run_until_idle();

  auto got = call_registered("mcp_alpha_read");
  ASSERT_TRUE(got.has_value()) << "the call must answer without any time passing";
  ASSERT_TRUE(got->ok());  // tool outcomes are results; the failure is is_error
  EXPECT_TRUE(got->value().is_error);
  EXPECT_THAT(got->value().text, HasSubstr("Server \"alpha\""));
  EXPECT_THAT(got->value().text, HasSubstr(kHint));

  // Straight through the host, too: the error is the needs_auth one.
  std::optional<Result<json>> direct;
  manager->tool_host()->call_tool("alpha", "read", json::object(), CallOptions{},
                                  [&](Result<json> r) { direct = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(direct.has_value());
  ASSERT_FALSE(direct->ok());
  EXPECT_EQ(direct->error().code, ErrorCode::needs_auth);
  EXPECT_THAT(direct->error().message, HasSubstr(kHint));

  std::optional<Status> waited;
  manager->wait_for_connection("alpha", AbortSignal{}, [&](Status s) { waited = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(waited.has_value());
  ASSERT_FALSE(waited->ok());
  EXPECT_EQ(waited->error().code, ErrorCode::needs_auth);

  // None of them tried to connect again.
  EXPECT_EQ(farm.attempts("alpha"), 1u);
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
}

TEST_F(ManagerAuth, OtherServersAreUntouched) {
  farm.fail_connect("alpha", login_needed());
  serve_read("beta");
  start({config("alpha"), config("beta")});
  ex.run_until_idle();

  EXPECT_THAT(gate->connected, ElementsAre("beta"));
  EXPECT_THAT(gate->needs_auth, ElementsAre("alpha"));
  EXPECT_EQ(gate->errors.count("beta"), 0u);
  EXPECT_EQ(phase("beta"), ServerPhase::connected);
  EXPECT_FALSE(all_deferred("beta"));
  auto got = call_registered("mcp_beta_read");
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_FALSE(got->value().is_error);
  EXPECT_EQ(got->value().text, "ok");
}

TEST_F(ManagerAuth, ReconnectServerAfterLogin_ConnectsAndListsLiveTools) {
  ServerConfig cfg = config("alpha");
  seed_cache(cfg, tools_of({"read"}));
  farm.fail_connect("alpha", login_needed());
  start({cfg});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::needs_auth);

  // The user logged in: the server now accepts the connection.
  farm.fail_connect("alpha", std::nullopt);
  serve_read("alpha");
  std::optional<Status> reconnected;
  manager->reconnect_server("alpha", [&](Status s) { reconnected = std::move(s); });
  ex.run_until_idle();

  ASSERT_TRUE(reconnected.has_value());
  EXPECT_TRUE(reconnected->ok()) << reconnected->error();
  auto st = manager->server_state("alpha");
  EXPECT_EQ(st->phase, ServerPhase::connected);
  EXPECT_FALSE(st->last_error.has_value());
  EXPECT_FALSE(st->tools_from_cache);
  EXPECT_FALSE(all_deferred("alpha"));
  EXPECT_THAT(phases_of("alpha"), ElementsAre(ServerPhase::connecting, ServerPhase::needs_auth,
                                              ServerPhase::connecting, ServerPhase::connected));
  auto got = call_registered("mcp_alpha_read");
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_EQ(got->value().text, "ok");
}

TEST_F(ManagerAuth, ReconnectWhileStillUnauthorized_AnswersNeedsAuthAgain) {
  farm.fail_connect("alpha", login_needed());
  start({config("alpha")});
  ex.run_until_idle();
  std::optional<Status> reconnected;
  manager->reconnect_server("alpha", [&](Status s) { reconnected = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(reconnected.has_value());
  ASSERT_FALSE(reconnected->ok());
  EXPECT_EQ(reconnected->error().code, ErrorCode::needs_auth);
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
  EXPECT_EQ(farm.attempts("alpha"), 2u);
  ex.advance(Millis(60000));
  EXPECT_EQ(farm.attempts("alpha"), 2u);
}

TEST_F(ManagerAuth, LiveConnectionLosingItsAuthorization_NoReconnectNoBreakerCount) {
  serve_read("alpha");
  start({config("alpha")});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::connected);

  farm.latest("alpha")->close_with_error(login_needed());
  ex.run_until_idle();

  auto st = manager->server_state("alpha");
  EXPECT_EQ(st->phase, ServerPhase::needs_auth);
  EXPECT_FALSE(st->circuit_open);
  EXPECT_EQ(st->last_error->code, ErrorCode::needs_auth);
  EXPECT_TRUE(all_deferred("alpha"));  // its live tools stay, deferred
  EXPECT_FALSE(st->tools_from_cache);
  ex.advance(Millis(10 * 60 * 1000));
  EXPECT_EQ(farm.attempts("alpha"), 1u);
  auto got = call_registered("mcp_alpha_read");
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_TRUE(got->value().is_error);
  EXPECT_THAT(got->value().text, HasSubstr(kHint));
}

// What the HTTP transport relays when a live request's token refresh needed the user:
// the OAuth client's needs_auth error as a JSON-RPC error response for that request.
Result<json> relayed_needs_auth(int http_status) {
  return Error::wire(kHttpTransportErrorCode,
                     std::string("Server \"alpha\": needs an OAuth sign-in (...); ") + kHint,
                     json{{"server", "alpha"}, {"status", http_status}, {"transport_error", "needs_auth"}});
}

TEST_F(ManagerAuth, LiveCallWhoseAuthorizationIsGone_EndsTheConnection_NeedsAuth) {
  farm.on_connect("alpha", [](FakeServer& s) {
    s.set_tools({tool("read")});
    s.on_tool("read", [](const json&) { return relayed_needs_auth(401); });
  });
  start({config("alpha")});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::connected);
  auto got = call_registered("mcp_alpha_read");
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_TRUE(got->value().is_error);
  EXPECT_EQ(got->value().error_code, ErrorCode::needs_auth);
  EXPECT_THAT(got->value().text, HasSubstr(kHint));
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
  EXPECT_TRUE(all_deferred("alpha"));
  ex.advance(Millis(10 * 60 * 1000));
  EXPECT_EQ(farm.attempts("alpha"), 1u) << "no reconnect until a login";
}

TEST_F(ManagerAuth, LiveCallAskingForMoreScopes_KeepsTheConnection) {
  farm.on_connect("alpha", [](FakeServer& s) {
    s.set_tools({tool("read"), tool("write")});
    s.on_tool("read", [](const json&) -> Result<json> {
      return json{{"content", {{{"type", "text"}, {"text", "ok"}}}}};
    });
    s.on_tool("write", [](const json&) { return relayed_needs_auth(403); });
  });
  start({config("alpha")});
  ex.run_until_idle();
  auto refused = call_registered("mcp_alpha_write");
  ASSERT_TRUE(refused.has_value() && refused->ok());
  EXPECT_EQ(refused->value().error_code, ErrorCode::needs_auth);
  EXPECT_EQ(phase("alpha"), ServerPhase::connected);
  auto other = call_registered("mcp_alpha_read");
  ASSERT_TRUE(other.has_value() && other->ok());
  EXPECT_FALSE(other->value().is_error);
  EXPECT_FALSE(other->value().error_code.has_value()) << "the server's own answer";
}

TEST_F(ManagerAuth, ReconnectAttemptNeedingAuth_EndsTheBackoff) {
  serve_read("alpha");
  start({config("alpha")});
  ex.run_until_idle();
  farm.latest("alpha")->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::reconnecting);

  farm.fail_connect("alpha", login_needed());
  ex.advance(Millis(500));  // the first retry
  EXPECT_EQ(farm.attempts("alpha"), 2u);
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
  EXPECT_TRUE(all_deferred("alpha"));
  ex.advance(Millis(10 * 60 * 1000));
  EXPECT_EQ(farm.attempts("alpha"), 2u);  // no more retries
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
}

TEST_F(ManagerAuth, CallWaitingForAReconnectThatNeedsAuth_FailsWithTheHint) {
  serve_read("alpha");
  start({config("alpha")});
  ex.run_until_idle();
  farm.latest("alpha")->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  farm.fail_connect("alpha", login_needed());

  // The call during the outage triggers the retry at once, which needs auth.
  std::optional<Result<json>> got;
  manager->tool_host()->call_tool("alpha", "read", json::object(), CallOptions{},
                                  [&](Result<json> r) { got = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(got.has_value());
  ASSERT_FALSE(got->ok());
  EXPECT_EQ(got->error().code, ErrorCode::needs_auth);
  EXPECT_THAT(got->error().message, HasSubstr(kHint));
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
}

TEST_F(ManagerAuth, FailedServerThatThenNeedsAuth_GetsItsCachedToolsBack) {
  // A plain failure drops the cache's tools; needing auth later brings them back, deferred.
  ServerConfig cfg = config("alpha");
  seed_cache(cfg, tools_of({"read"}));
  farm.fail_connect("alpha", Error::make(ErrorCode::transport, "connection refused"));
  start({cfg});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::failed);
  ASSERT_TRUE(tool_names().empty());

  farm.fail_connect("alpha", login_needed());
  const int changes_before = tools_changed;
  manager->reconnect_server("alpha", nullptr);
  ex.run_until_idle();
  EXPECT_EQ(phase("alpha"), ServerPhase::needs_auth);
  EXPECT_THAT(tool_names(), ElementsAre("mcp_alpha_read"));
  EXPECT_TRUE(all_deferred("alpha"));
  EXPECT_GT(tools_changed, changes_before);
  EXPECT_TRUE(manager->server_state("alpha")->tools_from_cache);
}

TEST_F(ManagerAuth, ConnectServersAgain_RetriesANeedsAuthServer) {
  farm.fail_connect("alpha", login_needed());
  start({config("alpha")});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::needs_auth);

  farm.fail_connect("alpha", std::nullopt);
  serve_read("alpha");
  gate.reset();
  manager->connect_servers({config("alpha")}, [this](GateResult r) { gate = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->connected, ElementsAre("alpha"));
  EXPECT_TRUE(gate->needs_auth.empty());
  EXPECT_EQ(phase("alpha"), ServerPhase::connected);
}

TEST_F(ManagerAuth, DisconnectingANeedsAuthServerRemovesItsToolsAndLeavesADisconnectedRow) {
  ServerConfig cfg = config("alpha");
  seed_cache(cfg, tools_of({"read"}));
  farm.fail_connect("alpha", login_needed());
  serve_read("beta");
  start({cfg, config("beta")});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::needs_auth);
  bool done = false;
  manager->disconnect_server("alpha", [&] { done = true; });
  ex.run_until_idle();
  EXPECT_TRUE(done);
  EXPECT_EQ(phase("alpha"), ServerPhase::disconnected);
  EXPECT_FALSE(manager->server_state("alpha")->last_error.has_value());
  EXPECT_THAT(tool_names(), UnorderedElementsAre("mcp_beta_read"));
  EXPECT_EQ(events.back().server, "alpha");
  EXPECT_EQ(events.back().phase, ServerPhase::disconnected);
}

}  // namespace
}  // namespace manager_auth_test
}  // namespace mcprt::testing
