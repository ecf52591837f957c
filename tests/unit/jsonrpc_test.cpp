// RpcPeer: correlation, deadlines, progress, cancellation, fail-closed, malformed input.
// Driven by a ManualExecutor and a FakeServer on the far end of a MemoryTransport.

#include "mcprt/jsonrpc.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/testing/fake_server.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace jsonrpc_test {  // this file's own names in a unity batch
namespace {

using testing::FakeServer;
using testing::CapturingLogger;
using testing::ManualExecutor;

// Everything a request's callback received.
struct Outcome {
  int calls = 0;
  std::optional<Result<json>> last;
  bool ok() const { return last && last->ok(); }
  ErrorCode code() const { return last->error().code; }
  const std::string& message() const { return last->error().message; }
};

class PeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RpcPeer::Handlers h;
    h.on_notification = [this](const std::string& method, const json& params) {
      notifications.push_back({method, params});
    };
    h.on_close = [this](const Error& e) {
      closes.push_back(e);
      events.push_back("on_close");
    };
    peer->start(std::move(h));
  }

  ResponseCallback capture(Outcome& o, std::string label = "") {
    return [this, &o, label](Result<json> r) {
      ++o.calls;
      o.last = std::move(r);
      events.push_back(label);
    };
  }

  // Sends `method` and asserts the start succeeded; returns the id.
  json send(const std::string& method, Outcome& o, RequestOptions options = {},
            json params = nullptr, std::string label = "") {
    auto id = peer->request(method, std::move(params), std::move(options), capture(o, label));
    EXPECT_TRUE(id.ok()) << id;
    return id.ok() ? id.value() : json(nullptr);
  }

  ManualExecutor ex;
  CapturingLogger log;
  FakeServer server{ex};
  std::unique_ptr<RpcPeer> peer = std::make_unique<RpcPeer>(ex, server.take_client_end(), &log);
  std::vector<std::pair<std::string, json>> notifications;
  std::vector<Error> closes;
  std::vector<std::string> events;
};

// --- basic correlation -----------------------------------------------------------------

TEST_F(PeerTest, Peer_DeliversResultOnlyThroughTheExecutor) {
  server.on("test/echo", [](const json& p) -> Result<json> { return p; });
  Outcome o;
  send("test/echo", o, {}, {{"x", 1}});
  EXPECT_EQ(o.calls, 0);  // never inside request()
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o.last->value(), (json{{"x", 1}}));
  EXPECT_EQ(peer->pending_count(), 0u);
}

TEST_F(PeerTest, Peer_RequestIdsStartAtZeroAndIncrease) {
  Outcome a, b, c;
  EXPECT_EQ(send("ping", a), json(0));
  EXPECT_EQ(send("ping", b), json(1));
  EXPECT_EQ(send("ping", c), json(2));
  ex.run_until_idle();
  auto pings = server.requests("ping");
  ASSERT_EQ(pings.size(), 3u);
  EXPECT_EQ(pings[0]["id"], json(0));
  EXPECT_FALSE(pings[0].contains("params"));  // null params are omitted
  // Request 0 is answered like any other: ids are never tested for truthiness.
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(c.ok());
}

// The peer reuses one request envelope and the map nodes of finished requests: every
// message still carries exactly its own id, method and params (none left over from the
// request before), and every answer reaches its own callback.
TEST_F(PeerTest, Peer_BackToBackRequestsCarryOnlyTheirOwnIdMethodAndParams) {
  server.on("test/echo", [](const json& p) -> Result<json> { return p; });
  server.on("test/other", [](const json&) -> Result<json> { return json{{"other", true}}; });
  Outcome o[6];
  send("test/echo", o[0], {}, {{"x", 1}});
  send("test/other", o[1]);
  send("test/echo", o[2], {}, {{"y", {1, 2}}});
  ex.run_until_idle();
  send("test/echo", o[3], {}, json::object());
  send("test/other", o[4], {}, {{"z", "s"}});
  send("test/echo", o[5], {}, {{"x", 2}});
  ex.run_until_idle();

  const auto echoes = server.requests("test/echo");
  ASSERT_EQ(echoes.size(), 4u);
  EXPECT_EQ(echoes[0], (json{{"jsonrpc", "2.0"}, {"id", 0}, {"method", "test/echo"}, {"params", {{"x", 1}}}}));
  EXPECT_EQ(echoes[1], (json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "test/echo"}, {"params", {{"y", {1, 2}}}}}));
  EXPECT_EQ(echoes[2], (json{{"jsonrpc", "2.0"}, {"id", 3}, {"method", "test/echo"}, {"params", json::object()}}));
  EXPECT_EQ(echoes[3], (json{{"jsonrpc", "2.0"}, {"id", 5}, {"method", "test/echo"}, {"params", {{"x", 2}}}}));
  const auto others = server.requests("test/other");
  ASSERT_EQ(others.size(), 2u);
  EXPECT_EQ(others[0], (json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "test/other"}}));
  EXPECT_EQ(others[1], (json{{"jsonrpc", "2.0"}, {"id", 4}, {"method", "test/other"}, {"params", {{"z", "s"}}}}));

  const json expected[6] = {{{"x", 1}}, {{"other", true}}, {{"y", {1, 2}}},
                            json::object(), {{"other", true}}, {{"x", 2}}};
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(o[i].calls, 1) << i;
    ASSERT_TRUE(o[i].ok()) << i;
    EXPECT_EQ(o[i].last->value(), expected[i]) << i;
  }
  EXPECT_EQ(peer->pending_count(), 0u);
}

