// The HTTP transports (mcprt/http_transport.hpp) through the Transport interface, over
// FakeHttpClient and ManualExecutor: Streamable HTTP (2025-11-25), legacy HTTP+SSE
// (2024-11-05), the automatic fallback, redirects with origin-locked headers, and auth.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/auth.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/testing/fake_http_client.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace http_transport_test {  // this file's own names in a unity batch
namespace {

using testing::FakeHttpClient;
using testing::FakeHttpExchange;
using testing::ManualExecutor;
using testing::sse_event;
using testing::sse_raw;

constexpr const char* kUrl = "http://mcp.test:8080/mcp";

json rpc_request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}
json rpc_notification(const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}
json rpc_result(int id, json result = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}
json init_request() {
  return rpc_request(0, "initialize",
                     {{"protocolVersion", "2025-11-25"},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
}
json init_result(const std::string& version = "2025-11-25") {
  return rpc_result(0, {{"protocolVersion", version},
                        {"capabilities", json::object()},
                        {"serverInfo", {{"name", "srv"}, {"version", "1"}}}});
}
json initialized() { return rpc_notification("notifications/initialized"); }

// A storage that answers on the next executor turn and counts calls.
class FakeAuthStorage final : public AuthStorage {
 public:
  explicit FakeAuthStorage(Executor& ex) : ex_(ex) {}
  void get_token(const AuthRequest& request, TokenCallback done) override {
    ++gets;
    requests.push_back(request);
    ex_.post([done, t = token] { done(t); });
  }
  void refresh_token(const AuthRequest& request, const std::string& rejected,
                     TokenCallback done) override {
    ++refreshes;
    rejected_tokens.push_back(rejected);
    if (refreshed) token = refreshed;
    ex_.post([done, t = token] { done(t); });
  }

  std::optional<std::string> token;
  std::optional<std::string> refreshed;
  int gets = 0;
  int refreshes = 0;
  std::vector<AuthRequest> requests;
  std::vector<std::string> rejected_tokens;

 private:
  Executor& ex_;
};

class CapturingLogger final : public Logger {
 public:
  void log(LogLevel level, std::string_view message) override {
    if (level >= LogLevel::warn) warnings.emplace_back(message);
  }
  bool contains(std::string_view text) const {
    for (const auto& w : warnings) {
      if (w.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::vector<std::string> warnings;
};

class HttpTransportTest : public ::testing::Test {
 protected:
  HttpTransportOptions options(HttpTransportMode mode = HttpTransportMode::streamable) {
    HttpTransportOptions o;
    o.url = kUrl;
    o.server_name = "x";
    o.mode = mode;
    o.logger = &logger;
    return o;
  }

  void open(HttpTransportOptions o) {
    auto made = make_http_transport(ex, http, std::move(o));
    ASSERT_TRUE(made.ok()) << made;
    transport = std::move(made).value();
    TransportHandlers h;
    h.on_message = [this](json m) { received.push_back(std::move(m)); };
    h.on_close = [this](const Error& e) { closes.push_back(e); };
    h.on_renewed = [this] { ++renewals; };
    transport->start(std::move(h));
  }

  void send(const json& m) { ASSERT_TRUE(transport->send(m).ok()); }

  // Runs the executor, then takes the oldest request not handled yet.
  std::optional<FakeHttpExchange> next() {
    ex.run_until_idle();
    return http.take();
  }

  // initialize (JSON answer with session `session`) → initialized (202) → the GET stream's
  // request, unanswered (into `get`); what was received so far is cleared.
  void handshake_until_get(std::optional<FakeHttpExchange>& get, const std::string& session = "s1") {
    send(init_request());
    auto init = next();
    ASSERT_TRUE(init);
    init->respond_json(init_result(), {{"Mcp-Session-Id", session}});
    ex.run_until_idle();
    send(initialized());
    auto note = next();
    ASSERT_TRUE(note);
    note->respond(202);
    get = next();
    ASSERT_TRUE(get);
    ASSERT_EQ(get->method(), "GET");
    EXPECT_EQ(get->header("Mcp-Session-Id"), session);
    received.clear();
  }

  // The same, and the GET stream served (one event, retry: 300, then it ends): the
  // reopening request, unanswered, goes into `get`. The server has the route.
  void handshake_until_second_get(std::optional<FakeHttpExchange>& get, const std::string& session = "s1") {
    std::optional<FakeHttpExchange> first;
    ASSERT_NO_FATAL_FAILURE(handshake_until_get(first, session));
    first->respond_sse_head();
    first->chunk("retry: 300\n" + sse_event(rpc_notification("notifications/tools/list_changed"), "g1"));
    first->complete();
    ex.run_until_idle();
    ex.advance(Millis(300));
    received.clear();
    get = next();
    ASSERT_TRUE(get);
    ASSERT_EQ(get->method(), "GET");
    EXPECT_EQ(get->header("Mcp-Session-Id"), session);
  }

  // The same, the GET stream refused with 405.
  void handshake(const std::string& session = "s1") {
    std::optional<FakeHttpExchange> get;
    ASSERT_NO_FATAL_FAILURE(handshake_until_get(get, session));
    get->respond(405);
    ex.run_until_idle();
    ASSERT_EQ(http.pending(), 0u);
  }

  // The error object of the one message received, which must be an error response.
  json only_error() {
    EXPECT_EQ(received.size(), 1u);
    if (received.empty() || !received[0].contains("error")) return json::object();
    return received[0]["error"];
  }

  CapturingLogger logger;
  ManualExecutor ex;
  FakeHttpClient http{ex};
  FakeAuthStorage storage{ex};
  std::unique_ptr<Transport> transport;
  std::vector<json> received;
  std::vector<Error> closes;
  int renewals = 0;  // on_renewed calls
};

// --- Streamable HTTP: messages ---------------------------------------------------------

TEST_F(HttpTransportTest, Streamable_PostsEachMessageWithJsonAndEventStreamAccept) {
  open(options());
  send(init_request());
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->method(), "POST");
  EXPECT_EQ(post->url(), kUrl);
  EXPECT_EQ(post->header("Content-Type"), "application/json");
  EXPECT_EQ(post->header("Accept"), "application/json, text/event-stream");
  EXPECT_EQ(post->json_body(), init_request());
  EXPECT_FALSE(post->has_header("Mcp-Session-Id"));
  EXPECT_FALSE(post->has_header("MCP-Protocol-Version"));
}

TEST_F(HttpTransportTest, Streamable_DeliversAJsonAnswer) {
  open(options());
  send(init_request());
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_json(init_result());
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], init_result());
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Streamable_DeliversEachMessageOfAJsonBatch) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/list"));
  auto post = next();
  ASSERT_TRUE(post);
  json batch = json::array({rpc_notification("notifications/message", {{"level", "info"}}),
                            rpc_result(1, {{"tools", json::array()}})});
  post->respond_json(batch);
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0], batch[0]);
  EXPECT_EQ(received[1], batch[1]);
}

TEST_F(HttpTransportTest, Streamable_ParsesAnSseAnswerWhateverTheChunkBoundaries) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  for (std::size_t chunk = 1; chunk <= 9; ++chunk) {
    const int id = static_cast<int>(chunk);
    send(rpc_request(id, "tools/list"));
    auto post = next();
    ASSERT_TRUE(post);
    const json progress =
        rpc_notification("notifications/progress", {{"progressToken", id}, {"progress", 1}});
    const json result = rpc_result(id, {{"tools", json::array({{{"name", "é✓"}}})}});
    post->respond_sse_head();
    post->chunks("event: message\r\nid: a" + std::to_string(id) + "\r\ndata: " + progress.dump() +
                     "\r\n\r\n" + sse_event(result, "b" + std::to_string(id)),
                 chunk);
    post->complete();
    ex.run_until_idle();
    ASSERT_EQ(received.size(), 2u) << "chunk size " << chunk;
    EXPECT_EQ(received[0], progress);
    EXPECT_EQ(received[1], result);
    received.clear();
  }
  EXPECT_EQ(http.pending(), 0u);  // answered streams are not resumed
}

