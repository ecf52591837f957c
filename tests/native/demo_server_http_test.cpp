// The demo MCP server's Streamable HTTP front end (`--http 0`), checked against the real
// binary: first with a plain httplib::Client and hand-written JSON-RPC (so a client bug
// cannot hide a server bug), then with the whole mcprt client stack (make_http_transport
// + ClientSession over NativeHttpClient).
//
// Waits are bounded by generous deadlines only so that a broken server fails the test
// instead of hanging it; no assertion depends on how long anything takes.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "jsonrpc/raw_json.hpp"
#include "http_demo_server.hpp"
#include "mcprt/client.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/http_client.hpp"
#include "native_test_support.hpp"

extern char** environ;

namespace demo_server_http_test {  // this file's own names in a unity batch
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using mcprt::native::test::HttpDemoServer;

// A safety net against a hung server, not a performance expectation.
constexpr auto kDeadline = std::chrono::seconds(20);
constexpr const char* kAcceptBoth = "application/json, text/event-stream";

json initialize_message(int id = 1) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", "2025-11-25"},
                {"capabilities", json::object()},
                {"clientInfo", {{"name", "demo-server-http-test"}, {"version", "1"}}}}}};
}

json request(int id, const std::string& method, json params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json tool_call(int id, const std::string& name, json args, json meta = nullptr) {
  json params{{"name", name}, {"arguments", std::move(args)}};
  if (!meta.is_null()) params["_meta"] = std::move(meta);
  return request(id, "tools/call", std::move(params));
}

// One SSE event's `id` and `data` fields.
struct SseEvent {
  std::string event;
  std::string id;
  json data;
};

// Splits a complete SSE body into events (the server writes `\n` line ends only).
std::vector<SseEvent> parse_sse(const std::string& body) {
  std::vector<SseEvent> events;
  std::size_t pos = 0;
  while (pos < body.size()) {
    auto end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    SseEvent e;
    std::size_t line_start = pos;
    while (line_start < end) {
      auto nl = body.find('\n', line_start);
      if (nl == std::string::npos || nl > end) nl = end;
      const std::string line = body.substr(line_start, nl - line_start);
      if (line.rfind("data: ", 0) == 0) e.data = json::parse(line.substr(6), nullptr, false);
      if (line.rfind("id: ", 0) == 0) e.id = line.substr(4);
      if (line.rfind("event: ", 0) == 0) e.event = line.substr(7);
      line_start = nl + 1;
    }
    events.push_back(std::move(e));
    pos = end + 2;
  }
  return events;
}

class DemoServerHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GT(server_.port(), 0) << server_.error();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_.port());
    client_->set_read_timeout(kDeadline);
    client_->set_connection_timeout(kDeadline);
  }

  httplib::Headers mcp_headers(const std::string& session) const {
    httplib::Headers h{{"Accept", kAcceptBoth}};
    if (!session.empty()) h.emplace("Mcp-Session-Id", session);
    return h;
  }

  httplib::Result post(const json& body, const std::string& session) {
    return client_->Post("/mcp", mcp_headers(session), body.dump(), "application/json");
  }

  // initialize + notifications/initialized; returns the session id.
  std::string open_session() {
    auto res = post(initialize_message(), "");
    if (!res || res->status != 200) return {};
    const std::string session = res->get_header_value("Mcp-Session-Id");
    auto note = post(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, session);
    EXPECT_TRUE(note);
    if (note) {
      EXPECT_EQ(note->status, 202);
    }
    return session;
  }

  // POSTs and collects the body through a content receiver (for SSE answers). `on_chunk`
  // sees the body so far after each chunk.
  std::optional<std::string> post_streamed(const json& body, const std::string& session,
                                           std::string* content_type,
                                           const std::function<void(const std::string&)>& on_chunk = {}) {
    httplib::Request req;
    req.method = "POST";
    req.path = "/mcp";
    req.headers = mcp_headers(session);
    req.set_header("Content-Type", "application/json");
    req.body = body.dump();
    std::string received;
    req.response_handler = [&](const httplib::Response& r) {
      if (content_type) *content_type = r.get_header_value("Content-Type");
      return true;
    };
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      received.append(data, n);
      if (on_chunk) on_chunk(received);
      return true;
    };
    auto res = client_->send(req);
    if (!res) return std::nullopt;
    return received;
  }

  HttpDemoServer server_;
  std::unique_ptr<httplib::Client> client_;
};

