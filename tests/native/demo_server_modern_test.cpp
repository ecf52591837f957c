// The demo MCP server's 2026-07-28 modes (`--protocol 2026|dual|legacy`), checked against
// the real binary with hand-written JSON-RPC — over pipes for stdio and with a plain
// httplib::Client for HTTP — deliberately without the mcprt client, so a client bug cannot
// hide a server bug. Also the third-party 2026 fixture (tests/fixtures/ts2026/server.mjs,
// on npm's @modelcontextprotocol/server) over stdio.
//
// Reads are bounded by a generous deadline only so that a broken server fails the test
// instead of hanging it; no assertion depends on how long anything takes.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_demo_server.hpp"

extern char** environ;

namespace demo_server_modern_test {  // this file's own names in a unity batch
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;
using mcprt::native::test::HttpDemoServer;

// A safety net against a hung server, not a performance expectation.
constexpr auto kDeadline = std::chrono::seconds(20);
constexpr const char* kVersion = "2026-07-28";
constexpr const char* kAcceptBoth = "application/json, text/event-stream";

json meta(json capabilities = json::object(), const std::string& version = kVersion) {
  return json{{"io.modelcontextprotocol/protocolVersion", version},
              {"io.modelcontextprotocol/clientCapabilities", std::move(capabilities)},
              {"io.modelcontextprotocol/clientInfo", {{"name", "demo-modern-test"}, {"version", "1"}}}};
}

// A modern request's params: `extra` plus _meta.
json modern_params(json extra = json::object(), json capabilities = json::object()) {
  extra["_meta"] = meta(std::move(capabilities));
  return extra;
}

json call_params(const std::string& tool, json arguments = json::object()) {
  return json{{"name", tool}, {"arguments", std::move(arguments)}};
}

// The first text block of a result; empty for anything else (a missing answer included),
// so a broken server fails an assertion instead of throwing.
std::string first_text(const json& result) {
  if (!result.is_object()) return {};
  const json& content = result.value("content", json::array());
  if (!content.is_array() || content.empty() || !content[0].is_object()) return {};
  const json& text = content[0].value("text", json());
  return text.is_string() ? text.get<std::string>() : std::string();
}

bool is_error(const json& result) {
  return result.is_object() && result.value("isError", json()) == true;
}

std::set<std::string> tool_names(const json& list_result) {
  std::set<std::string> names;
  if (!list_result.is_object()) return names;
  for (const auto& t : list_result.value("tools", json::array())) {
    if (t.is_object() && t.value("name", json()).is_string()) names.insert(t["name"].get<std::string>());
  }
  return names;
}

const json kElicitation{{"elicitation", json::object()}};

// ---- stdio -------------------------------------------------------------------------------

// A child process with stdin/stdout on pipes and stderr in a temporary file (read back by
// log(), so tests can assert on --log-requests lines).
class StdioChild {
 public:
  StdioChild(const std::string& program, std::vector<std::string> args) {
    char path[] = "/tmp/mcprt-demo-modern-stderr-XXXXXX";
    const int err = ::mkstemp(path);
    if (err < 0) {
      error_ = std::string("mkstemp: ") + std::strerror(errno);
      return;
    }
    stderr_path_ = path;
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      error_ = std::string("pipe: ") + std::strerror(errno);
      ::close(err);
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err);
    to_child_ = in[1];
    from_child_ = out[0];
    if (rc != 0) {
      pid_ = -1;
      error_ = "posix_spawn " + program + ": " + std::strerror(rc);
    }
  }

  ~StdioChild() {
    close_stdin();
    if (from_child_ >= 0) ::close(from_child_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());
  }

  StdioChild(const StdioChild&) = delete;
  StdioChild& operator=(const StdioChild&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& error() const { return error_; }

  void send(const json& message) {
    const std::string data = message.dump() + "\n";
    std::size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::write(to_child_, data.data() + off, data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ADD_FAILURE() << "write to the server failed: " << std::strerror(errno);
        return;
      }
      off += static_cast<std::size_t>(n);
    }
  }
  void request(const json& id, const std::string& method, json params = nullptr) {
    json m{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) m["params"] = std::move(params);
    send(m);
  }
  void notify(const std::string& method, json params = nullptr) {
    json m{{"jsonrpc", "2.0"}, {"method", method}};
    if (!params.is_null()) m["params"] = std::move(params);
    send(m);
  }