TEST_F(HttpTransportTest, Streamable_DeliversNotificationsAndServerRequestsBeforeTheResult) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(3, "tools/call", {{"name", "slow"}}));
  auto post = next();
  ASSERT_TRUE(post);
  const json log = rpc_notification("notifications/message", {{"level", "info"}, {"data", "hi"}});
  const json roots = rpc_request(0, "roots/list");
  const json result = rpc_result(3, {{"content", json::array()}});
  post->respond_sse_head();
  post->chunk(sse_raw("id: p0\ndata:"));  // the 2025-11-25 priming event: no message
  post->chunk(sse_event(log, "p1"));
  post->chunk(sse_event(roots, "p2"));
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0], log);
  EXPECT_EQ(received[1], roots);

  // The client's answer to the server request is POSTed like any message.
  send(rpc_result(0, {{"roots", json::array()}}));
  auto answer = next();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->method(), "POST");
  EXPECT_EQ(answer->json_body(), rpc_result(0, {{"roots", json::array()}}));
  EXPECT_EQ(answer->header("Mcp-Session-Id"), "s1");
  answer->respond(202);

  post->chunk(sse_event(result, "p3"));
  post->complete();
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(received[2], result);
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Streamable_StopsReadingAPostStreamOnceItsResponseArrived) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "ping"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_event(rpc_result(1), "e1"));  // and the server never ends the stream
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_TRUE(post->aborted());
  ex.advance(Millis(10000));
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Streamable_Accepts202ForNotifications) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_notification("notifications/cancelled", {{"requestId", 9}, {"reason", "x"}}));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond(202, "Accepted", {{"Content-Type", "text/plain"}});
  ex.run_until_idle();
  EXPECT_TRUE(received.empty());
  EXPECT_TRUE(closes.empty());
  EXPECT_TRUE(logger.warnings.empty()) << logger.warnings[0];
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Streamable_KeepsTheSessionIdAndSendsItOnEveryLaterRequest) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_sse_head({{"mcp-session-id", "abc-123"}});
  init->chunk(sse_event(init_result(), "e1"));
  init->complete();
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->header("Mcp-Session-Id"), "abc-123");
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->header("Mcp-Session-Id"), "abc-123");
  get->respond(405);
  send(rpc_request(1, "tools/list"));
  auto list = next();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->header("Mcp-Session-Id"), "abc-123");
}

TEST_F(HttpTransportTest, Streamable_SendsTheNegotiatedProtocolVersionAfterInitialize) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  EXPECT_FALSE(init->has_header("MCP-Protocol-Version"));
  init->respond_json(init_result("2025-06-18"));
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->header("MCP-Protocol-Version"), "2025-06-18");
  EXPECT_FALSE(note->has_header("Mcp-Session-Id"));  // the server gave none
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->header("mcp-protocol-version"), "2025-06-18");
}

// --- Streamable HTTP: the GET stream ---------------------------------------------------

TEST_F(HttpTransportTest, Streamable_OpensTheGetStreamOnlyAfterInitializedWasAccepted) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);  // no GET before initialized
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(http.pending(), 0u);
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->method(), "GET");
  EXPECT_EQ(get->url(), kUrl);
  EXPECT_EQ(get->header("Accept"), "text/event-stream");
  EXPECT_EQ(get->header("Mcp-Session-Id"), "s1");

  const json changed = rpc_notification("notifications/tools/list_changed");
  get->respond_sse_head();
  get->chunk(sse_event(changed, "g1"));
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);  // the initialize result, then the notification
  EXPECT_EQ(received[1], changed);
}

TEST_F(HttpTransportTest, Streamable_OpensNoGetStreamWhenTheOptionIsOff) {
  auto o = options();
  o.open_get_stream = false;
  open(o);
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  ex.advance(Millis(60000));
  EXPECT_EQ(http.pending(), 0u);  // no GET, now or later
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Streamable_StopsTryingTheGetStreamAfter405) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());  // answers the GET with 405
  ex.advance(Millis(120000));
  EXPECT_EQ(http.pending(), 0u);
  EXPECT_TRUE(closes.empty());
  EXPECT_NE(transport->diagnostics().find("405"), std::string::npos);
}

TEST_F(HttpTransportTest, Streamable_ReopensAnEndedGetStreamWithLastEventIdAfterRetry) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  EXPECT_FALSE(get->has_header("Last-Event-ID"));
  get->respond_sse_head();
  get->chunk("retry: 300\n" + sse_event(rpc_notification("notifications/tools/list_changed"), "g7"));
  get->complete();
  ex.run_until_idle();
  ex.advance(Millis(299));
  EXPECT_EQ(http.pending(), 0u);
  ex.advance(Millis(1));
  auto again = next();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->method(), "GET");
  EXPECT_EQ(again->header("Last-Event-ID"), "g7");
}

// --- Streamable HTTP: resuming a broken POST stream ------------------------------------

TEST_F(HttpTransportTest, Streamable_ResumesABrokenPostStreamWithLastEventIdAfterRetry) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call", {{"name", "slow"}}));
  auto post = next();
  ASSERT_TRUE(post);
  const json progress = rpc_notification("notifications/progress", {{"progressToken", 1}, {"progress", 1}});
  post->respond_sse_head();
  post->chunk(sse_raw("id: e1\nretry: 250\ndata:"));
  post->chunk(sse_event(progress, "e2"));
  post->fail(Error::make(ErrorCode::transport, "connection reset"));  // the drop
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_TRUE(closes.empty());

  ex.advance(Millis(249));
  EXPECT_EQ(http.pending(), 0u);  // honours retry: 250
  ex.advance(Millis(1));
  auto resume = next();
  ASSERT_TRUE(resume);
  EXPECT_EQ(resume->method(), "GET");
  EXPECT_EQ(resume->header("Last-Event-ID"), "e2");
  EXPECT_EQ(resume->header("Accept"), "text/event-stream");
  EXPECT_EQ(resume->header("Mcp-Session-Id"), "s1");
  EXPECT_EQ(resume->header("MCP-Protocol-Version"), "2025-11-25");

  resume->respond_sse_head();
  resume->chunk(sse_event(rpc_result(1, {{"content", json::array()}}), "e3"));
  resume->complete();
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[1], rpc_result(1, {{"content", json::array()}}));
  ex.advance(Millis(10000));
  EXPECT_EQ(http.pending(), 0u);  // answered: no more resuming
}

TEST_F(HttpTransportTest, Streamable_ResumesAfterTheDefaultDelayWhenTheServerSentNoRetry) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: only\ndata:"));
  post->complete();  // the server closed the stream (SSE polling)
  ex.run_until_idle();
  ex.advance(Millis(999));
  EXPECT_EQ(http.pending(), 0u);
  ex.advance(Millis(1));
  auto resume = next();
  ASSERT_TRUE(resume);
  EXPECT_EQ(resume->header("Last-Event-ID"), "only");
}

TEST_F(HttpTransportTest, Streamable_GivesUpResumingAfterTheAttemptLimit) {
  auto o = options();
  o.max_resume_attempts = 2;
  open(o);
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: e1\ndata:"));
  post->complete();
  ex.run_until_idle();
  int gets = 0;
  for (int i = 0; i < 10 && received.empty(); ++i) {
    ex.advance(Millis(1000));
    auto resume = next();
    if (!resume) continue;
    ++gets;
    // No answer in time (a refused connection would close the transport instead).
    resume->fail(Error::make(ErrorCode::timeout, "no response within 1000 ms"));
    ex.run_until_idle();
  }
  EXPECT_EQ(gets, 2);
  json error = only_error();
  EXPECT_EQ(error.value("code", 0), kHttpTransportErrorCode);
  EXPECT_NE(error.value("message", "").find("gave up resuming"), std::string::npos);
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Streamable_FailsARequestWhoseStreamEndsWithoutAnEventId) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(4, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_event(rpc_notification("notifications/message"), ""));
  post->complete();
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);
  ASSERT_TRUE(received[1].contains("error"));
  EXPECT_EQ(received[1]["id"], 4);
  EXPECT_NE(received[1]["error"].value("message", "").find("no event id"), std::string::npos);
  ex.advance(Millis(5000));
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Streamable_StopsResumingARequestTheClientCancelled) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(5, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: e1\ndata:"));
  post->complete();
  ex.run_until_idle();
  send(rpc_notification("notifications/cancelled", {{"requestId", 5}, {"reason", "timeout"}}));
  auto cancel = next();
  ASSERT_TRUE(cancel);
  cancel->respond(202);
  ex.advance(Millis(5000));
  EXPECT_EQ(http.pending(), 0u);
  EXPECT_TRUE(received.empty());
}

