// The CLI's config verbs end to end (SPEC §18 "CLI conventions"): `mcprt add|remove|get|
// enable|disable` as `claude mcp` / `codex mcp` / `gemini mcp` take them, on a temporary
// HOME (XDG_CONFIG_HOME = <home>/config) and project, with the demo server as the stdio
// server; and `/mcp disable` with --config (a disabled server goes at once and stays off).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "mcprt/result.hpp"

namespace mcprt {
namespace cli_verbs_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using native::test::MeasuredRun;
using native::test::run_measured;
using native::test::RunOptions;
using ::testing::HasSubstr;
using ::testing::Not;

class CliVerbs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-cli-verbs-" + std::to_string(rd()));
    project_ = home_ / "project";
    fs::create_directories(project_);
  }
  void TearDown() override { fs::remove_all(home_); }

  RunOptions options(const std::string& stdin_text = "") const {
    RunOptions o;
    o.cwd = project_.string();
    o.env = {{"HOME", home_.string()},
             {"XDG_CONFIG_HOME", (home_ / "config").string()},
             {"XDG_CACHE_HOME", (home_ / "cache").string()},
             {"XDG_DATA_HOME", (home_ / "data").string()},
             {"XDG_STATE_HOME", (home_ / "state").string()}};
    o.unset_env = {"MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL", "NO_COLOR", "DISPLAY", "WAYLAND_DISPLAY"};
    o.stdin_text = stdin_text;
    o.timeout = Millis(60000);
    return o;
  }

  MeasuredRun mcprt(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    std::vector<std::string> argv = {MCPRT_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    MeasuredRun r = run_measured(argv, options(stdin_text));
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.leftovers.empty()) << "the CLI left processes behind";
    return r;
  }

  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // Whether `text` has `line` as a whole line.
  static bool has_line(const std::string& text, const std::string& line) {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) {
      if (l == line) return true;
    }
    return false;
  }

  fs::path user_file() const { return home_ / "config" / "mcprt" / "mcp.json"; }
  fs::path project_file() const { return project_ / ".mcprt" / "mcp.json"; }

  fs::path home_, project_;
};

// Two demo servers (different arguments, so not one endpoint), the user's keys in an order
// no sort gives.
std::string two_demo_servers() {
  const std::string demo = json(MCPRT_DEMO_SERVER).dump();
  return "{\n  \"zeta\": 1,\n  \"mcpServers\": {\n"
         "    \"demo\": {\"command\": " +
         demo +
         ", \"args\": [\"--protocol\", \"legacy\"]},\n"
         "    \"alt\": {\"command\": " +
         demo + "}\n  }\n}\n";
}

