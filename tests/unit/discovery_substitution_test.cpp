// Discovery-time ${VAR} substitution and connect-time resolution (SPEC §2.4).

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <string>

#include "mcprt/discovery.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/env_map.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace discovery_substitution_test {  // this file's own names in a unity batch
namespace {

using testing::CapturingLogger;
using testing::ManualExecutor;

using testing::env_of;

ServerConfig stdio_server(std::map<std::string, std::string> env_values) {
  ServerConfig c;
  c.name = "srv";
  c.command = "run";
  c.env = std::move(env_values);
  c.source.path = "/x/mcp.json";
  return c;
}

// --- discovery time --------------------------------------------------------------------

TEST(Substitution_DiscoveryTime, ReplacesEveryFormInEveryStringField) {
  ServerConfig c;
  c.name = "s";
  c.command = "${BIN}/tool";
  c.args = {"--root=${env:ROOT}", "${MISSING:-fallback}", "${EMPTY:-dflt}", "x${EMPTY}y"};
  c.env = {{"TOKEN", "${TOKEN}"}};
  c.cwd = "${ROOT}";
  c.url = "https://${HOST}/mcp";
  c.headers = {{"Authorization", "Bearer ${TOKEN}"}};
  std::vector<ConfigError> warnings;
  ServerConfig out = substitute_variables(
      c, env_of({{"BIN", "/opt"}, {"ROOT", "/r"}, {"TOKEN", "t0k"}, {"HOST", "h.example"}, {"EMPTY", ""}}),
      &warnings);
  EXPECT_EQ(out.command, "/opt/tool");
  EXPECT_EQ(out.args, (std::vector<std::string>{"--root=/r", "fallback", "dflt", "xy"}));
  EXPECT_EQ(out.env.at("TOKEN"), "t0k");
  EXPECT_EQ(out.cwd, "/r");
  EXPECT_EQ(out.url, "https://h.example/mcp");
  EXPECT_EQ(out.headers.at("Authorization"), "Bearer t0k");
  EXPECT_TRUE(warnings.empty());
}

TEST(Substitution_DiscoveryTime, UnsetVariableKeepsTheLiteralAndWarnsOnce) {
  ServerConfig c;
  c.name = "s";
  c.source.path = "/x/mcp.json";
  c.command = "${NOPE}";
  c.args = {"${NOPE}", "${env:ALSO_NOPE}"};
  std::vector<ConfigError> warnings;
  ServerConfig out = substitute_variables(c, env_of({}), &warnings);
  EXPECT_EQ(out.command, "${NOPE}");
  EXPECT_EQ(out.args[1], "${env:ALSO_NOPE}");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].server, "s");
  EXPECT_EQ(warnings[0].path, "/x/mcp.json");
  EXPECT_NE(warnings[0].message.find("Server \"s\""), std::string::npos);
  EXPECT_NE(warnings[0].message.find("ALSO_NOPE"), std::string::npos);
  EXPECT_NE(warnings[1].message.find("\"NOPE\""), std::string::npos);
}

TEST(Substitution_DiscoveryTime, LeavesForeignAndBrokenPlaceholdersAlone) {
  ServerConfig c;
  c.name = "s";
  c.args = {"${input:token}", "${unterminated", "$HOME", "${}"};
  std::vector<ConfigError> warnings;
  ServerConfig out = substitute_variables(c, env_of({{"HOME", "/h"}}), &warnings);
  EXPECT_EQ(out.args, c.args);
  EXPECT_TRUE(warnings.empty());
}

TEST(Substitution_DiscoveryTime, RawEntryStaysUnresolved) {
  ServerConfig c;
  c.name = "s";
  c.url = "${U}";
  c.raw = json{{"url", "${U}"}};
  ServerConfig out = substitute_variables(c, env_of({{"U", "https://u.example"}}), nullptr);
  EXPECT_EQ(out.url, "https://u.example");
  EXPECT_EQ(out.raw, c.raw);
}

// --- connect time ----------------------------------------------------------------------

