// Hostile servers against the real `mcprt` CLI (SPEC §17 "Bounded input"): JSON nested
// ~66k levels deep (a 130 KB line that used to be a SIGSEGV of the whole process) as a
// tools/list result, a tools/call result and a notification over stdio, and as a JSON
// body and an SSE event over HTTP; invalid UTF-8 in tools/list (which used to end in a
// timeout). Each case asserts that the CLI exits normally, its peak RSS stays small, the
// error names the server and says what was wrong, the demo server in the same config
// still works, and no process is left behind. The time to the error and the peak RSS are
// printed as `[figure]` lines (figures, not assertions).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "loopback_http_server.hpp"
#include "mcprt/result.hpp"
#include "native_test_support.hpp"

namespace mcprt::native::test {
namespace hostile_stdio_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// The CLI of a healthy run stays well under this; a DOM of the 66k-deep line, or a
// process that buffered what it should have rejected, would not.
constexpr long kRssLimitKib = kHostileRssLimitKib;
// A safety net for a hung CLI, not a performance expectation.
constexpr Millis kRunLimit{60000};

std::string nested(std::size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-hostile-" + std::to_string(rd()));
    fs::create_directories(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  // A config file holding `servers` plus the demo server as "demo".
  std::string write_config(json servers) {
    servers["demo"] = {{"command", MCPRT_DEMO_SERVER}};
    const fs::path path = home_ / "mcp.json";
    std::ofstream(path) << json{{"mcpServers", servers}}.dump(2);
    return path.string();
  }
  static json scripted(const std::string& scenario) {
    return {{"command", self_exe()}, {"args", {"--scripted-server=" + scenario}}};
  }

  // The CLI on a temporary HOME (its own tool cache), warnings on stderr.
  MeasuredRun cli(std::vector<std::string> args, const std::string& stdin_text = "") {
    args.insert(args.begin(), MCPRT_CLI);
    RunOptions o;
    o.cwd = home_.string();
    o.env = {{"HOME", home_.string()}, {"MCPRT_LOG_LEVEL", "warn"}};
    o.unset_env = {"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "MCPRT_TIMEOUT_MS"};
    o.stdin_text = stdin_text;
    o.timeout = kRunLimit;
    return run_measured(args, o);
  }

  // What every case shares: a normal exit, small memory, nothing left running.
  static void expect_contained(const MeasuredRun& r, const char* figure) {
    std::printf("[figure] %s: exit %d in %.0f ms, peak RSS %ld KiB\n", figure, r.exit_code,
                r.wall_ms, r.peak_rss_kib);
    ::testing::Test::RecordProperty(std::string(figure) + "_ms", std::to_string(r.wall_ms));
    ::testing::Test::RecordProperty(std::string(figure) + "_rss_kib",
                                    std::to_string(r.peak_rss_kib));
    EXPECT_FALSE(r.timed_out) << r.err;
    EXPECT_EQ(r.term_signal, 0) << "the CLI died of a signal; stderr:\n" << r.err;
    EXPECT_LT(r.peak_rss_kib, kRssLimitKib);
    EXPECT_TRUE(r.leftovers.empty()) << ::testing::PrintToString(r.leftovers);
  }

  static std::map<std::string, json> servers_of(const MeasuredRun& r) {
    std::map<std::string, json> out;
    json doc = json::parse(r.out, nullptr, false);
    if (doc.is_discarded() || !doc.contains("servers")) {
      ADD_FAILURE() << "tools --json did not print a document:\n" << r.out << "\nstderr:\n" << r.err;
      return out;
    }
    for (const auto& s : doc["servers"]) out[s.value("name", "")] = s;
    return out;
  }

  // tools --json: `name` failed with an error naming it and containing `what`; the demo
  // server listed its tools.
  void expect_failed_alone(const MeasuredRun& r, const std::string& name, const std::string& what) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    auto servers = servers_of(r);
    ASSERT_TRUE(servers.count(name)) << r.out;
    const json& bad = servers[name];
    EXPECT_EQ(bad.value("status", ""), "failed") << bad.dump();
    const std::string error = bad["error"].is_string() ? bad["error"].get<std::string>() : "";
    EXPECT_THAT(error, HasSubstr("Server \"" + name + "\"")) << bad.dump();
    EXPECT_THAT(error, HasSubstr(what)) << bad.dump();
    EXPECT_THAT(error, Not(HasSubstr("timed out"))) << bad.dump();
    ASSERT_TRUE(servers.count("demo")) << r.out;
    EXPECT_EQ(servers["demo"].value("status", ""), "connected") << servers["demo"].dump();
    EXPECT_GT(servers["demo"].value("toolCount", 0), 0);
  }

  fs::path home_;
};

// --- (a) stdio --------------------------------------------------------------------------

TEST_F(HostileInput, Stdio_DeepToolsListFailsThatServerAloneNamingIt) {
  const std::string config = write_config({{"evil", scripted("deep_tools_list")}});
  MeasuredRun r = cli({"tools", "--config", config, "--json"});
  expect_contained(r, "stdio_deep_tools_list");
  expect_failed_alone(r, "evil", "Unreadable response to tools/list: JSON nesting deeper than "
                                 "128 levels at byte ");
  EXPECT_THAT(r.err, HasSubstr("Server \"evil\": unreadable message"));
}

TEST_F(HostileInput, Stdio_DeepToolsCallResultFailsTheCallAndTheHostKeepsServing) {
  const std::string config = write_config({{"evil", scripted("deep_call_result")}});
  // One process: the deep answer, then a call of the other server, then evil again (its
  // connection is still up: tools/list and the handshake were fine).
  MeasuredRun r = cli({"repl", "--config", config},
                      "mcp_evil_echo {\"message\":\"x\"}\n"
                      "mcp_demo_echo {\"message\":\"still here\"}\n"
                      "mcp_evil_echo {\"message\":\"y\"}\n"
                      "/quit\n");
  expect_contained(r, "stdio_deep_call_result_repl");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("still here\n"));
  EXPECT_THAT(r.out, HasSubstr("Server \"evil\": Unreadable response to tools/call: JSON nesting "
                               "deeper than 128 levels"));

  MeasuredRun call = cli({"call", "--config", config, "mcp_evil_echo", "{\"message\":\"x\"}"});
  expect_contained(call, "stdio_deep_call_result_call");
  EXPECT_EQ(call.exit_code, 1) << call.out << call.err;
  EXPECT_THAT(call.out + call.err, HasSubstr("Server \"evil\""));
  EXPECT_THAT(call.out + call.err, HasSubstr("nesting deeper than 128 levels"));
}

TEST_F(HostileInput, Stdio_DeepNotificationIsDroppedWithAWarningAndTheServerStillWorks) {
  const std::string config = write_config({{"evil", scripted("deep_notification")}});
  MeasuredRun r = cli({"tools", "--config", config, "--json"});
  expect_contained(r, "stdio_deep_notification");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto servers = servers_of(r);
  EXPECT_EQ(servers["evil"].value("status", ""), "connected") << servers["evil"].dump();
  EXPECT_EQ(servers["evil"].value("toolCount", 0), 2);
  EXPECT_EQ(servers["demo"].value("status", ""), "connected");
  EXPECT_THAT(r.err, HasSubstr("Server \"evil\": unreadable message"));
  EXPECT_THAT(r.err, HasSubstr("JSON nesting deeper than 128 levels"));
}

// --- (c) invalid UTF-8 ------------------------------------------------------------------

TEST_F(HostileInput, Stdio_InvalidUtf8InToolsListFailsAtOnceNamingServerAndByte) {
  const std::string config = write_config({{"evil", scripted("invalid_utf8_tools_list")}});
  MeasuredRun r = cli({"tools", "--config", config, "--json"});
  expect_contained(r, "stdio_invalid_utf8_tools_list");
  expect_failed_alone(r, "evil", "Unreadable response to tools/list: invalid UTF-8 at byte ");
  EXPECT_THAT(r.err, HasSubstr("Server \"evil\": unreadable message"));
}

// --- (b) HTTP ---------------------------------------------------------------------------

// A Streamable HTTP server that answers initialize properly and tools/list with a 66k-deep
// result, as a JSON body or as an SSE event.
class DeepHttpServer {
 public:
  explicit DeepHttpServer(bool sse) {
    server_.post("/mcp", [sse](const httplib::Request& req, httplib::Response& res) {
      const json msg = json::parse(req.body, nullptr, false);
      if (msg.is_discarded() || !msg.contains("id")) {
        res.status = 202;  // notifications/initialized
        return;
      }
      const std::string method = msg.value("method", "");
      std::string answer;
      if (method == "initialize") {
        answer = json{{"jsonrpc", "2.0"},
                      {"id", msg["id"]},
                      {"result",
                       {{"protocolVersion", "2025-11-25"},
                        {"capabilities", {{"tools", json::object()}}},
                        {"serverInfo", {{"name", "deep-http"}, {"version", "1"}}}}}}
                     .dump();
      } else if (method == "tools/list") {
        answer = "{\"jsonrpc\":\"2.0\",\"id\":" + msg["id"].dump() +
                 ",\"result\":{\"tools\":" + nested(66000) + "}}";
      } else {
        answer = json{{"jsonrpc", "2.0"},
                      {"id", msg["id"]},
                      {"error", {{"code", -32601}, {"message", "no"}}}}
                     .dump();
      }
      if (sse) {
        res.set_content("event: message\ndata: " + answer + "\n\n", "text/event-stream");
      } else {
        res.set_content(answer, "application/json");
      }
    });
    server_.get("/mcp", [](const httplib::Request&, httplib::Response& res) { res.status = 405; });
    server_.del("/mcp", [](const httplib::Request&, httplib::Response& res) { res.status = 405; });
    server_.start();
  }
  std::string url() const { return server_.url("/mcp"); }
  std::size_t tools_list_posts() const {
    std::size_t n = 0;
    for (const auto& r : server_.requests()) {
      if (r.method == "POST" && r.body.find("\"tools/list\"") != std::string::npos) ++n;
    }
    return n;
  }

