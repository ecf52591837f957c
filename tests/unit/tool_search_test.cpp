// Tool search (SPEC §16): the index's ranking rules, summaries, and the session's deferral:
// the meta-tool, the loaded set, rebuilds on change, late servers, child isolation,
// always-load rules and the tool cache before servers connect.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manager_test_fixture.hpp"
#include "mcprt/session.hpp"
#include "mcprt/tool_search.hpp"
#include "session_test_support.hpp"

namespace mcprt {
namespace tool_search_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ToolSearchDocument doc(std::string server, std::string tool, std::string description,
                       std::vector<std::string> properties = {}, std::string title = {}) {
  ToolSearchDocument d;
  d.name = "mcp_" + server + "_" + tool;
  d.raw_name = std::move(tool);
  d.server = std::move(server);
  d.description = std::move(description);
  d.properties = std::move(properties);
  d.title = std::move(title);
  return d;
}

std::vector<std::string> names_of(const ToolSearchResult& r) {
  std::vector<std::string> out;
  for (const auto& h : r.hits) out.push_back(h.name);
  return out;
}

ToolSearchIndex small_index() {
  ToolSearchIndex index;
  index.rebuild({
      doc("fs", "read_file", "Read the complete contents of a file from the file system.", {"path"}),
      doc("fs", "write_file", "Create a new file or overwrite an existing file with content.",
          {"path", "content"}),
      doc("fs", "list_directory", "Get a detailed listing of all files and directories in a path.",
          {"path"}),
      doc("fs", "create_directory", "Create a new directory or ensure a directory exists.", {"path"}),
      doc("github", "create_pull_request", "Open a new pull request in a GitHub repository.",
          {"owner", "repo", "title", "head", "base"}),
      doc("github", "search_issues", "Search issues and pull requests across repositories.",
          {"query"}),
      doc("browser", "take_screenshot", "Take a screenshot of the current page or an element.",
          {"element", "fullPage"}, "Take a screenshot"),
      doc("memory", "search_nodes",
          "Search for nodes in the knowledge graph; search by name, type and observation. Search "
          "search search.",
          {"query"}),
      doc("web", "search", "Search the web.", {"q"}),
  });
  return index;
}

// --- summaries and terms ----------------------------------------------------------------

TEST(ToolSearchSummary, CollapsesWhitespaceAndKeepsShortTextWhole) {
  EXPECT_EQ(summarize_description("  Read\n\n a   file.\t"), "Read a file.");
  EXPECT_EQ(summarize_description(""), "");
}

TEST(ToolSearchSummary, CutsAtAWordBoundaryWithinTheCapAndMarksTheCut) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "word" + std::to_string(i) + " ";
  const std::string s = summarize_description(text);
  EXPECT_LE(s.size(), kToolSummaryMaxBytes);
  ASSERT_GE(s.size(), 4u);
  EXPECT_EQ(s.substr(s.size() - 3), "\xE2\x80\xA6");
  const std::string kept = s.substr(0, s.size() - 3);
  // Ends with a whole word of the original (the next byte of the original is a space).
  EXPECT_EQ(text.compare(0, kept.size(), kept), 0);
  EXPECT_EQ(text[kept.size()], ' ');
}

