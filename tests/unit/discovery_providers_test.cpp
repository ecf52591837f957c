// Discovery providers (SPEC §2.1): which files each built-in provider reads, at which
// level and priority, and how each format maps onto ServerConfig.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "mcprt/discovery.hpp"
#include "mcprt/testing/env_map.hpp"
#include "mcprt/testing/memory_file_system.hpp"

namespace mcprt {
namespace discovery_providers_test {  // this file's own names in a unity batch
namespace {

using testing::MemoryFileSystem;

class DiscoveryProviders : public ::testing::Test {
 protected:
  DiscoveryProviders() {
    ctx.cwd = "/repo";
    ctx.home = "/home/u";
    ctx.fs = &fs;
    ctx.env = testing::env_ref(env);
  }

  DiscoveryResult discover(DiscoveryOptions options = {}) { return discover_servers(ctx, options); }
  // These tests are about files and formats, so project files are trusted explicitly
  // (trust itself is trust_test.cpp's subject).
  static DiscoveryOptions trusting() {
    DiscoveryOptions o;
    o.trust_all_projects = true;
    return o;
  }

  const ServerConfig* find(const DiscoveryResult& r, const std::string& name) {
    for (const auto& c : r.configs) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  static std::string servers(const std::string& name, const std::string& entry,
                             const std::string& key = "mcpServers") {
    return R"({")" + key + R"(": {")" + name + R"(": )" + entry + "}}";
  }

  MemoryFileSystem fs;
  std::map<std::string, std::string> env;
  DiscoveryContext ctx;
};

TEST_F(DiscoveryProviders, BuiltinProviders_HaveTheSpecIdsNamesAndPriorities) {
  std::vector<std::tuple<std::string, std::string, int>> got;
  for (const auto& p : builtin_providers()) got.emplace_back(p->id(), p->display_name(), p->priority());
  const std::vector<std::tuple<std::string, std::string, int>> want = {
      {"native", "mcprt", 100},  {"claude", "Claude Code", 80}, {"gemini", "Gemini CLI", 60},
      {"codex", "Codex", 55},    {"cursor", "Cursor", 50},      {"windsurf", "Windsurf", 45},
      {"vscode", "VS Code", 20}, {"mcp-json", "MCP Config", 5}};
  EXPECT_EQ(got, want);
}

TEST_F(DiscoveryProviders, Native_ReadsProjectAndXdgUserFilesWithLevels) {
  fs.add("/repo/.mcprt/mcp.json", servers("proj", R"({"command": "p"})"));
  fs.add("/home/u/.config/mcprt/mcp.json", servers("mine", R"({"command": "m"})"));
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 2u);
  ASSERT_NE(find(r, "proj"), nullptr);
  EXPECT_EQ(find(r, "proj")->source.level, SourceInfo::Level::project);
  EXPECT_EQ(find(r, "proj")->source.path, "/repo/.mcprt/mcp.json");
  EXPECT_EQ(find(r, "mine")->source.level, SourceInfo::Level::native);
  EXPECT_EQ(find(r, "mine")->source.provider, "native");
  EXPECT_EQ(find(r, "mine")->source.provider_name, "mcprt");
}

TEST_F(DiscoveryProviders, Native_HonoursXdgConfigHome) {
  ctx.xdg_config_home = "/xdg";
  fs.add("/xdg/mcprt/mcp.json", servers("x", R"({"command": "x"})"));
  fs.add("/home/u/.config/mcprt/mcp.json", servers("ignored", R"({"command": "i"})"));
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].name, "x");
  EXPECT_EQ(native_user_config_path(ctx), "/xdg/mcprt/mcp.json");
}

TEST_F(DiscoveryProviders, Native_UsesTheHostAppNameForFilesAndDisplay) {
  ctx.app_name = "acme";
  ctx.app_display_name = "Acme Agent";
  fs.add("/repo/.acme/mcp.json", servers("a", R"({"command": "a"})"));
  fs.add("/repo/.mcprt/mcp.json", servers("m", R"({"command": "m"})"));
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].name, "a");
  EXPECT_EQ(r.configs[0].source.provider_name, "Acme Agent");
  EXPECT_EQ(native_project_config_path(ctx), "/repo/.acme/mcp.json");
}

