// The server config model and the mcpServers JSON format (SPEC §2.2, §2.3).

#include <gtest/gtest.h>

#include <string>

#include "mcprt/config.hpp"

namespace mcprt {
namespace config_test {  // this file's own names in a unity batch
namespace {

ServerConfig parse_ok(const std::string& name, const json& entry) {
  Result<ServerConfig> r = parse_server_entry(name, entry);
  EXPECT_TRUE(r.ok()) << r;
  return r.ok() ? *r : ServerConfig{};
}

std::string parse_error(const std::string& name, const json& entry) {
  Result<ServerConfig> r = parse_server_entry(name, entry);
  EXPECT_FALSE(r.ok());
  if (r.ok()) return {};
  EXPECT_EQ(r.error().code, ErrorCode::invalid_config);
  return r.error().message;
}

std::string validation_error(const std::string& name, const json& entry,
                             ValidationOptions options = {}) {
  ServerConfig cfg = parse_ok(name, entry);
  Status s = validate_server_config(cfg, options);
  EXPECT_FALSE(s.ok()) << entry.dump();
  if (s.ok()) return {};
  EXPECT_EQ(s.error().code, ErrorCode::invalid_config);
  return s.error().message;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// --- parsing the fields -------------------------------------------------------------

TEST(ServerConfig_Parse, ReadsEveryStdioField) {
  ServerConfig c = parse_ok("fs", json::parse(R"({
    "type": "stdio", "command": "npx", "args": ["-y", "server-fs", "/tmp"],
    "env": {"DEBUG": "1"}, "cwd": "/work", "envPolicy": "literal",
    "enabled": "false", "timeout": 5000, "toolTimeout": "60000",
    "includeTools": ["read_*"], "excludeTools": ["read_secret"],
    "reconnect": {"maxAttempts": 3, "initialDelayMs": 100, "maxDelayMs": 2000},
    "auth": {"type": "oauth", "credentialId": "cred-1"}
  })"));
  EXPECT_EQ(c.name, "fs");
  EXPECT_EQ(c.type, TransportType::stdio);
  EXPECT_TRUE(c.type_explicit);
  EXPECT_EQ(c.command, "npx");
  EXPECT_EQ(c.args, (std::vector<std::string>{"-y", "server-fs", "/tmp"}));
  EXPECT_EQ(c.env.at("DEBUG"), "1");
  EXPECT_EQ(c.cwd, "/work");
  EXPECT_TRUE(c.env_literal);
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.timeout_ms, 5000);
  EXPECT_EQ(c.tool_timeout_ms, 60000);
  EXPECT_EQ(c.include_tools, (std::vector<std::string>{"read_*"}));
  EXPECT_EQ(c.exclude_tools, (std::vector<std::string>{"read_secret"}));
  EXPECT_EQ(c.reconnect, (ReconnectPolicy{true, 3, 100, 2000}));
  EXPECT_EQ(c.auth.type, AuthType::oauth);
  EXPECT_EQ(c.auth.credential_id, "cred-1");
}

TEST(ServerConfig_Parse, ReadsEveryHttpField) {
  ServerConfig c = parse_ok("remote", json::parse(R"({
    "type": "sse", "url": "https://example.com/sse",
    "headers": {"X-Api-Key": "k"}, "headerPolicy": "origin-locked",
    "auth": {"type": "bearer"}, "reconnect": false
  })"));
  EXPECT_EQ(c.type, TransportType::sse);
  EXPECT_EQ(c.url, "https://example.com/sse");
  EXPECT_EQ(c.headers.at("X-Api-Key"), "k");
  EXPECT_TRUE(c.origin_locked);
  EXPECT_EQ(c.auth.type, AuthType::bearer);
  EXPECT_FALSE(c.reconnect.enabled);
  EXPECT_FALSE(c.allows_sse_fallback());
}

TEST(ServerConfig_Parse, LeavesUnsetTimeoutsEmptyAndDefaultsTheRest) {
  ServerConfig c = parse_ok("a", json{{"command", "x"}});
  EXPECT_FALSE(c.timeout_ms.has_value());
  EXPECT_FALSE(c.tool_timeout_ms.has_value());
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.reconnect, ReconnectPolicy{});
  EXPECT_EQ(c.auth.type, AuthType::none);
}

TEST(ServerConfig_Parse, KeepsTheEntryAsWrittenInRaw) {
  const json entry = json::parse(R"({"command":"x","env":{"K":"${SECRET}"},"custom":42})");
  EXPECT_EQ(parse_ok("a", entry).raw, entry);
}

TEST(ServerConfig_Parse, InfersStdioFromCommand) {
  ServerConfig c = parse_ok("a", json{{"command", "node"}});
  EXPECT_EQ(c.type, TransportType::stdio);
  EXPECT_FALSE(c.type_explicit);
}

TEST(ServerConfig_Parse, InfersHttpWithSseFallbackFromABareUrl) {
  ServerConfig c = parse_ok("a", json{{"url", "https://x.dev/mcp"}});
  EXPECT_EQ(c.type, TransportType::http);
  EXPECT_FALSE(c.type_explicit);
  EXPECT_TRUE(c.allows_sse_fallback());
}

TEST(ServerConfig_Parse, ExplicitHttpHasNoFallback) {
  ServerConfig c = parse_ok("a", json{{"type", "http"}, {"url", "https://x.dev/mcp"}});
  EXPECT_TRUE(c.type_explicit);
  EXPECT_FALSE(c.allows_sse_fallback());
}

TEST(ServerConfig_Parse, AcceptsTransportAsTheTypeKey) {
  EXPECT_EQ(parse_ok("a", json{{"transport", "sse"}, {"url", "http://h/sse"}}).type,
            TransportType::sse);
  // `type` wins when both are present.
  EXPECT_EQ(parse_ok("a", json{{"type", "http"}, {"transport", "sse"}, {"url", "http://h"}}).type,
            TransportType::http);
}

TEST(ServerConfig_Parse, AcceptsEnabledAsBoolOrItsStrings) {
  EXPECT_FALSE(parse_ok("a", json{{"command", "x"}, {"enabled", false}}).enabled);
  EXPECT_TRUE(parse_ok("a", json{{"command", "x"}, {"enabled", "true"}}).enabled);
  EXPECT_FALSE(parse_ok("a", json{{"command", "x"}, {"enabled", "false"}}).enabled);
  EXPECT_TRUE(parse_ok("a", json{{"command", "x"}, {"enabled", "1"}}).enabled);
  EXPECT_FALSE(parse_ok("a", json{{"command", "x"}, {"enabled", "0"}}).enabled);
}

TEST(ServerConfig_Parse, RejectsOtherEnabledValues) {
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"enabled", "yes"}}), "\"enabled\""));
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"enabled", 1}}), "\"enabled\""));
}