TEST_F(HttpTransportTest, Streamable_CancellingARequestAbortsItsOpenPost) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(6, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  ex.run_until_idle();
  send(rpc_notification("notifications/cancelled", {{"requestId", 6}, {"reason", "aborted"}}));
  EXPECT_TRUE(post->aborted());
  auto cancel = next();
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->json_body()["params"]["requestId"], 6);
  post->chunk(sse_event(rpc_result(6)));
  ex.run_until_idle();
  EXPECT_TRUE(received.empty());
}

TEST_F(HttpTransportTest, Streamable_RetryZeroIsRaisedToTheFloorOf250Ms) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: e1\nretry: 0\ndata:"));
  post->complete();
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);  // not at once
  ex.advance(Millis(249));
  EXPECT_EQ(http.pending(), 0u);
  ex.advance(Millis(1));
  auto resume = next();
  ASSERT_TRUE(resume);
  EXPECT_EQ(resume->header("Last-Event-ID"), "e1");
}

TEST_F(HttpTransportTest, Streamable_TheGetStreamHonoursTheRetryFloorToo) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  get->respond_sse_head();
  get->chunk(sse_raw("id: g1\nretry: 0\ndata:"));
  get->complete();
  ex.run_until_idle();
  ex.advance(Millis(249));
  EXPECT_EQ(http.pending(), 0u);
  ex.advance(Millis(1));
  auto again = next();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->header("Last-Event-ID"), "g1");
}

// A server that answers every resume and ends it at once (polling with retry: 0).
TEST_F(HttpTransportTest, Streamable_AServerThatKeepsEndingTheStreamSpendsTheReconnectBudget) {
  auto o = options();
  o.max_reconnects_per_window = 3;
  o.reconnect_window_ms = 10000;
  open(o);
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: e0\nretry: 0\ndata:"));
  post->complete();
  ex.run_until_idle();
  int resumes = 0;
  for (int i = 0; i < 20 && received.empty(); ++i) {
    ex.advance(Millis(250));
    auto resume = next();
    if (!resume) continue;
    ++resumes;
    resume->respond_sse_head();
    resume->chunk(sse_raw("id: e" + std::to_string(resumes) + "\nretry: 0\ndata:"));
    resume->complete();
    ex.run_until_idle();
  }
  EXPECT_EQ(resumes, 3);
  json error = only_error();
  EXPECT_EQ(received[0]["id"], 1);
  EXPECT_EQ(error["data"].value("transport_error", ""), "protocol");
  EXPECT_EQ(error.value("message", ""),
            std::string("Server \"x\": the server at ") + kUrl +
                " keeps ending the SSE stream of this request (3 reconnects within 10000 ms, the "
                "reconnect budget); not reconnecting again");
  EXPECT_TRUE(closes.empty());  // only that request fails
  ex.advance(Millis(60000));
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Streamable_TheReconnectBudgetIsPerWindow) {
  auto o = options();
  o.max_reconnects_per_window = 3;
  o.reconnect_window_ms = 10000;
  open(o);
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: e0\nretry: 4000\ndata:"));
  post->complete();
  ex.run_until_idle();
  // One reconnect every 4 s: never more than 3 within 10 s, so it never runs out.
  int resumes = 0;
  for (int i = 0; i < 10; ++i) {
    ex.advance(Millis(4000));
    auto resume = next();
    ASSERT_TRUE(resume) << "reconnect " << i;
    ++resumes;
    resume->respond_sse_head();
    resume->chunk(sse_raw("id: e" + std::to_string(resumes) + "\ndata:"));
    resume->complete();
    ex.run_until_idle();
  }
  EXPECT_TRUE(received.empty());
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Streamable_TheGetStreamStopsWhenItsBudgetIsSpent) {
  auto o = options();
  o.max_reconnects_per_window = 2;
  o.reconnect_window_ms = 10000;
  open(o);
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  int gets = 0;
  for (int i = 0; i < 20; ++i) {
    auto get = next();
    if (get) {
      ++gets;
      get->respond_sse_head();
      get->chunk(sse_raw("id: g" + std::to_string(gets) + "\nretry: 0\ndata:"));
      get->complete();
      ex.run_until_idle();
    }
    ex.advance(Millis(250));
  }
  EXPECT_EQ(gets, 3);  // the first open and 2 reconnects
  EXPECT_TRUE(closes.empty());
  bool warned = false;
  for (const auto& w : logger.warnings) {
    warned = warned || w.find("Server \"x\": the server at " + std::string(kUrl) +
                              " keeps ending the GET stream (2 reconnects within 10000 ms") == 0;
  }
  EXPECT_TRUE(warned);
}

TEST_F(HttpTransportTest, Streamable_ARefusedResumeClosesTheTransport) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: e1\ndata:"));
  post->fail(Error::make(ErrorCode::transport, "connection reset"));
  ex.run_until_idle();
  EXPECT_TRUE(closes.empty());  // a broken stream alone is resumed
  ex.advance(Millis(1000));
  auto resume = next();
  ASSERT_TRUE(resume);
  resume->fail(Error::make(ErrorCode::transport, "connection refused"));
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::transport);
  EXPECT_EQ(closes[0].message, std::string("Server \"x\": GET ") + kUrl +
                                   " failed: connection refused");
  EXPECT_TRUE(received.empty());  // the request fails once, through on_close
}

TEST_F(HttpTransportTest, Streamable_ABrokenGetStreamWhoseReconnectIsRefusedClosesTheTransport) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  get->respond_sse_head();
  get->chunk(sse_raw("id: g1\ndata:"));
  get->fail(Error::make(ErrorCode::transport, "connection reset by peer"));
  ex.run_until_idle();
  EXPECT_TRUE(closes.empty());
  ex.advance(Millis(1000));
  auto again = next();
  ASSERT_TRUE(again);
  again->fail(Error::make(ErrorCode::transport, "connection refused"));
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].message, std::string("Server \"x\": GET ") + kUrl + " failed: connection refused");
}

TEST_F(HttpTransportTest, Streamable_AGetStreamReconnectThatTimesOutIsRetriedNotAClose) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  get->fail(Error::make(ErrorCode::timeout, "no response within 100 ms"));
  ex.run_until_idle();
  ex.advance(Millis(1000));
  auto again = next();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->method(), "GET");
  EXPECT_TRUE(closes.empty());
}

// --- Streamable HTTP: session expiry ---------------------------------------------------

TEST_F(HttpTransportTest, Streamable_ReinitializesOnceWhenTheSessionExpiresAndRetries) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/list"));
  auto list = next();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->header("Mcp-Session-Id"), "s1");
  list->respond(404, "Session not found");

  auto reinit = next();
  ASSERT_TRUE(reinit);
  EXPECT_EQ(reinit->method(), "POST");
  EXPECT_EQ(reinit->json_body(), init_request());
  EXPECT_FALSE(reinit->has_header("Mcp-Session-Id"));
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});

  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->json_body(), initialized());
  EXPECT_EQ(note->header("Mcp-Session-Id"), "s2");
  // A message sent while re-initializing waits for the new session.
  send(rpc_request(2, "ping"));
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);
  note->respond(202);

  auto retried = next();
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->json_body(), rpc_request(1, "tools/list"));
  EXPECT_EQ(retried->header("Mcp-Session-Id"), "s2");
  auto ping = next();
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->json_body(), rpc_request(2, "ping"));
  EXPECT_EQ(ping->header("Mcp-Session-Id"), "s2");
  retried->respond_json(rpc_result(1, {{"tools", json::array()}}));
  ping->respond_json(rpc_result(2));
  ex.run_until_idle();

  // The replayed initialize's answer stays inside the transport.
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0], rpc_result(1, {{"tools", json::array()}}));
  EXPECT_EQ(received[1], rpc_result(2));
  EXPECT_TRUE(closes.empty());
  EXPECT_EQ(renewals, 1) << "the session layer learns that the server's session is a new one";
  auto get = next();  // the GET stream is reopened for the new session
  ASSERT_TRUE(get);
  EXPECT_EQ(get->method(), "GET");
  EXPECT_EQ(get->header("Mcp-Session-Id"), "s2");
}

