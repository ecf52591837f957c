// ClientSession beyond tools (SPEC §15): resources/list, resources/templates/list and
// prompts/list (paged and guarded as tools/list, absent without the capability),
// resources/read, resources/subscribe and unsubscribe, prompts/get and completion/complete:
// what goes on the wire, what comes back, and what is refused before anything is sent.
// ManualExecutor + FakeServer.

#include "mcprt/client.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/testing/captured.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/fake_server.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace client_resources_test {  // this file's own names in a unity batch
namespace {

using testing::CapturingLogger;
using testing::FakeServer;
using testing::ManualExecutor;

using testing::Captured;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A server offering `capabilities` (on the 2025 wire).
class ClientResourcesTest : public ::testing::Test {
 protected:
  void start_ready(json capabilities) {
    server.set_initialize_result({{"protocolVersion", "2025-11-25"},
                                  {"capabilities", std::move(capabilities)},
                                  {"serverInfo", {{"name", "fake"}, {"version", "1"}}}});
    ClientOptions o;
    o.server_name = "docs";
    o.protocol = "legacy";
    o.logger = &log;
    o.on_notification = [this](const std::string& method, const json& params) {
      notes.push_back({method, params});
    };
    session = ClientSession::create(ex, server.take_client_end(), o);
    Captured<Status> connected;
    session->connect(connected.fn());
    ex.run_until_idle();
    ASSERT_TRUE(connected.ok()) << connected.error();
  }

  // Answers `method` page by page: the request without a cursor gets pages[0], the one
  // with cursor "c<i>" pages[i]; every page but the last points at the next.
  void serve_pages(const std::string& method, const std::string& key, std::vector<std::vector<json>> pages) {
    server.on(method, [pages, key](const json& params) -> Result<json> {
      std::size_t i = 0;
      if (params.is_object() && params.contains("cursor")) i = std::stoul(params["cursor"].get<std::string>().substr(1));
      json result = {{key, pages.at(i)}};
      if (i + 1 < pages.size()) result["nextCursor"] = "c" + std::to_string(i + 1);
      return result;
    });
  }

  Result<std::vector<json>> run_list(void (ClientSession::*list)(std::function<void(Result<std::vector<json>>)>, AbortSignal)) {
    Captured<Result<std::vector<json>>> got;
    (session.get()->*list)(got.fn(), {});
    ex.run_until_idle();
    EXPECT_EQ(got.calls, 1);
    return got.last ? std::move(*got.last) : Result<std::vector<json>>(Error::make(ErrorCode::internal, "no answer"));
  }