  // The next message the server wrote, or nullopt on EOF / deadline / non-JSON output.
  std::optional<json> read_message(std::chrono::milliseconds limit = kDeadline) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
      const auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        json j = json::parse(line, nullptr, false);
        if (j.is_discarded()) {
          ADD_FAILURE() << "the server wrote a line that is not JSON: " << line;
          return std::nullopt;
        }
        return j;
      }
      if (eof_) return std::nullopt;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{from_child_, POLLIN, 0};
      const int rc = ::poll(&p, 1, static_cast<int>(left));
      if (rc <= 0) continue;
      char buf[65536];
      const ssize_t n = ::read(from_child_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof_ = true;
        continue;
      }
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }

  // Reads until the response with `id`; everything read before it lands in `before`.
  std::optional<json> read_response(const json& id, std::vector<json>* before = nullptr) {
    while (auto m = read_message()) {
      if (m->contains("id") && (*m)["id"] == id && !m->contains("method")) return m;
      if (before) before->push_back(*m);
    }
    return std::nullopt;
  }

  json call(const json& id, const std::string& method, json params = nullptr,
            std::vector<json>* before = nullptr) {
    request(id, method, std::move(params));
    auto r = read_response(id, before);
    return r ? *r : json();
  }

  void close_stdin() {
    if (to_child_ >= 0) ::close(to_child_);
    to_child_ = -1;
  }

  // Waits (bounded) for the exit; the wait status, or nullopt.
  std::optional<int> wait_exit() {
    const auto deadline = Clock::now() + kDeadline;
    while (Clock::now() < deadline) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::nullopt;
  }

  std::string log() const {
    std::ifstream in(stderr_path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  bool eof_ = false;
  std::string error_;
  std::string stderr_path_;
};

std::vector<std::string> with(std::vector<std::string> args) { return args; }

class DemoServerModernStdio : public ::testing::Test {
 protected:
  DemoServerModernStdio()
      : server_(MCPRT_DEMO_SERVER, {"--protocol", "2026", "--ttl-ms", "1500", "--log-requests"}) {}
  void SetUp() override { ASSERT_TRUE(server_.started()) << server_.error(); }

  json tool_call(const json& id, const std::string& tool, json extra = json::object(),
                 json capabilities = json::object(), std::vector<json>* before = nullptr) {
    json p = call_params(tool);
    for (auto& [k, v] : extra.items()) p[k] = v;
    return server_.call(id, "tools/call", modern_params(std::move(p), std::move(capabilities)),
                        before);
  }

  StdioChild server_;
};

TEST_F(DemoServerModernStdio, DiscoverDescribesTheServerAndIsCacheable) {
  json r = server_.call(1, "server/discover", modern_params());
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& d = r["result"];
  EXPECT_EQ(d["resultType"], "complete");
  EXPECT_EQ(d["supportedVersions"], json::array({kVersion}));
  EXPECT_EQ(d["capabilities"]["tools"]["listChanged"], true);
  EXPECT_EQ(d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcprt-demo-server");
  EXPECT_TRUE(d["_meta"]["io.modelcontextprotocol/serverInfo"]["version"].is_string());
  EXPECT_EQ(d["ttlMs"], 1500);
  EXPECT_EQ(d["cacheScope"], "public");
}

TEST_F(DemoServerModernStdio, RequestWithoutEitherMetaKeyIsInvalidParams) {
  json none = server_.call(1, "tools/list", json::object());
  ASSERT_TRUE(none.contains("error")) << none.dump();
  EXPECT_EQ(none["error"]["code"], -32602);
  EXPECT_THAT(none["error"]["message"].get<std::string>(), HasSubstr("protocolVersion"));

  json no_caps = server_.call(
      2, "tools/list", json{{"_meta", {{"io.modelcontextprotocol/protocolVersion", kVersion}}}});
  ASSERT_TRUE(no_caps.contains("error")) << no_caps.dump();
  EXPECT_EQ(no_caps["error"]["code"], -32602);
  EXPECT_THAT(no_caps["error"]["message"].get<std::string>(), HasSubstr("clientCapabilities"));

  json discover = server_.call(3, "server/discover");  // no params at all
  ASSERT_TRUE(discover.contains("error")) << discover.dump();
  EXPECT_EQ(discover["error"]["code"], -32602);
}

TEST_F(DemoServerModernStdio, UnsupportedVersionIs32022WithSupportedAndRequested) {
  json r = server_.call(1, "tools/list", json{{"_meta", meta(json::object(), "2025-11-25")}});
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32022);
  EXPECT_EQ(r["error"]["data"]["supported"], json::array({kVersion}));
  EXPECT_EQ(r["error"]["data"]["requested"], "2025-11-25");
}

TEST_F(DemoServerModernStdio, InitializeAndPingAreMethodNotFound) {
  json init = server_.call(1, "initialize",
                           json{{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}});
  ASSERT_TRUE(init.contains("error")) << init.dump();
  EXPECT_EQ(init["error"]["code"], -32601);
  json ping = server_.call(2, "ping", modern_params());
  ASSERT_TRUE(ping.contains("error")) << ping.dump();
  EXPECT_EQ(ping["error"]["code"], -32601);
}

TEST_F(DemoServerModernStdio, ToolsListCarriesResultTypeTtlScopeAndTheTestTools) {
  json r = server_.call(1, "tools/list", modern_params());
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_EQ(r["result"]["ttlMs"], 1500);
  EXPECT_EQ(r["result"]["cacheScope"], "public");
  const auto names = tool_names(r["result"]);
  for (const char* n : {"echo", "add", "ask_name", "ask_model", "list_roots", "two_rounds",
                        "toggle_tool", "drop_listen", "region_echo"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  EXPECT_FALSE(names.count("bonus"));
  for (const auto& t : r["result"]["tools"]) {
    if (t["name"] == "region_echo") {
      EXPECT_EQ(t["inputSchema"]["properties"]["region"]["x-mcp-header"], "Region");
    }
  }
  json echo = tool_call(2, "echo", {{"arguments", {{"message", "hi"}}}});
  ASSERT_TRUE(echo.contains("result")) << echo.dump();
  EXPECT_EQ(echo["result"]["resultType"], "complete");
  EXPECT_EQ(first_text(echo["result"]), "hi");
}

TEST_F(DemoServerModernStdio, ListenAcknowledgesTheHonouredSubsetAndToggleNotifiesIt) {
  server_.request("listen:1", "subscriptions/listen",
                  modern_params({{"notifications",
                                  {{"toolsListChanged", true},
                                   {"promptsListChanged", true},
                                   {"resourceSubscriptions", json::array({"file:///x"})}}}}));
  auto ack = server_.read_message();
  ASSERT_TRUE(ack);
  EXPECT_EQ((*ack)["method"], "notifications/subscriptions/acknowledged");
  EXPECT_EQ((*ack)["params"]["notifications"], (json{{"toolsListChanged", true}}));
  EXPECT_EQ((*ack)["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:1");
  EXPECT_FALSE(ack->contains("id"));

  std::vector<json> before;
  json toggled = tool_call(2, "toggle_tool", json::object(), json::object(), &before);
  ASSERT_TRUE(toggled.contains("result")) << toggled.dump();
  EXPECT_EQ(first_text(toggled["result"]), "bonus tool added");
  ASSERT_EQ(before.size(), 1u) << json(before).dump();
  EXPECT_EQ(before[0]["method"], "notifications/tools/list_changed");
  EXPECT_EQ(before[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:1");

  json listed = server_.call(3, "tools/list", modern_params());
  EXPECT_TRUE(tool_names(listed["result"]).count("bonus")) << listed.dump();
  json bonus = tool_call(4, "bonus");
  EXPECT_EQ(first_text(bonus["result"]), "bonus");

  // Toggling again removes it, and the listen stream hears that too.
  before.clear();
  json again = tool_call(5, "toggle_tool", json::object(), json::object(), &before);
  EXPECT_EQ(first_text(again["result"]), "bonus tool removed");
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0]["method"], "notifications/tools/list_changed");
  EXPECT_FALSE(tool_names(server_.call(6, "tools/list", modern_params())["result"]).count("bonus"));
}

TEST_F(DemoServerModernStdio, ListenWithoutToolsGetsAnEmptySubsetAndNoToolNotifications) {
  server_.request(7, "subscriptions/listen",
                  modern_params({{"notifications", {{"promptsListChanged", true}}}}));
  auto ack = server_.read_message();
  ASSERT_TRUE(ack);
  EXPECT_EQ((*ack)["params"]["notifications"], json::object());
  std::vector<json> before;
  tool_call(8, "toggle_tool", json::object(), json::object(), &before);
  EXPECT_TRUE(before.empty()) << json(before).dump();
}

TEST_F(DemoServerModernStdio, CancelledListenHearsNothingMore) {
  server_.request("L", "subscriptions/listen",
                  modern_params({{"notifications", {{"toolsListChanged", true}}}}));
  ASSERT_TRUE(server_.read_message());
  server_.notify("notifications/cancelled", {{"requestId", "L"}, {"reason", "done"}});
  std::vector<json> before;
  json r = tool_call(2, "toggle_tool", json::object(), json::object(), &before);
  ASSERT_TRUE(r.contains("result"));
  EXPECT_TRUE(before.empty()) << json(before).dump();
  // And drop_listen finds no stream left.
  EXPECT_EQ(first_text(tool_call(3, "drop_listen")["result"]), "dropped 0 listen stream(s)");
}

TEST_F(DemoServerModernStdio, DropListenSendsCancelledForEveryListenId) {
  for (const char* id : {"a", "b"}) {
    server_.request(id, "subscriptions/listen",
                    modern_params({{"notifications", {{"toolsListChanged", true}}}}));
    ASSERT_TRUE(server_.read_message());
  }
  std::vector<json> before;
  json r = tool_call(3, "drop_listen", json::object(), json::object(), &before);
  EXPECT_EQ(first_text(r["result"]), "dropped 2 listen stream(s)");
  std::set<std::string> cancelled;
  for (const auto& m : before) {
    EXPECT_EQ(m["method"], "notifications/cancelled");
    cancelled.insert(m["params"]["requestId"].get<std::string>());
  }
  EXPECT_EQ(cancelled, (std::set<std::string>{"a", "b"}));
  // No listen remains: a toggle notifies nobody.
  before.clear();
  tool_call(4, "toggle_tool", json::object(), json::object(), &before);
  EXPECT_TRUE(before.empty()) << json(before).dump();
}

TEST_F(DemoServerModernStdio, AskNameIsInputRequiredThenAnswersFromTheInputResponse) {
  json first = tool_call(1, "ask_name", json::object(), kElicitation);
  ASSERT_TRUE(first.contains("result")) << first.dump();
  const json& ir = first["result"];
  EXPECT_EQ(ir["resultType"], "input_required");
  ASSERT_TRUE(ir["requestState"].is_string());
  const json& ask = ir["inputRequests"]["name"];
  EXPECT_EQ(ask["method"], "elicitation/create");
  EXPECT_EQ(ask["params"]["message"], "What is your name?");
  const json& schema = ask["params"]["requestedSchema"];
  EXPECT_EQ(schema["properties"]["name"]["default"], "World");
  EXPECT_EQ(schema["properties"]["name"]["title"], "Name");
  EXPECT_EQ(schema["properties"]["excited"]["type"], "boolean");
  EXPECT_EQ(schema["required"], json::array({"name"}));

  json done = tool_call(
      2, "ask_name",
      {{"inputResponses", {{"name", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}}},
       {"requestState", ir["requestState"]}},
      kElicitation);
  ASSERT_TRUE(done.contains("result")) << done.dump();
  EXPECT_EQ(done["result"]["resultType"], "complete");
  EXPECT_EQ(first_text(done["result"]), "Hello, Ada!");
  EXPECT_FALSE(is_error(done["result"]));

  auto round_trip = [&](int id, const json& answer) {
    json a = tool_call(id, "ask_name", json::object(), kElicitation);
    json b = tool_call(id + 1, "ask_name",
                       {{"inputResponses", {{"name", answer}}},
                        {"requestState", a["result"]["requestState"]}},
                       kElicitation);
    return first_text(b["result"]);
  };
  EXPECT_EQ(round_trip(10, {{"action", "accept"}, {"content", {{"name", "Bo"}, {"excited", true}}}}),
            "Hello, Bo!!");
  EXPECT_EQ(round_trip(20, {{"action", "decline"}}), "No name given (declined).");
  EXPECT_EQ(round_trip(30, {{"action", "cancel"}}), "No name given (cancelled).");
}

TEST_F(DemoServerModernStdio, ForgedReusedOrForeignRequestStateIsAToolError) {
  json forged = tool_call(
      1, "ask_name",
      {{"inputResponses", {{"name", {{"action", "accept"}, {"content", {{"name", "Eve"}}}}}}},
       {"requestState", "demo-rs-1-0000000000000000"}},
      kElicitation);
  ASSERT_TRUE(forged.contains("result")) << forged.dump();
  EXPECT_TRUE(is_error(forged["result"]));
  EXPECT_THAT(first_text(forged["result"]), HasSubstr("not issued"));

  json a = tool_call(2, "ask_name", json::object(), kElicitation);
  const json state = a["result"]["requestState"];
  const json answer{{"name", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}};
  json ok = tool_call(3, "ask_name", {{"inputResponses", answer}, {"requestState", state}},
                      kElicitation);
  EXPECT_EQ(first_text(ok["result"]), "Hello, Ada!");
  json replay = tool_call(4, "ask_name", {{"inputResponses", answer}, {"requestState", state}},
                          kElicitation);
  EXPECT_TRUE(is_error(replay["result"])) << replay.dump();
  EXPECT_THAT(first_text(replay["result"]), HasSubstr("already used"));

  // A state issued for ask_name does not continue two_rounds.
  json b = tool_call(5, "ask_name", json::object(), kElicitation);
  json foreign = tool_call(6, "two_rounds",
                           {{"inputResponses", {{"first", {{"action", "accept"}, {"content", {{"answer", "x"}}}}}}},
                            {"requestState", b["result"]["requestState"]}},
                           kElicitation);
  EXPECT_TRUE(is_error(foreign["result"])) << foreign.dump();

  // inputResponses without any requestState are refused too.
  json stray = tool_call(7, "ask_name", {{"inputResponses", answer}}, kElicitation);
  EXPECT_TRUE(is_error(stray["result"])) << stray.dump();
}

TEST_F(DemoServerModernStdio, TwoRoundsAsksTwiceWithANewRequestStateEachRound) {
  json r1 = tool_call(1, "two_rounds", json::object(), kElicitation);
  ASSERT_EQ(r1["result"]["resultType"], "input_required") << r1.dump();
  ASSERT_TRUE(r1["result"]["inputRequests"].contains("first"));
  const json s1 = r1["result"]["requestState"];
  json r2 = tool_call(
      2, "two_rounds",
      {{"inputResponses", {{"first", {{"action", "accept"}, {"content", {{"answer", "alpha"}}}}}}},
       {"requestState", s1}},
      kElicitation);
  ASSERT_EQ(r2["result"]["resultType"], "input_required") << r2.dump();
  ASSERT_TRUE(r2["result"]["inputRequests"].contains("second"));
  const json s2 = r2["result"]["requestState"];
  EXPECT_NE(s1, s2);
  json r3 = tool_call(
      3, "two_rounds",
      {{"inputResponses", {{"second", {{"action", "accept"}, {"content", {{"answer", "beta"}}}}}}},
       {"requestState", s2}},
      kElicitation);
  ASSERT_EQ(r3["result"]["resultType"], "complete") << r3.dump();
  EXPECT_EQ(first_text(r3["result"]), "first=alpha, second=beta");
}

TEST_F(DemoServerModernStdio, InputToolsNeedTheCapabilityOfTheRequestItself) {
  json name = tool_call(1, "ask_name");  // clientCapabilities {}
  EXPECT_TRUE(is_error(name["result"])) << name.dump();
  EXPECT_EQ(first_text(name["result"]), "the client does not support elicitation");
  json model = tool_call(2, "ask_model", json::object(), kElicitation);
  EXPECT_EQ(first_text(model["result"]), "the client does not support sampling");
  json roots = tool_call(3, "list_roots");
  EXPECT_EQ(first_text(roots["result"]), "the client does not support roots");
}

TEST_F(DemoServerModernStdio, AskModelAndListRootsReadTheirInputResponses) {
  const json sampling{{"sampling", json::object()}};
  json m1 = tool_call(1, "ask_model", json::object(), sampling);
  const json& ask = m1["result"]["inputRequests"]["model"];
  EXPECT_EQ(ask["method"], "sampling/createMessage");
  EXPECT_EQ(ask["params"]["maxTokens"], 50);
  EXPECT_EQ(ask["params"]["messages"][0]["content"]["text"], "Say hello");
  json m2 = tool_call(2, "ask_model",
                      {{"inputResponses",
                        {{"model",
                          {{"role", "assistant"},
                           {"content", {{"type", "text"}, {"text", "Hello there"}}},
                           {"model", "test-model"}}}}},
                       {"requestState", m1["result"]["requestState"]}},
                      sampling);
  EXPECT_EQ(first_text(m2["result"]), "Hello there");

  const json roots_cap{{"roots", json::object()}};
  json r1 = tool_call(3, "list_roots", json::object(), roots_cap);
  EXPECT_EQ(r1["result"]["inputRequests"]["roots"]["method"], "roots/list");
  const json roots = json::array({{{"uri", "file:///tmp/a"}, {"name", "a"}}});
  json r2 = tool_call(4, "list_roots",
                      {{"inputResponses", {{"roots", {{"roots", roots}}}}},
                       {"requestState", r1["result"]["requestState"]}},
                      roots_cap);
  EXPECT_EQ(json::parse(first_text(r2["result"]), nullptr, false), roots);
}

TEST_F(DemoServerModernStdio, LogRequestsWritesOneLinePerRequestReceived) {
  server_.call(1, "server/discover", modern_params());
  server_.call(2, "tools/list", json::object());  // refused, still logged
  server_.notify("notifications/cancelled", {{"requestId", 99}});  // not a request
  server_.call(3, "tools/list", modern_params());
  server_.close_stdin();
  ASSERT_TRUE(server_.wait_exit());
  const std::string log = server_.log();
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("] request ") != std::string::npos) lines.push_back(line);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"[mcprt-demo-server] request server/discover",
                                             "[mcprt-demo-server] request tools/list",
                                             "[mcprt-demo-server] request tools/list"}))
      << log;
}