TEST_F(DiscoveryProviders, Claude_ReadsProjectBlockDotMcpJsonAndUserServers) {
  fs.add("/repo/.mcp.json", servers("shared", R"({"type": "http", "url": "https://s.example/mcp"})"));
  fs.add("/home/u/.claude.json", R"({
    "mcpServers": {"user-srv": {"type": "stdio", "command": "u"}},
    "projects": {"/repo": {"mcpServers": {"local-srv": {"command": "l"}}},
                 "/other": {"mcpServers": {"elsewhere": {"command": "e"}}}}
  })");
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 3u);
  EXPECT_EQ(find(r, "local-srv")->source.level, SourceInfo::Level::project);
  EXPECT_EQ(find(r, "local-srv")->source.path, "/home/u/.claude.json");
  EXPECT_EQ(find(r, "shared")->source.level, SourceInfo::Level::project);
  EXPECT_EQ(find(r, "shared")->type, TransportType::http);
  EXPECT_EQ(find(r, "user-srv")->source.level, SourceInfo::Level::user);
  EXPECT_EQ(find(r, "user-srv")->source.provider_name, "Claude Code");
  EXPECT_EQ(find(r, "elsewhere"), nullptr);
}

TEST_F(DiscoveryProviders, Claude_ProjectBlockWinsOverUserEntryOfTheSameName) {
  fs.add("/home/u/.claude.json", R"({
    "mcpServers": {"srv": {"command": "user"}},
    "projects": {"/repo": {"mcpServers": {"srv": {"command": "local"}}}}
  })");
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].command, "local");
  ASSERT_EQ(r.shadowed.size(), 1u);
  EXPECT_EQ(r.shadowed[0].source.level, SourceInfo::Level::user);
}

TEST_F(DiscoveryProviders, Gemini_MapsCommandHttpUrlAndUrl) {
  fs.add("/home/u/.gemini/settings.json", R"({
    // Gemini settings are JSONC
    "mcpServers": {
      "local": {"command": "g"},
      "streamable": {"httpUrl": "https://h.example/mcp"},
      "legacy": {"url": "https://l.example/sse"}
    }
  })");
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 3u) << (r.errors.empty() ? "" : r.errors[0].describe());
  EXPECT_EQ(find(r, "local")->type, TransportType::stdio);
  EXPECT_EQ(find(r, "streamable")->type, TransportType::http);
  EXPECT_TRUE(find(r, "streamable")->type_explicit);
  EXPECT_EQ(find(r, "streamable")->url, "https://h.example/mcp");
  EXPECT_EQ(find(r, "legacy")->type, TransportType::sse);
  EXPECT_EQ(find(r, "legacy")->source.provider_name, "Gemini CLI");
  // raw stays as written (the cache key must not change with our mapping).
  EXPECT_TRUE(find(r, "streamable")->raw.contains("httpUrl"));
}

TEST_F(DiscoveryProviders, Windsurf_ReadsServerUrlFromTheUserFile) {
  fs.add("/home/u/.codeium/windsurf/mcp_config.json",
         servers("w", R"({"serverUrl": "https://w.example/mcp"})"));
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].url, "https://w.example/mcp");
  EXPECT_EQ(r.configs[0].type, TransportType::http);
  EXPECT_FALSE(r.configs[0].type_explicit);
  EXPECT_EQ(r.configs[0].source.provider, "windsurf");
}

TEST_F(DiscoveryProviders, Cursor_ReadsProjectAndUserFiles) {
  fs.add("/repo/.cursor/mcp.json", servers("cp", R"({"command": "a"})"));
  fs.add("/home/u/.cursor/mcp.json", servers("cu", R"({"command": "b"})"));
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 2u);
  EXPECT_EQ(find(r, "cp")->source.level, SourceInfo::Level::project);
  EXPECT_EQ(find(r, "cu")->source.level, SourceInfo::Level::user);
  EXPECT_EQ(find(r, "cu")->source.provider_name, "Cursor");
}