TEST(ServerConfig_Parse, ReconnectTrueKeepsTheDefaultBackoff) {
  ServerConfig c = parse_ok("a", json{{"command", "x"}, {"reconnect", true}});
  EXPECT_EQ(c.reconnect, ReconnectPolicy{});
}

TEST(ServerConfig_Parse, AcceptsATimeoutOfZeroMeaningNone) {
  EXPECT_EQ(parse_ok("a", json{{"command", "x"}, {"timeout", 0}}).timeout_ms, 0);
}

// --- wrong JSON types ---------------------------------------------------------------

TEST(ServerConfig_Parse, RejectsAnEntryThatIsNotAnObject) {
  EXPECT_EQ(parse_error("a", json::array()), "Server \"a\": entry must be a JSON object (got array)");
}

TEST(ServerConfig_Parse, RejectsArgsThatAreNotAnArrayOfStrings) {
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"args", "-y pkg"}}),
                       "\"args\" must be an array of strings"));
  const std::string m = parse_error("a", json{{"command", "x"}, {"args", {"--port", 8080}}});
  EXPECT_TRUE(contains(m, "\"args\" must be an array of strings (item 1 is number)")) << m;
}

TEST(ServerConfig_Parse, RejectsEnvThatIsNotAStringMap) {
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"env", json::array()}}),
                       "\"env\" must be an object with string values"));
  const std::string m = parse_error("a", json{{"command", "x"}, {"env", {{"DEBUG", true}}}});
  EXPECT_TRUE(contains(m, "\"DEBUG\" is boolean")) << m;
}

