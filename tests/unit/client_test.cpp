// ClientSession: handshake and version negotiation, tools/list pagination, tools/call,
// server requests, notifications, close and lifetime. ManualExecutor + FakeServer.

#include "mcprt/client.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/testing/fake_server.hpp"
#include "mcprt/testing/captured.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "protocol/file_uri.hpp"

namespace mcprt {
namespace client_test {  // this file's own names in a unity batch
namespace {

using testing::FakeServer;
using testing::CapturingLogger;
using testing::ManualExecutor;

using testing::Captured;

json tool(const std::string& name) {
  return {{"name", name}, {"inputSchema", {{"type", "object"}}}};
}

class ClientTest : public ::testing::Test {
 protected:
  ClientOptions make_options(const std::string& server_name = "demo") {
    ClientOptions o;
    o.server_name = server_name;
    // The initialize handshake itself (the era probe before it: client_modern_test.cpp).
    o.protocol = "legacy";
    o.logger = &log;
    o.roots = roots_from_directories({"/home/me/my project"});
    o.connect_timeout = Millis(30000);
    o.request_timeout = Millis(30000);
    o.on_notification = [this](const std::string& method, const json& params) {
      notes.push_back({method, params});
    };
    o.on_close = [this](const Error& e) { closes.push_back(e); };
    return o;
  }

  void start(ClientOptions o) { session = ClientSession::create(ex, server.take_client_end(), o); }

  // Creates the session and runs a successful handshake.
  void start_ready(ClientOptions o) {
    start(std::move(o));
    Captured<Status> connected;
    session->connect(connected.fn());
    ex.run_until_idle();
    ASSERT_EQ(connected.calls, 1);
    ASSERT_TRUE(connected.ok()) << connected.error();
    ASSERT_EQ(session->state(), ClientSession::State::ready);
  }
  void start_ready() { start_ready(make_options()); }

