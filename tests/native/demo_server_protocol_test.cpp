// The demo MCP server's wire behaviour, checked against the real binary over pipes with
// hand-written JSON-RPC lines — deliberately without the mcprt client, so a client bug
// cannot hide a server bug (or the other way round).
//
// Reads are bounded by a generous deadline only so that a broken server fails the test
// instead of hanging it; no assertion depends on how long anything takes. Ordering
// arguments (e.g. "a cancelled task's result would have arrived before this later one")
// rest on the server's timer queue running earlier deadlines first.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace demo_server_protocol_test {  // this file's own names in a unity batch
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A safety net against a hung server, not a performance expectation.
constexpr auto kReadDeadline = std::chrono::seconds(20);

// The demo server as a child process with its stdin and stdout on pipes; stderr goes to
// /dev/null so an unread log pipe can never stall it.
class DemoServerProcess {
 public:
  DemoServerProcess() {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      error_ = std::string("pipe: ") + std::strerror(errno);
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    char* argv[] = {const_cast<char*>(MCPRT_DEMO_SERVER), nullptr};
    const int rc = ::posix_spawn(&pid_, MCPRT_DEMO_SERVER, &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    to_child_ = in[1];
    from_child_ = out[0];
    if (rc != 0) {
      pid_ = -1;
      error_ = std::string("posix_spawn " MCPRT_DEMO_SERVER ": ") + std::strerror(rc);
    }
  }

  ~DemoServerProcess() {
    close_stdin();
    if (from_child_ >= 0) ::close(from_child_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }

  DemoServerProcess(const DemoServerProcess&) = delete;
  DemoServerProcess& operator=(const DemoServerProcess&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& error() const { return error_; }

  void send_line(const std::string& line) {
    std::string data = line + "\n";
    std::size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::write(to_child_, data.data() + off, data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      ASSERT_GT(n, 0) << "write to the demo server failed: " << std::strerror(errno);
      off += static_cast<std::size_t>(n);
    }
  }
  void send(const json& message) { send_line(message.dump()); }

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
  std::optional<json> read_message() {
    const auto deadline = Clock::now() + kReadDeadline;
    for (;;) {
      const auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        json j = json::parse(line, nullptr, false);
        if (j.is_discarded()) {
          ADD_FAILURE() << "the demo server wrote a line that is not JSON: " << line;
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
      if (rc < 0 && errno == EINTR) continue;
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

  json call(const json& id, const std::string& method, json params = nullptr) {
    request(id, method, std::move(params));
    auto r = read_response(id);
    return r ? *r : json();
  }

  void close_stdin() {
    if (to_child_ >= 0) ::close(to_child_);
    to_child_ = -1;
  }

  // Closes stdin, reads stdout to EOF (collecting what arrives) and returns the exit
  // status; nullopt if the server did not close stdout within the deadline.
  std::optional<int> finish(std::vector<json>* remaining = nullptr) {
    close_stdin();
    while (auto m = read_message()) {
      if (remaining) remaining->push_back(*m);
    }
    if (!eof_) return std::nullopt;
    int status = 0;
    if (::waitpid(pid_, &status, 0) != pid_) return std::nullopt;
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  bool eof_ = false;
  std::string error_;
};

json initialize_params(const std::string& version) {
  return json{{"protocolVersion", version},
              {"capabilities", json::object()},
              {"clientInfo", {{"name", "demo-server-protocol-test"}, {"version", "1"}}}};
}

json call_params(const std::string& tool, json arguments) {
  return json{{"name", tool}, {"arguments", std::move(arguments)}};
}

// Starts the server and completes the handshake.
class DemoServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.started()) << server_.error();
    json r = server_.call(0, "initialize", initialize_params("2025-11-25"));
    ASSERT_TRUE(r.contains("result")) << r.dump();
    server_.notify("notifications/initialized");
  }

  static std::string first_text(const json& result) {
    const json& content = result.value("content", json::array());
    if (!content.is_array() || content.empty()) return {};
    return content[0].value("text", std::string());
  }

  DemoServerProcess server_;
};

TEST(DemoServerHandshake, EchoesEverySupportedProtocolVersion) {
  for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    DemoServerProcess server;
    ASSERT_TRUE(server.started()) << server.error();
    json r = server.call(1, "initialize", initialize_params(version));
    ASSERT_TRUE(r.contains("result")) << r.dump();
    EXPECT_EQ(r["result"]["protocolVersion"], version);
  }
}

TEST(DemoServerHandshake, AnswersLatestVersionWhenClientAsksForAnUnknownOne) {
  DemoServerProcess server;
  ASSERT_TRUE(server.started()) << server.error();
  json r = server.call(1, "initialize", initialize_params("1999-01-01"));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
}

TEST(DemoServerHandshake, DescribesItselfAndItsToolsCapability) {
  DemoServerProcess server;
  ASSERT_TRUE(server.started()) << server.error();
  json r = server.call("init-1", "initialize", initialize_params("2025-11-25"));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["jsonrpc"], "2.0");
  EXPECT_EQ(r["id"], "init-1");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "mcprt-demo-server");
  EXPECT_TRUE(r["result"]["serverInfo"]["version"].is_string());
  EXPECT_TRUE(r["result"]["capabilities"]["tools"].is_object());
}

TEST(DemoServerHandshake, InitializeWithoutProtocolVersionIsInvalidParams) {
  DemoServerProcess server;
  ASSERT_TRUE(server.started()) << server.error();
  json r = server.call(1, "initialize", json{{"capabilities", json::object()}});
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32602);
}

