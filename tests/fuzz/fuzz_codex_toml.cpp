// The Codex path: toml++ (platform-native's parse_toml, native_toml.cpp) turns
// ~/.codex/config.toml into JSON, and the Codex provider maps `[mcp_servers.<name>]`
// tables (env_vars, http_headers, env_http_headers, bearer_token_env_var,
// enabled_tools/disabled_tools, startup_timeout_sec/_ms, tool_timeout_sec) onto server
// configs. The input is the TOML file; it is discovered both as the user's file and, with
// trust-all, as a project's .codex/config.toml.
//
// Invariants:
//  - parse_toml never throws; a document is a JSON object a strict dump accepts (valid
//    UTF-8); an error has a message and a 1-based line and column;
//  - every error and warning discovery reports is valid UTF-8 text;
//  - every config comes from the Codex provider, is valid, and keeps the table as written
//    in `raw`.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "fuzz_support.hpp"
#include "mcprt/discovery.hpp"
#include "mcprt/native/discovery.hpp"
#include "mcprt/testing/env_map.hpp"
#include "mcprt/testing/memory_file_system.hpp"

namespace {

using mcprt::json;

void check_discovery(const mcprt::DiscoveryResult& r, const json& doc) {
  for (const mcprt::ServerConfig& c : r.configs) {
    FUZZ_CHECK(c.source.provider == "codex");
    FUZZ_CHECK(mcprt::validate_server_config(c).ok());
    FUZZ_CHECK(doc.is_object() && doc.contains("mcp_servers"));
    const json& table = doc.at("mcp_servers");
    FUZZ_CHECK(table.contains(c.name) && table.at(c.name) == c.raw);
  }
  for (const mcprt::ConfigError& e : r.errors) mcprt::fuzz::check_text(e.describe());
  for (const mcprt::ConfigError& w : r.warnings) mcprt::fuzz::check_text(w.describe());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text = mcprt::fuzz::as_text(bytes, size);

  mcprt::Result<json> doc = mcprt::native::parse_toml(text, "/home/u/.codex/config.toml");
  if (doc.ok()) {
    FUZZ_CHECK(doc->is_object());
    (void)doc->dump();  // strict: throws (and aborts the run) on invalid UTF-8
  } else {
    FUZZ_CHECK(!doc.error().message.empty());
    mcprt::fuzz::check_text(doc.error().message);
    const json& data = doc.error().data;
    FUZZ_CHECK(data.is_object() && data.at("line").is_number_integer() && data.at("column").is_number_integer());
    FUZZ_CHECK(data.at("line").get<int>() >= 1 && data.at("column").get<int>() >= 1);
  }
  const json parsed = doc.ok() ? *doc : json();

  static const std::map<std::string, std::string> env = {
      {"GITHUB_TOKEN", "ghp_fuzz"}, {"API_KEY", "k-123"}, {"EMPTY", ""}, {"HOME", "/home/u"}};
  for (const char* path : {"/home/u/.codex/config.toml", "/repo/.codex/config.toml"}) {
    mcprt::testing::MemoryFileSystem fs;
    fs.add(path, std::string(text));
    mcprt::DiscoveryContext ctx;
    ctx.cwd = "/repo";
    ctx.home = "/home/u";
    ctx.fs = &fs;
    ctx.env = mcprt::testing::env_of(env);
    ctx.parse_toml = mcprt::native::parse_toml;
    mcprt::DiscoveryOptions options;
    options.trust_all_projects = true;
    check_discovery(mcprt::discover_servers(ctx, options), parsed);
  }
  return 0;
}
