// Hostile-server regression cases for health (issue 9 item 5, SPEC §5.5): an HTTP server
// that is killed and comes back, and a tool that never answers. Real processes and
// loopback sockets: the manager on a NativeExecutor with NativeHttpClient and the process
// launcher, and the real CLI. Figures (time to the error, time back, calls/s of the other
// server during the outage, peak RSS) are printed as `[figure]` lines, never asserted.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "hostile_support.hpp"
#include "http_demo_server.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/native/http_client.hpp"
#include "native_test_support.hpp"

namespace mcprt::native::test {
namespace hostile_reconnect_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

ServerConfig entry(const std::string& name, const json& e) {
  auto parsed = parse_server_entry(name, e);
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  return parsed.ok() ? parsed.value() : ServerConfig{};
}

class HostileHealth : public ::testing::Test {
 protected:
  ManagerServices services() {
    ManagerServices s;
    s.executor = &ex;
    s.process_launcher = &launcher;
    s.http_client = &http;
    s.logger = &log;
    return s;
  }

  // Calls `tool` of `server` and pumps until it answers (bounded by kWaitLimit).
  std::optional<Result<json>> call(McpManager& m, const std::string& server,
                                   const std::string& tool, json args) {
    std::optional<Result<json>> got;
    m.tool_host()->call_tool(server, tool, std::move(args), CallOptions{},
                             [&](Result<json> r) { got = std::move(r); });
    pump_until(ex, [&] { return got.has_value(); });
    return got;
  }

  NativeExecutor ex;
  CapturingLogger log;
  NativeProcessLauncher launcher{ex, &log, fast_options()};
  NativeHttpClient http{ex};
};

TEST_F(HostileHealth, KilledHttpServerGoesReconnectingAtOnceAndComesBackByItself) {
  auto server = std::make_unique<HttpDemoServer>();
  ASSERT_GT(server->port(), 0) << server->error();
  const int port = server->port();
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/mcp";

  McpManager m(services(), ManagerOptions{});
  std::optional<GateResult> gate;
  m.connect_servers({entry("web", {{"type", "http"}, {"url", url}}),
                     entry("local", {{"command", self_exe()}, {"args", {"--scripted-server=ok"}}})},
                    [&](GateResult r) { gate = std::move(r); });
  ASSERT_TRUE(pump_until(ex, [&] {
    return gate && m.connection_status("web") == ConnectionStatus::connected &&
           m.connection_status("local") == ConnectionStatus::connected;
  }));

  // The server dies. The manager must not keep calling it "connected": the next request
  // finds the port closed, and that is a lost connection, not one failed call.
  const auto killed_at = Clock::now();
  ASSERT_TRUE(server->stop_with(SIGKILL).has_value());
  auto first = call(m, "web", "echo", {{"message", "anyone?"}});
  ASSERT_TRUE(pump_until(ex, [&] { return m.server_state("web")->phase != ServerPhase::connected; }));
  const double to_reconnecting_ms = ms_since(killed_at);
  auto st = m.server_state("web");
  EXPECT_EQ(st->phase, ServerPhase::reconnecting);
  ASSERT_TRUE(st->last_error.has_value());
  EXPECT_THAT(st->last_error->message, HasSubstr("Server \"web\""));

  // Meanwhile the stdio server is untouched: count what it answers in half a second.
  int local_ok = 0;
  const auto outage = Clock::now();
  while (ms_since(outage) < 500) {
    auto r = call(m, "local", "echo", {{"message", "still here"}});
    ASSERT_TRUE(r.has_value() && r->ok()) << (r && !r->ok() ? r->error().message : "no answer");
    ++local_ok;
  }
  const double local_calls_per_s = local_ok / (ms_since(outage) / 1000.0);

  // A call made during the outage waits for the reconnect instead of failing at once.
  std::optional<Result<json>> waiting;
  m.tool_host()->call_tool("web", "echo", {{"message", "back?"}}, CallOptions{},
                           [&](Result<json> r) { waiting = std::move(r); });
  pump_until(ex, [] { return false; }, Millis(300));
  EXPECT_FALSE(waiting.has_value()) << "the call failed during the outage instead of waiting";

  const auto restarted_at = Clock::now();
  server = std::make_unique<HttpDemoServer>(std::vector<std::string>{"--http", std::to_string(port)});
  ASSERT_EQ(server->port(), port) << server->error();
  ASSERT_TRUE(pump_until(ex, [&] { return waiting.has_value(); }));
  const double back_ms = ms_since(restarted_at);
  ASSERT_TRUE(waiting->ok()) << waiting->error().message;
  EXPECT_EQ(waiting->value()["content"][0]["text"], "back?");
  EXPECT_EQ(m.connection_status("web"), ConnectionStatus::connected);

  std::printf(
      "[figure] killed HTTP server: reconnecting %.0f ms after the kill (first call: %s); "
      "the stdio server answered %d calls (%.0f calls/s) during the outage; the waiting "
      "call completed %.0f ms after the restart\n",
      to_reconnecting_ms, first && first->ok() ? "ok" : "failed", local_ok, local_calls_per_s,
      back_ms);

  bool done = false;
  m.disconnect_all([&] { done = true; });
  EXPECT_TRUE(pump_until(ex, [&] { return done; }));
}

class HostileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-hostile-health-" + std::to_string(rd()));
    fs::create_directories(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  std::string write_config(const json& servers) {
    const fs::path path = home_ / "mcp.json";
    std::ofstream(path) << json{{"mcpServers", servers}}.dump(2);
    return path.string();
  }

  MeasuredRun cli(std::vector<std::string> args) {
    args.insert(args.begin(), MCPRT_CLI);
    RunOptions o;
    o.cwd = home_.string();
    o.env = {{"HOME", home_.string()}};
    o.unset_env = {"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "MCPRT_TIMEOUT_MS"};
    o.timeout = Millis(60000);  // a safety net for a hung CLI
    return run_measured(args, o);
  }

  fs::path home_;
};

TEST_F(HostileCli, NeverAnsweringToolEndsWithATimeoutThatNamesTheServer) {
  const std::string config = write_config(
      {{"hang", {{"command", self_exe()}, {"args", {"--scripted-server=hang_call"}}, {"toolTimeout", 1500}}},
       {"demo", {{"command", MCPRT_DEMO_SERVER}}}});

  MeasuredRun r = cli({"--config", config, "--no-cache", "call", "mcp_hang_echo", R"({"message":"hello?"})"});
  std::printf("[figure] never-answering tool: exit %d after %.0f ms, peak RSS %ld KiB\n",
              r.exit_code, r.wall_ms, r.peak_rss_kib);
  EXPECT_FALSE(r.timed_out) << "the CLI hung on a tool that never answers";
  EXPECT_NE(r.exit_code, 0);
  const std::string said = r.out + r.err;
  EXPECT_THAT(said, HasSubstr("Server \"hang\""));
  EXPECT_THAT(said, HasSubstr("timed out after 1500 ms"));
  EXPECT_TRUE(r.leftovers.empty()) << r.leftovers.front();

  // The other server of the same config is fine.
  MeasuredRun ok = cli({"--config", config, "--no-cache", "call", "mcp_demo_echo", R"({"message":"hi"})"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_TRUE(ok.leftovers.empty());
}

}  // namespace
}  // namespace hostile_reconnect_test
}  // namespace mcprt::native::test
