#pragma once
// NativeHost: everything a native host (the `mcprt` CLI, examples, simple agents) needs to
// run the MCP lifecycle, built together: the native services, discovery of the user's
// configs, the loader, a tool registry bound to the manager, and the `/mcp` controller.
//
//   mcprt::native::NativeHost host({.cwd = "/repo"});
//   mcprt::LoadResult r = host.load();          // blocks: discovery, connect, startup gate
//   mcprt::Result<mcprt::ToolResult> out = host.call("mcp_fs_read", args);  // blocks
//   // or asynchronously: host.registry().call(name, args, {}, done) and pump with
//   // host.run_until([&] { return finished; }, Millis(60000)).
//
// Implements:
//  [x] NativeExecutor (pumped on the caller's thread by the blocking helpers), SpdlogLogger,
//      NativeProcessLauncher, NativeHttpClient, NativeShellRunner, NativeFileSystem
//  [x] discovery from the built-in providers (make_native_discovery_context), or from one
//      config file only (`config_file`, the CLI's --config)
//  [x] the tool cache in NativeFileStore (default dir, or `cache_dir`); `use_cache = false`
//  [x] MCPRT_TIMEOUT_MS overrides the default server timeout
//  [x] load(): discover_and_load_tools with a blocking wait (blocking lives here, never in
//      core); shutdown(): disconnect_all and wait until every child process was reaped
//  [x] call(): one tool call through the registry, pumped to its end; past its limit (or
//      when the host's stop check says so) the call is aborted, so the server gets
//      notifications/cancelled
//  [x] project trust: untrusted project servers are never started (discovery keeps them
//      pending); real paths through make_native_discovery_context; trust granted by the
//      loader's callback also holds for later discover() calls
//  [x] OAuth (SPEC §13) when the host asks for it: make_auth_storage builds the manager's
//      AuthStorage (the CLI: an OAuthClient over this host's executor and HTTP client) and
//      `login` backs `/mcp auth <name>`
//  [x] tool results over their cap (SPEC §16): the full text goes to a file in
//      <cache dir>/results/ (result_files.hpp) and the marker the model reads names it
//  [x] tool search (SPEC §16, `tool_search`): the session defers MCP tools behind
//      mcp_tool_search when there are many
//  [ ] no background loop thread: the host thread pumps (use executor().start_thread()
//      and post() instead if you need one — then do not call the blocking helpers)
//
// Threading: every method belongs to the thread that pumps the executor. Destroying the
// host shuts everything down (bounded) before the services go.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "mcprt/loader.hpp"
#include "mcprt/mcp_command.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/logger.hpp"
#include "mcprt/native/result_files.hpp"
#include "mcprt/result.hpp"
#include "mcprt/session.hpp"
#include "mcprt/tools.hpp"

