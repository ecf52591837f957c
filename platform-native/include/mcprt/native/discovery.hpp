#pragma once
// Native discovery context: where the built-in providers look on this machine.
//
//   auto ctx = mcprt::native::make_native_discovery_context(std::filesystem::current_path());
//   mcprt::DiscoveryResult r = mcprt::discover_servers(ctx);
//
// Fills:
//  [x] home from $HOME (else the passwd entry); xdg_config_home from $XDG_CONFIG_HOME when
//      it is absolute (the XDG rule), else empty (= <home>/.config)
//  [x] env: getenv (read when discovery runs, not captured at creation)
//  [x] fs: a NativeFileSystem (stateless; the overload without `fs` uses a process-wide
//      instance, which is safe because it holds no state)
//  [x] parse_toml: toml++ (errors carry line and column)
//  [x] app_name / app_display_name: the host's app name (`.acme/mcp.json`)
//  [x] real_path: std::filesystem::canonical (symlinks resolved), for the folder project
//      trust is recorded under; a path that does not exist stays absolute and normalised

#include <string>
#include <string_view>

#include "mcprt/discovery.hpp"

namespace mcprt::native {

DiscoveryContext make_native_discovery_context(std::string cwd, std::string app_name = "mcprt");
DiscoveryContext make_native_discovery_context(std::string cwd, FileSystem& fs,
                                               std::string app_name = "mcprt");

// The real path of `path` (symlinks resolved); a path that cannot be resolved is made
// absolute and normalised; "" only when even that fails. No trailing '/'.
std::string real_path(const std::string& path);

// getenv as an EnvLookup (unset → nullopt; set but empty → "").
EnvLookup native_env_lookup();

// toml++ → JSON (tables → objects, arrays → arrays, dates/times → their TOML text, a
// non-finite float → null). Errors: ErrorCode::invalid_config, message = the parser's
// description, data = {"line", "column"}.
Result<json> parse_toml(std::string_view text, std::string_view path);

}  // namespace mcprt::native
