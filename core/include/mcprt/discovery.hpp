#pragma once
// Discovery (SPEC §2): capability-source providers → parse → filter (project level,
// enabled, disabledServers/enabledServers) → project trust (§17) → substitute ${…} →
// claim filters such as Exa → validate per entry → dedup by name and by endpoint. Plus the
// connect-time substitution (`!command` and env-name values) that runs just before a
// connection.
//
// Project trust: an entry from a project-level file (SourceInfo::Level::project) whose
// folder and definition hash the user file's `trustedProjects` does not record is
// *pending*: it claims its name and is listed in DiscoveryResult::pending as written, but
// it is never substituted, claim-filtered, validated or returned in `configs` (so nothing
// connects it, and nothing about it reads the environment).
//
//   DiscoveryContext ctx{.cwd = "/repo", .home = "/home/u", .fs = &files, .env = getenv_fn};
//   DiscoveryResult r = discover_servers(ctx, DiscoveryOptions{});
//   for (auto& cfg : r.configs) ...      // valid, enabled, deduplicated, sorted by name
//   for (auto& e : r.errors) log(e.describe());
//
// Nothing here throws. discover_servers is synchronous (it reads a few small files through
// the FileSystem seam); resolve_connect_time is asynchronous (it may run shell commands).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/config.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/file_system.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/platform/shell_runner.hpp"
#include "mcprt/result.hpp"

