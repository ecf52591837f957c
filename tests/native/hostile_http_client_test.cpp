// Hostile HTTP servers against the real CLI (issue 9, "resource abuse"): `mcprt tools --json`
// with a server that floods response headers, next to the demo server over stdio. Before
// NativeHttpClient capped response heads, 2M header lines took the CLI to 480 MB.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "hostile_support.hpp"
#include "mcprt/result.hpp"

namespace mcprt::native::test {
namespace hostile_http_client_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class HostileHttpClient : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-hostile-http-" + std::to_string(rd()));
    fs::create_directories(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  // `mcprt tools --config <file> --json` on a temp HOME (no user config, no cache).
  MeasuredRun run_tools(const json& config) {
    const fs::path file = home_ / "servers.json";
    std::ofstream(file) << config.dump(2);
    RunOptions options;
    options.cwd = home_.string();
    options.env = {{"HOME", home_.string()}};
    options.unset_env = {"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "MCPRT_TIMEOUT_MS"};
    options.timeout = Millis(60000);
    return run_measured({MCPRT_CLI, "tools", "--config", file.string(), "--json"}, options);
  }

  fs::path home_;
};

TEST_F(HostileHttpClient, HeaderFloodFailsThatServerInBoundedTimeAndMemoryWhileTheOthersWork) {
  constexpr long kFloodLines = 2'000'000;
  std::atomic<long> most_lines_written{0};
  RawHttpServer flood([&](RawHttpServer::Connection& c) {
    c.read_body();
    if (!c.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")) return;
    std::string batch;
    for (long line = 0; line < kFloodLines;) {
      batch.clear();
      for (int i = 0; i < 1000; ++i, ++line) batch += "X-Flood-" + std::to_string(line) + ": 1\r\n";
      if (!c.write(batch)) break;
      if (line > most_lines_written) most_lines_written = line;
    }
  });
  const json config = {{"mcpServers",
                        {{"flood", {{"type", "http"}, {"url", flood.url("/mcp")}}},
                         {"demo", {{"command", MCPRT_DEMO_SERVER}, {"args", json::array()}}}}}};

  MeasuredRun r = run_tools(config);

  EXPECT_FALSE(r.timed_out) << r.err;
  EXPECT_EQ(r.term_signal, 0) << r.err;
  EXPECT_EQ(r.exit_code, 1) << "a server failed: " << r.err;
  EXPECT_TRUE(r.leftovers.empty()) << "left running: " << ::testing::PrintToString(r.leftovers);
  EXPECT_LT(r.peak_rss_kib, kHostileRssLimitKib) << "peak RSS " << r.peak_rss_kib << " KiB";
  EXPECT_LT(most_lines_written.load(), kFloodLines) << "the CLI stopped reading the flood";

  const json doc = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out << "\n" << r.err;
  json flood_entry, demo_entry;
  for (const json& s : doc.value("servers", json::array())) {
    if (s.value("name", "") == "flood") flood_entry = s;
    if (s.value("name", "") == "demo") demo_entry = s;
  }
  ASSERT_TRUE(flood_entry.is_object()) << doc.dump(2);
  EXPECT_NE(flood_entry.value("status", ""), "connected") << flood_entry.dump();
  ASSERT_TRUE(flood_entry["error"].is_string()) << flood_entry.dump();
  const std::string error = flood_entry["error"].get<std::string>();
  EXPECT_THAT(error, HasSubstr("more than 256 header fields")) << error;
  EXPECT_THAT(error, HasSubstr("max_response_header_fields")) << error;
  EXPECT_THAT(error, HasSubstr("Server \"flood\"")) << "the error names the server";

  ASSERT_TRUE(demo_entry.is_object()) << doc.dump(2);
  EXPECT_EQ(demo_entry.value("status", ""), "connected") << demo_entry.dump();
  int demo_tools = 0;
  for (const json& t : doc.value("tools", json::array())) {
    if (t.value("server", "") == "demo") ++demo_tools;
  }
  EXPECT_GT(demo_tools, 0) << doc.dump(2);

  std::printf(
      "[ figures  ] mcprt tools vs a 2M-line header flood: exit %d in %.0f ms, peak RSS "
      "%ld KiB, the flood server wrote at most %ld of %ld lines\n",
      r.exit_code, r.wall_ms, r.peak_rss_kib, most_lines_written.load(), kFloodLines);
  RecordProperty("peak_rss_kib", static_cast<int>(r.peak_rss_kib));
  RecordProperty("wall_ms", static_cast<int>(r.wall_ms));
}

}  // namespace
}  // namespace hostile_http_client_test
}  // namespace mcprt::native::test