TEST(DemoServerModernStdioOptions, CacheScopeAndATtlAboveADayAreReportedAsGiven) {
  StdioChild server(MCPRT_DEMO_SERVER,
                    {"--protocol", "2026", "--ttl-ms", "172800000", "--cache-scope", "private"});
  ASSERT_TRUE(server.started()) << server.error();
  for (const char* method : {"server/discover", "tools/list"}) {
    json r = server.call(1, method, modern_params());
    ASSERT_TRUE(r.contains("result")) << r.dump();
    EXPECT_EQ(r["result"]["ttlMs"], 172800000) << method;
    EXPECT_EQ(r["result"]["cacheScope"], "private") << method;
  }
}

TEST(DemoServerDualStdio, AnswersInitializeAndModernRequestsOnOneConnection) {
  StdioChild server(MCPRT_DEMO_SERVER, {"--protocol", "dual"});
  ASSERT_TRUE(server.started()) << server.error();
  json discover = server.call(1, "server/discover", modern_params());
  ASSERT_TRUE(discover.contains("result")) << discover.dump();
  EXPECT_EQ(discover["result"]["supportedVersions"], json::array({kVersion}));

  json init = server.call(2, "initialize",
                          json{{"protocolVersion", "2025-11-25"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  ASSERT_TRUE(init.contains("result")) << init.dump();
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-11-25");
  server.notify("notifications/initialized");

  json legacy = server.call(3, "tools/list");
  ASSERT_TRUE(legacy.contains("result")) << legacy.dump();
  EXPECT_FALSE(legacy["result"].contains("resultType"));
  EXPECT_FALSE(tool_names(legacy["result"]).count("two_rounds"));  // 2026 only

  json modern = server.call(4, "tools/list", modern_params());
  ASSERT_TRUE(modern.contains("result")) << modern.dump();
  EXPECT_EQ(modern["result"]["resultType"], "complete");
  EXPECT_TRUE(tool_names(modern["result"]).count("two_rounds"));

  json bad = server.call(5, "tools/list", json{{"_meta", meta(json::object(), "2099-01-01")}});
  EXPECT_EQ(bad["error"]["code"], -32022) << bad.dump();
  json ping = server.call(6, "ping");
  EXPECT_TRUE(ping.contains("result")) << ping.dump();
}

TEST(DemoServerLegacyInput, AskNameSendsElicitationCreateAndFinishesOnTheAnswer) {
  StdioChild server(MCPRT_DEMO_SERVER, {"--protocol", "legacy"});
  ASSERT_TRUE(server.started()) << server.error();
  json init = server.call(1, "initialize",
                          json{{"protocolVersion", "2025-11-25"},
                               {"capabilities", {{"elicitation", json::object()}}},
                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  ASSERT_TRUE(init.contains("result")) << init.dump();
  EXPECT_EQ(init["result"]["capabilities"]["tools"]["listChanged"], true);
  server.notify("notifications/initialized");

  server.request(2, "tools/call", call_params("ask_name"));
  auto ask = server.read_message();
  ASSERT_TRUE(ask);
  EXPECT_EQ((*ask)["method"], "elicitation/create");
  ASSERT_TRUE((*ask)["id"].is_string()) << ask->dump();
  EXPECT_EQ((*ask)["params"]["message"], "What is your name?");
  EXPECT_EQ((*ask)["params"]["requestedSchema"]["properties"]["name"]["default"], "World");
  server.send(json{{"jsonrpc", "2.0"},
                   {"id", (*ask)["id"]},
                   {"result", {{"action", "accept"}, {"content", {{"name", "Ada"}, {"excited", true}}}}}});
  auto done = server.read_response(2);
  ASSERT_TRUE(done);
  EXPECT_EQ(first_text((*done)["result"]), "Hello, Ada!!");

  // An error answer ends the call with a tool error naming it.
  server.request(3, "tools/call", call_params("ask_name"));
  auto ask2 = server.read_message();
  ASSERT_TRUE(ask2);
  server.send(json{{"jsonrpc", "2.0"},
                   {"id", (*ask2)["id"]},
                   {"error", {{"code", -32601}, {"message", "Method not found"}}}});
  auto failed = server.read_response(3);
  ASSERT_TRUE(failed);
  EXPECT_TRUE(is_error((*failed)["result"]));
  EXPECT_THAT(first_text((*failed)["result"]), HasSubstr("-32601"));

  // Sampling was not declared in initialize.
  json model = server.call(4, "tools/call", call_params("ask_model"));
  EXPECT_EQ(first_text(model["result"]), "the client does not support sampling");
}

TEST(DemoServerLegacyInput, ToggleToolSendsListChangedBeforeItsResult) {
  StdioChild server(MCPRT_DEMO_SERVER, {"--protocol", "legacy"});
  ASSERT_TRUE(server.started()) << server.error();
  server.call(1, "initialize",
              json{{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}});
  std::vector<json> before;
  json r = server.call(2, "tools/call", call_params("toggle_tool"), &before);
  EXPECT_EQ(first_text(r["result"]), "bonus tool added");
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0], (json{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}}));
  EXPECT_TRUE(tool_names(server.call(3, "tools/list")["result"]).count("bonus"));
}

TEST(DemoServerLegacyInput, WithoutTheProtocolFlagOnlyTheSixToolsAreListed) {
  StdioChild server(MCPRT_DEMO_SERVER, {});
  ASSERT_TRUE(server.started()) << server.error();
  json init = server.call(1, "initialize",
                          json{{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}});
  EXPECT_EQ(init["result"]["capabilities"]["tools"]["listChanged"], false);
  EXPECT_EQ(tool_names(server.call(2, "tools/list")["result"]),
            (std::set<std::string>{"echo", "add", "now", "word_count", "slow_task", "fail"}));
  json discover = server.call(3, "server/discover", modern_params());
  EXPECT_EQ(discover["error"]["code"], -32601) << discover.dump();
}

TEST(DemoServerLegacyEarly, ExitOnEarlyRequestExitsWithStatusOneOnAProbe) {
  StdioChild server(MCPRT_DEMO_SERVER, {"--protocol", "legacy", "--exit-on-early-request"});
  ASSERT_TRUE(server.started()) << server.error();
  server.request(1, "server/discover", modern_params());
  EXPECT_FALSE(server.read_message());  // EOF, no answer
  auto status = server.wait_exit();
  ASSERT_TRUE(status);
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 1);
}

TEST(DemoServerLegacyEarly, ExitOnEarlyRequestServesAClientThatInitializesFirst) {
  StdioChild server(MCPRT_DEMO_SERVER, {"--protocol", "legacy", "--exit-on-early-request"});
  ASSERT_TRUE(server.started()) << server.error();
  json init = server.call(1, "initialize",
                          json{{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}});
  ASSERT_TRUE(init.contains("result")) << init.dump();
  server.notify("notifications/initialized");
  json echo = server.call(2, "tools/call", call_params("echo", {{"message", "still here"}}));
  EXPECT_EQ(first_text(echo["result"]), "still here");
  // After initialize an unknown method is an ordinary error, not an exit.
  json discover = server.call(3, "server/discover", modern_params());
  EXPECT_EQ(discover["error"]["code"], -32601);
}

TEST(DemoServerLegacyEarly, IgnoreEarlyRequestsLeavesTheProbeUnanswered) {
  StdioChild server(MCPRT_DEMO_SERVER, {"--protocol", "legacy", "--ignore-early-requests"});
  ASSERT_TRUE(server.started()) << server.error();
  server.request("probe", "server/discover", modern_params());
  server.request(2, "initialize",
                 json{{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}});
  // The first message is the initialize answer: the probe was never answered (and the
  // server stays up).
  auto first = server.read_message();
  ASSERT_TRUE(first);
  EXPECT_EQ((*first)["id"], 2) << first->dump();
  json ping = server.call(3, "ping");
  EXPECT_TRUE(ping.contains("result"));
}

TEST(DemoServerLegacyEarly, EarlyRequestFlagsAreRefusedOutsideLegacyStdio) {
  for (auto args : {with({"--protocol", "2026", "--exit-on-early-request"}),
                    with({"--http", "0", "--ignore-early-requests"}),
                    with({"--exit-on-early-request", "--ignore-early-requests"})}) {
    StdioChild server(MCPRT_DEMO_SERVER, args);
    ASSERT_TRUE(server.started()) << server.error();
    auto status = server.wait_exit();
    ASSERT_TRUE(status);
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 2) << server.log();
  }
}

