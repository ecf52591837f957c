#pragma once
// Helpers shared by session_test.cpp, mcp_command_test.cpp and loader_test.cpp: a host
// tool, an in-memory FileSystem, and a fixture that runs real discovery over that file
// system into a real McpManager whose servers are FakeServers (FakeServerFarm).

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/mcp_command.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/file_system.hpp"
#include "mcprt/session.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/fake_server_farm.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tools.hpp"

namespace mcprt::unit {

// A host tool that answers "<name> called with <args>" (posted, per the async contract).
class FakeTool final : public Tool {
 public:
  FakeTool(Executor& ex, std::string name, std::string description)
      : ex_(ex), name_(std::move(name)), description_(std::move(description)) {}
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const json& input_schema() const override { return schema_; }
  void call(json arguments, ToolCallOptions, ToolDone done) override {
    ++calls;
    std::string text = name_ + " called with " + arguments.dump();
    ex_.post([text, done = std::move(done)] {
      ToolResult r;
      r.text = text;
      r.content = json::array({json{{"type", "text"}, {"text", text}}});
      done(std::move(r));
    });
  }
  int calls = 0;

 private:
  Executor& ex_;
  std::string name_;
  std::string description_;
  json schema_ = json{{"type", "object"}};
};

// Files in a map; writes can be made to fail.
class MapFileSystem final : public FileSystem {
 public:
  Result<std::optional<std::string>> read_file(const std::string& path) override {
    ++reads;
    auto it = files.find(path);
    if (it == files.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Status write_file(const std::string& path, const std::string& content) override {
    if (fail_writes) return Error::make(ErrorCode::transport, "cannot write " + path + ": read-only");
    files[path] = content;
    ++writes;
    return {};
  }
  json read_json(const std::string& path) const {
    auto it = files.find(path);
    return it == files.end() ? json() : json::parse(it->second, nullptr, false);
  }
  std::map<std::string, std::string> files;
  bool fail_writes = false;
  int reads = 0;
  int writes = 0;
};

inline json tool_def(const std::string& name) {
  return {{"name", name}, {"description", "tool " + name}, {"inputSchema", {{"type", "object"}}}};
}

// Discovery over MapFileSystem (home /home/u, project /work) → McpManager over a
// FakeServerFarm → McpSession over a ToolRegistry.
class SessionFixture : public ::testing::Test {
 protected:
  static constexpr const char* kUserFile = "/home/u/.config/mcprt/mcp.json";
  static constexpr const char* kClaudeFile = "/home/u/.claude.json";

  SessionFixture() {
    ctx.cwd = "/work";
    ctx.home = "/home/u";
    ctx.fs = &fs;
  }

  // A stdio server entry (the farm serves it; the command never runs).
  static json server(const std::string& name) { return {{"command", "fake-" + name}}; }

  void write(const std::string& path, const json& doc) { fs.files[path] = doc.dump(2); }
  // Each new connection to `name` lists `tools` (and leaves `hold` methods unanswered).
  void serve(const std::string& name, std::vector<std::string> tools,
             std::vector<std::string> hold = {}) {
    std::vector<json> defs;
    for (const auto& t : tools) defs.push_back(tool_def(t));
    farm.on_connect(name, [defs, hold](testing::FakeServer& s) {
      s.set_tools(defs);
      for (const auto& m : hold) s.hold(m);
      s.on_tool("echo", [](const json& args) -> Result<json> {
        return json{{"content", json::array({{{"type", "text"}, {"text", args.dump()}}})}};
      });
    });
  }

  DiscoveryResult discover() { return discover_servers(ctx, discovery_options); }

  ManagerServices services() {
    ManagerServices s;
    s.executor = &ex;
    s.logger = &log;
    s.transport_factory = farm.factory();
    return s;
  }

  // Discovers, connects through the gate, binds the session, builds the controller.
  void start() {
    manager = std::make_shared<McpManager>(services(), manager_options);
    DiscoveryResult d = discover();
    bool gated = false;
    manager->connect_servers(d.configs, [&](GateResult) { gated = true; });
    ex.run_until_idle();
    // Servers that answer at once settle the gate without the clock moving; a held one
    // (with wait_for_uncached off) is reported as pending when the gate time is up.
    if (!gated) ex.advance(manager_options.startup_gate);
    EXPECT_TRUE(gated);
    session.bind(manager);
    McpCommandOptions o;
    o.discover = [this] { return discover(); };
    o.fs = &fs;
    o.user_config_path = kUserFile;
    o.login = login;
    mcp = std::make_unique<McpCommandController>(session, std::move(o), d);
  }

  // Runs one /mcp line to its answer.
  std::string run(const std::string& line) {
    std::optional<std::string> out;
    mcp->execute(line, [&](std::string s) { out = std::move(s); });
    EXPECT_FALSE(out.has_value()) << "answered inside execute()";
    ex.run_until_idle();
    EXPECT_TRUE(out.has_value()) << "no answer to " << line;
    return out.value_or("");
  }

  testing::ManualExecutor ex;
  testing::CapturingLogger log;
  testing::FakeServerFarm farm{ex};
  MapFileSystem fs;
  DiscoveryContext ctx;
  DiscoveryOptions discovery_options;
  ManagerOptions manager_options;
  // McpCommandOptions::login for `/mcp auth` (null = the host cannot log in).
  std::function<void(const std::string&, std::function<void(Status)>)> login;
  ToolRegistry registry{ex};
  std::shared_ptr<McpManager> manager;
  McpSession session{registry};
  std::unique_ptr<McpCommandController> mcp;
};

}  // namespace mcprt::unit
