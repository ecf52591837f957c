#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tools.hpp"

namespace mcprt {
namespace tools_test {  // this file's own names in a unity batch
namespace {

using testing::ManualExecutor;

// The manager as tools see it: records every request; the test answers by hand.
class FakeHost final : public McpToolHost {
 public:
  struct Call {
    std::string server;
    std::string tool;
    json arguments;
    CallOptions options;
    std::function<void(Result<json>)> done;
  };
  struct Wait {
    std::string server;
    AbortSignal signal;
    std::function<void(Status)> done;
  };

  void call_tool(const std::string& server, const std::string& raw_tool, json arguments,
                 CallOptions options, std::function<void(Result<json>)> done) override {
    if (answer_calls_synchronously) {
      done(*answer_calls_synchronously);
      return;
    }
    calls.push_back({server, raw_tool, std::move(arguments), std::move(options), std::move(done)});
  }
  void wait_for_connection(const std::string& server, AbortSignal signal,
                           std::function<void(Status)> done) override {
    if (answer_waits_synchronously) {
      done(Status());
      return;
    }
    waits.push_back({server, std::move(signal), std::move(done)});
  }

  std::vector<Call> calls;
  std::vector<Wait> waits;
  // A misbehaving host that answers inside the call (the tool must still defer).
  std::optional<Result<json>> answer_calls_synchronously;
  bool answer_waits_synchronously = false;
};

json text_result(const std::string& text) {
  return json{{"content", json::array({{{"type", "text"}, {"text", text}}})}};
}

// Collects one tool call's completions.
struct Outcome {
  int calls = 0;
  std::optional<Result<ToolResult>> result;
  ToolDone callback() {
    return [this](Result<ToolResult> r) {
      ++calls;
      result.emplace(std::move(r));
    };
  }
  const ToolResult& ok() const { return result->value(); }
};

McpToolInfo info_for(const std::string& server, const std::string& tool) {
  McpToolInfo info;
  info.server = server;
  info.raw_name = tool;
  info.name = make_tool_name(server, tool);
  return info;
}

struct ToolFixture : ::testing::Test {
  ManualExecutor ex;
  std::shared_ptr<FakeHost> host = std::make_shared<FakeHost>();