TEST(ServerConfig_Parse, RejectsHeadersThatAreNotAStringMap) {
  EXPECT_TRUE(contains(parse_error("a", json{{"url", "http://h"}, {"headers", {{"X", 1}}}}),
                       "\"headers\" must be an object with string values"));
}

TEST(ServerConfig_Parse, RejectsATimeoutThatIsNotANonNegativeNumber) {
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"timeout", -1}}),
                       "\"timeout\" must be a non-negative number of milliseconds (got -1)"));
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"timeout", "soon"}}), "\"timeout\""));
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"toolTimeout", json::array()}}),
                       "\"toolTimeout\""));
}

TEST(ServerConfig_Parse, RejectsAnUnknownType) {
  EXPECT_EQ(parse_error("a", json{{"type", "websocket"}, {"url", "ws://h"}}),
            "Server \"a\": unknown server type \"websocket\" (expected \"stdio\", \"http\" or \"sse\")");
}

TEST(ServerConfig_Parse, RejectsNonStringScalars) {
  EXPECT_TRUE(contains(parse_error("a", json{{"command", 5}}), "\"command\" must be a string (got number)"));
  EXPECT_TRUE(contains(parse_error("a", json{{"url", json::object()}}), "\"url\" must be a string"));
}

TEST(ServerConfig_Parse, ListsEveryProblemInOneMessage) {
  const std::string m =
      parse_error("a", json{{"command", "x"}, {"args", 1}, {"env", 2}, {"timeout", -3}});
  EXPECT_TRUE(contains(m, "Server \"a\": ")) << m;
  EXPECT_TRUE(contains(m, "\"args\"") && contains(m, "\"env\"") && contains(m, "\"timeout\"")) << m;
}

TEST(ServerConfig_Parse, RejectsMalformedAuth) {
  EXPECT_TRUE(contains(parse_error("a", json{{"url", "http://h"}, {"auth", {{"type", "basic"}}}}),
                       "in \"auth\": unknown type \"basic\""));
  EXPECT_TRUE(contains(parse_error("a", json{{"url", "http://h"}, {"auth", "token"}}), "\"auth\""));
}

TEST(ServerConfig_Parse, RejectsAHugelyNestedEntryWithoutRecursing) {
  json deep = json::array();
  for (int i = 0; i < 5000; ++i) deep = json::array({std::move(deep)});
  EXPECT_TRUE(contains(parse_error("a", json{{"command", "x"}, {"extra", std::move(deep)}}),
                       "nested more than"));
}

// --- validation ---------------------------------------------------------------------

TEST(ServerConfig_Validate, AcceptsAValidStdioAndHttpServer) {
  EXPECT_TRUE(validate_server_config(parse_ok("fs", json{{"command", "npx"}})).ok());
  EXPECT_TRUE(validate_server_config(parse_ok("web", json{{"url", "https://a.b/mcp"}})).ok());
}

TEST(ServerConfig_Validate, RejectsBothCommandAndUrl) {
  EXPECT_TRUE(contains(validation_error("a", json{{"command", "x"}, {"url", "http://h"}}),
                       "Server \"a\": both \"command\" and \"url\" are set"));
}

TEST(ServerConfig_Validate, RejectsStdioWithoutCommand) {
  EXPECT_EQ(validation_error("a", json{{"type", "stdio"}}),
            "Server \"a\": stdio server needs \"command\"");
}

TEST(ServerConfig_Validate, RejectsAnEntryWithNeitherCommandNorUrl) {
  EXPECT_EQ(validation_error("a", json::object()),
            "Server \"a\": needs \"command\" (stdio) or \"url\" (http/sse)");
}

TEST(ServerConfig_Validate, RejectsHttpAndSseWithoutUrl) {
  EXPECT_EQ(validation_error("a", json{{"type", "http"}}), "Server \"a\": http server needs \"url\"");
  EXPECT_EQ(validation_error("a", json{{"type", "sse"}}), "Server \"a\": sse server needs \"url\"");
}

TEST(ServerConfig_Validate, RejectsAUrlThatIsNotHttp) {
  const std::string m = validation_error("a", json{{"url", "ftp://files.example.com/x?key=secret"}});
  EXPECT_TRUE(contains(m, "\"url\" must be an absolute http:// or https:// URL")) << m;
  EXPECT_FALSE(contains(m, "secret")) << "the query (often an API key) must not be echoed: " << m;
}