  ManualExecutor ex;
  CapturingLogger log;
  FakeServer server{ex};
  std::vector<std::pair<std::string, json>> notes;
  std::vector<Error> closes;
  std::shared_ptr<ClientSession> session;  // declared last: destroyed first
};

// --- handshake -------------------------------------------------------------------------

TEST_F(ClientTest, Client_HandshakeSendsInitializeThenInitialized) {
  ClientOptions o = make_options();
  o.client_info = {"acme-agent", "9.9.9"};
  start(o);
  Captured<Status> connected;
  session->connect(connected.fn());
  EXPECT_EQ(session->state(), ClientSession::State::connecting);
  EXPECT_EQ(connected.calls, 0);
  ex.run_until_idle();
  ASSERT_EQ(connected.calls, 1);
  ASSERT_TRUE(connected.ok()) << connected.error();

  const auto& msgs = server.received();
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["method"], "initialize");
  const json& p = msgs[0]["params"];
  EXPECT_EQ(p["protocolVersion"], supported_protocol_versions().front());
  EXPECT_EQ(p["capabilities"], (json{{"roots", {{"listChanged", false}}}}));
  EXPECT_EQ(p["clientInfo"], (json{{"name", "acme-agent"}, {"version", "9.9.9"}}));
  // initialized only after the initialize answer, as a notification.
  EXPECT_EQ(msgs[1]["method"], "notifications/initialized");
  EXPECT_FALSE(msgs[1].contains("id"));
  EXPECT_EQ(session->state(), ClientSession::State::ready);
}

TEST_F(ClientTest, Client_InitializedIsNotSentBeforeTheInitializeAnswer) {
  server.hold("initialize");
  start(make_options());
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.run_until_idle();
  EXPECT_TRUE(server.notifications("notifications/initialized").empty());
  server.reply(server.last_request("initialize")["id"],
               {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()}});
  ex.run_until_idle();
  ASSERT_TRUE(connected.ok()) << connected.error();
  EXPECT_EQ(server.notifications("notifications/initialized").size(), 1u);
}

TEST_F(ClientTest, Client_KeepsServerInfoCapabilitiesAndInstructions) {
  server.set_instructions("Use the echo tool.");
  start_ready();
  const ServerInfo& info = session->server();
  EXPECT_EQ(info.protocol_version, "2025-11-25");
  EXPECT_EQ(info.server_info["name"], "fake-server");
  EXPECT_EQ(info.capabilities, (json{{"tools", {{"listChanged", true}}}}));
  EXPECT_EQ(info.instructions, "Use the echo tool.");
  EXPECT_EQ(session->name(), "demo");
}

class ClientVersionTest : public ClientTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(ClientVersionTest, Client_AcceptsEverySupportedVersion) {
  server.set_protocol_version(GetParam());
  start_ready();
  EXPECT_EQ(session->server().protocol_version, GetParam());
  EXPECT_EQ(server.notifications("notifications/initialized").size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Supported, ClientVersionTest,
                         ::testing::ValuesIn(supported_protocol_versions()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = "v" + info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST_F(ClientTest, Client_RejectsUnknownVersionNamingBothSides) {
  server.set_protocol_version("1999-01-01");
  start(make_options());
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.run_until_idle();
  ASSERT_EQ(connected.calls, 1);
  ASSERT_FALSE(connected.ok());
  const Error& e = connected.error();
  EXPECT_EQ(e.code, ErrorCode::unsupported_version);
  EXPECT_EQ(e.message.rfind("Server \"demo\": ", 0), 0u) << e.message;
  EXPECT_NE(e.message.find("\"1999-01-01\""), std::string::npos) << e.message;
  for (const auto& v : supported_protocol_versions()) {
    EXPECT_NE(e.message.find(v), std::string::npos) << e.message;
  }
  EXPECT_TRUE(server.notifications("notifications/initialized").empty());
  EXPECT_TRUE(server.closed());  // the transport was closed
  EXPECT_EQ(session->state(), ClientSession::State::closed);
}

TEST_F(ClientTest, Client_RejectsInitializeResultWithoutVersion) {
  server.set_initialize_result({{"capabilities", json::object()}});
  start(make_options());
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.run_until_idle();
  ASSERT_FALSE(connected.ok());
  EXPECT_EQ(connected.error().code, ErrorCode::protocol);
  EXPECT_TRUE(server.closed());
}

TEST_F(ClientTest, Client_HandshakeTimeoutClosesTheTransport) {
  server.hold("initialize");
  server.client_end().set_diagnostics("stderr: still booting");
  ClientOptions o = make_options();
  o.connect_timeout = Millis(2000);
  start(o);
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.advance(Millis(1999));
  EXPECT_EQ(connected.calls, 0);
  EXPECT_FALSE(server.closed());
  ex.advance(Millis(1));
  ASSERT_EQ(connected.calls, 1);
  const Error& e = connected.error();
  EXPECT_EQ(e.code, ErrorCode::timeout);
  EXPECT_NE(e.message.find("Server \"demo\": "), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("2000 ms"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("still booting"), std::string::npos) << e.message;
  EXPECT_TRUE(server.closed());
  EXPECT_EQ(session->state(), ClientSession::State::closed);
  // initialize is never "cancelled"; the connection is closed instead.
  EXPECT_TRUE(server.notifications("notifications/cancelled").empty());
  ex.advance(Millis(60000));
  EXPECT_EQ(connected.calls, 1);
}

TEST_F(ClientTest, Client_ZeroConnectTimeoutWaitsForever) {
  server.hold("initialize");
  ClientOptions o = make_options();
  o.connect_timeout = Millis(0);
  start(o);
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.advance(Millis(3600 * 1000));
  EXPECT_EQ(connected.calls, 0);
  EXPECT_EQ(session->state(), ClientSession::State::connecting);
}

TEST_F(ClientTest, Client_InitializeErrorFailsConnectWithNamedWireError) {
  server.on("initialize", [](const json&) -> Result<json> {
    return Error::wire(rpc_code::kInvalidParams, "bad client");
  });
  start(make_options());
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.run_until_idle();
  ASSERT_FALSE(connected.ok());
  EXPECT_EQ(connected.error().code, ErrorCode::wire);
  EXPECT_EQ(connected.error().wire_code, rpc_code::kInvalidParams);
  EXPECT_EQ(connected.error().message, "Server \"demo\": bad client");
  EXPECT_TRUE(server.closed());
}

TEST_F(ClientTest, Client_TransportDropDuringHandshakeFailsConnectOnceThenCloses) {
  server.hold("initialize");
  start(make_options());
  std::vector<std::string> order;
  Captured<Status> connected;
  session->connect([&](Status s) {
    order.push_back("connect");
    connected.fn()(std::move(s));
  });
  ex.run_until_idle();
  server.close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ASSERT_EQ(connected.calls, 1);
  EXPECT_EQ(connected.error().code, ErrorCode::exited);
  EXPECT_EQ(connected.error().message, "Server \"demo\": server exited (code 1)");
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::exited);
  EXPECT_EQ(session->state(), ClientSession::State::closed);
}

TEST_F(ClientTest, Client_CloseDuringHandshakeFailsConnectWithClosed) {
  server.hold("initialize");
  start(make_options());
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.run_until_idle();
  session->close();
  EXPECT_EQ(session->state(), ClientSession::State::closed);
  EXPECT_EQ(connected.calls, 0);  // posted
  ex.run_until_idle();
  ASSERT_EQ(connected.calls, 1);
  EXPECT_EQ(connected.error().code, ErrorCode::closed);
  EXPECT_TRUE(server.closed());
}

TEST_F(ClientTest, Client_ConnectTwiceFails) {
  start_ready();
  Captured<Status> again;
  session->connect(again.fn());
  EXPECT_EQ(again.calls, 0);
  ex.run_until_idle();
  ASSERT_EQ(again.calls, 1);
  EXPECT_EQ(again.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(session->state(), ClientSession::State::ready);
}

// --- tools/list ------------------------------------------------------------------------

TEST_F(ClientTest, Client_ListToolsConcatenatesPages) {
  server.set_tool_pages({{tool("a"), tool("b")}, {tool("c")}, {tool("d"), tool("e")}});
  start_ready();
  Captured<Result<std::vector<json>>> listed;
  session->list_tools(listed.fn());
  EXPECT_EQ(listed.calls, 0);
  ex.run_until_idle();
  ASSERT_EQ(listed.calls, 1);
  ASSERT_TRUE(listed.ok()) << listed.error();
  std::vector<std::string> names;
  for (const auto& t : listed.last->value()) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  auto pages = server.requests("tools/list");
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_FALSE(pages[0].contains("params"));
  EXPECT_EQ(pages[1]["params"]["cursor"], "page-1");
  EXPECT_EQ(pages[2]["params"]["cursor"], "page-2");
}

TEST_F(ClientTest, Client_ListToolsFailsOnRepeatedCursor) {
  server.on("tools/list", [](const json&) -> Result<json> {
    return json{{"tools", json::array({tool("a")})}, {"nextCursor", "same"}};
  });
  start_ready();
  Captured<Result<std::vector<json>>> listed;
  session->list_tools(listed.fn());
  ex.run_until_idle();
  ASSERT_EQ(listed.calls, 1);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::protocol);
  EXPECT_NE(listed.error().message.find("\"same\" twice"), std::string::npos) << listed.error();
  EXPECT_EQ(server.requests("tools/list").size(), 2u);
}

TEST_F(ClientTest, Client_ListToolsFailsAfterThePageCap) {
  int served = 0;
  server.on("tools/list", [&](const json&) -> Result<json> {
    ++served;
    return json{{"tools", json::array()}, {"nextCursor", "c" + std::to_string(served)}};
  });
  ClientOptions o = make_options();
  o.max_list_pages = 5;
  start_ready(o);
  Captured<Result<std::vector<json>>> listed;
  session->list_tools(listed.fn());
  ex.run_until_idle();
  ASSERT_EQ(listed.calls, 1);
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::protocol);
  EXPECT_NE(listed.error().message.find("5 pages"), std::string::npos) << listed.error();
  EXPECT_EQ(served, 5);
}

TEST_F(ClientTest, Client_ListToolsDropsInvalidEntriesWithAWarning) {
  server.set_tools(
      {tool("good"), json("not an object"), {{"name", 7}}, {{"title", "x"}}, tool("also-good")});
  start_ready();
  Captured<Result<std::vector<json>>> listed;
  session->list_tools(listed.fn());
  ex.run_until_idle();
  ASSERT_TRUE(listed.ok()) << listed.error();
  ASSERT_EQ(listed.last->value().size(), 2u);
  EXPECT_EQ(listed.last->value()[1]["name"], "also-good");
  EXPECT_TRUE(log.has(LogLevel::warn, "Server \"demo\": ignoring tool 1"));
  EXPECT_TRUE(log.has(LogLevel::warn, "ignoring tool 2"));
  EXPECT_TRUE(log.has(LogLevel::warn, "ignoring tool 3"));
}

TEST_F(ClientTest, Client_ListToolsFailsWhenToolsIsNotAnArray) {
  server.on("tools/list", [](const json&) -> Result<json> { return json{{"tools", {{"a", 1}}}}; });
  start_ready();
  Captured<Result<std::vector<json>>> listed;
  session->list_tools(listed.fn());
  ex.run_until_idle();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::protocol);
  EXPECT_NE(listed.error().message.find("\"tools\" array"), std::string::npos);
}

TEST_F(ClientTest, Client_ListToolsPageTimeoutUsesRequestTimeout) {
  server.hold("tools/list");
  ClientOptions o = make_options();
  o.request_timeout = Millis(700);
  start_ready(o);
  Captured<Result<std::vector<json>>> listed;
  session->list_tools(listed.fn());
  ex.advance(Millis(699));
  EXPECT_EQ(listed.calls, 0);
  ex.advance(Millis(1));
  ASSERT_EQ(listed.calls, 1);
  EXPECT_EQ(listed.error().code, ErrorCode::timeout);
  EXPECT_EQ(listed.error().message, "Server \"demo\": Request tools/list timed out after 700 ms");
}

TEST_F(ClientTest, Client_CallsBeforeConnectFailWithNotConnected) {
  start(make_options());
  Captured<Result<std::vector<json>>> listed;
  Captured<Result<json>> called;
  Captured<Status> pinged;
  session->list_tools(listed.fn());
  session->call_tool("x", json::object(), {}, called.fn());
  session->ping(pinged.fn());
  EXPECT_EQ(listed.calls + called.calls + pinged.calls, 0);  // posted, never inline
  ex.run_until_idle();
  ASSERT_EQ(listed.calls, 1);
  EXPECT_EQ(listed.error().code, ErrorCode::not_connected);
  EXPECT_EQ(called.error().code, ErrorCode::not_connected);
  EXPECT_EQ(pinged.error().code, ErrorCode::not_connected);
  EXPECT_TRUE(server.received().empty());
}

// --- tools/call ------------------------------------------------------------------------

TEST_F(ClientTest, Client_CallToolSendsNameAndArgumentsAndReturnsIsErrorAsSuccess) {
  server.on_tool("fail", [](const json& args) -> Result<json> {
    return json{
        {"content", {{{"type", "text"}, {"text", "nope: " + args["why"].get<std::string>()}}}},
        {"isError", true}};
  });
  start_ready();
  Captured<Result<json>> called;
  session->call_tool("fail", {{"why", "because"}}, {}, called.fn());
  ex.run_until_idle();
  ASSERT_TRUE(called.ok()) << called.error();
  EXPECT_EQ(called.last->value()["isError"], true);
  EXPECT_EQ(called.last->value()["content"][0]["text"], "nope: because");
  json sent = server.last_request("tools/call");
  EXPECT_EQ(sent["params"]["name"], "fail");
  EXPECT_EQ(sent["params"]["arguments"], (json{{"why", "because"}}));
}

TEST_F(ClientTest, Client_CallToolSendsEmptyObjectForNullArguments) {
  server.on_tool("noargs", [](const json&) -> Result<json> {
    return json{{"content", json::array()}};
  });
  start_ready();
  Captured<Result<json>> called;
  session->call_tool("noargs", nullptr, {}, called.fn());
  ex.run_until_idle();
  ASSERT_TRUE(called.ok());
  EXPECT_EQ(server.last_request("tools/call")["params"]["arguments"], json::object());
}

TEST_F(ClientTest, Client_CallToolWireErrorIsAWireErrorNamingTheServer) {
  start_ready();
  Captured<Result<json>> called;
  session->call_tool("missing", json::object(), {}, called.fn());
  ex.run_until_idle();
  ASSERT_FALSE(called.ok());
  EXPECT_EQ(called.error().code, ErrorCode::wire);
  EXPECT_EQ(called.error().wire_code, rpc_code::kInvalidParams);
  EXPECT_EQ(called.error().message, "Server \"demo\": Unknown tool: missing");
}

TEST_F(ClientTest, Client_CallToolTimeoutNamesServerAndMethod) {
  server.hold("tools/call");
  start_ready();
  Captured<Result<json>> called;
  CallOptions opts;
  opts.timeout = Millis(5000);
  session->call_tool("slow", json::object(), opts, called.fn());
  ex.advance(Millis(4999));
  EXPECT_EQ(called.calls, 0);
  ex.advance(Millis(1));
  ASSERT_EQ(called.calls, 1);
  EXPECT_EQ(called.error().code, ErrorCode::timeout);
  EXPECT_EQ(called.error().message, "Server \"demo\": Request tools/call timed out after 5000 ms");
  EXPECT_EQ(server.notifications("notifications/cancelled").size(), 1u);
}

TEST_F(ClientTest, Client_CallToolAbortSendsCancelledAndReportsAborted) {
  server.hold("tools/call");
  start_ready();
  AbortController controller;
  Captured<Result<json>> called;
  CallOptions opts;
  opts.signal = controller.signal();
  session->call_tool("slow", json::object(), opts, called.fn());
  ex.run_until_idle();
  json id = server.last_request("tools/call")["id"];
  controller.abort("user cancelled");
  ex.run_until_idle();
  ASSERT_EQ(called.calls, 1);
  EXPECT_EQ(called.error().code, ErrorCode::aborted);
  auto cancelled = server.notifications("notifications/cancelled");
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0]["params"]["requestId"], id);
  server.reply(id, json::object());  // too late
  ex.run_until_idle();
  EXPECT_EQ(called.calls, 1);
}