  std::shared_ptr<McpTool> live_tool(std::size_t max = kDefaultMaxResultBytes) {
    return std::make_shared<McpTool>(ex, info_for("fs", "read"), host, max);
  }
  std::shared_ptr<McpTool> deferred_tool() {
    auto info = info_for("fs", "read");
    info.deferred = true;
    return std::make_shared<DeferredMcpTool>(ex, info, host, kDefaultMaxResultBytes);
  }
};

// ---- glob filters ---------------------------------------------------------------------

TEST(ToolFilters, GlobStarMatchesAnySequenceIncludingEmpty) {
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("read_*", "read_"));
  EXPECT_TRUE(glob_match("read_*", "read_file"));
  EXPECT_TRUE(glob_match("*_file", "read_file"));
  EXPECT_TRUE(glob_match("a*b*c", "a__b__c"));
  EXPECT_TRUE(glob_match("a**c", "ac"));
  EXPECT_FALSE(glob_match("read_*", "write_file"));
  EXPECT_FALSE(glob_match("a*b*c", "a__b__"));
}

TEST(ToolFilters, PatternWithoutStarIsAnExactName) {
  EXPECT_TRUE(glob_match("echo", "echo"));
  EXPECT_FALSE(glob_match("echo", "echo2"));
  EXPECT_FALSE(glob_match("echo", "ech"));
  EXPECT_FALSE(glob_match("e.ho", "echo"));  // no regex or '?' meaning
}

TEST(ToolFilters, BacktrackingPatternOnLongInputFails) {
  std::string text(5000, 'a');
  EXPECT_FALSE(glob_match("*a*a*a*a*a*b", text));
  EXPECT_TRUE(glob_match("*a*a*a*a*a*", text));
}

TEST(ToolFilters, EmptyIncludeExposesEverythingNotExcluded) {
  ServerConfig c;
  c.exclude_tools = {"delete_*"};
  EXPECT_TRUE(tool_passes_filters(c, "read"));
  EXPECT_FALSE(tool_passes_filters(c, "delete_all"));
}

TEST(ToolFilters, IncludeRestrictsToMatches) {
  ServerConfig c;
  c.include_tools = {"read_*", "echo"};
  EXPECT_TRUE(tool_passes_filters(c, "read_file"));
  EXPECT_TRUE(tool_passes_filters(c, "echo"));
  EXPECT_FALSE(tool_passes_filters(c, "write_file"));
}

TEST(ToolFilters, ExcludeWinsOverInclude) {
  ServerConfig c;
  c.include_tools = {"*"};
  c.exclude_tools = {"write_file"};
  EXPECT_FALSE(tool_passes_filters(c, "write_file"));
  EXPECT_TRUE(tool_passes_filters(c, "read_file"));
}

// ---- build_mcp_tools ------------------------------------------------------------------

std::vector<std::string> names_of(const std::vector<std::shared_ptr<McpTool>>& tools) {
  std::vector<std::string> out;
  for (auto& t : tools) out.push_back(t->name());
  return out;
}

TEST_F(ToolFixture, Build_SortsByNameAcrossServers) {
  std::vector<ServerTools> servers(2);
  servers[0].server = "zeta";
  servers[0].definitions = {json{{"name", "b"}}, json{{"name", "a"}}};
  servers[1].server = "alpha";
  servers[1].definitions = {json{{"name", "z"}}};
  auto tools = build_mcp_tools(ex, servers, host);
  EXPECT_EQ(names_of(tools),
            (std::vector<std::string>{"mcp_alpha_z", "mcp_zeta_a", "mcp_zeta_b"}));
}

TEST_F(ToolFixture, Build_FillsInfoFromDefinitionAndSource) {
  json schema = {{"type", "object"},
                 {"properties", {{"path", {{"type", "string"}}}}},
                 {"required", {"path"}},
                 {"x-custom", 1}};
  json def = {{"name", "read.file"}, {"description", "Reads"}, {"inputSchema", schema}};
  ServerConfig cfg;
  std::vector<ServerTools> servers(1);
  servers[0].server = "fs";
  servers[0].config = &cfg;
  servers[0].source.provider_name = "Claude Code";
  servers[0].definitions = {def};
  auto tools = build_mcp_tools(ex, servers, host);
  ASSERT_EQ(tools.size(), 1u);
  const McpToolInfo& i = tools[0]->info();
  EXPECT_EQ(i.name, "mcp_fs_read_file");
  EXPECT_EQ(i.raw_name, "read.file");
  EXPECT_EQ(i.server, "fs");
  EXPECT_EQ(i.description, "Reads");
  EXPECT_EQ(i.input_schema, schema);  // passed through unchanged
  EXPECT_EQ(tools[0]->input_schema(), schema);
  EXPECT_EQ(i.label, "fs/read.file");
  EXPECT_EQ(i.path, "mcp:fs via Claude Code");
  EXPECT_FALSE(i.deferred);
  EXPECT_EQ(i.definition, def);
}

TEST_F(ToolFixture, Build_DefaultsForMissingDescriptionSchemaAndProvider) {
  std::vector<ServerTools> servers(1);
  servers[0].server = "s";
  servers[0].definitions = {json{{"name", "a"}},
                            json{{"name", "b"}, {"description", 5}, {"inputSchema", "str"}},
                            json{{"name", "c"}, {"inputSchema", json::array()}}};
  auto tools = build_mcp_tools(ex, servers, host);
  ASSERT_EQ(tools.size(), 3u);
  for (auto& t : tools) {
    EXPECT_EQ(t->description(), "") << t->name();
    EXPECT_EQ(t->input_schema(), json({{"type", "object"}})) << t->name();
    EXPECT_EQ(t->info().path, "mcp:s") << t->name();
  }
}

TEST_F(ToolFixture, Build_SkipsDefinitionsThatAreNotNamedObjects) {
  std::vector<ServerTools> servers(1);
  servers[0].server = "s";
  servers[0].definitions = {json(3), json{{"name", 7}}, json{{"description", "x"}},
                            json{{"name", "ok"}}};
  auto tools = build_mcp_tools(ex, servers, host);
  EXPECT_EQ(names_of(tools), (std::vector<std::string>{"mcp_s_ok"}));
}

TEST_F(ToolFixture, Build_AppliesEachServersFilters) {
  ServerConfig only_read;
  only_read.include_tools = {"read*"};
  ServerConfig no_write;
  no_write.exclude_tools = {"write"};
  std::vector<ServerTools> servers(3);
  servers[0].server = "a";
  servers[0].config = &only_read;
  servers[0].definitions = {json{{"name", "read"}}, json{{"name", "write"}}};
  servers[1].server = "b";
  servers[1].config = &no_write;
  servers[1].definitions = {json{{"name", "read"}}, json{{"name", "write"}}};
  servers[2].server = "c";  // no config: no filter
  servers[2].definitions = {json{{"name", "read"}}, json{{"name", "write"}}};
  auto tools = build_mcp_tools(ex, servers, host);
  EXPECT_EQ(names_of(tools), (std::vector<std::string>{"mcp_a_read", "mcp_b_read", "mcp_c_read",
                                                       "mcp_c_write"}));
}

TEST_F(ToolFixture, Build_CollisionAcrossServersGoesToTheFirstRawPair) {
  std::vector<ServerTools> servers(2);
  servers[0].server = "x_y";
  servers[0].definitions = {json{{"name", "z"}}};
  servers[1].server = "x";
  servers[1].definitions = {json{{"name", "y_z"}}};
  auto tools = build_mcp_tools(ex, servers, host);
  ASSERT_EQ(tools.size(), 2u);
  std::set<std::string> names{tools[0]->name(), tools[1]->name()};
  EXPECT_EQ(names.size(), 2u);
  for (auto& t : tools) {
    if (t->info().server == "x") {
      EXPECT_EQ(t->name(), "mcp_x_y_z");
    } else {
      EXPECT_EQ(t->name().rfind("mcp_x_y_z_", 0), 0u);
      EXPECT_EQ(t->name().size(), std::string("mcp_x_y_z_").size() + 8);
    }
  }
}

TEST_F(ToolFixture, Build_FilteredOutToolClaimsNoName) {
  // "a.b" would keep mcp_s_a_b ('.' < '_'), but it is excluded, so "a_b" gets it plainly.
  ServerConfig cfg;
  cfg.exclude_tools = {"a.b"};
  std::vector<ServerTools> servers(1);
  servers[0].server = "s";
  servers[0].config = &cfg;
  servers[0].definitions = {json{{"name", "a.b"}}, json{{"name", "a_b"}}};
  auto tools = build_mcp_tools(ex, servers, host);
  EXPECT_EQ(names_of(tools), (std::vector<std::string>{"mcp_s_a_b"}));
  EXPECT_EQ(tools[0]->info().raw_name, "a_b");
}

TEST_F(ToolFixture, Build_RespectsMaxToolNameLength) {
  std::vector<ServerTools> servers(1);
  servers[0].server = "server";
  servers[0].definitions = {json{{"name", std::string(50, 't')}}};
  ToolBuildOptions opts;
  opts.max_tool_name_length = 32;
  auto tools = build_mcp_tools(ex, servers, host, opts);
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]->name().size(), 32u);
}