TEST(ServerConfig_Validate, RejectsAUrlThatDoesNotParse) {
  for (const char* bad : {"example.com/mcp", "http://", "https:///path", "http://exa mple.com",
                          "http://host:99999/", "http://host:12ab/", "http://[::1/", "mailto:a@b"}) {
    EXPECT_FALSE(is_valid_http_url(bad)) << bad;
    EXPECT_FALSE(validate_server_config(parse_ok("a", json{{"type", "http"}, {"url", bad}})).ok())
        << bad;
  }
}

TEST(ServerConfig_Validate, RejectsAHostABrowserWouldReadDifferentlyAndSaysWhy) {
  // mcprt has no IDNA tables: a non-ASCII host would be read differently by fetch.
  const std::string m = validation_error("a", json{{"url", "https://b\xC3\xBC" "cher.example/mcp"}});
  EXPECT_TRUE(contains(m, "\"url\" must be an absolute http:// or https:// URL")) << m;
  EXPECT_TRUE(contains(m, "punycode")) << "the parser's reason is part of the message: " << m;
  // The issue's case parses as the browser reads it (host 127.0.0.1), so it is accepted.
  EXPECT_TRUE(is_valid_http_url("http://127.0.0.1\\@evil/"));
}

TEST(ServerConfig_Validate, AcceptsUsualHttpUrls) {
  for (const char* good : {"http://localhost:3000/mcp", "https://api.example.com/v1/mcp?x=1#f",
                           "HTTPS://Example.COM", "http://127.0.0.1:8080", "http://[::1]:9000/sse",
                           "https://user:pw@host.example/mcp", "http://my_host.local/"}) {
    EXPECT_TRUE(is_valid_http_url(good)) << good;
  }
}

TEST(ServerConfig_Validate, ChecksTheServerName) {
  EXPECT_TRUE(validate_server_name("my-server_1.2:x").ok());
  Status empty = validate_server_name("");
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(contains(empty.error().message, "name cannot be empty"));
  Status bad = validate_server_name("my server");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(bad.error().message, "Server \"my server\": name can only contain"));
  EXPECT_TRUE(validate_server_name(std::string(100, 'a')).ok());
  Status long_name = validate_server_name(std::string(101, 'a'));
  ASSERT_FALSE(long_name.ok());
  EXPECT_TRUE(contains(long_name.error().message, "too long (101 characters, max 100)"));
}

TEST(ServerConfig_Validate, ReportsANameProblemThroughValidateServerConfig) {
  EXPECT_TRUE(contains(validation_error("bad/name", json{{"command", "x"}}),
                       "Server \"bad/name\": name can only contain"));
}

TEST(ServerConfig_Validate, RejectsStdioWhenStdioIsNotAvailable) {
  ValidationOptions web;
  web.stdio_available = false;
  const std::string m = validation_error("fs", json{{"command", "npx"}}, web);
  EXPECT_TRUE(contains(m, "Server \"fs\": stdio servers are not available in the browser")) << m;
  EXPECT_TRUE(validate_server_config(parse_ok("web", json{{"url", "https://a.b/mcp"}}), web).ok());
}

TEST(ServerConfig_Validate, JoinsSeveralProblems) {
  const std::string m = validation_error("bad name", json{{"type", "http"}});
  EXPECT_EQ(m,
            "Server \"bad name\": name can only contain letters, digits, '_', '.', ':' and '-'; "
            "http server needs \"url\"");
}

// --- files --------------------------------------------------------------------------

TEST(McpServersJson, ParsesEveryServerOfAFile) {
  ParseOptions o;
  o.source = {"claude", "Claude Code", "", SourceInfo::Level::project};
  ParsedConfig p = parse_mcp_servers_json(R"({
    "mcpServers": {
      "fs": {"command": "npx", "args": ["-y", "fs"]},
      "web": {"type": "http", "url": "https://a.b/mcp"}
    }
  })", "/p/.mcp.json", o);
  EXPECT_TRUE(p.errors.empty());
  EXPECT_TRUE(p.found_servers_key);
  ASSERT_EQ(p.servers.size(), 2u);
  EXPECT_EQ(p.servers[0].name, "fs");
  EXPECT_EQ(p.servers[1].name, "web");
  EXPECT_EQ(p.servers[1].source,
            (SourceInfo{"claude", "Claude Code", "/p/.mcp.json", SourceInfo::Level::project}));
}