TEST_F(DemoServerTest, NotificationsGetNoAnswer) {
  server_.notify("notifications/initialized");
  server_.notify("notifications/roots/list_changed");
  server_.request(7, "ping");
  auto next = server_.read_message();
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)["id"], 7) << "a notification was answered: " << next->dump();
  EXPECT_EQ((*next)["result"], json::object());
}

TEST_F(DemoServerTest, ListsTheSixToolsWithDescriptionsAndObjectSchemas) {
  json r = server_.call(1, "tools/list", json::object());
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& tools = r["result"]["tools"];
  ASSERT_TRUE(tools.is_array());
  std::set<std::string> names;
  for (const auto& t : tools) {
    const std::string name = t.value("name", "");
    names.insert(name);
    EXPECT_FALSE(t.value("description", "").empty()) << name;
    ASSERT_TRUE(t.contains("inputSchema")) << name;
    EXPECT_EQ(t["inputSchema"]["type"], "object") << name;
    EXPECT_TRUE(t["inputSchema"]["properties"].is_object()) << name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"echo", "add", "now", "word_count", "slow_task", "fail"}));
  EXPECT_FALSE(r["result"].contains("nextCursor"));
}

TEST_F(DemoServerTest, AddSchemaRequiresTwoNumbers) {
  json r = server_.call(1, "tools/list");
  ASSERT_TRUE(r.contains("result")) << r.dump();
  for (const auto& t : r["result"]["tools"]) {
    if (t["name"] != "add") continue;
    EXPECT_EQ(t["inputSchema"]["properties"]["a"]["type"], "number");
    EXPECT_EQ(t["inputSchema"]["properties"]["b"]["type"], "number");
    EXPECT_EQ(t["inputSchema"]["required"], json::array({"a", "b"}));
    return;
  }
  FAIL() << "no add tool in " << r.dump();
}

