// McpTool checks a result's structuredContent against the tool's outputSchema (SPEC §15):
// a mismatch or a missing structuredContent becomes an isError result naming the tool and
// the failing path; server errors, tools without an outputSchema and outputSchemas the
// validator cannot use pass unchanged.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manager_test_fixture.hpp"
#include "mcprt/json_schema.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tools.hpp"

namespace mcprt {
namespace mcp_tool_output_schema_test {
namespace {

using testing::ManualExecutor;

// The manager as the tool sees it: every call is answered by hand.
class AnsweringHost final : public McpToolHost {
 public:
  void call_tool(const std::string&, const std::string&, json, CallOptions,
                 std::function<void(Result<json>)> done) override {
    calls.push_back(std::move(done));
  }
  void wait_for_connection(const std::string&, AbortSignal,
                           std::function<void(Status)> done) override {
    waits.push_back(std::move(done));
  }
  std::vector<std::function<void(Result<json>)>> calls;
  std::vector<std::function<void(Status)>> waits;
};

const char* kCountSchema = R"({
  "type": "object",
  "properties": {"count": {"type": "integer"},
                 "items": {"type": "array", "items": {"type": "object", "required": ["name"]}}},
  "required": ["count"]})";

struct OutputSchemaTest : ::testing::Test {
  ManualExecutor ex;
  std::shared_ptr<AnsweringHost> host = std::make_shared<AnsweringHost>();

  std::shared_ptr<McpTool> tool(const json& definition, bool deferred = false) {
    McpToolInfo info;
    info.server = "x";
    info.raw_name = "y";
    info.name = "mcp_x_y";
    info.definition = definition;
    info.deferred = deferred;
    if (deferred) return std::make_shared<DeferredMcpTool>(ex, info, host, kDefaultMaxResultBytes);
    return std::make_shared<McpTool>(ex, info, host, kDefaultMaxResultBytes);
  }
  json definition_with(const json& output_schema) {
    return json{
        {"name", "y"}, {"inputSchema", {{"type", "object"}}}, {"outputSchema", output_schema}};
  }
  // Calls `t`, answers with `result`, returns what the caller got.
  ToolResult call(const std::shared_ptr<McpTool>& t, const json& result) {
    std::optional<Result<ToolResult>> got;
    t->call(json::object(), {}, [&](Result<ToolResult> r) { got.emplace(std::move(r)); });
    ex.run_until_idle();
    if (!host->waits.empty()) {
      auto w = std::move(host->waits.front());
      host->waits.clear();
      w(Status());
      ex.run_until_idle();
    }
    EXPECT_EQ(host->calls.size(), 1u);
    if (host->calls.empty()) return {};
    auto done = std::move(host->calls.front());
    host->calls.clear();
    done(result);
    ex.run_until_idle();
    EXPECT_TRUE(got && got->ok());
    return got && got->ok() ? got->value() : ToolResult{};
  }
  static json structured(const json& value) {
    return json{{"content", json::array({{{"type", "text"}, {"text", "done"}}})},
                {"structuredContent", value}};
  }
};

TEST_F(OutputSchemaTest, MismatchBecomesAnErrorNamingToolAndPath) {
  auto t = tool(definition_with(json::parse(kCountSchema)));
  json sc = {{"count", "3"}};
  ToolResult r = call(t, structured(sc));
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(
      r.text,
      "MCP error: Server \"x\": tool \"y\" returned structuredContent that does not match its "
      "outputSchema: /count: expected integer, got string");
  EXPECT_EQ(r.error_code, ErrorCode::protocol);
  // What the server sent stays, for a host that wants to look.
  EXPECT_EQ(r.structured_content, sc);
  EXPECT_EQ(r.content, structured(sc)["content"]);
}

TEST_F(OutputSchemaTest, NestedMismatchNamesTheNestedPath) {
  auto t = tool(definition_with(json::parse(kCountSchema)));
  ToolResult r =
      call(t, structured(json::parse(R"({"count":2,"items":[{"name":"a"},{"title":"b"}]})")));
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("outputSchema: /items/1: missing required property \"name\""),
            std::string::npos)
      << r.text;
}