TEST_F(ClientTest, Client_CallToolProgressReachesTheCallbackAndResetsTheDeadline) {
  server.hold("tools/call");
  start_ready();
  std::vector<json> progress;
  Captured<Result<json>> called;
  CallOptions opts;
  opts.timeout = Millis(1000);
  opts.on_progress = [&](const json& p) { progress.push_back(p); };
  session->call_tool("slow", json::object(), opts, called.fn());
  ex.run_until_idle();
  json request = server.last_request("tools/call");
  json token = request["params"]["_meta"]["progressToken"];
  ASSERT_FALSE(token.is_null());
  ex.advance(Millis(800));
  server.notify("notifications/progress",
                {{"progressToken", token}, {"progress", 50}, {"total", 100}});
  ex.advance(Millis(800));  // t = 1600: alive only because progress reset the deadline
  EXPECT_EQ(called.calls, 0);
  server.reply(request["id"], {{"content", json::array()}});
  ex.run_until_idle();
  ASSERT_TRUE(called.ok());
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0]["progress"], 50);
  // Progress belongs to the call; it is not forwarded as a generic notification.
  EXPECT_TRUE(notes.empty());
}

// --- server requests and notifications -------------------------------------------------

TEST_F(ClientTest, Client_AnswersPingWithEmptyObject) {
  start_ready();
  server.request(0, "ping");
  ex.run_until_idle();
  json answer = server.response_to(0);
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["result"], json::object());
}

