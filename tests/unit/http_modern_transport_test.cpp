// The HTTP transports on the 2026-07-28 (stateless) wire: Transport::send_with with
// SendOptions{headers, stateless} (mcprt/http_transport.hpp, STATELESS MESSAGES), over
// FakeHttpClient and ManualExecutor — the headers, no session/GET/DELETE/resumption,
// cancellation by closing the stream, the server's own JSON-RPC error on a 4xx, and the
// automatic mode's fallback that only an initialize may trigger.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "mcprt/http_transport.hpp"
#include "mcprt/jsonrpc.hpp"
#include "mcprt/mcp_headers.hpp"
#include "mcprt/testing/fake_http_client.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "protocol/http_common.hpp"

namespace mcprt {
namespace http_modern_transport_test {  // this file's own names in a unity batch
namespace {

using testing::FakeHttpClient;
using testing::FakeHttpExchange;
using testing::ManualExecutor;
using testing::sse_event;
using testing::sse_raw;

constexpr const char* kUrl = "http://mcp.test:8080/mcp";
constexpr const char* kModern = "2026-07-28";

json rpc_request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}
json rpc_notification(const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}
json rpc_result(int id, json result = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}
json rpc_error(const json& id, int code, const std::string& message, json data = nullptr) {
  json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}
json init_request() {
  return rpc_request(0, "initialize",
                     {{"protocolVersion", "2025-11-25"},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
}
json init_result() {
  return rpc_result(0, {{"protocolVersion", "2025-11-25"},
                        {"capabilities", json::object()},
                        {"serverInfo", {{"name", "srv"}, {"version", "1"}}}});
}

// What the session sends for one request on the modern wire.
SendOptions modern(const std::string& method, const json& params) {
  SendOptions o;
  o.stateless = true;
  o.headers = modern_request_headers(kModern, method, params);
  return o;
}
SendOptions stateless_cancel() {
  SendOptions o;
  o.stateless = true;
  return o;
}
json cancelled(int id) {
  return rpc_notification("notifications/cancelled", {{"requestId", id}, {"reason", "aborted"}});
}

class HttpModernTransportTest : public ::testing::Test {
 protected:
  HttpTransportOptions options(HttpTransportMode mode = HttpTransportMode::streamable) {
    HttpTransportOptions o;
    o.url = kUrl;
    o.server_name = "x";
    o.mode = mode;
    return o;
  }

  void open(HttpTransportOptions o) {
    auto made = make_http_transport(ex, http, std::move(o));
    ASSERT_TRUE(made.ok()) << made;
    transport = std::move(made).value();
    TransportHandlers h;
    h.on_message = [this](json m) { received.push_back(std::move(m)); };
    h.on_close = [this](const Error& e) { closes.push_back(e); };
    transport->start(std::move(h));
  }

  // Sends a stateless request as the session would (its modern headers).
  void send_modern(const json& request) {
    ASSERT_TRUE(transport->send_with(request, modern(request["method"], request["params"])).ok());
  }

  std::optional<FakeHttpExchange> next() {
    ex.run_until_idle();
    return http.take();
  }

  ManualExecutor ex;
  FakeHttpClient http{ex};
  std::unique_ptr<Transport> transport;
  std::vector<json> received;
  std::vector<Error> closes;
};

// --- headers ---------------------------------------------------------------------------

TEST_F(HttpModernTransportTest, ThePostCarriesTheGivenHeadersExactly) {
  open(options());
  const json params = {{"name", "get_weather"}, {"arguments", {{"region", "Zürich"}}}};
  SendOptions o = modern("tools/call", params);
  o.headers.emplace_back("Mcp-Param-Region", *mcp_header_value("Zürich"));
  o.headers.emplace_back("Accept", "text/html");  // the transport's own: not replaced
  ASSERT_TRUE(transport->send_with(rpc_request(1, "tools/call", params), o).ok());
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->method(), "POST");
  EXPECT_EQ(post->url(), kUrl);
  EXPECT_EQ(post->json_body(), rpc_request(1, "tools/call", params));
  HttpHeaders expected = {
      {"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"},
      {"MCP-Protocol-Version", kModern},    {"Mcp-Method", "tools/call"},
      {"Mcp-Name", "get_weather"},          {"Mcp-Param-Region", "=?base64?WsO8cmljaA==?="}};
  EXPECT_EQ(post->request().headers, expected);
  EXPECT_FALSE(post->request().follow_redirects);
}

TEST_F(HttpModernTransportTest, AnEmptyHeaderValueIsSentAsIs) {
  open(options());
  SendOptions o = modern("tools/call", {{"name", "t"}});
  o.headers.emplace_back("Mcp-Param-EmptyVal", "");
  ASSERT_TRUE(transport->send_with(rpc_request(1, "tools/call", {{"name", "t"}}), o).ok());
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_TRUE(post->has_header("Mcp-Param-EmptyVal"));
  EXPECT_EQ(post->header("Mcp-Param-EmptyVal"), "");
}

// --- no session ------------------------------------------------------------------------

TEST_F(HttpModernTransportTest, NoSessionHeaderEvenAfterAnAnswerNamedOne) {
  open(options());
  send_modern(rpc_request(1, "server/discover"));
  auto first = next();
  ASSERT_TRUE(first);
  first->respond_json(rpc_result(1, {{"supportedVersions", {kModern}}}),
                      {{"Mcp-Session-Id", "s-minted"}});
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);

  send_modern(rpc_request(2, "tools/list"));
  auto second = next();
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->has_header("Mcp-Session-Id"));
  EXPECT_EQ(second->header("MCP-Protocol-Version"), kModern);
  EXPECT_EQ(transport->diagnostics().find("session"), std::string::npos)
      << transport->diagnostics();
}

TEST_F(HttpModernTransportTest, NoGetStreamAfterAStatelessExchangeAndCloseSendsNoDelete) {
  open(options());
  send_modern(rpc_request(1, "server/discover"));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head({{"Mcp-Session-Id", "s-minted"}});
  post->chunk(sse_event(rpc_result(1, {{"supportedVersions", {kModern}}}), "e1"));
  post->complete();
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  ex.advance(Millis(60000));
  EXPECT_EQ(http.pending(), 0u);  // no GET stream, no resume

  transport->close();
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);  // no DELETE
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::closed);
  for (const FakeHttpExchange& e : http.all()) EXPECT_EQ(e.method(), "POST");
}

