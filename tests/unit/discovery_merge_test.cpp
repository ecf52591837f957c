// Discovery merge, filter and dedup rules (SPEC §2.3), over programmatic providers and an
// in-memory file system.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "mcprt/discovery.hpp"
#include "mcprt/testing/env_map.hpp"
#include "mcprt/testing/memory_file_system.hpp"

namespace mcprt {
namespace discovery_merge_test {  // this file's own names in a unity batch
namespace {

using testing::MemoryFileSystem;
using Level = SourceInfo::Level;

class DiscoveryMerge : public ::testing::Test {
 protected:
  DiscoveryMerge() {
    ctx.cwd = "/repo";
    ctx.home = "/home/u";
    ctx.fs = &fs;
    ctx.env = testing::env_ref(env);
  }

  // A provider over `servers` (a bare name → entry map, as JSON text).
  void add(const std::string& id, int priority, Level level, const std::string& servers_json) {
    options.extra_providers.push_back(
        make_programmatic_provider(id, id + " display", priority, level, json::parse(servers_json), id + ".json"));
  }

  DiscoveryResult discover() { return discover_servers(ctx, options); }

  static std::vector<std::string> names(const DiscoveryResult& r) {
    std::vector<std::string> out;
    for (const auto& c : r.configs) out.push_back(c.name);
    return out;
  }
  static const ServerConfig* find(const DiscoveryResult& r, const std::string& name) {
    for (const auto& c : r.configs) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }
  static bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  }

  MemoryFileSystem fs;
  std::map<std::string, std::string> env;
  DiscoveryContext ctx;
  DiscoveryOptions options;
};

TEST_F(DiscoveryMerge, HigherPriorityProviderWinsAName) {
  add("low", 10, Level::user, R"({"s": {"command": "low"}})");
  add("high", 70, Level::user, R"({"s": {"command": "high"}})");
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].command, "high");
  EXPECT_EQ(r.sources.at("s").provider, "high");
  ASSERT_EQ(r.shadowed.size(), 1u);
  EXPECT_EQ(r.shadowed[0].source.provider, "low");
  EXPECT_EQ(r.shadowed[0].reason, "same name");
  EXPECT_EQ(r.shadowed[0].shadowed_by, "s");
}

TEST_F(DiscoveryMerge, ProjectEntryBeatsUserEntryWithinAProvider) {
  fs.add("/repo/.cursor/mcp.json", R"({"mcpServers": {"s": {"command": "project"}}})");
  fs.add("/home/u/.cursor/mcp.json", R"({"mcpServers": {"s": {"command": "user"}}})");
  options.trust_all_projects = true;  // precedence, not trust, is the subject here
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].command, "project");
  EXPECT_EQ(r.sources.at("s").level, Level::project);
}

TEST_F(DiscoveryMerge, ConfigsAreSortedByName) {
  add("p", 10, Level::user, R"({"zeta": {"command": "z"}, "alpha": {"command": "a"}})");
  add("q", 20, Level::user, R"({"mid": {"command": "m"}})");
  EXPECT_EQ(names(discover()), (std::vector<std::string>{"alpha", "mid", "zeta"}));
}

TEST_F(DiscoveryMerge, ProjectConfigOff_DropsProjectEntriesBeforeDedup) {
  add("high", 70, Level::project, R"({"s": {"command": "project"}, "only-project": {"command": "p"}})");
  add("low", 10, Level::user, R"({"s": {"command": "user"}})");
  options.enable_project_config = false;
  DiscoveryResult r = discover();
  ASSERT_EQ(names(r), std::vector<std::string>{"s"});
  EXPECT_EQ(r.configs[0].command, "user");  // the dropped project entry claimed no name
  EXPECT_TRUE(r.shadowed.empty());
  EXPECT_EQ(r.sources.count("only-project"), 0u);
}

TEST_F(DiscoveryMerge, ProjectConfigOff_IgnoresErrorsOfProjectFiles) {
  fs.add("/repo/.mcp.json", "{ not json");
  options.enable_project_config = false;
  EXPECT_TRUE(discover().errors.empty());
}

TEST_F(DiscoveryMerge, EnabledFalse_IsSkippedButClaimsItsName) {
  add("high", 70, Level::user, R"({"s": {"command": "high", "enabled": false}})");
  add("low", 10, Level::user, R"({"s": {"command": "low"}})");
  DiscoveryResult r = discover();
  EXPECT_TRUE(r.configs.empty());
  EXPECT_EQ(r.disabled, std::vector<std::string>{"s"});
  EXPECT_EQ(r.sources.at("s").provider, "high");
}

