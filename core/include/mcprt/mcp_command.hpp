#pragma once
// The `/mcp` command controller (SPEC §8): platform-neutral, shared by the CLI REPL and the
// demo page. One line in, one text answer out.
//
//   McpCommandController mcp(session, {.discover = [&] { return discover_servers(ctx, opts); },
//                                      .fs = &files, .user_config_path = path});
//   mcp.execute("/mcp list", [](std::string out) { print(out); });
//
// Subcommands:
//   list                      servers, status, source, tool count (also bare `/mcp`);
//                             project servers that are not trusted (SPEC §17) with what
//                             they would run, and how to trust them; while the session's
//                             tool search is active, how many tools are deferred and loaded
//   tools [server]            the MCP tools, optionally of one server
//   resources [server]        the resources and resource templates (SPEC §15), all or of
//                             one server (the manager's catalogs: format_catalog)
//   prompts [server]          the prompts with their arguments
//   read <uri>                resources/read on the server that offers <uri>
//                             (McpManager::server_for_resource): format_resource_contents
//   prompt <server>:<name> [k=v…]
//                             prompts/get with those arguments: format_prompt_messages
//                             (a bare <name> when exactly one server has that prompt)
//   reload                    disconnect_all → rediscover → connect → refresh_mcp_tools
//   reconnect <name>          close and reconnect one server (resets its circuit breaker)
//   auth <name>               log in to a server that needs authorization (SPEC §13)
//                             through the host's `login` (the CLI: browser + loopback
//                             callback), then reconnect it and report its tools
//   enable <name>             rewrites the user file's enabledServers/disabledServers,
//   disable <name>              then applies the change
//   add <name> URL            adds a server to the user file, then connects it; the
//   add <name> -- CMD [ARG…]    options of `mcprt add` (-t, -e, -H, --url; see
//                               config_edit.hpp: parse_add_words)
//   remove <name>             removes a server from the user file, then disconnects it
//   status <name>             state, trust, error, attempts, source, stderr tail (for a
//                             server that is not trusted: what it would run)
//   search [--limit N] <query…>
//                             the session's tool search (SPEC §16; McpSession::search_tools,
//                             active or not) over every MCP tool, cached ones included: the
//                             ranked hits (format_tool_search). It only shows: loading is
//                             the model's (mcp_tool_search). `select:a,b` looks up exact
//                             names
//   help                      usage
// An unknown subcommand (or missing argument) answers with the usage text.
//
// "Applies the change" = rediscover, disconnect servers that are gone, connect_servers for
// the rest (already connected servers are kept as they are).
//
// Threading: single-threaded on the registry's executor; `done` follows the async contract
// (never inside execute(), exactly once). Destroying the controller while a command runs
// drops that command's answer. The session, the file system and the manager must outlive
// the controller.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/platform/file_system.hpp"
#include "mcprt/session.hpp"
#include "mcprt/tool_search.hpp"

namespace mcprt {

struct McpCommandOptions {
  // Rediscovers the servers (reload, and after enable/disable/add/remove). Null = the
  // commands that need it answer that rediscovery is unavailable.
  std::function<DiscoveryResult()> discover;
  // Where enable/disable/add/remove write. Null fs or empty path = those are unavailable.
  FileSystem* fs = nullptr;
  std::string user_config_path;  // the native user file (discovery.hpp: native_user_config_path)
  // The host's way to trust a project folder, shown next to servers that are not trusted
  // (the CLI: "mcprt trust '<folder>'"). Null = no advice is shown.
  std::function<std::string(const std::string& folder)> trust_command;
  // `/mcp auth <name>`: the host's interactive login for one server (SPEC §13: show the
  // authorization URL, wait for the redirect, store the credential). `done` once, on the
  // executor; ok = logged in, and the controller then reconnects the server. Null = the
  // command answers that this host cannot log in.
  std::function<void(const std::string& server, std::function<void(Status)> done)> login;
};

class McpCommandController {
 public:
  // `initial` is the discovery the session was loaded from (for disabled/invalid servers).
  McpCommandController(McpSession& session, McpCommandOptions options,
                       DiscoveryResult initial = {});
  ~McpCommandController();
  McpCommandController(const McpCommandController&) = delete;
  McpCommandController& operator=(const McpCommandController&) = delete;

  // `line` is "/mcp <subcommand> …" (the leading "/mcp" may be omitted).
  void execute(const std::string& line, std::function<void(std::string output)> done);

  const DiscoveryResult& last_discovery() const;
  static std::string usage();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// --- renderings shared by `/mcp` and the CLI (SPEC §15) --------------------------------------
// Everything a server wrote is untrusted text: table cells keep their first line with control
// characters replaced by spaces; resource and message text is printed as the server sent it.

// A table, one entry a line: resources and templates "server  uri  name  mimeType
// description" (a template's uriTemplate in the uri column), prompts "server  name
// arguments  description" with arguments as "<required> [optional]". Entries from the
// cache end in " (cached)". Empty entries: an empty string.
std::string format_catalog(CatalogKind kind, const std::vector<CatalogEntry>& entries);

// A resources/read result: each text content as is (a newline after each that lacks one),
// each blob as "[binary <mimeType>, <N> bytes]" (N = the decoded size), with a
// "--- <uri>" line before each when there are several.
std::string format_resource_contents(const json& result);

// A prompts/get result: its description (if any), then per message "<role>:" and its
// content indented: text as is, "[image <mimeType>, N bytes]", "[audio …]", an embedded
// resource as "[resource <uri>]" and its text (or "[binary …]"), a resource link as
// "[resource link <uri>]".
std::string format_prompt_messages(const json& result);

// Standard base64 (padding optional, whitespace ignored); nullopt when `text` is not base64.
std::optional<std::string> decode_base64(std::string_view text);

// Which prompt "server:name" or "name" means. A server name may hold ':' itself: each
// split whose left part is in `servers` is a candidate, and one whose server lists the
// prompt in `prompts` wins over one that does not. A bare name (no usable split) must be
// listed by exactly one server: none or several is an error naming the candidates.
struct PromptTarget {
  std::string server;
  std::string name;
};
Result<PromptTarget> resolve_prompt_name(const std::string& text,
                                         const std::vector<std::string>& servers,
                                         const std::vector<CatalogEntry>& prompts);

// "<argument>=<value>" words → a JSON object of strings (prompt arguments); an error names a word
// without '=' or an empty key.
Result<json> parse_prompt_arguments(const std::vector<std::string>& words);

// --- tool search (SPEC §16), shared by `/mcp search` and `mcprt search` -----------------------

// A search's answer as text: a heading with the query and how many tools of the `catalog`
// (McpSession::catalog: what was searched) were searched, then one hit a line, best first —
// "name  server  match  score  summary" (the score only where BM25 gave one, else "-";
// control characters in server text as spaces) — then a line for each select: name that is
// no tool. No hit and no such name: a line saying that nothing matched.
std::string format_tool_search(std::string_view query, const ToolSearchResult& result,
                               const std::vector<ToolCatalogEntry>& catalog);

// Splits a command line into words: whitespace separates, '…' and "…" group (backslash
// escapes inside "…" and outside quotes). An unterminated quote runs to the end.
std::vector<std::string> split_command_line(std::string_view line);

}  // namespace mcprt