TEST_F(PeerTest, Peer_WireErrorResponseBecomesWireError) {
  server.on("test/fail", [](const json&) -> Result<json> {
    return Error::wire(rpc_code::kInvalidParams, "bad thing", {{"field", "x"}});
  });
  Outcome o;
  send("test/fail", o);
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.code(), ErrorCode::wire);
  EXPECT_EQ(o.last->error().wire_code, rpc_code::kInvalidParams);
  EXPECT_EQ(o.message(), "bad thing");
  EXPECT_EQ(o.last->error().data, (json{{"field", "x"}}));
}

// --- deadlines -------------------------------------------------------------------------

TEST_F(PeerTest, Peer_TimeoutFiresAtTheDeadlineAndNotBefore) {
  server.hold("tools/call");
  Outcome o;
  RequestOptions opts;
  opts.timeout = Millis(5000);
  json id = send("tools/call", o, opts);
  ex.advance(Millis(4999));
  EXPECT_EQ(o.calls, 0);
  ex.advance(Millis(1));
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::timeout);
  EXPECT_EQ(o.message(), "Request tools/call timed out after 5000 ms");
  auto cancelled = server.notifications("notifications/cancelled");
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0]["params"]["requestId"], id);
  EXPECT_EQ(cancelled[0]["params"]["reason"], "Request tools/call timed out after 5000 ms");
  EXPECT_EQ(peer->pending_count(), 0u);
}

TEST_F(PeerTest, Peer_ProgressResetsTheDeadline) {
  server.hold("tools/call");
  Outcome o;
  int progress_calls = 0;
  RequestOptions opts;
  opts.timeout = Millis(1000);
  opts.on_progress = [&](const json&) { ++progress_calls; };
  json id = send("tools/call", o, opts);
  ex.advance(Millis(900));
  server.notify("notifications/progress", {{"progressToken", id}, {"progress", 1}});
  ex.run_until_idle();
  EXPECT_EQ(progress_calls, 1);
  ex.advance(Millis(999));  // t = 1899: past the original deadline, before the new one
  EXPECT_EQ(o.calls, 0);
  ex.advance(Millis(1));  // t = 1900
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::timeout);
}

TEST_F(PeerTest, Peer_ProgressDoesNotResetWhenResetIsOff) {
  server.hold("tools/call");
  Outcome o;
  RequestOptions opts;
  opts.timeout = Millis(1000);
  opts.reset_timeout_on_progress = false;
  opts.on_progress = [](const json&) {};
  json id = send("tools/call", o, opts);
  ex.advance(Millis(900));
  server.notify("notifications/progress", {{"progressToken", id}, {"progress", 1}});
  ex.advance(Millis(100));
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::timeout);
}

TEST_F(PeerTest, Peer_TotalCapStopsProgressResets) {
  server.hold("tools/call");
  Outcome o;
  RequestOptions opts;
  opts.timeout = Millis(1000);
  opts.max_total_timeout = Millis(2500);
  opts.on_progress = [](const json&) {};
  json id = send("tools/call", o, opts);
  for (int i = 0; i < 3; ++i) {  // progress at t = 800, 1600, 2400
    ex.advance(Millis(800));
    server.notify("notifications/progress", {{"progressToken", id}, {"progress", i}});
    ex.run_until_idle();
  }
  ex.advance(Millis(99));  // t = 2499
  EXPECT_EQ(o.calls, 0);
  ex.advance(Millis(1));  // t = 2500: the cap, although the last reset allows 3400
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::timeout);
  EXPECT_NE(o.message().find("2500 ms"), std::string::npos) << o.message();
  EXPECT_EQ(server.notifications("notifications/cancelled").size(), 1u);
}

