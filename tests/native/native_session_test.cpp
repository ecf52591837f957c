// NativeHost + McpSession + /mcp with real server processes: reload picks up an edited
// config file, and a child session reuses the parent's server process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "mcprt/native/host.hpp"
#include "native_test_support.hpp"

namespace mcprt {
namespace native_session_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using native::test::children_of_self;

// Live children only (a zombie is a reaped-later process, not a running server).
std::size_t running_children() {
  std::size_t n = 0;
  for (const auto& c : children_of_self()) n += c.state != 'Z';
  return n;
}

class NativeSession : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("mcprt-session-test-" + std::to_string(rd()));
    fs::create_directories(dir_);
    config_ = (dir_ / "mcp.json").string();
  }
  void TearDown() override {
    host_.reset();
    fs::remove_all(dir_);
  }

  void write_config(const json& servers) { std::ofstream(config_) << json{{"mcpServers", servers}}.dump(2); }
  static json demo(std::vector<std::string> args = {}) {
    return {{"command", MCPRT_DEMO_SERVER}, {"args", args}};
  }

  native::NativeHost& start() {
    native::NativeHostOptions o;
    o.cwd = dir_.string();
    o.config_file = config_;
    o.use_cache = false;
    o.log.level = LogLevel::error;
    host_ = std::make_unique<native::NativeHost>(std::move(o));
    EXPECT_TRUE(host_->check().ok());
    result_ = host_->load(native::test::kWaitLimit);
    return *host_;
  }

  std::string mcp(const std::string& line) {
    std::optional<std::string> out;
    host_->commands().execute(line, [&](std::string s) { out = std::move(s); });
    host_->run_until([&] { return out.has_value(); }, native::test::kWaitLimit);
    return out.value_or("(no answer)");
  }

  Result<ToolResult> call(Tool& tool, json args) {
    std::optional<Result<ToolResult>> got;
    tool.call(std::move(args), {}, [&](Result<ToolResult> r) { got = std::move(r); });
    host_->run_until([&] { return got.has_value(); }, native::test::kWaitLimit);
    if (!got) return Error::make(ErrorCode::timeout, "no answer");
    return std::move(*got);
  }

  fs::path dir_;
  std::string config_;
  std::unique_ptr<native::NativeHost> host_;
  LoadResult result_;
};

TEST_F(NativeSession, Reload_PicksUpAnEditedConfigFile) {
  write_config({{"first", demo()}});
  auto& host = start();
  ASSERT_TRUE(host.registry().contains("mcp_first_echo"));
  EXPECT_EQ(running_children(), 1u);

  write_config({{"second", demo({"--quiet"})}});
  std::string out = mcp("/mcp reload");
  EXPECT_THAT(out, HasSubstr("Reloaded: 1 server, 6 tools."));
  EXPECT_TRUE(host.registry().contains("mcp_second_echo"));
  EXPECT_FALSE(host.registry().contains("mcp_first_echo"));
  // The first server's process is gone: only the second one runs.
  EXPECT_TRUE(native::test::poll_until(host.executor(), [] { return running_children() == 1; }));
}

TEST_F(NativeSession, Child_CallsTheParentsServerWithoutSpawningAnotherProcess) {
  write_config({{"demo", demo()}});
  auto& host = start();
  ASSERT_EQ(running_children(), 1u);

  ToolRegistry child_registry(host.executor());
  auto child = host.session().make_child(child_registry);
  ASSERT_TRUE(child_registry.contains("mcp_demo_echo"));
  auto r = call(*child_registry.find("mcp_demo_echo"), json{{"message", "from the child"}});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->is_error) << r->text;
  EXPECT_EQ(r->text, "from the child");
  EXPECT_EQ(running_children(), 1u);  // still the parent's one process

  // The parent disconnects the server: the child's held tool fails clearly, and no
  // process is started for it.
  ToolPtr held = child_registry.find("mcp_demo_echo");
  bool disconnected = false;
  host.manager()->disconnect_server("demo", [&] { disconnected = true; });
  ASSERT_TRUE(host.run_until([&] { return disconnected; }, native::test::kWaitLimit));
  auto after = call(*held, json{{"message", "again"}});
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->is_error);
  EXPECT_THAT(after->text, HasSubstr("Server \"demo\" was disconnected by the parent session"));
  EXPECT_TRUE(native::test::poll_until(host.executor(), [] { return running_children() == 0; }));
}

TEST_F(NativeSession, Remove_RewritesTheConfigFileAndStopsTheServer) {
  write_config({{"demo", demo()}, {"other", demo({"--quiet"})}});
  auto& host = start();
  ASSERT_EQ(running_children(), 2u);
  std::string out = mcp("/mcp remove other");
  EXPECT_THAT(out, HasSubstr("Removed \"other\" from " + config_));
  EXPECT_FALSE(host.registry().contains("mcp_other_echo"));
  EXPECT_TRUE(host.registry().contains("mcp_demo_echo"));
  std::ifstream f(config_);
  json doc = json::parse(f, nullptr, false);
  EXPECT_FALSE(doc["mcpServers"].contains("other")) << doc;
  EXPECT_TRUE(native::test::poll_until(host.executor(), [] { return running_children() == 1; }));
}

}  // namespace
}  // namespace native_session_test
}  // namespace mcprt
