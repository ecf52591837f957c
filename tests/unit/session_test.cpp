// The session tool registry and McpSession (SPEC §8): ownership-based refresh, calls by
// name, the late-connection follow-up and child sessions over the parent's connections.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/session.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "session_test_support.hpp"

namespace mcprt {
namespace session_test {  // this file's own names in a unity batch
namespace {

using testing::ManualExecutor;
using unit::FakeTool;

TEST(ToolRegistry, Registry_RefreshRemovesMcpToolsByOwnershipNotPrefix) {
  ManualExecutor ex;
  ToolRegistry reg(ex);
  // A host tool whose name looks like an MCP tool must survive every refresh.
  ASSERT_TRUE(reg.add_tool(std::make_shared<FakeTool>(ex, "mcp_x", "host")).ok());
  reg.refresh_mcp_tools(std::vector<ToolPtr>{std::make_shared<FakeTool>(ex, "mcp_fs_read", "v1"),
                                             std::make_shared<FakeTool>(ex, "mcp_fs_write", "v1")});
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"mcp_fs_read", "mcp_fs_write", "mcp_x"}));

  reg.refresh_mcp_tools(std::vector<ToolPtr>{std::make_shared<FakeTool>(ex, "mcp_gh_issue", "v2")});
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"mcp_gh_issue", "mcp_x"}));
  EXPECT_FALSE(reg.is_mcp_tool("mcp_x"));
  EXPECT_TRUE(reg.is_mcp_tool("mcp_gh_issue"));

  reg.clear_mcp_tools();
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"mcp_x"}));
}

TEST(ToolRegistry, Registry_HostToolWinsANameSharedWithAnMcpTool) {
  ManualExecutor ex;
  ToolRegistry reg(ex);
  ASSERT_TRUE(reg.add_tool(std::make_shared<FakeTool>(ex, "mcp_fs_read", "host")).ok());
  reg.refresh_mcp_tools(std::vector<ToolPtr>{std::make_shared<FakeTool>(ex, "mcp_fs_read", "mcp")});
  ASSERT_EQ(reg.tools().size(), 1u);
  EXPECT_EQ(reg.find("mcp_fs_read")->description(), "host");
  EXPECT_EQ(reg.mcp_conflicts(), std::vector<std::string>{"mcp_fs_read"});
  EXPECT_EQ(reg.mcp_tool_count(), 0u);
  // Once the host tool goes, the MCP tool shows through.
  EXPECT_TRUE(reg.remove_tool("mcp_fs_read"));
  EXPECT_EQ(reg.find("mcp_fs_read")->description(), "mcp");
}

TEST(ToolRegistry, Registry_NamesAreSortedAcrossHostAndMcpTools) {
  ManualExecutor ex;
  ToolRegistry reg(ex);
  ASSERT_TRUE(reg.add_tool(std::make_shared<FakeTool>(ex, "zeta", "")).ok());
  ASSERT_TRUE(reg.add_tool(std::make_shared<FakeTool>(ex, "alpha", "")).ok());
  reg.refresh_mcp_tools(std::vector<ToolPtr>{std::make_shared<FakeTool>(ex, "mcp_b", ""),
                                             std::make_shared<FakeTool>(ex, "beta", "")});
  EXPECT_EQ(reg.names(), (std::vector<std::string>{"alpha", "beta", "mcp_b", "zeta"}));
}

TEST(ToolRegistry, Registry_DuplicateHostToolIsRejected) {
  ManualExecutor ex;
  ToolRegistry reg(ex);
  ASSERT_TRUE(reg.add_tool(std::make_shared<FakeTool>(ex, "read", "")).ok());
  auto again = reg.add_tool(std::make_shared<FakeTool>(ex, "read", ""));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::invalid_argument);
  EXPECT_FALSE(reg.add_tool(nullptr).ok());
}

TEST(ToolRegistry, Registry_ChangedFiresOncePerRefresh) {
  ManualExecutor ex;
  ToolRegistry reg(ex);
  int fired = 0;
  auto id = reg.on_changed([&] { ++fired; });
  reg.refresh_mcp_tools(std::vector<ToolPtr>{std::make_shared<FakeTool>(ex, "mcp_a_b", ""),
                                             std::make_shared<FakeTool>(ex, "mcp_a_c", "")});
  EXPECT_EQ(fired, 1);
  ASSERT_TRUE(reg.add_tool(std::make_shared<FakeTool>(ex, "host", "")).ok());
  EXPECT_EQ(fired, 2);
  reg.remove_listener(id);
  reg.clear_mcp_tools();
  EXPECT_EQ(fired, 2);
}

TEST(ToolRegistry, Registry_CallsAToolByName) {
  ManualExecutor ex;
  ToolRegistry reg(ex);
  auto tool = std::make_shared<FakeTool>(ex, "mcp_a_echo", "");
  reg.refresh_mcp_tools(std::vector<ToolPtr>{tool});
  std::optional<Result<ToolResult>> got;
  reg.call("mcp_a_echo", json{{"x", 1}}, {}, [&](Result<ToolResult> r) { got = std::move(r); });
  EXPECT_FALSE(got.has_value());  // never inside the call
  ex.run_until_idle();
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->ok());
  EXPECT_EQ((*got)->text, "mcp_a_echo called with {\"x\":1}");
  EXPECT_EQ(tool->calls, 1);
}

TEST(ToolRegistry, Registry_UnknownToolIsAnErrorResultPostedLater) {
  ManualExecutor ex;
  ToolRegistry reg(ex);
  std::optional<Result<ToolResult>> got;
  reg.call("nope", json::object(), {}, [&](Result<ToolResult> r) { got = std::move(r); });
  EXPECT_FALSE(got.has_value());
  ex.run_until_idle();
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_TRUE((*got)->is_error);
  EXPECT_EQ((*got)->text, "Unknown tool: nope");
}