// ---- HTTP --------------------------------------------------------------------------------

// One SSE event's `data` fields, from a complete or partial body (only whole events).
std::vector<json> sse_messages(const std::string& body) {
  std::vector<json> out;
  std::size_t pos = 0;
  for (;;) {
    const auto end = body.find("\n\n", pos);
    if (end == std::string::npos) break;
    std::istringstream event(body.substr(pos, end - pos));
    for (std::string line; std::getline(event, line);) {
      if (line.rfind("data: ", 0) == 0) out.push_back(json::parse(line.substr(6), nullptr, false));
    }
    pos = end + 2;
  }
  return out;
}

json rpc(const json& id, const std::string& method, json params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

// The headers a correct 2026-07-28 client sends for `message`.
httplib::Headers modern_headers(const json& message) {
  httplib::Headers h{{"Accept", kAcceptBoth}, {"MCP-Protocol-Version", kVersion}};
  h.emplace("Mcp-Method", message.value("method", ""));
  const json& params = message.value("params", json::object());
  if (message.value("method", "") == "tools/call" && params.contains("name")) {
    h.emplace("Mcp-Name", params["name"].get<std::string>());
  }
  return h;
}

// A POST answered with an SSE stream that stays open, read on a thread of its own.
class StreamedPost {
 public:
  StreamedPost(int port, const json& body, httplib::Headers headers)
      : client_("127.0.0.1", port) {
    client_.set_read_timeout(kDeadline);
    thread_ = std::thread([this, body, headers = std::move(headers)] {
      httplib::Request req;
      req.method = "POST";
      req.path = "/mcp";
      req.headers = headers;
      req.set_header("Content-Type", "application/json");
      req.body = body.dump();
      req.response_handler = [this](const httplib::Response& r) {
        std::lock_guard<std::mutex> lock(mutex_);
        status_ = r.status;
        content_type_ = r.get_header_value("Content-Type");
        return true;
      };
      req.content_receiver = [this](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
        std::lock_guard<std::mutex> lock(mutex_);
        body_.append(data, n);
        cv_.notify_all();
        return !stop_;
      };
      client_.send(req);
      std::lock_guard<std::mutex> lock(mutex_);
      ended_ = true;
      cv_.notify_all();
    });
  }
  // Hangs up (closes the connection) if the response is still open.
  ~StreamedPost() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    client_.stop();
    thread_.join();
  }

  // Waits (bounded) until `count` whole SSE messages arrived; returns those there are.
  std::vector<json> wait_messages(std::size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, kDeadline, [&] { return ended_ || sse_messages(body_).size() >= count; });
    return sse_messages(body_);
  }
  // Waits (bounded) for the response to end; true if it did.
  bool wait_end() {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, kDeadline, [&] { return ended_; });
  }
  int status() {
    std::lock_guard<std::mutex> lock(mutex_);
    return status_;
  }
  std::string content_type() {
    std::lock_guard<std::mutex> lock(mutex_);
    return content_type_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string body_;
  std::string content_type_;
  int status_ = 0;
  bool ended_ = false;
  bool stop_ = false;
  httplib::Client client_;
  std::thread thread_;
};

