// NativeHost: the native services plus blocking wrappers over the loader, with real
// server processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "mcprt/native/host.hpp"
#include "native_test_support.hpp"

namespace mcprt {
namespace native_host_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using native::test::children_of_self;

// Sets an environment variable (nullopt: unsets it) for one scope.
struct ScopedEnv {
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

class NativeHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("mcprt-host-test-" + std::to_string(rd()));
    fs::create_directories(dir_);
    config_ = (dir_ / "mcp.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_config(const json& servers) {
    std::ofstream(config_) << json{{"mcpServers", servers}}.dump(2);
  }
  native::NativeHostOptions options() const {
    native::NativeHostOptions o;
    o.cwd = dir_.string();
    o.config_file = config_;
    o.cache_dir = (dir_ / "cache").string();
    o.log.level = LogLevel::error;
    return o;
  }
  static std::vector<std::string> names(const LoadResult& r) {
    std::vector<std::string> out;
    for (const auto& t : r.tools) out.push_back(t->name());
    return out;
  }

  fs::path dir_;
  std::string config_;
};

TEST_F(NativeHostTest, Load_ConnectsBindsTheRegistryAndShutdownReapsEveryServer) {
  write_config({{"demo", {{"command", MCPRT_DEMO_SERVER}}}});
  native::NativeHost host(options());
  ASSERT_TRUE(host.check().ok());
  LoadResult r = host.load(native::test::kWaitLimit);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.connected_servers, std::vector<std::string>{"demo"});
  EXPECT_EQ(r.tools.size(), 6u);
  EXPECT_EQ(host.registry().mcp_tool_count(), 6u);
  EXPECT_EQ(children_of_self().size(), 1u);
  host.shutdown();
  EXPECT_TRUE(native::test::poll_until(host.executor(), [] { return children_of_self().empty(); }));
}

TEST_F(NativeHostTest, Load_SecondHostServesASlowServerFromTheCacheDirectory) {
  write_config({{"slow", {{"command", MCPRT_DEMO_SERVER}, {"args", {"--startup-delay-ms", "3000"}}}}});
  {
    native::NativeHost first(options());
    LoadResult r = first.load(native::test::kWaitLimit);  // no cache: the gate waits
    ASSERT_EQ(r.tools.size(), 6u);
    EXPECT_FALSE(r.tools[0]->info().deferred);
  }
  native::NativeHost second(options());
  LoadResult r = second.load(native::test::kWaitLimit);
  ASSERT_EQ(r.tools.size(), 6u);
  EXPECT_TRUE(r.tools[0]->info().deferred);
  EXPECT_EQ(second.manager()->connection_status("slow"), ConnectionStatus::connecting);
  // The deferred tool waits for the connection, then calls.
  std::optional<Result<ToolResult>> got;
  second.registry().call("mcp_slow_echo", json{{"message", "late"}}, {},
                         [&](Result<ToolResult> res) { got = std::move(res); });
  ASSERT_TRUE(second.run_until([&] { return got.has_value(); }, native::test::kWaitLimit));
  ASSERT_TRUE(got->ok());
  EXPECT_EQ((*got)->text, "late");
}

TEST_F(NativeHostTest, Load_WithMcpDisabledConnectsNothing) {
  write_config({{"demo", {{"command", MCPRT_DEMO_SERVER}}}});
  auto o = options();
  o.loader.enable_mcp = false;
  native::NativeHost host(o);
  LoadResult r = host.load(native::test::kWaitLimit);
  EXPECT_TRUE(r.tools.empty());
  EXPECT_EQ(r.manager, nullptr);
  EXPECT_TRUE(children_of_self().empty());
}

TEST_F(NativeHostTest, Check_ReportsAnInvalidConfigFileWithLineAndColumn) {
  std::ofstream(config_) << "{\n  \"mcpServers\": {\n    \"a\": ,\n  }\n}\n";
  native::NativeHost host(options());
  auto s = host.check();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr(config_ + ":3:"));
}

TEST_F(NativeHostTest, Check_ReportsAWorkingDirectoryThatIsNotADirectory) {
  auto o = options();
  o.cwd = (dir_ / "nope").string();
  native::NativeHost host(o);
  auto s = host.check();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("is not a directory"));
}

