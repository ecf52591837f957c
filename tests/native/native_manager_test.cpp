// The manager with real processes (SPEC §5, §9): the test binary re-runs itself as the
// scripted stdio server (scripted_server.hpp), on a NativeExecutor and the
// NativeProcessLauncher. The tool cache is a NativeFileStore in a temporary directory,
// shared by two managers (the "second run"); every test fails if a child process is left
// behind (main.cpp).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>

#include "mcprt/manager.hpp"
#include "mcprt/native/file_store.hpp"
#include "native_test_support.hpp"
#include "tools/tool_set.hpp"

namespace mcprt::native::test {
namespace native_manager_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ServerConfig scripted_config(const std::string& name, const std::string& scenario,
                             std::vector<std::string> extra = {}) {
  json args = json::array({"--scripted-server=" + scenario});
  for (auto& a : extra) args.push_back(a);
  auto parsed = parse_server_entry(name, {{"command", self_exe()}, {"args", args}});
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  return parsed.ok() ? parsed.value() : ServerConfig{};
}

std::int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string make_temp_dir() {
  std::string templ = (std::filesystem::temp_directory_path() / "mcprt-manager-XXXXXX").string();
  if (!::mkdtemp(templ.data())) return {};
  return templ;
}

class NativeManager : public ::testing::Test {
 protected:
  ~NativeManager() override {
    std::error_code ec;
    if (!cache_dir.empty()) std::filesystem::remove_all(cache_dir, ec);
  }

  ManagerServices services() {
    ManagerServices s;
    s.executor = &ex;
    s.process_launcher = &launcher;
    s.logger = &log;
    s.cache_store = &store;
    s.wall_clock = wall_now_ms;
    return s;
  }

  std::optional<GateResult> connect(McpManager& m, std::vector<ServerConfig> configs) {
    std::optional<GateResult> gate;
    m.connect_servers(std::move(configs), [&](GateResult r) { gate = std::move(r); });
    EXPECT_TRUE(pump_until(ex, [&] { return gate.has_value(); }));
    return gate;
  }

  void disconnect_all(McpManager& m) {
    bool done = false;
    m.disconnect_all([&] { done = true; });
    EXPECT_TRUE(pump_until(ex, [&] { return done; }));
  }