// --- McpSession over a real manager ------------------------------------------------------

class Session : public unit::SessionFixture {
 protected:
  std::optional<Result<ToolResult>> call(Tool& tool, json args) {
    std::optional<Result<ToolResult>> got;
    tool.call(std::move(args), {}, [&](Result<ToolResult> r) { got = std::move(r); });
    ex.run_until_idle();
    return got;
  }
  void answer_held_list(const std::string& server, std::vector<std::string> tools) {
    auto* s = farm.latest(server);
    ASSERT_NE(s, nullptr);
    json defs = json::array();
    for (const auto& t : tools) defs.push_back(unit::tool_def(t));
    s->reply(s->last_request("tools/list")["id"], {{"tools", defs}});
    ex.run_until_idle();
  }
};

TEST_F(Session, Session_BindTakesTheToolsAndFollowsEveryToolsChanged) {
  serve("demo", {"echo"});
  serve("slow", {"late"}, {"tools/list"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}, {"slow", server("slow")}}}});
  manager_options.wait_for_uncached = false;
  ASSERT_TRUE(registry.add_tool(std::make_shared<unit::FakeTool>(ex, "read_file", "")).ok());
  start();
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"mcp_demo_echo", "read_file"}));
  answer_held_list("slow", {"late"});
  EXPECT_EQ(registry.names(),
            (std::vector<std::string>{"mcp_demo_echo", "mcp_slow_late", "read_file"}));
}

TEST_F(Session, Session_LateConnectionFollowUpHasTheToolsAttachedWhenTheWaitEnds) {
  serve("slow", {"late"}, {"tools/list"});
  write(kUserFile, {{"mcpServers", {{"slow", server("slow")}}}});
  manager_options.wait_for_uncached = false;
  start();
  ASSERT_FALSE(registry.contains("mcp_slow_late"));
  std::optional<bool> attached_when_done;
  session.wait_for_server("slow", {}, [&](Status s) {
    EXPECT_TRUE(s.ok()) << s;
    attached_when_done = registry.contains("mcp_slow_late");
  });
  ex.run_until_idle();
  EXPECT_FALSE(attached_when_done.has_value());
  answer_held_list("slow", {"late"});
  ASSERT_TRUE(attached_when_done.has_value());
  EXPECT_TRUE(*attached_when_done);
}

TEST_F(Session, Session_WaitForAnUnknownServerFailsAndLeavesTheRegistryAlone) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  start();
  auto before = registry.generation();
  std::optional<Status> got;
  session.wait_for_server("ghost", {}, [&](Status s) { got = std::move(s); });
  ex.run_until_idle();
  ASSERT_TRUE(got.has_value());
  EXPECT_FALSE(got->ok());
  EXPECT_EQ(registry.generation(), before);
}

TEST_F(Session, Child_CallsThroughTheParentsConnectionWithoutConnectingAgain) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  start();
  ToolRegistry child_registry(ex);
  auto child = session.make_child(child_registry);
  ASSERT_TRUE(child->is_child());
  ASSERT_EQ(child_registry.names(), std::vector<std::string>{"mcp_demo_echo"});
  auto got = call(*child_registry.find("mcp_demo_echo"), json{{"m", "hi"}});
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_FALSE((*got)->is_error) << (*got)->text;
  EXPECT_EQ((*got)->text, "{\"m\":\"hi\"}");
  EXPECT_EQ(farm.attempts("demo"), 1u);  // no connection of its own
  EXPECT_EQ(farm.latest("demo")->requests("tools/call").size(), 1u);
}

TEST_F(Session, Child_CallFailsClearlyOnceTheParentDisconnectedTheServer) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  start();
  ToolRegistry child_registry(ex);
  auto child = session.make_child(child_registry);
  ToolPtr held = child_registry.find("mcp_demo_echo");  // e.g. an agent turn in progress
  ASSERT_NE(held, nullptr);
  manager->disconnect_server("demo");
  ex.run_until_idle();
  EXPECT_FALSE(child_registry.contains("mcp_demo_echo"));  // the child follows the parent
  auto got = call(*held, json::object());
  ASSERT_TRUE(got.has_value() && got->ok());
  EXPECT_TRUE((*got)->is_error);
  EXPECT_THAT((*got)->text, ::testing::HasSubstr(
                                "Server \"demo\" was disconnected by the parent session"));
  EXPECT_EQ(farm.attempts("demo"), 1u);
}

TEST_F(Session, Child_FollowsToolsThatArriveLateInTheParent) {
  serve("slow", {"late"}, {"tools/list"});
  write(kUserFile, {{"mcpServers", {{"slow", server("slow")}}}});
  manager_options.wait_for_uncached = false;
  start();
  ToolRegistry child_registry(ex);
  auto child = session.make_child(child_registry);
  EXPECT_TRUE(child_registry.names().empty());
  answer_held_list("slow", {"late"});
  EXPECT_EQ(child_registry.names(), std::vector<std::string>{"mcp_slow_late"});
}

TEST_F(Session, Session_BindingNullClearsTheMcpToolsOnly) {
  serve("demo", {"echo"});
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
  ASSERT_TRUE(registry.add_tool(std::make_shared<unit::FakeTool>(ex, "mcp_x", "host")).ok());
  start();
  ASSERT_TRUE(registry.contains("mcp_demo_echo"));
  session.bind(nullptr);
  EXPECT_EQ(registry.names(), std::vector<std::string>{"mcp_x"});
}

}  // namespace
}  // namespace session_test
}  // namespace mcprt
