#pragma once
// Shared fixture of the manager unit tests (manager_*_test.cpp): a ManualExecutor, a
// FakeServerFarm behind ManagerServices::transport_factory, a MemoryKeyValueStore tool
// cache with a fixed wall clock, and a capturing logger.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/manager.hpp"
#include "mcprt/memory_store.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/fake_server_farm.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt::testing {

// A Result<json> callback (tool calls, reads, prompts) that records what it got.
struct CallProbe {
  int done = 0;
  std::optional<Result<json>> result;
  std::function<void(Result<json>)> callback() {
    return [this](Result<json> r) {
      ++done;
      result = std::move(r);
    };
  }
  std::string error_message() const {
    return result && !result->ok() ? result->error().message : "";
  }
};

class ManagerTest : public ::testing::Test {
 protected:
  static constexpr std::int64_t kWallMs = 1'750'000'000'000;

  // A stdio-shaped config (the farm serves it), with extra fields merged in.
  static ServerConfig config(const std::string& name, json extra = json::object()) {
    json entry = {{"command", "fake-" + name}};
    for (auto& [k, v] : extra.items()) entry[k] = v;
    auto parsed = parse_server_entry(name, entry);
    EXPECT_TRUE(parsed.ok()) << parsed.error();
    ServerConfig cfg = parsed.ok() ? parsed.value() : ServerConfig{};
    cfg.source.provider = "test";
    cfg.source.provider_name = "Test";
    cfg.source.path = "/test/mcp.json";
    return cfg;
  }

  static json tool(const std::string& name) {
    return {{"name", name},
            {"description", "tool " + name},
            {"inputSchema", {{"type", "object"}}}};
  }
  static std::vector<json> tools_of(std::initializer_list<std::string> names) {
    std::vector<json> out;
    for (const auto& n : names) out.push_back(tool(n));
    return out;
  }

  // Each new connection to `name` lists `defs`; `hold` leaves a method unanswered.
  void serve(const std::string& name, std::vector<json> defs, std::vector<std::string> hold = {}) {
    farm.on_connect(name, [defs, hold](FakeServer& s) {
      s.set_tools(defs);
      for (const auto& m : hold) s.hold(m);
    });
  }

  void seed_cache(const ServerConfig& cfg, const std::vector<json>& defs) {
    store.entries()[ToolCache::key_for(cfg.name)] = encode_cache_entry(
        cfg, json{{"serverInfo", {{"name", "cached"}}}}, defs, kWallMs - 1000);
  }

  McpManager& make() {
    ManagerServices s;
    s.executor = &ex;
    s.logger = &log;
    s.cache_store = use_cache ? &store : nullptr;
    s.wall_clock = [this] { return wall_ms; };
    s.transport_factory = farm.factory();
    s.env = env;
    s.auth_storage = auth_storage;
    manager = std::make_unique<McpManager>(std::move(s), options);
    manager->on_tools_changed([this] { ++tools_changed; });
    manager->on_status([this](const StatusEvent& e) { events.push_back(e); });
    return *manager;
  }

  // connect_servers; the gate result lands in `gate`.
  void start(std::vector<ServerConfig> configs) {
    if (!manager) make();
    manager->connect_servers(std::move(configs), [this](GateResult r) {
      ++gate_calls;
      gate = std::move(r);
    });
  }

  std::vector<std::string> tool_names() const {
    std::vector<std::string> out;
    for (const auto& t : manager->tools()) out.push_back(t->name());
    return out;
  }
  std::vector<std::string> tool_names_of(const std::vector<std::shared_ptr<McpTool>>& ts) const {
    std::vector<std::string> out;
    for (const auto& t : ts) out.push_back(t->name());
    return out;
  }
  bool all_deferred(const std::string& server) const {
    bool any = false;
    for (const auto& t : manager->tools()) {
      if (t->info().server != server) continue;
      any = true;
      if (!t->info().deferred) return false;
    }
    return any;
  }
  ServerPhase phase(const std::string& name) const {
    auto st = manager->server_state(name);
    EXPECT_TRUE(st.has_value()) << name;
    return st ? st->phase : ServerPhase::disconnected;
  }

  // Answers a held request of the latest FakeServer for `server`.
  void answer_held_list(const std::string& server, std::vector<json> defs) {
    FakeServer* s = farm.latest(server);
    ASSERT_NE(s, nullptr);
    json req = s->last_request("tools/list");
    ASSERT_FALSE(req.is_null());
    s->reply(req["id"], {{"tools", defs}});
    ex.run_until_idle();
  }

  ManualExecutor ex;
  CapturingLogger log;
  MemoryKeyValueStore store{ex};
  FakeServerFarm farm{ex};
  ManagerOptions options;
  EnvLookup env;
  AuthStorage* auth_storage = nullptr;
  bool use_cache = true;
  std::int64_t wall_ms = kWallMs;  // what the manager's wall clock says
  std::unique_ptr<McpManager> manager;
  int tools_changed = 0;
  std::vector<StatusEvent> events;
  int gate_calls = 0;
  std::optional<GateResult> gate;
};

}  // namespace mcprt::testing