TEST_F(ClientTest, Client_AnswersRootsListWithTheCwdAsFileUri) {
  start_ready();
  server.request("r1", "roots/list");
  ex.run_until_idle();
  json answer = server.response_to("r1");
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["result"],
            (json{{"roots", {{{"uri", "file:///home/me/my%20project"}, {"name", "my project"}}}}}));
}

TEST_F(ClientTest, Client_AnswersRootsListWithNoRootsWithoutCwd) {
  ClientOptions o = make_options();
  o.roots = std::vector<Root>{};
  start_ready(o);
  server.request(1, "roots/list");
  ex.run_until_idle();
  EXPECT_EQ(server.response_to(1)["result"], (json{{"roots", json::array()}}));
}

TEST_F(ClientTest, Client_AnswersUnknownServerRequestWithMethodNotFound) {
  start_ready();
  server.request(9, "sampling/createMessage", json::object());
  ex.run_until_idle();
  json answer = server.response_to(9);
  ASSERT_TRUE(answer.is_object());
  EXPECT_EQ(answer["error"]["code"], rpc_code::kMethodNotFound);
}

TEST_F(ClientTest, Client_RoutesNotificationsToTheHandler) {
  start_ready();
  server.notify("notifications/tools/list_changed");
  server.notify("notifications/message",
                {{"level", "warning"}, {"logger", "db"}, {"data", "slow"}});
  ex.run_until_idle();
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].first, "notifications/tools/list_changed");
  EXPECT_EQ(notes[1].first, "notifications/message");
  EXPECT_TRUE(log.has(LogLevel::warn, "Server \"demo\" [db]: slow"));
}