namespace mcprt::native {

class NativeHost;

struct NativeHostOptions {
  std::string cwd;                 // empty = the current directory
  std::string app_name = "mcprt";  // `.<app>/mcp.json`, `$XDG_CONFIG_HOME/<app>/mcp.json`
  std::string app_display_name = "mcprt";
  // Non-empty: read only this file (`{"mcpServers": …}`) instead of discovering the
  // user's configs; `/mcp add|remove|enable|disable` then edit this file.
  std::string config_file;
  bool use_cache = true;
  std::string cache_dir;  // empty = $XDG_CACHE_HOME/mcprt (else ~/.cache/mcprt)
  // enable_mcp, discovery and manager options, on_status; project trust (SPEC §17):
  // loader.trust asks the host about untrusted project servers (the CLI prompts on a
  // terminal), loader.discovery.trust_all_projects trusts every project (sandboxes).
  // The host's input handlers and roots (SPEC §15, §3.4) go in loader.manager.input and
  // loader.manager.roots: no handler = that capability is not declared; roots unset = the
  // host's cwd (this `cwd`) as the one root.
  LoaderOptions loader;
  SpdlogLoggerOptions log;
  // Shown by `/mcp list|status` next to a server that is not trusted: how to trust its
  // folder (the CLI: "mcprt trust '<folder>'"). Null = no advice.
  std::function<std::string(const std::string& folder)> trust_command;
  // OAuth (SPEC §13): called once, at the end of the constructor, with this host (its
  // executor(), services() and discovery_context() are ready): the AuthStorage the
  // manager's HTTP transports ask. The host owns it: it outlives the manager and goes
  // before the host's HTTP client and executor. Null = no AuthStorage.
  std::function<std::shared_ptr<AuthStorage>(NativeHost& host)> make_auth_storage;
  // `/mcp auth <name>` (McpCommandOptions::login). Null = that command says it is
  // unavailable.
  std::function<void(const std::string& server, std::function<void(Status)> done)> login;
  // The model's own access to resources (SPEC §15): mcp_list_resources and
  // mcp_read_resource in registry(), by default while any server offers resources.
  ResourceToolsOptions resource_tools;
  // Tool results over their cap (SPEC §16; the cap is loader.manager.tools.max_result_bytes):
  // the full text is written to a file named in the result's marker and full_text_path.
  // result_files.dir empty = <cache dir>/results (cache_dir, else default_cache_dir(),
  // whether or not use_cache). false = no files. A spill the host set in
  // loader.manager.tools.spill is used instead.
  bool keep_full_results = true;
  ResultFilesOptions result_files;
  // Tool search (SPEC §16): by default (automatic) registry() holds the loaded MCP tools
  // and the meta-tool mcp_tool_search instead of every MCP tool once there are more than
  // 30 of them; `on` always, `off` never. session() has the catalog and the loaded set.
  ToolSearchOptions tool_search;
};

// NativeHost::call's options. The defaults suit a simple agent.
struct HostCallOptions {
  // A backstop over the server's own limits (tools/call: its toolTimeout, 60 s by default,
  // up to 10 min while progress arrives; a deferred tool's wait for its server: the server's
  // timeout). When it passes, the call is aborted and call() fails with ErrorCode::timeout.
  Millis timeout{15 * 60 * 1000};
  // notifications/progress of the call (sets its progressToken), on this thread and only
  // while call() runs.
  std::function<void(const json& progress_params)> on_progress;
  // Asked before the call starts waiting, after each event the loop handles and at least
  // every `stop_check` while the call runs: an answer aborts the call with that reason and
  // call() fails with ErrorCode::aborted. The CLI answers when Ctrl-C was pressed. Null =
  // never.
  std::function<std::optional<std::string>()> stop;
  Millis stop_check{100};
  // After an abort (timeout or stop): how long to keep pumping so the cancellation reaches
  // the server and the call settles before call() returns.
  Millis abort_settle{2000};
};

class NativeHost {
 public:
  explicit NativeHost(NativeHostOptions options = {});
  ~NativeHost();
  NativeHost(const NativeHost&) = delete;
  NativeHost& operator=(const NativeHost&) = delete;

  // Checks what load() would fail on before any connection: the cwd is a directory, the
  // config file (when given) exists and parses. The error names the path (and line and
  // column for invalid JSON).
  Status check() const;

  // Discovery → connect → startup gate, pumping the executor on this thread until the
  // loader answers (at most `limit`). Binds the registry to the new manager. Call once.
  LoadResult load(Millis limit = Millis(10 * 60 * 1000));

  // Rediscovery as load() does it (the `/mcp reload` source), with the trust load()'s
  // callback granted. Reads configs only: nothing is spawned or connected.
  DiscoveryResult discover();
  // The options discover() uses (the --config provider, trust granted in load()).
  DiscoveryOptions discovery_options() const;

  // Pumps the executor until `pred()` is true or `limit` passed. Returns pred().
  bool run_until(const std::function<bool()>& pred, Millis limit);
  // Starts `op` (which gets a completion callback), pumps until it completes or `limit`.
  // Returns false on timeout.
  bool wait(const std::function<void(std::function<void()> complete)>& op, Millis limit);

  // Calls a tool of the registry (after load(): the MCP tools; host tools too) and pumps
  // the executor on this thread until the call completes. The result is the tool's outcome,
  // a failed one included (is_error, "MCP error: …" for local failures, "Unknown tool: …").
  // Errors: invalid_argument when `arguments` is not a JSON object (null counts as {}; a
  // discarded json, parse(text, nullptr, false) of bad text, is named as invalid JSON),
  // timeout when options.timeout passed, aborted when options.stop answered; in both of the
  // last two the call was aborted first (notifications/cancelled to its server).
  Result<ToolResult> call(const std::string& name, json arguments = json::object(),
                          HostCallOptions options = {});

  // disconnect_all and pump until every transport closed (bounded by `limit`).
  void shutdown(Millis limit = Millis(5000));

  NativeExecutor& executor();
  Logger& logger();
  // services().auth_storage is the make_auth_storage one (null without it).
  ManagerServices services();
  const DiscoveryContext& discovery_context() const;
  const std::string& cwd() const;
  // The file `/mcp enable|disable|add|remove` edit.
  std::string user_config_path() const;

  ToolRegistry& registry();
  McpSession& session();
  McpCommandController& commands();  // after load()
  std::shared_ptr<McpManager> manager() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The default server timeout: MCPRT_TIMEOUT_MS when it is a non-negative integer (a bad
// value is ignored with a warning on `logger`), else 30 s.
Millis default_timeout_from_env(Logger* logger);

}  // namespace mcprt::native