TEST_F(ToolFixture, Build_DeferredServerGivesDeferredTools) {
  std::vector<ServerTools> servers(2);
  servers[0].server = "cached";
  servers[0].deferred = true;
  servers[0].definitions = {json{{"name", "t"}}};
  servers[1].server = "live";
  servers[1].definitions = {json{{"name", "t"}}};
  auto tools = build_mcp_tools(ex, servers, host);
  ASSERT_EQ(tools.size(), 2u);
  EXPECT_EQ(tools[0]->info().server, "cached");
  EXPECT_TRUE(tools[0]->info().deferred);
  EXPECT_NE(dynamic_cast<DeferredMcpTool*>(tools[0].get()), nullptr);
  EXPECT_FALSE(tools[1]->info().deferred);
  EXPECT_EQ(dynamic_cast<DeferredMcpTool*>(tools[1].get()), nullptr);
}

TEST_F(ToolFixture, Build_HidesToolsThatRequireTaskSupportUnlessTheHostDeclaresIt) {
  auto with_support = [](const char* name, const char* support) {
    return json{{"name", name}, {"execution", {{"taskSupport", support}}}};
  };
  // Live and cached (deferred) slices alike.
  std::vector<ServerTools> servers(2);
  servers[0].server = "live";
  servers[0].definitions = {with_support("needs_task", "required"), with_support("may_task", "optional"),
                            with_support("no_task", "forbidden"), json{{"name", "plain"}},
                            json{{"name", "odd"}, {"execution", "required"}}};
  servers[1].server = "cached";
  servers[1].deferred = true;
  servers[1].definitions = {with_support("needs_task", "required"), json{{"name", "plain"}}};
  EXPECT_EQ(names_of(build_mcp_tools(ex, servers, host)),
            (std::vector<std::string>{"mcp_cached_plain", "mcp_live_may_task", "mcp_live_no_task",
                                      "mcp_live_odd", "mcp_live_plain"}));
  ToolBuildOptions tasks;
  tasks.task_support = true;
  auto all = names_of(build_mcp_tools(ex, servers, host, tasks));
  EXPECT_EQ(all.size(), 7u);
  EXPECT_NE(std::find(all.begin(), all.end(), "mcp_cached_needs_task"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "mcp_live_needs_task"), all.end());
}