// --- close and lifetime ----------------------------------------------------------------

TEST_F(ClientTest, Client_CloseFailsPendingCallsOnceAndFiresOnCloseOnce) {
  server.hold("tools/call");
  start_ready();
  Captured<Result<json>> first, second;
  session->call_tool("a", json::object(), {}, first.fn());
  session->call_tool("b", json::object(), {}, second.fn());
  ex.run_until_idle();
  session->close();
  session->close();
  EXPECT_EQ(session->state(), ClientSession::State::closed);
  ex.run_until_idle();
  ASSERT_EQ(first.calls, 1);
  ASSERT_EQ(second.calls, 1);
  EXPECT_EQ(first.error().code, ErrorCode::closed);
  EXPECT_EQ(first.error().message.rfind("Server \"demo\": ", 0), 0u) << first.error();
  EXPECT_EQ(closes.size(), 1u);
  EXPECT_TRUE(server.closed());
}

TEST_F(ClientTest, Client_ServerExitAfterConnectFailsCallsAndReportsClose) {
  server.hold("tools/call");
  start_ready();
  Captured<Result<json>> called;
  session->call_tool("a", json::object(), {}, called.fn());
  ex.run_until_idle();
  server.close_with_error(Error::make(ErrorCode::exited, "server exited (code 2)"));
  ex.run_until_idle();
  ASSERT_EQ(called.calls, 1);
  EXPECT_EQ(called.error().code, ErrorCode::exited);
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].message, "Server \"demo\": server exited (code 2)");
  EXPECT_EQ(session->state(), ClientSession::State::closed);
  Captured<Result<json>> after;
  session->call_tool("a", json::object(), {}, after.fn());
  ex.run_until_idle();
  EXPECT_EQ(after.error().code, ErrorCode::not_connected);
}