TEST_F(DiscoveryMerge, EnabledStringForms_AreHonoured) {
  add("p", 10, Level::user, R"({
    "a": {"command": "a", "enabled": "false"}, "b": {"command": "b", "enabled": "0"},
    "c": {"command": "c", "enabled": "true"}, "d": {"command": "d", "enabled": "1"}})");
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(r.disabled, (std::vector<std::string>{"a", "b"}));
}

TEST_F(DiscoveryMerge, DisabledEntry_DoesNotShadowAnEquivalentServerUnderAnotherName) {
  add("high", 70, Level::user, R"({"off": {"command": "same", "enabled": false}})");
  add("low", 10, Level::user, R"({"on": {"command": "same"}})");
  EXPECT_EQ(names(discover()), std::vector<std::string>{"on"});
}

TEST_F(DiscoveryMerge, DisabledServersList_AlwaysWins) {
  fs.add("/home/u/.config/mcprt/mcp.json",
         R"({"disabledServers": ["s"], "enabledServers": ["s"], "mcpServers": {}})");
  add("p", 10, Level::user, R"({"s": {"command": "x"}, "t": {"command": "y"}})");
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), std::vector<std::string>{"t"});
  EXPECT_TRUE(has(r.disabled, "s"));
}

TEST_F(DiscoveryMerge, EnabledServersList_OverridesEnabledFalse) {
  fs.add("/home/u/.config/mcprt/mcp.json", R"({"enabledServers": ["s"]})");
  add("p", 10, Level::user, R"({"s": {"command": "x", "enabled": false}})");
  DiscoveryResult r = discover();
  ASSERT_EQ(names(r), std::vector<std::string>{"s"});
  EXPECT_TRUE(r.configs[0].enabled);
}

TEST_F(DiscoveryMerge, ListsInOtherFiles_AreIgnored) {
  fs.add("/repo/.mcprt/mcp.json", R"({"disabledServers": ["s"]})");
  fs.add("/repo/.mcp.json", R"({"disabledServers": ["s"]})");
  add("p", 10, Level::user, R"({"s": {"command": "x"}})");
  EXPECT_EQ(names(discover()), std::vector<std::string>{"s"});
}

// A host's own file in place of the user file (NativeHost's config_file, the CLI's
// --config) is level native: `/mcp disable` writes its lists, so they must hold.
TEST_F(DiscoveryMerge, ListsInALevelNativeFileInPlaceOfTheUserFile_Count) {
  add("config", 1000, Level::native,
      R"({"mcpServers": {"s": {"command": "x"}, "t": {"command": "y"}, "u": {"command": "z", "enabled": false}},
          "disabledServers": ["s"], "enabledServers": ["u"]})");
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), (std::vector<std::string>{"t", "u"}));
  EXPECT_TRUE(has(r.disabled, "s"));
}

TEST_F(DiscoveryMerge, SameEndpointUnderAnotherName_IsShadowed) {
  add("high", 70, Level::user, R"({"first": {"command": "npx", "args": ["-y", "srv"]},
                                   "web": {"url": "https://x.example/mcp", "headers": {"A": "1"}}})");
  add("low", 10, Level::user, R"({"second": {"command": "npx", "args": ["-y", "srv"]},
                                  "web2": {"url": "https://x.example/mcp", "headers": {"A": "1"}},
                                  "web3": {"url": "https://x.example/mcp", "headers": {"A": "2"}},
                                  "third": {"command": "npx", "args": ["-y", "other"]}})");
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), (std::vector<std::string>{"first", "third", "web", "web3"}));
  ASSERT_EQ(r.shadowed.size(), 2u);
  EXPECT_EQ(r.shadowed[0].name, "second");
  EXPECT_EQ(r.shadowed[0].shadowed_by, "first");
  EXPECT_EQ(r.shadowed[0].reason, "same endpoint");
  EXPECT_EQ(r.shadowed[1].name, "web2");
  EXPECT_EQ(r.shadowed[1].shadowed_by, "web");
  // A shadowed server still has its source metadata.
  EXPECT_EQ(r.sources.at("second").provider, "low");
}