// A ShellRunner the test answers by hand.
class FakeShell final : public ShellRunner {
 public:
  struct Run {
    std::string command;
    Millis timeout;
    std::function<void(Result<std::string>)> done;
  };
  explicit FakeShell(ManualExecutor& ex) : ex_(ex) {}
  void run(const std::string& command, Millis timeout, std::function<void(Result<std::string>)> done) override {
    runs.push_back(Run{command, timeout, std::move(done)});
    ++total;
  }
  // Answers the oldest run (through the executor, as a real runner does).
  void answer(Result<std::string> r) {
    ASSERT_FALSE(runs.empty());
    Run run = std::move(runs.front());
    runs.pop_front();
    ex_.post([done = std::move(run.done), r = std::move(r)]() mutable { done(std::move(r)); });
  }
  std::deque<Run> runs;
  int total = 0;

 private:
  ManualExecutor& ex_;
};

struct ConnectTime : ::testing::Test {
  ManualExecutor ex;
  FakeShell shell{ex};
  CapturingLogger logger;
  ConnectTimeResolver resolver{ex, &shell, env_of({{"SECRET_NAME", "s3cret"}, {"EMPTY", ""}}), &logger};
};

TEST_F(ConnectTime, EnvNameValueBecomesTheVariableAndLiteralsStay) {
  std::optional<ServerConfig> out;
  resolver.resolve(stdio_server({{"A", "SECRET_NAME"}, {"B", "plain"}, {"C", "EMPTY"}}),
                   [&](ServerConfig r) { out = std::move(r); });
  EXPECT_FALSE(out) << "never inside resolve()";
  ex.run_until_idle();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->env.at("A"), "s3cret");
  EXPECT_EQ(out->env.at("B"), "plain");
  EXPECT_EQ(out->env.at("C"), "EMPTY");
}

TEST_F(ConnectTime, CommandValueBecomesTrimmedStdout) {
  std::optional<ServerConfig> out;
  resolver.resolve(stdio_server({{"TOKEN", "!pass show tok"}}), [&](ServerConfig r) { out = std::move(r); });
  ASSERT_EQ(shell.runs.size(), 1u);
  EXPECT_EQ(shell.runs[0].command, "pass show tok");
  EXPECT_EQ(shell.runs[0].timeout, Millis(10000));
  shell.answer(std::string("  abc\n"));
  ex.run_until_idle();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->env.at("TOKEN"), "abc");
}

TEST_F(ConnectTime, FailedCommandDropsTheKeyWithAWarning) {
  std::optional<ServerConfig> out;
  resolver.resolve(stdio_server({{"TOKEN", "!false"}, {"KEEP", "x"}}), [&](ServerConfig r) { out = std::move(r); });
  shell.answer(Error::make(ErrorCode::exited, "exited with code 1"));
  ex.run_until_idle();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->env.count("TOKEN"), 0u);
  EXPECT_EQ(out->env.at("KEEP"), "x");
  EXPECT_TRUE(logger.has(LogLevel::warn, "Server \"srv\": env \"TOKEN\" is dropped"));
}

TEST_F(ConnectTime, EmptyOutputDropsTheKey) {
  std::optional<ServerConfig> out;
  resolver.resolve(stdio_server({{"TOKEN", "!true"}}), [&](ServerConfig r) { out = std::move(r); });
  shell.answer(std::string(" \n"));
  ex.run_until_idle();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->env.count("TOKEN"), 0u);
  EXPECT_TRUE(logger.has(LogLevel::warn, "printed nothing"));
}

TEST_F(ConnectTime, SuccessfulResultsAreCached) {
  std::optional<ServerConfig> first, second;
  resolver.resolve(stdio_server({{"T", "!cmd"}}), [&](ServerConfig r) { first = std::move(r); });
  shell.answer(std::string("v1"));
  ex.run_until_idle();
  resolver.resolve(stdio_server({{"U", "!cmd"}}), [&](ServerConfig r) { second = std::move(r); });
  EXPECT_FALSE(second);
  ex.run_until_idle();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->env.at("U"), "v1");
  EXPECT_EQ(shell.total, 1);
}