TEST(ToolSearchSummary, ASingleLongWordIsCutAtAUtf8Boundary) {
  std::string text;
  for (int i = 0; i < 150; ++i) text += "\xC3\xA9";  // é, 2 bytes each, no spaces
  const std::string s = summarize_description(text, 11);
  // 8 bytes of text (4 × é) + the 3-byte ellipsis.
  EXPECT_EQ(s, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xE2\x80\xA6");
}

TEST(ToolSearchTerms, SplitsCaseStylesDropsStopWordsAndPlurals) {
  EXPECT_THAT(search_terms("readFile HTTPServer list_directories take-screenshot the files"),
              ElementsAre("read", "file", "readfile", "http", "server", "httpserver", "list",
                          "directory", "take", "screenshot", "file"));
  EXPECT_THAT(search_terms("JavaScript"), ElementsAre("java", "script", "javascript"));
  EXPECT_THAT(search_terms("status process matches"), ElementsAre("status", "process", "match"));
}

// --- ranking ----------------------------------------------------------------------------

TEST(ToolSearchRanking, AnExactNameRanksFirstThenNameSubstringsThenKeywords) {
  const ToolSearchIndex index = small_index();
  const auto r = index.search("search", 8);
  // memory/search_nodes says "search" five times, but the tool *named* search wins, then
  // the tools whose names hold it, before any keyword-only match.
  ASSERT_GE(r.hits.size(), 3u);
  EXPECT_EQ(r.hits[0].name, "mcp_web_search");
  EXPECT_EQ(r.hits[0].match, ToolSearchMatch::exact_name);
  EXPECT_EQ(r.hits[1].match, ToolSearchMatch::name_substring);
  EXPECT_EQ(r.hits[2].match, ToolSearchMatch::name_substring);
  EXPECT_THAT((std::vector<std::string>{r.hits[1].name, r.hits[2].name}),
              ::testing::UnorderedElementsAre("mcp_github_search_issues", "mcp_memory_search_nodes"));
  for (std::size_t i = 3; i < r.hits.size(); ++i) EXPECT_EQ(r.hits[i].match, ToolSearchMatch::keywords);
}

TEST(ToolSearchRanking, FullNamesLabelsAndSpacedNamesFindTheirTool) {
  const ToolSearchIndex index = small_index();
  EXPECT_EQ(index.search("mcp_fs_read_file").hits.at(0).name, "mcp_fs_read_file");
  EXPECT_EQ(index.search("MCP_FS_READ_FILE").hits.at(0).match, ToolSearchMatch::exact_name);
  EXPECT_EQ(index.search("fs/write_file").hits.at(0).name, "mcp_fs_write_file");
  // "create directory" is no word of a description in that order, but the name holds it.
  const auto r = index.search("create directory");
  EXPECT_EQ(r.hits.at(0).name, "mcp_fs_create_directory");
  EXPECT_EQ(r.hits.at(0).match, ToolSearchMatch::name_substring);
}

TEST(ToolSearchRanking, KeywordsRankByRelevanceAcrossFields) {
  const ToolSearchIndex index = small_index();
  EXPECT_EQ(index.search("take a screenshot of the page").hits.at(0).name, "mcp_browser_take_screenshot");
  EXPECT_EQ(index.search("open a pull request").hits.at(0).name, "mcp_github_create_pull_request");
  EXPECT_EQ(index.search("show the files in a folder path listing").hits.at(0).name,
            "mcp_fs_list_directory");
  // A schema property name is indexed: "fullPage" only appears there.
  EXPECT_EQ(index.search("full page").hits.at(0).name, "mcp_browser_take_screenshot");
  EXPECT_TRUE(index.search("kubernetes").hits.empty());
}

TEST(ToolSearchRanking, CommonVerbsAndAbbreviationsFindTheirSynonyms) {
  const ToolSearchIndex index = small_index();
  // No tool says "add" or "folder": create and directory do.
  EXPECT_EQ(index.search("add a folder").hits.at(0).name, "mcp_fs_create_directory");
  // A synonym weighs less than the word itself: "fetch" alone finds read_file (get/read),
  // but a tool that says "fetch" would win.
  EXPECT_EQ(index.search("fetch file contents").hits.at(0).name, "mcp_fs_read_file");
  ToolSearchIndex literal;
  literal.rebuild({doc("a", "one", "Read a page."), doc("b", "two", "Fetch a page.")});
  EXPECT_EQ(literal.search("fetch page").hits.at(0).name, "mcp_b_two");
  EXPECT_EQ(literal.search("fetch page").hits.size(), 2u);
}

TEST(ToolSearchRanking, APlusTermIsRequiredInTheName) {
  const ToolSearchIndex index = small_index();
  const auto r = index.search("+directory files");
  EXPECT_THAT(names_of(r), ::testing::UnorderedElementsAre("mcp_fs_create_directory",
                                                           "mcp_fs_list_directory"));
}

TEST(ToolSearchRanking, SelectLoadsExactNamesInOrderAndReportsUnknownOnes) {
  const ToolSearchIndex index = small_index();
  const auto r = index.search(
      "select: mcp_fs_write_file, nope, MCP_FS_READ_FILE,fs/list_directory,mcp_fs_write_file");
  EXPECT_THAT(names_of(r),
              ElementsAre("mcp_fs_write_file", "mcp_fs_read_file", "mcp_fs_list_directory"));
  for (const auto& h : r.hits) EXPECT_EQ(h.match, ToolSearchMatch::selected);
  EXPECT_THAT(r.not_found, ElementsAre("nope"));
}

TEST(ToolSearchRanking, LimitDefaultsToEightAndIsCappedAtFifty) {
  std::vector<ToolSearchDocument> docs;
  for (int i = 0; i < 80; ++i) {
    docs.push_back(doc("s", "tool" + std::to_string(i), "Fetch a weather report for a city."));
  }
  ToolSearchIndex index;
  index.rebuild(std::move(docs));
  EXPECT_EQ(index.search("weather").hits.size(), kToolSearchDefaultLimit);
  EXPECT_EQ(index.search("weather", 3).hits.size(), 3u);
  EXPECT_EQ(index.search("weather", 1000).hits.size(), kToolSearchMaxLimit);
  // Equal scores are ordered by name, so the result is stable.
  EXPECT_EQ(index.search("weather", 2).hits[0].name, "mcp_s_tool0");
  EXPECT_EQ(index.search("weather", 2).hits[1].name, "mcp_s_tool1");
}

TEST(ToolSearchRanking, EmptyAndStopWordQueriesFindNothingAndHugeTextIsBounded) {
  ToolSearchIndex index;
  std::string huge(4 * 1024 * 1024, 'x');
  huge += " needle";
  index.rebuild({doc("s", "big", huge), doc("s", "small", "a needle in a haystack")});
  EXPECT_TRUE(index.search("").hits.empty());
  EXPECT_TRUE(index.search("   ").hits.empty());
  EXPECT_TRUE(index.search("the of a").hits.empty());
  // Only the first 8 KiB of a description are indexed: the needle after 4 MiB is not.
  EXPECT_THAT(names_of(index.search("needle")), ElementsAre("mcp_s_small"));
  EXPECT_EQ(index.size(), 2u);
}

// --- the session ------------------------------------------------------------------------

class ToolSearchSession : public unit::SessionFixture {
 protected:
  // `count` tools on `server`: t0, t1, ... plus any extra definitions.
  void serve_many(const std::string& server, int count, std::vector<json> extra = {},
                  std::string instructions = {}) {
    std::vector<json> defs = std::move(extra);
    for (int i = 0; i < count; ++i) defs.push_back(unit::tool_def("t" + std::to_string(i)));
    farm.on_connect(server, [defs, instructions](testing::FakeServer& s) {
      s.set_tools(defs);
      if (!instructions.empty()) s.set_instructions(instructions);
      s.on_tool("weather", [](const json& args) -> Result<json> {
        return json{{"content", json::array({{{"type", "text"}, {"text", "sunny " + args.dump()}}})}};
      });
    });
  }
  static json weather_tool() {
    return {{"name", "weather"},
            {"description", "Get the weather forecast for a city."},
            {"inputSchema", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}}}};
  }
  std::optional<Result<ToolResult>> call(const std::string& name, json args) {
    std::optional<Result<ToolResult>> got;
    registry.call(name, std::move(args), {}, [&](Result<ToolResult> r) { got = std::move(r); });
    ex.run_until_idle();
    return got;
  }
  bool has(const std::string& name) const { return registry.contains(name); }
};

