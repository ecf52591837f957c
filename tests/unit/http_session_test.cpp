// End to end in memory: the real ClientSession (and its RpcPeer) over the HTTP transports,
// with FakeHttpClient playing the server. Proves that the transport's choices (synthesized
// error responses, the initialize failure closing, the fallback, session re-initialize)
// come out right at the session API.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "mcprt/client.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/testing/fake_http_client.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace http_session_test {  // this file's own names in a unity batch
namespace {

using testing::FakeHttpClient;
using testing::FakeHttpExchange;
using testing::ManualExecutor;
using testing::sse_event;

constexpr const char* kUrl = "http://127.0.0.1:3001/mcp";

json result_for(const json& request, json result) {
  return {{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", std::move(result)}};
}

json initialize_result(const json& request) {
  return result_for(request, {{"protocolVersion", request["params"]["protocolVersion"]},
                              {"capabilities", {{"tools", json::object()}}},
                              {"serverInfo", {{"name", "srv"}, {"version", "2.0"}}}});
}

class HttpSessionTest : public ::testing::Test {
 protected:
  void create(HttpTransportMode mode) {
    HttpTransportOptions o;
    o.url = kUrl;
    o.server_name = "everything";
    o.mode = mode;
    auto t = make_http_transport(ex, http, o);
    ASSERT_TRUE(t.ok()) << t;
    ClientOptions co;
    co.protocol = "legacy";  // the 2025 Streamable HTTP session (the probe: client_modern_test)
    co.server_name = "everything";
    co.roots = roots_from_directories({"/work"});
    co.on_close = [this](const Error& e) { session_closes.push_back(e); };
    session = ClientSession::create(ex, std::move(t).value(), co);
    session->connect([this](Status s) { connected = std::move(s); });
  }

  std::optional<FakeHttpExchange> next() {
    ex.run_until_idle();
    return http.take();
  }

  // Answers the Streamable handshake the way server-everything does: SSE-framed
  // initialize result with a session id, 202 for initialized, 405 for the GET stream.
  void serve_streamable_handshake() {
    auto init = next();
    ASSERT_TRUE(init);
    ASSERT_EQ(init->json_body().value("method", ""), "initialize");
    init->respond_sse_head({{"mcp-session-id", "sess-1"}});
    init->chunk(sse_event(initialize_result(init->json_body()), "ev-1", "message"));
    init->complete();
    auto note = next();
    ASSERT_TRUE(note);
    ASSERT_EQ(note->json_body().value("method", ""), "notifications/initialized");
    note->respond(202);
    auto get = next();
    ASSERT_TRUE(get);
    ASSERT_EQ(get->method(), "GET");
    get->respond(405);
    ex.run_until_idle();
  }

  ManualExecutor ex;
  FakeHttpClient http{ex};
  std::shared_ptr<ClientSession> session;
  std::optional<Status> connected;
  std::vector<Error> session_closes;
};

TEST_F(HttpSessionTest, Session_ConnectsAndListsToolsOverStreamableHttp) {
  create(HttpTransportMode::automatic);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  ASSERT_TRUE(connected.has_value());
  ASSERT_TRUE(connected->ok()) << *connected;
  EXPECT_EQ(session->server().protocol_version, "2025-11-25");

  std::optional<Result<std::vector<json>>> tools;
  session->list_tools([&](Result<std::vector<json>> r) { tools = std::move(r); });
  auto list = next();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->header("Mcp-Session-Id"), "sess-1");
  EXPECT_EQ(list->header("MCP-Protocol-Version"), "2025-11-25");
  list->respond_json(result_for(list->json_body(), {{"tools", json::array({{{"name", "echo"}}})}}));
  ex.run_until_idle();
  ASSERT_TRUE(tools.has_value());
  ASSERT_TRUE(tools->ok()) << *tools;
  ASSERT_EQ(tools->value().size(), 1u);
  EXPECT_EQ(tools->value()[0]["name"], "echo");
}

TEST_F(HttpSessionTest, Session_AnswersAServerRequestThatArrivesOnTheCallsStream) {
  create(HttpTransportMode::streamable);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  std::optional<Result<json>> called;
  session->call_tool("get-roots-list", json::object(), CallOptions{},
                     [&](Result<json> r) { called = std::move(r); });
  auto call = next();
  ASSERT_TRUE(call);
  call->respond_sse_head();
  // server-everything sends roots/list with id 0 before the tool result.
  call->chunk(sse_event({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "roots/list"}}, "e1"));
  auto answer = next();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->method(), "POST");
  EXPECT_EQ(answer->json_body()["id"], 0);
  ASSERT_TRUE(answer->json_body().contains("result"));
  EXPECT_EQ(answer->json_body()["result"]["roots"][0]["uri"], "file:///work");
  answer->respond(202);
  call->chunk(sse_event(result_for(call->json_body(), {{"content", json::array()}}), "e2"));
  call->complete();
  ex.run_until_idle();
  ASSERT_TRUE(called.has_value());
  EXPECT_TRUE(called->ok()) << *called;
}

