#pragma once
// The `mcprt` CLI's commands (SPEC §10). Exit codes: 0 success; 1 a server or entry failed
// (tools, status), a config file or entry is invalid (list), the tool answered isError
// (call), or trust could not be recorded (trust, untrust); 2 usage or config error; 3 a
// project server is not trusted (SPEC §17) and nothing failed (tools, status; status
// <name> and call <tool> of such a server) — `mcprt trust '<dir>'` fixes it; 4 a server
// needs authorization (SPEC §13: ServerPhase::needs_auth) and nothing failed (tools,
// status; status <name> and call <tool> of such a server) — `mcprt auth login <name>`
// fixes it. 1 wins over 4, 4 over 3.

#include <cstddef>
#include <string>
#include <vector>

namespace mcprt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotTrusted = 3;
inline constexpr int kExitNeedsAuth = 4;

struct GlobalOptions {
  std::string cwd;          // --cwd: project directory (config lookup, server cwd)
  std::string config_path;  // --config: use only this file instead of discovery
  bool no_cache = false;    // --no-cache: neither read nor write the tool cache
  // --elicit=ask|decline|accept-defaults: what a server's request for user input gets
  // (cli_elicit.hpp; SPEC §15). ask: a terminal form on a TTY, declined otherwise.
  std::string elicit = "ask";
};

// Reads configs only: never spawns or connects.
int run_list(const GlobalOptions& options, bool json);
// `mcprt trust [DIR]` (trust = true) records DIR (default --cwd, else the current
// directory; its real path) and the hash of every current project server in the user
// file; `mcprt untrust [DIR]` removes DIR's record.
int run_trust(const GlobalOptions& options, const std::string& dir, bool trust);
// "mcprt trust '<folder>'": the command that trusts a project folder.
std::string trust_command(const std::string& folder);
// "mcprt auth login <server>": the command that logs in to a server that needs
// authorization.
std::string auth_login_command(const std::string& server);
int run_tools(const GlobalOptions& options, bool json);
// `mcprt call <tool> [JSON] [--server NAME]` starts only the tool's server: NAME, or the
// configured server(s) whose mcp_<server>_ prefix fits the tool name (with the tool cache
// deciding between overlapping names). With --server the tool may also be the server's
// own name for it. 2 when the name fits no configured server (nothing starts).
int run_call(const GlobalOptions& options, const std::string& tool, const std::string& arguments,
             bool json, const std::string& server = "");
int run_status(const GlobalOptions& options, const std::string& server, bool as_json);
// Resources, resource templates and prompts (SPEC §15): the manager's catalogs once the
// servers have listed them (SERVER: only that server starts). Exit codes as `tools`.
int run_resources(const GlobalOptions& options, const std::string& server, bool json);
int run_prompts(const GlobalOptions& options, const std::string& server, bool json);
// `mcprt read URI [--server S] [--json] [--out FILE]`: resources/read on S (only S starts)
// or on McpManager::server_for_resource(URI) (every server starts). Text
// is printed as is, a blob as "[binary <mime>, N bytes]"; --out writes the first
// content's bytes (a blob decoded) to FILE. 2 when no server lists URI, 1 when the read
// fails.
int run_read(const GlobalOptions& options, const std::string& uri, const std::string& server, bool json,
             const std::string& out_file);
// `mcprt prompt NAME [--arg k=v]... [--json]`: NAME is server:name (only that server
// starts) or a name exactly one server has. Prints the messages (format_prompt_messages).
// 2 for an unknown or ambiguous name or a bad --arg, 1 when prompts/get fails.
int run_prompt(const GlobalOptions& options, const std::string& name, const std::vector<std::string>& args,
               bool json);
// `mcprt search QUERY… [--json] [--limit N] [--server S]…`: tool search (SPEC §16) over
// every MCP tool of the started servers (all, or each --server only; cached tools count),
// as an agent's mcp_tool_search ranks them: exact and substring name matches first, then
// BM25; `select:a,b` looks up full names. Prints format_tool_search's text, or JSON with
// the hits' definitions. Nothing is loaded or called. 2 for an empty query, an unknown
// --server, or a select: name that is no tool (unless a server failed: 1); else as `tools`.
int run_search(const GlobalOptions& options, const std::string& query, std::size_t limit,
               const std::vector<std::string>& servers, bool json);
int run_repl(const GlobalOptions& options);

// OAuth sign-in (cli_auth.cpp; SPEC §13). Credentials live under
// $XDG_DATA_HOME/mcprt/credentials (else ~/.local/share/mcprt/credentials).
// `mcprt auth login [server]`: the named http/sse server, or every one that needs it
// (after connecting them without a user step): prints the authorization URL, opens the
// browser (unless `open_browser` is false), waits for the loopback callback, then connects
// the server and lists its tools. 0 signed in and connected; 1 a sign-in or connect
// failed; 2 usage (unknown, disabled, invalid or stdio server); 3 not trusted; 4 connected
// after the sign-in still needs authorization.
int run_auth_login(const GlobalOptions& options, const std::string& server, bool open_browser);
// `mcprt auth logout [server]`: deletes the tokens of the server (or of every http/sse
// server); the client registration stays. 0, or 1 when a deletion failed.
int run_auth_logout(const GlobalOptions& options, const std::string& server);
// `mcprt auth status [server] [--json]`: what is stored per http/sse server — never a
// token, secret or code. 0; 4 when the one named server is not signed in.
int run_auth_status(const GlobalOptions& options, const std::string& server, bool json);

// `mcprt serve-demo` (cli_serve_demo.cpp): empty paths = environment, then defaults
// relative to the binary.
struct ServeDemoOptions {
  int port = 8080;          // 0 = any free port
  std::string web_dir;      // demo/web (index.html, app.js, style.css)
  std::string js_dir;       // the wasm tree's mcprt-js (index.js, mcprt.mjs, mcprt.wasm)
  std::string demo_server;  // mcprt-demo-server
  int demo_startup_delay_ms = 0;  // the demo server's --startup-delay-ms
};
int run_serve_demo(const ServeDemoOptions& options);

}  // namespace mcprt::cli
