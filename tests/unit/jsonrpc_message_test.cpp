// The JSON-RPC message model (core/src/jsonrpc/message.hpp) and the MemoryTransport fake
// the peer tests stand on.

#include <gtest/gtest.h>

#include <vector>

#include "jsonrpc/message.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/testing/memory_transport.hpp"

namespace mcprt {
namespace jsonrpc_message_test {  // this file's own names in a unity batch
namespace {

using detail::classify_message;
using detail::id_as_integer;
using detail::LooksLike;
using detail::MessageKind;
using testing::make_memory_transport_pair;
using testing::ManualExecutor;

TEST(JsonRpcMessage, Message_ClassifiesRequestsNotificationsAndResponses) {
  auto req = classify_message({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "ping"}});
  EXPECT_EQ(req.kind, MessageKind::request);
  EXPECT_EQ(req.id, json(0));
  EXPECT_TRUE(req.params.is_null());

  auto note = classify_message({{"jsonrpc", "2.0"}, {"method", "x"}, {"params", {{"a", 1}}}});
  EXPECT_EQ(note.kind, MessageKind::notification);
  EXPECT_EQ(note.params["a"], 1);

  auto ok = classify_message({{"jsonrpc", "2.0"}, {"id", "s"}, {"result", nullptr}});
  EXPECT_EQ(ok.kind, MessageKind::response);  // a null result is still a result
  EXPECT_FALSE(ok.error.has_value());

  auto err = classify_message(
      {{"jsonrpc", "2.0"}, {"id", 3}, {"error", {{"code", -32601}, {"message", "nope"}}}});
  ASSERT_EQ(err.kind, MessageKind::response);
  ASSERT_TRUE(err.error.has_value());
  EXPECT_EQ(err.error->wire_code, -32601);
  EXPECT_EQ(err.error->message, "nope");
}

TEST(JsonRpcMessage, Message_ErrorWithoutCodeOrMessageIsStillAnError) {
  auto err = classify_message({{"jsonrpc", "2.0"}, {"id", 3}, {"error", json::object()}});
  ASSERT_EQ(err.kind, MessageKind::response);
  ASSERT_TRUE(err.error.has_value());
  EXPECT_EQ(err.error->code, ErrorCode::wire);
  EXPECT_EQ(err.error->wire_code, rpc_code::kInternalError);
}

TEST(JsonRpcMessage, Message_InvalidShapesSayWhatTheyLookLike) {
  auto both =
      classify_message({{"jsonrpc", "2.0"}, {"id", 1}, {"result", 1}, {"error", {{"code", 1}}}});
  EXPECT_EQ(both.kind, MessageKind::invalid);
  EXPECT_EQ(both.looks_like, LooksLike::response);

  auto no_version = classify_message({{"id", 1}, {"method", "ping"}});
  EXPECT_EQ(no_version.kind, MessageKind::invalid);
  EXPECT_EQ(no_version.looks_like, LooksLike::request);
  EXPECT_EQ(no_version.id, json(1));

  auto bad_method = classify_message({{"jsonrpc", "2.0"}, {"id", 1}, {"method", 5}});
  EXPECT_EQ(bad_method.kind, MessageKind::invalid);

  auto bad_id = classify_message({{"jsonrpc", "2.0"}, {"id", true}, {"method", "ping"}});
  EXPECT_EQ(bad_id.kind, MessageKind::invalid);
  EXPECT_TRUE(bad_id.id.is_null());  // answered with id null

  auto scalar = classify_message(json(7));
  EXPECT_EQ(scalar.kind, MessageKind::invalid);
  EXPECT_EQ(scalar.looks_like, LooksLike::nothing);
}

TEST(JsonRpcMessage, Message_IdAsIntegerAcceptsOnlyExactIntegers) {
  EXPECT_EQ(id_as_integer(json(0)), 0);
  EXPECT_EQ(id_as_integer(json(42u)), 42);
  EXPECT_EQ(id_as_integer(json(7.0)), 7);
  EXPECT_EQ(id_as_integer(json("12")), 12);
  EXPECT_FALSE(id_as_integer(json(7.5)).has_value());
  EXPECT_FALSE(id_as_integer(json("")).has_value());
  EXPECT_FALSE(id_as_integer(json("-1")).has_value());
  EXPECT_FALSE(id_as_integer(json("1e3")).has_value());
  EXPECT_FALSE(id_as_integer(json("9999999999999999999999")).has_value());
  EXPECT_FALSE(id_as_integer(json(18446744073709551615u)).has_value());
  EXPECT_FALSE(id_as_integer(json(nullptr)).has_value());
  EXPECT_FALSE(id_as_integer(json(true)).has_value());
}

TEST(JsonRpcMessage, Message_DescribeNeverThrowsOnBadUtf8AndTruncates) {
  json bad = std::string("\xff\xfe");
  EXPECT_NO_THROW((void)detail::describe_json(bad));
  EXPECT_EQ(detail::describe_json(json(std::string(500, 'a')), 10).size(), 13u);
}

TEST(JsonRpcMessage, DisposeJson_LeavesEveryKindOfValueNull) {
  std::vector<json> values = {
      json(7), json("a string longer than any small-string buffer"), json::object(), json::array(),
      json::parse(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"},
                  [[], {}, [1, [2, {"a": [3]}]]]],"isError":false}})")};
  for (json& value : values) {
    detail::dispose_json(value);
    EXPECT_TRUE(value.is_null());
  }
}