TEST_F(DiscoveryProviders, VsCode_ReadsTopLevelServersAndWarnsAboutInputVariables) {
  fs.add("/repo/.vscode/mcp.json", R"({
    "inputs": [{"id": "token", "type": "promptString"}],
    "servers": {
      "gh": {"type": "http", "url": "https://api.example/mcp",
             "headers": {"Authorization": "Bearer ${input:token}"}},
      "tool": {"type": "stdio", "command": "${workspaceFolder}/bin/tool"}
    }
  })");
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 2u);
  EXPECT_EQ(find(r, "gh")->headers.at("Authorization"), "Bearer ${input:token}");
  EXPECT_EQ(find(r, "tool")->command, "/repo/bin/tool");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].server, "gh");
  EXPECT_NE(r.warnings[0].message.find("${input:"), std::string::npos);
}

TEST_F(DiscoveryProviders, McpJson_ReadsTheProjectRootFile) {
  fs.add("/repo/mcp.json", servers("root", R"({"command": "r"})"));
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].source.provider, "mcp-json");
  EXPECT_EQ(r.configs[0].source.provider_name, "MCP Config");
  EXPECT_EQ(r.configs[0].source.level, SourceInfo::Level::project);
}

TEST_F(DiscoveryProviders, NoHome_ReadsNoUserFiles) {
  ctx.home.clear();
  fs.add("/home/u/.cursor/mcp.json", servers("cu", R"({"command": "b"})"));
  DiscoveryResult r = discover();
  EXPECT_TRUE(r.configs.empty());
  for (const auto& path : fs.reads()) EXPECT_EQ(path.rfind("/home", 0), std::string::npos) << path;
}

TEST_F(DiscoveryProviders, InvalidJson_IsOnePerFileErrorWithLineAndColumn) {
  fs.add("/repo/.cursor/mcp.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": }\n  }\n}");
  fs.add("/home/u/.cursor/mcp.json", servers("ok", R"({"command": "b"})"));
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].name, "ok");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, "/repo/.cursor/mcp.json");
  EXPECT_EQ(r.errors[0].line, 3);
  EXPECT_GT(r.errors[0].column, 0);
}

TEST_F(DiscoveryProviders, UnreadableFile_IsAPerFileErrorAndOthersLoad) {
  fs.fail("/home/u/.claude.json", "permission denied");
  fs.add("/repo/.mcp.json", servers("p", R"({"command": "b"})"));
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 1u);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, "/home/u/.claude.json");
  EXPECT_NE(r.errors[0].message.find("permission denied"), std::string::npos);
}

// --- Codex (TOML through the context's parser; the native side uses toml++) ----------

// A stand-in TOML parser for the core tests: the "TOML" text is JSON; "BROKEN" fails
// the way a real parser does.
Result<json> fake_toml(std::string_view text, std::string_view) {
  if (text == "BROKEN") {
    return Error::make(ErrorCode::invalid_config, "expected '=' after key", json{{"line", 4}, {"column", 9}});
  }
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) return Error::make(ErrorCode::invalid_config, "bad test input");
  return doc;
}

TEST_F(DiscoveryProviders, Codex_MapsEveryCodexKey) {
  ctx.parse_toml = fake_toml;
  env["GH_TOKEN"] = "tok";
  env["FORWARDED"] = "fwd";
  fs.add("/home/u/.codex/config.toml", R"({"mcp_servers": {
    "local": {"command": "c", "args": ["-x"], "env": {"A": "1"}, "env_vars": ["FORWARDED", "UNSET_ONE"],
              "enabled_tools": ["read"], "disabled_tools": ["write"],
              "startup_timeout_sec": 12, "tool_timeout_sec": 1.5},
    "remote": {"url": "https://r.example/mcp", "http_headers": {"X-A": "b"},
               "env_http_headers": {"X-Token": "GH_TOKEN"}, "bearer_token_env_var": "GH_TOKEN"}
  }})");
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 2u) << (r.errors.empty() ? "" : r.errors[0].describe());
  const ServerConfig* local = find(r, "local");
  EXPECT_EQ(local->env, (std::map<std::string, std::string>{{"A", "1"}, {"FORWARDED", "fwd"}}));
  EXPECT_EQ(local->include_tools, std::vector<std::string>{"read"});
  EXPECT_EQ(local->exclude_tools, std::vector<std::string>{"write"});
  EXPECT_EQ(local->timeout_ms, 12000);
  EXPECT_EQ(local->tool_timeout_ms, 1500);
  EXPECT_EQ(local->source.provider_name, "Codex");
  EXPECT_TRUE(local->raw.contains("env_vars"));  // raw is the table as written
  const ServerConfig* remote = find(r, "remote");
  EXPECT_EQ(remote->headers.at("X-A"), "b");
  EXPECT_EQ(remote->headers.at("X-Token"), "tok");
  EXPECT_EQ(remote->headers.at("Authorization"), "Bearer tok");
}

