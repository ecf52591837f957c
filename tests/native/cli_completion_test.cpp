// Shell completion and the man page (SPEC §18): `mcprt completion bash|zsh|fish` prints the
// files installed under share/; bash (its completion function called as the shell calls it)
// and fish (`complete --do-complete`) complete commands, options, server names from the
// configs and tool names from the tool cache — without starting any server; so does zsh,
// driven through its line editor. The man page help2man generated next to the binary renders with
// groff.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "mcprt/result.hpp"

namespace mcprt {
namespace cli_completion_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using native::test::MeasuredRun;
using native::test::run_measured;
using native::test::RunOptions;
using ::testing::HasSubstr;
using ::testing::Not;

std::string read(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

class CliCompletion : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-cli-completion-" + std::to_string(rd()));
    fs::create_directories(home_ / "project");
    fs::create_directories(home_ / "config" / "mcprt");
    // The demo server's tools go into the tool cache once (the only run that connects).
    write_user_file({{"demo", {{"command", MCPRT_DEMO_SERVER}}}});
    MeasuredRun tools = mcprt({"tools"});
    ASSERT_EQ(tools.exit_code, 0) << tools.err;
    // Then a server that leaves a mark when it is started: completing must never start it.
    write_user_file(
        {{"demo", {{"command", MCPRT_DEMO_SERVER}}},
         {"trap",
          {{"command", "/bin/sh"}, {"args", {"-c", "touch '" + marker().string() + "'"}}}}});
    std::ofstream(home_ / "other.json")
        << json{{"mcpServers", {{"only_in_file", {{"url", "https://x.example/mcp"}}}}}};
  }
  void TearDown() override {
    EXPECT_FALSE(fs::exists(marker())) << "completing started a server";
    fs::remove_all(home_);
  }

  void write_user_file(const json& servers) {
    std::ofstream(home_ / "config" / "mcprt" / "mcp.json") << json{{"mcpServers", servers}}.dump();
  }
  fs::path marker() const { return home_ / "spawned"; }