TEST_F(HttpModernTransportTest, AStatelessRequestBesideASessionCarriesNoneOfItAndCloseStillEndsIt) {
  open(options());
  ASSERT_TRUE(transport->send(init_request()).ok());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();

  send_modern(rpc_request(1, "tools/list"));
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_FALSE(post->has_header("Mcp-Session-Id"));
  EXPECT_EQ(post->header("MCP-Protocol-Version"), kModern);  // its own, not the session's
  post->respond_json(rpc_result(1, {{"tools", json::array()}}));
  ex.run_until_idle();

  transport->close();
  auto del = next();
  ASSERT_TRUE(del);
  EXPECT_EQ(del->method(), "DELETE");  // the session initialize made
  EXPECT_EQ(del->header("Mcp-Session-Id"), "s1");
}

// --- broken streams --------------------------------------------------------------------

TEST_F(HttpModernTransportTest, ABrokenStreamFailsOnlyThatRequestAndIsNeverResumed) {
  open(options());
  send_modern(rpc_request(1, "tools/call", {{"name", "slow"}}));
  auto slow = next();
  ASSERT_TRUE(slow);
  send_modern(rpc_request(2, "tools/list"));
  auto other = next();
  ASSERT_TRUE(other);

  slow->respond_sse_head();
  slow->chunk(sse_raw("id: e1\nretry: 250\ndata:"));
  slow->fail(Error::make(ErrorCode::transport, "connection reset"));
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0]["id"], 1);
  const json& error = received[0]["error"];
  EXPECT_EQ(error["code"], kHttpTransportErrorCode);
  EXPECT_EQ(error["message"], std::string("Server \"x\": the SSE stream from ") + kUrl +
                                  " broke before the response (connection reset); the request "
                                  "was lost (2026-07-28 streams cannot be resumed)");
  EXPECT_EQ(error["data"]["transport_error"], "transport");
  EXPECT_TRUE(closes.empty());

  ex.advance(Millis(10000));
  EXPECT_EQ(http.pending(), 0u);  // no GET with Last-Event-ID
  other->respond_json(rpc_result(2, {{"tools", json::array()}}));
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[1], rpc_result(2, {{"tools", json::array()}}));
}