void expect_cors(const httplib::Response& res) {
  EXPECT_EQ(res.get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_THAT(res.get_header_value("Access-Control-Expose-Headers"), HasSubstr("mcp-session-id"));
  const std::string allow = res.get_header_value("Access-Control-Allow-Headers");
  for (const char* h : {"content-type", "accept", "authorization", "mcp-session-id",
                        "mcp-protocol-version", "last-event-id"}) {
    EXPECT_THAT(allow, HasSubstr(h));
  }
  EXPECT_EQ(res.get_header_value("Access-Control-Allow-Methods"), "GET, POST, DELETE, OPTIONS");
}

TEST_F(DemoServerHttp, InitializeAnswersJsonWithASessionIdAndCorsHeaders) {
  auto res = post(initialize_message(), "");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("application/json"));
  const std::string session = res->get_header_value("Mcp-Session-Id");
  EXPECT_TRUE(std::regex_match(session, std::regex("[0-9a-f]{16,}"))) << session;
  expect_cors(*res);
  const json body = json::parse(res->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << res->body;
  EXPECT_EQ(body["id"], 1);
  EXPECT_EQ(body["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(body["result"]["serverInfo"]["name"], "mcprt-demo-server");
}

TEST_F(DemoServerHttp, EachInitializeCreatesItsOwnSession) {
  auto a = post(initialize_message(), "");
  auto b = post(initialize_message(), "");
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->get_header_value("Mcp-Session-Id"), b->get_header_value("Mcp-Session-Id"));
}

TEST_F(DemoServerHttp, ToolsListHasTheSixDemoTools) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  auto res = post(request(2, "tools/list"), session);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json body = json::parse(res->body, nullptr, false);
  ASSERT_TRUE(body.is_object() && body["result"]["tools"].is_array()) << res->body;
  std::vector<std::string> names;
  for (const auto& t : body["result"]["tools"]) names.push_back(t.value("name", ""));
  EXPECT_THAT(names,
              UnorderedElementsAre("echo", "add", "now", "word_count", "slow_task", "fail"));
}

TEST_F(DemoServerHttp, AddAnswersTheSumAsJson) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  auto res = post(tool_call(3, "add", {{"a", 2}, {"b", 40}}), session);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("application/json"));
  const json body = json::parse(res->body, nullptr, false);
  EXPECT_EQ(body["id"], 3);
  EXPECT_EQ(body["result"]["structuredContent"]["sum"], 42);
}

TEST_F(DemoServerHttp, BatchIsAnsweredWithAnArrayOfResponses) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  auto res = post(json::array({request(4, "ping"), tool_call(5, "add", {{"a", 1}, {"b", 1}})}),
                  session);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json body = json::parse(res->body, nullptr, false);
  ASSERT_TRUE(body.is_array()) << res->body;
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]["id"], 4);
  EXPECT_EQ(body[1]["result"]["structuredContent"]["sum"], 2);
}

TEST_F(DemoServerHttp, SlowTaskWithProgressTokenStreamsProgressEventsThenTheResult) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  std::string content_type;
  auto body = post_streamed(
      tool_call(6, "slow_task", {{"steps", 3}, {"interval_ms", 1}}, {{"progressToken", "tok"}}),
      session, &content_type);
  ASSERT_TRUE(body);
  EXPECT_THAT(content_type, HasSubstr("text/event-stream"));
  const auto events = parse_sse(*body);
  ASSERT_EQ(events.size(), 4u) << *body;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(events[i].event, "message");
    EXPECT_EQ(events[i].id, std::to_string(i + 1));
    EXPECT_EQ(events[i].data["method"], "notifications/progress");
    EXPECT_EQ(events[i].data["params"]["progressToken"], "tok");
    EXPECT_EQ(events[i].data["params"]["progress"], i + 1);
    EXPECT_EQ(events[i].data["params"]["total"], 3);
  }
  EXPECT_EQ(events[3].id, "4");
  EXPECT_EQ(events[3].data["id"], 6);
  EXPECT_EQ(events[3].data["result"]["structuredContent"]["steps"], 3);
}