TEST(McpServersJson, ReportsInvalidJsonOnceWithLineAndColumn) {
  const std::string text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n";
  ParsedConfig p = parse_mcp_servers_json(text, "/x/.mcp.json");
  EXPECT_TRUE(p.servers.empty());
  ASSERT_EQ(p.errors.size(), 1u);
  const ConfigError& e = p.errors[0];
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 26);  // the '}' after the trailing comma
  EXPECT_TRUE(e.server.empty());
  EXPECT_EQ(e.describe().rfind("/x/.mcp.json:3:26: invalid JSON: ", 0), 0u) << e.describe();
  EXPECT_TRUE(contains(e.message, "unexpected '}'")) << e.message;
}

TEST(McpServersJson, ReportsTheLineAndColumnOfATruncatedFile) {
  ParsedConfig p = parse_mcp_servers_json("{\"mcpServers\": {\n\"a\": {", "/f.json");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 2);
  EXPECT_EQ(p.errors[0].column, 7);
  EXPECT_TRUE(contains(p.errors[0].message, "end of input")) << p.errors[0].message;
}

TEST(McpServersJson, KeepsTheInvalidJsonMessageValidUtf8) {
  ParsedConfig p = parse_mcp_servers_json("{\"mcpServers\": \"\xFF\"}", "/f.json");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NO_THROW((void)json(p.errors[0].message).dump());
}

TEST(McpServersJson, KeepsAValidEntryNextToAnInvalidOne) {
  ParsedConfig p = parse_mcp_servers_json(R"({"mcpServers": {
      "bad": {"command": "x", "args": "not-an-array"},
      "good": {"command": "y"}
    }})", "/x/.mcp.json");
  ASSERT_EQ(p.servers.size(), 1u);
  EXPECT_EQ(p.servers[0].name, "good");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].server, "bad");
  EXPECT_EQ(p.errors[0].describe(),
            "/x/.mcp.json: Server \"bad\": \"args\" must be an array of strings (got string)");
}

TEST(McpServersJson, ValidatesEntriesWhenAsked) {
  ParseOptions o;
  o.validate = true;
  ParsedConfig p = parse_mcp_servers_json(R"({"mcpServers": {
      "foo": {"type": "stdio"},
      "ok": {"command": "y"}
    }})", "/x/.mcp.json", o);
  ASSERT_EQ(p.servers.size(), 1u);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].describe(), "/x/.mcp.json: Server \"foo\": stdio server needs \"command\"");
}

TEST(McpServersJson, DoesNotValidateUnlessAsked) {
  // Substitution may still turn "${URL}" into a real URL, so parsing alone accepts it.
  ParsedConfig p = parse_mcp_servers_json(R"({"mcpServers": {"a": {"url": "${URL}"}}})", "/f");
  EXPECT_TRUE(p.errors.empty());
  EXPECT_EQ(p.servers.size(), 1u);
}

TEST(McpServersJson, ReadsVsCodeTopLevelServers) {
  ParseOptions o;
  o.servers_key = "servers";
  o.allow_comments = true;
  ParsedConfig p = parse_mcp_servers_json(R"({
    // VS Code's mcp.json is JSONC
    "servers": {"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}}
  })", "/p/.vscode/mcp.json", o);
  EXPECT_TRUE(p.errors.empty()) << (p.errors.empty() ? "" : p.errors[0].describe());
  ASSERT_EQ(p.servers.size(), 1u);
  EXPECT_EQ(p.servers[0].type, TransportType::http);
}

TEST(McpServersJson, RejectsCommentsUnlessAllowed) {
  ParsedConfig p = parse_mcp_servers_json("{ // hi\n}", "/f.json");
  EXPECT_EQ(p.errors.size(), 1u);
}

TEST(McpServersJson, WarnsAboutVsCodeInputVariables) {
  ParseOptions o;
  o.servers_key = "servers";
  ParsedConfig p = parse_mcp_servers_json(
      R"({"servers": {"gh": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${input:token}"}}}})",
      "/p/.vscode/mcp.json", o);
  ASSERT_EQ(p.servers.size(), 1u);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0].server, "gh");
  EXPECT_TRUE(contains(p.warnings[0].message, "${input:...} variables are not supported"));
}

