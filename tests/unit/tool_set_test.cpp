// The manager's incremental tool set (core/src/tools/tool_set.hpp, SPEC §5.3, §6): one
// server's slice is replaced without touching another server's tool objects, names always
// equal build_mcp_tools' over the same slices, definitions are shared rather than copied;
// and the manager on top: one tools-changed event per executor turn, disconnect_all
// clearing the set at once.

#include "tools/tool_set.hpp"

#include <gmock/gmock.h>

#include <map>
#include <random>

#include "manager_test_fixture.hpp"

namespace mcprt::testing {
namespace tool_set_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class NullHost final : public McpToolHost {
 public:
  void call_tool(const std::string&, const std::string&, json, CallOptions,
                 std::function<void(Result<json>)>) override {}
  void wait_for_connection(const std::string&, AbortSignal, std::function<void(Status)>) override {}
};

std::vector<SharedJson> defs_of(std::initializer_list<std::string> names) {
  std::vector<json> out;
  for (const auto& n : names)
    out.push_back(json{{"name", n}, {"inputSchema", {{"type", "object"}}}});
  return detail::share_definitions(std::move(out));
}

std::map<std::string, std::shared_ptr<McpTool>> by_server_tool(
    const std::vector<std::shared_ptr<McpTool>>& tools) {
  std::map<std::string, std::shared_ptr<McpTool>> out;
  for (const auto& t : tools) out[t->info().server + "/" + t->info().raw_name] = t;
  return out;
}

struct ToolSetTest : ::testing::Test {
  ManualExecutor ex;
  std::shared_ptr<NullHost> host = std::make_shared<NullHost>();
  detail::ToolSet set{ex, host, ToolBuildOptions{}};
  ServerConfig cfg;
};

TEST_F(ToolSetTest, Replace_RebuildsOnlyThatServersToolsAndKeepsTheOthersObjects) {
  set.replace("alpha", &cfg, {}, defs_of({"read", "write"}), false);
  set.replace("beta", &cfg, {}, defs_of({"search"}), false);
  auto before = by_server_tool(set.tools());

  set.replace("alpha", &cfg, {}, defs_of({"read", "delete"}), false);

  auto after = by_server_tool(set.tools());
  EXPECT_EQ(after.at("beta/search"), before.at("beta/search"));  // the same object
  EXPECT_NE(after.at("alpha/read"), before.at("alpha/read"));
  std::vector<std::string> names;
  for (const auto& t : set.tools()) names.push_back(t->name());
  EXPECT_THAT(names, ElementsAre("mcp_alpha_delete", "mcp_alpha_read", "mcp_beta_search"));
  EXPECT_EQ(set.count("alpha"), 2u);
  EXPECT_EQ(set.count("beta"), 1u);
}

TEST_F(ToolSetTest, Remove_KeepsTheOtherServersObjects) {
  set.replace("alpha", &cfg, {}, defs_of({"read"}), false);
  set.replace("beta", &cfg, {}, defs_of({"search"}), false);
  auto before = by_server_tool(set.tools());
  set.remove("alpha");
  ASSERT_EQ(set.tools().size(), 1u);
  EXPECT_EQ(set.tools()[0], before.at("beta/search"));
  EXPECT_EQ(set.count("alpha"), 0u);
}

TEST_F(ToolSetTest, ToolsShareTheListedDefinitionInsteadOfCopyingIt) {
  auto defs = defs_of({"read"});
  set.replace("alpha", &cfg, {}, defs, true);
  const McpToolInfo& deferred = set.tools()[0]->info();
  EXPECT_EQ(deferred.definition.shared(), defs[0].shared());
  // The schema points into the same definition.
  EXPECT_EQ(&deferred.input_schema.get(), &defs[0].get().at("inputSchema"));

  set.replace("alpha", &cfg, {}, defs, false);  // live now: a new tool, the same definition
  EXPECT_FALSE(set.tools()[0]->info().deferred);
  EXPECT_EQ(set.tools()[0]->info().definition.shared(), defs[0].shared());
}

TEST_F(ToolSetTest, ACollisionAppearingAndGoingRenamesAsBuildMcpToolsDoes) {
  // "a.b" and "a_b" both map to mcp_a_b_t: the raw pair that sorts first keeps the plain name.
  set.replace("a_b", &cfg, {}, defs_of({"t"}), false);
  EXPECT_EQ(set.tools()[0]->name(), "mcp_a_b_t");
  set.replace("a.b", &cfg, {}, defs_of({"t"}), false);
  auto both = by_server_tool(set.tools());
  EXPECT_EQ(both.at("a.b/t")->name(), "mcp_a_b_t");
  EXPECT_NE(both.at("a_b/t")->name(), "mcp_a_b_t");
  set.remove("a.b");
  ASSERT_EQ(set.tools().size(), 1u);
  EXPECT_EQ(set.tools()[0]->name(), "mcp_a_b_t");  // its plain name back
}

// Random sequences of replace / remove over colliding names, filters, duplicates, long
// names and deferred flips: after every step the set equals build_mcp_tools over the
// current slices (names, order, server, raw name, deferred).
TEST_F(ToolSetTest, AfterAnySequenceOfChangesTheSetEqualsBuildMcpTools) {
  std::mt19937 rng(12345);
  const std::vector<std::string> servers = {"a.b", "a_b", "fs", "a", "x", std::string(40, 's')};
  const std::vector<std::string> tools = {
      "t", "b_t", "read", "read", "x.y", "x_y", std::string(60, 'r'), std::string(60, 'r') + "2"};
  std::map<std::string, ServerConfig> configs;
  for (const auto& s : servers) configs[s] = ServerConfig{};
  configs["fs"].exclude_tools = {"x*"};
  struct Slice {
    std::vector<json> defs;
    bool deferred = false;
  };
  std::map<std::string, Slice> current;
  for (int step = 0; step < 400; ++step) {
    const std::string& server = servers[rng() % servers.size()];
    if (rng() % 4 == 0) {
      set.remove(server);
      current.erase(server);
    } else {
      Slice s;
      const std::size_t n = rng() % 5;
      for (std::size_t i = 0; i < n; ++i)
        s.defs.push_back(json{{"name", tools[rng() % tools.size()]}});
      if (rng() % 7 == 0) s.defs.push_back(json(3));  // not a tool: skipped
      s.deferred = rng() % 2 == 0;
      set.replace(server, &configs[server], {}, detail::share_definitions(s.defs), s.deferred);
      current[server] = std::move(s);
    }
    std::vector<ServerTools> slices;
    for (const auto& [name, s] : current) {
      slices.push_back(ServerTools{name, &configs[name], {}, s.defs, s.deferred});
    }
    auto expected = build_mcp_tools(ex, slices, host);
    const auto& got = set.tools();
    ASSERT_EQ(got.size(), expected.size()) << "step " << step;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i]->name(), expected[i]->name()) << "step " << step;
      ASSERT_EQ(got[i]->info().server, expected[i]->info().server) << "step " << step;
      ASSERT_EQ(got[i]->info().raw_name, expected[i]->info().raw_name) << "step " << step;
      ASSERT_EQ(got[i]->info().deferred, expected[i]->info().deferred) << "step " << step;
      ASSERT_EQ(set.find(got[i]->name()), got[i]);
    }
  }
}