TEST_F(ConnectTime, FailedResultsAreNotCached) {
  std::optional<ServerConfig> first, second;
  resolver.resolve(stdio_server({{"T", "!cmd"}}), [&](ServerConfig r) { first = std::move(r); });
  shell.answer(Error::make(ErrorCode::timeout, "timed out"));
  ex.run_until_idle();
  resolver.resolve(stdio_server({{"T", "!cmd"}}), [&](ServerConfig r) { second = std::move(r); });
  shell.answer(std::string("later"));
  ex.run_until_idle();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->env.at("T"), "later");
  EXPECT_EQ(shell.total, 2);
}

TEST_F(ConnectTime, IdenticalConcurrentCommandsRunOnce) {
  std::optional<ServerConfig> a, b;
  resolver.resolve(stdio_server({{"X", "!same"}, {"Y", "!same"}}), [&](ServerConfig r) { a = std::move(r); });
  resolver.resolve(stdio_server({{"Z", "!same"}}), [&](ServerConfig r) { b = std::move(r); });
  EXPECT_EQ(shell.total, 1);
  shell.answer(std::string("shared"));
  ex.run_until_idle();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->env.at("X"), "shared");
  EXPECT_EQ(a->env.at("Y"), "shared");
  EXPECT_EQ(b->env.at("Z"), "shared");
}

TEST_F(ConnectTime, WaitsForEveryCommandOfTheServer) {
  std::optional<ServerConfig> out;
  resolver.resolve(stdio_server({{"A", "!one"}, {"B", "!two"}}), [&](ServerConfig r) { out = std::move(r); });
  ASSERT_EQ(shell.runs.size(), 2u);
  shell.answer(std::string("1"));
  ex.run_until_idle();
  EXPECT_FALSE(out);
  shell.answer(std::string("2"));
  ex.run_until_idle();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->env.at("A"), "1");
  EXPECT_EQ(out->env.at("B"), "2");
}

TEST_F(ConnectTime, HeadersResolveUnlessOriginLocked) {
  ServerConfig c;
  c.name = "web";
  c.type = TransportType::http;
  c.url = "https://w.example/mcp";
  c.headers = {{"Authorization", "SECRET_NAME"}, {"X-Cmd", "!hdr"}};
  std::optional<ServerConfig> open, locked;
  resolver.resolve(c, [&](ServerConfig r) { open = std::move(r); });
  shell.answer(std::string("h"));
  c.origin_locked = true;
  resolver.resolve(c, [&](ServerConfig r) { locked = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(open && locked);
  EXPECT_EQ(open->headers.at("Authorization"), "s3cret");
  EXPECT_EQ(open->headers.at("X-Cmd"), "h");
  EXPECT_EQ(locked->headers, c.headers);
  EXPECT_EQ(shell.total, 1);
}

TEST_F(ConnectTime, LiteralEnvPolicyLeavesEnvAlone) {
  ServerConfig c = stdio_server({{"A", "SECRET_NAME"}, {"B", "!cmd"}});
  c.env_literal = true;
  std::optional<ServerConfig> out;
  resolver.resolve(c, [&](ServerConfig r) { out = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->env, c.env);
  EXPECT_EQ(shell.total, 0);
}

TEST(ConnectTime_NoShell, CommandValuesAreDroppedWithAWarning) {
  ManualExecutor ex;
  CapturingLogger logger;
  ConnectTimeResolver resolver(ex, nullptr, nullptr, &logger);
  std::optional<ServerConfig> out;
  resolver.resolve(stdio_server({{"T", "!cmd"}, {"K", "v"}}), [&](ServerConfig r) { out = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->env, (std::map<std::string, std::string>{{"K", "v"}}));
  EXPECT_TRUE(logger.has(LogLevel::warn, "not available"));
}

TEST(ConnectTime_Lifetime, DestroyingTheResolverCancelsPendingResolves) {
  ManualExecutor ex;
  FakeShell shell(ex);
  bool called = false;
  {
    ConnectTimeResolver resolver(ex, &shell, nullptr, nullptr);
    resolver.resolve(stdio_server({{"T", "!cmd"}}), [&](ServerConfig) { called = true; });
    resolver.resolve(stdio_server({{"K", "v"}}), [&](ServerConfig) { called = true; });
  }
  shell.answer(std::string("late"));
  ex.run_until_idle();
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace discovery_substitution_test
}  // namespace mcprt
