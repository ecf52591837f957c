// A server's message that cannot be used (nested too deep, invalid UTF-8, not JSON) is a
// clear per-message error (SPEC §17 "Bounded input"): the request it answers fails at once
// naming the server, what was wrong and where; a notification is logged at warn level and
// dropped; the connection stays up. The whole stack runs: ClientSession → RpcPeer →
// StdioTransport over an in-memory byte stream the test writes raw bytes into.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/client.hpp"
#include "mcprt/stdio_transport.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/testing/memory_byte_stream.hpp"

namespace mcprt {
namespace unreadable_message_test {  // this file's own names in a unity batch
namespace {

using testing::CapturingLogger;
using testing::ManualExecutor;
using testing::MemoryByteStream;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string nested(std::size_t levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

class UnreadableMessage : public ::testing::Test {
 protected:
  // A ready session with the server "evil" on the other end of `remote`.
  void SetUp() override {
    auto stream = std::make_unique<MemoryByteStream>(ex);
    remote = std::make_unique<MemoryByteStream::Remote>(stream->remote());
    StdioTransportOptions so;
    so.server_name = "evil";
    so.logger = &log;
    ClientOptions co;
    co.server_name = "evil";
    co.protocol = "legacy";  // the server below scripts the initialize handshake
    co.logger = &log;
    co.request_timeout = Millis(20000);
    co.on_notification = [this](const std::string& method, const json&) {
      notifications.push_back(method);
    };
    co.on_close = [this](const Error& e) { closed = e; };
    session = ClientSession::create(ex, make_stdio_transport(ex, std::move(stream), so), co);
    std::optional<Status> connected;
    session->connect([&](Status s) { connected = std::move(s); });
    ex.run_until_idle();
    const json init = next_request();
    ASSERT_EQ(init.value("method", ""), "initialize");
    answer(init["id"], {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}});
    ASSERT_TRUE(connected && connected->ok());
    ASSERT_EQ(next_request().value("method", ""), "notifications/initialized");
    log.lines.clear();
  }

  // The oldest message the client wrote that the test has not read yet.
  json next_request() {
    for (auto& line : remote->take_lines()) pending_lines.push_back(std::move(line));
    if (pending_lines.empty()) return nullptr;
    json m = json::parse(pending_lines.front(), nullptr, false);
    pending_lines.erase(pending_lines.begin());
    return m;
  }
  void push_line(const std::string& line) {
    remote->push(line + "\n");
    ex.run_until_idle();
  }
  void answer(const json& id, const json& result) {
    push_line(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump());
  }

  // Starts tools/list and returns the id the server must answer.
  json start_list() {
    session->list_tools([this](Result<std::vector<json>> r) { listed = std::move(r); });
    ex.run_until_idle();
    const json req = next_request();
    EXPECT_EQ(req.value("method", ""), "tools/list");
    return req["id"];
  }

  bool warned(const std::string& part) const { return log.has(LogLevel::warn, part); }

  ManualExecutor ex;
  CapturingLogger log;
  std::unique_ptr<MemoryByteStream::Remote> remote;
  std::vector<std::string> pending_lines;
  std::vector<std::string> notifications;
  std::optional<Error> closed;
  std::optional<Result<std::vector<json>>> listed;
  std::shared_ptr<ClientSession> session;  // last: destroyed first
};

TEST_F(UnreadableMessage, InvalidUtf8InAToolsListAnswerFailsItAtOnceNamingServerAndByte) {
  const json id = start_list();
  const std::string line = "{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() +
                           ",\"result\":{\"tools\":[{\"name\":\"a\xFF\"}]}}";
  const std::size_t bad = line.find('\xFF');
  push_line(line);
  // No clock advance: it failed now, not at the 20 s request timeout.
  ASSERT_TRUE(listed.has_value());
  ASSERT_FALSE(listed->ok());
  const Error& e = listed->error();
  EXPECT_EQ(e.code, ErrorCode::protocol);
  EXPECT_EQ(e.message, "Server \"evil\": Unreadable response to tools/list: invalid UTF-8 at byte " +
                           std::to_string(bad));
  EXPECT_TRUE(warned("Server \"evil\": unreadable message")) << log.lines.size();
  EXPECT_TRUE(warned("invalid UTF-8 at byte " + std::to_string(bad)));
  // The connection is still up and usable.
  EXPECT_FALSE(closed.has_value());
  EXPECT_EQ(session->state(), ClientSession::State::ready);
  listed.reset();
  const json again = start_list();
  answer(again, {{"tools", json::array({{{"name", "ok"}}})}});
  ASSERT_TRUE(listed && listed->ok());
  EXPECT_EQ(listed->value().size(), 1u);
}

TEST_F(UnreadableMessage, A66kDeepToolsCallResultFailsTheCallWithoutACrash) {
  std::optional<Result<json>> called;
  session->call_tool("t", json::object(), {}, [&](Result<json> r) { called = std::move(r); });
  ex.run_until_idle();
  const json req = next_request();
  ASSERT_EQ(req.value("method", ""), "tools/call");
  push_line("{\"jsonrpc\":\"2.0\",\"id\":" + req["id"].dump() +
            ",\"result\":{\"content\":" + nested(66000) + "}}");
  ASSERT_TRUE(called.has_value());
  ASSERT_FALSE(called->ok());
  EXPECT_TRUE(contains(called->error().message, "Server \"evil\"")) << called->error();
  EXPECT_TRUE(contains(called->error().message, "tools/call")) << called->error();
  EXPECT_TRUE(contains(called->error().message, "nesting deeper than 128 levels at byte "))
      << called->error();
  EXPECT_FALSE(closed.has_value());
}

TEST_F(UnreadableMessage, DepthAtTheLimitIsDelivered) {
  const json id = start_list();
  // Envelope, result and tools are levels 1-3, the tool object 4, inputSchema 5.
  const std::string schema = "{\"x\":" + nested(123) + "}";
  push_line("{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() +
            ",\"result\":{\"tools\":[{\"name\":\"deep\",\"inputSchema\":" + schema + "}]}}");
  ASSERT_TRUE(listed.has_value());
  ASSERT_TRUE(listed->ok()) << listed->error();
  EXPECT_EQ(listed->value()[0]["name"], "deep");
}

TEST_F(UnreadableMessage, OneLevelPastTheLimitFailsTheRequest) {
  const json id = start_list();
  const std::string schema = "{\"x\":" + nested(124) + "}";
  push_line("{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() +
            ",\"result\":{\"tools\":[{\"name\":\"deep\",\"inputSchema\":" + schema + "}]}}");
  ASSERT_TRUE(listed.has_value());
  ASSERT_FALSE(listed->ok());
  EXPECT_TRUE(contains(listed->error().message, "nesting deeper than 128 levels"))
      << listed->error();
}

TEST_F(UnreadableMessage, AnUnreadableNotificationIsLoggedAndDroppedAndTheConnectionStays) {
  push_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":"
            "{\"level\":\"info\",\"data\":\"bad \xC3\x28 byte\"}}");
  push_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":" +
            nested(5000) + "}");
  EXPECT_TRUE(notifications.empty());
  EXPECT_TRUE(warned("Server \"evil\": unreadable message"));
  EXPECT_TRUE(warned("invalid UTF-8 at byte"));
  EXPECT_TRUE(warned("nesting deeper than 128 levels"));
  EXPECT_FALSE(closed.has_value());
  // Later messages still arrive.
  push_line(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  EXPECT_EQ(notifications, std::vector<std::string>{"notifications/tools/list_changed"});
  const json id = start_list();
  answer(id, {{"tools", json::array()}});
  ASSERT_TRUE(listed && listed->ok());
}

TEST_F(UnreadableMessage, AnAnswerWithAnUnknownIdLeavesThePendingRequestAlone) {
  const json id = start_list();
  push_line("{\"jsonrpc\":\"2.0\",\"id\":9999,\"result\":\"\xFF\"}");
  push_line("{\"jsonrpc\":\"2.0\",\"result\":\"\xFF\"}");  // no id at all
  EXPECT_FALSE(listed.has_value());
  EXPECT_TRUE(warned("id 9999"));
  answer(id, {{"tools", json::array()}});
  ASSERT_TRUE(listed && listed->ok());
}

TEST_F(UnreadableMessage, AnUnreadableServerRequestIsAnsweredWithParseError) {
  push_line("{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\",\"params\":{\"x\":\"\xFF\"}}");
  const json reply = next_request();
  EXPECT_EQ(reply["id"], "s1");
  EXPECT_EQ(reply["error"]["code"], rpc_code::kParseError);
  EXPECT_TRUE(contains(reply["error"].value("message", ""), "invalid UTF-8 at byte"))
      << reply.dump();
  // A request whose id came back as "1" must not be mistaken for our request 1.
  const json id = start_list();
  push_line("{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() +
            ",\"method\":\"sampling/createMessage\",\"params\":" + nested(200) + "}");
  EXPECT_FALSE(listed.has_value());
}

TEST_F(UnreadableMessage, ANonJsonLineNamingAPendingIdFailsThatRequestToo) {
  // Truncated mid-value: the id before the break is still readable.
  const json id = start_list();
  push_line("{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() + ",\"result\":{\"tools\":[tru");
  ASSERT_TRUE(listed.has_value());
  ASSERT_FALSE(listed->ok());
  EXPECT_TRUE(contains(listed->error().message, "not JSON at byte")) << listed->error();
}

}  // namespace
}  // namespace unreadable_message_test
}  // namespace mcprt