  NativeExecutor ex;
  CapturingLogger log;
  NativeProcessLauncher launcher{ex, &log, fast_options()};
  std::string cache_dir = make_temp_dir();
  NativeFileStore store{cache_dir, ex};
};

TEST_F(NativeManager, SlowStartingServerIsAnsweredFromTheCacheOnTheSecondRun) {
  const ServerConfig slow = scripted_config("slow", "slow_initialize", {"1500"});
  {
    // First run: nothing cached, so the gate waits for the slow server.
    McpManager first(services(), ManagerOptions{});
    auto gate = connect(first, {slow});
    ASSERT_TRUE(gate.has_value());
    EXPECT_THAT(gate->connected, ElementsAre("slow"));
    EXPECT_EQ(first.tools().size(), 2u);
    disconnect_all(first);
  }
  ASSERT_FALSE(cache_dir.empty());
  ASSERT_TRUE(std::filesystem::exists(store.path_for(ToolCache::key_for("slow"))));

  // Second run: the gate answers with the cached tools while the server still starts.
  McpManager second(services(), ManagerOptions{});
  auto gate = connect(second, {slow});
  ASSERT_TRUE(gate.has_value());
  EXPECT_THAT(gate->deferred, ElementsAre("slow"));
  ASSERT_EQ(gate->tools.size(), 2u);
  for (const auto& t : gate->tools) EXPECT_TRUE(t->info().deferred) << t->name();
  EXPECT_EQ(second.connection_status("slow"), ConnectionStatus::connecting);
  EXPECT_TRUE(second.server_state("slow")->tools_from_cache);

  ASSERT_TRUE(pump_until(ex, [&] {
    return second.connection_status("slow") == ConnectionStatus::connected;
  }));
  ASSERT_EQ(second.tools().size(), 2u);
  for (const auto& t : second.tools()) EXPECT_FALSE(t->info().deferred) << t->name();
  disconnect_all(second);
}

// SPEC §12's tool path in the runtime: a listed tool's inputSchema stays the text the server
// sent (checked, not parsed) until something reads it, and the tool cache stores that text.
TEST_F(NativeManager, ListedSchemasStayTextUntilReadAndAreCachedAsTheServerSentThem) {
  McpManager m(services(), ManagerOptions{});
  auto gate = connect(m, {scripted_config("ok", "ok")});
  ASSERT_TRUE(gate.has_value());
  ASSERT_EQ(m.tools().size(), 2u);
  for (const auto& t : m.tools()) {
    EXPECT_TRUE(mcprt::detail::SharedJsonAccess::schema_text(t->info().input_schema).has_value()) << t->name();
    EXPECT_FALSE(mcprt::detail::SharedJsonAccess::schema_parsed(t->info().input_schema)) << t->name();
  }
  const json echo_schema = json::parse(
      R"({"type":"object","properties":{"message":{"type":"string"}},"required":["message"]})");
  auto echo = m.find_tool("mcp_ok_echo");
  auto add = m.find_tool("mcp_ok_add");
  ASSERT_TRUE(echo && add);
  EXPECT_EQ(echo->input_schema(), echo_schema);
  EXPECT_TRUE(mcprt::detail::SharedJsonAccess::schema_parsed(echo->info().input_schema));
  EXPECT_FALSE(mcprt::detail::SharedJsonAccess::schema_parsed(add->info().input_schema));

  // The cache entry, written after the listing, holds the schema's text.
  const auto cache_file = store.path_for(ToolCache::key_for("ok"));
  ASSERT_TRUE(pump_until(ex, [&] { return std::filesystem::exists(cache_file); }));
  std::ifstream in(cache_file);
  const std::string cached((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(cached, HasSubstr("\"inputSchema\":" + echo_schema.dump()));
  disconnect_all(m);
}

TEST_F(NativeManager, KilledServerShowsReconnectingAtOnceAndComesBackByItself) {
  McpManager m(services(), ManagerOptions{});
  auto gate = connect(m, {scripted_config("ok", "ok")});
  ASSERT_TRUE(gate.has_value());
  ASSERT_THAT(gate->connected, ElementsAre("ok"));
  auto children = children_of_self();
  ASSERT_EQ(children.size(), 1u);
  const pid_t first_pid = children[0].pid;

  ASSERT_EQ(::kill(first_pid, SIGKILL), 0);
  ASSERT_TRUE(pump_until(ex, [&] {
    return m.connection_status("ok") != ConnectionStatus::connected;
  }));
  auto st = m.server_state("ok");
  EXPECT_EQ(st->phase, ServerPhase::reconnecting);
  ASSERT_TRUE(st->last_error.has_value());
  EXPECT_THAT(st->last_error->message, HasSubstr("Server \"ok\""));
  EXPECT_THAT(st->last_error->message, HasSubstr("killed by signal 9"));

  ASSERT_TRUE(pump_until(ex, [&] {
    return m.connection_status("ok") == ConnectionStatus::connected;
  }));
  children = children_of_self();
  ASSERT_EQ(children.size(), 1u);
  EXPECT_NE(children[0].pid, first_pid);

  std::optional<Result<json>> got;
  m.tool_host()->call_tool("ok", "echo", {{"message", "back again"}}, CallOptions{},
                           [&](Result<json> r) { got = std::move(r); });
  ASSERT_TRUE(pump_until(ex, [&] { return got.has_value(); }));
  ASSERT_TRUE(got->ok()) << got->error();
  EXPECT_EQ(got->value()["content"][0]["text"], "back again");
  disconnect_all(m);
}

TEST_F(NativeManager, DisconnectAllLeavesNoChildProcess) {
  McpManager m(services(), ManagerOptions{});
  bool gate_done = false;
  m.connect_servers({scripted_config("a", "ok"), scripted_config("b", "ok"),
                     scripted_config("hung", "hang_initialize")},
                    [&](GateResult) { gate_done = true; });
  ASSERT_TRUE(pump_until(ex, [&] {
    return m.connection_status("a") == ConnectionStatus::connected &&
           m.connection_status("b") == ConnectionStatus::connected;
  }));
  ASSERT_TRUE(poll_until(ex, [&] { return children_of_self().size() == 3; }));

  disconnect_all(m);
  EXPECT_TRUE(children_of_self().empty());
  EXPECT_TRUE(m.tools().empty());
  EXPECT_TRUE(pump_until(ex, [&] { return gate_done; }));
}

TEST_F(NativeManager, DestroyingTheManagerWithWorkInFlightLeavesNoChildProcess) {
  auto m = std::make_unique<McpManager>(services(), ManagerOptions{});
  m->connect_servers({scripted_config("a", "ok"), scripted_config("hung", "hang_initialize"),
                      scripted_config("slow", "slow_initialize", {"5000"})},
                     [](GateResult) {});
  ASSERT_TRUE(pump_until(ex, [&] {
    return m->connection_status("a") == ConnectionStatus::connected;
  }));
  ASSERT_TRUE(poll_until(ex, [&] { return children_of_self().size() == 3; }));
  m.reset();
  EXPECT_TRUE(children_of_self().empty());
  ex.poll();
}

}  // namespace
}  // namespace native_manager_test
}  // namespace mcprt::native::test
