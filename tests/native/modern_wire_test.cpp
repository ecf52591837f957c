// Both protocol eras end to end (SPEC §14): the real CLI and connect_to_server against
// mcprt-demo-server in its 2026-07-28, dual and legacy modes, over stdio and HTTP — the
// probe and its fallback, the server that exits on an early request, the stored verdict
// (no probe on a warm start, read from the server's own request log), the listen stream
// that drops and comes back, MRTR with parallel calls, x-mcp-header mirroring of
// non-ASCII values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "http_demo_server.hpp"
#include "mcprt/connect.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/http_client.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "native_test_support.hpp"

namespace mcprt::native::test {
namespace modern_wire_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ModernWire : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("mcprt-modern-" + std::to_string(rd()));
    fs::create_directories(dir_ / "cache");
    log_path_ = dir_ / "server.log";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A stdio entry running the demo server with `args`, its request log appended to
  // server.log (stderr, through a shell).
  json stdio_entry(const std::vector<std::string>& args) const {
    std::string cmd = std::string("exec '") + MCPRT_DEMO_SERVER + "' --log-requests";
    for (const auto& a : args) cmd += " " + a;
    cmd += " 2>>'" + log_path_.string() + "'";
    return {{"command", "/bin/sh"}, {"args", {"-c", cmd}}};
  }

  fs::path write_config(const json& servers) const {
    fs::path cfg = dir_ / "mcp.json";
    std::ofstream(cfg) << json{{"mcpServers", servers}}.dump(2);
    return cfg;
  }

  MeasuredRun cli(const std::vector<std::string>& args, bool with_cache = true) const {
    std::vector<std::string> argv{MCPRT_CLI, "--config", (dir_ / "mcp.json").string()};
    if (!with_cache) argv.push_back("--no-cache");
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions ro;
    ro.env = {{"HOME", dir_.string()}, {"XDG_CACHE_HOME", (dir_ / "cache").string()},
              {"XDG_CONFIG_HOME", (dir_ / "config").string()}};
    ro.unset_env = {"MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL"};
    ro.timeout = Millis(30000);
    return run_measured(argv, ro);
  }

  std::string server_log() const { return read_file(log_path_); }

  fs::path dir_;
  fs::path log_path_;
};

json tools_doc(const MeasuredRun& r) { return json::parse(r.out, nullptr, false); }

std::vector<std::string> tool_names(const json& doc) {
  std::vector<std::string> out;
  if (!doc.is_object() || !doc.contains("tools")) return out;
  for (const auto& t : doc["tools"]) out.push_back(t.value("name", std::string()));
  return out;
}

// --- the CLI over stdio ------------------------------------------------------------------

TEST_F(ModernWire, Stdio2026_ListsAndCallsWithoutInitialize) {
  write_config({{"demo", stdio_entry({"--protocol", "2026"})}});
  auto tools = cli({"tools", "--json"});
  ASSERT_EQ(tools.exit_code, 0) << tools.err;
  json doc = tools_doc(tools);
  EXPECT_THAT(tool_names(doc), ::testing::IsSupersetOf({"mcp_demo_echo", "mcp_demo_ask_name"}));
  EXPECT_EQ(doc["servers"][0]["status"], "connected");
  auto call = cli({"call", "mcp_demo_echo", R"({"message":"over the stateless wire"})"});
  EXPECT_EQ(call.exit_code, 0) << call.err;
  EXPECT_THAT(call.out, HasSubstr("over the stateless wire"));
  const std::string log = server_log();
  EXPECT_THAT(log, HasSubstr("request tools/call"));
  EXPECT_EQ(count_of(log, "request initialize"), 0u) << log;
  EXPECT_TRUE(tools.leftovers.empty() && call.leftovers.empty());
}

