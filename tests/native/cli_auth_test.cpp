// `mcprt auth login|logout|status`, `/mcp auth` and the needs-auth phase through the real
// CLI (SPEC §13), against the loopback OAuth fixture (mcprt-oauth-fixture): a server whose
// 401 needs the user is reported as needs-auth with the command that signs in (exit 4),
// never as failed, and no browser opens; `mcprt auth login` signs in through a $BROWSER
// script that follows the authorization URL (as a user's browser would) to the loopback
// callback, then lists the server's tools; afterwards `mcprt tools` lists them live. No
// token, code or secret reaches any output, the tool cache or the credential file names.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_auth_support.hpp"

namespace cli_auth_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using mcprt::native::test::CliAuth;
using mcprt::native::test::MeasuredRun;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(CliAuth, WithoutASignIn_ToolsSaysNeedsAuthWithTheCommand_Exit4_NoBrowser_OtherServersFine) {
  write_config({{"tracker", {{"url", fixture_.ready().value("mcp_url", "")}}},
                {"demo", {{"command", MCPRT_DEMO_SERVER}}}});
  MeasuredRun r = cli({"tools"});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("tracker (http, config file) needs-auth, 0 tools: "));
  EXPECT_THAT(r.out, HasSubstr("run `mcprt auth login tracker`"));
  EXPECT_THAT(r.out, Not(HasSubstr("failed")));
  EXPECT_THAT(r.out, HasSubstr("demo (stdio, config file) connected"));
  EXPECT_THAT(r.out, HasSubstr("mcp_demo_echo"));
  EXPECT_THAT(r.err, HasSubstr("mcprt: server \"tracker\" (" + (home_ / "mcp.json").string() +
                               ") needs authorization; to log in: mcprt auth login tracker"));
  EXPECT_FALSE(browser_ran()) << "a non-interactive run opened the browser";

  MeasuredRun j = cli({"tools", "--json"});
  EXPECT_EQ(j.exit_code, 4);
  json doc = json::parse(j.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << j.out;
  json tracker, demo;
  for (const auto& s : doc["servers"]) (s["name"] == "tracker" ? tracker : demo) = s;
  EXPECT_EQ(tracker.value("status", ""), "needs-auth");
  EXPECT_EQ(tracker.value("authCommand", ""), "mcprt auth login tracker");
  EXPECT_THAT(tracker.value("error", ""), HasSubstr("mcprt auth login tracker"));
  EXPECT_EQ(demo.value("status", ""), "connected");

  MeasuredRun st = cli({"status", "tracker"});
  EXPECT_EQ(st.exit_code, 4);
  EXPECT_THAT(st.out, HasSubstr("state:    needs-auth"));
  EXPECT_FALSE(browser_ran());
  expect_no_secret_anywhere();
}

