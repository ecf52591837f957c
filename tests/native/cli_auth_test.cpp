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
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "oauth_fixture_process.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using mcprt::Millis;
using mcprt::native::test::MeasuredRun;
using mcprt::native::test::OAuthFixtureProcess;
using mcprt::native::test::run_measured;
using mcprt::native::test::RunOptions;
using ::testing::HasSubstr;
using ::testing::Not;

class CliAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fixture_.error().empty()) << fixture_.error();
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-cli-auth-" + std::to_string(rd()));
    fs::create_directories(home_);
    // The "browser": follows the authorization URL's redirects to the loopback callback and
    // leaves a mark that it ran.
    browser_ = home_ / "browser.sh";
    std::ofstream(browser_)
        << "#!/bin/sh\necho started >> '" << (home_ / "browser-ran").string()
        << "'\nexec curl --noproxy '*' -s -L --max-time 20 -o /dev/null \"$1\"\n";
    fs::permissions(browser_, fs::perms::owner_all);
    write_config({{"tracker", {{"url", fixture_.ready().value("mcp_url", "")}}}});
  }
  void TearDown() override { fs::remove_all(home_); }

  void write_config(const json& servers) {
    std::ofstream(home_ / "mcp.json") << json{{"mcpServers", servers}}.dump(2);
  }

  MeasuredRun cli(std::vector<std::string> args, const std::string& stdin_text = "") {
    std::vector<std::string> argv = {MCPRT_CLI, "--config", (home_ / "mcp.json").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions o;
    o.cwd = home_.string();
    o.env = {{"HOME", home_.string()},
             {"XDG_DATA_HOME", (home_ / "data").string()},
             {"XDG_CACHE_HOME", (home_ / "cache").string()},
             {"XDG_CONFIG_HOME", (home_ / "config").string()},
             {"BROWSER", browser_.string()}};
    o.unset_env = {"DISPLAY", "WAYLAND_DISPLAY", "MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL"};
    o.stdin_text = stdin_text;
    o.timeout = Millis(60000);
    MeasuredRun r = run_measured(argv, o);
    outputs_ += r.out + r.err;
    // The browser is started detached on purpose (it is the user's, never waited for):
    // a curl still finishing its last request may outlive the CLI. Nothing else may.
    for (const auto& p : r.leftovers) {
      EXPECT_TRUE(p.find(" curl") != std::string::npos || p.find(" sh") != std::string::npos)
          << "left running: " << p;
    }
    return r;
  }

  bool browser_ran() const { return fs::exists(home_ / "browser-ran"); }

  // Everything the runs printed and every file mcprt wrote under the cache and data
  // directories (names and contents of the cache; names of the credential files).
  void expect_no_secret_anywhere() {
    std::string cache_text;
    if (fs::exists(home_ / "cache")) {
      for (const auto& e : fs::recursive_directory_iterator(home_ / "cache")) {
        cache_text += e.path().string() + "\n";
        if (e.is_regular_file()) {
          std::ifstream in(e.path());
          cache_text += std::string(std::istreambuf_iterator<char>(in), {});
        }
      }
    }
    for (const auto& prefix : fixture_.ready().value("secret_prefixes", json::array())) {
      const std::string p = prefix.get<std::string>();
      EXPECT_THAT(outputs_, Not(HasSubstr(p))) << "a secret (" << p << "...) reached the output";
      EXPECT_THAT(cache_text, Not(HasSubstr(p))) << "a secret (" << p << "...) reached the cache";
    }
  }

  fs::path credentials_dir() const { return home_ / "data" / "mcprt" / "credentials"; }

  OAuthFixtureProcess fixture_;
  fs::path home_;
  fs::path browser_;
  std::string outputs_;
};

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