TEST_F(ModernWire, Stdio2026_WarmStartSendsNoProbe) {
  write_config({{"demo", stdio_entry({"--protocol", "2026"})}});
  auto cold = cli({"tools", "--json"});
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  const std::string after_cold = server_log();
  EXPECT_EQ(count_of(after_cold, "request server/discover"), 1u) << after_cold;
  auto warm = cli({"tools", "--json"});
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  const std::string warm_log = server_log().substr(after_cold.size());
  EXPECT_EQ(count_of(warm_log, "request server/discover"), 0u) << "the stored verdict: " << warm_log;
  EXPECT_EQ(count_of(warm_log, "request tools/list"), 1u) << warm_log;
  EXPECT_EQ(tool_names(tools_doc(warm)), tool_names(tools_doc(cold)));
}

TEST_F(ModernWire, StdioLegacy_ProbeFallsBackToInitialize_AndTheVerdictIsStoredToo) {
  write_config({{"demo", stdio_entry({})}});  // the 2025 server
  auto cold = cli({"tools", "--json"});
  ASSERT_EQ(cold.exit_code, 0) << cold.err;
  const std::string after_cold = server_log();
  EXPECT_EQ(count_of(after_cold, "request server/discover"), 1u) << after_cold;
  EXPECT_EQ(count_of(after_cold, "request initialize"), 1u) << after_cold;
  auto warm = cli({"tools", "--json"});
  ASSERT_EQ(warm.exit_code, 0) << warm.err;
  const std::string warm_log = server_log().substr(after_cold.size());
  EXPECT_EQ(count_of(warm_log, "request server/discover"), 0u) << warm_log;
  EXPECT_EQ(count_of(warm_log, "request initialize"), 1u) << warm_log;
}

TEST_F(ModernWire, StdioServerThatExitsOnAnEarlyRequest_IsStartedAgainForInitialize) {
  write_config({{"demo", stdio_entry({"--exit-on-early-request"})}});
  auto tools = cli({"tools", "--json"}, /*with_cache=*/false);
  ASSERT_EQ(tools.exit_code, 0) << tools.err;
  EXPECT_THAT(tool_names(tools_doc(tools)), ::testing::Contains("mcp_demo_echo"));
  const std::string log = server_log();
  EXPECT_EQ(count_of(log, "request server/discover"), 1u) << log;
  EXPECT_EQ(count_of(log, "request initialize"), 1u) << log;
  EXPECT_TRUE(tools.leftovers.empty());
}

TEST_F(ModernWire, StdioServerThatIgnoresEarlyRequests_FallsBackAfterTheProbeDeadline) {
  write_config({{"demo", stdio_entry({"--ignore-early-requests"})}});
  auto tools = cli({"tools", "--json"}, /*with_cache=*/false);
  ASSERT_EQ(tools.exit_code, 0) << tools.err;
  EXPECT_THAT(tool_names(tools_doc(tools)), ::testing::Contains("mcp_demo_echo"));
  EXPECT_EQ(count_of(server_log(), "request initialize"), 1u);
}

TEST_F(ModernWire, PinnedProtocolsAreHonoured) {
  // A dual server pinned to legacy gets initialize and no probe...
  write_config({{"old", [&] {
                   json e = stdio_entry({"--protocol", "dual"});
                   e["protocol"] = "legacy";
                   return e;
                 }()}});
  auto legacy = cli({"tools", "--json"}, false);
  ASSERT_EQ(legacy.exit_code, 0) << legacy.err;
  EXPECT_EQ(count_of(server_log(), "request server/discover"), 0u);
  EXPECT_EQ(count_of(server_log(), "request initialize"), 1u);
  // ...and a 2026-only server pinned to 2026-07-28 needs no probe either: its first
  // request is server/discover as the connect, never initialize.
  fs::remove(log_path_);
  write_config({{"new", [&] {
                   json e = stdio_entry({"--protocol", "2026"});
                   e["protocol"] = "2026-07-28";
                   return e;
                 }()}});
  auto modern = cli({"tools", "--json"}, false);
  ASSERT_EQ(modern.exit_code, 0) << modern.err;
  EXPECT_EQ(count_of(server_log(), "request initialize"), 0u);
}

// --- the CLI over HTTP -------------------------------------------------------------------