// The session expires while only the GET stream uses it (an idle client): the 404 to the
// GET starts the new session too, instead of leaving the client without notifications.
TEST_F(HttpTransportTest, Streamable_A404ToTheGetStreamStartsANewSessionAndReportsTheRenewal) {
  open(options());
  std::optional<FakeHttpExchange> get;
  ASSERT_NO_FATAL_FAILURE(handshake_until_second_get(get));
  get->respond(404, "Session not found");

  auto reinit = next();
  ASSERT_TRUE(reinit);
  EXPECT_EQ(reinit->json_body(), init_request());
  EXPECT_FALSE(reinit->has_header("Mcp-Session-Id"));
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});
  auto renote = next();
  ASSERT_TRUE(renote);
  EXPECT_EQ(renote->json_body(), initialized());
  EXPECT_EQ(renote->header("Mcp-Session-Id"), "s2");
  EXPECT_EQ(renewals, 0) << "not before the new session is initialized";
  renote->respond(202);
  auto reopened = next();
  ASSERT_TRUE(reopened);
  EXPECT_EQ(reopened->method(), "GET");
  EXPECT_EQ(reopened->header("Mcp-Session-Id"), "s2");
  EXPECT_EQ(renewals, 1);
  EXPECT_TRUE(received.empty()) << "the replayed initialize's answer stays inside";
  EXPECT_TRUE(closes.empty());
  EXPECT_FALSE(logger.contains("GET stream was refused"));

  // Messages go with the new session.
  send(rpc_request(3, "ping"));
  auto ping = next();
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->header("Mcp-Session-Id"), "s2");
}

// A server without a GET route may answer its first GET 404 instead of 405: that is a
// refused stream, not an expired session (renewing would start over and over).
TEST_F(HttpTransportTest, Streamable_A404ToTheFirstGetStreamRequestStopsItWithoutANewSession) {
  open(options());
  std::optional<FakeHttpExchange> get;
  ASSERT_NO_FATAL_FAILURE(handshake_until_get(get));
  get->respond(404, "Cannot GET /mcp");
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u) << "no initialize replay, no new GET";
  EXPECT_EQ(renewals, 0);
  EXPECT_TRUE(closes.empty());
  EXPECT_TRUE(logger.contains("GET stream was refused"));
}

// A server that keeps no session (404 for the new one before it answered anything) ends the
// connection after one renewal instead of renewing forever; its owner reconnects.
TEST_F(HttpTransportTest, Streamable_A404RightAfterARenewalClosesTheTransportInsteadOfLooping) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/list"));
  auto list = next();
  ASSERT_TRUE(list);
  list->respond(404, "Session not found");
  auto reinit = next();
  ASSERT_TRUE(reinit);
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto retried = next();
  ASSERT_TRUE(retried);
  EXPECT_EQ(renewals, 1);
  // A new message on the new session meets a 404 before anything was answered.
  send(rpc_request(2, "ping"));
  ex.run_until_idle();
  std::optional<FakeHttpExchange> ping;
  while (auto exchange = http.take()) {
    if (exchange->method() == "POST" && exchange->json_body().value("method", "") == "ping") ping = exchange;
    else if (exchange->method() == "GET") exchange->respond(405);
  }
  ASSERT_TRUE(ping);
  ping->respond(404, "Session not found");
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::protocol);
  EXPECT_NE(closes[0].message.find("the server keeps no session"), std::string::npos) << closes[0].message;
  EXPECT_EQ(renewals, 1);
  EXPECT_EQ(http.pending(), 0u) << "no second initialize replay";
}

// A 404 from where the GET stream's redirect led is not the server's: no new session.
TEST_F(HttpTransportTest, Streamable_A404AfterTheGetStreamsRedirectStopsItWithoutANewSession) {
  open(options());
  std::optional<FakeHttpExchange> get;
  ASSERT_NO_FATAL_FAILURE(handshake_until_second_get(get));
  get->respond(302, "", {{"Location", "http://127.0.0.1:3002/elsewhere"}});
  auto hop = next();
  ASSERT_TRUE(hop);
  EXPECT_EQ(hop->method(), "GET");
  EXPECT_EQ(hop->url(), "http://127.0.0.1:3002/elsewhere");
  hop->respond(404, "Not Found");
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u) << "no initialize replay, no new GET";
  EXPECT_EQ(renewals, 0);
  EXPECT_TRUE(logger.contains("GET stream was refused"));
}

// Another refusal of the GET stream (403) still only stops the stream.
TEST_F(HttpTransportTest, Streamable_A403ToTheGetStreamStopsItWithoutANewSession) {
  open(options());
  std::optional<FakeHttpExchange> get;
  ASSERT_NO_FATAL_FAILURE(handshake_until_get(get));
  get->respond(403, "Forbidden");
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u) << "no initialize replay, no new GET";
  EXPECT_EQ(renewals, 0);
  EXPECT_TRUE(logger.contains("GET stream was refused"));
}

TEST_F(HttpTransportTest, Streamable_ASecond404ForTheSameMessageFailsIt) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/list"));
  auto list = next();
  ASSERT_TRUE(list);
  list->respond(404);
  auto reinit = next();
  ASSERT_TRUE(reinit);
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto retried = next();
  ASSERT_TRUE(retried);
  retried->respond(404, "gone again");
  ex.run_until_idle();

  json error = only_error();
  EXPECT_EQ(received[0]["id"], 1);
  EXPECT_EQ(error.value("code", 0), kHttpTransportErrorCode);
  EXPECT_EQ(error["data"].value("status", 0), 404);
  EXPECT_EQ(error["data"].value("transport_error", ""), "http_status");
  EXPECT_EQ(error.value("message", ""),
            std::string("Server \"x\": HTTP 404 from ") + kUrl + ": gone again");
  EXPECT_TRUE(closes.empty());
  // Only one re-initialize happened.
  int inits = 0;
  for (const auto& r : http.all()) {
    if (r.json_body().is_object() && r.json_body().value("method", "") == "initialize") ++inits;
  }
  EXPECT_EQ(inits, 2);
}

TEST_F(HttpTransportTest, Streamable_AFailedReinitializeClosesTheTransport) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/list"));
  auto list = next();
  ASSERT_TRUE(list);
  list->respond(404);
  auto reinit = next();
  ASSERT_TRUE(reinit);
  reinit->respond(503, "maintenance");
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::http_status);
  EXPECT_NE(closes[0].message.find("re-initializing failed"), std::string::npos);
  EXPECT_NE(closes[0].message.find("HTTP 503"), std::string::npos);
  EXPECT_FALSE(transport->send(rpc_request(2, "ping")).ok());
}

// The replayed notifications/initialized meets a 404 too: the new session is refused, so
// re-initializing failed. It used to join the list of messages to re-send after the replay
// that it was itself part of, and everything waited forever.
TEST_F(HttpTransportTest, Streamable_A404ForTheReplayedInitializedClosesInsteadOfHanging) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/call"));
  auto call = next();
  ASSERT_TRUE(call);
  call->respond(404, "Session not found");
  auto reinit = next();
  ASSERT_TRUE(reinit);
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->json_body(), initialized());
  send(rpc_request(2, "ping"));  // sent during the replay
  note->respond(404, "Session not found");
  ex.run_until_idle();

  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::http_status);
  EXPECT_EQ(closes[0].message, std::string("Server \"x\": the session expired and re-initializing "
                                           "failed: HTTP 404 from ") +
                                   kUrl + ": Session not found");
  EXPECT_TRUE(received.empty());  // both requests fail once, through on_close
  EXPECT_EQ(http.pending(), 0u);
  ex.advance(Millis(60000));
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Streamable_A404ThatArrivesDuringTheReplayIsResentOnceAfterIt) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/call"));
  send(rpc_request(2, "tools/list"));
  auto call = next();
  ASSERT_TRUE(call);
  auto list = next();
  ASSERT_TRUE(list);
  call->respond(404);
  auto reinit = next();
  ASSERT_TRUE(reinit);
  EXPECT_EQ(reinit->json_body(), init_request());
  list->respond(404);  // the second 404 arrives while the replay runs
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);  // no second replay
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  ex.run_until_idle();

  std::vector<json> resent;
  while (auto r = http.take()) {
    if (r->method() == "POST") {
      EXPECT_EQ(r->header("Mcp-Session-Id"), "s2");
      resent.push_back(r->json_body());
      r->respond_json(rpc_result(r->json_body()["id"].get<int>()));
    } else {
      r->respond(405);
    }
    ex.run_until_idle();
  }
  ASSERT_EQ(resent.size(), 2u);
  EXPECT_EQ(resent[0], rpc_request(1, "tools/call"));
  EXPECT_EQ(resent[1], rpc_request(2, "tools/list"));
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0], rpc_result(1));
  EXPECT_EQ(received[1], rpc_result(2));
  EXPECT_TRUE(closes.empty());
  int inits = 0;
  for (const auto& r : http.all()) {
    if (r.json_body().is_object() && r.json_body().value("method", "") == "initialize") ++inits;
  }
  EXPECT_EQ(inits, 2);
}