TEST_F(DiscoveryProviders, Codex_ProjectFileComesBeforeUserFile) {
  ctx.parse_toml = fake_toml;
  fs.add("/repo/.codex/config.toml", R"({"mcp_servers": {"s": {"command": "project"}}})");
  fs.add("/home/u/.codex/config.toml", R"({"mcp_servers": {"s": {"command": "user"}}})");
  DiscoveryResult r = discover(trusting());
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].command, "project");
}

TEST_F(DiscoveryProviders, Codex_TomlErrorIsAPerFileErrorWithLineAndColumn) {
  ctx.parse_toml = fake_toml;
  fs.add("/home/u/.codex/config.toml", "BROKEN");
  fs.add("/home/u/.cursor/mcp.json", servers("ok", R"({"command": "b"})"));
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 1u);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, "/home/u/.codex/config.toml");
  EXPECT_EQ(r.errors[0].line, 4);
  EXPECT_EQ(r.errors[0].column, 9);
  EXPECT_NE(r.errors[0].message.find("invalid TOML"), std::string::npos);
}

TEST_F(DiscoveryProviders, Codex_WithoutATomlParserIsAPerFileError) {
  fs.add("/home/u/.codex/config.toml", "[mcp_servers.a]\ncommand = \"x\"\n");
  DiscoveryResult r = discover();
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].message.find("TOML is not supported on this platform"), std::string::npos);
}

TEST_F(DiscoveryProviders, Codex_WrongTypeIsAPerServerError) {
  ctx.parse_toml = fake_toml;
  fs.add("/home/u/.codex/config.toml", R"({"mcp_servers": {
    "bad": {"command": "c", "startup_timeout_sec": "soon"}, "good": {"command": "g"}}})");
  DiscoveryResult r = discover();
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].name, "good");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].server, "bad");
  EXPECT_NE(r.errors[0].message.find("Server \"bad\""), std::string::npos);
  EXPECT_NE(r.errors[0].message.find("startup_timeout_sec"), std::string::npos);
}

// --- programmatic and host-controlled providers ---------------------------------------

TEST_F(DiscoveryProviders, Programmatic_AcceptsWrappedAndBareMaps) {
  DiscoveryOptions o;
  o.use_builtin_providers = false;
  o.extra_providers.push_back(make_programmatic_provider(
      "host", "Host", 90, SourceInfo::Level::native,
      json::parse(R"({"mcpServers": {"a": {"url": "https://a.example/mcp"}}})"), "host-config"));
  o.extra_providers.push_back(make_programmatic_provider(
      "js", "Browser", 10, SourceInfo::Level::user, json::parse(R"({"b": {"url": "https://b.example/mcp"}})")));
  DiscoveryResult r = discover(o);
  ASSERT_EQ(r.configs.size(), 2u);
  EXPECT_EQ(find(r, "a")->source.path, "host-config");
  EXPECT_EQ(find(r, "a")->source.provider_name, "Host");
  EXPECT_EQ(find(r, "b")->source.provider, "js");
  EXPECT_TRUE(fs.reads().empty());
}

TEST_F(DiscoveryProviders, RemovedProviders_AreNotRead) {
  fs.add("/repo/.cursor/mcp.json", servers("c", R"({"command": "a"})"));
  DiscoveryOptions o;
  o.removed_providers = {"cursor"};
  DiscoveryResult r = discover(o);
  EXPECT_TRUE(r.configs.empty());
}

TEST_F(DiscoveryProviders, ExtraProvider_IsMergedByItsPriority) {
  fs.add("/repo/.mcp.json", servers("s", R"({"command": "claude"})"));
  DiscoveryOptions o;
  o.extra_providers.push_back(make_programmatic_provider(
      "host", "Host", 90, SourceInfo::Level::native, json::parse(R"({"s": {"command": "host"}})")));
  DiscoveryResult r = discover(o);
  ASSERT_EQ(r.configs.size(), 1u);
  EXPECT_EQ(r.configs[0].command, "host");
}

}  // namespace
}  // namespace discovery_providers_test
}  // namespace mcprt