TEST_F(ToolFixture, Build_EmptyInputGivesNoTools) {
  EXPECT_TRUE(build_mcp_tools(ex, {}, host).empty());
  std::vector<ServerTools> servers(1);
  servers[0].server = "s";
  EXPECT_TRUE(build_mcp_tools(ex, servers, host).empty());
}

// ---- McpTool::call --------------------------------------------------------------------

TEST_F(ToolFixture, Call_SendsServerRawNameAndArgumentsAndRendersTheResult) {
  auto tool = live_tool();
  Outcome out;
  tool->call(json{{"path", "/x"}}, {}, out.callback());
  ASSERT_EQ(host->calls.size(), 1u);
  EXPECT_EQ(host->calls[0].server, "fs");
  EXPECT_EQ(host->calls[0].tool, "read");
  EXPECT_EQ(host->calls[0].arguments, json({{"path", "/x"}}));
  host->calls[0].done(text_result("contents"));
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  ASSERT_TRUE(out.result->ok());
  EXPECT_EQ(out.ok().text, "contents");
  EXPECT_FALSE(out.ok().is_error);
}

TEST_F(ToolFixture, Call_ToolErrorResultStaysAResultWithIsError) {
  auto tool = live_tool();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  json r = text_result("no such file");
  r["isError"] = true;
  host->calls[0].done(r);
  ex.run_until_idle();
  ASSERT_TRUE(out.result->ok());
  EXPECT_TRUE(out.ok().is_error);
  EXPECT_EQ(out.ok().text, "no such file");
}

TEST_F(ToolFixture, Call_PassesProgressCallbackAndSignalThrough) {
  auto tool = live_tool();
  AbortController ac;
  std::vector<json> progress;
  ToolCallOptions opts;
  opts.signal = ac.signal();
  opts.on_progress = [&](const json& p) { progress.push_back(p); };
  Outcome out;
  tool->call(json::object(), opts, out.callback());
  ASSERT_EQ(host->calls.size(), 1u);
  ASSERT_TRUE(host->calls[0].options.on_progress);
  host->calls[0].options.on_progress(json{{"progress", 1}, {"total", 2}});
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0]["progress"], 1);
  EXPECT_FALSE(host->calls[0].options.signal.aborted());
  ac.abort("user");
  EXPECT_TRUE(host->calls[0].options.signal.aborted());  // the same signal reaches the host
}

TEST_F(ToolFixture, Call_TransportTimeoutAndWireErrorsBecomeMcpErrorResults) {
  const std::vector<Error> errors = {
      Error::make(ErrorCode::closed, "Server \"fs\": connection closed"),
      Error::make(ErrorCode::timeout, "Server \"fs\": tools/call timed out after 5000 ms"),
      Error::wire(-32602, "Server \"fs\": Invalid params"),
  };
  for (const auto& e : errors) {
    auto tool = live_tool();
    Outcome out;
    tool->call(json::object(), {}, out.callback());
    host->calls.back().done(e);
    ex.run_until_idle();
    ASSERT_EQ(out.calls, 1);
    ASSERT_TRUE(out.result->ok()) << e;
    EXPECT_TRUE(out.ok().is_error);
    EXPECT_EQ(out.ok().text, "MCP error: " + e.message);
    ASSERT_EQ(out.ok().content.size(), 1u);
    EXPECT_EQ(out.ok().content[0]["text"], out.ok().text);
  }
}

TEST_F(ToolFixture, Call_AbortBeforeCallIsAbortedAndNeverReachesTheHost) {
  auto tool = live_tool();
  AbortController ac;
  ac.abort();
  Outcome out;
  ToolCallOptions opts;
  opts.signal = ac.signal();
  tool->call(json::object(), opts, out.callback());
  EXPECT_EQ(out.calls, 0);
  ex.run_until_idle();
  EXPECT_TRUE(host->calls.empty());
  ASSERT_EQ(out.calls, 1);
  ASSERT_FALSE(out.result->ok());
  EXPECT_EQ(out.result->error().code, ErrorCode::aborted);
}