TEST_F(HttpTransportTest, Streamable_A404ForTheOldSessionAfterTheReplayIsResentWithoutAnotherOne) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/call"));
  send(rpc_request(2, "tools/list"));
  auto call = next();
  ASSERT_TRUE(call);
  auto list = next();
  ASSERT_TRUE(list);
  call->respond(404);
  auto reinit = next();
  ASSERT_TRUE(reinit);
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto resent_call = next();
  ASSERT_TRUE(resent_call);
  EXPECT_EQ(resent_call->json_body(), rpc_request(1, "tools/call"));
  auto get = next();
  ASSERT_TRUE(get);
  get->respond(405);
  // Only now does the server answer the request that went out with s1.
  list->respond(404);
  auto resent_list = next();
  ASSERT_TRUE(resent_list);
  EXPECT_EQ(resent_list->json_body(), rpc_request(2, "tools/list"));
  EXPECT_EQ(resent_list->header("Mcp-Session-Id"), "s2");
  resent_list->respond(404, "still unknown");  // its one retry is used: it fails
  ex.run_until_idle();
  json error = only_error();
  EXPECT_EQ(received[0]["id"], 2);
  EXPECT_EQ(error["data"].value("status", 0), 404);
  EXPECT_EQ(http.pending(), 0u);
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Streamable_AReplayThatIsNeverAnsweredClosesWithinItsBound) {
  auto o = options();
  o.reinitialize_timeout_ms = 5000;
  open(o);
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/call"));
  auto call = next();
  ASSERT_TRUE(call);
  call->respond(404);
  auto reinit = next();
  ASSERT_TRUE(reinit);
  ex.advance(Millis(4999));
  EXPECT_TRUE(closes.empty());
  ex.advance(Millis(1));
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::timeout);
  EXPECT_EQ(closes[0].message,
            "Server \"x\": the session expired and re-initializing did not finish within 5000 ms");
  EXPECT_TRUE(reinit->aborted());
}

TEST_F(HttpTransportTest, Streamable_ARequestCancelledDuringTheReplayIsNotResent) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s1"));
  send(rpc_request(1, "tools/call"));
  auto call = next();
  ASSERT_TRUE(call);
  call->respond(404);
  auto reinit = next();
  ASSERT_TRUE(reinit);
  send(rpc_notification("notifications/cancelled", {{"requestId", 1}, {"reason", "timeout"}}));
  reinit->respond_json(init_result(), {{"Mcp-Session-Id", "s2"}});
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  ex.run_until_idle();
  std::vector<std::string> methods;
  while (auto r = http.take()) {
    methods.push_back(r->method() + " " +
                      (r->json_body().is_object() ? r->json_body().value("method", "") : ""));
  }
  EXPECT_EQ(methods, (std::vector<std::string>{"POST notifications/cancelled", "GET "}));
}

// --- Streamable HTTP: errors -----------------------------------------------------------

TEST_F(HttpTransportTest, Streamable_AnHtmlErrorPageIsNamedByItsTitleNotPasted) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->head(500, {{"Content-Type", "text/html"}});
  post->chunks("\n<!DOCTYPE html>\n<HTML><head><TITLE>\n  500   Internal\n Error </TITLE>"
               "<style>body{margin:0}</style></head><body><h1>Not Found</h1></body></html>", 40);
  post->complete();
  ex.run_until_idle();
  EXPECT_EQ(only_error().value("message", ""), std::string("Server \"x\": HTTP 500 from ") + kUrl +
                                                   ": an HTML page titled \"500 Internal Error\"");

  received.clear();
  send(rpc_request(2, "tools/call"));
  auto untitled = next();
  ASSERT_TRUE(untitled);
  untitled->respond(500, "<html><body>Bad gateway</body></html>");
  ex.run_until_idle();
  EXPECT_EQ(only_error().value("message", ""),
            std::string("Server \"x\": HTTP 500 from ") + kUrl + ": an HTML page");

  received.clear();
  send(rpc_request(3, "tools/call"));
  auto text = next();  // a body that only mentions <html> is shown as it came
  ASSERT_TRUE(text);
  text->respond(400, "bad input: <html> is not allowed");
  ex.run_until_idle();
  EXPECT_EQ(only_error().value("message", ""),
            std::string("Server \"x\": HTTP 400 from ") + kUrl + ": bad input: <html> is not allowed");
}

TEST_F(HttpTransportTest, Streamable_NonSuccessFailsOnlyThatRequestWithStatusAndAtMost1KiBOfBody) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  const std::string body = std::string(1000, 'a') + std::string(2000, 'b');
  post->head(500, {{"Content-Type", "text/plain"}});
  post->chunks(body, 700);
  post->complete();
  ex.run_until_idle();

  json error = only_error();
  EXPECT_EQ(received[0]["id"], 1);
  EXPECT_EQ(error.value("message", ""), std::string("Server \"x\": HTTP 500 from ") + kUrl + ": " +
                                            body.substr(0, 1024));
  EXPECT_EQ(error["data"].value("status", 0), 500);
  EXPECT_TRUE(post->aborted());  // it stopped reading after 1 KiB
  EXPECT_TRUE(closes.empty());

  // The connection is still usable.
  send(rpc_request(2, "ping"));
  auto ping = next();
  ASSERT_TRUE(ping);
  ping->respond_json(rpc_result(2));
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[1], rpc_result(2));
}

TEST_F(HttpTransportTest, Streamable_InitializeFailureClosesWithTheHttpError) {
  open(options());
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond(405, "Method Not Allowed");  // explicit `http`: no fallback
  ex.run_until_idle();
  EXPECT_TRUE(received.empty());
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::http_status);
  EXPECT_EQ(closes[0].message,
            std::string("Server \"x\": HTTP 405 from ") + kUrl + ": Method Not Allowed");
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Streamable_ARefusedPostClosesTheTransportNamingTheServer) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  send(rpc_request(2, "ping"));
  auto call = next();
  ASSERT_TRUE(call);
  call->respond_sse_head();  // in flight when the server goes away
  auto ping = next();
  ASSERT_TRUE(ping);
  ping->fail(Error::make(ErrorCode::transport, "connection refused"));
  ex.run_until_idle();
  // The server is gone: the transport closes (the RpcPeer fails every pending request
  // once from on_close), instead of answering each request with its own error.
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::transport);
  EXPECT_EQ(closes[0].message, std::string("Server \"x\": POST ") + kUrl +
                                   " failed: connection refused");
  EXPECT_TRUE(received.empty());
  EXPECT_TRUE(call->aborted());
  EXPECT_FALSE(transport->send(rpc_request(3, "ping")).ok());
  ex.advance(Millis(60000));
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Streamable_ATimedOutPostFailsOnlyThatRequest) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "ping"));
  auto post = next();
  ASSERT_TRUE(post);
  post->fail(Error::make(ErrorCode::timeout, "no response within 100 ms"));
  ex.run_until_idle();
  json error = only_error();
  EXPECT_EQ(error["data"].value("transport_error", ""), "timeout");
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Streamable_AServerErrorDoesNotCloseTheTransport) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  for (int id = 1; id <= 3; ++id) {
    send(rpc_request(id, "tools/call"));
    auto post = next();
    ASSERT_TRUE(post);
    post->respond(id == 1 ? 500 : (id == 2 ? 502 : 503), "down for a moment");
    ex.run_until_idle();
  }
  EXPECT_EQ(received.size(), 3u);
  EXPECT_TRUE(closes.empty());
  EXPECT_TRUE(transport->send(rpc_request(4, "ping")).ok());
}

