#pragma once
// The server config model (SPEC §2.2) and the `mcpServers` JSON format.
//
// Where this sits in discovery (SPEC §2; providers, merge, substitution come later):
//
//   provider reads a file ──► parse_mcp_servers_json(text, path, {source, ...})
//                               → ParsedConfig{servers (unvalidated), errors, warnings}
//   ──► substitute ${VAR} (discovery time) ──► filter (enabled, project, Exa claim)
//   ──► validate_server_config(cfg, {stdio_available}) per entry ──► dedup by name/endpoint
//
// Parsing checks only the *shape* of each entry (JSON types, known transport type), so
// that substitution can still turn `"url": "${MY_URL}"` into a real URL before
// validate_server_config() checks what the values mean. ParseOptions::validate runs both
// for callers that have no substitution step (tests, programmatic configs).
//
// Every message about one server reads `Server "<name>": ...`; an invalid entry never
// stops the other entries of a file. Nothing here throws, blocks or does I/O.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/result.hpp"

namespace mcprt {

enum class TransportType { stdio, http, sse };
const char* to_string(TransportType type);
// "stdio", "http" (also "streamable-http", "streamableHttp"), "sse"; case-insensitive.
std::optional<TransportType> parse_transport_type(std::string_view text);

// `reconnect`: a bool, or {maxAttempts, initialDelayMs, maxDelayMs} (which also enables).
struct ReconnectPolicy {
  bool enabled = true;
  int max_attempts = 0;  // attempts per outage; 0 = no limit (the §5.5 circuit breaker still applies)
  long long initial_delay_ms = 500;
  long long max_delay_ms = 30000;
  bool operator==(const ReconnectPolicy&) const = default;
};

enum class AuthType { none, bearer, oauth };
const char* to_string(AuthType type);

// `auth`: {type: "bearer" | "oauth", credentialId?}.
struct AuthConfig {
  AuthType type = AuthType::none;
  std::string credential_id;  // empty = look the credential up by url / server name
  bool operator==(const AuthConfig&) const = default;
};

// `oauth`: the per-server OAuth client settings (SPEC §13; the OAuth client is
// mcprt/oauth.hpp). All optional: without them mcprt discovers everything and registers
// itself (Client ID Metadata Document or Dynamic Client Registration).
//   {"clientId": "...", "clientSecret": "...",        a client registered beforehand
//    "scopes": ["a", "b"] | "a b",                    asked for instead of the server's
//                                                     scopes_supported (a 401/403 challenge's
//                                                     scope still wins)
//    "clientMetadataUrl": "https://.../client.json",  this client's metadata document (CIMD)
//    "callbackPort": 8765,                            fixed loopback port for the redirect
//    "grant": "authorization_code" | "client_credentials",
//    "privateKey": "-----BEGIN PRIVATE KEY-----...",  client_credentials with private_key_jwt
//    "privateKeyFile": "/path/key.pem",               (one of the two), signed with
//    "signingAlg": "RS256" | "ES256"}                 signingAlg (default RS256)
// An `oauth` block makes `auth.type` "oauth" when `auth` is absent. The secrets
// (clientSecret, privateKey) are never printed: messages name fields, never values, and
// every message goes through redaction (mcprt/redact.hpp).
struct OAuthConfig {
  enum class Grant { authorization_code, client_credentials };
  Grant grant = Grant::authorization_code;
  std::string client_id;
  std::string client_secret;
  std::vector<std::string> scopes;
  std::string client_metadata_url;
  int callback_port = 0;  // 0 = an ephemeral port per flow
  std::string private_key;
  std::string private_key_file;
  std::string signing_alg;  // "" = RS256
  bool present = false;     // the entry had an `oauth` block
  bool operator==(const OAuthConfig&) const = default;
};
const char* to_string(OAuthConfig::Grant grant);

// Where a server entry came from (SPEC §1 step 2). Kept for every server, including
// servers that never connect; the display name shows in tool paths and `/mcp list`.
struct SourceInfo {
  enum class Level { user, project, native };
  std::string provider;       // provider id: "native", "claude", "vscode", ...
  std::string provider_name;  // display name: "Claude Code", ...
  std::string path;           // the file (or a label for programmatic sources)
  Level level = Level::user;
  bool operator==(const SourceInfo&) const = default;
};
const char* to_string(SourceInfo::Level level);

struct ServerConfig {
  std::string name;

  // Transport: the explicit `type` / `transport`; else `command` → stdio; else `url` →
  // http. `type_explicit` is false for an inferred type: a bare `url` then means
  // Streamable HTTP with automatic fallback to legacy SSE (§3.3).
  TransportType type = TransportType::stdio;
  bool type_explicit = false;

  // Common fields.
  bool enabled = true;
  std::optional<long long> timeout_ms;       // startup + list; 0 = none; unset = default
  std::optional<long long> tool_timeout_ms;  // per tools/call; 0 = none; unset = default
  std::vector<std::string> include_tools;    // names or '*' globs; empty = all
  std::vector<std::string> exclude_tools;    // exclude wins over include
  // Tool search (SPEC §16): `alwaysLoad: true` (or Copilot's `deferTools: "never"`) keeps
  // this server's tools loaded when the session defers the others.
  bool always_load = false;
  ReconnectPolicy reconnect;
  // The wire (SPEC §14): "auto", "2026-07-28", "legacy" or a 2025-era version; empty =
  // the host's default (auto).
  std::string protocol;
  // Roots answered to this server's roots/list (SPEC §3.4): unset = the host's roots;
  // `false` in the config = declared=false (the capability is not offered); a list of
  // directories (absolute, or relative to the config file's directory).
  struct Roots {
    bool declared = true;
    std::vector<std::string> directories;
    bool operator==(const Roots&) const = default;
  };
  std::optional<Roots> roots;
  AuthConfig auth;
  OAuthConfig oauth;  // http/sse only

