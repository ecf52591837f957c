// The loader facade (SPEC §7, §2.5, §9 rows "discovery itself fails" and "invalid server
// config"): discovery → manager → gate, reported as tools and {path, error} entries.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcprt/loader.hpp"
#include "mcprt/memory_store.hpp"
#include "session_test_support.hpp"

namespace mcprt {
namespace loader_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;

class Loader : public unit::SessionFixture {
 protected:
  // Runs the loader to its result (the gate returns without the clock moving when every
  // server answers at once).
  LoadResult load(LoaderOptions options = {}, ManagerServices s = {}) {
    if (!s.executor) s = services();
    std::optional<LoadResult> out;
    discover_and_load_tools(ctx, s, std::move(options), [&](LoadResult r) { out = std::move(r); });
    EXPECT_FALSE(out.has_value()) << "done ran inside discover_and_load_tools";
    ex.run_until_idle();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : LoadResult{};
  }
  static std::vector<std::string> names(const std::vector<std::shared_ptr<McpTool>>& tools) {
    std::vector<std::string> out;
    for (const auto& t : tools) out.push_back(t->name());
    return out;
  }
};

// A provider whose load throws: the stand-in for any unexpected failure of discovery.
class ThrowingProvider final : public ConfigProvider {
 public:
  std::string id() const override { return "boom"; }
  std::string display_name() const override { return "Boom"; }
  int priority() const override { return 1000; }
  std::vector<ParsedConfig> load(const DiscoveryContext&) const override {
    throw std::runtime_error("the config store is unreachable");
  }
};

TEST_F(Loader, Loader_EnableMcpFalseDoesNoMcpWorkAndReturnsAnEmptyResult) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  LoaderOptions o;
  o.enable_mcp = false;
  LoadResult r = load(o);
  EXPECT_TRUE(r.tools.empty());
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.manager, nullptr);
  EXPECT_EQ(fs.reads, 0);  // not even discovery ran
  EXPECT_EQ(farm.attempts("demo"), 0u);
}

TEST_F(Loader, Loader_Sec9_CriticalDiscoveryFailureGivesNoToolsAndOneSyntheticError) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  LoaderOptions o;
  o.discovery.extra_providers.push_back(std::make_shared<ThrowingProvider>());
  LoadResult r = load(o);
  EXPECT_TRUE(r.tools.empty());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, ".mcp.json");
  EXPECT_THAT(r.errors[0].error, HasSubstr("the config store is unreachable"));
  // The session still starts: a manager exists (for a later /mcp reload), with nothing in it.
  ASSERT_NE(r.manager, nullptr);
  EXPECT_TRUE(r.manager->tools().empty());
  EXPECT_EQ(farm.attempts("demo"), 0u);
}