TEST_F(HttpTransportTest, Streamable_CorsRejectionClosesWithTheFix) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "ping"));
  auto post = next();
  ASSERT_TRUE(post);
  post->fail(make_cors_error(kUrl));
  ex.run_until_idle();
  // A browser reports an unreachable server and a CORS rejection alike: both are a lost
  // connection, and the close error keeps the fix.
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::transport);
  EXPECT_EQ(closes[0].data.value("cors", false), true);
  EXPECT_NE(closes[0].message.find("Access-Control-Expose-Headers"), std::string::npos);
  EXPECT_NE(closes[0].message.find("Server \"x\""), std::string::npos);
}

TEST_F(HttpTransportTest, Streamable_ASendThatCannotStartFailsThatRequestLater) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  http.fail_next_send(Error::make(ErrorCode::transport, "no route"));
  ASSERT_TRUE(transport->send(rpc_request(1, "ping")).ok());
  EXPECT_TRUE(received.empty());  // never inside send()
  ex.run_until_idle();
  json error = only_error();
  EXPECT_NE(error.value("message", "").find("no route"), std::string::npos);
}

TEST_F(HttpTransportTest, Streamable_ARequestAnswered202WithoutAResponseFails) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "ping"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond(202);
  ex.run_until_idle();
  json error = only_error();
  EXPECT_NE(error.value("message", "").find("without a JSON-RPC response"), std::string::npos);
}

// --- Streamable HTTP: close ------------------------------------------------------------

TEST_F(HttpTransportTest, Streamable_CloseSendsDeleteWithTheSessionIdThenReportsClosed) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake("s9"));
  send(rpc_request(1, "tools/call"));
  auto pending = next();
  ASSERT_TRUE(pending);
  transport->close();
  EXPECT_TRUE(pending->aborted());
  auto del = next();
  ASSERT_TRUE(del);
  EXPECT_EQ(del->method(), "DELETE");
  EXPECT_EQ(del->url(), kUrl);
  EXPECT_EQ(del->header("Mcp-Session-Id"), "s9");
  EXPECT_GT(del->request().timeout_ms, 0);
  EXPECT_TRUE(closes.empty());
  del->respond(200);
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
  EXPECT_FALSE(transport->send(rpc_request(2, "ping")).ok());
}

TEST_F(HttpTransportTest, Streamable_CloseIsBoundedWhenTheDeleteNeverAnswers) {
  auto o = options();
  o.close_timeout_ms = 1500;
  open(o);
  ASSERT_NO_FATAL_FAILURE(handshake());
  transport->close();
  auto del = next();
  ASSERT_TRUE(del);
  ex.advance(Millis(1499));
  EXPECT_TRUE(closes.empty());
  ex.advance(Millis(1));
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
  EXPECT_TRUE(del->aborted());
}

TEST_F(HttpTransportTest, Streamable_CloseWithoutASessionSendsNoDelete) {
  open(options());
  transport->close();
  transport->close();  // idempotent
  EXPECT_TRUE(closes.empty());  // never inside close()
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(http.all().size(), 0u);
}

TEST_F(HttpTransportTest, Streamable_DestroyingTheTransportAbortsItsRequestsSilently) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  transport.reset();
  EXPECT_TRUE(post->aborted());
  post->chunk(sse_event(rpc_result(1)));
  ex.run_until_idle();
  EXPECT_TRUE(received.empty());
  EXPECT_TRUE(closes.empty());
}

// --- automatic fallback to legacy SSE --------------------------------------------------

class FallbackTest : public HttpTransportTest, public ::testing::WithParamInterface<int> {};

TEST_P(FallbackTest, Auto_FallsBackToLegacySseWhenInitializeIsRejected) {
  open(options(HttpTransportMode::automatic));
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  EXPECT_EQ(init->method(), "POST");
  init->respond(GetParam(), "nope");

  auto stream = next();
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->method(), "GET");
  EXPECT_EQ(stream->url(), kUrl);
  EXPECT_EQ(stream->header("Accept"), "text/event-stream");
  stream->respond_sse_head();
  stream->chunk("event: endpoint\ndata: /message?sessionId=abc\n\n");

  auto replay = next();
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->method(), "POST");
  EXPECT_EQ(replay->url(), "http://mcp.test:8080/message?sessionId=abc");
  EXPECT_EQ(replay->json_body(), init_request());
  replay->respond(202, "Accepted");
  stream->chunk(sse_event(init_result(), "", "message"));
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], init_result());
  EXPECT_TRUE(closes.empty());

  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->url(), "http://mcp.test:8080/message?sessionId=abc");
}

INSTANTIATE_TEST_SUITE_P(RejectionStatuses, FallbackTest, ::testing::Values(400, 404, 405));

TEST_F(HttpTransportTest, Auto_DoesNotFallBackOnAServerError) {
  open(options(HttpTransportMode::automatic));
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond(500, "boom");
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::http_status);
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpTransportTest, Auto_KeepsStreamableHttpOnceInitializeSucceeded) {
  open(options(HttpTransportMode::automatic));
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/list"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond(404, "no");
  ex.run_until_idle();
  // A 404 later is a session expiry (re-initialize over Streamable HTTP), never a fallback.
  auto reinit = next();
  ASSERT_TRUE(reinit);
  EXPECT_EQ(reinit->method(), "POST");
  EXPECT_EQ(reinit->json_body(), init_request());
}

TEST_F(HttpTransportTest, Auto_FailedFallbackSaysWhatStreamableHttpAnswered) {
  open(options(HttpTransportMode::automatic));
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond(405);
  auto stream = next();
  ASSERT_TRUE(stream);
  stream->respond(404, "Not Found");
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].message, std::string("Server \"x\": HTTP 404 from ") + kUrl +
                                   ": Not Found (after Streamable HTTP answered HTTP 405 to "
                                   "initialize)");
}

// --- legacy HTTP+SSE -------------------------------------------------------------------

TEST_F(HttpTransportTest, Sse_PostsToTheEndpointAndReadsAnswersFromTheStream) {
  open(options(HttpTransportMode::sse));
  auto stream = next();  // start() opens the stream
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->method(), "GET");
  send(init_request());  // before the endpoint: waits
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);
  stream->respond_sse_head();
  stream->chunks("event: endpoint\ndata: messages/?session_id=42\n\n", 5);

  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->url(), "http://mcp.test:8080/messages/?session_id=42");
  EXPECT_EQ(post->header("Content-Type"), "application/json");
  EXPECT_EQ(post->json_body(), init_request());
  post->respond(202);
  stream->chunks(sse_event(init_result()), 7);
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], init_result());
}