TEST_F(ToolSearchSession, AutomaticDefersAboveThirtyToolsAndNotAtThirty) {
  serve_many("a", 30);
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  EXPECT_FALSE(session.tool_search_active());
  EXPECT_EQ(registry.mcp_tool_count(), 30u);
  EXPECT_FALSE(has(kToolSearchTool));

  serve_many("b", 1);
  write(kUserFile, {{"mcpServers", {{"a", server("a")}, {"b", server("b")}}}});
  EXPECT_THAT(run("/mcp reload"), HasSubstr("b"));
  EXPECT_TRUE(session.tool_search_active());
  // Only the meta-tool is visible; all 31 are in the catalog, none loaded.
  EXPECT_EQ(registry.names(), std::vector<std::string>{kToolSearchTool});
  const auto catalog = session.catalog();
  ASSERT_EQ(catalog.size(), 31u);
  for (const auto& e : catalog) EXPECT_FALSE(e.loaded) << e.name;
  EXPECT_THAT(session.catalog_text(), HasSubstr("mcp_b_t0: tool t0\n"));
  EXPECT_THAT(registry.find(kToolSearchTool)->description(), HasSubstr("31 MCP tools from a, b"));
}

TEST_F(ToolSearchSession, TheTokenBudgetAlsoTurnsItOn) {
  serve_many("a", 3);
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  EXPECT_FALSE(session.tool_search_active());
  std::size_t tokens = 0;
  for (const auto& t : manager->tools()) tokens += estimate_tool_tokens(t->info());
  session.set_tool_search({ToolSearchMode::automatic, 30, tokens - 1});
  EXPECT_TRUE(session.tool_search_active());
  session.set_tool_search({ToolSearchMode::automatic, 30, tokens});
  EXPECT_FALSE(session.tool_search_active());
}