TEST_F(DemoServerHttp, CancelledSlowTaskEndsItsStreamWithoutAResult) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  // A second connection sends the cancellation as soon as the first progress arrived.
  httplib::Client other("127.0.0.1", server_.port());
  other.set_read_timeout(kDeadline);
  std::optional<int> cancel_status;
  auto body = post_streamed(
      tool_call(7, "slow_task", {{"steps", 1000}, {"interval_ms", 20}}, {{"progressToken", 7}}),
      session, nullptr, [&](const std::string& so_far) {
        if (cancel_status || so_far.find("\n\n") == std::string::npos) return;
        auto r = other.Post(
            "/mcp", mcp_headers(session),
            json{{"jsonrpc", "2.0"},
                 {"method", "notifications/cancelled"},
                 {"params", {{"requestId", 7}, {"reason", "test"}}}}
                .dump(),
            "application/json");
        cancel_status = r ? r->status : -1;
      });
  ASSERT_TRUE(body);
  EXPECT_EQ(cancel_status, 202);
  const auto events = parse_sse(*body);
  ASSERT_FALSE(events.empty());
  for (const auto& e : events) {
    EXPECT_EQ(e.data["method"], "notifications/progress") << "a result after cancellation: "
                                                          << e.data.dump();
  }
  // The task really stopped: far fewer steps than 1000 were reported.
  EXPECT_LT(events.size(), 1000u);
}

TEST_F(DemoServerHttp, OptionsPreflightAnswers204WithTheCorsHeaders) {
  httplib::Headers h{{"Origin", "http://localhost:5173"},
                     {"Access-Control-Request-Method", "POST"},
                     {"Access-Control-Request-Headers", "content-type, mcp-session-id"}};
  auto res = client_->Options("/mcp", h);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  expect_cors(*res);
}

TEST_F(DemoServerHttp, OptionsPreflightAllowsTheHeadersAPageAsksFor) {
  httplib::Headers h{{"Origin", "http://localhost:5173"},
                     {"Access-Control-Request-Method", "POST"},
                     {"Access-Control-Request-Headers", "authorization, x-demo-key"}};
  auto res = client_->Options("/mcp", h);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 204);
  expect_cors(*res);
  EXPECT_THAT(res->get_header_value("Access-Control-Allow-Headers"), HasSubstr("x-demo-key"));
  // Anything but header-name characters is not echoed.
  h.erase("Access-Control-Request-Headers");
  h.emplace("Access-Control-Request-Headers", "x-a, x-injected=1");
  auto odd = client_->Options("/mcp", h);
  ASSERT_TRUE(odd);
  EXPECT_THAT(odd->get_header_value("Access-Control-Allow-Headers"),
              ::testing::Not(HasSubstr("x-a")));
}

TEST_F(DemoServerHttp, RequestWithoutSessionIdIs400WithCorsHeaders) {
  auto res = post(request(2, "tools/list"), "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  expect_cors(*res);
  EXPECT_THAT(res->body, HasSubstr("Mcp-Session-Id"));
}

TEST_F(DemoServerHttp, UnknownSessionIdIs404) {
  auto res = post(request(2, "tools/list"), "00000000000000000000000000000000");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

TEST_F(DemoServerHttp, DeleteEndsTheSessionAndLaterUseIs404) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  auto del = client_->Delete("/mcp", mcp_headers(session));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
  auto after = post(request(2, "tools/list"), session);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 404);
  auto again = client_->Delete("/mcp", mcp_headers(session));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
}

TEST_F(DemoServerHttp, Get_OpensTheSessionsStreamUntilTheSessionIsDeleted) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  // The stream on a connection of its own, open until the DELETE below ends it.
  std::mutex m;
  std::condition_variable cv;
  int status = 0;
  std::string type;
  bool ended = false;
  std::thread reader([&] {
    httplib::Client c("127.0.0.1", server_.port());
    c.set_read_timeout(kDeadline);
    auto r = c.Get(
        "/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}},
        [&](const httplib::Response& head) {
          std::lock_guard<std::mutex> lock(m);
          status = head.status;
          type = head.get_header_value("Content-Type");
          cv.notify_all();
          return true;
        },
        [](const char*, std::size_t) { return true; });
    std::lock_guard<std::mutex> lock(m);
    ended = static_cast<bool>(r);
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(m);
    ASSERT_TRUE(cv.wait_for(lock, kDeadline, [&] { return status != 0; }));
  }
  EXPECT_EQ(status, 200);
  EXPECT_EQ(type, "text/event-stream");
  auto second =
      client_->Get("/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 409);  // one stream per session
  auto del = client_->Delete("/mcp", mcp_headers(session));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200);
  {
    std::unique_lock<std::mutex> lock(m);
    EXPECT_TRUE(cv.wait_for(lock, kDeadline, [&] { return ended; }));
  }
  reader.join();
}

