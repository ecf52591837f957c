// Discovery over every built-in provider's files: mcprt's own (project and user),
// Claude Code (~/.claude.json with its per-project blocks, .mcp.json), Gemini CLI
// (JSONC, httpUrl/url mapping), Codex (TOML through toml++), Cursor, Windsurf (serverUrl),
// VS Code (JSONC, `servers`, ${workspaceFolder}) and mcp.json, in a MemoryFileSystem, with
// a fuzzed environment, then project trust, substitution, claim filters, validation and
// dedup — discover_servers as a host runs it.
//
// Input: records separated by "\n----\n"; each record's first line says what the rest is:
//   a slot name (below)   that file's content
//   unreadable <slot>     the file exists but cannot be read
//   env                   NAME=VALUE lines
//   options               words: trust-all, no-project, no-exa, no-stdio
// An unknown first line picks a slot by its hash, so mutated names still land in a file.
//
// Invariants:
//  - discovery is deterministic (a second run gives the same result);
//  - configs are sorted by unique name, enabled, valid for the options, and trusted or
//    not project-level; a pending entry is never in configs;
//  - with no user-level file and trust-all off (a cloned repository on its own), nothing
//    reads the environment and nothing is returned to connect;
//  - every error and warning, and what a pending entry would run, is valid UTF-8 text.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "mcprt/discovery.hpp"
#include "mcprt/native/discovery.hpp"
#include "mcprt/testing/memory_file_system.hpp"

namespace {

using mcprt::json;

struct Slot {
  const char* name;
  const char* path;
  bool user_level;  // a file under the home directory (its entries may be user level)
};

constexpr Slot kSlots[] = {
    {"mcprt-project", "/repo/.mcprt/mcp.json", false},
    {"mcprt-user", "/home/u/.config/mcprt/mcp.json", true},
    {"claude-user", "/home/u/.claude.json", true},
    {"claude-project", "/repo/.mcp.json", false},
    {"gemini-project", "/repo/.gemini/settings.json", false},
    {"gemini-user", "/home/u/.gemini/settings.json", true},
    {"codex-project", "/repo/.codex/config.toml", false},
    {"codex-user", "/home/u/.codex/config.toml", true},
    {"cursor-project", "/repo/.cursor/mcp.json", false},
    {"cursor-user", "/home/u/.cursor/mcp.json", true},
    {"windsurf", "/home/u/.codeium/windsurf/mcp_config.json", true},
    {"vscode", "/repo/.vscode/mcp.json", false},
    {"mcp-json", "/repo/mcp.json", false},
};
constexpr std::size_t kSlotCount = sizeof(kSlots) / sizeof(kSlots[0]);

const Slot& slot_for(std::string_view name) {
  for (const Slot& s : kSlots) {
    if (name == s.name) return s;
  }
  return kSlots[mcprt::fuzz::small_hash(name) % kSlotCount];
}

bool same_result(const mcprt::DiscoveryResult& a, const mcprt::DiscoveryResult& b) {
  if (a.configs != b.configs || a.errors != b.errors || a.warnings != b.warnings ||
      a.disabled != b.disabled || a.claimed != b.claimed || a.exa_api_keys != b.exa_api_keys ||
      a.pending.size() != b.pending.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.pending.size(); ++i) {
    if (a.pending[i].name != b.pending[i].name || a.pending[i].hash != b.pending[i].hash) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  mcprt::testing::MemoryFileSystem fs;
  std::map<std::string, std::string> env;
  bool trust_all = false, no_project = false, no_exa = false, no_stdio = false;
  bool any_user_file = false;

  for (std::string_view rec : mcprt::fuzz::split_records(mcprt::fuzz::as_text(bytes, size), 32)) {
    std::string_view body = rec;
    const std::string_view head = mcprt::fuzz::take_line(body);
    if (head == "env") {
      while (!body.empty()) {
        std::string_view line = mcprt::fuzz::take_line(body);
        const std::size_t eq = line.find('=');
        if (eq == std::string_view::npos) continue;
        env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
      }
    } else if (head == "options") {
      trust_all = body.find("trust-all") != std::string_view::npos;
      no_project = body.find("no-project") != std::string_view::npos;
      no_exa = body.find("no-exa") != std::string_view::npos;
      no_stdio = body.find("no-stdio") != std::string_view::npos;
    } else if (head.rfind("unreadable ", 0) == 0) {
      const Slot& s = slot_for(head.substr(11));
      fs.fail(s.path, "permission denied");
      any_user_file = any_user_file || s.user_level;
    } else {
      const Slot& s = slot_for(head);
      fs.add(s.path, std::string(body));
      any_user_file = any_user_file || s.user_level;
    }
  }

  std::size_t env_reads = 0;
  mcprt::DiscoveryContext ctx;
  ctx.cwd = "/repo";
  ctx.home = "/home/u";
  ctx.fs = &fs;
  ctx.env = [&](std::string_view name) -> std::optional<std::string> {
    ++env_reads;
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  ctx.parse_toml = mcprt::native::parse_toml;
  mcprt::DiscoveryOptions options;
  options.trust_all_projects = trust_all;
  options.enable_project_config = !no_project;
  options.filter_exa = !no_exa;
  options.stdio_available = !no_stdio;

  const mcprt::DiscoveryResult r = mcprt::discover_servers(ctx, options);
  const std::size_t reads_first_run = env_reads;
  FUZZ_CHECK(same_result(r, mcprt::discover_servers(ctx, options)));

  mcprt::ValidationOptions validation;
  validation.stdio_available = !no_stdio;
  std::string previous;
  for (const mcprt::ServerConfig& c : r.configs) {
    FUZZ_CHECK(c.name > previous);
    previous = c.name;
    FUZZ_CHECK(c.enabled);
    FUZZ_CHECK(mcprt::validate_server_config(c, validation).ok());
    FUZZ_CHECK(mcprt::config_hash(c).size() == 16);
    FUZZ_CHECK(r.sources.count(c.name) == 1);
    if (no_project) FUZZ_CHECK(c.source.level != mcprt::SourceInfo::Level::project);
    if (c.source.level == mcprt::SourceInfo::Level::project) {
      FUZZ_CHECK(mcprt::trust_state(r, c.name) == mcprt::TrustState::trusted);
    }
    FUZZ_CHECK(mcprt::find_pending(r, c.name) == nullptr);
  }
  for (const mcprt::ProjectServer& p : r.pending) {
    FUZZ_CHECK(!trust_all);
    FUZZ_CHECK(mcprt::trust_state(r, p.name) == mcprt::TrustState::pending);
    mcprt::fuzz::check_text(mcprt::describe_launch(p.config));
    for (const std::string& cmd : mcprt::connect_time_commands(p.config)) mcprt::fuzz::check_text(cmd);
    (void)mcprt::referenced_variables(p.config);
  }
  // A repository on its own: nothing it says reads the environment or gets connected.
  if (!any_user_file && !trust_all) {
    FUZZ_CHECK(reads_first_run == 0);
    FUZZ_CHECK(r.configs.empty());
  }
  for (const mcprt::ConfigError& e : r.errors) mcprt::fuzz::check_text(e.describe());
  for (const mcprt::ConfigError& w : r.warnings) mcprt::fuzz::check_text(w.describe());
  return 0;
}