TEST_F(ToolSearchSession, TheMetaToolLoadsWhatItFindsAndTheLoadedToolCanBeCalled) {
  serve_many("a", 40, {weather_tool()});
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  ASSERT_TRUE(session.tool_search_active());
  ASSERT_FALSE(has("mcp_a_weather"));
  const std::uint64_t generation = registry.generation();

  auto r = call(kToolSearchTool, {{"query", "forecast for a city"}, {"limit", 1}});
  ASSERT_TRUE(r && r->ok());
  EXPECT_FALSE((*r)->is_error) << (*r)->text;
  EXPECT_THAT((*r)->text, HasSubstr("Loaded 1 tool"));
  EXPECT_THAT((*r)->text, HasSubstr("## mcp_a_weather"));
  const json& tools = (*r)->structured_content["tools"];
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]["name"], "mcp_a_weather");
  EXPECT_EQ(tools[0]["inputSchema"]["properties"]["city"]["type"], "string");

  EXPECT_TRUE(has("mcp_a_weather"));
  EXPECT_GT(registry.generation(), generation);
  EXPECT_THAT(session.loaded_tools(), ElementsAre("mcp_a_weather"));
  auto w = call("mcp_a_weather", {{"city", "Lisbon"}});
  ASSERT_TRUE(w && w->ok());
  EXPECT_EQ((*w)->text, "sunny {\"city\":\"Lisbon\"}");
}

TEST_F(ToolSearchSession, SelectLoadsSeveralAndBadArgumentsAreClearErrors) {
  serve_many("a", 40);
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  auto r = call(kToolSearchTool, {{"query", "select:mcp_a_t3,mcp_a_t7,mcp_a_nope"}});
  ASSERT_TRUE(r && r->ok());
  EXPECT_THAT((*r)->text, HasSubstr("Loaded 2 tools"));
  EXPECT_THAT((*r)->text, HasSubstr("No such tool: mcp_a_nope."));
  EXPECT_TRUE(has("mcp_a_t3"));
  EXPECT_TRUE(has("mcp_a_t7"));
  EXPECT_FALSE(has("mcp_a_t4"));

  for (const json& bad : {json{{"query", ""}}, json{{"limit", 3}}, json{{"query", "x"}, {"limit", 0}},
                          json{{"query", "x"}, {"limit", 51}}, json{{"query", 5}}, json("q"),
                          json{{"query", std::string(2000, 'q')}}}) {
    auto e = call(kToolSearchTool, bad);
    ASSERT_TRUE(e && e->ok());
    EXPECT_TRUE((*e)->is_error) << bad.dump();
    EXPECT_THAT((*e)->text, HasSubstr("mcp_tool_search: ")) << bad.dump();
  }
  auto none = call(kToolSearchTool, {{"query", "zzzz qqqq"}});
  ASSERT_TRUE(none && none->ok());
  EXPECT_FALSE((*none)->is_error);
  EXPECT_THAT((*none)->text, HasSubstr("No MCP tool matches \"zzzz qqqq\""));
}

TEST_F(ToolSearchSession, CallingADeferredToolByNameLoadsAndCallsIt) {
  serve_many("a", 40, {weather_tool()});
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  ASSERT_FALSE(has("mcp_a_weather"));
  auto w = call("mcp_a_weather", {{"city", "Porto"}});
  ASSERT_TRUE(w && w->ok());
  EXPECT_EQ((*w)->text, "sunny {\"city\":\"Porto\"}");
  EXPECT_TRUE(has("mcp_a_weather"));
  // A name no server has stays unknown.
  auto u = call("mcp_a_nothing", json::object());
  ASSERT_TRUE(u && u->ok());
  EXPECT_EQ((*u)->text, "Unknown tool: mcp_a_nothing");
}

