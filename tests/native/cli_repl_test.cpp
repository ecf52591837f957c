// `mcprt repl` on a terminal (SPEC §18: line editing with history and tool-name
// completion; cli_line_editor.hpp): Tab completes tool and server names, Up recalls the
// previous line, the history outlives the process (and keeps no line that starts with a
// space). The REPL runs the demo server through --config; TERM=xterm so libedit knows
// the keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mcprt/result.hpp"
#include "terminal_session.hpp"

namespace mcprt {
namespace cli_repl_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using native::test::TerminalSession;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kEnter = "\r";
constexpr const char* kUp = "\x1b[A";
constexpr const char* kTab = "\t";
constexpr const char* kCtrlD = "\x04";

class CliRepl : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-cli-repl-" + std::to_string(rd()));
    fs::create_directories(home_);
    std::ofstream(home_ / "mcp.json")
        << json{{"mcpServers",
                 {{"demo", {{"command", MCPRT_DEMO_SERVER}, {"args", {"--protocol", "legacy"}}}}}}}
               .dump(2);
  }
  void TearDown() override { fs::remove_all(home_); }

  // The REPL on a terminal, its prompt shown.
  std::unique_ptr<TerminalSession> start() {
    TerminalSession::Options o;
    o.cwd = home_.string();
    o.env = {{"HOME", home_.string()},
             {"XDG_CONFIG_HOME", (home_ / "config").string()},
             {"XDG_STATE_HOME", state_dir().string()},
             {"XDG_DATA_HOME", (home_ / "data").string()},
             {"TERM", "xterm"}};
    o.unset_env = {"MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL", "DISPLAY", "WAYLAND_DISPLAY", "EDITRC"};
    o.columns = 200;  // one line per input, no wrapping
    auto t = std::make_unique<TerminalSession>(
        std::vector<std::string>{MCPRT_CLI, "--config", (home_ / "mcp.json").string(), "--no-cache",
                                 "repl"},
        o);
    EXPECT_TRUE(t->started());
    EXPECT_TRUE(t->wait_for_text("mcprt> ")) << t->raw();
    return t;
  }

  // Ctrl-U (the line, if any, goes: Ctrl-D ends only on an empty line), Ctrl-D, then the
  // exit code.
  static int quit(TerminalSession& t) {
    t.type(std::string("\x15") + kCtrlD);
    return t.finish();
  }

  // Types `keys` (ending in Enter) and waits for the next prompt: the editor has the
  // terminal again (keys typed while a command runs would meet the terminal's own line
  // discipline, which takes ^D and ^U for itself).
  static bool enter(TerminalSession& t, const std::string& keys) {
    const std::size_t before = prompts(t);
    t.type(keys);
    return t.wait_for([&](const std::string&) { return prompts(t) > before; });
  }
  static std::size_t prompts(const TerminalSession& t) {
    return TerminalSession::count(t.plain(), "mcprt> ");
  }

  fs::path state_dir() const { return home_ / "state"; }
  fs::path history_file() const { return state_dir() / "mcprt" / "history"; }

  // The lines of the terminal that are exactly `line` (a tool's answer is one line).
  static std::size_t answers(const TerminalSession& t, const std::string& line) {
    return TerminalSession::count(t.plain(), "\n" + line + "\n");
  }

  fs::path home_;
};

TEST_F(CliRepl, Tab_CompletesAToolNameAndAServerName) {
  auto t = start();
  t->type(std::string("mcp_demo_ec") + kTab);
  ASSERT_TRUE(t->wait_for_text("mcp_demo_echo ")) << t->plain();
  ASSERT_TRUE(enter(*t, std::string(R"({"message": "completed"})") + kEnter)) << t->plain();
  EXPECT_EQ(answers(*t, "completed"), 1u) << t->plain();

  ASSERT_TRUE(enter(*t, std::string("/mcp sta") + kTab + "de" + kTab + kEnter)) << t->plain();
  EXPECT_THAT(t->plain(), HasSubstr("Server \"demo\""));
  EXPECT_THAT(t->plain(), HasSubstr("state:    connected"));
  EXPECT_EQ(quit(*t), 0);
}

TEST_F(CliRepl, Tab_ListsTheChoicesWhenItCannotChoose) {
  auto t = start();
  t->type(std::string("/mcp re") + kTab);  // reload, reconnect, remove: "re" is their common prefix
  ASSERT_TRUE(t->wait_for_text("reconnect")) << t->plain();
  EXPECT_THAT(t->plain(), HasSubstr("reload"));
  EXPECT_THAT(t->plain(), HasSubstr("remove"));
  EXPECT_EQ(quit(*t), 0);
}

TEST_F(CliRepl, UpArrow_RecallsThePreviousLine) {
  auto t = start();
  ASSERT_TRUE(enter(*t, std::string(R"(mcp_demo_echo {"message": "again"})") + kEnter))
      << t->plain();
  EXPECT_EQ(answers(*t, "again"), 1u) << t->plain();
  ASSERT_TRUE(enter(*t, std::string(kUp) + kEnter)) << t->plain();
  EXPECT_EQ(answers(*t, "again"), 2u) << t->plain();
  EXPECT_EQ(quit(*t), 0);
}

TEST_F(CliRepl, History_OutlivesTheProcess_WithoutTheLinesThatStartWithASpace) {
  {
    auto first = start();
    ASSERT_TRUE(enter(*first, std::string(R"(mcp_demo_echo {"message": "kept"})") + kEnter));
    ASSERT_TRUE(enter(*first, std::string(R"( mcp_demo_echo {"message": "not kept"})") + kEnter));
    EXPECT_EQ(answers(*first, "not kept"), 1u) << first->plain();
    EXPECT_EQ(quit(*first), 0);
  }
  ASSERT_TRUE(fs::exists(history_file()));
  struct stat st {};
  ASSERT_EQ(::stat(history_file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::stringstream text;
  text << std::ifstream(history_file()).rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("kept"));
  EXPECT_THAT(text.str(), Not(HasSubstr("not")));

  auto second = start();
  ASSERT_TRUE(enter(*second, std::string(kUp) + kEnter)) << second->plain();
  EXPECT_EQ(answers(*second, "kept"), 1u) << second->plain();
  EXPECT_EQ(quit(*second), 0);
}

}  // namespace
}  // namespace cli_repl_test
}  // namespace mcprt