TEST_F(ModernWire, Http2026_ListsAndCalls_AndMirrorsNonAsciiHeaders) {
  HttpDemoServer server({"--http", "0", "--protocol", "2026", "--log-requests"});
  ASSERT_GT(server.port(), 0) << server.error();
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/mcp";
  write_config({{"web", {{"type", "http"}, {"url", url}}}});
  auto tools = cli({"tools", "--json"}, false);
  ASSERT_EQ(tools.exit_code, 0) << tools.err;
  EXPECT_THAT(tool_names(tools_doc(tools)), ::testing::Contains("mcp_web_region_echo"));
  // The server checks Mcp-Param-Region against the argument (400 -32020 otherwise).
  auto call = cli({"call", "mcp_web_region_echo", R"({"region":" Zürich 世界"})"}, false);
  EXPECT_EQ(call.exit_code, 0) << call.err << call.out;
  EXPECT_THAT(call.out, HasSubstr("region= Zürich 世界"));
  EXPECT_THAT(server.log(), Not(HasSubstr("request initialize")));
}

TEST_F(ModernWire, HttpLegacy_ProbeFallsBackToInitialize) {
  HttpDemoServer server({"--http", "0", "--log-requests"});
  ASSERT_GT(server.port(), 0) << server.error();
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/mcp";
  write_config({{"web", {{"type", "http"}, {"url", url}}}});
  auto tools = cli({"tools", "--json"}, false);
  ASSERT_EQ(tools.exit_code, 0) << tools.err;
  EXPECT_THAT(tool_names(tools_doc(tools)), ::testing::Contains("mcp_web_echo"));
  auto call = cli({"call", "mcp_web_echo", R"({"message":"old wire"})"}, false);
  EXPECT_EQ(call.exit_code, 0) << call.err;
  EXPECT_THAT(server.log(), HasSubstr("request initialize"));
}

// --- a third-party 2026-only server (@modelcontextprotocol/server 2.x) --------------------

std::string ts2026_fixture() {
  return std::string(MCPRT_SOURCE_DIR) + "/tests/fixtures/ts2026/server.mjs";
}

TEST_F(ModernWire, Ts2026Server_Stdio_ListsAndCalls) {
  write_config({{"ts", {{"command", "node"}, {"args", {ts2026_fixture()}}}}});
  auto tools = cli({"tools", "--json"}, false);
  ASSERT_EQ(tools.exit_code, 0) << tools.err << tools.out;
  EXPECT_THAT(tool_names(tools_doc(tools)), ::testing::IsSupersetOf({"mcp_ts_greet", "mcp_ts_sum"}));
  auto call = cli({"call", "mcp_ts_sum", R"({"a":2,"b":40})"}, false);
  EXPECT_EQ(call.exit_code, 0) << call.err << call.out;
  EXPECT_THAT(call.out, HasSubstr("42"));
  EXPECT_TRUE(tools.leftovers.empty() && call.leftovers.empty());
}

TEST_F(ModernWire, Ts2026Server_Http_ListsAndCalls) {
  // The fixture binds 127.0.0.1 and prints its URL on stderr.
  const fs::path err = dir_ / "ts.err";
  const std::string pid_file = (dir_ / "ts.pid").string();
  const std::string cmd = "node '" + ts2026_fixture() + "' --http 0 2>'" + err.string() +
                          "' >/dev/null </dev/null & echo $! >'" + pid_file + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string url;
  for (int i = 0; i < 200 && url.empty(); ++i) {
    const std::string text = read_file(err);
    if (auto at = text.find("listening on "); at != std::string::npos) {
      auto end = text.find('\n', at);
      if (end != std::string::npos) url = text.substr(at + 13, end - at - 13);
    }
    if (url.empty()) ::usleep(50 * 1000);
  }
  const std::string pid = read_file(pid_file);
  ASSERT_FALSE(url.empty()) << read_file(err);
  write_config({{"ts", {{"type", "http"}, {"url", url}}}});
  auto tools = cli({"tools", "--json"}, false);
  auto call = cli({"call", "mcp_ts_greet", R"({"name":"Ada"})"}, false);
  std::system(("kill " + pid + " 2>/dev/null").c_str());
  ASSERT_EQ(tools.exit_code, 0) << tools.err << tools.out;
  EXPECT_THAT(tool_names(tools_doc(tools)), ::testing::Contains("mcp_ts_greet"));
  EXPECT_EQ(call.exit_code, 0) << call.err << call.out;
  EXPECT_THAT(call.out, HasSubstr("Ada"));
}