class DemoServerModernHttp : public ::testing::Test {
 protected:
  DemoServerModernHttp() : server_({"--http", "0", "--protocol", "2026", "--log-requests"}) {}
  void SetUp() override {
    ASSERT_GT(server_.port(), 0) << server_.error();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_.port());
    client_->set_read_timeout(kDeadline);
    client_->set_connection_timeout(kDeadline);
  }

  httplib::Result post(const json& body, const httplib::Headers& headers) {
    return client_->Post("/mcp", headers, body.dump(), "application/json");
  }
  httplib::Result post(const json& body) { return post(body, modern_headers(body)); }

  // A tools/call with correct headers; `extra` joins params, `headers` joins the defaults.
  httplib::Result call_tool(int id, const std::string& tool, json arguments, json extra = json::object(),
                            json capabilities = json::object(), httplib::Headers headers = {}) {
    json params = modern_params(call_params(tool, std::move(arguments)), std::move(capabilities));
    for (auto& [k, v] : extra.items()) params[k] = v;
    json body = rpc(id, "tools/call", std::move(params));
    httplib::Headers h = modern_headers(body);
    for (auto& [k, v] : headers) {
      h.erase(k);
      h.emplace(k, v);
    }
    return post(body, h);
  }

  static json body_of(const httplib::Result& res) {
    json j = res ? json::parse(res->body, nullptr, false) : json();
    return j.is_object() ? j : json::object();
  }

  HttpDemoServer server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(DemoServerModernHttp, DiscoverIsAJsonAnswerWithoutASession) {
  auto res = post(rpc(1, "server/discover", modern_params()));
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("application/json"));
  EXPECT_FALSE(res->has_header("Mcp-Session-Id"));
  json r = body_of(res);
  EXPECT_EQ(r["id"], 1);
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_EQ(r["result"]["supportedVersions"], json::array({kVersion}));
  EXPECT_EQ(r["result"]["cacheScope"], "public");
  EXPECT_EQ(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcprt-demo-server");
}