TEST_F(HttpModernTransportTest, AStreamTheServerEndsBeforeTheResponseLosesTheRequest) {
  open(options());
  send_modern(rpc_request(3, "tools/call", {{"name", "t"}}));
  auto post = next();
  ASSERT_TRUE(post);
  const json progress = rpc_notification("notifications/progress", {{"progressToken", 3}});
  post->respond_sse_head();
  post->chunk(sse_event(progress, "e7"));
  post->complete();  // a 2025 server would expect a resume here (SSE polling)
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(received[0], progress);
  EXPECT_EQ(received[1]["error"]["message"],
            std::string("Server \"x\": the SSE stream from ") + kUrl +
                " ended before the response; the request was lost (2026-07-28 streams cannot "
                "be resumed)");
  ex.advance(Millis(10000));
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpModernTransportTest, ARequestThatFindsNoServerStillClosesTheTransport) {
  open(options());
  send_modern(rpc_request(1, "server/discover"));
  auto post = next();
  ASSERT_TRUE(post);
  post->fail(Error::make(ErrorCode::transport, "connection refused"));
  ex.run_until_idle();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::transport);
  EXPECT_EQ(closes[0].message.find("unreachable"), std::string::npos) << closes[0].message;  // said once
  EXPECT_NE(closes[0].message.find("failed: connection refused"), std::string::npos) << closes[0].message;
  EXPECT_TRUE(received.empty());  // the peer fails it from on_close
}

// --- cancellation ----------------------------------------------------------------------

TEST_F(HttpModernTransportTest, AStatelessCancelAbortsTheStreamAndPostsNothing) {
  open(options());
  send_modern(rpc_request(4, "tools/call", {{"name", "slow"}}));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  ex.run_until_idle();
  ASSERT_TRUE(transport->send_with(cancelled(4), stateless_cancel()).ok());
  EXPECT_TRUE(post->aborted());
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);
  EXPECT_EQ(http.all().size(), 1u);
  post->chunk(sse_event(rpc_result(4)));
  ex.run_until_idle();
  EXPECT_TRUE(received.empty());
}

TEST_F(HttpModernTransportTest, ThroughThePeer_AnAbortClosesTheStreamAndNoCancelIsPosted) {
  auto made = make_http_transport(ex, http, options());
  ASSERT_TRUE(made.ok());
  RpcPeer peer(ex, std::move(made).value());
  peer.start({});
  AbortController abort;
  RequestOptions ro;
  ro.signal = abort.signal();
  const json params = {{"name", "slow"}};
  ro.send = modern("tools/call", params);
  std::optional<Result<json>> outcome;
  ASSERT_TRUE(
      peer.request("tools/call", params, ro, [&](Result<json> r) { outcome = std::move(r); }).ok());
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->header("Mcp-Name"), "slow");
  post->respond_sse_head();
  ex.run_until_idle();
  abort.abort("user pressed Ctrl-C");
  ex.run_until_idle();
  EXPECT_TRUE(post->aborted());
  EXPECT_EQ(http.pending(), 0u);
  EXPECT_EQ(http.all().size(), 1u);  // no notifications/cancelled POST
  ASSERT_TRUE(outcome);
  ASSERT_FALSE(outcome->ok());
  EXPECT_EQ(outcome->error().code, ErrorCode::aborted);
}

// --- the server's own errors -----------------------------------------------------------

TEST_F(HttpModernTransportTest, ThroughThePeer_A400WithAJsonRpcErrorIsThatError) {
  auto made = make_http_transport(ex, http, options());
  ASSERT_TRUE(made.ok());
  RpcPeer peer(ex, std::move(made).value());
  peer.start({});
  RequestOptions ro;
  ro.send = modern("server/discover", json::object());
  std::optional<Result<json>> outcome;
  ASSERT_TRUE(peer.request("server/discover", json::object(), ro,
                           [&](Result<json> r) { outcome = std::move(r); })
                  .ok());
  auto post = next();
  ASSERT_TRUE(post);
  const json data = {{"supported", {"2026-09-01"}}, {"requested", kModern}};
  post->respond(400, rpc_error(0, -32022, "Unsupported protocol version", data).dump(),
                {{"Content-Type", "application/json"}});
  ex.run_until_idle();
  ASSERT_TRUE(outcome);
  ASSERT_FALSE(outcome->ok());
  EXPECT_EQ(outcome->error().code, ErrorCode::wire);
  EXPECT_EQ(outcome->error().wire_code, -32022);
  EXPECT_EQ(outcome->error().data, data);
}

TEST_F(HttpModernTransportTest, A404WithMethodNotFoundIsHandedUpAsTheServerSentIt) {
  open(options());
  send_modern(rpc_request(5, "subscriptions/listen"));
  auto post = next();
  ASSERT_TRUE(post);
  const json answer = rpc_error(5, -32601, "Method not found");
  post->respond(404, answer.dump());
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], answer);
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpModernTransportTest, AServerErrorLargerThan1KiBIsStillReadWhole) {
  open(options());
  send_modern(rpc_request(6, "tools/call", {{"name", "t"}}));
  auto post = next();
  ASSERT_TRUE(post);
  const json answer = rpc_error(6, -32020, "Header mismatch", {{"detail", std::string(5000, 'd')}});
  post->head(400, {{"Content-Type", "application/json"}});
  post->chunks(answer.dump(), 700);
  post->complete();
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], answer);
}