TEST_F(Loader, Loader_ReturnsTheGateToolsConnectedServersAndTheManager) {
  serve("demo", {"echo", "add"});
  serve("files", {"read"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  write(kClaudeFile, {{"mcpServers", {{"files", server("files")}}}});
  LoadResult r = load();
  EXPECT_EQ(names(r.tools),
            (std::vector<std::string>{"mcp_demo_add", "mcp_demo_echo", "mcp_files_read"}));
  EXPECT_EQ(r.connected_servers, (std::vector<std::string>{"demo", "files"}));
  EXPECT_TRUE(r.errors.empty());
  ASSERT_NE(r.manager, nullptr);
  EXPECT_EQ(r.manager->connection_status("demo"), ConnectionStatus::connected);
  EXPECT_EQ(r.tools[2]->info().path, "mcp:files via Claude Code");
}

TEST_F(Loader, Loader_PerServerConnectErrorsCarryTheServersSourcePath) {
  serve("demo", {"echo"});
  farm.fail_connect("files", Error::make(ErrorCode::transport, "Server \"files\": spawn failed"));
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  write(kClaudeFile, {{"mcpServers", {{"files", server("files")}}}});
  LoadResult r = load();
  EXPECT_EQ(names(r.tools), std::vector<std::string>{"mcp_demo_echo"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, kClaudeFile);
  EXPECT_EQ(r.errors[0].server, "files");
  EXPECT_THAT(r.errors[0].error, HasSubstr("spawn failed"));
  EXPECT_TRUE(log.has(LogLevel::warn, "\"files\""));  // the loader logs per-server errors
}

TEST_F(Loader, Loader_AServerThatNeedsAuthIsNamedWithItsLoginHintAndLoggedAsSuch) {
  serve("demo", {"echo"});
  farm.fail_connect(
      "files",
      Error::make(ErrorCode::needs_auth,
                  "Server \"files\": needs an OAuth sign-in; run `mcprt auth login files`"));
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  write(kClaudeFile, {{"mcpServers", {{"files", server("files")}}}});
  LoadResult r = load();
  EXPECT_EQ(r.connected_servers, std::vector<std::string>{"demo"});
  EXPECT_EQ(r.needs_auth_servers, std::vector<std::string>{"files"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].server, "files");
  EXPECT_EQ(r.errors[0].path, kClaudeFile);
  EXPECT_THAT(r.errors[0].error, HasSubstr("run `mcprt auth login files`"));
  EXPECT_TRUE(log.has(LogLevel::warn,
                      "\"files\" (" + std::string(kClaudeFile) + ") needs authorization: "));
  EXPECT_FALSE(log.has(LogLevel::warn, "failed"));
  EXPECT_EQ(r.manager->server_state("files")->phase, ServerPhase::needs_auth);
}

TEST_F(Loader, Loader_Sec9_InvalidServerAndBrokenFileAreErrorsWithTheirFilePath) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}, {"nocmd", json::object()}}}});
  fs.files["/work/.cursor/mcp.json"] = "{\n  \"mcpServers\": {,\n}";
  LoadResult r = load();
  EXPECT_EQ(names(r.tools), std::vector<std::string>{"mcp_demo_echo"});
  bool invalid_server = false, broken_file = false;
  for (const auto& e : r.errors) {
    if (e.server == "nocmd") {
      invalid_server = true;
      EXPECT_EQ(e.path, kUserFile);
      EXPECT_THAT(e.error, HasSubstr("Server \"nocmd\""));
    }
    if (e.path == "/work/.cursor/mcp.json") {
      broken_file = true;
      EXPECT_THAT(e.error, HasSubstr("/work/.cursor/mcp.json:2:"));
    }
  }
  EXPECT_TRUE(invalid_server);
  EXPECT_TRUE(broken_file);
}

TEST_F(Loader, Loader_UseCacheFalseLeavesTheStoreAlone) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  MemoryKeyValueStore store(ex);
  ManagerServices s = services();
  s.cache_store = &store;
  s.wall_clock = [] { return std::int64_t{1'750'000'000'000}; };

  LoaderOptions off;
  off.use_cache = false;
  LoadResult r1 = load(off, s);
  ASSERT_EQ(r1.tools.size(), 1u);
  EXPECT_TRUE(store.entries().empty());

  r1.manager.reset();
  ex.run_until_idle();
  LoadResult r2 = load(LoaderOptions{}, s);
  ASSERT_EQ(r2.tools.size(), 1u);
  EXPECT_EQ(store.entries().size(), 1u);  // with the cache on, tools/list is saved
}

TEST_F(Loader, Loader_ForwardsStatusEventsWithTheSource) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  std::vector<StatusEvent> events;
  LoaderOptions o;
  o.on_status = [&](const StatusEvent& e) { events.push_back(e); };
  LoadResult r = load(o);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().server, "demo");
  EXPECT_EQ(events.front().phase, ServerPhase::connecting);
  EXPECT_EQ(events.back().phase, ServerPhase::connected);
  EXPECT_EQ(events.back().source.path, kUserFile);
}

TEST_F(Loader, Loader_ExaKeysAreExtractedAndTheExaServerDropped) {
  write(kUserFile, {{"mcpServers", {{"exa", {{"url", "https://mcp.exa.ai/mcp?exaApiKey=k123"}}}}}});
  LoadResult r = load();
  EXPECT_EQ(r.exa_api_keys, std::vector<std::string>{"k123"});
  EXPECT_TRUE(r.tools.empty());
  EXPECT_EQ(farm.attempts("exa"), 0u);
}


// --- project trust (SPEC §17) ----------------------------------------------------------

class LoaderTrust : public Loader {
 protected:
  static constexpr const char* kProjectFile = "/work/.mcp.json";
  void SetUp() override {
    serve("demo", {"echo"});
    serve("proj", {"build"});
    serve("other", {"lint"});
    write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
    write(kProjectFile, {{"mcpServers", {{"proj", server("proj")}, {"other", server("other")}}}});
  }
  json trust_records() const { return fs.read_json(kUserFile).value("trustedProjects", json::object()); }
};

