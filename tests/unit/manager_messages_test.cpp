// The manager's protocol tap (ManagerOptions::on_message): every JSON-RPC message a
// server's transport sends or receives, named by server, in order — what a message log in
// a host (the demo page's protocol panel) shows.

#include <gmock/gmock.h>

#include "manager_test_fixture.hpp"
#include "mcprt/abort.hpp"

namespace mcprt::testing {
namespace manager_messages_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Seen {
  std::string server;
  MessageDirection direction;
  json message;
};

class ManagerMessages : public ManagerTest {
 protected:
  void tap() {
    options.on_message = [this](const std::string& server, MessageDirection direction,
                                const json& message) {
      seen.push_back({server, direction, message});
    };
  }
  std::vector<json> of(const std::string& server, MessageDirection direction) const {
    std::vector<json> out;
    for (const auto& s : seen) {
      if (s.server == server && s.direction == direction) out.push_back(s.message);
    }
    return out;
  }
  // "send initialize", "receive #1", ...: what the log shows, in order.
  std::vector<std::string> log_of(const std::string& server) const {
    std::vector<std::string> out;
    for (const auto& s : seen) {
      if (s.server != server) continue;
      std::string what = s.message.contains("method") ? s.message["method"].get<std::string>()
                                                      : "#" + s.message["id"].dump();
      out.push_back(std::string(to_string(s.direction)) + " " + what);
    }
    return out;
  }

  std::vector<Seen> seen;
};

TEST_F(ManagerMessages, OnMessage_ShowsEachServersMessagesSentAndReceivedInOrder) {
  tap();
  serve("alpha", tools_of({"read"}));
  serve("beta", tools_of({"search"}));
  start({config("alpha"), config("beta")});
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::connected);

  for (const char* name : {"alpha", "beta"}) {
    // What the tap saw sent is exactly what that server received, in order.
    EXPECT_EQ(of(name, MessageDirection::send), farm.latest(name)->received()) << name;
    const std::vector<std::string> log = log_of(name);
    auto at = [&](const std::string& entry) {
      return std::find(log.begin(), log.end(), entry) - log.begin();
    };
    const json init_id = farm.latest(name)->last_request("initialize")["id"];
    const json list_id = farm.latest(name)->last_request("tools/list")["id"];
    const auto sent_init = at("send initialize");
    const auto got_init = at("receive #" + init_id.dump());
    const auto sent_list = at("send tools/list");
    const auto got_list = at("receive #" + list_id.dump());
    ASSERT_LT(got_list, static_cast<long>(log.size())) << ::testing::PrintToString(log);
    EXPECT_LT(sent_init, got_init);
    EXPECT_LT(got_init, sent_list);
    EXPECT_LT(sent_list, got_list);
  }
  // The received tools/list result is the parsed message itself.
  const std::vector<json> alpha_in = of("alpha", MessageDirection::receive);
  ASSERT_FALSE(alpha_in.empty());
  EXPECT_EQ(alpha_in.back()["result"]["tools"][0]["name"], "read");
}

TEST_F(ManagerMessages, OnMessage_ShowsACallItsProgressAndItsCancellation) {
  tap();
  farm.on_connect("alpha", [](FakeServer& s) {
    s.set_tools({tool("slow")});
    s.hold("tools/call");
  });
  start({config("alpha")});
  ex.run_until_idle();
  AbortController abort;
  CallOptions call;
  call.signal = abort.signal();
  call.on_progress = [](const json&) {};
  std::optional<Result<json>> result;
  manager->tool_host()->call_tool("alpha", "slow", json{{"n", 1}}, call,
                                  [&](Result<json> r) { result = std::move(r); });
  ex.run_until_idle();
  FakeServer* server = farm.latest("alpha");
  const json request = server->last_request("tools/call");
  ASSERT_FALSE(request.is_null());
  const json token = request["params"]["_meta"]["progressToken"];
  server->notify("notifications/progress",
                 {{"progressToken", token}, {"progress", 1}, {"total", 3}});
  ex.run_until_idle();
  abort.abort("user cancelled");
  ex.run_until_idle();

  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->error().code, ErrorCode::aborted);
  const std::vector<std::string> log = log_of("alpha");
  const auto from = std::find(log.begin(), log.end(), "send tools/call");
  ASSERT_NE(from, log.end());
  EXPECT_THAT(std::vector<std::string>(from, log.end()),
              ElementsAre("send tools/call", "receive notifications/progress",
                          "send notifications/cancelled"));
  const json cancelled = of("alpha", MessageDirection::send).back();
  EXPECT_EQ(cancelled["params"]["requestId"], request["id"]);
  EXPECT_THAT(cancelled["params"]["reason"].get<std::string>(), HasSubstr("user cancelled"));
}

TEST_F(ManagerMessages, OnMessage_FollowsAServerAcrossAReconnect) {
  tap();
  serve("alpha", tools_of({"read"}));
  start({config("alpha")});
  ex.run_until_idle();
  farm.latest("alpha")->close_with_error(Error::make(ErrorCode::exited, "gone"));
  ex.run_until_idle();
  ex.advance(Millis(1000));  // the first retry (500 ms backoff)
  ex.run_until_idle();
  ASSERT_EQ(phase("alpha"), ServerPhase::connected);
  ASSERT_EQ(farm.attempts("alpha"), 2u);
  const std::vector<std::string> log = log_of("alpha");
  EXPECT_EQ(std::count(log.begin(), log.end(), "send initialize"), 2);
  EXPECT_EQ(std::count(log.begin(), log.end(), "send tools/list"), 2);
}

}  // namespace
}  // namespace manager_messages_test
}  // namespace mcprt::testing