 private:
  LoopbackHttpServer server_;
};

TEST_F(HostileInput, Http_DeepJsonBodyFailsThatServerAloneNamingIt) {
  DeepHttpServer deep(/*sse=*/false);
  const std::string config = write_config({{"web", {{"type", "http"}, {"url", deep.url()}}}});
  MeasuredRun r = cli({"tools", "--config", config, "--json"});
  expect_contained(r, "http_deep_json_body");
  expect_failed_alone(r, "web", "is not usable JSON: JSON nesting deeper than 128 levels at byte ");
  EXPECT_GE(deep.tools_list_posts(), 1u);
}

TEST_F(HostileInput, Http_DeepSseEventFailsThatServerAloneNamingIt) {
  DeepHttpServer deep(/*sse=*/true);
  const std::string config = write_config({{"web", {{"type", "http"}, {"url", deep.url()}}}});
  MeasuredRun r = cli({"tools", "--config", config, "--json"});
  expect_contained(r, "http_deep_sse_event");
  expect_failed_alone(r, "web", "Unreadable response to tools/list: JSON nesting deeper than "
                                "128 levels at byte ");
  EXPECT_THAT(r.err, HasSubstr("Server \"web\": unreadable message"));
}

}  // namespace
}  // namespace hostile_stdio_test
}  // namespace mcprt::native::test