TEST_F(DemoServerModernHttp, MissingMetaIs400WithInvalidParams) {
  json body = rpc(1, "tools/list", json::object());
  auto res = post(body);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["error"]["code"], -32602) << res->body;
  EXPECT_EQ(body_of(res)["id"], 1);
}

TEST_F(DemoServerModernHttp, UnsupportedVersionIs400With32022AndItsData) {
  json body = rpc(1, "tools/list", json{{"_meta", meta(json::object(), "2031-01-01")}});
  httplib::Headers h = modern_headers(body);
  h.erase("MCP-Protocol-Version");
  h.emplace("MCP-Protocol-Version", "2031-01-01");
  auto res = post(body, h);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json r = body_of(res);
  EXPECT_EQ(r["error"]["code"], -32022) << res->body;
  EXPECT_EQ(r["error"]["data"]["supported"], json::array({kVersion}));
  EXPECT_EQ(r["error"]["data"]["requested"], "2031-01-01");
}

TEST_F(DemoServerModernHttp, HeadersThatDisagreeWithTheBodyAre400With32020) {
  const json list = rpc(1, "tools/list", modern_params());
  auto expect_mismatch = [&](const json& body, httplib::Headers h, const char* what) {
    auto res = post(body, h);
    ASSERT_TRUE(res) << what;
    EXPECT_EQ(res->status, 400) << what;
    EXPECT_EQ(body_of(res)["error"]["code"], -32020) << what << ": " << res->body;
  };
  httplib::Headers no_version{{"Accept", kAcceptBoth}, {"Mcp-Method", "tools/list"}};
  expect_mismatch(list, no_version, "no MCP-Protocol-Version");
  httplib::Headers other_version{{"Accept", kAcceptBoth},
                                 {"MCP-Protocol-Version", "2025-11-25"},
                                 {"Mcp-Method", "tools/list"}};
  expect_mismatch(list, other_version, "MCP-Protocol-Version differs from _meta");
  httplib::Headers no_method{{"Accept", kAcceptBoth}, {"MCP-Protocol-Version", kVersion}};
  expect_mismatch(list, no_method, "no Mcp-Method");
  httplib::Headers wrong_method{{"Accept", kAcceptBoth},
                                {"MCP-Protocol-Version", kVersion},
                                {"Mcp-Method", "tools/call"}};
  expect_mismatch(list, wrong_method, "Mcp-Method differs");

  auto wrong_name = call_tool(2, "echo", {{"message", "x"}}, json::object(), json::object(),
                              {{"Mcp-Name", "add"}});
  ASSERT_TRUE(wrong_name);
  EXPECT_EQ(wrong_name->status, 400);
  EXPECT_EQ(body_of(wrong_name)["error"]["code"], -32020);
  // The base64 form of the right name is the right name.
  auto encoded = call_tool(3, "echo", {{"message", "x"}}, json::object(), json::object(),
                           {{"Mcp-Name", "=?base64?ZWNobw==?="}});
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded->status, 200) << encoded->body;
  EXPECT_EQ(first_text(body_of(encoded)["result"]), "x");
}

TEST_F(DemoServerModernHttp, UnknownMethodAndInitializeAre404WithMethodNotFound) {
  for (const char* method : {"logging/setLevel", "initialize", "ping"}) {
    auto res = post(rpc(1, method, modern_params()));
    ASSERT_TRUE(res) << method;
    EXPECT_EQ(res->status, 404) << method;
    EXPECT_EQ(body_of(res)["error"]["code"], -32601) << method << ": " << res->body;
  }
}

TEST_F(DemoServerModernHttp, GetAndDeleteAre405) {
  auto get = client_->Get("/mcp", httplib::Headers{{"Accept", "text/event-stream"}});
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto del = client_->Delete("/mcp", httplib::Headers{{"Mcp-Session-Id", "abc"}});
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
}

TEST_F(DemoServerModernHttp, RegionEchoChecksTheMirroredHeaderIncludingBase64) {
  auto plain = call_tool(1, "region_echo", {{"region", "eu-west"}}, json::object(), json::object(),
                         {{"Mcp-Param-Region", "eu-west"}});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 200) << plain->body;
  EXPECT_EQ(first_text(body_of(plain)["result"]), "region=eu-west");

  auto unicode = call_tool(2, "region_echo", {{"region", "Hello, 世界"}}, json::object(),
                           json::object(), {{"Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="}});
  ASSERT_TRUE(unicode);
  EXPECT_EQ(unicode->status, 200) << unicode->body;
  EXPECT_EQ(first_text(body_of(unicode)["result"]), "region=Hello, 世界");

  auto expect_mismatch = [&](const httplib::Result& res, const char* what) {
    ASSERT_TRUE(res) << what;
    EXPECT_EQ(res->status, 400) << what;
    EXPECT_EQ(body_of(res)["error"]["code"], -32020) << what << ": " << res->body;
  };
  expect_mismatch(call_tool(3, "region_echo", {{"region", "eu"}}, json::object(), json::object(),
                            {{"Mcp-Param-Region", "us"}}),
                  "different value");
  expect_mismatch(call_tool(4, "region_echo", {{"region", "eu"}}), "header missing");
  expect_mismatch(call_tool(5, "region_echo", json::object(), json::object(), json::object(),
                            {{"Mcp-Param-Region", "eu"}}),
                  "header without the argument");
  expect_mismatch(call_tool(6, "region_echo", {{"region", "Hello, 世界"}}, json::object(),
                            json::object(), {{"Mcp-Param-Region", "=?base64?SGVsbG8=?="}}),
                  "base64 of another value");
}