TEST_F(HttpSessionTest, Session_AnHttpErrorFailsOnlyThatCall) {
  create(HttpTransportMode::streamable);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  std::optional<Result<json>> first;
  session->call_tool("echo", json::object(), CallOptions{}, [&](Result<json> r) { first = std::move(r); });
  auto call = next();
  ASSERT_TRUE(call);
  call->respond(502, "Bad Gateway");
  ex.run_until_idle();
  ASSERT_TRUE(first.has_value());
  ASSERT_FALSE(first->ok());
  EXPECT_EQ(first->error().message,
            std::string("Server \"everything\": HTTP 502 from ") + kUrl + ": Bad Gateway");
  EXPECT_EQ(first->error().data.value("status", 0), 502);
  EXPECT_EQ(session->state(), ClientSession::State::ready);

  std::optional<Status> pinged;
  session->ping([&](Status s) { pinged = std::move(s); });
  auto ping = next();
  ASSERT_TRUE(ping);
  ping->respond_json(result_for(ping->json_body(), json::object()));
  ex.run_until_idle();
  ASSERT_TRUE(pinged.has_value());
  EXPECT_TRUE(pinged->ok()) << *pinged;
}

TEST_F(HttpSessionTest, Session_ConnectReportsTheHttpStatusOfAFailedInitialize) {
  create(HttpTransportMode::streamable);
  auto init = next();
  ASSERT_TRUE(init);
  init->respond(401, "Unauthorized");
  ex.run_until_idle();
  ASSERT_TRUE(connected.has_value());
  ASSERT_FALSE(connected->ok());
  EXPECT_EQ(connected->error().code, ErrorCode::http_status);
  EXPECT_NE(connected->error().message.find("HTTP 401"), std::string::npos);
  EXPECT_EQ(connected->error().message.rfind("Server \"everything\": ", 0), 0u);
}

TEST_F(HttpSessionTest, Session_ConnectsThroughTheLegacySseFallback) {
  create(HttpTransportMode::automatic);
  auto init = next();
  ASSERT_TRUE(init);
  init->respond(404, "Cannot POST /mcp");
  auto stream = next();
  ASSERT_TRUE(stream);
  ASSERT_EQ(stream->method(), "GET");
  stream->respond_sse_head();
  stream->chunk("event: endpoint\ndata: /message?sessionId=u1\n\n");
  auto replay = next();
  ASSERT_TRUE(replay);
  ASSERT_EQ(replay->json_body().value("method", ""), "initialize");
  replay->respond(202, "Accepted");
  stream->chunk(sse_event(initialize_result(replay->json_body()), "", "message"));
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->url(), "http://127.0.0.1:3001/message?sessionId=u1");
  EXPECT_EQ(note->json_body().value("method", ""), "notifications/initialized");
  note->respond(202);
  ex.run_until_idle();
  ASSERT_TRUE(connected.has_value());
  EXPECT_TRUE(connected->ok()) << *connected;
}

TEST_F(HttpSessionTest, Session_SurvivesASessionExpiryTransparently) {
  create(HttpTransportMode::streamable);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  std::optional<Status> pinged;
  session->ping([&](Status s) { pinged = std::move(s); });
  auto ping = next();
  ASSERT_TRUE(ping);
  ping->respond(404, "Session not found");
  auto reinit = next();
  ASSERT_TRUE(reinit);
  ASSERT_EQ(reinit->json_body().value("method", ""), "initialize");
  reinit->respond_json(initialize_result(reinit->json_body()), {{"Mcp-Session-Id", "sess-2"}});
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(202);
  auto retried = next();
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->json_body().value("method", ""), "ping");
  EXPECT_EQ(retried->header("Mcp-Session-Id"), "sess-2");
  retried->respond_json(result_for(retried->json_body(), json::object()));
  ex.run_until_idle();
  ASSERT_TRUE(pinged.has_value());
  EXPECT_TRUE(pinged->ok()) << *pinged;
  EXPECT_EQ(session->state(), ClientSession::State::ready);
}

