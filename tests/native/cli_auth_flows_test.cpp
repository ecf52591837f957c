// The OAuth flows after a sign-in, through the real CLI (SPEC §13) against the loopback
// OAuth fixture (mcprt-oauth-fixture): an expired access token is refreshed once without
// a browser and the rotated refresh token is what the credential file keeps; two mcprt
// processes racing on one expired token refresh once between them (the credential lock),
// so the rotating fixture never sees a replay; a revoked refresh token falls back to
// needs-auth and a new `mcprt auth login`; a tool that needs another scope (403
// insufficient_scope); an authorization server that moves; and a debug-level log through
// all of it without a token, code or secret.
//
// What the fixture saw is read from its /admin/counters; mid-run changes (expiring
// tokens, revoking refresh tokens, a slow token endpoint, tool scopes, moving the AS) go
// through its /admin endpoints. Token values are compared, never printed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "cli_auth_support.hpp"

namespace cli_auth_flows_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using mcprt::native::test::CliAuth;
using mcprt::native::test::MeasuredRun;
using mcprt::native::test::run_measured;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kEcho = "mcp_tracker_echo";

class CliAuthFlows : public CliAuth {
 protected:
  // POST /admin/<action> on the fixture: the answer's JSON (null when it failed, with a
  // test failure).
  json admin(const std::string& action, const json& body = json::object()) {
    httplib::Client c = http(fixture_.mcp_port());
    auto r = c.Post(("/admin/" + action).c_str(), body.dump(), "application/json");
    EXPECT_TRUE(r && r->status == 200) << action << ": " << (r ? r->body : "no answer");
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  json admin_get(const std::string& what) {
    httplib::Client c = http(fixture_.mcp_port());
    auto r = c.Get(("/admin/" + what).c_str());
    EXPECT_TRUE(r && r->status == 200) << what;
    return r ? json::parse(r->body, nullptr, false) : json();
  }
  json counters() { return admin_get("counters").value("counters", json::object()); }
  static std::int64_t count(const json& counters, const std::string& key) {
    return counters.value(key, std::int64_t{0});
  }
  // The token endpoint's verdicts other than success (token.error.<code>), as one string.
  static std::string token_errors(const json& counters) {
    std::string out;
    for (const auto& [k, v] : counters.items()) {
      if (k.rfind("token.error.", 0) == 0) out += k + "=" + v.dump() + " ";
    }
    return out;
  }

  void login() {
    MeasuredRun in = cli({"auth", "login", "tracker"});
    ASSERT_EQ(in.exit_code, 0) << in.out << in.err;
    ASSERT_THAT(in.out, HasSubstr("Signed in to \"tracker\" and connected: 22 tools"));
    ASSERT_TRUE(browser_ran());
    fs::remove(home_ / "browser-ran");  // from here on a browser run is a finding
  }

  // The credential record of `issuer` (the fixture's first one by default).
  json record(std::string issuer = "") {
    if (issuer.empty()) issuer = fixture_.ready().value("issuer", "");
    for (auto& r : credential_records()) {
      if (r.value("issuer", "") == issuer) return r;
    }
    return json::object();
  }
  std::string stored_refresh_token(const std::string& issuer = "") {
    return record(issuer)["tokens"].value("refresh_token", "");
  }
  std::string stored_access_token(const std::string& issuer = "") {
    return record(issuer)["tokens"].value("access_token", "");
  }

  MeasuredRun echo(const std::string& message) {
    return cli({"call", kEcho, json{{"message", message}}.dump()});
  }

  // Two `mcprt <args>` started together (by one shell, so that run_measured's bounds and
  // leftover check cover both): their exit codes and outputs.
  struct Pair {
    MeasuredRun shell;
    int rc[2] = {-1, -1};
    std::string out[2];
    std::string err[2];
  };
  Pair cli_pair(const std::vector<std::string>& args) {
    const fs::path dir = home_ / "pair";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path script = home_ / "pair.sh";
    std::ofstream(script) << "d=$1; shift\n"
                             "\"$@\" > \"$d/0.out\" 2> \"$d/0.err\" & p0=$!\n"
                             "\"$@\" > \"$d/1.out\" 2> \"$d/1.err\" & p1=$!\n"
                             "wait $p0; echo $? > \"$d/0.rc\"\n"
                             "wait $p1; echo $? > \"$d/1.rc\"\n";
    std::vector<std::string> argv = {"/bin/sh", script.string(), dir.string()};
    for (auto& a : cli_argv(args)) argv.push_back(std::move(a));
    Pair p;
    p.shell = run_measured(argv, run_options());
    EXPECT_EQ(p.shell.exit_code, 0) << p.shell.err;
    EXPECT_FALSE(p.shell.timed_out);
    for (const auto& left : p.shell.leftovers) {
      EXPECT_TRUE(left.find(" curl") != std::string::npos) << "left running: " << left;
    }
    auto slurp = [](const fs::path& f) {
      std::ifstream in(f);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    for (int i = 0; i < 2; ++i) {
      const std::string rc = slurp(dir / (std::to_string(i) + ".rc"));
      p.rc[i] = rc.empty() ? -1 : std::stoi(rc);
      p.out[i] = slurp(dir / (std::to_string(i) + ".out"));
      p.err[i] = slurp(dir / (std::to_string(i) + ".err"));
      outputs_ += p.out[i] + p.err[i];
    }
    return p;
  }

 private:
  static httplib::Client http(int port) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(10);  // safety nets against a hung fixture
    c.set_read_timeout(20);
    return c;
  }
};

TEST_F(CliAuthFlows,
       Refresh_AnExpiredAccessTokenIsRefreshedOnceWithoutABrowser_TheRotatedTokenIsStored) {
  login();
  const std::string rt_before = stored_refresh_token();
  const std::string at_before = stored_access_token();
  ASSERT_EQ(rt_before.rfind("fxrt_", 0), 0u) << "no refresh token was stored at the sign-in";
  admin("reset-counters");
  EXPECT_EQ(admin("expire-access-tokens").value("expired", 0), 1);

  MeasuredRun call = echo("after expiry");
  EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_THAT(call.out, HasSubstr("after expiry"));
  EXPECT_FALSE(browser_ran()) << "a refresh opened the browser";
  json c = counters();
  EXPECT_EQ(count(c, "token.refresh_token"), 1) << c.dump();
  EXPECT_EQ(count(c, "token.refresh_token.ok"), 1) << c.dump();
  EXPECT_EQ(count(c, "token.authorization_code"), 0) << c.dump();
  EXPECT_EQ(count(c, "authorize.ok"), 0) << c.dump();
  EXPECT_EQ(count(c, "register.ok"), 0) << c.dump();
  EXPECT_EQ(count(c, "mcp.401"), 1) << "the expired token was sent once, then the new one";

  // The credential file holds the new pair: the rotated refresh token, a new access token.
  const std::string rt_after = stored_refresh_token();
  const std::string at_after = stored_access_token();
  EXPECT_EQ(rt_after.rfind("fxrt_", 0), 0u);
  EXPECT_TRUE(rt_after != rt_before) << "the rotated refresh token was not stored";
  EXPECT_TRUE(at_after != at_before) << "the refreshed access token was not stored";

  // The next runs use the stored token as it is: no refresh, no sign-in.
  MeasuredRun tools = cli({"tools", "--json"});
  EXPECT_EQ(tools.exit_code, 0) << tools.err;
  json doc = json::parse(tools.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << tools.out;
  EXPECT_EQ(doc["servers"][0].value("status", ""), "connected");
  EXPECT_EQ(doc["tools"].size(), 22u);
  c = counters();
  EXPECT_EQ(count(c, "token.refresh_token"), 1) << c.dump();
  EXPECT_EQ(count(c, "mcp.401"), 1) << c.dump();
  EXPECT_FALSE(browser_ran());
  expect_no_secret_anywhere();
}

TEST_F(CliAuthFlows, RefreshRace_TwoProcessesOnOneExpiredTokenRefreshOnce_NoReplay_EveryRound) {
  login();
  // A slow token endpoint holds the first refresh long enough for the second process to
  // arrive with the same expired token: without the credential lock both would send the
  // one refresh token, and the rotating fixture would revoke the grant as a replay.
  admin("switches", {{"token_delay_ms", 400}});
  constexpr int kRounds = 5;
  int passed = 0;
  int raced = 0;  // rounds in which both processes were refused the expired token
  for (int round = 1; round <= kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    admin("reset-counters");
    EXPECT_EQ(admin("expire-access-tokens").value("expired", 0), 1);
    const std::string rt_before = stored_refresh_token();
    Pair p = cli_pair({"call", kEcho, R"({"message":"racing"})"});
    const json c = counters();
    const bool ok =
        p.rc[0] == 0 && p.rc[1] == 0 && p.out[0].find("racing") != std::string::npos &&
        p.out[1].find("racing") != std::string::npos && count(c, "token.refresh_token") == 1 &&
        count(c, "token.refresh_token.ok") == 1 && count(c, "token.refresh_token.reuse") == 0 &&
        count(c, "token.families_revoked") == 0 && token_errors(c).empty() &&
        count(c, "authorize.ok") == 0 && stored_refresh_token() != rt_before;
    EXPECT_TRUE(ok) << "exit codes " << p.rc[0] << "/" << p.rc[1] << "\nA: " << p.out[0] << p.err[0]
                    << "\nB: " << p.out[1] << p.err[1] << "\ncounters " << c.dump()
                    << "\nrefresh token rotated: " << (stored_refresh_token() != rt_before);
    passed += ok ? 1 : 0;
    raced += count(c, "mcp.401") >= 2 ? 1 : 0;
    std::cout << "[ race     ] round " << round << ": " << (ok ? "pass" : "FAIL") << ", exit "
              << p.rc[0] << "/" << p.rc[1] << ", refresh grants " << count(c, "token.refresh_token")
              << ", 401s " << count(c, "mcp.401") << ", wall " << static_cast<long>(p.shell.wall_ms)
              << " ms\n";
  }
  std::cout << "[ race     ] " << passed << "/" << kRounds << " rounds passed; in " << raced
            << " both processes had sent the expired token\n";
  EXPECT_EQ(passed, kRounds);
  // Every round was a race: the second process also sent the expired token before the
  // first stored the refreshed one (the lock, not luck, kept the refresh single).
  EXPECT_EQ(raced, kRounds);
  EXPECT_FALSE(browser_ran());

  // The grant is alive: a third run afterwards works without a sign-in.
  admin("switches", {{"token_delay_ms", 0}});
  MeasuredRun after = echo("after the race");
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  EXPECT_THAT(after.out, HasSubstr("after the race"));
  const json state = admin_get("state");
  EXPECT_EQ(state["authorization_servers"][0].value("live_refresh_tokens", 0), 1) << state.dump();
  EXPECT_EQ(state["authorization_servers"][0].value("grants", 0), 1) << state.dump();
  EXPECT_FALSE(browser_ran());
  expect_no_secret_anywhere();
}

TEST_F(CliAuthFlows, RotatedToken_ARotatedOutRefreshTokenIsNeverSentAgain) {
  login();
  admin("reset-counters");
  std::vector<std::string> seen = {stored_refresh_token()};
  constexpr int kCycles = 4;
  for (int i = 1; i <= kCycles; ++i) {
    SCOPED_TRACE("cycle " + std::to_string(i));
    EXPECT_EQ(admin("expire-access-tokens").value("expired", 0), 1);
    MeasuredRun call = echo("cycle " + std::to_string(i));
    EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
    EXPECT_THAT(call.out, HasSubstr("cycle " + std::to_string(i)));
    seen.push_back(stored_refresh_token());
  }
  // One refresh per cycle, each with the newest refresh token: the fixture would have
  // counted a reuse (and revoked the grant) for any rotated-out one.
  const json c = counters();
  EXPECT_EQ(count(c, "token.refresh_token"), kCycles) << c.dump();
  EXPECT_EQ(count(c, "token.refresh_token.ok"), kCycles) << c.dump();
  EXPECT_EQ(count(c, "token.refresh_token.reuse"), 0) << c.dump();
  EXPECT_EQ(count(c, "token.families_revoked"), 0) << c.dump();
  EXPECT_EQ(token_errors(c), "");
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size())
      << "a refresh did not store a new refresh token";
  const json state = admin_get("state");
  EXPECT_EQ(state["authorization_servers"][0].value("live_refresh_tokens", 0), 1) << state.dump();
  EXPECT_FALSE(browser_ran());

  // The counter is live: the first, rotated-out token sent by hand is the replay the
  // fixture detects, and it revokes the grant; mcprt then says how to sign in again.
  const json rec = record();
  httplib::Client as("127.0.0.1", fixture_.as_port());
  as.set_connection_timeout(10);
  as.set_read_timeout(20);
  httplib::Params form{{"grant_type", "refresh_token"},
                       {"refresh_token", seen.front()},
                       {"client_id", rec["client"].value("client_id", "")},
                       {"resource", fixture_.ready().value("mcp_url", "")}};
  auto replay = as.Post("/token", form);
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->status, 400);
  EXPECT_EQ(count(counters(), "token.refresh_token.reuse"), 1);
  MeasuredRun dead = echo("after the replay");
  EXPECT_EQ(dead.exit_code, 4) << dead.out << dead.err;
  EXPECT_THAT(dead.err, HasSubstr("to log in: mcprt auth login tracker"));
  EXPECT_FALSE(browser_ran());
  expect_no_secret_anywhere();
}

