// Output caps through the tools (SPEC §16): the cap a tool's definition raises, and the
// host's spill, as build_mcp_tools wires them into live and deferred McpTools.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tools.hpp"

namespace mcprt {
namespace tool_output_cap_test {
namespace {

using testing::ManualExecutor;

// Answers every call with `answer`, later (from the executor), as a manager would.
class AnsweringHost final : public McpToolHost {
 public:
  AnsweringHost(Executor& executor, std::string answer)
      : executor_(executor), answer_(std::move(answer)) {}
  void call_tool(const std::string&, const std::string&, json, CallOptions,
                 std::function<void(Result<json>)> done) override {
    ++calls;
    executor_.post([text = answer_, done = std::move(done)] {
      done(json{{"content", json::array({{{"type", "text"}, {"text", text}}})}});
    });
  }
  void wait_for_connection(const std::string&, AbortSignal,
                           std::function<void(Status)> done) override {
    executor_.post([done = std::move(done)] { done(Status()); });
  }
  int calls = 0;

 private:
  Executor& executor_;
  std::string answer_;
};

struct Spilled {
  std::string server, tool, name, text;
};

struct OutputCapFixture : ::testing::Test {
  ManualExecutor ex;
  std::vector<Spilled> spilled;
  std::optional<std::string> spill_answer = std::string("/cache/results/x.txt");

  ToolBuildOptions options(std::size_t cap) {
    ToolBuildOptions o;
    o.max_result_bytes = cap;
    o.spill = [this](const ResultSpillRequest& r) -> std::optional<std::string> {
      spilled.push_back(
          {std::string(r.server), std::string(r.tool), std::string(r.name), std::string(r.text)});
      return spill_answer;
    };
    return o;
  }

  ToolResult call_one(const std::shared_ptr<McpToolHost>& host, json definition,
                      const ToolBuildOptions& o, bool deferred = false) {
    ServerTools s;
    s.server = "big";
    s.definitions.push_back(std::move(definition));
    s.deferred = deferred;
    auto tools = build_mcp_tools(ex, {s}, host, o);
    EXPECT_EQ(tools.size(), 1u);
    std::optional<Result<ToolResult>> out;
    tools.at(0)->call(json::object(), {}, [&](Result<ToolResult> r) { out.emplace(std::move(r)); });
    ex.run_until_idle();
    EXPECT_TRUE(out.has_value() && out->ok());
    return out->value();
  }
};

TEST_F(OutputCapFixture, ALiveToolOverItsCapSpillsTheFullTextWithItsNames) {
  const std::string full = std::string(700, 'a') + "\n" + std::string(700, 'z');
  auto host = std::make_shared<AnsweringHost>(ex, full);
  ToolResult r = call_one(host, {{"name", "dump"}}, options(200));
  ASSERT_EQ(spilled.size(), 1u);
  EXPECT_EQ(spilled[0].server, "big");
  EXPECT_EQ(spilled[0].tool, "dump");
  EXPECT_EQ(spilled[0].name, "mcp_big_dump");
  EXPECT_EQ(spilled[0].text, full);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.full_bytes, full.size());
  EXPECT_EQ(r.full_text_path, std::optional<std::string>("/cache/results/x.txt"));
  EXPECT_NE(r.text.find("; the full result is in /cache/results/x.txt]\n"), std::string::npos);
  EXPECT_LE(r.text.size(), 200u);
  EXPECT_EQ(r.text.substr(0, 3), "aaa");
  EXPECT_EQ(r.text.substr(r.text.size() - 3), "zzz");
}

TEST_F(OutputCapFixture, AResultFailingItsOutputSchemaStillNamesTheKeptFullText) {
  auto host = std::make_shared<AnsweringHost>(ex, std::string(1000, 'd'));
  // The answer has no structuredContent, which this definition's outputSchema requires.
  ToolResult r = call_one(
      host, {{"name", "dump"}, {"outputSchema", {{"type", "object"}}}}, options(100));
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("outputSchema"), std::string::npos) << r.text;
  ASSERT_EQ(spilled.size(), 1u);
  EXPECT_EQ(r.full_bytes, 1000u);
  EXPECT_EQ(r.full_text_path, std::optional<std::string>("/cache/results/x.txt"));
}

TEST_F(OutputCapFixture, ADeferredToolSpillsToo) {
  auto host = std::make_shared<AnsweringHost>(ex, std::string(1000, 'd'));
  ToolResult r = call_one(host, {{"name", "dump"}}, options(100), /*deferred=*/true);
  ASSERT_EQ(spilled.size(), 1u);
  EXPECT_EQ(spilled[0].text, std::string(1000, 'd'));
  EXPECT_EQ(r.full_text_path, std::optional<std::string>("/cache/results/x.txt"));
}

TEST_F(OutputCapFixture, AResultWithinItsCapIsNeitherCutNorSpilled) {
  auto host = std::make_shared<AnsweringHost>(ex, std::string(200, 'a'));
  ToolResult r = call_one(host, {{"name", "dump"}}, options(200));
  EXPECT_TRUE(spilled.empty());
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.text, std::string(200, 'a'));
}

TEST_F(OutputCapFixture, TheDefinitionsMetaRaisesThatToolsCap) {
  const std::string full(3000, 'm');
  auto host = std::make_shared<AnsweringHost>(ex, full);
  json raised = {{"name", "dump"}, {"_meta", {{"anthropic/maxResultSizeChars", 5000}}}};
  ToolResult r = call_one(host, raised, options(200));
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.text, full);
  EXPECT_TRUE(spilled.empty());
  // A value it cannot use leaves the configured cap.
  json bad = {{"name", "dump"}, {"_meta", {{"anthropic/maxResultSizeChars", "5000"}}}};
  EXPECT_TRUE(call_one(host, bad, options(200)).truncated);
}

TEST_F(OutputCapFixture, ASpillThatKeptNothingStillCutsWithoutAPath) {
  spill_answer.reset();
  auto host = std::make_shared<AnsweringHost>(ex, std::string(1000, 'n'));
  ToolResult r = call_one(host, {{"name", "dump"}}, options(100));
  EXPECT_EQ(spilled.size(), 1u);
  EXPECT_TRUE(r.truncated);
  EXPECT_FALSE(r.full_text_path.has_value());
  EXPECT_EQ(r.text.find("full result"), std::string::npos);
  EXPECT_NE(r.text.find("[cut 931 of 1,000 bytes]\n"), std::string::npos);
}

TEST_F(OutputCapFixture, NoSpillConfiguredCutsAsBefore) {
  auto host = std::make_shared<AnsweringHost>(ex, std::string(1000, 'n'));
  ToolBuildOptions o;
  o.max_result_bytes = 100;
  ToolResult r = call_one(host, {{"name", "dump"}}, o);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.full_bytes, 1000u);
  EXPECT_FALSE(r.full_text_path.has_value());
}

}  // namespace
}  // namespace tool_output_cap_test
}  // namespace mcprt