TEST(McpServersJson, TreatsAFileWithoutTheServersKeyAsEmpty) {
  ParsedConfig p = parse_mcp_servers_json(R"({"theme": "dark"})", "/f.json");
  EXPECT_TRUE(p.errors.empty());
  EXPECT_TRUE(p.servers.empty());
  EXPECT_FALSE(p.found_servers_key);
}

TEST(McpServersJson, TreatsAnEmptyFileAsEmpty) {
  ParsedConfig p = parse_mcp_servers_json(" \n", "/f.json");
  EXPECT_TRUE(p.errors.empty());
  EXPECT_TRUE(p.servers.empty());
}

TEST(McpServersJson, RejectsANonObjectDocumentOrServersMap) {
  ParsedConfig top = parse_mcp_servers_json("[1,2]", "/f.json");
  ASSERT_EQ(top.errors.size(), 1u);
  EXPECT_EQ(top.errors[0].describe(), "/f.json: expected a JSON object at the top level (got array)");
  ParsedConfig map = parse_mcp_servers_json(R"({"mcpServers": []})", "/f.json");
  ASSERT_EQ(map.errors.size(), 1u);
  EXPECT_EQ(map.errors[0].describe(), "/f.json: \"mcpServers\" must be an object (got array)");
}

TEST(McpServersJson, ReadsTheDisabledAndEnabledServerLists) {
  ParsedConfig p = parse_mcp_servers_json(
      R"({"mcpServers": {}, "disabledServers": ["a", "b"], "enabledServers": ["c"]})", "/f.json");
  EXPECT_EQ(p.disabled_servers, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.enabled_servers, (std::vector<std::string>{"c"}));
  ParsedConfig bad = parse_mcp_servers_json(R"({"disabledServers": "a"})", "/f.json");
  EXPECT_EQ(bad.errors.size(), 1u);
}

TEST(ConfigError, DescribesWithAndWithoutPosition) {
  EXPECT_EQ((ConfigError{"/x/.mcp.json", "", "invalid JSON: oops", 3, 7}).describe(),
            "/x/.mcp.json:3:7: invalid JSON: oops");
  EXPECT_EQ((ConfigError{"/x/.mcp.json", "foo", "Server \"foo\": stdio server needs \"command\""})
                .describe(),
            "/x/.mcp.json: Server \"foo\": stdio server needs \"command\"");
  EXPECT_EQ((ConfigError{"", "foo", "Server \"foo\": x"}).describe(), "Server \"foo\": x");
  Error e = (ConfigError{"/f", "", "bad", 1, 2}).to_error();
  EXPECT_EQ(e.code, ErrorCode::invalid_config);
  EXPECT_EQ(e.message, "/f:1:2: bad");
}

// --- hash ---------------------------------------------------------------------------

TEST(ConfigHash, IsPinnedForAKnownEntry) {
  // The cache on disk and in IndexedDB depends on this value never drifting between
  // builds and platforms (this same literal is checked natively and under wasm).
  // FNV-1a 64 of {"args":["-y","x"],"command":"npx"}.
  ServerConfig c = parse_ok("a", json::parse(R"({"command": "npx", "args": ["-y", "x"]})"));
  EXPECT_EQ(canonical_json(c.raw), R"({"args":["-y","x"],"command":"npx"})");
  EXPECT_EQ(config_hash(c), "8a8b37862761c2db");
}

TEST(ConfigHash, IsPinnedForNumbersAndNonAsciiText) {
  ServerConfig c;
  c.raw = json::parse(R"({"x": [1, -2, true, null], "timeout": 1500.5, "env": {"N": "caf\u00e9"}})");
  EXPECT_EQ(canonical_json(c.raw), "{\"env\":{\"N\":\"caf\xC3\xA9\"},\"timeout\":1500.5,\"x\":[1,-2,true,null]}");
  EXPECT_EQ(config_hash(c), "596054208255400b");
}