TEST_F(PeerTest, Peer_NoTimeoutMeansNoDeadline) {
  server.hold("tools/call");
  Outcome o;
  send("tools/call", o);
  ex.advance(Millis(24 * 3600 * 1000));
  EXPECT_EQ(o.calls, 0);
  EXPECT_EQ(ex.pending_timers(), 0u);
  EXPECT_EQ(peer->pending_count(), 1u);
}

TEST_F(PeerTest, Peer_DoesNotSendCancelledForInitialize) {
  server.hold("initialize");
  Outcome o;
  RequestOptions opts;
  opts.timeout = Millis(100);
  send("initialize", o, opts);
  ex.advance(Millis(100));
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::timeout);
  EXPECT_TRUE(server.notifications("notifications/cancelled").empty());
}

// --- progress --------------------------------------------------------------------------

TEST_F(PeerTest, Peer_ProgressIsRoutedByTokenToItsOwnRequest) {
  server.hold("tools/call");
  Outcome first, second;
  std::vector<json> first_progress, second_progress;
  RequestOptions a;
  a.on_progress = [&](const json& p) { first_progress.push_back(p); };
  RequestOptions b;
  b.on_progress = [&](const json& p) { second_progress.push_back(p); };
  json id1 = send("tools/call", first, a, {{"name", "x"}});
  json id2 = send("tools/call", second, b, {{"name", "y"}});
  ex.run_until_idle();
  auto calls = server.requests("tools/call");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]["params"]["_meta"]["progressToken"], id1);
  EXPECT_EQ(calls[1]["params"]["_meta"]["progressToken"], id2);
  EXPECT_EQ(calls[1]["params"]["name"], "y");  // the caller's params survive

  server.notify("notifications/progress", {{"progressToken", id2}, {"progress", 5}});
  ex.run_until_idle();
  EXPECT_TRUE(first_progress.empty());
  ASSERT_EQ(second_progress.size(), 1u);
  EXPECT_EQ(second_progress[0]["progress"], 5);
  // Also delivered as a plain notification.
  ASSERT_EQ(notifications.size(), 1u);
  EXPECT_EQ(notifications[0].first, "notifications/progress");
}

TEST_F(PeerTest, Peer_NoProgressTokenWithoutProgressCallback) {
  server.hold("tools/call");
  Outcome o;
  send("tools/call", o, {}, {{"name", "x"}});
  ex.run_until_idle();
  auto call = server.last_request("tools/call");
  EXPECT_FALSE(call["params"].contains("_meta"));
}

TEST_F(PeerTest, Peer_ProgressForAFinishedRequestIsNotRouted) {
  Outcome o;
  int progress_calls = 0;
  RequestOptions opts;
  opts.on_progress = [&](const json&) { ++progress_calls; };
  json id = send("ping", o, opts);
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  server.notify("notifications/progress", {{"progressToken", id}, {"progress", 1}});
  ex.run_until_idle();
  EXPECT_EQ(progress_calls, 0);
}

// --- cancellation ----------------------------------------------------------------------

TEST_F(PeerTest, Peer_AbortSendsCancelledAndCompletesOnceWithAborted) {
  server.hold("tools/call");
  AbortController controller;
  Outcome o;
  RequestOptions opts;
  opts.signal = controller.signal();
  opts.timeout = Millis(1000);
  json id = send("tools/call", o, opts);
  controller.abort("user pressed stop");
  EXPECT_EQ(o.calls, 0);  // posted, not run inside abort()
  controller.abort("again");
  ex.run_until_idle();
  ex.advance(Millis(5000));  // the deadline timer is gone too
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::aborted);
  auto cancelled = server.notifications("notifications/cancelled");
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0]["params"]["requestId"], id);
  EXPECT_EQ(cancelled[0]["params"]["reason"], "user pressed stop");
}