TEST_F(ToolFixture, Call_AbortWhileRunningIsAbortedOnceAndTheLateAnswerIsDropped) {
  auto tool = live_tool();
  AbortController ac;
  Outcome out;
  ToolCallOptions opts;
  opts.signal = ac.signal();
  tool->call(json::object(), opts, out.callback());
  ac.abort("user pressed Esc");
  EXPECT_EQ(out.calls, 0);  // not inside abort()
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  ASSERT_FALSE(out.result->ok());
  EXPECT_EQ(out.result->error().code, ErrorCode::aborted);
  EXPECT_NE(out.result->error().message.find("fs"), std::string::npos);
  // The host reports its own aborted (or even a result) afterwards: ignored.
  host->calls[0].done(text_result("late"));
  ex.run_until_idle();
  EXPECT_EQ(out.calls, 1);
}

TEST_F(ToolFixture, Call_HostAbortedErrorAfterCallerAbortIsStillAbort) {
  // The host reports its own aborted before the executor delivered ours: still one abort.
  auto tool = live_tool();
  AbortController ac;
  Outcome out;
  ToolCallOptions opts;
  opts.signal = ac.signal();
  tool->call(json::object(), opts, out.callback());
  ac.abort();
  host->calls[0].done(Error::make(ErrorCode::aborted, "aborted"));
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  ASSERT_FALSE(out.result->ok());
  EXPECT_EQ(out.result->error().code, ErrorCode::aborted);
}

TEST_F(ToolFixture, Call_HostGoneIsNotConnectedResult) {
  auto tool = live_tool();
  host.reset();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  ASSERT_TRUE(out.result->ok());
  EXPECT_TRUE(out.ok().is_error);
  EXPECT_EQ(out.ok().text, "MCP error: Server \"fs\" is not connected");
}

TEST_F(ToolFixture, Call_NeverCompletesInsideCallEvenIfTheHostAnswersSynchronously) {
  host->answer_calls_synchronously = Result<json>(text_result("sync"));
  auto tool = live_tool();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  EXPECT_EQ(out.calls, 0);
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  EXPECT_EQ(out.ok().text, "sync");
}

TEST_F(ToolFixture, Call_AppliesTheOutputCap) {
  auto tool = live_tool(/*max=*/40);
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  host->calls[0].done(text_result(std::string(100, 'x')));
  ex.run_until_idle();
  ASSERT_TRUE(out.result->ok());
  EXPECT_TRUE(out.ok().truncated);
  // 40 - 27 (the marker) = 13: 7 bytes of head, 6 of tail.
  EXPECT_EQ(out.ok().text, std::string(7, 'x') + "\n\xE2\x80\xA6[cut 87 of 100 bytes]\n" +
                               std::string(6, 'x'));
}

TEST_F(ToolFixture, Call_CompletesAfterTheToolIsDestroyed) {
  auto tool = live_tool();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  tool.reset();
  host->calls[0].done(text_result("still here"));
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  EXPECT_EQ(out.ok().text, "still here");
}

TEST_F(ToolFixture, Call_MalformedResultIsAnErrorResult) {
  auto tool = live_tool();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  host->calls[0].done(json{{"content", "not an array"}});
  ex.run_until_idle();
  ASSERT_TRUE(out.result->ok());
  EXPECT_TRUE(out.ok().is_error);
  EXPECT_NE(out.ok().text.find("content"), std::string::npos);
}

// ---- DeferredMcpTool ------------------------------------------------------------------

TEST_F(ToolFixture, Deferred_WaitsForTheConnectionThenCalls) {
  auto tool = deferred_tool();
  Outcome out;
  tool->call(json{{"a", 1}}, {}, out.callback());
  ASSERT_EQ(host->waits.size(), 1u);
  EXPECT_EQ(host->waits[0].server, "fs");
  EXPECT_TRUE(host->calls.empty());  // not before the connection
  host->waits[0].done(Status());
  ex.run_until_idle();
  ASSERT_EQ(host->calls.size(), 1u);
  EXPECT_EQ(host->calls[0].tool, "read");
  EXPECT_EQ(host->calls[0].arguments, json({{"a", 1}}));
  EXPECT_EQ(out.calls, 0);
  host->calls[0].done(text_result("ok"));
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  EXPECT_EQ(out.ok().text, "ok");
}