TEST_F(NativeHostTest, Trust_CallbackIsAskedAboutProjectServersAndItsGrantHoldsForRediscovery) {
  // Discovery of the user's configs (no --config file) in a project with a .mcp.json.
  auto o = options();
  o.config_file.clear();
  const fs::path home = dir_ / "home";
  const fs::path repo = dir_ / "repo";
  fs::create_directories(home);
  fs::create_directories(repo);
  std::ofstream(repo / ".mcp.json") << json{{"mcpServers", {{"proj", {{"command", MCPRT_DEMO_SERVER}}}}}}.dump();
  o.cwd = repo.string();
  std::vector<std::string> asked;
  o.loader.trust = [&](const std::vector<ProjectServer>& pending, std::function<void(TrustAnswer)> answer) {
    for (const auto& p : pending) asked.push_back(p.name + " " + describe_launch(p.config));
    TrustAnswer a;
    a.trust_folder = true;
    a.remember = false;  // this run only: nothing is written
    answer(a);
  };
  ScopedEnv scoped_home("HOME", home.string());
  ScopedEnv scoped_xdg("XDG_CONFIG_HOME", std::nullopt);
  {
    native::NativeHost host(o);
    LoadResult r = host.load(native::test::kWaitLimit);
    EXPECT_EQ(asked, std::vector<std::string>{"proj " + std::string(MCPRT_DEMO_SERVER)});
    EXPECT_EQ(r.connected_servers, std::vector<std::string>{"proj"});
    EXPECT_EQ(r.tools.size(), 6u);
    // /mcp reload rediscovers with the grant of this run.
    EXPECT_TRUE(host.discover().pending.empty());
    EXPECT_FALSE(fs::exists(home / ".config/mcprt/mcp.json"));
    host.shutdown();
  }
  {
    auto o2 = o;  // a new host without a callback: pending again
    o2.loader.trust = nullptr;
    native::NativeHost fresh(o2);
    LoadResult r = fresh.load(native::test::kWaitLimit);
    EXPECT_TRUE(r.tools.empty());
    ASSERT_EQ(r.discovery.pending.size(), 1u);
    EXPECT_EQ(r.discovery.pending[0].folder, fs::canonical(repo).string());
    EXPECT_TRUE(children_of_self().empty());
  }
}