namespace mcprt {

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Parses a TOML document (Codex's config.toml) into JSON: tables → objects, arrays →
// arrays, dates and times → their TOML text. Core has no TOML parser (std + nlohmann_json
// only), so the platform supplies one. On a syntax error the Error's message describes
// the problem (without the path) and its `data` holds {"line", "column"} (1-based).
using TomlParser = std::function<Result<json>(std::string_view text, std::string_view path)>;

// Where discovery looks. The platform fills it (native: the process environment and the
// real file system); tests use an in-memory tree and a map.
struct DiscoveryContext {
  std::string cwd;              // project directory (absolute)
  std::string home;             // user home; empty = no user-level files
  std::string xdg_config_home;  // empty = <home>/.config
  FileSystem* fs = nullptr;     // null = no file-based providers can read anything
  EnvLookup env;                // ${VAR} lookups; null = nothing is set
  // The host's app name: the native provider reads `.<app>/mcp.json` and
  // `$XDG_CONFIG_HOME/<app>/mcp.json`, and shows `app_display_name`.
  std::string app_name = "mcprt";
  std::string app_display_name = "mcprt";
  // Codex's TOML files; null = each Codex file that exists is a per-file error "TOML is
  // not supported on this platform".
  TomlParser parse_toml;
  // The real path of a directory (symlinks resolved), for the folder project trust is
  // recorded under. Null (or an empty answer) = the path as given.
  std::function<std::string(const std::string& path)> real_path;
};

// The native provider's files (SPEC §2.1): `<cwd>/.<app>/mcp.json` (project level) and
// `$XDG_CONFIG_HOME/<app>/mcp.json` (level native; it also holds the disabledServers /
// enabledServers lists that `/mcp enable|disable` rewrite). Empty when cwd / home are
// unknown.
std::string native_project_config_path(const DiscoveryContext& ctx);
std::string native_user_config_path(const DiscoveryContext& ctx);

// One capability source (SPEC §2.1). Built-in providers read files; a host adds its own
// (an in-memory map, a JS object in the browser) with make_programmatic_provider.
class ConfigProvider {
 public:
  virtual ~ConfigProvider() = default;
  virtual std::string id() const = 0;
  virtual std::string display_name() const = 0;
  virtual int priority() const = 0;  // higher wins a name
  // Every file (or programmatic source) this provider reads, project level first. A file
  // that does not exist contributes nothing; a file that does not parse contributes one
  // error with line and column. Each ServerConfig carries its SourceInfo.
  virtual std::vector<ParsedConfig> load(const DiscoveryContext& ctx) const = 0;
};

// The built-in native providers of SPEC §2.1, highest priority first: native (app name),
// claude, gemini, codex, cursor, windsurf, vscode, mcp-json.
//
// Levels: project files are SourceInfo::Level::project (dropped when
// enable_project_config is false, including ~/.claude.json's `projects[<cwd>]` block);
// the native provider's user file is Level::native; every other user file Level::user.
// Within a provider the order is project files first (Claude: `projects[<cwd>]`, then
// `.mcp.json`), then user files. Only the disabledServers / enabledServers lists (and
// trustedProjects) of Level::native files count: the native user file, or the file a host
// reads in its place (NativeHost's config_file, the CLI's --config). Format mapping per
// provider: Gemini `httpUrl` → http,
// `url` without `type` → sse; Windsurf `serverUrl` → url; VS Code top-level `servers`
// (JSONC, `${workspaceFolder}` → cwd); Codex `[mcp_servers.<name>]` (env_vars read from
// ctx.env at discovery time, http_headers, env_http_headers and bearer_token_env_var →
// headers with `${VAR}` values, enabled_tools/disabled_tools → include/exclude,
// startup_timeout_sec/_ms → timeout, tool_timeout_sec → toolTimeout). For mapped formats
// ServerConfig::raw stays the entry as written in the file.
std::vector<std::shared_ptr<const ConfigProvider>> builtin_providers();

// A provider over an in-memory `{"mcpServers": {...}}` document (or the bare server map).
std::shared_ptr<const ConfigProvider> make_programmatic_provider(
    std::string id, std::string display_name, int priority, SourceInfo::Level level,
    json document, std::string label = "");

// A claim filter (SPEC §2.3, Exa generalised): looks at a server before dedup; may pull
// API keys out of it and may drop it (the host then serves that capability natively).
struct ClaimDecision {
  bool claimed = false;   // this filter recognises the server
  bool drop = false;      // remove it from the configs (it still claims its name)
  std::vector<std::string> api_keys;
};
struct ClaimFilter {
  std::string id;  // "exa"
  std::function<ClaimDecision(const ServerConfig&)> inspect;
};
// The built-in Exa filter: name "exa" (any case), a url on mcp.exa.ai, or a stdio arg that
// mentions it. Keys from `exaApiKey=` (url query or arg) and env.EXA_API_KEY. Dropped
// unless it asks for tools beyond web_search_exa (`tools=` in url or args).
ClaimFilter exa_claim_filter();

struct DiscoveryOptions {
  bool enable_project_config = true;  // false drops project-level entries before dedup
  // Every project-level entry counts as trusted (sandboxes, CI images that are the
  // project). Off by default: project entries need the user file's `trustedProjects`.
  bool trust_all_projects = false;
  // Trust for this discovery on top of the user file's records (a host's "trust for this
  // run only" answer). Same shape: folder → name → hash.
  TrustStore extra_trust;
  bool filter_exa = true;             // run exa_claim_filter()
  std::vector<ClaimFilter> claim_filters;  // the host's own, run after Exa
  bool stdio_available = true;        // false in the browser (stdio = validation error)
  bool use_builtin_providers = true;
  std::vector<std::string> removed_providers;  // built-in ids the host switches off
  std::vector<std::shared_ptr<const ConfigProvider>> extra_providers;
};

// A server dropped because an earlier (higher-priority) entry has the same name or the
// same endpoint (transport + command/args/env/cwd, or url/headers).
struct ShadowedServer {
  std::string name;
  SourceInfo source;
  std::string shadowed_by;  // the winning server's name
  std::string reason;       // "same name" | "same endpoint"
  SourceInfo shadowed_by_source;  // where the winning entry came from
  // The losing entry as written (not substituted); none when it was an entry that did not
  // parse (its file's error names it).
  std::optional<ServerConfig> config;
};

// A project-level server as trust sees it: the folder it belongs to, the hash of its
// definition as written, and the definition itself (not substituted, not validated: what
// it would run, exactly as the file says).
struct ProjectServer {
  std::string name;
  std::string folder;  // project_trust_folder(ctx)
  std::string hash;    // config_hash(config)
  ServerConfig config; // as written; config.source says which file
};

enum class TrustState {
  implicit,  // not a project entry (user, native or programmatic level): needs no trust
  trusted,   // a project entry the user trusted (or trust_all_projects)
  pending,   // a project entry not trusted (yet): listed, never connected
};
const char* to_string(TrustState state);  // "implicit", "trusted", "pending"

struct DiscoveryResult {
  std::vector<ServerConfig> configs;        // valid, enabled, trusted, deduplicated; sorted by name
  std::map<std::string, SourceInfo> sources;  // every claimed name, also disabled/invalid
  std::vector<ConfigError> errors;          // per file (line/column) and per server
  std::vector<ConfigError> warnings;        // unset ${VAR}, unsupported ${input:…}, ...
  std::vector<ShadowedServer> shadowed;
  std::vector<std::string> disabled;        // names skipped as disabled (enabled:false, lists)
  std::vector<std::string> exa_api_keys;    // keys extracted by claim filters, deduplicated
  std::vector<std::string> claimed;         // names dropped by a claim filter (e.g. Exa)
  std::vector<ProjectServer> pending;       // untrusted project entries, sorted by name
  // Every name an entry claimed (accepted, pending, disabled, claimed by a filter), with
  // the entry as it was before substitution: what listings show as "would run".
  std::map<std::string, ServerConfig> as_written;
  std::string project_folder;               // project_trust_folder(ctx)
  TrustStore trust;                         // the user file's records (+ extra_trust)
};

DiscoveryResult discover_servers(const DiscoveryContext& ctx, const DiscoveryOptions& options = {});

// --- project trust (SPEC §17) ----------------------------------------------------------

// The folder project trust is recorded under: ctx.real_path(ctx.cwd) when it answers,
// else ctx.cwd; without a trailing '/'. Empty when cwd is.
std::string project_trust_folder(const DiscoveryContext& ctx);

// The trust state of a name `result` knows (implicit for names it does not know).
TrustState trust_state(const DiscoveryResult& result, const std::string& name);
// The pending entry of that name, or null.
const ProjectServer* find_pending(const DiscoveryResult& result, const std::string& name);
// The entries of that name that lost to an earlier one (same name, or the loser's own name
// when it had the same endpoint as another server), in discovery order. Such a name is
// not connected (unless another entry of it won).
std::vector<const ShadowedServer*> find_shadowed(const DiscoveryResult& result, const std::string& name);
// "shadowed by \"demo\" from Claude Code (user) /home/u/.claude.json (same name)": which
// entry won and where it came from.
std::string describe_shadowing(const ShadowedServer& shadowed);

// Every project-level entry of `result` that claimed a name (pending or trusted, enabled
// or not), sorted by name: what `mcprt trust` records.
std::vector<ProjectServer> project_servers(const DiscoveryResult& result);

// What an entry would run, as written: stdio → its command and args, shell-quoted where
// needed; http/sse → its URL (through redact_url). Never substitutes anything.
std::string describe_launch(const ServerConfig& config);
// The connect-time shell commands an entry would run (`!` values of env unless
// envPolicy literal, of headers unless origin-locked), as "env NAME: !cmd" /
// "header NAME: !cmd", as written.
std::vector<std::string> connect_time_commands(const ServerConfig& config);
// The environment variables an entry refers to (${VAR}, ${VAR:-d}, ${env:VAR} in any
// string field, and Codex env_vars), sorted, without reading any of them.
std::vector<std::string> referenced_variables(const ServerConfig& config);

// --- the user file (native_user_config_path) -----------------------------------------
// One reader and one writer for every rewrite of the user file (/mcp enable|disable|add|
// remove, mcprt add|remove|enable|disable, trust, untrust; config_edit.hpp), so each keeps
// the keys it does not know, in the order the file has them.

// A JSON object that keeps its keys in insertion order: what the rewrites edit.
using ordered_json = nlohmann::ordered_json;

// The file as a JSON object ({} when it does not exist). An error when it cannot be read,
// is not valid JSON (comments allowed) or is not an object; the message names the path.
Result<ordered_json> read_user_config(FileSystem& fs, const std::string& path);
// Writes `doc` (2-space indent, trailing newline) atomically through the seam.
Status write_user_config(FileSystem& fs, const std::string& path, const ordered_json& doc);

// Records trust for `folder`: each name → hash in `servers` (the folder's record is
// created even when `servers` is empty). `replace` = the folder's record holds exactly
// these servers afterwards; else they are added to it. Other keys are kept.
Status record_project_trust(FileSystem& fs, const std::string& user_file, const std::string& folder,
                            const std::map<std::string, std::string>& servers, bool replace);
// Removes `folder`'s record. The value says whether there was one.
Result<bool> remove_project_trust(FileSystem& fs, const std::string& user_file,
                                  const std::string& folder);

// ${VAR}, ${VAR:-default}, ${env:VAR} in every string field (command, args, env, cwd, url,
// headers, and the oauth clientId, clientSecret, clientMetadataUrl, privateKey and
// privateKeyFile). An unset variable without default keeps the literal text and adds a warning
// naming the server and the variable. `raw` stays untouched (cache keys stay stable).
ServerConfig substitute_variables(ServerConfig config, const EnvLookup& env,
                                  std::vector<ConfigError>* warnings);

// How long a connect-time `!command` may run.
inline constexpr Millis kShellCommandTimeout{10000};

// Connect-time resolution (SPEC §2.4), on a copy used only to connect: env values (unless
// envPolicy literal) and header values (unless origin-locked) that start with `!` run as
// shell commands (10 s timeout; trimmed stdout; failure/timeout/empty drops the key;
// results cached per process; identical concurrent commands run once); a value that is
// exactly the name of a set environment variable becomes its value. Without a shell
// runner, `!` values are dropped with a warning.
//
// Only successful command results are cached (per resolver: one resolver per manager, so
// per process in practice); a failed command runs again on the next resolve, because the
// usual cause (not logged in to a password manager yet) is fixed by the user. Warnings
// name the server and the key, never the value or the command's output.
// Destroying the resolver cancels every pending resolve (its `done` never runs).
class ConnectTimeResolver {
 public:
  ConnectTimeResolver(Executor& executor, ShellRunner* shell, EnvLookup env, Logger* logger);
  ~ConnectTimeResolver();
  // `done` (async contract) gets the resolved copy. Never fails: problems are warnings.
  void resolve(ServerConfig config, std::function<void(ServerConfig)> done);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace mcprt
