// `mcprt search` and the REPL's `/mcp search` end to end (SPEC §16): the real CLI on a
// temporary HOME with a --config file of demo servers. The hits are ranked as an agent's
// mcp_tool_search ranks them (an exact name first, then keywords); `select:` looks up full
// names in the order given and names the ones that are no tool; bad input is a clear usage
// error that starts nothing.
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
#include "terminal_session.hpp"

namespace mcprt {
namespace cli_search_test {
namespace {

namespace fs = std::filesystem;
using native::test::MeasuredRun;
using native::test::run_measured;
using native::test::RunOptions;
using native::test::TerminalSession;
using ::testing::HasSubstr;
using ::testing::Not;

class CliSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-cli-search-" + std::to_string(rd()));
    fs::create_directories(home_ / "project");
    // Two demo servers with the same tools under two names, "demo" and "alt" (different
    // arguments: one command line would be one endpoint, and one entry would shadow the other).
    write_config(
        json{{"mcpServers",
              {{"demo", {{"command", MCPRT_DEMO_SERVER}, {"args", {"--protocol", "legacy"}}}},
               {"alt", {{"command", MCPRT_DEMO_SERVER}}}}}}
            .dump());
  }
  void TearDown() override { fs::remove_all(home_); }

  void write_config(const std::string& text) const { std::ofstream(config()) << text; }
  fs::path config() const { return home_ / "servers.json"; }

  // mcprt --config <file> --no-cache <args>, on the temporary HOME.
  MeasuredRun mcprt(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    std::vector<std::string> argv = {MCPRT_CLI, "--config", config().string(), "--no-cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions o;
    o.cwd = (home_ / "project").string();
    o.env = {{"HOME", home_.string()},
             {"XDG_CONFIG_HOME", (home_ / "config").string()},
             {"XDG_CACHE_HOME", (home_ / "cache").string()},
             {"XDG_DATA_HOME", (home_ / "data").string()},
             {"XDG_STATE_HOME", (home_ / "state").string()}};
    o.unset_env = {"MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL", "NO_COLOR"};
    o.stdin_text = stdin_text;
    o.timeout = Millis(60000);
    MeasuredRun r = run_measured(argv, o);
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.leftovers.empty()) << "the CLI left processes behind";
    return r;
  }

  static json parse(const MeasuredRun& r) { return json::parse(r.out, nullptr, false); }

  // The lines of `text` that are hit rows ("  <name>  <server>  <match>  <score>  <summary>").
  static std::vector<std::vector<std::string>> rows(const std::string& text) {
    std::vector<std::vector<std::string>> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("  mcp_", 0) != 0) continue;
      std::istringstream words(line);
      std::vector<std::string> row;
      for (std::string w; words >> w;) row.push_back(w);
      out.push_back(std::move(row));
    }
    return out;
  }

  fs::path home_;
};