// The demo server, its stderr (where it logs each cancelled slow_task) going to `log`.
json demo_logging_to(const fs::path& log) {
  return {{"command", "/bin/sh"},
          {"args", {"-c", "exec \"$0\" 2>\"$1\"", MCPRT_DEMO_SERVER, log.string()}}};
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_F(NativeHostTest, ResourceTools_AppearOnceTheDemoServersResourcesAreListed_AndReadOne) {
  write_config({{"demo", {{"command", MCPRT_DEMO_SERVER}}}});
  native::NativeHost host(options());
  ASSERT_EQ(host.load(native::test::kWaitLimit).tools.size(), 6u);
  // The catalogs are listed after the tools: the model's resource tools follow them.
  ASSERT_TRUE(host.run_until([&] { return host.registry().contains("mcp_read_resource"); },
                             native::test::kWaitLimit));
  EXPECT_TRUE(host.registry().contains("mcp_list_resources"));
  Result<ToolResult> listed = host.call("mcp_list_resources");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  EXPECT_THAT(listed->text, HasSubstr("demo://readme"));
  Result<ToolResult> read = host.call("mcp_read_resource", {{"uri", "demo://readme"}});
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_FALSE(read->is_error) << read->text;
  EXPECT_FALSE(read->text.empty());

  // A host that does not want them (the CLI) never gets them.
  native::NativeHostOptions o = options();
  o.resource_tools.mode = ResourceToolsMode::never;
  native::NativeHost quiet(o);
  ASSERT_EQ(quiet.load(native::test::kWaitLimit).tools.size(), 6u);
  ASSERT_TRUE(quiet.run_until(
      [&] {
        auto st = quiet.manager()->server_state("demo");
        return st && st->resource_count > 0 && !st->catalogs_refreshing;
      },
      native::test::kWaitLimit));
  EXPECT_FALSE(quiet.registry().contains("mcp_read_resource"));
}

TEST_F(NativeHostTest, Call_BlocksUntilTheToolAnswersAndReturnsItsResult) {
  write_config({{"demo", {{"command", MCPRT_DEMO_SERVER}}}});
  native::NativeHost host(options());
  ASSERT_EQ(host.load(native::test::kWaitLimit).tools.size(), 6u);
  Result<ToolResult> r = host.call("mcp_demo_add", {{"a", 2}, {"b", 3}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->is_error);
  EXPECT_EQ(r->text, "5");
  // A tool failure is a result, not an Error.
  Result<ToolResult> unknown = host.call("mcp_demo_nope");
  ASSERT_TRUE(unknown.ok());
  EXPECT_TRUE(unknown->is_error);
  EXPECT_THAT(unknown->text, HasSubstr("mcp_demo_nope"));
}

TEST_F(NativeHostTest, Call_PastItsLimitFailsWithTimeoutAndCancelsTheCallOnTheServer) {
  const fs::path log = dir_ / "server.log";
  write_config({{"demo", demo_logging_to(log)}});
  native::NativeHost host(options());
  ASSERT_EQ(host.load(native::test::kWaitLimit).tools.size(), 6u);
  native::HostCallOptions o;
  o.timeout = Millis(200);  // the task takes 1000 steps of 60 s
  Result<ToolResult> r =
      host.call("mcp_demo_slow_task", {{"steps", 1000}, {"interval_ms", 60000}}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::timeout);
  EXPECT_THAT(r.error().message, HasSubstr("\"mcp_demo_slow_task\" did not finish within 200 ms"));
  EXPECT_TRUE(native::test::poll_until(host.executor(), [&] {
    return read_text(log).find("cancelled after 0 of 1000 steps") != std::string::npos;
  })) << read_text(log);
}

TEST_F(NativeHostTest, Call_StopAbortsTheCallWithItsReasonAndTheServerIsTold) {
  const fs::path log = dir_ / "server.log";
  write_config({{"demo", demo_logging_to(log)}});
  native::NativeHost host(options());
  ASSERT_EQ(host.load(native::test::kWaitLimit).tools.size(), 6u);
  int progress = 0;
  native::HostCallOptions o;
  o.on_progress = [&](const json&) { ++progress; };
  o.stop = [&]() -> std::optional<std::string> {
    if (progress < 2) return std::nullopt;
    return "the user pressed stop";
  };
  Result<ToolResult> r = host.call("mcp_demo_slow_task", {{"steps", 1000}, {"interval_ms", 10}}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::aborted);
  EXPECT_THAT(r.error().message, HasSubstr("the user pressed stop"));
  EXPECT_GE(progress, 2);
  EXPECT_TRUE(native::test::poll_until(host.executor(), [&] {
    return read_text(log).find("of 1000 steps: the user pressed stop") != std::string::npos;
  })) << read_text(log);
}

// A host tool that never answers and ignores its abort signal; it keeps what it was given.
class DeafTool : public Tool {
 public:
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return name_; }
  const json& input_schema() const override { return schema_; }
  void call(json, ToolCallOptions options, ToolDone done) override {
    options_ = std::move(options);
    done_ = std::move(done);
  }
  ToolCallOptions options_;
  ToolDone done_;

 private:
  std::string name_ = "deaf";
  json schema_ = json{{"type", "object"}};
};

TEST_F(NativeHostTest, Call_OfAToolThatIgnoresTheAbortReturnsTheStopAndForwardsNoLaterProgress) {
  native::NativeHost host(options());
  auto deaf = std::make_shared<DeafTool>();
  ASSERT_TRUE(host.registry().add_tool(deaf).ok());
  int progress = 0;
  native::HostCallOptions o;
  o.on_progress = [&](const json&) { ++progress; };
  o.stop = [&]() -> std::optional<std::string> {
    if (progress == 0) return std::nullopt;
    return "enough";
  };
  o.abort_settle = Millis(0);
  // The tool reports once; the stop check then answers, and the tool never completes.
  host.executor().post([&] { deaf->options_.on_progress(json{{"progress", 1}}); });
  Result<ToolResult> r = host.call("deaf", json::object(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::aborted);
  EXPECT_EQ(r.error().message, "enough");
  EXPECT_TRUE(deaf->options_.signal.aborted());
  // Progress and completion after call() returned reach nobody.
  deaf->options_.on_progress(json{{"progress", 2}});
  EXPECT_EQ(progress, 1);
  deaf->done_(ToolResult{});
}

TEST_F(NativeHostTest, Call_RejectsArgumentsThatAreNotAJsonObject) {
  native::NativeHost host(options());
  Result<ToolResult> array = host.call("mcp_demo_add", json::array({1, 2}));
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.error().code, ErrorCode::invalid_argument);
  EXPECT_THAT(array.error().message,
              HasSubstr("\"mcp_demo_add\" must be a JSON object, not an array"));
  Result<ToolResult> invalid = host.call("mcp_demo_add", json::parse("{", nullptr, false));
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(invalid.error().message,
              HasSubstr("the arguments of tool \"mcp_demo_add\" are not valid JSON"));
}

TEST_F(NativeHostTest, UserConfigPathIsTheConfigFileWhenOneIsGiven) {
  native::NativeHost host(options());
  EXPECT_EQ(host.user_config_path(), config_);
}

}  // namespace
}  // namespace native_host_test
}  // namespace mcprt