TEST_F(HttpModernTransportTest, A400WithoutAJsonRpcErrorForThisRequestIsTheSynthesizedError) {
  open(options());
  struct Case {
    int status;
    std::string body;
  };
  const std::vector<Case> cases = {
      {400, "Bad Request: No valid session ID provided"},                   // not JSON
      {400, rpc_error(nullptr, -32000, "Bad Request: no session").dump()},  // id null
      {400, rpc_error(99, -32022, "for another request").dump()},           // another id
      {400, rpc_result(7).dump()},                                          // not an error
      {405, ""},                                                            // empty
      {500, rpc_error(7, -32603, "Internal error").dump()},                 // an outage
  };
  for (const Case& c : cases) {
    received.clear();
    send_modern(rpc_request(7, "server/discover"));
    auto post = next();
    ASSERT_TRUE(post);
    post->respond(c.status, c.body);
    ex.run_until_idle();
    ASSERT_EQ(received.size(), 1u) << c.body;
    EXPECT_EQ(received[0]["id"], 7);
    const json& error = received[0]["error"];
    EXPECT_EQ(error["code"], kHttpTransportErrorCode) << c.body;
    EXPECT_EQ(error["data"]["transport_error"], "http_status");
    EXPECT_EQ(error["data"]["status"], c.status);
    EXPECT_EQ(error["data"]["url"], kUrl);
    EXPECT_EQ(error["data"]["body"], c.body);
  }
  EXPECT_TRUE(closes.empty());
}

// --- automatic mode --------------------------------------------------------------------

TEST_F(HttpModernTransportTest, Auto_AStatelessRefusalDoesNotFallBackAndInitializeThenWorks) {
  open(options(HttpTransportMode::automatic));
  send_modern(rpc_request(1, "server/discover"));
  auto probe = next();
  ASSERT_TRUE(probe);
  probe->respond(404, "Not Found");
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0]["error"]["data"]["status"], 404);
  EXPECT_EQ(http.pending(), 0u);  // no legacy SSE GET
  received.clear();

  // The session falls back to the 2025 wire on the same transport.
  ASSERT_TRUE(transport->send(init_request()).ok());
  auto init = next();
  ASSERT_TRUE(init);
  EXPECT_EQ(init->method(), "POST");
  EXPECT_FALSE(init->has_header("MCP-Protocol-Version"));
  EXPECT_FALSE(init->has_header("Mcp-Method"));
  init->respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], init_result());
  ASSERT_TRUE(transport->send(rpc_notification("notifications/initialized")).ok());
  auto note = next();
  ASSERT_TRUE(note);
  EXPECT_EQ(note->header("Mcp-Session-Id"), "s1");
  EXPECT_EQ(note->header("MCP-Protocol-Version"), "2025-11-25");
  note->respond(202);
  auto get = next();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->method(), "GET");  // the 2025 GET stream
  EXPECT_EQ(get->header("Mcp-Session-Id"), "s1");
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpModernTransportTest, Auto_AfterAnAnsweredProbeALaterInitializeMayStillFallBackToSse) {
  open(options(HttpTransportMode::automatic));
  send_modern(rpc_request(1, "server/discover"));
  auto probe = next();
  ASSERT_TRUE(probe);
  probe->respond(400, "Bad Request");
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);  // handed up: it must not commit to Streamable HTTP
  received.clear();

  ASSERT_TRUE(transport->send(init_request()).ok());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond(405);
  auto stream = next();
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->method(), "GET");
  EXPECT_FALSE(stream->has_header("Mcp-Method"));
  stream->respond_sse_head();
  stream->chunk("event: endpoint\ndata: /message?sessionId=abc\n\n");
  auto replay = next();
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->json_body(), init_request());  // only the initialize, not the probe
  replay->respond(202);
  stream->chunk(sse_event(init_result(), "", "message"));
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], init_result());
  EXPECT_EQ(http.pending(), 0u);
  EXPECT_TRUE(closes.empty());
}