TEST_F(CliSearch, Text_AnExactNameRanksFirstWithServerMatchScoreAndSummary) {
  MeasuredRun r = mcprt({"search", "mcp_alt_add"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto hits = rows(r.out);
  ASSERT_FALSE(hits.empty()) << r.out;
  // name, server, "exact name" (two words), score ("-": no keyword ranked it), summary.
  EXPECT_EQ(hits[0][0], "mcp_alt_add") << r.out;
  EXPECT_EQ(hits[0][1], "alt") << r.out;
  EXPECT_EQ(hits[0][2] + " " + hits[0][3], "exact name") << r.out;
  EXPECT_THAT(r.out,
              HasSubstr("Adds two numbers and returns the sum as text and as structuredContent."));
  EXPECT_THAT(r.out, HasSubstr("Tools for \"mcp_alt_add\" ("));
  // The other server's add is not the name asked for: never ahead of it.
  for (std::size_t i = 1; i < hits.size(); ++i) EXPECT_NE(hits[i][2], "exact") << r.out;
}

TEST_F(CliSearch, Text_KeywordsFindTheToolForATask) {
  MeasuredRun r = mcprt({"search", "count", "the", "words", "of", "a", "text", "--limit", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto hits = rows(r.out);
  ASSERT_GE(hits.size(), 2u) << r.out;
  EXPECT_LE(hits.size(), 3u) << r.out;
  // Both servers' word_count lead (equal scores, ties by name), found by keywords.
  EXPECT_EQ(hits[0][0], "mcp_alt_word_count") << r.out;
  EXPECT_EQ(hits[1][0], "mcp_demo_word_count") << r.out;
  EXPECT_EQ(hits[0][2], "keywords") << r.out;
  EXPECT_NE(hits[0][3], "-") << "a keyword hit has a BM25 score: " << r.out;
  EXPECT_THAT(r.out, HasSubstr("Tools for \"count the words of a text\""));
}

TEST_F(CliSearch, Json_HitsCarryTheirDefinitions) {
  MeasuredRun r = mcprt({"search", "--json", "--limit", "2", "add two numbers"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json doc = parse(r);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["query"], "add two numbers");
  ASSERT_EQ(doc["hits"].size(), 2u) << r.out;
  const json& top = doc["hits"][0];
  EXPECT_EQ(top["tool"], "add") << r.out;
  EXPECT_EQ(top["match"], "keywords") << r.out;
  EXPECT_GT(top["score"].get<double>(), 0.0) << r.out;
  EXPECT_EQ(top["summary"],
            "Adds two numbers and returns the sum as text and as structuredContent.");
  EXPECT_TRUE(top["inputSchema"]["properties"].contains("a")) << r.out;
  EXPECT_EQ(doc["notFound"], json::array());
  EXPECT_GE(doc["toolCount"].get<int>(), 12) << "every tool of both servers was searched";
  EXPECT_EQ(doc["servers"].size(), 2u);
}

TEST_F(CliSearch, Select_ListsTheNamesInTheOrderGiven) {
  MeasuredRun text = mcprt({"search", "select:mcp_demo_word_count,mcp_alt_echo"});
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  const auto hits = rows(text.out);
  ASSERT_EQ(hits.size(), 2u) << text.out;
  EXPECT_EQ(hits[0][0], "mcp_demo_word_count");
  EXPECT_EQ(hits[1][0], "mcp_alt_echo");
  EXPECT_EQ(hits[0][2], "selected");

  MeasuredRun as_json = mcprt({"search", "--json", "select:mcp_alt_echo"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.out << as_json.err;
  json doc = parse(as_json);
  ASSERT_EQ(doc["hits"].size(), 1u) << as_json.out;
  EXPECT_EQ(doc["hits"][0]["name"], "mcp_alt_echo");
  EXPECT_EQ(doc["hits"][0]["match"], "selected");
  EXPECT_EQ(doc["hits"][0]["server"], "alt");
}

TEST_F(CliSearch, Select_AnUnknownNameIsReportedAndExitsTwo) {
  MeasuredRun text = mcprt({"search", "select:mcp_demo_echo,mcp_demo_nope"});
  EXPECT_EQ(text.exit_code, 2) << text.out << text.err;
  const auto hits = rows(text.out);
  ASSERT_EQ(hits.size(), 1u) << text.out;
  EXPECT_EQ(hits[0][0], "mcp_demo_echo");
  EXPECT_THAT(text.out, HasSubstr("No tool named \"mcp_demo_nope\""));

  MeasuredRun as_json = mcprt({"search", "--json", "select:mcp_demo_nope"});
  EXPECT_EQ(as_json.exit_code, 2) << as_json.out << as_json.err;
  json doc = parse(as_json);
  ASSERT_TRUE(doc.is_object()) << as_json.out;
  EXPECT_EQ(doc["notFound"], json::array({"mcp_demo_nope"}));
  EXPECT_EQ(doc["hits"], json::array());
}

TEST_F(CliSearch, Server_SearchesOnlyThatServersTools) {
  MeasuredRun r = mcprt({"search", "--json", "--server", "alt", "echo"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  json doc = parse(r);
  ASSERT_TRUE(doc.is_object()) << r.out;
  ASSERT_FALSE(doc["hits"].empty()) << r.out;
  EXPECT_EQ(doc["hits"][0]["name"], "mcp_alt_echo");
  EXPECT_EQ(doc["hits"][0]["match"], "exact-name");
  for (const auto& hit : doc["hits"]) EXPECT_EQ(hit["server"], "alt") << r.out;

  MeasuredRun unknown = mcprt({"search", "--server", "nope", "echo"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown server \"nope\""));
}

TEST_F(CliSearch, EmptyQuery_IsAUsageErrorAndStartsNothing) {
  // A server that leaves a mark when started: a query error must come before any start.
  const fs::path marker = home_ / "started";
  write_config(json{
      {"mcpServers",
       {{"trap", {{"command", "/bin/sh"}, {"args", {"-c", "touch '" + marker.string() + "'"}}}}}}}
                   .dump());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"search"}, {"search", ""}, {"search", "  ", "--json"}}) {
    MeasuredRun r = mcprt(args);
    EXPECT_EQ(r.exit_code, 2) << args.size() << ": " << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr("search needs a query"));
    EXPECT_EQ(r.out, "");
  }
  MeasuredRun limit = mcprt({"search", "--limit", "0", "echo"});
  EXPECT_EQ(limit.exit_code, 2) << limit.err;
  EXPECT_THAT(limit.err, HasSubstr("--limit"));
  EXPECT_FALSE(fs::exists(marker)) << "a bad search started a server";
}

TEST_F(CliSearch, Repl_McpSearchShowsHitsAndLoadsNothing) {
  MeasuredRun r = mcprt({"repl"},
                        "/mcp search --limit 1 mcp_demo_now\n"
                        "/mcp search select:mcp_alt_add,mcp_alt_nope\n"
                        "/mcp search\n"
                        "/mcp search --limit 99 now\n"
                        "/tools\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Tools for \"mcp_demo_now\" (1 of "));
  const auto hits = rows(r.out);
  ASSERT_GE(hits.size(), 2u) << r.out;
  EXPECT_EQ(hits[0][0], "mcp_demo_now");
  EXPECT_EQ(hits[0][2] + " " + hits[0][3], "exact name");
  EXPECT_EQ(hits[1][0], "mcp_alt_add");
  EXPECT_EQ(hits[1][2], "selected");
  EXPECT_THAT(r.out, HasSubstr("No tool named \"mcp_alt_nope\""));
  EXPECT_THAT(r.out, HasSubstr("Wrong arguments for /mcp search."));  // no query
  EXPECT_THAT(r.out, HasSubstr("--limit takes a number from 1 to 50."));
  // The CLI defers nothing: every tool stays listed, and no meta-tool joins them.
  EXPECT_THAT(r.out, HasSubstr("\nmcp_demo_echo\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("mcp_tool_search")));
}

// Tab in the REPL: the subcommand, then select:<tool> (a query is free text; the exact form
// is what completes).
TEST_F(CliSearch, ReplTab_CompletesTheSubcommandAndSelectNames) {
  TerminalSession::Options o;
  o.cwd = (home_ / "project").string();
  o.env = {{"HOME", home_.string()},
           {"XDG_CONFIG_HOME", (home_ / "config").string()},
           {"XDG_STATE_HOME", (home_ / "state").string()},
           {"XDG_DATA_HOME", (home_ / "data").string()},
           {"TERM", "xterm"}};
  o.unset_env = {"MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL", "DISPLAY", "WAYLAND_DISPLAY", "EDITRC"};
  o.columns = 200;
  TerminalSession t({MCPRT_CLI, "--config", config().string(), "--no-cache", "repl"}, o);
  ASSERT_TRUE(t.started());
  ASSERT_TRUE(t.wait_for_text("mcprt> ")) << t.raw();
  t.type("/mcp sea\t");
  ASSERT_TRUE(t.wait_for_text("/mcp search ")) << t.plain();
  t.type("select:mcp_demo_wo\t");
  ASSERT_TRUE(t.wait_for_text("/mcp search select:mcp_demo_word_count ")) << t.plain();
  t.type("\r");
  ASSERT_TRUE(t.wait_for_text("mcprt> ", 2)) << t.plain();
  EXPECT_THAT(t.plain(), HasSubstr("Tools for \"select:mcp_demo_word_count\" (1 of "));
  t.type("\x04");
  EXPECT_EQ(t.finish(), 0);
}

// The shells' completion scripts and the man page know the verb.
TEST_F(CliSearch, CompletionScriptsAndManPage_KnowTheVerb) {
  RunOptions o;
  o.env = {{"HOME", home_.string()}, {"XDG_CONFIG_HOME", (home_ / "config").string()}};
  const std::string m = MCPRT_CLI;
  MeasuredRun bash = run_measured(
      {"/bin/bash", "--norc", "--noprofile", "-c",
       "source <('" + m +
           "' completion bash) || exit 9\n"
           "comp() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _mcprt; "
           "echo \"${*:2}|${COMPREPLY[*]}\"; }\n"
           "comp '" +
           m +
           "' sea\n"
           "comp '" +
           m +
           "' search --l\n"
           "comp '" +
           m +
           "' search --limit ''\n"
           "comp '" +
           m + "' --config '" + config().string() + "' search --server ''\n"},
      o);
  ASSERT_EQ(bash.exit_code, 0) << bash.err;
  EXPECT_THAT(bash.out, HasSubstr("sea|search\n"));
  EXPECT_THAT(bash.out, HasSubstr("search --l|--limit\n"));
  EXPECT_THAT(bash.out, HasSubstr("search --limit |\n"));  // a number: nothing to offer
  EXPECT_THAT(bash.out, HasSubstr("search --server |alt demo\n"));

  const fs::path fish_script = home_ / "mcprt.fish";
  std::ofstream(fish_script) << run_measured({MCPRT_CLI, "completion", "fish"}, o).out;
  MeasuredRun fish = run_measured({"/usr/bin/fish", "--no-config", "-c",
                                   "source '" + fish_script.string() +
                                       "'\ncomplete --do-complete 'mcprt sea'; echo ---\n"
                                       "complete --do-complete 'mcprt search --li'\n"},
                                  o);
  ASSERT_EQ(fish.exit_code, 0) << fish.err;
  EXPECT_THAT(fish.out, HasSubstr("search\tFind the tools for a task (tool search)\n---\n"));
  EXPECT_THAT(fish.out, HasSubstr("--limit\t"));

  EXPECT_THAT(run_measured({MCPRT_CLI, "completion", "zsh"}, o).out,
              HasSubstr("'search:find the tools for a task (tool search)'"));

  const fs::path page = fs::path(MCPRT_CLI).parent_path() / "mcprt.1";
  ASSERT_TRUE(fs::exists(page)) << page << " is missing: the build makes it with help2man";
  RunOptions groff;
  groff.env = {{"LC_ALL", "C.UTF-8"}};
  MeasuredRun man =
      run_measured({"/usr/bin/groff", "-man", "-Tutf8", "-P-cbou", page.string()}, groff);
  ASSERT_EQ(man.exit_code, 0) << man.err;
  EXPECT_THAT(man.out, HasSubstr("mcprt search create a directory"));
  EXPECT_THAT(man.out, HasSubstr("an empty search query"));
}

}  // namespace
}  // namespace cli_search_test
}  // namespace mcprt