// Far deeper than the recursion bound (and than a recursion without one could go on the
// wasm tests' 1 MiB stack): the levels below the bound are freed by nlohmann's destructor.
// The ASan tree's leak check sees whether every level was freed.
TEST(JsonRpcMessage, DisposeJson_FreesADomDeeperThanItsRecursionBound) {
  json root = json::array();
  json* level = &root;
  for (int depth = 0; depth < 50000; ++depth) {
    level->push_back(depth);  // a sibling on each level
    if (depth % 2 == 0) {
      level->push_back(json::object());
      level = &(*level)[1]["next"];
      *level = json::array();
    } else {
      level->push_back(json::array());
      level = &(*level)[1];
    }
  }
  detail::dispose_json(root);
  EXPECT_TRUE(root.is_null());
}

// --- MemoryTransport -------------------------------------------------------------------

struct EndLog {
  std::vector<json> messages;
  std::vector<Error> closes;
  TransportHandlers handlers() {
    return {[this](json m) { messages.push_back(std::move(m)); },
            [this](const Error& e) { closes.push_back(e); }};
  }
};

TEST(MemoryTransport, MemoryTransport_DeliversThroughTheExecutorInOrder) {
  ManualExecutor ex;
  auto [client, server] = make_memory_transport_pair(ex);
  EndLog c, s;
  client->start(c.handlers());
  server->start(s.handlers());
  ASSERT_TRUE(client->send(1).ok());
  ASSERT_TRUE(client->send(2).ok());
  EXPECT_TRUE(s.messages.empty());  // never inside send()
  ex.run_until_idle();
  EXPECT_EQ(s.messages, (std::vector<json>{1, 2}));
  EXPECT_TRUE(c.messages.empty());
}

TEST(MemoryTransport, MemoryTransport_QueuesMessagesUntilTheReceiverStarts) {
  ManualExecutor ex;
  auto [client, server] = make_memory_transport_pair(ex);
  EndLog s;
  ASSERT_TRUE(client->send("early").ok());
  ex.run_until_idle();
  server->start(s.handlers());
  EXPECT_TRUE(s.messages.empty());
  ex.run_until_idle();
  EXPECT_EQ(s.messages, (std::vector<json>{"early"}));
}

TEST(MemoryTransport, MemoryTransport_CloseClosesBothEndsOnceAfterInFlightMessages) {
  ManualExecutor ex;
  auto [client, server] = make_memory_transport_pair(ex);
  EndLog c, s;
  client->start(c.handlers());
  server->start(s.handlers());
  ASSERT_TRUE(client->send("last words").ok());
  client->close();
  client->close();
  EXPECT_FALSE(client->send("too late").ok());
  EXPECT_FALSE(server->send("too late").ok());
  EXPECT_TRUE(c.closes.empty());  // posted
  ex.run_until_idle();
  EXPECT_EQ(s.messages, (std::vector<json>{"last words"}));
  ASSERT_EQ(c.closes.size(), 1u);
  ASSERT_EQ(s.closes.size(), 1u);
  EXPECT_EQ(c.closes[0].code, ErrorCode::closed);
  EXPECT_EQ(s.closes[0].code, ErrorCode::closed);
}

TEST(MemoryTransport, MemoryTransport_CloseWithErrorGivesThePeerThatError) {
  ManualExecutor ex;
  auto [client, server] = make_memory_transport_pair(ex);
  EndLog c, s;
  client->start(c.handlers());
  server->start(s.handlers());
  server->close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ASSERT_EQ(c.closes.size(), 1u);
  EXPECT_EQ(c.closes[0].code, ErrorCode::exited);
  ASSERT_EQ(s.closes.size(), 1u);
  EXPECT_EQ(s.closes[0].code, ErrorCode::closed);
}

TEST(MemoryTransport, MemoryTransport_DestroyingAnEndClosesTheOtherAndSilencesItself) {
  ManualExecutor ex;
  auto [client, server] = make_memory_transport_pair(ex);
  EndLog c, s;
  client->start(c.handlers());
  server->start(s.handlers());
  ASSERT_TRUE(server->send("for the dead").ok());
  client.reset();
  ex.run_until_idle();
  EXPECT_TRUE(c.messages.empty());
  EXPECT_TRUE(c.closes.empty());
  ASSERT_EQ(s.closes.size(), 1u);
  EXPECT_EQ(s.closes[0].code, ErrorCode::closed);
}

}  // namespace
}  // namespace jsonrpc_message_test
}  // namespace mcprt