TEST_F(DemoServerHttp, Get_WithoutAKnownSessionOrEventStreamIsRefused) {
  auto none = client_->Get("/mcp", {{"Accept", "text/event-stream"}});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 400);
  auto unknown =
      client_->Get("/mcp", {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", "nope"}});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  const std::string session = open_session();
  auto json_only =
      client_->Get("/mcp", {{"Accept", "application/json"}, {"Mcp-Session-Id", session}});
  ASSERT_TRUE(json_only);
  EXPECT_EQ(json_only->status, 406);
}

TEST_F(DemoServerHttp, NotificationIsAccepted202WithAnEmptyBody) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  auto res = post(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, session);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202);
  EXPECT_TRUE(res->body.empty());
}

TEST_F(DemoServerHttp, RejectsBadAcceptContentTypeAndProtocolVersion) {
  const std::string session = open_session();
  ASSERT_FALSE(session.empty());
  const std::string body = request(2, "ping").dump();

  auto no_sse = client_->Post("/mcp", {{"Accept", "application/json"}, {"Mcp-Session-Id", session}},
                              body, "application/json");
  ASSERT_TRUE(no_sse);
  EXPECT_EQ(no_sse->status, 406);

  auto text = client_->Post("/mcp", mcp_headers(session), body, "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);

  auto headers = mcp_headers(session);
  headers.emplace("MCP-Protocol-Version", "1999-01-01");
  auto old = client_->Post("/mcp", headers, body, "application/json");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->status, 400);
  expect_cors(*old);

  auto bad_json = client_->Post("/mcp", mcp_headers(session), "{not json", "application/json");
  ASSERT_TRUE(bad_json);
  EXPECT_EQ(bad_json->status, 400);
  EXPECT_THAT(bad_json->body, HasSubstr("-32700"));
}

TEST_F(DemoServerHttp, ExitsWithStatusZeroOnSigterm) {
  const auto status = server_.stop_with(SIGTERM);
  ASSERT_TRUE(status.has_value()) << "the server did not exit on SIGTERM; its log:\n"
                                  << server_.log();
  EXPECT_TRUE(WIFEXITED(*status)) << "status " << *status;
  EXPECT_EQ(WEXITSTATUS(*status), 0);
}

// --startup-delay-ms over HTTP: the initialize POST is answered after the delay, and the
// session it creates is kept for the requests that follow (the browser test's slow server).
TEST(DemoServerHttpStartupDelay, AnswersInitializeLateWithASessionThatStaysUsable) {
  constexpr auto kDelay = std::chrono::milliseconds(300);
  HttpDemoServer server({"--http", "0", "--startup-delay-ms", std::to_string(kDelay.count())});
  ASSERT_GT(server.port(), 0) << server.error();
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(kDeadline);
  const httplib::Headers accept{{"Accept", kAcceptBoth}};
  const auto sent = Clock::now();
  auto init = client.Post("/mcp", accept, initialize_message().dump(), "application/json");
  ASSERT_TRUE(init) << httplib::to_string(init.error());
  EXPECT_GE(Clock::now() - sent, kDelay);  // answered no earlier than the delay allows
  EXPECT_EQ(init->status, 200);
  const json answer = json::parse(init->body, nullptr, false);
  ASSERT_TRUE(answer.is_object()) << init->body;
  EXPECT_EQ(answer["result"]["protocolVersion"], "2025-11-25");
  const std::string session = init->get_header_value("Mcp-Session-Id");
  ASSERT_FALSE(session.empty());

  httplib::Headers with_session = accept;
  with_session.emplace("Mcp-Session-Id", session);
  auto list = client.Post("/mcp", with_session,
                          json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}.dump(),
                          "application/json");
  ASSERT_TRUE(list) << httplib::to_string(list.error());
  EXPECT_EQ(list->status, 200) << list->body;
  const json tools = json::parse(list->body, nullptr, false);
  ASSERT_TRUE(tools.is_object()) << list->body;
  EXPECT_EQ(tools["result"]["tools"].size(), 6u);
}

TEST(DemoServerHttpOptions, RefusesANonLoopbackHost) {
  HttpDemoServer server({"--http", "0", "--host", "0.0.0.0"});
  EXPECT_EQ(server.port(), -1);
  const auto status = server.wait_exit();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 2);
  EXPECT_THAT(server.log(), HasSubstr("only loopback addresses are allowed"));
}