TEST_F(PeerTest, Peer_AlreadyAbortedSignalFailsAtStartWithoutCallback) {
  AbortController controller;
  controller.abort();
  Outcome o;
  RequestOptions opts;
  opts.signal = controller.signal();
  auto id = peer->request("tools/call", nullptr, opts, capture(o));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::aborted);
  ex.run_until_idle();
  EXPECT_EQ(o.calls, 0);
  EXPECT_TRUE(server.requests("tools/call").empty());
}

TEST_F(PeerTest, Peer_LateResponseAfterAbortIsIgnored) {
  server.hold("tools/call");
  AbortController controller;
  Outcome o;
  RequestOptions opts;
  opts.signal = controller.signal();
  json id = send("tools/call", o, opts);
  ex.run_until_idle();
  controller.abort();
  ex.run_until_idle();
  server.reply(id, {{"content", json::array()}});
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::aborted);
  EXPECT_TRUE(log.has(LogLevel::debug, "unknown id"));
}

TEST_F(PeerTest, Peer_LateResponseAfterTimeoutIsIgnored) {
  server.hold("tools/call");
  Outcome o;
  RequestOptions opts;
  opts.timeout = Millis(10);
  json id = send("tools/call", o, opts);
  ex.advance(Millis(10));
  server.reply(id, json::object());
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::timeout);
}

// --- fail closed -----------------------------------------------------------------------

TEST_F(PeerTest, Peer_FailsEveryPendingRequestOnceWithTheTransportCloseError) {
  server.hold("tools/call");
  Outcome a, b, c;
  RequestOptions with_deadline;
  with_deadline.timeout = Millis(1000);
  send("tools/call", a, with_deadline, nullptr, "a");
  send("tools/call", b, {}, nullptr, "b");
  send("tools/call", c, with_deadline, nullptr, "c");
  ex.run_until_idle();
  server.close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ex.advance(Millis(5000));  // no deadline may fire afterwards
  for (Outcome* o : {&a, &b, &c}) {
    ASSERT_EQ(o->calls, 1);
    EXPECT_EQ(o->code(), ErrorCode::exited);
    EXPECT_EQ(o->message(), "server exited (code 1)");
  }
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::exited);
  // Oldest first, and the close handler only after every request failed.
  EXPECT_EQ(events, (std::vector<std::string>{"a", "b", "c", "on_close"}));
  EXPECT_TRUE(peer->closed());
  EXPECT_EQ(peer->pending_count(), 0u);
}

TEST_F(PeerTest, Peer_LocalCloseFailsPendingRequestsWithClosed) {
  server.hold("tools/call");
  Outcome a, b;
  send("tools/call", a);
  send("tools/call", b);
  peer->close();
  peer->close();  // idempotent
  EXPECT_EQ(a.calls, 0);
  ex.run_until_idle();
  EXPECT_EQ(a.calls, 1);
  EXPECT_EQ(b.calls, 1);
  EXPECT_EQ(a.code(), ErrorCode::closed);
  EXPECT_EQ(closes.size(), 1u);
  EXPECT_TRUE(server.closed());
}

TEST_F(PeerTest, Peer_RequestsAfterCloseFailAtOnce) {
  server.close_with_error(Error::make(ErrorCode::exited, "server exited (code 3)"));
  ex.run_until_idle();
  Outcome o;
  auto id = peer->request("tools/list", nullptr, {}, capture(o));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::not_connected);
  EXPECT_NE(id.error().message.find("server exited (code 3)"), std::string::npos) << id.error();
  auto st = peer->notify("notifications/initialized");
  EXPECT_FALSE(st.ok());
  ex.run_until_idle();
  EXPECT_EQ(o.calls, 0);
}

TEST_F(PeerTest, Peer_SendFailureReturnsTheErrorAndNeverCallsBack) {
  server.close();  // the link is down; the peer has not heard yet
  Outcome o;
  auto id = peer->request("tools/list", nullptr, {}, capture(o));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::closed);
  EXPECT_EQ(peer->pending_count(), 0u);
  ex.run_until_idle();
  EXPECT_EQ(o.calls, 0);
}

TEST_F(PeerTest, Peer_DestroyedPeerRunsNoCallbacks) {
  server.hold("tools/call");
  Outcome pending_one;
  RequestOptions opts;
  opts.timeout = Millis(100);
  json id = send("tools/call", pending_one, opts);
  ex.run_until_idle();
  server.reply(id, json::object());  // in flight to the peer
  peer.reset();
  ex.run_until_idle();
  ex.advance(Millis(1000));
  EXPECT_EQ(pending_one.calls, 0);
  EXPECT_TRUE(closes.empty());
  EXPECT_TRUE(server.closed());  // destruction closed the transport
}

