// The demo MCP server's resources, resource templates, prompts, completions and resource
// subscriptions (SPEC §15), checked against the real binary with hand-written JSON-RPC —
// over pipes (the 2025 wire and, with --protocol 2026, the 2026-07-28 wire) and with a
// plain httplib::Client (2025 sessions with their GET stream; 2026 headers) — without the
// mcprt client, so a client bug cannot hide a server bug.
//
// The ticker runs with --ticker-ms 50 so that updates come quickly; reads are bounded by
// a generous deadline only so that a broken server fails the test instead of hanging it.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_demo_server.hpp"
#include "mcprt/mcp_command.hpp"

extern char** environ;

namespace demo_server_resources_test {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::Not;
using mcprt::native::test::HttpDemoServer;

constexpr auto kDeadline = std::chrono::seconds(20);
constexpr const char* kModern = "2026-07-28";
constexpr const char* kTicker = "demo://ticker";

json modern_meta() {
  return json{{"io.modelcontextprotocol/protocolVersion", kModern},
              {"io.modelcontextprotocol/clientCapabilities", json::object()},
              {"io.modelcontextprotocol/clientInfo", {{"name", "demo-resources-test"}, {"version", "1"}}}};
}

json with_meta(json params) {
  params["_meta"] = modern_meta();
  return params;
}

json initialize_params() {
  return json{{"protocolVersion", "2025-11-25"},
              {"capabilities", json::object()},
              {"clientInfo", {{"name", "demo-resources-test"}, {"version", "1"}}}};
}

// The demo server on pipes; stderr in a temporary file (its log, for assertions).
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    char path[] = "/tmp/mcprt-demo-resources-stderr-XXXXXX";
    const int err = ::mkstemp(path);
    int in[2];
    int out[2];
    if (err < 0 || ::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      error_ = std::string("setup: ") + std::strerror(errno);
      return;
    }
    stderr_path_ = path;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(MCPRT_DEMO_SERVER)};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, MCPRT_DEMO_SERVER, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err);
    to_child_ = in[1];
    from_child_ = out[0];
    if (rc != 0) {
      pid_ = -1;
      error_ = std::string("posix_spawn: ") + std::strerror(rc);
    }
  }
  ~Child() {
    if (to_child_ >= 0) ::close(to_child_);
    if (from_child_ >= 0) ::close(from_child_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& error() const { return error_; }

  void request(const json& id, const std::string& method, json params = nullptr) {
    json m{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) m["params"] = std::move(params);
    send(m);
  }
  void notify(const std::string& method, json params) {
    send(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  void send(const json& m) {
    const std::string data = m.dump() + "\n";
    std::size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::write(to_child_, data.data() + off, data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ADD_FAILURE() << "write failed: " << std::strerror(errno);
        return;
      }
      off += static_cast<std::size_t>(n);
    }
  }

  std::optional<json> read_message() {
    const auto deadline = Clock::now() + kDeadline;
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        json j = json::parse(buffer_.substr(0, nl), nullptr, false);
        buffer_.erase(0, nl + 1);
        if (j.is_discarded()) {
          ADD_FAILURE() << "the server wrote a line that is not JSON";
          return std::nullopt;
        }
        return j;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{from_child_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::read(from_child_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }

  // Sends a request and reads until its response; other messages land in `before`.
  json call(const json& id, const std::string& method, json params = nullptr,
            std::vector<json>* before = nullptr) {
    request(id, method, std::move(params));
    while (auto m = read_message()) {
      if (m->contains("id") && (*m)["id"] == id && !m->contains("method")) return *m;
      if (before) before->push_back(*m);
    }
    return json();
  }

  // The next notification with `method` (others are skipped), or null json.
  json next_notification(const std::string& method) {
    while (auto m = read_message()) {
      if (m->value("method", "") == method && !m->contains("id")) return *m;
    }
    return json();
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
  std::string error_;
  std::string stderr_path_;
};

std::set<std::string> names_of(const json& list, const char* key) {
  std::set<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& e : list) {
    if (e.is_object() && e.contains(key) && e[key].is_string()) out.insert(e[key].get<std::string>());
  }
  return out;
}

// The text of contents[0] of a resources/read answer ("" when absent).
std::string read_text(const json& answer) {
  const json& c = answer.value("result", json::object()).value("contents", json::array());
  if (!c.is_array() || c.empty() || !c[0].is_object() || !c[0].contains("text")) return {};
  return c[0]["text"].is_string() ? c[0]["text"].get<std::string>() : std::string();
}

int error_code(const json& answer) {
  const json& e = answer.value("error", json::object());
  return e.value("code", 0);
}

json completion_values(const json& answer) {
  return answer.value("result", json::object()).value("completion", json::object()).value("values", json());
}

// ---- the 2025 wire over stdio -------------------------------------------------------------

class DemoResources2025 : public ::testing::Test {
 protected:
  DemoResources2025() : server_({"--ticker-ms", "50"}) {}
  void SetUp() override {
    ASSERT_TRUE(server_.started()) << server_.error();
    init_ = server_.call(0, "initialize", initialize_params());
    ASSERT_TRUE(init_.contains("result")) << init_.dump();
  }
  json init_;
  Child server_;
};

TEST_F(DemoResources2025, InitializeAdvertisesResourcesPromptsAndCompletions) {
  const json& caps = init_["result"]["capabilities"];
  EXPECT_EQ(caps["resources"], (json{{"subscribe", true}, {"listChanged", true}}));
  EXPECT_EQ(caps["prompts"], (json{{"listChanged", true}}));
  EXPECT_EQ(caps["completions"], json::object());
}

TEST_F(DemoResources2025, ListsThreeResourcesAndTheNotesTemplate) {
  json r = server_.call(1, "resources/list");
  ASSERT_TRUE(r.contains("result")) << r.dump();
  EXPECT_EQ(names_of(r["result"]["resources"], "uri"),
            (std::set<std::string>{"demo://readme", "demo://logo.png", kTicker}));
  EXPECT_FALSE(r["result"].contains("nextCursor"));
  for (const auto& res : r["result"]["resources"]) {
    const std::string uri = res["uri"];
    EXPECT_EQ(res["mimeType"], uri == "demo://readme"     ? "text/markdown"
                               : uri == "demo://logo.png" ? "image/png"
                                                          : "text/plain")
        << uri;
  }
  json t = server_.call(2, "resources/templates/list");
  ASSERT_TRUE(t.contains("result")) << t.dump();
  ASSERT_EQ(t["result"]["resourceTemplates"].size(), 1u);
  EXPECT_EQ(t["result"]["resourceTemplates"][0]["uriTemplate"], "demo://notes/{name}");
  EXPECT_EQ(t["result"]["resourceTemplates"][0]["mimeType"], "text/plain");
}

TEST_F(DemoResources2025, AnUnknownCursorIsInvalidParams) {
  EXPECT_EQ(error_code(server_.call(1, "resources/list", {{"cursor", "x"}})), -32602);
  EXPECT_EQ(error_code(server_.call(2, "prompts/list", {{"cursor", "x"}})), -32602);
}

TEST_F(DemoResources2025, ReadsTheReadmeAsMarkdownText) {
  json r = server_.call(1, "resources/read", {{"uri", "demo://readme"}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& c = r["result"]["contents"][0];
  EXPECT_EQ(c["uri"], "demo://readme");
  EXPECT_EQ(c["mimeType"], "text/markdown");
  EXPECT_THAT(read_text(r), HasSubstr("# mcprt demo server"));
}

TEST_F(DemoResources2025, ReadsTheLogoAsAPngBlobOfTheListedSize) {
  json list = server_.call(1, "resources/list");
  json size;
  for (const auto& res : list["result"]["resources"]) {
    if (res["uri"] == "demo://logo.png") size = res["size"];
  }
  json r = server_.call(2, "resources/read", {{"uri", "demo://logo.png"}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& c = r["result"]["contents"][0];
  EXPECT_EQ(c["mimeType"], "image/png");
  EXPECT_FALSE(c.contains("text"));
  ASSERT_TRUE(c["blob"].is_string());
  auto bytes = mcprt::decode_base64(c["blob"].get<std::string>());
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(json(bytes->size()), size);
}

TEST_F(DemoResources2025, ReadsTheThreeNotesAndRefusesOthersWithResourceNotFound) {
  int id = 1;
  for (const char* name : {"alpha", "beta", "gamma"}) {
    json r = server_.call(id++, "resources/read", {{"uri", std::string("demo://notes/") + name}});
    EXPECT_EQ(read_text(r).rfind(std::string("Note ") + name + ": ", 0), 0u) << r.dump();
  }
  json missing = server_.call(id++, "resources/read", {{"uri", "demo://notes/delta"}});
  EXPECT_EQ(error_code(missing), -32002) << missing.dump();
  EXPECT_EQ(missing["error"]["data"]["uri"], "demo://notes/delta");
  EXPECT_EQ(error_code(server_.call(id++, "resources/read", {{"uri", "file:///etc/passwd"}})), -32002);
  EXPECT_EQ(error_code(server_.call(id++, "resources/read", {{"uri", 7}})), -32602);
}

TEST_F(DemoResources2025, ListsGreetAndSummarizeWithTheirArguments) {
  json r = server_.call(1, "prompts/list");
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& prompts = r["result"]["prompts"];
  EXPECT_EQ(names_of(prompts, "name"), (std::set<std::string>{"greet", "summarize"}));
  for (const auto& p : prompts) {
    if (p["name"] == "greet") {
      EXPECT_EQ(p["arguments"][0], (json{{"name", "name"}, {"description", "Who to greet."}, {"required", true}}));
      EXPECT_EQ(p["arguments"][1]["name"], "style");
      EXPECT_EQ(p["arguments"][1]["required"], false);
    } else {
      EXPECT_EQ(p["arguments"][0]["name"], "uri");
      EXPECT_EQ(p["arguments"][0]["required"], true);
    }
  }
}

TEST_F(DemoResources2025, GreetBuildsOneUserMessageFromNameAndStyle) {
  json r = server_.call(1, "prompts/get", {{"name", "greet"}, {"arguments", {{"name", "Ada"}, {"style", "pirate"}}}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& messages = r["result"]["messages"];
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0]["role"], "user");
  EXPECT_EQ(messages[0]["content"]["type"], "text");
  EXPECT_EQ(messages[0]["content"]["text"], "Please greet Ada the way a pirate would.");
  json plain = server_.call(2, "prompts/get", {{"name", "greet"}, {"arguments", {{"name", "Bo"}}}});
  EXPECT_EQ(plain["result"]["messages"][0]["content"]["text"], "Please greet Bo.");
}

TEST_F(DemoResources2025, PromptArgumentErrorsAreInvalidParams) {
  EXPECT_EQ(error_code(server_.call(1, "prompts/get", {{"name", "greet"}})), -32602);
  EXPECT_EQ(error_code(server_.call(2, "prompts/get", {{"name", "greet"}, {"arguments", {{"name", 3}}}})), -32602);
  json style = server_.call(3, "prompts/get", {{"name", "greet"}, {"arguments", {{"name", "A"}, {"style", "loud"}}}});
  EXPECT_EQ(error_code(style), -32602);
  EXPECT_THAT(style["error"]["message"].get<std::string>(), HasSubstr("formal, casual or pirate"));
  EXPECT_EQ(error_code(server_.call(4, "prompts/get", {{"name", "nope"}})), -32602);
  EXPECT_EQ(error_code(server_.call(5, "prompts/get", {{"name", "summarize"}, {"arguments", {{"uri", "demo://x"}}}})),
            -32602);
}

TEST_F(DemoResources2025, SummarizeEmbedsTheResourceAsAResourceBlock) {
  json r = server_.call(1, "prompts/get", {{"name", "summarize"}, {"arguments", {{"uri", "demo://notes/beta"}}}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& messages = r["result"]["messages"];
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_THAT(messages[0]["content"]["text"].get<std::string>(), HasSubstr("demo://notes/beta"));
  const json& block = messages[1]["content"];
  EXPECT_EQ(block["type"], "resource");
  EXPECT_EQ(block["resource"]["uri"], "demo://notes/beta");
  EXPECT_EQ(block["resource"]["text"].get<std::string>().rfind("Note beta: ", 0), 0u);
}

TEST_F(DemoResources2025, CompletesPromptArgumentsAndTheTemplateByPrefix) {
  auto complete = [&](int id, json ref, const std::string& arg, const std::string& value) {
    return server_.call(id, "completion/complete",
                        {{"ref", std::move(ref)}, {"argument", {{"name", arg}, {"value", value}}}});
  };
  const json greet{{"type", "ref/prompt"}, {"name", "greet"}};
  json all = complete(1, greet, "style", "");
  EXPECT_EQ(completion_values(all), (json{"formal", "casual", "pirate"}));
  EXPECT_EQ(all["result"]["completion"]["total"], 3);
  EXPECT_EQ(all["result"]["completion"]["hasMore"], false);
  EXPECT_EQ(completion_values(complete(2, greet, "style", "p")), (json{"pirate"}));
  EXPECT_EQ(completion_values(complete(3, greet, "style", "x")), json::array());
  EXPECT_EQ(completion_values(complete(4, {{"type", "ref/prompt"}, {"name", "summarize"}}, "uri", "demo://notes/")),
            (json{"demo://notes/alpha", "demo://notes/beta", "demo://notes/gamma"}));
  EXPECT_EQ(completion_values(complete(5, {{"type", "ref/resource"}, {"uri", "demo://notes/{name}"}}, "name", "g")),
            (json{"gamma"}));
  EXPECT_EQ(error_code(complete(6, {{"type", "ref/prompt"}, {"name", "nope"}}, "x", "")), -32602);
  EXPECT_EQ(error_code(complete(7, {{"type", "ref/resource"}, {"uri", "demo://other/{x}"}}, "x", "")), -32602);
}

TEST_F(DemoResources2025, SubscribedTickerSendsUpdatesAndAdvances) {
  const std::string before = read_text(server_.call(1, "resources/read", {{"uri", kTicker}}));
  json sub = server_.call(2, "resources/subscribe", {{"uri", kTicker}});
  ASSERT_EQ(sub["result"], json::object()) << sub.dump();
  json update = server_.next_notification("notifications/resources/updated");
  ASSERT_TRUE(update.is_object()) << "no update arrived";
  EXPECT_EQ(update["params"]["uri"], kTicker);
  const std::string after = read_text(server_.call(3, "resources/read", {{"uri", kTicker}}));
  EXPECT_EQ(before, "tick 0");
  EXPECT_NE(after, before);
  EXPECT_EQ(after.rfind("tick ", 0), 0u);
}

TEST_F(DemoResources2025, UnsubscribingTheLastSubscriberStopsTheTicker) {
  ASSERT_EQ(server_.call(1, "resources/subscribe", {{"uri", kTicker}})["result"], json::object());
  ASSERT_TRUE(server_.next_notification("notifications/resources/updated").is_object());
  json unsub = server_.call(2, "resources/unsubscribe", {{"uri", kTicker}});
  EXPECT_EQ(unsub["result"], json::object()) << unsub.dump();
  // Logged before the answer was written.
  EXPECT_THAT(server_.log(), HasSubstr("ticker stopped: nobody is subscribed"));
}

TEST_F(DemoResources2025, SubscribingAnUnknownResourceIsResourceNotFound) {
  json r = server_.call(1, "resources/subscribe", {{"uri", "demo://nothing"}});
  EXPECT_EQ(error_code(r), -32002) << r.dump();
  EXPECT_EQ(error_code(server_.call(2, "resources/unsubscribe", {{"uri", "demo://nothing"}})), -32002);
  EXPECT_THAT(server_.log(), Not(HasSubstr("ticker started")));
}

TEST_F(DemoResources2025, SubscribingAResourceThatNeverChangesStartsNoTicker) {
  EXPECT_EQ(server_.call(1, "resources/subscribe", {{"uri", "demo://readme"}})["result"], json::object());
  EXPECT_THAT(server_.log(), Not(HasSubstr("ticker started")));
}

// ---- the 2026-07-28 wire over stdio -------------------------------------------------------

class DemoResources2026 : public ::testing::Test {
 protected:
  DemoResources2026() : server_({"--protocol", "2026", "--ticker-ms", "50"}) {}
  void SetUp() override { ASSERT_TRUE(server_.started()) << server_.error(); }
  Child server_;
};

TEST_F(DemoResources2026, DiscoverAdvertisesResourcesPromptsAndCompletions) {
  json r = server_.call(1, "server/discover", with_meta(json::object()));
  ASSERT_TRUE(r.contains("result")) << r.dump();
  const json& caps = r["result"]["capabilities"];
  EXPECT_EQ(caps["resources"]["subscribe"], true);
  EXPECT_EQ(caps["prompts"]["listChanged"], true);
  EXPECT_TRUE(caps["completions"].is_object());
}

TEST_F(DemoResources2026, ServesTheCatalogMethodsWithResultTypeComplete) {
  json list = server_.call(1, "resources/list", with_meta(json::object()));
  EXPECT_EQ(list["result"]["resultType"], "complete");
  EXPECT_EQ(list["result"]["resources"].size(), 3u);
  json templates = server_.call(2, "resources/templates/list", with_meta(json::object()));
  EXPECT_EQ(templates["result"]["resourceTemplates"].size(), 1u);
  json read = server_.call(3, "resources/read", with_meta({{"uri", "demo://notes/gamma"}}));
  EXPECT_EQ(read["result"]["resultType"], "complete");
  EXPECT_EQ(read_text(read).rfind("Note gamma: ", 0), 0u);
  json prompt = server_.call(4, "prompts/get", with_meta({{"name", "greet"}, {"arguments", {{"name", "Cy"}, {"style", "formal"}}}}));
  EXPECT_EQ(prompt["result"]["messages"][0]["content"]["text"], "Please write a formal greeting for Cy.");
  json done = server_.call(5, "completion/complete",
                           with_meta({{"ref", {{"type", "ref/prompt"}, {"name", "greet"}}},
                                      {"argument", {{"name", "style"}, {"value", "c"}}}}));
  EXPECT_EQ(completion_values(done), (json{"casual"}));
  EXPECT_EQ(error_code(server_.call(6, "resources/read", with_meta({{"uri", "demo://none"}}))), -32002);
}

TEST_F(DemoResources2026, ResourcesSubscribeIsNotAMethodOfThisWire) {
  EXPECT_EQ(error_code(server_.call(1, "resources/subscribe", with_meta({{"uri", kTicker}}))), -32601);
}

TEST_F(DemoResources2026, ListenSubscribesKnownResourcesAndCarriesTheirUpdates) {
  const json wanted{{"resourcesListChanged", true},
                    {"resourceSubscriptions", json::array({kTicker, "demo://bogus", kTicker})}};
  server_.request("listen:1", "subscriptions/listen", with_meta(json{{"notifications", wanted}}));
  json ack = server_.next_notification("notifications/subscriptions/acknowledged");
  ASSERT_TRUE(ack.is_object());
  // The lists never change here: only the known resource is acknowledged.
  EXPECT_EQ(ack["params"]["notifications"], (json{{"resourceSubscriptions", json::array({kTicker})}}));
  json update = server_.next_notification("notifications/resources/updated");
  ASSERT_TRUE(update.is_object()) << "no update arrived on the listen stream";
  EXPECT_EQ(update["params"]["uri"], kTicker);
  EXPECT_EQ(update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen:1");
}

TEST_F(DemoResources2026, CancellingTheListenEndsItsResourceSubscriptions) {
  const json wanted{{"resourceSubscriptions", json::array({kTicker})}};
  server_.request("listen:1", "subscriptions/listen", with_meta(json{{"notifications", wanted}}));
  ASSERT_TRUE(server_.next_notification("notifications/resources/updated").is_object());
  EXPECT_THAT(server_.log(), Not(HasSubstr("ticker stopped")));
  server_.notify("notifications/cancelled", {{"requestId", "listen:1"}});
  // Messages are handled in order: once this answer is here, the cancel was handled.
  ASSERT_TRUE(server_.call(1, "resources/list", with_meta(json::object())).contains("result"));
  EXPECT_THAT(server_.log(), HasSubstr("ticker stopped: nobody is subscribed"));
}

// ---- HTTP ---------------------------------------------------------------------------------

// An open HTTP response (a GET stream) read on a thread of its own.
class OpenStream {
 public:
  OpenStream(int port, httplib::Headers headers) : client_("127.0.0.1", port) {
    client_.set_read_timeout(kDeadline);
    thread_ = std::thread([this, headers = std::move(headers)] {
      httplib::Request req;
      req.method = "GET";
      req.path = "/mcp";
      req.headers = headers;
      req.response_handler = [this](const httplib::Response& r) {
        std::lock_guard<std::mutex> lock(mutex_);
        status_ = r.status;
        cv_.notify_all();
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
  ~OpenStream() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    client_.stop();
    thread_.join();
  }
  OpenStream(const OpenStream&) = delete;
  OpenStream& operator=(const OpenStream&) = delete;

  // Waits (bounded) for the response head; its status (0 = none).
  int wait_status() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, kDeadline, [&] { return ended_ || status_ != 0; });
    return status_;
  }
  // Waits (bounded) until `count` SSE data messages arrived; returns those there are.
  std::vector<json> wait_messages(std::size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_for(lock, kDeadline, [&] { return ended_ || messages_locked().size() >= count; });
    return messages_locked();
  }
  std::vector<json> messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_locked();
  }

 private:
  std::vector<json> messages_locked() const {
    std::vector<json> out;
    std::istringstream in(body_);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("data: ", 0) == 0) out.push_back(json::parse(line.substr(6), nullptr, false));
    }
    return out;
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string body_;
  int status_ = 0;
  bool ended_ = false;
  bool stop_ = false;
  httplib::Client client_;
  std::thread thread_;
};

json rpc(const json& id, const std::string& method, json params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

// The JSON-RPC answer of a POST (a JSON body, or the last SSE data message).
json answer_of(const httplib::Result& res) {
  if (!res) return json();
  json j = json::parse(res->body, nullptr, false);
  if (!j.is_discarded()) return j;
  json last;
  std::istringstream in(res->body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: ", 0) == 0) last = json::parse(line.substr(6), nullptr, false);
  }
  return last;
}

class DemoResourcesHttp2025 : public ::testing::Test {
 protected:
  DemoResourcesHttp2025() : server_({"--http", "0", "--ticker-ms", "50"}) {}
  void SetUp() override { ASSERT_GT(server_.port(), 0) << server_.error(); }

  // A new session: its id.
  std::string open_session() {
    httplib::Client c("127.0.0.1", server_.port());
    c.set_read_timeout(kDeadline);
    auto res = c.Post("/mcp", {{"Accept", "application/json, text/event-stream"}},
                      rpc(0, "initialize", initialize_params()).dump(), "application/json");
    if (!res || res->status != 200) return {};
    const std::string id = res->get_header_value("Mcp-Session-Id");
    c.Post("/mcp", session_headers(id),
           json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump(), "application/json");
    return id;
  }
  static httplib::Headers session_headers(const std::string& session) {
    return {{"Accept", "application/json, text/event-stream"},
            {"Mcp-Session-Id", session},
            {"MCP-Protocol-Version", "2025-11-25"}};
  }
  json post(const std::string& session, const json& body) {
    httplib::Client c("127.0.0.1", server_.port());
    c.set_read_timeout(kDeadline);
    return answer_of(c.Post("/mcp", session_headers(session), body.dump(), "application/json"));
  }

  HttpDemoServer server_;
};

TEST_F(DemoResourcesHttp2025, UpdatesGoToTheSubscribersGetStreamOnly) {
  const std::string a = open_session();
  const std::string b = open_session();
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  OpenStream stream_a(server_.port(), session_headers(a));
  OpenStream stream_b(server_.port(), session_headers(b));
  ASSERT_EQ(stream_a.wait_status(), 200);
  ASSERT_EQ(stream_b.wait_status(), 200);
  json sub = post(a, rpc(1, "resources/subscribe", {{"uri", kTicker}}));
  ASSERT_EQ(sub["result"], json::object()) << sub.dump();
  std::vector<json> got = stream_a.wait_messages(2);
  ASSERT_GE(got.size(), 2u);
  for (const auto& m : got) {
    EXPECT_EQ(m["method"], "notifications/resources/updated");
    EXPECT_EQ(m["params"]["uri"], kTicker);
  }
  // Both streams are served by the same loop: a broadcast would have reached b by now.
  EXPECT_TRUE(stream_b.messages().empty());
}

TEST_F(DemoResourcesHttp2025, ServesReadsPromptsAndCompletionsInASession) {
  const std::string s = open_session();
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(read_text(post(s, rpc(1, "resources/read", {{"uri", "demo://notes/alpha"}}))).rfind("Note alpha: ", 0), 0u);
  json prompt = post(s, rpc(2, "prompts/get", {{"name", "greet"}, {"arguments", {{"name", "Di"}, {"style", "casual"}}}}));
  EXPECT_EQ(prompt["result"]["messages"][0]["content"]["text"], "Please greet Di casually, like an old friend.");
  json done = post(s, rpc(3, "completion/complete",
                          {{"ref", {{"type", "ref/resource"}, {"uri", "demo://notes/{name}"}}},
                           {"argument", {{"name", "name"}, {"value", "a"}}}}));
  EXPECT_EQ(completion_values(done), (json{"alpha"}));
}

TEST(DemoResourcesHttp2026, PromptsGetAndResourcesReadNeedAMatchingMcpName) {
  HttpDemoServer server({"--http", "0", "--protocol", "2026"});
  ASSERT_GT(server.port(), 0) << server.error();
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(kDeadline);
  auto send = [&](const json& body, const std::string& name) {
    httplib::Headers h{{"Accept", "application/json, text/event-stream"},
                       {"MCP-Protocol-Version", kModern},
                       {"Mcp-Method", body["method"].get<std::string>()}};
    if (!name.empty()) h.emplace("Mcp-Name", name);
    return c.Post("/mcp", h, body.dump(), "application/json");
  };
  const json get = rpc(1, "prompts/get", with_meta({{"name", "greet"}, {"arguments", {{"name", "Ed"}}}}));
  auto ok = send(get, "greet");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(answer_of(ok)["result"]["messages"][0]["content"]["text"], "Please greet Ed.");
  auto wrong = send(get, "summarize");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 400);
  EXPECT_EQ(error_code(answer_of(wrong)), -32020);
  const json read = rpc(2, "resources/read", with_meta({{"uri", "demo://readme"}}));
  auto read_ok = send(read, "demo://readme");
  ASSERT_TRUE(read_ok);
  EXPECT_THAT(read_text(answer_of(read_ok)), HasSubstr("# mcprt demo server"));
  auto read_missing = send(read, "");
  ASSERT_TRUE(read_missing);
  EXPECT_EQ(read_missing->status, 400);
}

}  // namespace
}  // namespace demo_server_resources_test