TEST_F(DiscoveryMerge, ShadowedEntriesKeepTheirEntryAndNameWhereTheWinnerCameFrom) {
  add("high", 70, Level::user, R"({"s": {"command": "high"}, "first": {"command": "npx", "args": ["srv"]}})");
  add("low", 10, Level::project, R"({"s": {"command": "low", "args": ["${HOME}"]},
                                     "second": {"command": "npx", "args": ["srv"]}})");
  options.trust_all_projects = true;
  DiscoveryResult r = discover();
  auto same_name = find_shadowed(r, "s");
  ASSERT_EQ(same_name.size(), 1u);
  EXPECT_EQ(same_name[0]->source.provider, "low");
  EXPECT_EQ(same_name[0]->shadowed_by_source.provider, "high");
  EXPECT_EQ(same_name[0]->shadowed_by_source.path, "high.json");
  ASSERT_TRUE(same_name[0]->config.has_value());
  EXPECT_EQ(same_name[0]->config->command, "low");
  EXPECT_EQ(same_name[0]->config->args, std::vector<std::string>{"${HOME}"});  // as written
  EXPECT_EQ(describe_shadowing(*same_name[0]), "shadowed by \"s\" from high display (user) high.json (same name)");
  auto same_endpoint = find_shadowed(r, "second");
  ASSERT_EQ(same_endpoint.size(), 1u);
  EXPECT_EQ(same_endpoint[0]->shadowed_by, "first");
  EXPECT_EQ(same_endpoint[0]->shadowed_by_source.provider, "high");
  EXPECT_EQ(describe_shadowing(*same_endpoint[0]),
            "shadowed by \"first\" from high display (user) high.json (same endpoint)");
  EXPECT_TRUE(find_shadowed(r, "first").empty());
}

TEST_F(DiscoveryMerge, InvalidHigherEntry_DoesNotHideAValidLowerOne) {
  add("high", 70, Level::user, R"({"s": {"type": "stdio"}})");
  add("low", 10, Level::user, R"({"s": {"command": "ok"}})");
  DiscoveryResult r = discover();
  ASSERT_EQ(names(r), std::vector<std::string>{"s"});
  EXPECT_EQ(r.configs[0].command, "ok");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].server, "s");
  EXPECT_EQ(r.errors[0].path, "high.json");
  EXPECT_NE(r.errors[0].message.find("Server \"s\""), std::string::npos);
}

TEST_F(DiscoveryMerge, ShapeErrorInHigherEntry_DoesNotHideAValidLowerOne) {
  add("high", 70, Level::user, R"({"s": {"command": "x", "args": "not-an-array"}})");
  add("low", 10, Level::user, R"({"s": {"command": "ok"}})");
  DiscoveryResult r = discover();
  ASSERT_EQ(names(r), std::vector<std::string>{"s"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("\"args\""), std::string::npos);
}

TEST_F(DiscoveryMerge, InvalidEntries_AreReportedPerServerAndOthersLoad) {
  add("p", 10, Level::user, R"({
    "both": {"command": "x", "url": "https://x.example"},
    "nourl": {"type": "http"},
    "badurl": {"url": "ftp://x.example"},
    "bad name!": {"command": "x"},
    "weird": {"type": "carrier-pigeon", "command": "x"},
    "good": {"command": "x"}})");
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), std::vector<std::string>{"good"});
  EXPECT_EQ(r.errors.size(), 5u);
  for (const auto& e : r.errors) EXPECT_FALSE(e.server.empty()) << e.describe();
  // Invalid servers still have source metadata.
  EXPECT_EQ(r.sources.count("nourl"), 1u);
  EXPECT_EQ(r.sources.count("weird"), 1u);
}

TEST_F(DiscoveryMerge, StdioInTheBrowser_IsAValidationError) {
  add("p", 10, Level::user, R"({"local": {"command": "x"}, "remote": {"url": "https://r.example/mcp"}})");
  options.stdio_available = false;
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), std::vector<std::string>{"remote"});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("browser"), std::string::npos);
}

TEST_F(DiscoveryMerge, SubstitutionRunsBeforeValidation) {
  env["MY_URL"] = "https://sub.example/mcp";
  add("p", 10, Level::user, R"({"s": {"url": "${MY_URL}"}})");
  DiscoveryResult r = discover();
  ASSERT_EQ(names(r), std::vector<std::string>{"s"});
  EXPECT_EQ(r.configs[0].url, "https://sub.example/mcp");
  EXPECT_EQ(r.configs[0].raw["url"], "${MY_URL}");  // the stored entry stays unresolved
}

// --- claim filters (Exa) ----------------------------------------------------------------

TEST_F(DiscoveryMerge, Exa_ByNameIsDroppedButClaimsItsName) {
  add("high", 70, Level::user, R"({"EXA": {"command": "npx", "env": {"EXA_API_KEY": "k1"}}})");
  add("low", 10, Level::user, R"({"EXA": {"command": "other"}})");
  DiscoveryResult r = discover();
  EXPECT_TRUE(r.configs.empty());
  EXPECT_EQ(r.claimed, std::vector<std::string>{"EXA"});
  EXPECT_EQ(r.exa_api_keys, std::vector<std::string>{"k1"});
  EXPECT_EQ(r.sources.at("EXA").provider, "high");
}