TEST_F(ToolFixture, Deferred_WaitFailureIsAnErrorResultNamingTheServer) {
  auto tool = deferred_tool();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  host->waits[0].done(Error::make(ErrorCode::timeout, "timed out after 30000 ms"));
  ex.run_until_idle();
  EXPECT_TRUE(host->calls.empty());
  ASSERT_EQ(out.calls, 1);
  ASSERT_TRUE(out.result->ok());
  EXPECT_TRUE(out.ok().is_error);
  EXPECT_EQ(out.ok().text, "MCP error: Server \"fs\": timed out after 30000 ms");
}

TEST_F(ToolFixture, Deferred_WaitFailureAlreadyNamingTheServerIsNotPrefixedTwice) {
  auto tool = deferred_tool();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  host->waits[0].done(Error::make(ErrorCode::closed, "Server \"fs\": exited with code 1"));
  ex.run_until_idle();
  EXPECT_EQ(out.ok().text, "MCP error: Server \"fs\": exited with code 1");
}

TEST_F(ToolFixture, Deferred_AbortDuringWaitIsAbortedAndNeverCalls) {
  auto tool = deferred_tool();
  AbortController ac;
  ToolCallOptions opts;
  opts.signal = ac.signal();
  Outcome out;
  tool->call(json::object(), opts, out.callback());
  ASSERT_EQ(host->waits.size(), 1u);
  EXPECT_FALSE(host->waits[0].signal.aborted());
  ac.abort();
  EXPECT_TRUE(host->waits[0].signal.aborted());  // the wait is abandoned too
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  ASSERT_FALSE(out.result->ok());
  EXPECT_EQ(out.result->error().code, ErrorCode::aborted);
  host->waits[0].done(Status());  // connected after all: too late, no call
  ex.run_until_idle();
  EXPECT_TRUE(host->calls.empty());
  EXPECT_EQ(out.calls, 1);
}

TEST_F(ToolFixture, Deferred_AbortDuringTheCallIsAborted) {
  auto tool = deferred_tool();
  AbortController ac;
  ToolCallOptions opts;
  opts.signal = ac.signal();
  Outcome out;
  tool->call(json::object(), opts, out.callback());
  host->waits[0].done(Status());
  ex.run_until_idle();
  ASSERT_EQ(host->calls.size(), 1u);
  ac.abort();
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  EXPECT_EQ(out.result->error().code, ErrorCode::aborted);
  host->calls[0].done(text_result("late"));
  ex.run_until_idle();
  EXPECT_EQ(out.calls, 1);
}

TEST_F(ToolFixture, Deferred_AbortBeforeCallNeverWaits) {
  auto tool = deferred_tool();
  AbortController ac;
  ac.abort();
  ToolCallOptions opts;
  opts.signal = ac.signal();
  Outcome out;
  tool->call(json::object(), opts, out.callback());
  ex.run_until_idle();
  EXPECT_TRUE(host->waits.empty());
  ASSERT_EQ(out.calls, 1);
  EXPECT_EQ(out.result->error().code, ErrorCode::aborted);
}

TEST_F(ToolFixture, Deferred_HostGoneIsNotConnectedResult) {
  auto tool = deferred_tool();
  host.reset();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  EXPECT_EQ(out.ok().text, "MCP error: Server \"fs\" is not connected");
}

TEST_F(ToolFixture, Deferred_SynchronousHostStillCompletesLaterAndOnce) {
  host->answer_waits_synchronously = true;
  host->answer_calls_synchronously = Result<json>(text_result("sync"));
  auto tool = deferred_tool();
  Outcome out;
  tool->call(json::object(), {}, out.callback());
  EXPECT_EQ(out.calls, 0);
  ex.run_until_idle();
  ASSERT_EQ(out.calls, 1);
  EXPECT_EQ(out.ok().text, "sync");
}

TEST_F(ToolFixture, Deferred_ProgressReachesTheCallerAfterTheWait) {
  auto tool = deferred_tool();
  int progress = 0;
  ToolCallOptions opts;
  opts.on_progress = [&](const json&) { ++progress; };
  Outcome out;
  tool->call(json::object(), opts, out.callback());
  host->waits[0].done(Status());
  ex.run_until_idle();
  ASSERT_EQ(host->calls.size(), 1u);
  ASSERT_TRUE(host->calls[0].options.on_progress);
  host->calls[0].options.on_progress(json{{"progress", 1}});
  EXPECT_EQ(progress, 1);
}

}  // namespace
}  // namespace tools_test
}  // namespace mcprt