  ManualExecutor ex;
  CapturingLogger log;
  FakeServer server{ex};
  std::vector<std::pair<std::string, json>> notes;
  std::shared_ptr<ClientSession> session;
};

TEST_F(ClientResourcesTest, ListsResourcesTemplatesAndPromptsAcrossPages) {
  start_ready({{"resources", json::object()}, {"prompts", json::object()}});
  serve_pages("resources/list", "resources",
              {{{{"uri", "file:///a.md"}, {"name", "a"}}}, {{{"uri", "file:///b.png"}, {"name", "b"}}}});
  serve_pages("resources/templates/list", "resourceTemplates", {{{{"uriTemplate", "file:///{path}"}, {"name", "file"}}}});
  serve_pages("prompts/list", "prompts",
              {{{{"name", "simple"}}}, {}, {{{"name", "args"}, {"arguments", {{{"name", "city"}}}}}}});

  auto resources = run_list(&ClientSession::list_resources);
  ASSERT_TRUE(resources.ok()) << resources.error();
  ASSERT_EQ(resources->size(), 2u);
  EXPECT_EQ((*resources)[0]["uri"], "file:///a.md");
  EXPECT_EQ((*resources)[1]["uri"], "file:///b.png");
  ASSERT_EQ(server.requests("resources/list").size(), 2u);
  EXPECT_EQ(server.requests("resources/list")[1]["params"]["cursor"], "c1");

  auto templates = run_list(&ClientSession::list_resource_templates);
  ASSERT_TRUE(templates.ok()) << templates.error();
  ASSERT_EQ(templates->size(), 1u);
  EXPECT_EQ((*templates)[0]["uriTemplate"], "file:///{path}");

  auto prompts = run_list(&ClientSession::list_prompts);  // an empty middle page is no end
  ASSERT_TRUE(prompts.ok()) << prompts.error();
  ASSERT_EQ(prompts->size(), 2u);
  EXPECT_EQ((*prompts)[1]["arguments"][0]["name"], "city");
}

TEST_F(ClientResourcesTest, AServerWithoutTheCapabilityHasNoneAndIsNotAsked) {
  start_ready({{"tools", json::object()}});
  for (auto list : {&ClientSession::list_resources, &ClientSession::list_resource_templates,
                    &ClientSession::list_prompts}) {
    auto got = run_list(list);
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_TRUE(got->empty());
  }
  EXPECT_TRUE(server.requests("resources/list").empty());
  EXPECT_TRUE(server.requests("resources/templates/list").empty());
  EXPECT_TRUE(server.requests("prompts/list").empty());

  Captured<Result<json>> read, prompt;
  session->read_resource("file:///a.md", {}, read.fn());
  session->get_prompt("simple", nullptr, {}, prompt.fn());
  ex.run_until_idle();
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(read.error().message,
            "Server \"docs\": resources/read file:///a.md: the server does not offer resources");
  ASSERT_FALSE(prompt.ok());
  EXPECT_TRUE(contains(prompt.error().message, "does not offer prompts")) << prompt.error();
  EXPECT_TRUE(server.requests("resources/read").empty());
  EXPECT_TRUE(server.requests("prompts/get").empty());
}

TEST_F(ClientResourcesTest, ListsAreGuardedLikeTools) {
  start_ready({{"resources", json::object()}, {"prompts", json::object()}});
  server.on("resources/list", [](const json&) -> Result<json> {
    return json{{"resources", {{{"uri", "file:///a"}}, {{"name", "no uri"}}, 7}}, {"nextCursor", "same"}};
  });
  server.on("prompts/list", [](const json&) -> Result<json> { return json{{"prompts", "none"}}; });

  auto resources = run_list(&ClientSession::list_resources);
  ASSERT_FALSE(resources.ok());
  EXPECT_EQ(resources.error().code, ErrorCode::protocol);
  EXPECT_EQ(resources.error().message,
            "Server \"docs\": resources/list returned the cursor \"same\" twice; stopping to avoid "
            "an endless listing");
  EXPECT_TRUE(log.has(LogLevel::warn, "ignoring resource 1 of resources/list page 1: no string \"uri\""));
  EXPECT_TRUE(log.has(LogLevel::warn, "ignoring resource 2 of resources/list page 1: not an object"));

  auto prompts = run_list(&ClientSession::list_prompts);
  ASSERT_FALSE(prompts.ok());
  EXPECT_EQ(prompts.error().message, "Server \"docs\": prompts/list result has no \"prompts\" array (page 1)");
}

TEST_F(ClientResourcesTest, ReadsAResourceAndRefusesAResultWithoutContents) {
  start_ready({{"resources", json::object()}});
  server.on("resources/read", [](const json& params) -> Result<json> {
    if (params["uri"] == "file:///broken") return json{{"text", "not in contents"}};
    return json{{"contents",
                 {{{"uri", params["uri"]}, {"mimeType", "text/markdown"}, {"text", "# A"}},
                  {{"uri", "file:///b.png"}, {"mimeType", "image/png"}, {"blob", "iVBORw0KGgo="}}}}};
  });
  Captured<Result<json>> read, broken;
  session->read_resource("file:///a.md", {}, read.fn());
  session->read_resource("file:///broken", {}, broken.fn());
  ex.run_until_idle();
  ASSERT_TRUE(read.ok()) << read.error();
  EXPECT_EQ((*read.last)->at("contents")[0]["text"], "# A");
  EXPECT_EQ((*read.last)->at("contents")[1]["blob"], "iVBORw0KGgo=");
  EXPECT_EQ(server.requests("resources/read")[0]["params"], json({{"uri", "file:///a.md"}}));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, ErrorCode::protocol);
  EXPECT_EQ(broken.error().message,
            "Server \"docs\": resources/read file:///broken returned a result without a \"contents\" array");
}

TEST_F(ClientResourcesTest, GetsAPromptWithStringArgumentsOnly) {
  start_ready({{"prompts", json::object()}});
  server.on("prompts/get", [](const json& params) -> Result<json> {
    const std::string city = params.contains("arguments") ? params["arguments"]["city"].get<std::string>() : "?";
    return json{{"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", "Weather in " + city}}}}}}};
  });
  Captured<Result<json>> with_args, without_args, bad_args;
  session->get_prompt("weather", {{"city", "Lisbon"}}, {}, with_args.fn());
  session->get_prompt("weather", nullptr, {}, without_args.fn());
  session->get_prompt("weather", {{"days", 3}}, {}, bad_args.fn());
  ex.run_until_idle();
  ASSERT_TRUE(with_args.ok()) << with_args.error();
  EXPECT_EQ((*with_args.last)->at("messages")[0]["content"]["text"], "Weather in Lisbon");
  ASSERT_TRUE(without_args.ok()) << without_args.error();
  const auto sent = server.requests("prompts/get");
  ASSERT_EQ(sent.size(), 2u);  // the third never left
  EXPECT_EQ(sent[0]["params"], json({{"name", "weather"}, {"arguments", {{"city", "Lisbon"}}}}));
  EXPECT_EQ(sent[1]["params"], json({{"name", "weather"}}));
  ASSERT_FALSE(bad_args.ok());
  EXPECT_EQ(bad_args.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(bad_args.error().message,
            "Server \"docs\": prompts/get weather: arguments must be an object of strings");
}