TEST_F(DemoServerModernHttp, ListenStreamAcknowledgesNotifiesAndIsDroppedWithoutAResult) {
  json listen = rpc("listen:1", "subscriptions/listen",
                    modern_params({{"notifications", {{"toolsListChanged", true}}}}));
  StreamedPost stream(server_.port(), listen, modern_headers(listen));
  auto first = stream.wait_messages(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(stream.status(), 200);
  EXPECT_THAT(stream.content_type(), HasSubstr("text/event-stream"));
  EXPECT_EQ(first[0]["method"], "notifications/subscriptions/acknowledged");
  EXPECT_EQ(first[0]["params"]["notifications"], (json{{"toolsListChanged", true}}));
  EXPECT_EQ(first[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:1");

  auto toggled = call_tool(2, "toggle_tool", json::object());
  ASSERT_TRUE(toggled);
  EXPECT_EQ(first_text(body_of(toggled)["result"]), "bonus tool added");
  auto two = stream.wait_messages(2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1]["method"], "notifications/tools/list_changed");
  EXPECT_EQ(two[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:1");
  // Another request (its own POST, no session) sees the changed list.
  auto listed = post(rpc(3, "tools/list", modern_params()));
  EXPECT_TRUE(tool_names(body_of(listed)["result"]).count("bonus")) << listed->body;

  auto dropped = call_tool(4, "drop_listen", json::object());
  EXPECT_EQ(first_text(body_of(dropped)["result"]), "dropped 1 listen stream(s)");
  ASSERT_TRUE(stream.wait_end());
  auto all = stream.wait_messages(3);
  EXPECT_EQ(all.size(), 2u);
  for (const auto& m : all) EXPECT_FALSE(m.contains("result")) << m.dump();
}

TEST_F(DemoServerModernHttp, AskNameRoundTripAcrossTwoPostsAndAForgedStateIsRefused) {
  auto first = call_tool(1, "ask_name", json::object(), json::object(), kElicitation);
  ASSERT_TRUE(first);
  json ir = body_of(first)["result"];
  ASSERT_EQ(ir["resultType"], "input_required") << first->body;
  EXPECT_EQ(ir["inputRequests"]["name"]["method"], "elicitation/create");
  auto done = call_tool(2, "ask_name", json::object(),
                        {{"inputResponses",
                          {{"name", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}}},
                         {"requestState", ir["requestState"]}},
                        kElicitation);
  ASSERT_TRUE(done);
  EXPECT_EQ(first_text(body_of(done)["result"]), "Hello, Ada!") << done->body;

  auto forged = call_tool(3, "ask_name", json::object(),
                          {{"inputResponses",
                            {{"name", {{"action", "accept"}, {"content", {{"name", "Eve"}}}}}}},
                           {"requestState", ir["requestState"].get<std::string>() + "x"}},
                          kElicitation);
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->status, 200);
  EXPECT_TRUE(is_error(body_of(forged)["result"])) << forged->body;
}

TEST_F(DemoServerModernHttp, LogRequestsNamesEveryRequestServedOrRefused) {
  post(rpc(1, "server/discover", modern_params()));
  post(rpc(2, "tools/list", json::object()));  // refused: no _meta
  post(rpc(3, "nope/nothing", modern_params()));
  EXPECT_TRUE(server_.wait_log("request nope/nothing"));
  const std::string log = server_.log();
  auto count = [&](const std::string& line) {
    std::size_t n = 0;
    for (auto pos = log.find(line); pos != std::string::npos; pos = log.find(line, pos + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("[mcprt-demo-server] request server/discover\n"), 1u) << log;
  EXPECT_EQ(count("[mcprt-demo-server] request tools/list\n"), 1u) << log;
  EXPECT_EQ(count("[mcprt-demo-server] request nope/nothing\n"), 1u) << log;
}

TEST_F(DemoServerModernHttp, AListenStreamWhoseClientLeftIsForgotten) {
  json listen = rpc("gone", "subscriptions/listen",
                    modern_params({{"notifications", {{"toolsListChanged", true}}}}));
  {
    StreamedPost stream(server_.port(), listen, modern_headers(listen));
    ASSERT_EQ(stream.wait_messages(1).size(), 1u);
  }  // the client hangs up
  // The server finds out when it next writes to (or checks) the stream; toggles until it
  // reports no listener left (bounded).
  bool forgotten = false;
  for (int i = 0; i < 100 && !forgotten; ++i) {
    call_tool(100 + i, "toggle_tool", json::object());
    forgotten = server_.log().find("0 listen stream(s) told") != std::string::npos;
    if (!forgotten) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(forgotten) << server_.log();
  auto dropped = call_tool(999, "drop_listen", json::object());
  EXPECT_EQ(first_text(body_of(dropped)["result"]), "dropped 0 listen stream(s)");
}

TEST(DemoServerLegacyHttpLog, LogRequestsNamesAProbeTheLegacyServerRefused) {
  HttpDemoServer server({"--http", "0", "--protocol", "legacy", "--log-requests"});
  ASSERT_GT(server.port(), 0) << server.error();
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(kDeadline);
  json discover = rpc(1, "server/discover", modern_params());
  auto res = client.Post("/mcp", modern_headers(discover), discover.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);  // MCP-Protocol-Version 2026-07-28 is not a 2025 version
  EXPECT_NE(json::parse(res->body, nullptr, false)["error"]["code"], -32022);
  EXPECT_TRUE(server.wait_log("[mcprt-demo-server] request server/discover\n")) << server.log();
}

TEST(DemoServerDualHttp, ServesASessionAndStatelessRequestsOnOneUrl) {
  HttpDemoServer server({"--http", "0", "--protocol", "dual"});
  ASSERT_GT(server.port(), 0) << server.error();
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(kDeadline);
  json discover = rpc(1, "server/discover", modern_params());
  auto d = client.Post("/mcp", modern_headers(discover), discover.dump(), "application/json");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->status, 200);
  EXPECT_EQ(json::parse(d->body)["result"]["supportedVersions"], json::array({kVersion}));

  json init = rpc(2, "initialize",
                  {{"protocolVersion", "2025-11-25"},
                   {"capabilities", json::object()},
                   {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  auto i = client.Post("/mcp", httplib::Headers{{"Accept", kAcceptBoth}}, init.dump(),
                       "application/json");
  ASSERT_TRUE(i);
  ASSERT_EQ(i->status, 200) << i->body;
  const std::string session = i->get_header_value("Mcp-Session-Id");
  ASSERT_FALSE(session.empty());
  httplib::Headers legacy{{"Accept", kAcceptBoth},
                          {"Mcp-Session-Id", session},
                          {"MCP-Protocol-Version", "2025-11-25"}};
  auto l = client.Post("/mcp", legacy, rpc(3, "tools/list", json::object()).dump(),
                       "application/json");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->status, 200);
  EXPECT_FALSE(json::parse(l->body)["result"].contains("resultType")) << l->body;

  json modern = rpc(4, "tools/list", modern_params());
  auto m = client.Post("/mcp", modern_headers(modern), modern.dump(), "application/json");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_EQ(json::parse(m->body)["result"]["resultType"], "complete") << m->body;
  EXPECT_FALSE(m->has_header("Mcp-Session-Id"));

  // Without a session, a legacy-looking request is not served statelessly.
  auto stray = client.Post("/mcp", httplib::Headers{{"Accept", kAcceptBoth}},
                           rpc(5, "tools/list", json::object()).dump(), "application/json");
  ASSERT_TRUE(stray);
  EXPECT_EQ(stray->status, 400);
  auto del_none = client.Delete("/mcp");
  ASSERT_TRUE(del_none);
  EXPECT_EQ(del_none->status, 405);
  auto del = client.Delete("/mcp", httplib::Headers{{"Mcp-Session-Id", session}});
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
}

TEST(DemoServerLegacyHttpInput, AskNameAsksOnTheCallsStreamAndFinishesOnThePostedAnswer) {
  HttpDemoServer server({"--http", "0", "--protocol", "legacy"});
  ASSERT_GT(server.port(), 0) << server.error();
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(kDeadline);
  json init = rpc(1, "initialize",
                  {{"protocolVersion", "2025-11-25"},
                   {"capabilities", {{"elicitation", json::object()}}},
                   {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  auto i = client.Post("/mcp", httplib::Headers{{"Accept", kAcceptBoth}}, init.dump(),
                       "application/json");
  ASSERT_TRUE(i);
  const std::string session = i->get_header_value("Mcp-Session-Id");
  ASSERT_FALSE(session.empty());
  const httplib::Headers h{{"Accept", kAcceptBoth}, {"Mcp-Session-Id", session}};

  StreamedPost call(server.port(), rpc(2, "tools/call", call_params("ask_name")), h);
  auto asked = call.wait_messages(1);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_THAT(call.content_type(), HasSubstr("text/event-stream"));
  EXPECT_EQ(asked[0]["method"], "elicitation/create");
  json answer{{"jsonrpc", "2.0"},
              {"id", asked[0]["id"]},
              {"result", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}};
  auto posted = client.Post("/mcp", h, answer.dump(), "application/json");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 202);
  ASSERT_TRUE(call.wait_end());
  auto all = call.wait_messages(2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1]["id"], 2);
  EXPECT_EQ(first_text(all[1]["result"]), "Hello, Ada!");
}

// ---- the third-party 2026-07-28 fixture (npm @modelcontextprotocol/server) -------------

std::string ts2026_fixture() {
  return std::string(MCPRT_SOURCE_DIR) + "/tests/fixtures/ts2026/server.mjs";
}

void expect_npm_server_package() {
  const std::string pkg =
      std::string(MCPRT_SOURCE_DIR) + "/node_modules/@modelcontextprotocol/server/package.json";
  struct stat st {};
  ASSERT_EQ(::stat(pkg.c_str(), &st), 0)
      << pkg << " is missing: install the npm dev dependencies first (scripts/bootstrap, or "
      << "`npm install` in " << MCPRT_SOURCE_DIR << ")";
}

TEST(DemoServerTs2026Fixture, StdioAnswersDiscoverListsItsToolsAndRefusesInitialize) {
  expect_npm_server_package();
  StdioChild server("node", {ts2026_fixture()});
  ASSERT_TRUE(server.started()) << server.error();
  json discover = server.call(1, "server/discover", modern_params());
  ASSERT_TRUE(discover.contains("result")) << discover.dump() << "\nstderr: " << server.log();
  EXPECT_EQ(discover["result"]["supportedVersions"], json::array({kVersion}));
  EXPECT_EQ(discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "mcprt-ts2026-fixture");

  json list = server.call(2, "tools/list", modern_params());
  ASSERT_TRUE(list.contains("result")) << list.dump();
  EXPECT_EQ(list["result"]["resultType"], "complete");
  EXPECT_EQ(tool_names(list["result"]),
            (std::set<std::string>{"greet", "sum", "ask_name", "toggle_greeting"}));

  json greet = server.call(3, "tools/call", modern_params(call_params("greet", {{"name", "Ada"}})));
  EXPECT_EQ(first_text(greet["result"]), "Hello, Ada!") << greet.dump();
  json ask = server.call(4, "tools/call", modern_params(call_params("ask_name"), kElicitation));
  EXPECT_EQ(ask["result"]["resultType"], "input_required") << ask.dump();
  EXPECT_EQ(ask["result"]["inputRequests"]["name"]["method"], "elicitation/create");

  json init = server.call(5, "initialize",
                          json{{"protocolVersion", "2025-11-25"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  ASSERT_TRUE(init.contains("error")) << init.dump();
  EXPECT_EQ(init["error"]["code"], -32022);
  EXPECT_EQ(init["error"]["data"]["supported"], json::array({kVersion}));
}

TEST(DemoServerTs2026Fixture, HttpServesDiscoverOnLoopbackOnly) {
  expect_npm_server_package();
  StdioChild server("node", {ts2026_fixture(), "--http", "0"});
  ASSERT_TRUE(server.started()) << server.error();
  static const std::regex kListening(R"(listening on http://127\.0\.0\.1:(\d+)/mcp)");
  int port = 0;
  const auto deadline = Clock::now() + kDeadline;
  while (port == 0 && Clock::now() < deadline) {
    std::smatch m;
    const std::string log = server.log();
    if (std::regex_search(log, m, kListening)) {
      port = std::stoi(m[1].str());
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // bounded by the deadline
    }
  }
  ASSERT_GT(port, 0) << "no \"listening on\" line; stderr: " << server.log();
  // The listening socket is bound to 127.0.0.1, not to every interface (/proc/net/tcp:
  // local address 0100007F, state 0A = LISTEN).
  {
    std::ifstream tcp("/proc/net/tcp");
    char wanted[16];
    std::snprintf(wanted, sizeof wanted, ":%04X", port);
    std::vector<std::string> listeners;
    for (std::string line; std::getline(tcp, line);) {
      std::istringstream fields(line);
      std::string slot, local, remote, st;
      fields >> slot >> local >> remote >> st;
      if (st == "0A" && local.size() > 5 && local.substr(local.size() - 5) == wanted) {
        listeners.push_back(local);
      }
    }
    EXPECT_EQ(listeners, (std::vector<std::string>{std::string("0100007F") + wanted}));
  }
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(kDeadline);
  json discover = rpc(1, "server/discover", modern_params());
  auto res = client.Post("/mcp", modern_headers(discover), discover.dump(), "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200) << res->body;
  json body = json::parse(res->body, nullptr, false);
  EXPECT_EQ(body["result"]["supportedVersions"], json::array({kVersion})) << res->body;
  json init = rpc(2, "initialize",
                  {{"protocolVersion", "2025-11-25"},
                   {"capabilities", json::object()},
                   {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
  auto refused = client.Post("/mcp", httplib::Headers{{"Accept", kAcceptBoth}}, init.dump(),
                             "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_EQ(json::parse(refused->body, nullptr, false)["error"]["code"], -32022) << refused->body;
}

}  // namespace
}  // namespace demo_server_modern_test