TEST_F(PeerTest, Peer_DestroyingThePeerInsideACallbackStopsLaterCallbacks) {
  Outcome second;
  int first_calls = 0;
  auto id = peer->request("ping", nullptr, {}, [&](Result<json>) {
    ++first_calls;
    peer.reset();
  });
  ASSERT_TRUE(id.ok());
  send("ping", second);
  ex.run_until_idle();
  EXPECT_EQ(first_calls, 1);
  EXPECT_EQ(second.calls, 0);
}

// --- unknown ids and malformed input ---------------------------------------------------

TEST_F(PeerTest, Peer_ResponseWithUnknownIdIsIgnoredAndLogged) {
  server.hold("tools/call");
  Outcome o;
  send("tools/call", o);
  server.reply(777, json::object());
  ex.run_until_idle();
  EXPECT_EQ(o.calls, 0);
  EXPECT_EQ(peer->pending_count(), 1u);
  EXPECT_TRUE(log.has(LogLevel::debug, "unknown id 777"));
  EXPECT_FALSE(peer->closed());
}

TEST_F(PeerTest, Peer_ResponseWithNumericStringIdMatchesTheRequest) {
  server.hold("tools/call");
  Outcome o;
  json id = send("tools/call", o);
  server.reply(std::to_string(id.get<int>()), {{"ok", true}});
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  EXPECT_TRUE(o.ok());
}

TEST_F(PeerTest, Peer_ResponseWithNonNumericStringIdIsIgnored) {
  server.hold("tools/call");
  Outcome o;
  send("tools/call", o);
  server.reply("abc", json::object());
  server.reply("0x0", json::object());
  ex.run_until_idle();
  EXPECT_EQ(o.calls, 0);
  EXPECT_EQ(peer->pending_count(), 1u);
}

TEST_F(PeerTest, Peer_ResponseWithoutJsonrpcFailsTheRequestWithProtocolError) {
  server.hold("tools/call");
  Outcome o;
  json id = send("tools/call", o);
  server.send({{"id", id}, {"result", json::object()}});
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::protocol);
  EXPECT_NE(o.message().find("jsonrpc"), std::string::npos) << o.message();
}

TEST_F(PeerTest, Peer_ResponseWithNeitherResultNorErrorFailsTheRequest) {
  server.hold("tools/call");
  Outcome o;
  json id = send("tools/call", o);
  server.send({{"jsonrpc", "2.0"}, {"id", id}});
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  EXPECT_EQ(o.code(), ErrorCode::protocol);
  EXPECT_NE(o.message().find("neither"), std::string::npos) << o.message();
}

TEST_F(PeerTest, Peer_RequestWithoutJsonrpcIsAnsweredWithInvalidRequest) {
  server.send({{"id", 5}, {"method", "ping"}});
  ex.run_until_idle();
  json answer = server.response_to(5);
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["error"]["code"], rpc_code::kInvalidRequest);
}

TEST_F(PeerTest, Peer_RequestWithBadIdIsAnsweredWithNullId) {
  server.send({{"jsonrpc", "2.0"}, {"id", {{"x", 1}}}, {"method", "ping"}});
  ex.run_until_idle();
  json answer = server.response_to(nullptr);
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["error"]["code"], rpc_code::kInvalidRequest);
}