TEST_F(ClientResourcesTest, CompletesAPromptArgumentWithTheArgumentsGivenSoFar) {
  start_ready({{"prompts", json::object()}, {"completions", json::object()}});
  server.on("completion/complete", [](const json&) -> Result<json> {
    return json{{"completion", {{"values", {"Lisbon", "Lima"}}, {"total", 2}, {"hasMore", false}}}};
  });
  Captured<Result<json>> done, bad_ref;
  session->complete({{"type", "ref/prompt"}, {"name", "weather"}}, "city", "Li", {{"country", "PT"}}, {},
                    done.fn());
  session->complete({{"type", "ref/tool"}, {"name", "x"}}, "city", "Li", nullptr, {}, bad_ref.fn());
  ex.run_until_idle();
  ASSERT_TRUE(done.ok()) << done.error();
  EXPECT_EQ((*done.last)->at("completion")["values"], json({"Lisbon", "Lima"}));
  const auto sent = server.requests("completion/complete");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0]["params"], json({{"ref", {{"type", "ref/prompt"}, {"name", "weather"}}},
                                     {"argument", {{"name", "city"}, {"value", "Li"}}},
                                     {"context", {{"arguments", {{"country", "PT"}}}}}}));
  ASSERT_FALSE(bad_ref.ok());
  EXPECT_EQ(bad_ref.error().code, ErrorCode::invalid_argument);
}

TEST_F(ClientResourcesTest, CompletionNeedsTheCapabilityAndAValuesArray) {
  start_ready({{"resources", json::object()}, {"completions", json::object()}});
  server.on("completion/complete", [](const json&) -> Result<json> { return json{{"completion", {{"total", 2}}}}; });
  Captured<Result<json>> done;
  session->complete({{"type", "ref/resource"}, {"uri", "file:///{path}"}}, "path", "RE", nullptr, {}, done.fn());
  ex.run_until_idle();
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code, ErrorCode::protocol);
  EXPECT_TRUE(contains(done.error().message, "returned a result without a \"values\" array")) << done.error();
}

TEST_F(ClientResourcesTest, SubscribesWhenTheServerOffersItAndUpdatesReachTheHost) {
  start_ready({{"resources", {{"subscribe", true}}}});
  server.on("resources/subscribe", [](const json&) -> Result<json> { return json::object(); });
  server.on("resources/unsubscribe", [](const json&) -> Result<json> { return json::object(); });
  Captured<Status> subscribed, unsubscribed;
  session->subscribe_resource("file:///log.txt", subscribed.fn());
  ex.run_until_idle();
  ASSERT_TRUE(subscribed.ok()) << subscribed.error();
  EXPECT_EQ(server.last_request("resources/subscribe")["params"], json({{"uri", "file:///log.txt"}}));

  server.notify("notifications/resources/updated", {{"uri", "file:///log.txt"}});
  ex.run_until_idle();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].first, "notifications/resources/updated");
  EXPECT_EQ(notes[0].second["uri"], "file:///log.txt");

  session->unsubscribe_resource("file:///log.txt", unsubscribed.fn());
  ex.run_until_idle();
  ASSERT_TRUE(unsubscribed.ok()) << unsubscribed.error();
  EXPECT_EQ(server.requests("resources/unsubscribe").size(), 1u);
}

TEST_F(ClientResourcesTest, SubscribingIsRefusedWhenTheServerDoesNotOfferIt) {
  start_ready({{"resources", json::object()}});
  Captured<Status> subscribed;
  session->subscribe_resource("file:///log.txt", subscribed.fn());
  ex.run_until_idle();
  ASSERT_FALSE(subscribed.ok());
  EXPECT_EQ(subscribed.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(subscribed.error().message,
            "Server \"docs\": resources/subscribe file:///log.txt: the server does not offer resource "
            "subscriptions");
  EXPECT_TRUE(server.requests("resources/subscribe").empty());
}

}  // namespace
}  // namespace client_resources_test
}  // namespace mcprt