TEST_F(ToolSearchSession, TheIndexFollowsListChangedAndLateServersJoin) {
  serve_many("a", 40);
  serve("late", {"x"}, {"tools/list"});
  write(kUserFile, {{"mcpServers", {{"a", server("a")}, {"late", server("late")}}}});
  manager_options.wait_for_uncached = false;
  start();
  EXPECT_TRUE(session.search_tools("select:mcp_late_weather").hits.empty());

  // The late server answers its listing: its tools join the index.
  auto* late = farm.latest("late");
  ASSERT_NE(late, nullptr);
  late->reply(late->last_request("tools/list")["id"], {{"tools", json::array({weather_tool()})}});
  ex.run_until_idle();
  EXPECT_EQ(session.search_tools("weather forecast").hits.at(0).name, "mcp_late_weather");

  // A list_changed replaces a's tools: the new one is found, the gone one is not.
  auto* a = farm.latest("a");
  std::vector<json> defs;
  for (int i = 0; i < 40; ++i) defs.push_back(unit::tool_def("t" + std::to_string(i)));
  defs.push_back({{"name", "translate"}, {"description", "Translate text into another language."}});
  a->set_tools(defs);
  a->notify("notifications/tools/list_changed");
  ex.advance(manager_options.list_changed_debounce);
  ex.run_until_idle();
  EXPECT_EQ(session.search_tools("translate some text").hits.at(0).name, "mcp_a_translate");
}

TEST_F(ToolSearchSession, TheLoadedSetSurvivesRefreshesUntilReset) {
  serve_many("a", 40);
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  EXPECT_THAT(session.load_tools({"mcp_a_t1", "mcp_a_zz"}), ElementsAre("mcp_a_zz"));
  EXPECT_TRUE(has("mcp_a_t1"));
  // A reconnect rebuilds the manager's tools: t1 stays loaded.
  EXPECT_THAT(run("/mcp reconnect a"), HasSubstr("a"));
  EXPECT_TRUE(has("mcp_a_t1"));
  session.reset_loaded_tools();
  EXPECT_FALSE(has("mcp_a_t1"));
  EXPECT_TRUE(session.loaded_tools().empty());
}