TEST(ConfigHash, DoesNotDependOnKeyOrder) {
  ParsedConfig a = parse_mcp_servers_json(
      R"({"mcpServers":{"s":{"command":"npx","env":{"B":"2","A":"1"},"args":["x"]}}})", "/a");
  ParsedConfig b = parse_mcp_servers_json(
      R"({"mcpServers":{"s":{"args":["x"],"env":{"A":"1","B":"2"},  "command":"npx"}}})", "/b");
  ASSERT_EQ(a.servers.size(), 1u);
  ASSERT_EQ(b.servers.size(), 1u);
  EXPECT_EQ(config_hash(a.servers[0]), config_hash(b.servers[0]));
}

TEST(ConfigHash, ChangesWhenTheConfigChanges) {
  ServerConfig a = parse_ok("s", json{{"command", "npx"}, {"args", {"x"}}});
  ServerConfig b = parse_ok("s", json{{"command", "npx"}, {"args", {"y"}}});
  ServerConfig c = parse_ok("s", json{{"command", "npx"}, {"args", {"x"}}, {"enabled", true}});
  EXPECT_NE(config_hash(a), config_hash(b));
  EXPECT_NE(config_hash(a), config_hash(c));
}

TEST(ConfigHash, DoesNotThrowOnInvalidUtf8) {
  ServerConfig c;
  c.raw = json{{"command", std::string("a\xFF")}};
  EXPECT_EQ(config_hash(c).size(), 16u);
}

}  // namespace
}  // namespace config_test
}  // namespace mcprt

namespace mcprt {
namespace config_test {  // this file's own names in a unity batch
namespace {

// --- protocol and roots (SPEC §14, §3.4) -------------------------------------------------

TEST(ServerConfig_Protocol, ReadsEveryKnownWire) {
  for (const char* p : {"auto", "legacy", "2026-07-28", "2025-11-25", "2024-11-05"}) {
    EXPECT_EQ(parse_ok("s", {{"command", "x"}, {"protocol", p}}).protocol, p);
  }
  EXPECT_EQ(parse_ok("s", {{"command", "x"}}).protocol, "") << "unset: the host's default";
}

TEST(ServerConfig_Protocol, AnUnknownWireIsAnErrorNamingTheServerAndTheChoices) {
  const std::string e = parse_error("s", {{"command", "x"}, {"protocol", "2027-01-01"}});
  EXPECT_TRUE(contains(e, "Server \"s\"")) << e;
  EXPECT_TRUE(contains(e, "unknown \"protocol\" \"2027-01-01\"")) << e;
  EXPECT_TRUE(contains(e, "\"2026-07-28\"")) << e;
}

TEST(ServerConfig_Roots, FalseMeansNotDeclared) {
  ServerConfig c = parse_ok("s", {{"command", "x"}, {"roots", false}});
  ASSERT_TRUE(c.roots);
  EXPECT_FALSE(c.roots->declared);
  EXPECT_FALSE(parse_ok("s", {{"command", "x"}}).roots) << "unset: the host's roots";
}

TEST(ServerConfig_Roots, RelativeDirectoriesAreTakenFromTheConfigFilesDirectory) {
  ParseOptions po;
  po.source.path = "/home/me/proj/.mcp.json";
  Result<ServerConfig> r =
      parse_server_entry("s", {{"command", "x"}, {"roots", {"/abs/dir", "docs"}}}, po);
  ASSERT_TRUE(r.ok()) << r;
  ASSERT_TRUE(r->roots);
  EXPECT_TRUE(r->roots->declared);
  EXPECT_EQ(r->roots->directories, (std::vector<std::string>{"/abs/dir", "/home/me/proj/docs"}));
}

TEST(ServerConfig_Roots, BadValuesAreErrors) {
  EXPECT_TRUE(contains(parse_error("s", {{"command", "x"}, {"roots", true}}), "\"roots\" must be false"));
  EXPECT_TRUE(contains(parse_error("s", {{"command", "x"}, {"roots", "dir"}}), "\"roots\" must be false"));
  EXPECT_TRUE(contains(parse_error("s", {{"command", "x"}, {"roots", {1}}}), "item 0"));
  EXPECT_TRUE(contains(parse_error("s", {{"command", "x"}, {"roots", {"rel"}}}), "absolute path"))
      << "no file to be relative to";
}

}  // namespace
}  // namespace config_test
}  // namespace mcprt