// --- sessions: listen, MRTR --------------------------------------------------------------

class ModernSession : public ::testing::Test {
 protected:
  void TearDown() override {
    if (session_) session_->close();
    pump_until(ex_, [&] { return closed_; }, Millis(5000));
    session_.reset();
  }

  Status connect(const ServerConfig& config, InputHandlers input = {}) {
    ConnectServices cs;
    cs.executor = &ex_;
    cs.process_launcher = &launcher_;
    cs.http_client = &http_;
    cs.logger = &log_;
    ConnectOptions co;
    co.cwd = "/tmp";
    co.input = std::move(input);
    co.on_notification = [this](const std::string& method, const json&) {
      if (method == "notifications/tools/list_changed") ++list_changes_;
    };
    co.on_close = [this](const Error&) { closed_ = true; };
    std::optional<Result<std::shared_ptr<ClientSession>>> got;
    auto made = connect_to_server(config, cs, co, [&](Result<std::shared_ptr<ClientSession>> r) {
      got = std::move(r);
    });
    if (!made.ok()) return made.error();
    session_ = made.value();
    if (!pump_until(ex_, [&] { return got.has_value(); })) {
      return Error::make(ErrorCode::internal, "test: connect never completed");
    }
    if (!got->ok()) return got->error();
    return {};
  }

  Result<json> call(const std::string& tool, json args) {
    std::optional<Result<json>> r;
    session_->call_tool(tool, std::move(args), {}, [&](Result<json> x) { r = std::move(x); });
    if (!pump_until(ex_, [&] { return r.has_value(); })) {
      return Error::make(ErrorCode::internal, "test: call never completed");
    }
    return std::move(*r);
  }

  static ServerConfig stdio_demo(std::vector<std::string> args) {
    ServerConfig c;
    c.name = "demo";
    c.type = TransportType::stdio;
    c.command = MCPRT_DEMO_SERVER;
    c.args = std::move(args);
    return c;
  }

  static std::string text_of(const json& result) {
    if (!result.contains("content") || result["content"].empty()) return {};
    return result["content"][0].value("text", std::string());
  }

  NativeExecutor ex_;
  CapturingLogger log_;
  NativeProcessLauncher launcher_{ex_, &log_};
  NativeHttpClient http_{ex_};
  std::shared_ptr<ClientSession> session_;
  int list_changes_ = 0;
  bool closed_ = false;
};

TEST_F(ModernSession, ListenStreamThatDrops_ComesBack_AndCarriesListChangesAgain) {
  ASSERT_TRUE(connect(stdio_demo({"--protocol", "2026"})).ok());
  ASSERT_TRUE(session_->server().modern);
  // The listen stream is opened after connect; a tool list change arrives over it.
  ASSERT_TRUE(call("toggle_tool", json::object()).ok());
  ASSERT_TRUE(pump_until(ex_, [&] { return list_changes_ == 1; }));
  // The server ends every listen stream; the session opens a new one (after 1 s).
  ASSERT_TRUE(call("drop_listen", json::object()).ok());
  // Until the new stream is up, changes are not seen; poll with the tool until one is.
  bool again = false;
  for (int i = 0; i < 40 && !again; ++i) {
    pump_until(ex_, [] { return false; }, Millis(250));
    ASSERT_TRUE(call("toggle_tool", json::object()).ok());
    again = pump_until(ex_, [&] { return list_changes_ >= 2; }, Millis(250));
  }
  EXPECT_TRUE(again) << "no list change after the listen stream was dropped";
}