  RunOptions options() const {
    RunOptions o;
    o.cwd = (home_ / "project").string();
    o.env = {{"HOME", home_.string()},
             {"XDG_CONFIG_HOME", (home_ / "config").string()},
             {"XDG_CACHE_HOME", (home_ / "cache").string()},
             {"XDG_DATA_HOME", (home_ / "data").string()},
             {"PATH", fs::path(MCPRT_CLI).parent_path().string() + ":/usr/bin:/bin"}};
    o.unset_env = {"MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL"};
    o.timeout = Millis(60000);
    return o;
  }
  MeasuredRun mcprt(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {MCPRT_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_measured(argv, options());
  }
  MeasuredRun shell(const std::vector<std::string>& argv) {
    MeasuredRun r = run_measured(argv, options());
    EXPECT_FALSE(r.timed_out);
    return r;
  }

  fs::path home_;
};

TEST_F(CliCompletion, Scripts_AreTheInstalledFiles) {
  const fs::path dir = fs::path(MCPRT_SOURCE_DIR) / "platform-native" / "cli" / "completions";
  EXPECT_EQ(mcprt({"completion", "bash"}).out, read(dir / "mcprt.bash"));
  EXPECT_EQ(mcprt({"completion", "zsh"}).out, read(dir / "_mcprt"));
  EXPECT_EQ(mcprt({"completion", "fish"}).out, read(dir / "mcprt.fish"));
  MeasuredRun bad = mcprt({"completion", "tcsh"});
  EXPECT_EQ(bad.exit_code, 2);
}

// Each line: the words typed (the last one being completed) | what bash would offer.
TEST_F(CliCompletion, Bash_CompletesCommandsOptionsServersAndTools) {
  const std::string m = MCPRT_CLI;
  const std::string other = (home_ / "other.json").string();
  const std::string script =
      "source <('" + m +
      "' completion bash) || exit 9\n"
      "comp() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _mcprt; "
      "echo \"${*:2}|${COMPREPLY[*]}\"; }\n"
      "comp '" +
      m +
      "' st\n"
      "comp '" +
      m +
      "' --c\n"
      "comp '" +
      m +
      "' add --sc\n"
      "comp '" +
      m +
      "' add --scope p\n"
      "comp '" +
      m +
      "' add -t ''\n"
      "comp '" +
      m +
      "' status ''\n"
      "comp '" +
      m +
      "' disable t\n"
      "comp '" +
      m +
      "' call mcp_demo_e\n"
      "comp '" +
      m + "' --config '" + other +
      "' get ''\n"
      "comp '" +
      m +
      "' auth login ''\n"
      "comp '" +
      m +
      "' completion ''\n"
      "comp '" +
      m + "' add x -- ''\n";
  MeasuredRun r = shell({"/bin/bash", "--norc", "--noprofile", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"st|status\n", "--c|--cwd --config\n", "add --sc|--scope\n", "add --scope p|project\n",
        "add -t |stdio http sse\n", "status |demo trap\n", "disable t|trap\n",
        "call mcp_demo_e|mcp_demo_echo\n", "get |only_in_file\n", "auth login |demo trap\n",
        "completion |bash zsh fish\n"}) {
    EXPECT_THAT(r.out, HasSubstr(line));
  }
  // After `--`, the server's command line: files (the project folder is empty).
  EXPECT_THAT(r.out, HasSubstr("add x -- |\n"));
}

TEST_F(CliCompletion, Fish_CompletesCommandsServersAndTools) {
  const fs::path script = home_ / "mcprt.fish";
  std::ofstream(script) << mcprt({"completion", "fish"}).out;
  MeasuredRun r = shell({"/usr/bin/fish", "--no-config", "-c",
                         "source '" + script.string() +
                             "'\n"
                             "complete --do-complete 'mcprt st'; echo ---\n"
                             "complete --do-complete 'mcprt disable '; echo ---\n"
                             "complete --do-complete 'mcprt call mcp_demo_e'; echo ---\n"
                             "complete --do-complete 'mcprt add --scope '\n"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("status\tA server's state, error and stderr tail\n---\n"));
  EXPECT_THAT(r.out, HasSubstr("demo\tserver\ntrap\tserver\n---\n"));
  EXPECT_THAT(r.out, HasSubstr("mcp_demo_echo\ttool\n---\n"));
  EXPECT_THAT(r.out, HasSubstr("project\tWhich file\n"));
}

// zsh's completion system only runs in its line editor: a zsh on a pseudo-terminal (zpty)
// gets each line typed with a Tab, then a key bound to a widget that appends the line as
// completed to a file. The last command prints a marker the driver waits for.
TEST_F(CliCompletion, Zsh_CompletesCommandsOptionsServersAndTools) {
  const fs::path dir = home_ / "zfunc";
  fs::create_directories(dir);
  std::ofstream(dir / "_mcprt") << mcprt({"completion", "zsh"}).out;
  MeasuredRun syntax = shell({"/usr/bin/zsh", "-n", (dir / "_mcprt").string()});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;

  const fs::path lines = home_ / "zsh-lines";
  const fs::path driver = home_ / "driver.zsh";
  std::ofstream(driver) << "zmodload zsh/zpty\n"
                           "zpty z zsh -f -i\n"
                           "zpty -w z 'fpath=("
                        << dir.string()
                        << " $fpath); autoload -Uz compinit; compinit -u -D'\n"
                           "zpty -w z 'dump() { print -r -- \"$BUFFER\" >> "
                        << lines.string()
                        << "; BUFFER=; }; zle -N dump; bindkey \"^T\" dump'\n"
                           "for line in 'mcprt st' 'mcprt --c' 'mcprt add --scope p' 'mcprt "
                           "disable t' 'mcprt call mcp_demo_e' "
                           "'mcprt --config "
                        << (home_ / "other.json").string()
                        << " get o'; do\n"
                           "  zpty -w -n z \"$line\"$'\\t\\x14'\n"
                           "done\n"
                           "zpty -w z 'print \"D\"\"ONE\"'\n"
                           "zpty -r z out '*DONE*'\n"
                           "zpty -d z\n";
  MeasuredRun r = shell({"/usr/bin/zsh", "-f", driver.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read(lines),
            "mcprt status \n"
            "mcprt --c\n"  // --cwd and --config: nothing to add to "--c" (the list is shown)
            "mcprt add --scope project \n"
            "mcprt disable trap \n"
            "mcprt call mcp_demo_echo \n"
            "mcprt --config " +
                (home_ / "other.json").string() + " get only_in_file \n");
}

TEST(CliManPage, RendersTheCommandsEnvironmentAndExitStatus) {
  const fs::path page = fs::path(MCPRT_CLI).parent_path() / "mcprt.1";
  ASSERT_TRUE(fs::exists(page))
      << page << " is missing: the build makes it with help2man (scripts/bootstrap)";
  RunOptions o;
  o.env = {{"LC_ALL", "C.UTF-8"}};
  MeasuredRun r = run_measured({"/usr/bin/groff", "-man", "-Tutf8", "-P-cbou", page.string()}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s :
       {"mcprt - the MCP runtime for AI agents", "SYNOPSIS", "add", "remove", "completion",
        "MCPRT_TIMEOUT_MS", "XDG_STATE_HOME", "a project server is not trusted", "SEE ALSO"}) {
    EXPECT_THAT(r.out, HasSubstr(s));
  }
  EXPECT_THAT(r.out, Not(HasSubstr("__complete")));
}

}  // namespace
}  // namespace cli_completion_test
}  // namespace mcprt