TEST_F(CliAuthFlows, RevokedRefreshToken_FallsBackToNeedsAuthWithoutABrowser_ThenLoginWorks) {
  login();
  admin("reset-counters");
  EXPECT_EQ(admin("revoke-refresh-tokens").value("revoked", 0), 1);
  EXPECT_EQ(admin("expire-access-tokens").value("expired", 0), 1);

  MeasuredRun tools = cli({"tools"});
  EXPECT_EQ(tools.exit_code, 4) << tools.out << tools.err;
  EXPECT_THAT(tools.out, HasSubstr("tracker (http, config file) needs-auth"));
  EXPECT_THAT(tools.out, HasSubstr("run `mcprt auth login tracker`"));
  EXPECT_THAT(tools.out, Not(HasSubstr("failed")));
  EXPECT_THAT(tools.err, HasSubstr("needs authorization; to log in: mcprt auth login tracker"));
  EXPECT_FALSE(browser_ran()) << "a non-interactive run opened the browser";
  json c = counters();
  EXPECT_EQ(count(c, "token.refresh_token"), 1) << "the refresh was tried once: " << c.dump();
  EXPECT_EQ(count(c, "token.error.invalid_grant"), 1) << c.dump();
  EXPECT_EQ(count(c, "authorize.ok"), 0) << c.dump();

  // The refused refresh token is dropped: the next run does not send it again.
  MeasuredRun st = cli({"auth", "status", "--json"});
  json s = json::parse(st.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << st.out;
  EXPECT_FALSE(s["servers"][0].value("hasRefreshToken", true));
  EXPECT_FALSE(s["servers"][0].value("signedIn", true));
  EXPECT_EQ(cli({"tools"}).exit_code, 4);
  EXPECT_EQ(count(counters(), "token.refresh_token"), 1);

  MeasuredRun in = cli({"auth", "login", "tracker"});
  EXPECT_EQ(in.exit_code, 0) << in.out << in.err;
  EXPECT_THAT(in.out, HasSubstr("Signed in to \"tracker\" and connected: 22 tools"));
  EXPECT_TRUE(browser_ran());
  MeasuredRun live = cli({"tools", "--json"});
  EXPECT_EQ(live.exit_code, 0) << live.err;
  json doc = json::parse(live.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << live.out;
  EXPECT_EQ(doc["servers"][0].value("status", ""), "connected");
  EXPECT_EQ(doc["tools"].size(), 22u);
  c = counters();
  EXPECT_EQ(count(c, "token.authorization_code.ok"), 1) << c.dump();
  EXPECT_EQ(count(c, "token.refresh_token"), 1) << "the dead refresh token was not sent again";
  expect_no_secret_anywhere();
}

// SPEC §13: a runtime 403 insufficient_scope re-authorizes with the union of scopes, at
// most once per request. A non-interactive run cannot show an authorization page: the
// call fails with the scope it lacks and the command that signs in, and no browser opens.
// (The tool's failure is the call's result text, on stdout; the server itself is
// connected, so the exit code is 1, not needs-auth's 4.)
TEST_F(CliAuthFlows, StepUp_NonInteractiveCallNamesTheMissingScopeAndTheLogin_NoBrowser) {
  admin("switches", {{"tool_scopes", {{"create_issue", "issues:write"}}}});
  login();
  admin("reset-counters");
  MeasuredRun denied = cli(
      {"call", "mcp_tracker_create_issue", R"({"project":"demo","title":"needs issues:write"})"});
  EXPECT_EQ(denied.exit_code, 4) << denied.out << denied.err;
  EXPECT_THAT(denied.out,
              HasSubstr("Server \"tracker\": needs an OAuth sign-in (it asks for more "
                        "scopes: mcp:tools issues:write); run `mcprt auth login tracker`"));
  EXPECT_THAT(denied.err, HasSubstr("needs authorization; to log in: mcprt auth login tracker"));
  EXPECT_FALSE(browser_ran()) << "a non-interactive run opened the browser";
  json c = counters();
  EXPECT_EQ(count(c, "mcp.403"), 1) << "the step-up was asked once: " << c.dump();
  EXPECT_EQ(count(c, "authorize.ok"), 0) << c.dump();
  EXPECT_EQ(count(c, "token.refresh_token"), 0) << "a refresh cannot add a scope: " << c.dump();
  // The server's other tools still work with the token it has.
  MeasuredRun other = echo("base scope");
  EXPECT_EQ(other.exit_code, 0) << other.out << other.err;
  EXPECT_THAT(other.out, HasSubstr("base scope"));
  expect_no_secret_anywhere();
}

// Doing what the message says: `mcprt auth login` (a new process, which never saw the 403)
// asks for the scope the refused call needed, and the call then works.
TEST_F(CliAuthFlows, StepUp_LoginAfterANonInteractiveStepUp_AsksForTheMissingScope) {
  admin("switches", {{"tool_scopes", {{"create_issue", "issues:write"}}}});
  login();
  const std::string args = R"({"project":"demo","title":"needs issues:write"})";
  MeasuredRun denied = cli({"call", "mcp_tracker_create_issue", args});
  ASSERT_THAT(denied.out, HasSubstr("run `mcprt auth login tracker`"));
  MeasuredRun in = cli({"auth", "login", "tracker"});
  EXPECT_EQ(in.exit_code, 0) << in.out << in.err;
  EXPECT_THAT(in.err, HasSubstr("issues%3Awrite"));
  MeasuredRun granted = cli({"call", "mcp_tracker_create_issue", args});
  EXPECT_EQ(granted.exit_code, 0) << granted.out << granted.err;
  EXPECT_THAT(granted.out, HasSubstr("created"));
  expect_no_secret_anywhere();
}

// A live session whose authorization goes (refresh tokens revoked, access token expired,
// while the REPL runs): the next call answers with the login hint and the server moves
// to needs-auth, its tools deferred, instead of staying "connected" with every call
// failing. A shell drives the REPL through a fifo so that the fixture changes between
// two calls of one process.
TEST_F(CliAuthFlows, LiveSessionLosingItsAuthorization_GoesNeedsAuth) {
  login();
  const fs::path dir = home_ / "live";
  fs::create_directories(dir);
  const fs::path script = home_ / "live.sh";
  std::ofstream(script)
      << "d=$1; admin=$2; shift 2\n"
         "mkfifo \"$d/in\"\n"
         "\"$@\" < \"$d/in\" > \"$d/out\" 2> \"$d/err\" & p=$!\n"
         "exec 3> \"$d/in\"\n"
         "echo 'mcp_tracker_echo {\"message\":\"first call\"}' >&3\n"
         "i=0; until grep -q 'first call' \"$d/out\"; do i=$((i+1)); [ $i -gt 400 ] && break; "
         "sleep 0.05; done\n"
         "for a in revoke-refresh-tokens expire-access-tokens; do curl --noproxy '*' -s -X POST "
         "-H 'Content-Type: application/json' -d '{}' \"$admin/$a\" > /dev/null; done\n"
         "echo 'mcp_tracker_echo {\"message\":\"second call\"}' >&3\n"
         "echo '/mcp list' >&3\n"
         "exec 3>&-\n"
         "wait $p; echo $? > \"$d/rc\"\n";
  std::string admin_url = fixture_.ready().value("admin_url", "");
  while (!admin_url.empty() && admin_url.back() == '/') admin_url.pop_back();
  std::vector<std::string> argv = {"/bin/sh", script.string(), dir.string(), admin_url};
  for (auto& a : cli_argv({"repl"})) argv.push_back(std::move(a));
  MeasuredRun shell = run_measured(argv, run_options());
  ASSERT_EQ(shell.exit_code, 0) << shell.err;
  auto slurp = [](const fs::path& f) {
    std::ifstream in(f);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string out = slurp(dir / "out");
  const std::string err = slurp(dir / "err");
  outputs_ += out + err;
  EXPECT_EQ(slurp(dir / "rc"), "0\n") << out << err;
  const std::size_t second = out.find("needs an OAuth sign-in");
  ASSERT_NE(second, std::string::npos) << out << err;
  EXPECT_THAT(out.substr(0, second), HasSubstr("first call"));
  EXPECT_THAT(out.substr(second), HasSubstr("run `/mcp auth tracker` (or `mcprt auth login tracker`)"));
  EXPECT_THAT(out.substr(second), ContainsRegex("tracker[^\n]*needs-auth")) << out;
  EXPECT_FALSE(browser_ran());
  json c = counters();
  EXPECT_EQ(count(c, "token.refresh_token.ok"), 0) << c.dump();
  expect_no_secret_anywhere();
}

// Interactively (the REPL's /mcp auth after the 403), the sign-in asks for the union of
// the token's scopes and the challenge's; the call then succeeds, later runs keep the
// scope, and so does a refresh.
TEST_F(CliAuthFlows,
       StepUp_InTheRepl_McpAuthAsksForTheUnion_TheCallSucceeds_TheScopeSurvivesARefresh) {
  admin("switches", {{"tool_scopes", {{"create_issue", "issues:write"}}}});
  login();
  admin("reset-counters");
  MeasuredRun r = cli({"repl"},
                      "mcp_tracker_create_issue {\"project\":\"demo\",\"title\":\"before\"}\n"
                      "/mcp auth tracker\n"
                      "mcp_tracker_create_issue {\"project\":\"demo\",\"title\":\"stepped up\"}\n");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("it asks for more scopes: mcp:tools issues:write"));
  EXPECT_THAT(r.out, HasSubstr("Logged in to \"tracker\" and connected (22 tools)."));
  EXPECT_THAT(r.out, ContainsRegex("created demo#[0-9]+ \\[open\\] stepped up"));
  // The second authorization request asks for the scope the 403 named, and the rest.
  EXPECT_THAT(r.err, ContainsRegex("scope=[^&]*issues%3Awrite"));
  EXPECT_THAT(r.err, ContainsRegex("scope=[^&]*mcp%3Atools"));
  EXPECT_TRUE(browser_ran());
  json c = counters();
  EXPECT_EQ(count(c, "mcp.403"), 1) << c.dump();
  EXPECT_EQ(count(c, "authorize.ok"), 1) << c.dump();
  fs::remove(home_ / "browser-ran");

  MeasuredRun again =
      cli({"call", "mcp_tracker_create_issue", R"({"project":"demo","title":"next run"})"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("next run"));
  admin("expire-access-tokens");
  MeasuredRun refreshed =
      cli({"call", "mcp_tracker_create_issue", R"({"project":"demo","title":"after refresh"})"});
  EXPECT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
  EXPECT_THAT(refreshed.out, HasSubstr("after refresh"));
  c = counters();
  EXPECT_EQ(count(c, "token.refresh_token.ok"), 1) << c.dump();
  EXPECT_EQ(count(c, "mcp.403"), 1) << "no second step-up: " << c.dump();
  EXPECT_FALSE(browser_ran());
  expect_no_secret_anywhere();
}

TEST_F(CliAuthFlows,
       AuthorizationServerMoves_TheOldIssuersTokensNeverGoToTheNewOne_LoginThereWorks) {
  login();
  const std::string old_issuer = fixture_.ready().value("issuer", "");
  const json moved = admin("move-authorization-server", {{"issuer_path", "/tenant-b"}});
  const std::string new_issuer = moved.value("issuer", "");
  ASSERT_EQ(new_issuer, old_issuer + "/tenant-b");
  admin("reset-counters");

  // The resource now trusts only tenant-b. Credentials are keyed by (issuer, resource):
  // nothing of the old issuer's may be used with the new one, so the server needs a new
  // sign-in there (registration included); a non-interactive run says so.
  MeasuredRun tools = cli({"tools"});
  EXPECT_EQ(tools.exit_code, 4) << tools.out << tools.err;
  EXPECT_THAT(tools.out, HasSubstr("tracker (http, config file) needs-auth"));
  EXPECT_THAT(tools.err, HasSubstr("to log in: mcprt auth login tracker"));
  EXPECT_FALSE(browser_ran());
  json c = counters();
  EXPECT_EQ(count(c, "token.refresh_token"), 0)
      << "a refresh token was sent after the move: " << c.dump();
  EXPECT_EQ(count(c, "token.authorization_code"), 0) << c.dump();
  EXPECT_EQ(count(c, "as POST /tenant-b/token"), 0) << c.dump();
  EXPECT_EQ(count(c, "as POST /token"), 0) << c.dump();
  EXPECT_EQ(token_errors(c), "");

  MeasuredRun in = cli({"auth", "login", "tracker"});
  EXPECT_EQ(in.exit_code, 0) << in.out << in.err;
  EXPECT_THAT(in.out, HasSubstr("Signed in to \"tracker\" and connected: 22 tools"));
  EXPECT_THAT(in.err, HasSubstr(new_issuer + "/authorize?"));
  c = counters();
  EXPECT_EQ(count(c, "as POST /tenant-b/register"), 1) << "a new registration: " << c.dump();
  EXPECT_EQ(count(c, "token.authorization_code.ok"), 1) << c.dump();
  EXPECT_EQ(count(c, "token.refresh_token"), 0) << c.dump();
  const json state = admin_get("state");
  EXPECT_EQ(state["authorization_servers"][1].value("clients", 0), 1) << state.dump();
  EXPECT_EQ(state["authorization_servers"][1].value("grants", 0), 1) << state.dump();

  MeasuredRun live = cli({"tools", "--json"});
  EXPECT_EQ(live.exit_code, 0) << live.err;
  json doc = json::parse(live.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << live.out;
  EXPECT_EQ(doc["tools"].size(), 22u);
  MeasuredRun st = cli({"auth", "status", "--json"});
  json s = json::parse(st.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << st.out;
  EXPECT_EQ(s["servers"][0].value("issuer", ""), new_issuer);
  EXPECT_TRUE(s["servers"][0].value("signedIn", false));
  // A refresh after the move goes to tenant-b with tenant-b's refresh token.
  admin("reset-counters");
  admin("expire-access-tokens");
  MeasuredRun call = echo("after the move");
  EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
  c = counters();
  EXPECT_EQ(count(c, "as POST /tenant-b/token"), 1) << c.dump();
  EXPECT_EQ(count(c, "token.refresh_token.ok"), 1) << c.dump();
  EXPECT_EQ(token_errors(c), "");
  expect_no_secret_anywhere();
}

TEST_F(CliAuthFlows, DebugLog_LoginRefreshAndCall_NoTokenCodeOrSecretOnStderr) {
  extra_env_["MCPRT_LOG_LEVEL"] = "debug";
  std::string err;
  MeasuredRun in = cli({"auth", "login", "tracker"});
  EXPECT_EQ(in.exit_code, 0) << in.out << in.err;
  err += in.err;
  admin("expire-access-tokens");
  MeasuredRun call = echo("verbose");
  EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
  err += call.err;
  MeasuredRun tools = cli({"tools"});
  EXPECT_EQ(tools.exit_code, 0) << tools.err;
  err += tools.err;
  EXPECT_EQ(count(counters(), "token.refresh_token.ok"), 1);

  // The log is really at debug level (else this test would prove nothing).
  EXPECT_THAT(call.err, HasSubstr("refreshed the OAuth token")) << call.err;
  EXPECT_THAT(in.err, HasSubstr("registered mcprt with the authorization server"));
  for (const auto& prefix : fixture_.ready().value("secret_prefixes", json::array())) {
    const std::string p = prefix.get<std::string>();
    EXPECT_THAT(err, Not(HasSubstr(p))) << "a secret (" << p << "...) reached the debug log";
  }
  // No OAuth parameter that carries a secret, whatever its value looks like (the
  // authorization URL's code_challenge is public and stays).
  EXPECT_THAT(err, Not(ContainsRegex("[?&]code=")));
  EXPECT_THAT(err, Not(HasSubstr("refresh_token=")));
  EXPECT_THAT(err, Not(HasSubstr("access_token")));
  EXPECT_THAT(err, Not(HasSubstr("code_verifier")));
  EXPECT_THAT(err, Not(HasSubstr("client_secret=")));
  EXPECT_THAT(err, Not(HasSubstr("Bearer fx")));
  // And none of the values the credential file holds now.
  const std::string at = stored_access_token();
  const std::string rt = stored_refresh_token();
  ASSERT_FALSE(at.empty());
  ASSERT_FALSE(rt.empty());
  EXPECT_TRUE(err.find(at) == std::string::npos) << "the access token reached the debug log";
  EXPECT_TRUE(err.find(rt) == std::string::npos) << "the refresh token reached the debug log";
  expect_no_secret_anywhere();
}

}  // namespace
}  // namespace cli_auth_flows_test