TEST_F(ModernSession, MrtrParallelCalls_EachGetsItsOwnAnswer) {
  InputHandlers input;
  int asked = 0;
  input.elicit = [&](const Elicitation& e, ElicitReply reply) {
    ++asked;
    EXPECT_EQ(e.server, "demo");
    // Answer the second question first, with a different name each.
    ex_.post_after(Millis(asked == 1 ? 200 : 10), [reply, n = asked] {
      reply(ElicitAnswer::accept_with({{"name", n == 1 ? "Ada" : "Grace"}}));
    });
  };
  ASSERT_TRUE(connect(stdio_demo({"--protocol", "2026"}), input).ok());
  std::optional<Result<json>> a, b;
  session_->call_tool("ask_name", json::object(), {}, [&](Result<json> r) { a = std::move(r); });
  session_->call_tool("ask_name", {{"x", 1}}, {}, [&](Result<json> r) { b = std::move(r); });
  ASSERT_TRUE(pump_until(ex_, [&] { return a && b; }));
  ASSERT_TRUE(a->ok()) << a->error();
  ASSERT_TRUE(b->ok()) << b->error();
  EXPECT_EQ(text_of(a->value()), "Hello, Ada!");
  EXPECT_EQ(text_of(b->value()), "Hello, Grace!");
}

TEST_F(ModernSession, MrtrMultipleRounds_AndLegacyElicitation_UseTheSameHandler) {
  InputHandlers input;
  int asked = 0;
  // two_rounds wants a word each round; ask_name's `name` is left to the schema's default.
  input.elicit = [&](const Elicitation&, ElicitReply reply) {
    ++asked;
    reply(ElicitAnswer::accept_with({{"answer", "word" + std::to_string(asked)}}));
  };
  ASSERT_TRUE(connect(stdio_demo({"--protocol", "2026"}), input).ok());
  auto two = call("two_rounds", json::object());
  ASSERT_TRUE(two.ok()) << two.error();
  EXPECT_FALSE(two.value().value("isError", false)) << two.value().dump();
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(text_of(two.value()), "first=word1, second=word2") << two.value().dump();
  session_->close();
  ASSERT_TRUE(pump_until(ex_, [&] { return closed_; }));
  closed_ = false;
  // The 2025 server asks by a JSON-RPC request; the defaults fill the empty answer.
  ASSERT_TRUE(connect(stdio_demo({"--protocol", "legacy"}), input).ok());
  ASSERT_FALSE(session_->server().modern);
  auto hello = call("ask_name", json::object());
  ASSERT_TRUE(hello.ok()) << hello.error();
  EXPECT_EQ(text_of(hello.value()), "Hello, World!");
}

TEST_F(ModernSession, Http2026_MrtrAndHeaders) {
  HttpDemoServer server({"--http", "0", "--protocol", "2026"});
  ASSERT_GT(server.port(), 0) << server.error();
  ServerConfig c;
  c.name = "web";
  c.type = TransportType::http;
  c.type_explicit = true;
  c.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/mcp";
  InputHandlers input;
  input.elicit = [](const Elicitation&, ElicitReply reply) {
    reply(ElicitAnswer::accept_with({{"name", "Zoë"}, {"excited", true}}));
  };
  ASSERT_TRUE(connect(c, input).ok());
  ASSERT_TRUE(session_->server().modern);
  std::optional<Result<std::vector<json>>> listed;
  session_->list_tools([&](Result<std::vector<json>> r) { listed = std::move(r); });
  ASSERT_TRUE(pump_until(ex_, [&] { return listed.has_value(); }));
  ASSERT_TRUE(listed->ok()) << listed->error();
  auto hello = call("ask_name", json::object());
  ASSERT_TRUE(hello.ok()) << hello.error();
  EXPECT_EQ(text_of(hello.value()), "Hello, Zoë!!");
  auto region = call("region_echo", {{"region", "=?base64?looks-like-a-sentinel?="}});
  ASSERT_TRUE(region.ok()) << region.error();
  EXPECT_EQ(text_of(region.value()), "region==?base64?looks-like-a-sentinel?=");
}

}  // namespace
}  // namespace modern_wire_test
}  // namespace mcprt::native::test