// The server went away: the one POST that finds no server ends the whole session, so
// every call in flight fails exactly once with the reason (the owner reconnects).
TEST_F(HttpSessionTest, Session_ARefusedPostFailsEveryPendingCallOnceAndClosesTheSession) {
  create(HttpTransportMode::streamable);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  std::vector<Result<json>> slow_results, echo_results;
  session->call_tool("slow", json::object(), CallOptions{},
                     [&](Result<json> r) { slow_results.push_back(std::move(r)); });
  auto slow = next();
  ASSERT_TRUE(slow);
  slow->respond_sse_head();  // the server is working on it
  session->call_tool("echo", json::object(), CallOptions{},
                     [&](Result<json> r) { echo_results.push_back(std::move(r)); });
  auto echo = next();
  ASSERT_TRUE(echo);
  echo->fail(Error::make(ErrorCode::transport, "Connection refused"));
  ex.run_until_idle();

  ASSERT_EQ(slow_results.size(), 1u);
  ASSERT_EQ(echo_results.size(), 1u);
  const std::string why = std::string("Server \"everything\": POST ") + kUrl +
                          " failed: Connection refused";
  for (const auto* r : {&slow_results[0], &echo_results[0]}) {
    ASSERT_FALSE(r->ok());
    EXPECT_EQ(r->error().code, ErrorCode::transport);
    EXPECT_NE(r->error().message.find(why), std::string::npos) << r->error().message;
  }
  ASSERT_EQ(session_closes.size(), 1u);
  EXPECT_EQ(session_closes[0].message, why);
  EXPECT_EQ(session->state(), ClientSession::State::closed);
  EXPECT_TRUE(slow->aborted());
  ex.advance(Millis(120000));
  EXPECT_EQ(slow_results.size(), 1u);
  EXPECT_EQ(echo_results.size(), 1u);
}

TEST_F(HttpSessionTest, Session_A5xxFailsOnlyThatCallAndKeepsTheSession) {
  create(HttpTransportMode::streamable);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  std::optional<Result<json>> first;
  session->call_tool("echo", json::object(), CallOptions{},
                     [&](Result<json> r) { first = std::move(r); });
  auto call = next();
  ASSERT_TRUE(call);
  call->respond(503, "Service Unavailable");
  ex.run_until_idle();
  ASSERT_TRUE(first.has_value());
  ASSERT_FALSE(first->ok());
  EXPECT_EQ(first->error().data.value("status", 0), 503);
  EXPECT_EQ(first->error().data.value("transport_error", ""), "http_status");
  EXPECT_TRUE(session_closes.empty());
  EXPECT_EQ(session->state(), ClientSession::State::ready);
}

// The call hung forever when a 404 met the replayed notifications/initialized.
TEST_F(HttpSessionTest, Session_A404DuringTheReinitializeEndsTheCallOnceInsteadOfHanging) {
  create(HttpTransportMode::streamable);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  std::vector<Result<json>> results;
  session->call_tool("echo", json::object(), CallOptions{},
                     [&](Result<json> r) { results.push_back(std::move(r)); });
  auto call = next();
  ASSERT_TRUE(call);
  call->respond(404, "Session not found");
  auto reinit = next();
  ASSERT_TRUE(reinit);
  reinit->respond_json(initialize_result(reinit->json_body()), {{"Mcp-Session-Id", "sess-2"}});
  auto note = next();
  ASSERT_TRUE(note);
  note->respond(404, "Session not found");
  ex.run_until_idle();
  ASSERT_EQ(results.size(), 1u);
  ASSERT_FALSE(results[0].ok());
  EXPECT_NE(results[0].error().message.find("Server \"everything\": the session expired and "
                                            "re-initializing failed: HTTP 404"),
            std::string::npos)
      << results[0].error().message;
  EXPECT_EQ(session_closes.size(), 1u);
  EXPECT_EQ(http.pending(), 0u);
  ex.advance(Millis(120000));
  EXPECT_EQ(results.size(), 1u);
}

TEST_F(HttpSessionTest, Session_CloseDeletesTheHttpSession) {
  create(HttpTransportMode::streamable);
  ASSERT_NO_FATAL_FAILURE(serve_streamable_handshake());
  session->close();
  auto del = next();
  ASSERT_TRUE(del);
  EXPECT_EQ(del->method(), "DELETE");
  EXPECT_EQ(del->header("Mcp-Session-Id"), "sess-1");
  del->respond(200);
  ex.run_until_idle();
  EXPECT_EQ(session->state(), ClientSession::State::closed);
}

}  // namespace
}  // namespace http_session_test
}  // namespace mcprt