TEST_F(LoaderTrust, PendingProjectServersAreNeverConnectedWithoutACallback) {
  LoadResult r = load();
  EXPECT_EQ(names(r.tools), std::vector<std::string>{"mcp_demo_echo"});
  EXPECT_EQ(farm.attempts("proj"), 0u);
  EXPECT_EQ(farm.attempts("other"), 0u);
  ASSERT_EQ(r.discovery.pending.size(), 2u);
  EXPECT_EQ(r.discovery.pending[0].name, "other");
  EXPECT_EQ(r.discovery.pending[1].name, "proj");
  EXPECT_TRUE(r.errors.empty());  // not trusted is not a failure
  EXPECT_FALSE(r.manager->server_state("proj").has_value());  // it never reached the manager
}

TEST_F(LoaderTrust, CallbackRunsOnTheExecutorWithThePendingServersAndTrustingTheFolderConnectsThem) {
  std::vector<ProjectServer> asked;
  bool inside_load = true;
  LoaderOptions o;
  o.trust = [&](const std::vector<ProjectServer>& pending, std::function<void(TrustAnswer)> answer) {
    EXPECT_FALSE(inside_load) << "the callback ran inside discover_and_load_tools";
    EXPECT_EQ(farm.attempts("demo"), 0u) << "something connected before the answer";
    asked = pending;
    TrustAnswer a;
    a.trust_folder = true;
    answer(a);
  };
  std::optional<LoadResult> out;
  discover_and_load_tools(ctx, services(), o, [&](LoadResult r) { out = std::move(r); });
  inside_load = false;
  ex.run_until_idle();
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[1].name, "proj");
  EXPECT_EQ(asked[1].folder, "/work");
  EXPECT_EQ(asked[1].config.source.path, kProjectFile);
  EXPECT_EQ(asked[1].config.command, "fake-proj");
  EXPECT_EQ(names(out->tools),
            (std::vector<std::string>{"mcp_demo_echo", "mcp_other_lint", "mcp_proj_build"}));
  EXPECT_TRUE(out->discovery.pending.empty());
  EXPECT_EQ(trust_records(), json({{"/work", {{"servers", {{"other", asked[0].hash}, {"proj", asked[1].hash}}}}}}));
  EXPECT_EQ(fs.read_json(kUserFile)["mcpServers"], json({{"demo", server("demo")}}));  // kept
}

