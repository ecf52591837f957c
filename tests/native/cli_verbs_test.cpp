// Editing the MCP config from the CLI, end to end, on a temporary HOME (XDG_CONFIG_HOME =
// <home>/config) and project, with the demo server as the stdio server: `/mcp disable` with
// --config (a disabled server goes at once and stays off).
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
}

}  // namespace
}  // namespace mcprt