TEST_F(HttpModernTransportTest, Auto_AStatelessRequestOpenWhenTheFallbackHappensFails) {
  open(options(HttpTransportMode::automatic));
  send_modern(rpc_request(1, "tools/call", {{"name", "slow"}}));
  auto slow = next();
  ASSERT_TRUE(slow);
  ASSERT_TRUE(transport->send(init_request()).ok());
  auto init = next();
  ASSERT_TRUE(init);
  init->respond(404);
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0]["id"], 1);
  EXPECT_EQ(received[0]["error"]["message"],
            std::string("Server \"x\": the request was lost: the server at ") + kUrl +
                " answered HTTP 404 to initialize and the connection moved to legacy "
                "HTTP+SSE, which does not carry 2026-07-28 requests");
  EXPECT_TRUE(slow->aborted());
  // Its cancel is not sent to the legacy server either.
  auto stream = next();
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->method(), "GET");
  ASSERT_TRUE(transport->send_with(cancelled(1), stateless_cancel()).ok());
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);
}

TEST_F(HttpModernTransportTest, Auto_AStatelessCancelOnStreamableHttpAbortsAndPostsNothing) {
  open(options(HttpTransportMode::automatic));
  send_modern(rpc_request(2, "tools/call", {{"name", "slow"}}));
  auto post = next();
  ASSERT_TRUE(post);
  post->respond_sse_head();
  ex.run_until_idle();
  ASSERT_TRUE(transport->send_with(cancelled(2), stateless_cancel()).ok());
  EXPECT_TRUE(post->aborted());
  ex.run_until_idle();
  EXPECT_EQ(http.all().size(), 1u);
}

// --- origins ---------------------------------------------------------------------------

TEST_F(HttpModernTransportTest, ARedirectedStatelessPostIsNotFollowedToAnotherOrigin) {
  HttpTransportOptions o = options();
  o.headers = {{"Authorization", "Bearer secret"}};
  open(o);
  send_modern(rpc_request(1, "tools/call", {{"name", "t"}}));
  auto post = next();
  ASSERT_TRUE(post);
  EXPECT_EQ(post->header("Authorization"), "Bearer secret");
  EXPECT_FALSE(post->request().follow_redirects);
  post->respond(307, "", {{"Location", "http://elsewhere.test/mcp"}});
  ex.run_until_idle();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0]["error"]["data"]["status"], 307);
  EXPECT_EQ(http.pending(), 0u);
  for (const FakeHttpExchange& e : http.all()) EXPECT_EQ(e.url(), kUrl);
}

// The rule under every request: a hop to another origin gets no Mcp-* header (nor any
// credential), while a hop on the configured origin keeps them.
TEST_F(HttpModernTransportTest, McpHeadersAreStrippedOnAHopToAnotherOrigin) {
  HttpTransportOptions o = options();
  o.headers = {{"X-Api-Key", "k"}};
  auto conn = std::make_shared<detail::HttpConnection>(ex, http, o);
  EXPECT_TRUE(conn->is_origin_bound("Mcp-Param-Region"));
  EXPECT_TRUE(conn->is_origin_bound("mcp-method"));
  EXPECT_FALSE(conn->is_origin_bound("X-Other"));
  detail::HttpCall::Events events;
  events.decorate = [](HttpHeaders& h) {
    h.set("Mcp-Method", "tools/call");
    h.set("Mcp-Param-Region", "eu");
    h.set("X-Other", "kept");
  };
  std::optional<detail::HttpFailure> failure;
  events.on_failure = [&](const detail::HttpFailure& f) { failure = f; };
  auto call = detail::HttpCall::start(conn, {"GET", kUrl, {}, 0, true}, std::move(events));
  auto first = next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->header("Mcp-Param-Region"), "eu");
  EXPECT_FALSE(first->request().follow_redirects);  // it carries origin-bound headers
  first->respond(302, "", {{"Location", "http://mcp.test:8080/moved"}});
  auto same = next();
  ASSERT_TRUE(same);
  EXPECT_EQ(same->header("Mcp-Method"), "tools/call");
  same->respond(302, "", {{"Location", "http://elsewhere.test/x"}});
  auto away = next();
  ASSERT_TRUE(away);
  EXPECT_EQ(away->url(), "http://elsewhere.test/x");
  EXPECT_FALSE(away->has_header("Mcp-Method"));
  EXPECT_FALSE(away->has_header("Mcp-Param-Region"));
  EXPECT_FALSE(away->has_header("X-Api-Key"));
  EXPECT_EQ(away->header("X-Other"), "kept");
  away->respond(404, "gone");
  ex.run_until_idle();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->status, 404);
  EXPECT_EQ(failure->body, "gone");
}

}  // namespace
}  // namespace http_modern_transport_test
}  // namespace mcprt