// The whole mcprt client stack against the real server over loopback HTTP.
TEST(DemoServerHttpClientStack, ConnectsListsCallsStreamsProgressAndCloses) {
  HttpDemoServer server;
  ASSERT_GT(server.port(), 0) << server.error();

  mcprt::native::NativeExecutor ex;
  mcprt::native::test::CapturingLogger log;
  {
    mcprt::native::NativeHttpClient http(ex);
    mcprt::HttpTransportOptions to;
    to.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/mcp";
    to.server_name = "demo-http";
    to.mode = mcprt::HttpTransportMode::streamable;
    to.logger = &log;
    auto transport = mcprt::make_http_transport(ex, http, to);
    ASSERT_TRUE(transport.ok()) << transport.error().message;

    mcprt::ClientOptions co;
    co.server_name = "demo-http";
    co.logger = &log;
    std::optional<mcprt::Error> closed_with;
    co.on_close = [&](const mcprt::Error& e) { closed_with = e; };
    auto session = mcprt::ClientSession::create(ex, std::move(transport).value(), co);
    using mcprt::native::test::pump_until;

    std::optional<mcprt::Status> connected;
    session->connect([&](mcprt::Status s) { connected = std::move(s); });
    ASSERT_TRUE(pump_until(ex, [&] { return connected.has_value(); }));
    ASSERT_TRUE(connected->ok()) << connected->error().message;
    EXPECT_EQ(session->server().protocol_version, "2025-11-25");

    std::optional<mcprt::Result<std::vector<json>>> tools;
    session->list_tools([&](mcprt::Result<std::vector<json>> r) { tools = std::move(r); });
    ASSERT_TRUE(pump_until(ex, [&] { return tools.has_value(); }));
    ASSERT_TRUE(tools->ok()) << tools->error().message;
    EXPECT_EQ(tools->value().size(), 6u);
    // The manager's listing over Streamable HTTP: each inputSchema arrives as the checked
    // text the server sent (SPEC §12's tool path), the same value list_tools parsed.
    std::optional<mcprt::Result<std::vector<json>>> raw;
    session->list_tools_raw([&](mcprt::Result<std::vector<json>> r) { raw = std::move(r); });
    ASSERT_TRUE(pump_until(ex, [&] { return raw.has_value(); }));
    ASSERT_TRUE(raw->ok()) << raw->error().message;
    ASSERT_EQ(raw->value().size(), tools->value().size());
    for (std::size_t i = 0; i < raw->value().size(); ++i) {
      const json& schema = raw->value()[i]["inputSchema"];
      ASSERT_TRUE(mcprt::detail::is_raw_json(schema)) << raw->value()[i]["name"];
      EXPECT_FALSE(mcprt::detail::is_raw_json(tools->value()[i]["inputSchema"]));
      EXPECT_EQ(mcprt::detail::parse_raw_json(schema), tools->value()[i]["inputSchema"]);
    }

    std::optional<mcprt::Result<json>> sum;
    session->call_tool("add", {{"a", 20}, {"b", 22}}, {},
                       [&](mcprt::Result<json> r) { sum = std::move(r); });
    ASSERT_TRUE(pump_until(ex, [&] { return sum.has_value(); }));
    ASSERT_TRUE(sum->ok()) << sum->error().message;
    EXPECT_EQ(sum->value()["structuredContent"]["sum"], 42);

    std::vector<json> progress;
    mcprt::CallOptions call;
    call.on_progress = [&](const json& p) { progress.push_back(p); };
    std::optional<mcprt::Result<json>> slow;
    session->call_tool("slow_task", {{"steps", 3}, {"interval_ms", 1}}, call,
                       [&](mcprt::Result<json> r) { slow = std::move(r); });
    ASSERT_TRUE(pump_until(ex, [&] { return slow.has_value(); }));
    ASSERT_TRUE(slow->ok()) << slow->error().message;
    EXPECT_EQ(slow->value()["structuredContent"]["steps"], 3);
    ASSERT_EQ(progress.size(), 3u);
    EXPECT_EQ(progress.back()["progress"], 3);
    EXPECT_EQ(progress.back()["total"], 3);

    session->close();
    ASSERT_TRUE(pump_until(ex, [&] { return closed_with.has_value(); }));
    EXPECT_EQ(session->state(), mcprt::ClientSession::State::closed);
    session.reset();
  }
  // The client's DELETE ended the session on the server.
  EXPECT_TRUE(server.wait_log("deleted by the client")) << server.log();
}

}  // namespace
}  // namespace demo_server_http_test