TEST_F(HttpTransportTest, Sse_RejectsAnEndpointOnAnotherOriginThanTheConfiguredUrl) {
  open(options(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  send(init_request());
  stream->respond_sse_head();
  stream->chunk("event: endpoint\ndata: http://evil.test/message\n\n");
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::protocol);
  EXPECT_EQ(
      closes[0].message,
      std::string("Server \"x\": the SSE endpoint http://evil.test/message is not on the same "
                  "origin as the configured URL ") +
          kUrl + "; refusing to send messages there");
  EXPECT_EQ(http.pending(), 0u);  // nothing was posted there
  EXPECT_TRUE(stream->aborted());
}

TEST_F(HttpTransportTest, Sse_TheStreamEndingClosesTheTransport) {
  open(options(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  stream->respond_sse_head();
  stream->chunk("event: endpoint\ndata: /m\n\n");
  stream->complete();
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
  EXPECT_EQ(closes[0].message,
            std::string("Server \"x\": the server closed the SSE stream (") + kUrl + ")");
}

TEST_F(HttpTransportTest, Sse_ARejectedPostFailsOnlyThatRequest) {
  open(options(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  stream->respond_sse_head();
  stream->chunk("event: endpoint\ndata: /m\n\n");
  ex.run_until_idle();
  send(rpc_request(7, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond(400, "bad");
  ex.run_until_idle();
  json error = only_error();
  EXPECT_EQ(received[0]["id"], 7);
  EXPECT_EQ(error.value("message", ""), "Server \"x\": HTTP 400 from http://mcp.test:8080/m: bad");
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Sse_ARefusedPostClosesTheTransport) {
  open(options(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  stream->respond_sse_head();
  stream->chunk("event: endpoint\ndata: /m\n\n");
  ex.run_until_idle();
  send(rpc_request(7, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->fail(Error::make(ErrorCode::transport, "connection refused"));
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::transport);
  EXPECT_EQ(closes[0].message,
            "Server \"x\": POST http://mcp.test:8080/m failed: connection refused");
  EXPECT_TRUE(received.empty());
  EXPECT_TRUE(stream->aborted());
}

// What the owner's reconnect meets when the server is still down: a new transport whose
// stream is refused closes at once, naming the server.
TEST_F(HttpTransportTest, Sse_ARefusedStreamClosesNamingTheServer) {
  open(options(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  send(init_request());
  stream->fail(Error::make(ErrorCode::transport, "connection refused"));
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::transport);
  EXPECT_EQ(closes[0].message, std::string("Server \"x\": GET ") + kUrl +
                                   " failed: connection refused");
  EXPECT_EQ(http.all().size(), 1u);
}

TEST_F(HttpTransportTest, Sse_CloseAbortsTheStreamAndReportsClosed) {
  open(options(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  transport->close();
  EXPECT_TRUE(stream->aborted());
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
}

// --- redirects and origin-locked headers -----------------------------------------------

// Every header that must stay with the configured origin (SPEC §17), as credentialed()
// sets them up: the token, a configured secret, a configured cookie, and the session.
const std::vector<std::string> kOriginBound = {"Authorization", "X-Api-Key", "Cookie",
                                               "Mcp-Session-Id", "MCP-Protocol-Version"};

// The parameter is origin_locked: the rules hold whatever the header policy.
class CrossOriginTest : public HttpTransportTest, public ::testing::WithParamInterface<bool> {
 protected:
  HttpTransportOptions credentialed(HttpTransportMode mode) {
    storage.token = "t1";
    auto o = options(mode);
    o.auth_storage = &storage;
    o.origin_locked = GetParam();
    o.headers.add("X-Api-Key", "secret");
    o.headers.add("Cookie", "sid=c00kie");
    return o;
  }

  // Streamable handshake with session s1, up to the GET stream request (not answered).
  std::optional<FakeHttpExchange> handshake_to_get_stream() {
    send(init_request());
    auto init = next();
    if (!init) return std::nullopt;
    init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
    ex.run_until_idle();
    send(initialized());
    auto note = next();
    if (!note) return std::nullopt;
    note->respond(202);
    received.clear();
    return next();
  }

  void expect_all_bound(const FakeHttpExchange& r) {
    EXPECT_EQ(r.header("Authorization"), "Bearer t1");
    EXPECT_EQ(r.header("X-Api-Key"), "secret");
    EXPECT_EQ(r.header("Cookie"), "sid=c00kie");
    EXPECT_EQ(r.header("Mcp-Session-Id"), "s1");
    EXPECT_EQ(r.header("MCP-Protocol-Version"), "2025-11-25");
  }
};

TEST_P(CrossOriginTest, Redirect_ACrossOriginHopOfTheGetStreamCarriesNoOriginBoundHeader) {
  open(credentialed(HttpTransportMode::streamable));
  auto get = handshake_to_get_stream();
  ASSERT_TRUE(get);
  ASSERT_EQ(get->method(), "GET");
  expect_all_bound(*get);
  EXPECT_FALSE(get->request().follow_redirects);  // it carries credentials: the core follows
  get->respond(302, "", {{"Location", "http://other.test:9000/events"}});

  auto hop = next();
  ASSERT_TRUE(hop);
  EXPECT_EQ(hop->method(), "GET");
  EXPECT_EQ(hop->url(), "http://other.test:9000/events");
  for (const std::string& name : kOriginBound) EXPECT_FALSE(hop->has_header(name)) << name;
  EXPECT_EQ(hop->header("Accept"), "text/event-stream");
  // What the other origin says about the session never replaces ours.
  hop->respond_sse_head({{"Mcp-Session-Id", "planted"}});
  ex.run_until_idle();

  send(rpc_request(1, "ping"));
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->url(), kUrl);
  expect_all_bound(*post);
}

TEST_P(CrossOriginTest, Redirect_ACrossOriginHopOfAResumeCarriesNoLastEventIdNorCredentials) {
  open(credentialed(HttpTransportMode::streamable));
  auto get = handshake_to_get_stream();
  ASSERT_TRUE(get);
  get->respond(405);
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  post->chunk(sse_raw("id: e1\nretry: 300\ndata:"));
  post->complete();
  ex.run_until_idle();
  ex.advance(Millis(300));
  auto resume = next();
  ASSERT_TRUE(resume);
  EXPECT_EQ(resume->header("Last-Event-ID"), "e1");
  expect_all_bound(*resume);
  resume->respond(307, "", {{"Location", "https://cdn.test/resume"}});

  auto hop = next();
  ASSERT_TRUE(hop);
  EXPECT_EQ(hop->url(), "https://cdn.test/resume");
  EXPECT_FALSE(hop->has_header("Last-Event-ID"));
  for (const std::string& name : kOriginBound) EXPECT_FALSE(hop->has_header(name)) << name;
}

TEST_P(CrossOriginTest, Redirect_ASameOriginHopKeepsEveryHeader) {
  open(credentialed(HttpTransportMode::streamable));
  auto get = handshake_to_get_stream();
  ASSERT_TRUE(get);
  get->respond(307, "", {{"Location", "/v2/events"}});
  auto hop = next();
  ASSERT_TRUE(hop);
  EXPECT_EQ(hop->url(), "http://mcp.test:8080/v2/events");
  expect_all_bound(*hop);
}

TEST_P(CrossOriginTest, Redirect_ALegacyStreamRedirectedToAnotherOriginSendsNothingThere) {
  open(credentialed(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->header("Authorization"), "Bearer t1");
  EXPECT_EQ(stream->header("X-Api-Key"), "secret");
  EXPECT_FALSE(stream->request().follow_redirects);
  send(init_request());
  stream->respond(302, "", {{"Location", "http://other.test:9000/sse"}});

  auto hop = next();
  ASSERT_TRUE(hop);
  EXPECT_EQ(hop->url(), "http://other.test:9000/sse");
  for (const std::string& name : kOriginBound) EXPECT_FALSE(hop->has_header(name)) << name;
  hop->respond_sse_head();
  // A relative endpoint resolves against the redirected stream: the other origin.
  hop->chunk("event: endpoint\ndata: /message\n\n");
  ex.run_until_idle();

  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::protocol);
  EXPECT_EQ(closes[0].message,
            std::string("Server \"x\": the SSE endpoint http://other.test:9000/message is not on "
                        "the same origin as the configured URL ") +
                kUrl +
                " (the stream was redirected to http://other.test:9000/sse); refusing to send "
                "messages there");
  EXPECT_EQ(http.all().size(), 2u);  // the stream and its hop: no POST anywhere
  EXPECT_TRUE(hop->aborted());
}

TEST_P(CrossOriginTest, Redirect_ALegacyEndpointOnTheConfiguredOriginStillWorksAfterARedirect) {
  open(credentialed(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  stream->respond(302, "", {{"Location", "http://other.test:9000/sse"}});
  auto hop = next();
  ASSERT_TRUE(hop);
  hop->respond_sse_head();
  hop->chunk("event: endpoint\ndata: http://mcp.test:8080/message?s=1\n\n");
  send(init_request());
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->url(), "http://mcp.test:8080/message?s=1");
  EXPECT_EQ(post->header("Authorization"), "Bearer t1");
  EXPECT_EQ(post->header("X-Api-Key"), "secret");
  EXPECT_TRUE(closes.empty());
}

INSTANTIATE_TEST_SUITE_P(HeaderPolicies, CrossOriginTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("OriginLocked") : std::string("Default");
                         });

TEST_F(HttpTransportTest, Redirect_ARequestWithoutCredentialsMayBeFollowedByThePlatform) {
  open(options(HttpTransportMode::sse));  // no headers, no token
  auto stream = next();
  ASSERT_TRUE(stream);
  EXPECT_TRUE(stream->request().follow_redirects);
  stream->head(200, {{"Content-Type", "text/event-stream"}}, "http://mcp.test:8080/v2/sse");
  stream->chunk("event: endpoint\ndata: /message\n\n");
  send(rpc_request(1, "ping"));
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->url(), "http://mcp.test:8080/message");  // resolved against the final URL
}

TEST_F(HttpTransportTest, Redirect_AnEndpointWhereThePlatformsRedirectLedIsRefused) {
  open(options(HttpTransportMode::sse));
  auto stream = next();
  ASSERT_TRUE(stream);
  ASSERT_TRUE(stream->request().follow_redirects);
  stream->head(200, {{"Content-Type", "text/event-stream"}}, "http://moved.test/sse");
  stream->chunk("event: endpoint\ndata: /message\n\n");
  send(rpc_request(1, "ping"));
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_NE(closes[0].message.find("the SSE endpoint http://moved.test/message is not on the same "
                                   "origin as the configured URL"),
            std::string::npos);
  EXPECT_EQ(http.all().size(), 1u);
}

TEST_F(HttpTransportTest, Redirect_AnHttpsToHttpHopIsRefused) {
  auto o = options(HttpTransportMode::sse);
  o.url = "https://mcp.test/sse";
  o.headers.add("X-Api-Key", "secret");
  open(o);
  auto stream = next();
  ASSERT_TRUE(stream);
  stream->respond(301, "", {{"Location", "http://mcp.test/sse"}});
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::protocol);
  EXPECT_EQ(closes[0].message,
            "Server \"x\": HTTP 301 from https://mcp.test/sse redirects to http://mcp.test/sse: "
            "refusing an https to http redirect (it would go unencrypted)");
  EXPECT_EQ(http.all().size(), 1u);  // nothing went out unencrypted
}

TEST_F(HttpTransportTest, Redirect_AnHttpsToHttpRedirectThePlatformFollowedIsRefused) {
  auto o = options(HttpTransportMode::sse);
  o.url = "https://mcp.test/sse";
  open(o);
  auto stream = next();
  ASSERT_TRUE(stream);
  ASSERT_TRUE(stream->request().follow_redirects);
  stream->head(200, {{"Content-Type", "text/event-stream"}}, "http://mcp.test/sse");
  stream->chunk("event: endpoint\ndata: /message\n\n");
  send(rpc_request(1, "ping"));
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_NE(closes[0].message.find("refusing an https to http redirect"), std::string::npos);
  EXPECT_TRUE(stream->aborted());
  EXPECT_EQ(http.all().size(), 1u);
}

TEST_F(HttpTransportTest, Redirect_AGetStreamRedirectedFromHttpsToHttpIsNotOpened) {
  auto o = options();
  o.url = "https://mcp.test/mcp";
  open(o);
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  get->respond(302, "", {{"Location", "http://mcp.test/events"}});
  ex.advance(Millis(120000));
  EXPECT_EQ(http.pending(), 0u);  // not followed, not retried
  EXPECT_TRUE(closes.empty());    // the POSTs still work
  bool warned = false;
  for (const auto& w : logger.warnings)
    warned = warned || w.find("https to http") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST_F(HttpTransportTest, Redirect_APostRedirectIsNotFollowedAndSaysWhatToConfigure) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond(307, "", {{"Location", "https://new.test/mcp"}});
  ex.run_until_idle();
  json error = only_error();
  EXPECT_EQ(error.value("message", ""),
            std::string("Server \"x\": HTTP 307 from ") + kUrl +
                " (mcprt does not follow redirects of POST requests; configure the URL it "
                "redirects to: https://new.test/mcp)");
  EXPECT_EQ(http.pending(), 0u);
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Redirect_ARedirectThePlatformCouldNotShowFailsOnlyThatRequest) {
  open(options());
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/call"));
  auto post = next();
  ASSERT_TRUE(post);
  // What the browser's fetch client reports for an opaque redirect.
  post->fail(Error::make(ErrorCode::transport, "the server redirected", json{{"redirect", true}}));
  ex.run_until_idle();
  json error = only_error();
  EXPECT_NE(error.value("message", "").find("the server redirected"), std::string::npos);
  EXPECT_TRUE(closes.empty());  // a redirect is not a server that is gone
}

TEST_F(HttpTransportTest, Redirect_TooManyHopsFailWithAClearError) {
  auto o = options(HttpTransportMode::sse);
  o.origin_locked = true;
  o.max_redirects = 2;
  open(o);
  for (int hop = 0; hop < 3; ++hop) {
    auto r = next();
    ASSERT_TRUE(r);
    r->respond(302, "", {{"Location", "/loop" + std::to_string(hop)}});
  }
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_NE(closes[0].message.find("too many redirects"), std::string::npos);
}

// --- auth --------------------------------------------------------------------------------

TEST_F(HttpTransportTest, Auth_SendsTheBearerTokenFromStorage) {
  FakeAuthStorage storage(ex);
  storage.token = "t1";
  auto o = options();
  o.auth_storage = &storage;
  o.credential_id = "cred";
  open(o);
  send(init_request());
  auto init = next();
  ASSERT_TRUE(init);
  EXPECT_EQ(init->header("Authorization"), "Bearer t1");
  ASSERT_EQ(storage.requests.size(), 1u);
  EXPECT_EQ(storage.requests[0].server_name, "x");
  EXPECT_EQ(storage.requests[0].credential_id, "cred");
  EXPECT_EQ(storage.requests[0].url, kUrl);
  init->respond_json(init_result());
  send(initialized());
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->header("Authorization"), "Bearer t1");
  EXPECT_EQ(storage.gets, 1);  // asked once per connection
}

TEST_F(HttpTransportTest, Auth_AConfiguredAuthorizationHeaderWins) {
  FakeAuthStorage storage(ex);
  storage.token = "from-storage";
  auto o = options();
  o.auth_storage = &storage;
  o.headers.add("authorization", "Basic abc");
  open(o);
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "ping"));
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->header("Authorization"), "Basic abc");
  post->respond(401, "who are you");
  ex.run_until_idle();
  EXPECT_EQ(storage.gets, 0);
  EXPECT_EQ(storage.refreshes, 0);  // nothing to refresh: the config decides
  EXPECT_EQ(only_error()["data"].value("status", 0), 401);
}

TEST_F(HttpTransportTest, Auth_RefreshesTheTokenOnceOn401AndRetries) {
  FakeAuthStorage storage(ex);
  storage.token = "old";
  storage.refreshed = "new";
  auto o = options();
  o.auth_storage = &storage;
  open(o);
  send(init_request());
  auto first = next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->header("Authorization"), "Bearer old");
  first->respond(401, "expired");
  auto retry = next();
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->json_body(), init_request());
  EXPECT_EQ(retry->header("Authorization"), "Bearer new");
  ASSERT_EQ(storage.rejected_tokens, std::vector<std::string>{"old"});
  retry->respond_json(init_result());
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], init_result());
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpTransportTest, Auth_A403AfterTheRefreshFailsTheRequest) {
  FakeAuthStorage storage(ex);
  storage.token = "old";
  storage.refreshed = "new";
  auto o = options();
  o.auth_storage = &storage;
  open(o);
  ASSERT_NO_FATAL_FAILURE(handshake());
  send(rpc_request(1, "tools/list"));
  auto first = next();
  ASSERT_TRUE(first);
  first->respond(403, "forbidden");
  auto retry = next();
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->header("Authorization"), "Bearer new");
  retry->respond(403, "still forbidden");
  ex.run_until_idle();
  EXPECT_EQ(storage.refreshes, 1);
  EXPECT_EQ(http.pending(), 0u);
  json error = only_error();
  EXPECT_EQ(error["data"].value("status", 0), 403);
  EXPECT_NE(error.value("message", "").find("still forbidden"), std::string::npos);
}

TEST_F(HttpTransportTest, Auth_OriginLockedTokenStaysOnTheConfiguredOrigin) {
  FakeAuthStorage storage(ex);
  storage.token = "t1";
  auto o = options(HttpTransportMode::sse);
  o.auth_storage = &storage;
  o.origin_locked = true;
  open(o);
  auto first = next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->header("Authorization"), "Bearer t1");
  first->respond(301, "", {{"Location", "https://cdn.test/sse"}});
  auto second = next();
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->has_header("Authorization"));
}

TEST(HttpTransportFactory, RejectsAUrlThatIsNotHttp) {
  ManualExecutor ex;
  FakeHttpClient http(ex);
  HttpTransportOptions o;
  o.url = "file:///etc/passwd";
  o.server_name = "bad";
  auto made = make_http_transport(ex, http, o);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().code, ErrorCode::invalid_config);
  EXPECT_NE(made.error().message.find("Server \"bad\""), std::string::npos);
  EXPECT_TRUE(http.all().empty());
}

}  // namespace
}  // namespace http_transport_test
}  // namespace mcprt