TEST_F(CliAuth, Login_PrintsTheUrlFollowsTheCallbackAndListsTheTools_ThenToolsListsThemLive) {
  MeasuredRun in = cli({"auth", "login", "tracker"});
  ASSERT_EQ(in.exit_code, 0) << in.out << in.err;
  EXPECT_TRUE(browser_ran());
  EXPECT_THAT(in.err, HasSubstr("Sign in to \"tracker\": a browser was opened"));
  EXPECT_THAT(in.err, HasSubstr(fixture_.ready().value("issuer", "") + "/authorize?"));
  EXPECT_THAT(in.err, HasSubstr("code_challenge_method=S256"));
  EXPECT_THAT(in.err, HasSubstr("Waiting for the sign-in to come back to http://127.0.0.1:"));
  EXPECT_THAT(in.out, HasSubstr("Signed in to \"tracker\" and connected: 22 tools"));
  EXPECT_THAT(in.out, HasSubstr("mcp_tracker_create_issue"));

  // The credential files are private.
  ASSERT_TRUE(fs::is_directory(credentials_dir()));
  int files = 0;
  for (const auto& e : fs::directory_iterator(credentials_dir())) {
    if (e.path().extension() != ".json") continue;
    ++files;
    struct stat sb {};
    ASSERT_EQ(::stat(e.path().c_str(), &sb), 0);
    EXPECT_EQ(sb.st_mode & 0777, 0600u) << e.path();
  }
  EXPECT_GE(files, 1);

  MeasuredRun tools = cli({"tools", "--json"});
  EXPECT_EQ(tools.exit_code, 0) << tools.err;
  json doc = json::parse(tools.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << tools.out;
  EXPECT_EQ(doc["servers"][0].value("status", ""), "connected");
  EXPECT_EQ(doc["tools"].size(), 22u);
  for (const auto& t : doc["tools"]) EXPECT_FALSE(t.value("deferred", true)) << t.dump();

  MeasuredRun call = cli({"call", "mcp_tracker_echo", R"({"message":"signed in"})"});
  EXPECT_EQ(call.exit_code, 0) << call.err;
  EXPECT_THAT(call.out, HasSubstr("signed in"));

  MeasuredRun st = cli({"auth", "status", "--json"});
  EXPECT_EQ(st.exit_code, 0);
  json s = json::parse(st.out, nullptr, false);
  ASSERT_TRUE(s.is_object()) << st.out;
  EXPECT_EQ(s.value("credentialsDir", ""), credentials_dir().string());
  ASSERT_EQ(s["servers"].size(), 1u);
  const json& row = s["servers"][0];
  EXPECT_EQ(row.value("name", ""), "tracker");
  EXPECT_TRUE(row.value("signedIn", false));
  EXPECT_TRUE(row.value("hasAccessToken", false));
  EXPECT_EQ(row.value("issuer", ""), fixture_.ready().value("issuer", ""));
  EXPECT_EQ(row.value("clientSource", ""), "registration");
  EXPECT_EQ(cli({"auth", "status", "tracker"}).exit_code, 0);
  expect_no_secret_anywhere();
}

TEST_F(CliAuth, Logout_CachedToolsStayDeferredAndCallingOneSaysHowToSignIn) {
  ASSERT_EQ(cli({"auth", "login", "tracker"}).exit_code, 0);
  MeasuredRun out = cli({"auth", "logout", "tracker"});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_THAT(out.out, HasSubstr("Signed out of \"tracker\""));
  MeasuredRun again = cli({"auth", "logout", "tracker"});
  EXPECT_THAT(again.out, HasSubstr("\"tracker\" was not signed in; nothing to delete."));

  MeasuredRun st = cli({"auth", "status", "tracker"});
  EXPECT_EQ(st.exit_code, 4);
  EXPECT_THAT(st.out, HasSubstr("tracker  not signed in"));

  MeasuredRun tools = cli({"tools"});
  EXPECT_EQ(tools.exit_code, 4) << tools.out << tools.err;
  EXPECT_THAT(tools.out,
              HasSubstr("tracker (http, config file) needs-auth, 22 tools (from the cache)"));
  EXPECT_THAT(tools.out, HasSubstr("mcp_tracker_create_issue"));

  MeasuredRun call = cli({"call", "mcp_tracker_echo", R"({"message":"x"})"});
  EXPECT_EQ(call.exit_code, 4) << call.out << call.err;
  EXPECT_THAT(call.out, HasSubstr("run `mcprt auth login tracker`"));
  EXPECT_THAT(call.err, HasSubstr("to log in: mcprt auth login tracker"));
  EXPECT_LT(call.wall_ms, 30000.0);  // a bound against a hang, not a speed claim
  expect_no_secret_anywhere();
}

TEST_F(CliAuth, Repl_McpAuthSignsInAndTheNextCallWorks) {
  MeasuredRun r = cli({"repl"},
                      "mcp_tracker_echo {\"message\":\"before\"}\n/mcp auth tracker\n"
                      "mcp_tracker_echo {\"message\":\"after sign-in\"}\n/mcp list\n");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("to log in: /mcp auth tracker (or mcprt auth login tracker)"));
  EXPECT_THAT(r.out, HasSubstr("Logged in to \"tracker\" and connected (22 tools)."));
  EXPECT_THAT(r.out, HasSubstr("after sign-in"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("tracker +connected +22 tools"));
  EXPECT_TRUE(browser_ran());
  expect_no_secret_anywhere();
}

TEST_F(CliAuth, LoginWithoutAName_SignsInToTheServersThatNeedIt) {
  MeasuredRun r = cli({"auth", "login"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Signed in to \"tracker\" and connected: 22 tools"));
  MeasuredRun again = cli({"auth", "login"});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_THAT(again.out, HasSubstr("\"tracker\" is connected (no sign-in needed)."));
  EXPECT_THAT(again.out, HasSubstr("No server needs a sign-in."));
  expect_no_secret_anywhere();
}

TEST_F(CliAuth, UsageErrors_UnknownAndStdioServers) {
  write_config({{"tracker", {{"url", fixture_.ready().value("mcp_url", "")}}},
                {"demo", {{"command", MCPRT_DEMO_SERVER}}}});
  MeasuredRun unknown = cli({"auth", "login", "nosuch"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown server \"nosuch\""));
  MeasuredRun stdio = cli({"auth", "login", "demo"});
  EXPECT_EQ(stdio.exit_code, 2);
  EXPECT_THAT(
      stdio.err,
      HasSubstr("server \"demo\" is a stdio server; OAuth sign-in is for http and sse servers"));
  EXPECT_EQ(cli({"auth", "status", "nosuch"}).exit_code, 2);
  EXPECT_EQ(cli({"auth", "logout", "demo"}).exit_code, 2);
  EXPECT_EQ(cli({"auth"}).exit_code, 2);  // a subcommand is required
  EXPECT_FALSE(browser_ran());
}

}  // namespace
}  // namespace cli_auth_test