  // stdio.
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string cwd;           // empty = the session cwd
  bool env_literal = false;  // envPolicy:"literal": no connect-time resolution of env values
  // Variables copied from the host environment into `env` when set (Codex `env_vars`).
  // Read at discovery time together with ${VAR} (substitute_variables), so never for an
  // untrusted project entry; empty afterwards.
  std::vector<std::string> env_vars;

  // http / sse.
  std::string url;
  std::map<std::string, std::string> headers;
  bool origin_locked = false;  // headerPolicy:"origin-locked"

  // The entry exactly as written (unresolved): the input of config_hash() and of any
  // later rewrite of the file. Never log it (it may hold secrets).
  json raw;

  SourceInfo source;

  // A bare `url`: try Streamable HTTP, fall back to legacy SSE on 400/404/405.
  bool allows_sse_fallback() const { return type == TransportType::http && !type_explicit; }

  bool operator==(const ServerConfig&) const = default;
};

// A problem in a config file: the whole file (invalid JSON: line and column set, server
// empty) or one server entry (server set, message `Server "<name>": ...`).
struct ConfigError {
  std::string path;
  std::string server;
  std::string message;
  int line = 0;    // 1-based; 0 = not about a position
  int column = 0;  // 1-based, in bytes (the position of the last byte the parser read)

  // "/x/.mcp.json:3:7: invalid JSON: ..." or "/x/.mcp.json: Server "foo": stdio server
  // needs "command"" (no path part when path is empty).
  std::string describe() const;
  // ErrorCode::invalid_config with describe() as the message.
  Error to_error() const;
  bool operator==(const ConfigError&) const = default;
};

struct ValidationOptions {
  // False in the browser: a stdio server is then a validation error.
  bool stdio_available = true;
};

struct ParseOptions {
  // The key holding the server map: "mcpServers" (Claude, Cursor, Gemini, native...) or
  // "servers" (VS Code's .vscode/mcp.json).
  std::string servers_key = "mcpServers";
  // Accept `//` and `/* */` comments (VS Code and Gemini settings files are JSONC).
  bool allow_comments = false;
  // Copied into every ServerConfig::source; an empty source.path becomes the parse path.
  SourceInfo source;
  // Also run validate_server_config() on each entry (invalid ones go to `errors`).
  bool validate = false;
  ValidationOptions validation;
};

// The user file's record of trusted project folders (SPEC §17), `trustedProjects`:
//   {"<folder, real path>": {"servers": {"<name>": "<config_hash>", ...}}, ...}
// A project server is trusted when its folder's record maps its name to the hash of its
// definition as written; a changed or new definition is not.
struct TrustStore {
  std::map<std::string, std::map<std::string, std::string>> projects;  // folder → name → hash
  bool trusts(const std::string& folder, const std::string& name, const std::string& hash) const;
  void merge(const TrustStore& other);  // other's grants win
  bool operator==(const TrustStore&) const = default;
};

struct ParsedConfig {
  std::vector<ServerConfig> servers;  // entries that parsed, ordered by name
  std::vector<ConfigError> errors;    // file-level or per-server
  std::vector<ConfigError> warnings;  // e.g. unsupported ${input:...} values
  bool found_servers_key = false;     // the document had the servers key at all
  // The native user file's lists (SPEC §2.3): names always skipped / force-enabled.
  std::vector<std::string> disabled_servers;
  std::vector<std::string> enabled_servers;
  // The native user file's `trustedProjects` (discovery uses only that file's).
  TrustStore trusted_projects;
  // Where this document came from (ParseOptions::source, path filled in), so discovery
  // knows a file's level even when it holds no servers or did not parse.
  SourceInfo source;
};

// Parses a whole file. Invalid JSON gives exactly one error with line and column; an
// empty (all-whitespace) file is an empty config; a document without the servers key
// has no servers and no error. Never throws.
ParsedConfig parse_mcp_servers_json(std::string_view text, std::string_view path,
                                    const ParseOptions& options = {});
// The same for an already-parsed document (a JS object, a sub-object of ~/.claude.json).
ParsedConfig parse_mcp_servers(const json& document, std::string_view path,
                               const ParseOptions& options = {});

// Parses one entry (`entry` is the value under the server's name). Checks JSON types and
// the transport type; the error message lists every problem, joined with "; ".
// Non-fatal remarks are appended to `warnings` when given.
Result<ServerConfig> parse_server_entry(std::string name, const json& entry,
                                        const ParseOptions& options = {},
                                        std::vector<std::string>* warnings = nullptr);

// Checks what the values mean (SPEC §2.3): name, command vs url, transport needs, url
// syntax (http/https only), number ranges, stdio availability. All problems in one
// ErrorCode::invalid_config error, `Server "<name>": a; b`.
Status validate_server_config(const ServerConfig& config, const ValidationOptions& options = {});

// Non-empty, at most 100 characters of [A-Za-z0-9_.:-].
Status validate_server_name(std::string_view name);
inline constexpr std::size_t kMaxServerNameLength = 100;

// An absolute http:// or https:// URL with a non-empty host and a valid port.
bool is_valid_http_url(std::string_view url);

// A stable hash of the unresolved entry (`raw`): FNV-1a 64 (offset basis
// 0xcbf29ce484222325, prime 0x100000001b3) over canonical_json(raw), as 16 lowercase hex
// digits. The same on every platform; key order in the file does not matter.
std::string config_hash(const ServerConfig& config);
// The canonical text hashed above: sorted keys, no whitespace, invalid UTF-8 replaced.
std::string canonical_json(const json& value);

}  // namespace mcprt