TEST_F(Loader, Loader_SelectServersStartsOnlyTheChosenOnesAndKeepsTheRestInTheDiscovery) {
  serve("demo", {"echo"});
  serve("files", {"read"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  write(kClaudeFile, {{"mcpServers", {{"files", server("files")}}}});
  LoaderOptions o;
  o.select_servers = [](const std::string& name) { return name == "files"; };
  LoadResult r = load(o);
  EXPECT_EQ(names(r.tools), std::vector<std::string>{"mcp_files_read"});
  EXPECT_EQ(farm.attempts("demo"), 0u);
  EXPECT_FALSE(r.manager->server_state("demo").has_value());
  EXPECT_EQ(r.discovery.configs.size(), 2u);  // still discovered
}

TEST_F(LoaderTrust, SelectServersAsksOnlyAboutTheChosenPendingServersAndTrustsNoOther) {
  std::vector<std::string> asked;
  LoaderOptions o;
  o.select_servers = [](const std::string& name) { return name == "proj"; };
  o.trust = [&](const std::vector<ProjectServer>& pending, std::function<void(TrustAnswer)> answer) {
    for (const auto& p : pending) asked.push_back(p.name);
    TrustAnswer a;
    a.trust_folder = true;
    answer(a);
  };
  LoadResult r = load(o);
  EXPECT_EQ(asked, std::vector<std::string>{"proj"});
  EXPECT_EQ(names(r.tools), std::vector<std::string>{"mcp_proj_build"});
  EXPECT_EQ(farm.attempts("other"), 0u);
  EXPECT_EQ(farm.attempts("demo"), 0u);
  EXPECT_TRUE(trust_records()["/work"]["servers"].contains("proj"));
  EXPECT_FALSE(trust_records()["/work"]["servers"].contains("other"));  // never shown, never trusted
}

TEST_F(LoaderTrust, PerServerDecisionsTrustOnlyTheChosenOnes) {
  LoaderOptions o;
  o.trust = [](const std::vector<ProjectServer>&, std::function<void(TrustAnswer)> answer) {
    TrustAnswer a;
    a.servers = {{"proj", true}, {"other", false}};
    answer(a);
  };
  LoadResult r = load(o);
  EXPECT_EQ(farm.attempts("proj"), 1u);
  EXPECT_EQ(farm.attempts("other"), 0u);
  ASSERT_EQ(r.discovery.pending.size(), 1u);
  EXPECT_EQ(r.discovery.pending[0].name, "other");
  EXPECT_EQ(trust_records()["/work"]["servers"].size(), 1u);
  EXPECT_TRUE(trust_records()["/work"]["servers"].contains("proj"));
  // The next load trusts proj from the file, without asking.
  int asked = 0;
  LoaderOptions again;
  again.trust = [&](const std::vector<ProjectServer>& pending, std::function<void(TrustAnswer)> answer) {
    ++asked;
    EXPECT_EQ(pending.size(), 1u);
    answer(TrustAnswer{});
  };
  r.manager.reset();
  ex.run_until_idle();
  LoadResult r2 = load(again);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(names(r2.tools), (std::vector<std::string>{"mcp_demo_echo", "mcp_proj_build"}));
}

TEST_F(LoaderTrust, AnswerGivenLaterStillConnectsAndRememberFalseWritesNothing) {
  std::function<void(TrustAnswer)> later;
  LoaderOptions o;
  o.trust = [&](const std::vector<ProjectServer>&, std::function<void(TrustAnswer)> answer) {
    later = std::move(answer);
  };
  std::optional<LoadResult> out;
  discover_and_load_tools(ctx, services(), o, [&](LoadResult r) { out = std::move(r); });
  ex.run_until_idle();
  EXPECT_FALSE(out.has_value());  // waiting for the host
  EXPECT_EQ(farm.attempts("demo"), 0u);
  int writes = fs.writes;
  TrustAnswer a;
  a.trust_folder = true;
  a.remember = false;
  later(a);
  later(TrustAnswer{});  // a second answer is ignored
  ex.run_until_idle();
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->tools.size(), 3u);
  EXPECT_EQ(fs.writes, writes);
  EXPECT_EQ(out->granted_trust.projects.at("/work").size(), 2u);
}

TEST_F(LoaderTrust, ACallbackThatDropsTheAnswerTrustsNothingAndTheLoadFinishes) {
  LoaderOptions o;
  o.trust = [](const std::vector<ProjectServer>&, std::function<void(TrustAnswer)>) {};
  LoadResult r = load(o);
  EXPECT_EQ(names(r.tools), std::vector<std::string>{"mcp_demo_echo"});
  EXPECT_EQ(r.discovery.pending.size(), 2u);
  EXPECT_EQ(farm.attempts("proj"), 0u);
}

TEST_F(LoaderTrust, AFailedRecordIsAnErrorButTrustsForThisRun) {
  fs.fail_writes = true;
  LoaderOptions o;
  o.trust = [](const std::vector<ProjectServer>&, std::function<void(TrustAnswer)> answer) {
    TrustAnswer a;
    a.trust_folder = true;
    answer(a);
  };
  LoadResult r = load(o);
  EXPECT_EQ(r.tools.size(), 3u);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, kUserFile);
  EXPECT_THAT(r.errors[0].error, HasSubstr("trusted for this run only"));
}

TEST_F(LoaderTrust, DefinitionChangedWhileAskingStaysPending) {
  LoaderOptions o;
  o.trust = [&](const std::vector<ProjectServer>&, std::function<void(TrustAnswer)> answer) {
    // The repository changes between the question and the answer.
    write(kProjectFile, {{"mcpServers", {{"proj", {{"command", "fake-proj"}, {"args", {"--evil"}}}},
                                         {"other", server("other")}}}});
    TrustAnswer a;
    a.trust_folder = true;
    answer(a);
  };
  LoadResult r = load(o);
  EXPECT_EQ(farm.attempts("proj"), 0u);
  ASSERT_EQ(r.discovery.pending.size(), 1u);
  EXPECT_EQ(r.discovery.pending[0].name, "proj");
  EXPECT_EQ(r.discovery.pending[0].config.args, std::vector<std::string>{"--evil"});
}

TEST_F(LoaderTrust, TrustAllProjectsConnectsProjectServersWithoutAsking) {
  LoaderOptions o;
  o.discovery.trust_all_projects = true;
  o.trust = [](const std::vector<ProjectServer>&, std::function<void(TrustAnswer)>) {
    ADD_FAILURE() << "asked although every project is trusted";
  };
  LoadResult r = load(o);
  EXPECT_EQ(r.tools.size(), 3u);
  EXPECT_TRUE(r.discovery.pending.empty());
  EXPECT_EQ(fs.read_json(kUserFile).count("trustedProjects"), 0u);
}

}  // namespace
}  // namespace loader_test
}  // namespace mcprt