TEST_F(ToolSearchSession, AChildSessionHasItsOwnLoadedSet) {
  serve_many("a", 40, {weather_tool()});
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  ToolRegistry child_registry(ex);
  auto child = session.make_child(child_registry);
  EXPECT_TRUE(child->tool_search_active());
  EXPECT_EQ(child_registry.names(), std::vector<std::string>{kToolSearchTool});

  std::optional<Result<ToolResult>> got;
  child_registry.call(kToolSearchTool, {{"query", "weather"}}, {},
                      [&](Result<ToolResult> r) { got = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(got && got->ok());
  EXPECT_TRUE(child_registry.contains("mcp_a_weather"));
  EXPECT_FALSE(has("mcp_a_weather"));  // the parent did not load it
  EXPECT_TRUE(session.loaded_tools().empty());

  session.load_tools({"mcp_a_t0"});
  EXPECT_FALSE(child_registry.contains("mcp_a_t0"));
  // The child's loaded tool calls through the parent's connection.
  std::optional<Result<ToolResult>> w;
  child_registry.call("mcp_a_weather", {{"city", "Faro"}}, {},
                      [&](Result<ToolResult> r) { w = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(w && w->ok());
  EXPECT_EQ((*w)->text, "sunny {\"city\":\"Faro\"}");
}

TEST_F(ToolSearchSession, AlwaysLoadFromConfigMetaAndInstructionsBypassDeferral) {
  json meta_tool = unit::tool_def("pinned");
  meta_tool["_meta"] = {{"anthropic/alwaysLoad", true}};
  json not_bool = unit::tool_def("notpinned");
  not_bool["_meta"] = {{"anthropic/alwaysLoad", "yes"}};
  serve_many("a", 40, {meta_tool, not_bool},
             "Call t7 first. Use mcp_a_t9 for details; t1x and xt2 are not names.");
  serve_many("b", 3);
  json b = server("b");
  b["alwaysLoad"] = true;
  write(kUserFile, {{"mcpServers", {{"a", server("a")}, {"b", b}}}});
  start();
  ASSERT_TRUE(session.tool_search_active());
  EXPECT_THAT(registry.names(),
              ElementsAre("mcp_a_pinned", "mcp_a_t7", "mcp_a_t9", "mcp_b_t0", "mcp_b_t1", "mcp_b_t2",
                          kToolSearchTool));
  EXPECT_TRUE(session.loaded_tools().empty());  // always-loaded tools are not "loaded" ones
}

TEST_F(ToolSearchSession, OffShowsEverythingAndRemovesTheMetaTool) {
  serve_many("a", 40);
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  ASSERT_TRUE(has(kToolSearchTool));
  session.set_tool_search({ToolSearchMode::off});
  EXPECT_FALSE(session.tool_search_active());
  EXPECT_FALSE(has(kToolSearchTool));
  EXPECT_EQ(registry.mcp_tool_count(), 40u);
  session.set_tool_search({ToolSearchMode::on});
  EXPECT_EQ(registry.names(), std::vector<std::string>{kToolSearchTool});
}

TEST_F(ToolSearchSession, AHostToolNamedLikeTheMetaToolIsLeftAloneWithAWarning) {
  serve_many("a", 40);
  write(kUserFile, {{"mcpServers", {{"a", server("a")}}}});
  start();
  ToolRegistry host_registry(ex);
  ASSERT_TRUE(
      host_registry.add_tool(std::make_shared<unit::FakeTool>(ex, kToolSearchTool, "host's")).ok());
  McpSession host_session(host_registry, &log);
  host_session.bind(manager);
  EXPECT_EQ(host_registry.find(kToolSearchTool)->description(), "host's");
  EXPECT_TRUE(log.has(LogLevel::warn, "already has a tool named mcp_tool_search"));
  // Deferred tools can still be loaded by name.
  host_session.load_tools({"mcp_a_t2"});
  EXPECT_TRUE(host_registry.contains("mcp_a_t2"));
}

TEST(ToolSearchConfig, AlwaysLoadAndDeferToolsNeverAreReadAndBadValuesReported) {
  auto a = parse_server_entry("a", {{"command", "x"}, {"alwaysLoad", true}});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->always_load);
  auto b = parse_server_entry("b", {{"command", "x"}, {"deferTools", "never"}});
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->always_load);
  std::vector<std::string> warnings;
  auto c = parse_server_entry("c", {{"command", "x"}, {"deferTools", "sometimes"}}, {}, &warnings);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->always_load);
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("Server \"c\": unknown \"deferTools\" \"sometimes\"")));
  auto d = parse_server_entry("d", {{"command", "x"}, {"alwaysLoad", "yes"}});
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.error().message, HasSubstr("alwaysLoad"));
}

TEST(ToolSearchModes, ParseAndPrint) {
  EXPECT_EQ(parse_tool_search_mode("auto").value(), ToolSearchMode::automatic);
  EXPECT_EQ(parse_tool_search_mode("on").value(), ToolSearchMode::on);
  EXPECT_EQ(parse_tool_search_mode("false").value(), ToolSearchMode::off);
  auto bad = parse_tool_search_mode("sometimes");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("\"sometimes\""));
  EXPECT_STREQ(to_string(ToolSearchMode::automatic), "auto");
}

// --- from the tool cache, before any server connected -------------------------------------

class ToolSearchCache : public testing::ManagerTest {};

TEST_F(ToolSearchCache, SearchWorksFromCachedToolsBeforeTheServerConnects) {
  const ServerConfig cfg = config("slow");
  std::vector<json> defs;
  for (int i = 0; i < 35; ++i) defs.push_back(tool("t" + std::to_string(i)));
  defs.push_back({{"name", "weather"}, {"description", "Get the weather forecast for a city."}});
  seed_cache(cfg, defs);
  serve("slow", defs, {"initialize"});
  make();
  start({cfg});
  ex.advance(Millis(250));  // the gate: the server is still initializing
  ASSERT_TRUE(gate.has_value());
  ASSERT_TRUE(all_deferred("slow"));

  ToolRegistry registry(ex);
  McpSession session(registry);
  session.bind(std::shared_ptr<McpManager>(manager.get(), [](McpManager*) {}));
  ASSERT_TRUE(session.tool_search_active());
  EXPECT_EQ(session.search_tools("weather forecast").hits.at(0).name, "mcp_slow_weather");
  EXPECT_EQ(session.catalog().size(), 36u);
  EXPECT_THAT(session.load_tools({"mcp_slow_weather"}), ::testing::IsEmpty());
  EXPECT_TRUE(registry.contains("mcp_slow_weather"));
  session.unbind();
}

}  // namespace
}  // namespace tool_search_test
}  // namespace mcprt