TEST_F(DemoServerTest, AddReturnsTheSumAsTextAndStructuredContent) {
  json r = server_.call(2, "tools/call", call_params("add", {{"a", 2}, {"b", 40}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(first_text(r["result"]), "42");
  EXPECT_EQ(r["result"]["structuredContent"]["sum"], 42);
  EXPECT_FALSE(r["result"].value("isError", false));
}

TEST_F(DemoServerTest, AddHandlesFractionsAndNegativeNumbers) {
  json r = server_.call(2, "tools/call", call_params("add", {{"a", -1.5}, {"b", 0.25}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_DOUBLE_EQ(r["result"]["structuredContent"]["sum"].get<double>(), -1.25);
}

TEST_F(DemoServerTest, AddWithANonNumberIsAToolError) {
  json r = server_.call(2, "tools/call", call_params("add", {{"a", "two"}, {"b", 2}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_TRUE(r["result"].value("isError", false));
  EXPECT_THAT(first_text(r["result"]), ::testing::HasSubstr("\"a\" must be a number"));
}

TEST_F(DemoServerTest, EchoReturnsTheMessage) {
  json r = server_.call(3, "tools/call", call_params("echo", {{"message", "héllo, wörld"}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(first_text(r["result"]), "héllo, wörld");
}

TEST_F(DemoServerTest, WordCountCountsWordsLinesAndCodePoints) {
  json r = server_.call(4, "tools/call",
                        call_params("word_count", {{"text", "one two\nthree  é\n"}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["structuredContent"],
            (json{{"words", 4}, {"lines", 2}, {"chars", 17}}));
}

TEST_F(DemoServerTest, NowReturnsUtcIso8601) {
  json r = server_.call(5, "tools/call", call_params("now", json::object()));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_TRUE(std::regex_match(first_text(r["result"]),
                               std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z)")))
      << first_text(r["result"]);
}

TEST_F(DemoServerTest, FailReturnsIsErrorWithTheMessage) {
  json r = server_.call(6, "tools/call", call_params("fail", {{"message", "boom"}}));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_EQ(first_text(r["result"]), "boom");
}

TEST_F(DemoServerTest, UnknownToolIsInvalidParams) {
  json r = server_.call(8, "tools/call", call_params("no_such_tool", json::object()));
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32602);
  EXPECT_THAT(r["error"]["message"].get<std::string>(), ::testing::HasSubstr("no_such_tool"));
}

TEST_F(DemoServerTest, ToolsCallWithoutANameIsInvalidParams) {
  json r = server_.call(8, "tools/call", json{{"arguments", json::object()}});
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32602);
}

TEST_F(DemoServerTest, UnknownMethodIsMethodNotFound) {
  json r = server_.call(9, "logging/setLevel");
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["error"]["code"], -32601);
}

TEST_F(DemoServerTest, BadJsonIsAParseErrorWithNullIdAndTheServerStaysUp) {
  server_.send_line("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":");
  auto m = server_.read_message();
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["error"]["code"], -32700);
  EXPECT_TRUE((*m)["id"].is_null());
  json pong = server_.call(11, "ping");
  EXPECT_EQ(pong["result"], json::object()) << pong.dump();
}

TEST_F(DemoServerTest, SlowTaskReportsProgressForEachStepThenTheResult) {
  json params = call_params("slow_task", {{"steps", 3}, {"interval_ms", 0}});
  params["_meta"] = {{"progressToken", "tok-1"}};
  server_.request(20, "tools/call", params);
  std::vector<json> before;
  auto r = server_.read_response(20, &before);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->contains("result")) << r->dump();
  EXPECT_FALSE((*r)["result"].value("isError", false));
  ASSERT_EQ(before.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(before[i]["method"], "notifications/progress");
    EXPECT_EQ(before[i]["params"]["progressToken"], "tok-1");
    EXPECT_EQ(before[i]["params"]["progress"], i + 1);
    EXPECT_EQ(before[i]["params"]["total"], 3);
    EXPECT_TRUE(before[i]["params"]["message"].is_string());
  }
}

TEST_F(DemoServerTest, SlowTaskWithoutProgressTokenSendsOnlyTheResult) {
  server_.request(21, "tools/call", call_params("slow_task", {{"steps", 2}, {"interval_ms", 0}}));
  std::vector<json> before;
  auto r = server_.read_response(21, &before);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->contains("result")) << r->dump();
  EXPECT_TRUE(before.empty()) << before.size() << " unexpected message(s), first: "
                              << (before.empty() ? "" : before[0].dump());
}

TEST_F(DemoServerTest, ServesOtherRequestsWhileASlowTaskRuns) {
  // A task that would take a minute: if the server blocked on it, ping would never be
  // answered within the read deadline.
  server_.request(30, "tools/call",
                  call_params("slow_task", {{"steps", 1}, {"interval_ms", 60000}}));
  json pong = server_.call(31, "ping");
  EXPECT_EQ(pong["result"], json::object()) << pong.dump();
  json sum = server_.call(32, "tools/call", call_params("add", {{"a", 1}, {"b", 1}}));
  EXPECT_EQ(sum["result"]["structuredContent"]["sum"], 2) << sum.dump();
  server_.notify("notifications/cancelled", {{"requestId", 30}, {"reason", "test over"}});
}

TEST_F(DemoServerTest, CancelledSlowTaskStopsAndSendsNoResult) {
  json a = call_params("slow_task", {{"steps", 3}, {"interval_ms", 30}});
  a["_meta"] = {{"progressToken", 99}};
  server_.request("task-a", "tools/call", a);
  auto first = server_.read_message();
  ASSERT_TRUE(first);
  ASSERT_EQ((*first)["method"], "notifications/progress") << first->dump();
  server_.notify("notifications/cancelled", {{"requestId", "task-a"}, {"reason", "user"}});
  // Task B ends well after task A would have: had the cancel been ignored, A's result
  // would arrive before B's.
  server_.request("task-b", "tools/call",
                  call_params("slow_task", {{"steps", 1}, {"interval_ms", 500}}));
  std::vector<json> between;
  auto b = server_.read_response("task-b", &between);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->contains("result")) << b->dump();
  for (const auto& m : between) {
    EXPECT_NE(m.value("id", json()), "task-a") << "cancelled task answered: " << m.dump();
  }
  // And nothing for A afterwards either.
  std::vector<json> rest;
  auto status = server_.finish(&rest);
  ASSERT_TRUE(status);
  for (const auto& m : rest) {
    EXPECT_NE(m.value("id", json()), "task-a") << "cancelled task answered: " << m.dump();
  }
}

TEST_F(DemoServerTest, ExitsWithCodeZeroOnStdinEofEvenWithATaskRunning) {
  server_.request(40, "tools/call",
                  call_params("slow_task", {{"steps", 1}, {"interval_ms", 60000}}));
  json pong = server_.call(41, "ping");  // the task has started
  ASSERT_TRUE(pong.contains("result"));
  std::vector<json> rest;
  auto status = server_.finish(&rest);
  ASSERT_TRUE(status) << "the server did not exit after stdin closed";
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  EXPECT_TRUE(rest.empty()) << rest.front().dump();
}

}  // namespace
}  // namespace demo_server_protocol_test