TEST_F(ClientTest, Client_DestroyedSessionRunsNoCallbacks) {
  server.hold("tools/call");
  start_ready();
  Captured<Result<json>> called;
  CallOptions opts;
  opts.timeout = Millis(100);
  session->call_tool("a", json::object(), opts, called.fn());
  ex.run_until_idle();
  server.reply(server.last_request("tools/call")["id"], json::object());  // in flight
  session.reset();
  ex.run_until_idle();
  ex.advance(Millis(1000));
  EXPECT_EQ(called.calls, 0);
  EXPECT_TRUE(closes.empty());
  EXPECT_TRUE(server.closed());
}

// More calls in flight than the session keeps callback slots for once idle (64), answered
// in reverse order: each answer reaches its own caller, and calls after the burst still do.
TEST_F(ClientTest, Client_ConcurrentCallsAnsweredOutOfOrderReachTheirOwnCallers) {
  server.hold("tools/call");
  start_ready();
  constexpr int kCalls = 70;
  std::vector<Captured<Result<json>>> called(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    session->call_tool("t", json{{"i", i}}, {}, called[static_cast<std::size_t>(i)].fn());
  }
  ex.run_until_idle();
  auto requests = server.requests("tools/call");
  ASSERT_EQ(requests.size(), static_cast<std::size_t>(kCalls));
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    server.reply((*it)["id"], json{{"echo", (*it)["params"]["arguments"]["i"]}});
    ex.run_until_idle();
  }
  for (int i = 0; i < kCalls; ++i) {
    const auto& c = called[static_cast<std::size_t>(i)];
    ASSERT_EQ(c.calls, 1) << i;
    ASSERT_TRUE(c.ok()) << i;
    EXPECT_EQ(c.last->value()["echo"], i);
  }
  Captured<Result<json>> after;
  session->call_tool("t", json{{"i", kCalls}}, {}, after.fn());
  ex.run_until_idle();
  server.reply(server.last_request("tools/call")["id"], json{{"echo", kCalls}});
  ex.run_until_idle();
  ASSERT_EQ(after.calls, 1);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after.last->value()["echo"], kCalls);
}