TEST_F(PeerTest, Peer_ErrorResponseWithNullIdIsNotAnswered) {
  server.send(
      {{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", {{"code", -32700}, {"message", "x"}}}});
  server.send({{"jsonrpc", "2.0"}, {"error", {{"code", -32700}, {"message", "x"}}}});
  ex.run_until_idle();
  EXPECT_TRUE(server.received().empty());  // answering errors could ping-pong forever
  EXPECT_FALSE(peer->closed());
}

TEST_F(PeerTest, Peer_NonObjectMessagesAreLoggedAndDropped) {
  server.send(42);
  server.send("text");
  server.send(json::array());
  server.send({{"jsonrpc", "2.0"}});
  ex.run_until_idle();
  EXPECT_TRUE(server.received().empty());
  EXPECT_TRUE(log.has(LogLevel::warn, "a message must be a JSON object"));
  Outcome o;
  send("ping", o);
  ex.run_until_idle();
  EXPECT_TRUE(o.ok());  // still fully working
}

TEST_F(PeerTest, Peer_BatchElementsAreHandledOneByOne) {
  server.hold("tools/call");
  Outcome o;
  json id = send("tools/call", o);
  server.send(json::array({
      {{"jsonrpc", "2.0"}, {"method", "notifications/message"}, {"params", {{"level", "info"}}}},
      {{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"n", 1}}}},
      {{"jsonrpc", "2.0"}, {"id", "srv-1"}, {"method", "ping"}},
  }));
  ex.run_until_idle();
  ASSERT_EQ(o.calls, 1);
  EXPECT_TRUE(o.ok());
  ASSERT_EQ(notifications.size(), 1u);
  EXPECT_EQ(notifications[0].first, "notifications/message");
  EXPECT_TRUE(server.response_to("srv-1").is_object());
}

// --- incoming requests and notifications -----------------------------------------------

TEST_F(PeerTest, Peer_DefaultRequestHandlerAnswersMethodNotFound) {
  server.request("abc", "sampling/createMessage", json::object());
  ex.run_until_idle();
  json answer = server.response_to("abc");
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["error"]["code"], rpc_code::kMethodNotFound);
}

TEST(PeerRequests, Peer_AnswersServerRequestWithIdZero) {
  ManualExecutor ex;
  FakeServer server(ex);
  RpcPeer peer(ex, server.take_client_end());
  std::vector<IncomingRequest> seen;
  RpcPeer::Handlers h;
  h.on_request = [&](const IncomingRequest& r, Responder respond) {
    seen.push_back(r);
    respond(json{{"echo", r.params}});
  };
  peer.start(std::move(h));
  server.request(0, "test/echo", {{"v", 1}});
  ex.run_until_idle();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].id, json(0));
  EXPECT_EQ(seen[0].method, "test/echo");
  json answer = server.response_to(0);
  ASSERT_TRUE(answer.is_object());
  ASSERT_TRUE(answer["id"].is_number_integer());
  EXPECT_EQ(answer["id"], 0);
  EXPECT_EQ(answer["result"]["echo"]["v"], 1);
}

TEST(PeerRequests, Peer_ResponderRepliesOnlyOnceAndMapsErrors) {
  ManualExecutor ex;
  FakeServer server(ex);
  RpcPeer peer(ex, server.take_client_end());
  std::vector<Responder> responders;
  RpcPeer::Handlers h;
  h.on_request = [&](const IncomingRequest&, Responder respond) {
    responders.push_back(std::move(respond));
  };
  peer.start(std::move(h));
  server.request(1, "a");
  server.request(2, "b");
  ex.run_until_idle();
  ASSERT_EQ(responders.size(), 2u);
  responders[0](Error::wire(-32001, "custom", {{"k", 1}}));
  responders[0](json::object());  // ignored
  responders[1](Error::make(ErrorCode::internal, "boom"));
  ex.run_until_idle();
  int answers_to_1 = 0;
  for (const auto& m : server.received()) {
    if (m.contains("id") && m["id"] == 1) ++answers_to_1;
  }
  EXPECT_EQ(answers_to_1, 1);
  EXPECT_EQ(server.response_to(1)["error"]["code"], -32001);
  EXPECT_EQ(server.response_to(1)["error"]["data"]["k"], 1);
  EXPECT_EQ(server.response_to(2)["error"]["code"], rpc_code::kInternalError);
  EXPECT_EQ(server.response_to(2)["error"]["message"], "boom");
}

TEST_F(PeerTest, Peer_NotificationsReachTheHandler) {
  server.notify("notifications/tools/list_changed");
  server.notify("notifications/message", {{"level", "info"}, {"data", "hi"}});
  ex.run_until_idle();
  ASSERT_EQ(notifications.size(), 2u);
  EXPECT_EQ(notifications[0].first, "notifications/tools/list_changed");
  EXPECT_EQ(notifications[1].second["data"], "hi");
}

TEST_F(PeerTest, Peer_ProgressNeedsObjectParams) {
  Outcome o;
  RequestOptions opts;
  opts.on_progress = [](const json&) {};
  auto id = peer->request("x", json::array({1, 2}), opts, capture(o));
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::invalid_argument);
}

}  // namespace
}  // namespace jsonrpc_test
}  // namespace mcprt