// ------------------------------------------------------------------ the manager on top

using ManagerToolSet = ManagerTest;

TEST_F(ManagerToolSet, ListChanged_ReplacesOnlyThatServersToolObjects) {
  serve("alpha", tools_of({"read"}));
  serve("beta", tools_of({"search", "fetch"}));
  start({config("alpha"), config("beta")});
  ex.run_until_idle();
  auto before = by_server_tool(manager->tools());

  FakeServer* s = farm.latest("alpha");
  s->set_tools(tools_of({"read", "write"}));
  s->notify("notifications/tools/list_changed");
  ex.advance(Millis(200));

  auto after = by_server_tool(manager->tools());
  EXPECT_THAT(tool_names(), ElementsAre("mcp_alpha_read", "mcp_alpha_write", "mcp_beta_fetch",
                                        "mcp_beta_search"));
  EXPECT_EQ(after.at("beta/search"), before.at("beta/search"));
  EXPECT_EQ(after.at("beta/fetch"), before.at("beta/fetch"));
  EXPECT_NE(after.at("alpha/read"), before.at("alpha/read"));
}

TEST_F(ManagerToolSet, DisconnectServer_KeepsTheOtherServersToolObjects) {
  serve("alpha", tools_of({"read"}));
  serve("beta", tools_of({"search"}));
  start({config("alpha"), config("beta")});
  ex.run_until_idle();
  auto before = by_server_tool(manager->tools());
  manager->disconnect_server("alpha");
  ex.run_until_idle();
  ASSERT_EQ(manager->tools().size(), 1u);
  EXPECT_EQ(manager->tools()[0], before.at("beta/search"));
}

TEST_F(ManagerToolSet, ServersListingInTheSameTurnFireOneToolsChangedEvent) {
  const std::vector<std::string> names = {"alpha", "beta", "gamma"};
  std::vector<ServerConfig> configs;
  for (const auto& n : names) {
    serve(n, tools_of({"read"}), {"tools/list"});
    configs.push_back(config(n));
  }
  start(configs);
  ex.run_until_idle();
  const int before = tools_changed;
  // All three answers arrive before the executor runs again: one turn.
  for (const auto& n : names) {
    FakeServer* s = farm.latest(n);
    ASSERT_NE(s, nullptr);
    s->reply(s->last_request("tools/list")["id"], {{"tools", tools_of({"read"})}});
  }
  ex.run_until_idle();
  EXPECT_EQ(tools_changed, before + 1);
  EXPECT_THAT(tool_names(), ElementsAre("mcp_alpha_read", "mcp_beta_read", "mcp_gamma_read"));
}

TEST_F(ManagerToolSet, DisconnectAll_ClearsEveryToolAtOnceWithOneEvent) {
  serve("alpha", tools_of({"read"}));
  serve("beta", tools_of({"search"}));
  serve("gamma", tools_of({"list"}));
  start({config("alpha"), config("beta"), config("gamma")});
  ex.run_until_idle();
  ASSERT_EQ(manager->tools().size(), 3u);
  const int before = tools_changed;
  manager->disconnect_all();
  EXPECT_THAT(manager->tools(), IsEmpty());  // at once, before any closing finished
  ex.run_until_idle();
  EXPECT_EQ(tools_changed, before + 1);
  EXPECT_THAT(manager->tools(), IsEmpty());
}

TEST_F(ManagerToolSet, DestroyingTheManagerFiresNoToolsChangedEvent) {
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  int after_destroy = 0;
  manager->on_tools_changed([&] { ++after_destroy; });
  manager.reset();
  ex.run_until_idle();
  EXPECT_EQ(after_destroy, 0);
}

}  // namespace
}  // namespace tool_set_test
}  // namespace mcprt::testing