// The defect: with --config, `/mcp disable demo` wrote disabledServers into the file, but
// discovery read the lists of the user file only, so demo stayed connected and callable,
// also after /mcp reload and in a new process.
TEST_F(CliVerbs, ReplDisableWithConfig_DisconnectsAtOnceAndStaysOffAfterReloadAndInANewProcess) {
  const fs::path config = home_ / "servers.json";
  write(config, two_demo_servers());
  MeasuredRun repl = mcprt({"--config", config.string(), "--no-cache", "repl"},
                           "/mcp disable demo\n"
                           "mcp_demo_echo {\"message\": \"still here\"}\n"
                           "/mcp reload\n"
                           "/tools\n");
  EXPECT_EQ(repl.exit_code, 0) << repl.err;
  EXPECT_THAT(repl.out, HasSubstr("Disabled \"demo\" in " + config.string()));
  EXPECT_THAT(repl.out, HasSubstr("Disconnected \"demo\"."));
  EXPECT_THAT(repl.out, HasSubstr("error: unknown tool \"mcp_demo_echo\""));
  EXPECT_THAT(repl.out, Not(HasSubstr("still here")));
  EXPECT_TRUE(has_line(repl.out, "mcp_alt_echo")) << repl.out;  // /tools after the reload
  EXPECT_FALSE(has_line(repl.out, "mcp_demo_echo")) << repl.out;

  // The file keeps its order; the list comes last.
  const std::string text = read(config);
  EXPECT_LT(text.find("\"zeta\""), text.find("\"mcpServers\"")) << text;
  EXPECT_LT(text.find("\"demo\""), text.find("\"alt\"")) << text;
  EXPECT_LT(text.find("\"alt\""), text.find("\"disabledServers\"")) << text;

  MeasuredRun later = mcprt({"--config", config.string(), "--no-cache", "tools", "--json"});
  json doc = json::parse(later.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << later.out << later.err;
  for (const auto& t : doc["tools"]) EXPECT_NE(t.value("server", ""), "demo");
  bool listed_disabled = false;
  for (const auto& s : doc["servers"]) {
    if (s.value("name", "") == "demo") listed_disabled = s.value("status", "") == "disabled";
  }
  EXPECT_TRUE(listed_disabled) << later.out;

  MeasuredRun enable = mcprt({"--config", config.string(), "enable", "demo"});
  EXPECT_EQ(enable.exit_code, 0) << enable.err;
  MeasuredRun back = mcprt({"--config", config.string(), "--no-cache", "tools", "--json"});
  EXPECT_THAT(back.out, HasSubstr("\"mcp_demo_echo\""));
}

// --- add --------------------------------------------------------------------------------

TEST_F(CliVerbs, Add_StdioServerWithEnvAfterDashes_WritesTheUserFileAndItConnects) {
  MeasuredRun add = mcprt({"add", "-e", "GREETING=hi", "-e", "EMPTY=", "demo", "--",
                           MCPRT_DEMO_SERVER, "--protocol", "legacy"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_THAT(add.out, HasSubstr("Added stdio server \"demo\" to " + user_file().string()));
  json doc = json::parse(read(user_file()), nullptr, false);
  EXPECT_EQ(doc["mcpServers"]["demo"], json({{"command", MCPRT_DEMO_SERVER},
                                             {"args", {"--protocol", "legacy"}},
                                             {"env", {{"GREETING", "hi"}, {"EMPTY", ""}}}}));
  MeasuredRun tools = mcprt({"tools", "--json"});  // discovery finds it in the user file
  EXPECT_THAT(tools.out, HasSubstr("\"mcp_demo_echo\""));
}

TEST_F(CliVerbs, Add_UrlServers_AsClaudeAndCodexWriteThem) {
  ASSERT_EQ(mcprt({"add", "--transport", "http", "-H", "X-Api-Key: ${KEY}", "-H",
                   "Authorization: Bearer abc", "web", "https://example.com/mcp"})
                .exit_code,
            0);
  ASSERT_EQ(mcprt({"add", "bare", "https://example.com/other"}).exit_code, 0);
  ASSERT_EQ(mcprt({"add", "old", "--url", "http://127.0.0.1:9/sse", "-t", "sse"}).exit_code, 0);
  json servers = json::parse(read(user_file()), nullptr, false)["mcpServers"];
  EXPECT_EQ(servers["web"],
            json({{"type", "http"},
                  {"url", "https://example.com/mcp"},
                  {"headers", {{"X-Api-Key", "${KEY}"}, {"Authorization", "Bearer abc"}}}}));
  EXPECT_EQ(servers["bare"],
            json({{"url", "https://example.com/other"}}));  // Streamable HTTP, SSE fallback
  EXPECT_EQ(servers["old"], json({{"type", "sse"}, {"url", "http://127.0.0.1:9/sse"}}));
  // In the file's order: the first added comes first.
  const std::string text = read(user_file());
  EXPECT_LT(text.find("\"web\""), text.find("\"bare\""));
  EXPECT_LT(text.find("\"bare\""), text.find("\"old\""));
}

TEST_F(CliVerbs, Add_Errors_Exit2AndNameTheFileAndTheProblem) {
  write(user_file(), "{\"mcpServers\": {\"demo\": {\"command\": \"x\"}}}\n");
  const std::string before = read(user_file());
  const std::string file = user_file().string();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"add", "demo", "--", "other"},
       "cannot add \"demo\" to " + file +
           ": it is already defined there; to replace it: mcprt remove demo, then add it again"},
      {{"add", "bad name", "--", "x"},
       "cannot add \"bad name\" to " + file + ": Server \"bad name\""},
      {{"add", "-e", "NOEQUALS", "a", "--", "x"}, "-e \"NOEQUALS\" is not NAME=VALUE"},
      {{"add", "-H", "no colon", "a", "https://x.dev"}, "-H needs 'Name: value'"},
      {{"add", "-t", "stdio", "a", "https://x.dev/mcp"}, "--transport stdio runs a command"},
      {{"add", "-t", "http", "a", "--", "npx", "srv"},
       "--transport http needs a URL, not a command"},
      {{"add", "a", "ftp://x.dev"}, "is not an http:// or https:// URL"},
      {{"add", "a"}, "give a URL (http/sse) or -- <command>"},
      {{"add", "a", "npx", "--", "srv"}, "everything after -- is the command line"},
      {{"--config", (home_ / "c.json").string(), "add", "--scope", "user", "a", "--", "x"},
       "--scope user and --config both say which file to edit"},
      {{"add", "-t", "tcp", "a", "--", "x"}, "--transport"},  // CLI11: not one of stdio, http, sse
  };
  for (const auto& c : cases) {
    MeasuredRun r = mcprt(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[1] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says));
  }
  EXPECT_EQ(read(user_file()), before);
}