TEST_F(ClientTest, Client_ACallbackMayDestroyTheSession) {
  server.hold("tools/call");
  start_ready();
  int calls = 0;
  session->call_tool("a", json::object(), {}, [&](Result<json> r) {
    ++calls;
    EXPECT_TRUE(r.ok());
    session.reset();  // the last handle
  });
  ex.run_until_idle();
  server.reply(server.last_request("tools/call")["id"], json::object());
  ex.run_until_idle();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(session, nullptr);
  EXPECT_TRUE(server.closed());
}

TEST_F(ClientTest, Client_DestroyingTheSessionDuringConnectCancelsEverything) {
  server.hold("initialize");
  start(make_options());
  Captured<Status> connected;
  session->connect(connected.fn());
  ex.run_until_idle();
  session.reset();
  ex.advance(Millis(60000));
  EXPECT_EQ(connected.calls, 0);
  EXPECT_TRUE(server.closed());
}

TEST_F(ClientTest, Client_ErrorsAreNotPrefixedWithoutServerName) {
  start_ready(make_options(""));
  Captured<Result<json>> called;
  session->call_tool("missing", json::object(), {}, called.fn());
  ex.run_until_idle();
  EXPECT_EQ(called.error().message, "Unknown tool: missing");
}

TEST_F(ClientTest, Client_PingSucceeds) {
  start_ready();
  Captured<Status> pinged;
  session->ping(pinged.fn(), Millis(100));
  ex.run_until_idle();
  ASSERT_EQ(pinged.calls, 1);
  EXPECT_TRUE(pinged.ok());
}

TEST_F(ClientTest, Client_GenericRequestReturnsIdAndPrefixesErrors) {
  start_ready();
  Captured<Result<json>> got;
  auto id = session->request("resources/list", nullptr, {}, got.fn());
  ASSERT_TRUE(id.ok());
  ex.run_until_idle();
  ASSERT_EQ(got.calls, 1);
  EXPECT_EQ(got.error().code, ErrorCode::wire);
  EXPECT_EQ(got.error().message, "Server \"demo\": Method not found: resources/list");
}

// --- file URIs for roots ---------------------------------------------------------------

TEST(ClientRoots, FileUri_PercentEncodesWhatAPathSegmentCannotHold) {
  EXPECT_EQ(detail::file_uri_from_path("/tmp/a b#c?d%e"), "file:///tmp/a%20b%23c%3Fd%25e");
  EXPECT_EQ(detail::file_uri_from_path("/srv/caf\xC3\xA9"), "file:///srv/caf%C3%A9");
  EXPECT_EQ(detail::file_uri_from_path("/a/b-c_d.e~f:g@h"), "file:///a/b-c_d.e~f:g@h");
}

TEST(ClientRoots, FileUri_AddsLeadingSlashForDrivePaths) {
  EXPECT_EQ(detail::file_uri_from_path("C:\\work\\x"), "file:///C:/work/x");
}

TEST(ClientRoots, Basename_IgnoresTrailingSeparators) {
  EXPECT_EQ(detail::path_basename("/home/me/proj/"), "proj");
  EXPECT_EQ(detail::path_basename("/home/me/proj"), "proj");
  EXPECT_EQ(detail::path_basename("/"), "/");
  EXPECT_EQ(detail::path_basename("rel"), "rel");
}

}  // namespace
}  // namespace client_test
}  // namespace mcprt