TEST_F(OutputSchemaTest, MatchingResultPassesUnchanged) {
  auto t = tool(definition_with(json::parse(kCountSchema)));
  json sc = json::parse(R"({"count":2,"items":[{"name":"a"}]})");
  ToolResult r = call(t, structured(sc));
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "done");
  EXPECT_EQ(r.structured_content, sc);
  EXPECT_FALSE(r.error_code);
}

TEST_F(OutputSchemaTest, MissingStructuredContentIsAnError) {
  auto t = tool(definition_with(json::parse(kCountSchema)));
  ToolResult r =
      call(t, json{{"content", json::array({{{"type", "text"}, {"text", "3 things"}}})}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text,
            "MCP error: Server \"x\": tool \"y\" returned no structuredContent, but it declares an "
            "outputSchema");
  EXPECT_EQ(r.content[0]["text"], "3 things");
}

TEST_F(OutputSchemaTest, ServerErrorResultIsNotChecked) {
  auto t = tool(definition_with(json::parse(kCountSchema)));
  ToolResult r =
      call(t, json{{"isError", true},
                   {"content", json::array({{{"type", "text"}, {"text", "disk full"}}})}});
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.text, "disk full");
  EXPECT_FALSE(r.error_code);
}

TEST_F(OutputSchemaTest, ToolWithoutOutputSchemaIsNotChecked) {
  auto t = tool(json{{"name", "y"}});
  ToolResult r = call(t, structured("anything"));
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "done");
}

TEST_F(OutputSchemaTest, UnusableOutputSchemaLetsResultsThrough) {
  // A $ref that resolves nowhere: the schema cannot judge anything, so it does not fail
  // every call of the tool.
  json broken =
      json::parse(R"({"type":"object","properties":{"count":{"$ref":"#/$defs/missing"}}})");
  ASSERT_TRUE(check_json_schema(broken));
  auto t = tool(definition_with(broken));
  ToolResult r = call(t, structured({{"count", "3"}}));
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "done");
  // Not an object (a boolean schema, a string): not a usable outputSchema either.
  ToolResult r2 = call(tool(definition_with("object")), structured({{"count", "3"}}));
  EXPECT_FALSE(r2.is_error);
  ToolResult r3 = call(tool(definition_with(false)), structured({{"count", "3"}}));
  EXPECT_FALSE(r3.is_error);
}

TEST_F(OutputSchemaTest, DeferredToolChecksItsResultToo) {
  auto t = tool(definition_with(json::parse(kCountSchema)), /*deferred=*/true);
  ToolResult r = call(t, structured({{"count", 1.5}}));
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("outputSchema: /count: expected integer, got number"), std::string::npos)
      << r.text;
}

// The manager says, when a server lists a tool, that its outputSchema cannot be used, so
// the unchecked results are no surprise; a usable schema gives no warning.
class OutputSchemaListing : public testing::ManagerTest {};

TEST_F(OutputSchemaListing, AnUnusableOutputSchemaIsAWarningNamingServerAndTool) {
  json bad = tool("broken");
  bad["outputSchema"] = {{"type", "object"}, {"properties", {{"n", {{"$ref", "#/$defs/missing"}}}}}};
  json good = tool("fine");
  good["outputSchema"] = json::parse(kCountSchema);
  serve("s", {bad, good});
  start({config("s")});
  ex.run_until_idle();
  ASSERT_EQ(phase("s"), ServerPhase::connected);
  EXPECT_TRUE(log.has(LogLevel::warn,
                      "Server \"s\": tool \"broken\" declares an outputSchema that cannot be used"));
  EXPECT_TRUE(log.has(LogLevel::warn, "its results are passed on unchecked"));
  EXPECT_FALSE(log.has(LogLevel::warn, "tool \"fine\""));
}

}  // namespace
}  // namespace mcp_tool_output_schema_test
}  // namespace mcprt