// The user typed the server: it is trusted for the folder (that definition only); the
// project's other server, which nobody reviewed, stays pending.
TEST_F(CliVerbs, AddScopeProject_TrustsOnlyTheServerItWrote) {
  write(project_file(),
        "{\"mcpServers\": {\"unreviewed\": {\"command\": \"rm\", \"args\": [\"-rf\", \"x\"]}}}\n");
  MeasuredRun add = mcprt({"add", "--scope", "project", "demo", "--", MCPRT_DEMO_SERVER});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_THAT(add.out, HasSubstr("Added stdio server \"demo\" to " + project_file().string()));
  EXPECT_THAT(add.out, HasSubstr("this server only"));
  json servers = json::parse(read(project_file()), nullptr, false)["mcpServers"];
  EXPECT_TRUE(servers.contains("unreviewed"));
  EXPECT_TRUE(servers.contains("demo"));

  MeasuredRun list = mcprt({"list", "--json"});
  json doc = json::parse(list.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << list.out << list.err;
  std::map<std::string, std::string> trust;
  for (const auto& s : doc["servers"]) trust[s.value("name", "")] = s.value("trust", "");
  EXPECT_EQ(trust["demo"], "trusted");
  EXPECT_EQ(trust["unreviewed"], "pending");
}

// --- remove ------------------------------------------------------------------------------

TEST_F(CliVerbs, Remove_FromTheFileThatDefinesIt_OrSaysWhichFileDoes) {
  write(user_file(),
        "{\"mcpServers\": {\"u\": {\"command\": \"x\"}, \"keep\": {\"command\": \"y\"}},"
        " \"disabledServers\": [\"u\"]}\n");
  write(project_file(), "{\"mcpServers\": {\"p\": {\"command\": \"x\"}}}\n");
  write(project_ / ".mcp.json", "{\"mcpServers\": {\"c\": {\"command\": \"x\"}}}\n");

  MeasuredRun u = mcprt({"remove", "u"});
  EXPECT_EQ(u.exit_code, 0) << u.err;
  EXPECT_THAT(u.out, HasSubstr("Removed \"u\" from " + user_file().string()));
  json doc = json::parse(read(user_file()), nullptr, false);
  EXPECT_EQ(doc["mcpServers"], json({{"keep", {{"command", "y"}}}}));
  EXPECT_EQ(doc["disabledServers"], json::array());

  MeasuredRun p = mcprt({"remove", "p"});  // found in the project file
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(json::parse(read(project_file()), nullptr, false)["mcpServers"], json::object());

  MeasuredRun c = mcprt({"remove", "c"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_THAT(c.err, HasSubstr((project_ / ".mcp.json").string()));
  EXPECT_THAT(c.err, HasSubstr("mcprt disable c"));

  MeasuredRun none = mcprt({"remove", "--scope", "project", "ghost"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("no server \"ghost\" in " + project_file().string()));
}

TEST_F(CliVerbs, Remove_OfANameInBothFiles_AsksForTheScope) {
  write(user_file(), "{\"mcpServers\": {\"x\": {\"command\": \"a\"}}}\n");
  write(project_file(), "{\"mcpServers\": {\"x\": {\"command\": \"b\"}}}\n");
  MeasuredRun r = mcprt({"remove", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--scope user or --scope project"));
  EXPECT_EQ(mcprt({"remove", "--scope", "project", "x"}).exit_code, 0);
  EXPECT_EQ(json::parse(read(user_file()), nullptr, false)["mcpServers"],
            json({{"x", {{"command", "a"}}}}));
}

// --- enable / disable ----------------------------------------------------------------------

TEST_F(CliVerbs, DisableAndEnable_AServerOfAnotherToolsFile) {
  write(home_ / ".claude.json",
        json{{"mcpServers", {{"demo", {{"command", MCPRT_DEMO_SERVER}}}}}}.dump());
  MeasuredRun off = mcprt({"disable", "demo"});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_THAT(off.out, HasSubstr("Disabled \"demo\" in " + user_file().string()));
  EXPECT_EQ(json::parse(read(user_file()), nullptr, false)["disabledServers"],
            json::array({"demo"}));
  MeasuredRun list = mcprt({"list", "--json"});
  EXPECT_THAT(list.out, HasSubstr("\"state\": \"disabled\""));

  ASSERT_EQ(mcprt({"enable", "demo"}).exit_code, 0);
  MeasuredRun tools = mcprt({"tools", "--json"});
  EXPECT_THAT(tools.out, HasSubstr("\"mcp_demo_echo\""));

  MeasuredRun ghost = mcprt({"disable", "ghost"});
  EXPECT_EQ(ghost.exit_code, 2);
  EXPECT_THAT(ghost.err, HasSubstr("no server of that name is configured"));
}

// --- get --------------------------------------------------------------------------------

TEST_F(CliVerbs, Get_ShowsTheServerAsConfigured_WithLiteralSecretsMasked) {
  write(user_file(),
        json{{"mcpServers",
              {{"web",
                {{"url", "https://u:pw@example.com/mcp?api_key=K1"},
                 {"headers", {{"Authorization", "Bearer LITERAL"}, {"X-Ref", "${REF}"}}}}},
               {"tool",
                {{"command", "npx"},
                 {"args", {"-y", "srv"}},
                 {"env", {{"API_TOKEN", "LITERAL2"}, {"DEBUG", "1"}, {"GH_TOKEN", "${GH}"}}}}}}}}
            .dump());
  MeasuredRun text = mcprt({"get", "tool"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("state:     enabled"));
  EXPECT_THAT(text.out, HasSubstr("source:    mcprt (native) " + user_file().string()));
  EXPECT_THAT(text.out, HasSubstr("runs:      npx -y srv"));
  EXPECT_THAT(text.out, HasSubstr("API_TOKEN=***, DEBUG=1, GH_TOKEN=${GH}"));
  EXPECT_THAT(text.out, HasSubstr("to remove: mcprt remove tool"));

  MeasuredRun js = mcprt({"get", "web", "--json"});
  EXPECT_EQ(js.exit_code, 0) << js.err;
  json doc = json::parse(js.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << js.out;
  EXPECT_EQ(doc["transport"], "http");
  EXPECT_EQ(doc["config"]["headers"], json({{"Authorization", "***"}, {"X-Ref", "${REF}"}}));
  EXPECT_THAT(js.out, Not(HasSubstr("LITERAL")));
  EXPECT_THAT(js.out, Not(HasSubstr("pw@")));
  EXPECT_THAT(js.out, Not(HasSubstr("K1")));

  MeasuredRun ghost = mcprt({"get", "ghost"});
  EXPECT_EQ(ghost.exit_code, 2);
  EXPECT_THAT(ghost.err, HasSubstr("no server \"ghost\" is configured"));
}

// --- help --------------------------------------------------------------------------------

TEST_F(CliVerbs, Help_ShowsExamplesEnvironmentAndExitStatus) {
  MeasuredRun top = mcprt({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* s :
       {"Examples:", "Environment:", "MCPRT_TIMEOUT_MS", "NO_COLOR", "XDG_STATE_HOME",
        "Exit status:", "  3    a project server is not trusted", "add", "completion"}) {
    EXPECT_THAT(top.out, HasSubstr(s));
  }
  EXPECT_THAT(top.out, Not(HasSubstr("__complete")));
  MeasuredRun add = mcprt({"add", "--help"});
  EXPECT_THAT(add.out, HasSubstr("-s,--scope"));
  EXPECT_THAT(add.out,
              HasSubstr("mcprt add -e API_KEY=xyz airtable -- npx -y airtable-mcp-server"));
}

}  // namespace
}  // namespace cli_verbs_test
}  // namespace mcprt
