// The manager on both protocol eras (SPEC §14): the era verdict stored with the tool cache
// entry (a warm start sends no probe; a failure under it probes again, once) and SEP-2549
// caching (a fresh `public` entry stands for tools/list; `private`, stale or 2025 entries
// do not).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "manager_test_fixture.hpp"
#include "mcprt/json_text.hpp"

namespace mcprt::testing {
namespace manager_eras_test {  // this file's own names in a unity batch
namespace {

json discover_result() {
  return {{"resultType", "complete"},
          {"supportedVersions", {"2026-07-28"}},
          {"capabilities", {{"tools", {{"listChanged", true}}}}},
          {"_meta", {{"io.modelcontextprotocol/serverInfo", {{"name", "modern"}, {"version", "1"}}}}}};
}

class ManagerEras : public ManagerTest {
 protected:
  // Every connection to `name` is a 2026-07-28 server whose tools/list says ttl / scope.
  void serve_modern(const std::string& name, std::int64_t ttl, const std::string& scope) {
    farm.on_connect(name, [ttl, scope](FakeServer& s) {
      s.on("server/discover", [](const json&) -> Result<json> { return discover_result(); });
      s.hold("subscriptions/listen");
      s.on("tools/list", [ttl, scope](const json&) -> Result<json> {
        return json{{"resultType", "complete"},
                    {"tools", {tool("alpha"), tool("beta")}},
                    {"ttlMs", ttl},
                    {"cacheScope", scope}};
      });
    });
  }

  std::size_t count(FakeServer* s, const std::string& method) const {
    return s ? s->requests(method).size() : 0;
  }

  json stored_entry(const std::string& name) {
    auto it = store.entries().find(ToolCache::key_for(name));
    if (it == store.entries().end()) return nullptr;
    return parse_json(it->second);
  }

  // A first run that fills the cache, then a new manager (a restart) `later_ms` after it.
  void run_then_restart(const std::string& name, std::int64_t later_ms) {
    start({config(name)});
    ex.run_until_idle();
    ASSERT_EQ(phase(name), ServerPhase::connected);
    manager.reset();
    ex.run_until_idle();
    wall_ms += later_ms;
    make();
    start({config(name)});
    ex.run_until_idle();
  }
};

TEST_F(ManagerEras, TheVerdictAndTheListingsTtlAreStoredWithTheEntry) {
  serve_modern("m", 60000, "public");
  start({config("m")});
  ex.run_until_idle();
  ASSERT_EQ(phase("m"), ServerPhase::connected);
  json entry = stored_entry("m");
  ASSERT_TRUE(entry.is_object());
  EXPECT_EQ(entry["serverInfo"]["protocolVersion"], "2026-07-28");
  EXPECT_EQ(entry["serverInfo"]["ttlMs"], 60000);
  EXPECT_EQ(entry["serverInfo"]["cacheScope"], "public");
  EXPECT_EQ(entry["serverInfo"]["serverInfo"]["name"], "modern");
}

TEST_F(ManagerEras, WarmStart_FreshPublicEntry_NoProbeAndNoToolsList_ToolsAreLive) {
  serve_modern("m", 60000, "public");
  run_then_restart("m", 1000);
  FakeServer* second = farm.latest("m");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(count(second, "server/discover"), 0u) << "the stored verdict";
  EXPECT_EQ(count(second, "initialize"), 0u);
  EXPECT_EQ(count(second, "tools/list"), 0u) << "the entry is fresh";
  EXPECT_EQ(phase("m"), ServerPhase::connected);
  EXPECT_FALSE(all_deferred("m"));
  EXPECT_EQ(tool_names(), (std::vector<std::string>{"mcp_m_alpha", "mcp_m_beta"}));
  // A call goes straight out, with the envelope.
  std::optional<Result<json>> r;
  manager->tool_host()->call_tool("m", "alpha", json::object(), CallOptions{},
                                  [&](Result<json> x) { r = std::move(x); });
  ex.run_until_idle();
  ASSERT_EQ(count(second, "tools/call"), 1u);
  EXPECT_EQ(second->last_request("tools/call")["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28");
}

TEST_F(ManagerEras, WarmStart_StaleEntry_ListsAgain_WithoutAProbe) {
  serve_modern("m", 60000, "public");
  run_then_restart("m", 60000);
  FakeServer* second = farm.latest("m");
  EXPECT_EQ(count(second, "server/discover"), 0u);
  EXPECT_EQ(count(second, "tools/list"), 1u);
}

TEST_F(ManagerEras, WarmStart_PrivateEntry_IsNeverServedAsLive) {
  serve_modern("m", 60000, "private");
  run_then_restart("m", 1000);
  EXPECT_EQ(count(farm.latest("m"), "tools/list"), 1u);
}

TEST_F(ManagerEras, TtlIsCappedAtADay) {
  serve_modern("m", 10LL * 24 * 60 * 60 * 1000, "public");
  run_then_restart("m", 24LL * 60 * 60 * 1000);
  EXPECT_EQ(count(farm.latest("m"), "tools/list"), 1u);
}

TEST_F(ManagerEras, WarmStart_LegacyVerdict_GoesStraightToInitialize) {
  serve("old", tools_of({"a"}));
  run_then_restart("old", 1000);
  FakeServer* second = farm.latest("old");
  EXPECT_EQ(count(second, "server/discover"), 0u);
  ASSERT_FALSE(second->received().empty());
  EXPECT_EQ(second->received().front().value("method", ""), "initialize");
  EXPECT_EQ(count(second, "tools/list"), 1u) << "2025 entries carry no ttl";
}

TEST_F(ManagerEras, AStaleVerdictFails_ThenTheManagerProbesOnce_AndConnects) {
  serve_modern("m", 0, "public");
  start({config("m")});
  ex.run_until_idle();
  ASSERT_EQ(phase("m"), ServerPhase::connected);
  manager.reset();
  ex.run_until_idle();
  // The server was downgraded to the 2025 wire: a request before initialize is refused.
  farm.on_connect("m", [](FakeServer& s) {
    s.set_tools({tool("alpha")});
    s.on("tools/list", [&s](const json&) -> Result<json> {
      if (s.requests("initialize").empty()) return Error::wire(-32000, "Bad Request: Server not initialized");
      return json{{"tools", {tool("alpha")}}};
    });
  });
  make();
  start({config("m")});
  ex.run_until_idle();
  EXPECT_EQ(phase("m"), ServerPhase::connected);
  FakeServer* last = farm.latest("m");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(count(last, "server/discover"), 1u) << "probed again";
  EXPECT_EQ(count(last, "initialize"), 1u);
  json entry = stored_entry("m");
  EXPECT_EQ(entry["serverInfo"]["protocolVersion"], "2025-11-25") << "the new verdict is stored";
}

}  // namespace
}  // namespace manager_eras_test
}  // namespace mcprt::testing