TEST_F(DiscoveryMerge, Exa_ByUrlExtractsTheKeyFromTheQuery) {
  add("p", 10, Level::user, R"({"search": {"url": "https://mcp.exa.ai/mcp?exaApiKey=abc123&x=1"}})");
  DiscoveryResult r = discover();
  EXPECT_TRUE(r.configs.empty());
  EXPECT_EQ(r.exa_api_keys, std::vector<std::string>{"abc123"});
}

TEST_F(DiscoveryMerge, Exa_ByArgExtractsTheKeyFromArgs) {
  add("p", 10, Level::user,
      R"({"s": {"command": "npx", "args": ["-y", "mcp-remote", "https://mcp.exa.ai/mcp?exaApiKey=argkey"]}})");
  DiscoveryResult r = discover();
  EXPECT_TRUE(r.configs.empty());
  EXPECT_EQ(r.exa_api_keys, std::vector<std::string>{"argkey"});
}

TEST_F(DiscoveryMerge, Exa_IsKeptWhenItAsksForMoreTools) {
  add("p", 10, Level::user, R"({
    "exa": {"url": "https://mcp.exa.ai/mcp?tools=web_search_exa,crawling_exa&exaApiKey=k"},
    "exa-cli": {"command": "npx", "args": ["exa-mcp-server", "--tools", "web_search_exa, company_research"],
                "env": {"EXA_API_KEY": "k2"}},
    "exa-only-search": {"command": "npx", "args": ["https://mcp.exa.ai/x", "--tools=web_search_exa"]}})");
  DiscoveryResult r = discover();
  // exa-cli mentions no mcp.exa.ai and is not named exa: not an Exa server at all.
  EXPECT_EQ(names(r), (std::vector<std::string>{"exa", "exa-cli"}));
  EXPECT_EQ(r.exa_api_keys, std::vector<std::string>{"k"});
  EXPECT_EQ(r.claimed, std::vector<std::string>{"exa-only-search"});
}

TEST_F(DiscoveryMerge, Exa_StdioToolsArgKeepsTheServer) {
  add("p", 10, Level::user,
      R"({"exa": {"command": "npx", "args": ["exa-mcp-server", "--tools", "web_search_exa,deep_research"],
                  "env": {"EXA_API_KEY": "envkey"}}})");
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), std::vector<std::string>{"exa"});
  EXPECT_EQ(r.exa_api_keys, std::vector<std::string>{"envkey"});
}

TEST_F(DiscoveryMerge, Exa_ToolsQueryInAStdioArgDecides) {
  add("p", 10, Level::user, R"({
    "remote-more": {"command": "npx", "args": ["mcp-remote", "https://mcp.exa.ai/mcp?tools=web_search_exa,crawling_exa"]},
    "remote-search": {"command": "npx", "args": ["mcp-remote", "https://mcp.exa.ai/mcp?tools=web_search_exa"]},
    "remote-mytools": {"command": "npx", "args": ["mcp-remote", "https://mcp.exa.ai/mcp?mytools=crawling_exa"]}})");
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), std::vector<std::string>{"remote-more"});
  EXPECT_EQ(r.claimed, (std::vector<std::string>{"remote-mytools", "remote-search"}));
}

TEST_F(DiscoveryMerge, Exa_FilterOffKeepsTheServer) {
  add("p", 10, Level::user, R"({"exa": {"url": "https://mcp.exa.ai/mcp"}})");
  options.filter_exa = false;
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), std::vector<std::string>{"exa"});
  EXPECT_TRUE(r.exa_api_keys.empty());
}

TEST_F(DiscoveryMerge, HostClaimFilter_RunsAfterExaAndCanDrop) {
  add("p", 10, Level::user, R"({"browser": {"command": "playwright-mcp"}, "keep": {"command": "k"}})");
  options.claim_filters.push_back(ClaimFilter{"browser", [](const ServerConfig& c) {
                                                ClaimDecision d;
                                                d.claimed = d.drop = c.command == "playwright-mcp";
                                                return d;
                                              }});
  DiscoveryResult r = discover();
  EXPECT_EQ(names(r), std::vector<std::string>{"keep"});
  EXPECT_EQ(r.claimed, std::vector<std::string>{"browser"});
}

TEST_F(DiscoveryMerge, ExaKeys_AreDeduplicated) {
  add("p", 10, Level::user, R"({"exa": {"url": "https://mcp.exa.ai/mcp?exaApiKey=same"},
                                "exa2": {"url": "https://mcp.exa.ai/other?exaApiKey=same"}})");
  EXPECT_EQ(discover().exa_api_keys, std::vector<std::string>{"same"});
}

}  // namespace
}  // namespace discovery_merge_test
}  // namespace mcprt
