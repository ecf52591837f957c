#pragma once
// Session integration (SPEC §8): the agent's tool registry and what keeps its MCP part
// current.
//
//   ToolRegistry registry(executor);
//   registry.add_tool(my_read_file_tool);              // the host's own tools
//   McpSession session(registry, logger);
//   session.bind(load_result.manager);                 // refresh now + on every tools-changed
//   registry.call("mcp_fs_read", args, {}, done);      // host and MCP tools alike
//
//   auto child = session.make_child(child_registry);   // a subagent: proxy tools over the
//                                                      // parent's connections
//
// Ownership, not names: the registry remembers which entries came from MCP, so a host
// tool that happens to be called `mcp_x` is never removed by refresh_mcp_tools. When a
// host tool and an MCP tool have the same name the host tool wins (the MCP tool is left
// out and reported by mcp_conflicts()).
//
// Threading: single-threaded on the executor given to the registry. Callbacks follow the
// async contract (executor.hpp). Changed listeners run synchronously inside the call that
// changed the set (add_tool, remove_tool, refresh_mcp_tools), after the change.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mcprt/abort.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/result.hpp"
#include "mcprt/tool_search.hpp"
#include "mcprt/tools.hpp"

namespace mcprt {

class ToolRegistry {
 public:
  explicit ToolRegistry(Executor& executor);
  ToolRegistry(const ToolRegistry&) = delete;
  ToolRegistry& operator=(const ToolRegistry&) = delete;

  // A host tool. Fails (invalid_argument) on an empty name or when a host tool of that
  // name exists; shadows an MCP tool of the same name.
  Status add_tool(ToolPtr tool);
  // Removes a host tool; MCP tools are only changed through refresh_mcp_tools.
  bool remove_tool(const std::string& name);

  // Replaces every tool that came from MCP with `tools` (each wrapped under its name) and
  // fires the changed listeners once. Host tools are untouched. A tool object that was
  // already registered under the same name keeps its entry, so a refresh after one server
  // changed allocates only for that server's tools.
  void refresh_mcp_tools(const std::vector<std::shared_ptr<McpTool>>& tools);
  // The same for tools that are MCP-owned without being McpTools (child-session proxies).
  void refresh_mcp_tools(const std::vector<ToolPtr>& tools);
  void clear_mcp_tools() { refresh_mcp_tools(std::vector<ToolPtr>{}); }

  ToolPtr find(const std::string& name) const;
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  bool is_mcp_tool(const std::string& name) const;
  // Every visible tool, sorted by name (a stable order for prompt caching).
  std::vector<ToolPtr> tools() const;
  std::vector<std::string> names() const;
  std::size_t mcp_tool_count() const;
  // MCP tools left out because a host tool has the name.
  std::vector<std::string> mcp_conflicts() const;
  // Increases on every change of the visible set.
  std::uint64_t generation() const { return generation_; }

  // Calls a tool by name. An unknown name completes (async) with an is_error result
  // "Unknown tool: <name>"; otherwise the tool's own contract applies (the only Error is
  // ErrorCode::aborted).
  void call(const std::string& name, json arguments, ToolCallOptions options, ToolDone done);

  std::uint64_t on_changed(std::function<void()> listener);
  void remove_listener(std::uint64_t id);

  // A name that is not registered is offered to the resolver before call() answers
  // "Unknown tool" (a tool-search session loads a deferred tool this way). One resolver;
  // an empty function removes it.
  void set_resolver(std::function<ToolPtr(const std::string& name)> resolver);

  Executor& executor() const { return executor_; }

 private:
  void changed();

  Executor& executor_;
  std::map<std::string, ToolPtr> host_;
  struct McpEntry {
    ToolPtr tool;
    const McpTool* source = nullptr;  // the McpTool it wraps (refresh keeps unchanged ones)
  };
  std::map<std::string, McpEntry> mcp_;  // visible or not (a host tool may shadow one)
  std::uint64_t generation_ = 0;
  std::uint64_t next_listener_ = 1;
  std::map<std::uint64_t, std::function<void()>> listeners_;
  std::function<ToolPtr(const std::string&)> resolver_;
};

// A tool of a child session: calls the parent manager's *current* tool for the same
// (server, raw tool), so the child reuses the parent's connection and never opens its own.
// When the parent disconnected the server (or the parent is gone) the call completes with
// an is_error result saying so.
class ProxyMcpTool final : public Tool {
 public:
  ProxyMcpTool(Executor& executor, McpToolInfo info, std::weak_ptr<McpManager> parent);
  const std::string& name() const override { return info_.name; }
  const std::string& description() const override { return info_.description; }
  const json& input_schema() const override { return info_.input_schema; }
  const McpToolInfo& info() const { return info_; }
  void call(json arguments, ToolCallOptions options, ToolDone done) override;

 private:
  Executor& executor_;
  McpToolInfo info_;
  std::weak_ptr<McpManager> parent_;
};

// --- Tool search (SPEC §16) ---------------------------------------------------------------
// When active, the session registers only the *loaded* MCP tools and the meta-tool
// `mcp_tool_search`; the other MCP tools are deferred (see tool_search.hpp). A tool is
// loaded when:
//   - a search found it (`mcp_tool_search`, or load_tools): it stays for the conversation
//     (until reset_loaded_tools), across refreshes and reconnects;
//   - its server's config says `alwaysLoad: true`, or its definition's
//     `_meta["anthropic/alwaysLoad"]` is true;
//   - its server's `instructions` name it (its raw or full name, as a whole word);
//   - the model calls it by name: the registry resolves the deferred name, loads and calls.
// Each session, a child included, has its own loaded set. The index is rebuilt on every
// tools-changed event (late servers, list_changed, reconnects), and works from the cached
// tools before any server has connected.

enum class ToolSearchMode {
  automatic,  // active while the MCP tools are more than auto_tool_threshold, or their
              // definitions more than auto_token_budget estimated tokens
  on,
  off,
};

struct ToolSearchOptions {
  ToolSearchMode mode = ToolSearchMode::automatic;
  std::size_t auto_tool_threshold = 30;
  std::size_t auto_token_budget = 0;  // 0 = the tool count alone decides
};

// "auto" | "on" | "off" (also true/false words: "true", "false"); invalid_argument otherwise.
Result<ToolSearchMode> parse_tool_search_mode(std::string_view text);
const char* to_string(ToolSearchMode mode);

// A tool as the catalog shows it: its name, server and one-line summary (≤ 200 bytes).
struct ToolCatalogEntry {
  std::string name;
  std::string server;
  std::string summary;
  bool loaded = false;  // registered now (loaded, always loaded, or search inactive)
};

// A rough token count of a tool's definition as a model receives it (name, description,
// input schema): bytes / 4, rounded up.
std::size_t estimate_tool_tokens(const McpToolInfo& info);

// Binds a ToolRegistry to a manager: the registry's MCP part follows the manager's tools.
// The registry, the logger (may be null) and the manager's executor must outlive it.
// Destroying the session removes its listener; the registry keeps the last tools.
class McpSession {
 public:
  explicit McpSession(ToolRegistry& registry, Logger* logger = nullptr,
                      ToolSearchOptions tool_search = {});
  ~McpSession();
  McpSession(const McpSession&) = delete;
  McpSession& operator=(const McpSession&) = delete;

  // Refreshes from manager->tools() now and on every tools-changed. A null manager (MCP
  // disabled) clears the MCP tools. Replaces an earlier binding.
  void bind(std::shared_ptr<McpManager> manager);
  void unbind();
  const std::shared_ptr<McpManager>& manager() const { return manager_; }
  ToolRegistry& registry() const { return registry_; }

  // Takes the manager's current tools into the registry (as proxies in a child session).
  void refresh();

  // The late-connection follow-up (SPEC §8): waits for `server`; when it ended up
  // connected, refreshes so its newly available tools are attached. `done` gets the
  // wait's outcome (async contract; on the manager's executor). Without a bound manager
  // it completes with not_connected.
  void wait_for_server(const std::string& server, AbortSignal signal,
                       std::function<void(Status)> done);

  // A child session (the seed's subagent proxy) over `child_registry`: its MCP tools are
  // ProxyMcpTools over this session's manager, refreshed whenever the parent's tools
  // change. No new process or socket is ever opened for the child. The child must not
  // outlive this session's manager binding being meaningful: when the parent unbinds or
  // is destroyed, the child's proxies fail with a clear error.
  std::unique_ptr<McpSession> make_child(ToolRegistry& child_registry) const;
  bool is_child() const { return child_; }

  // Tool search (above). set_tool_search re-evaluates at once. A child starts with its
  // parent's options and an empty loaded set.
  void set_tool_search(ToolSearchOptions options);
  const ToolSearchOptions& tool_search_options() const;
  bool tool_search_active() const;
  // Every MCP tool of the bound manager, sorted by name, with its summary and whether it
  // is registered now.
  std::vector<ToolCatalogEntry> catalog() const;
  // The deferred tools as lines "<name>: <summary>", for a host's system prompt.
  std::string catalog_text() const;
  // The search the meta-tool runs, without loading anything.
  ToolSearchResult search_tools(std::string_view query, std::size_t limit = 0) const;
  // Adds MCP tools (full names) to the loaded set; names that are no MCP tool come back.
  std::vector<std::string> load_tools(const std::vector<std::string>& names);
  // The loaded set (what searches and calls loaded), sorted.
  std::vector<std::string> loaded_tools() const;
  // Empties the loaded set (a new conversation).
  void reset_loaded_tools();

 private:
  struct Search;  // the tool-search state (mcp_session.cpp)
  std::shared_ptr<McpManager> source_manager() const;
  void install_search_tool(bool active);
  ToolResult run_tool_search(const std::string& query, std::size_t limit);

  ToolRegistry& registry_;
  Logger* logger_;
  std::shared_ptr<McpManager> manager_;  // a child holds no strong reference (see below)
  std::weak_ptr<McpManager> parent_manager_;
  bool child_ = false;
  std::uint64_t listener_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::unique_ptr<Search> search_;
};

// --- Resource tools (SPEC §15) -----------------------------------------------------------
// Two tools that let the model reach the servers' resources itself, not only through the
// user's mentions:
//   mcp_list_resources {server?}      every resource (uri, name, mimeType, description,
//                                     server) and resource template, as text; structured
//                                     as {resources, resourceTemplates}
//   mcp_read_resource  {uri, server?} resources/read on the server that lists the URI (or
//                                     has a matching template), rendered like a tool
//                                     result: text contents as text, a blob as
//                                     "[binary <mimeType>, N bytes]" unless its type is
//                                     text-like (text/*, JSON, XML, YAML, JavaScript) and it
//                                     decodes to UTF-8; the contents stay in `content` as
//                                     embedded resource blocks
// Everything the servers say (names, descriptions, contents) is their untrusted text.

enum class ResourceToolsMode {
  when_offered,  // present while any server lists a resource or a resource template
  always,
  never,
};

struct ResourceToolsOptions {
  ResourceToolsMode mode = ResourceToolsMode::when_offered;
  std::size_t max_result_bytes = kDefaultMaxResultBytes;  // the text cap, as for MCP tools
};

inline constexpr const char* kListResourcesTool = "mcp_list_resources";
inline constexpr const char* kReadResourceTool = "mcp_read_resource";

// The two tools over `manager` (held weakly: a tool that outlives it answers "MCP error:
// ... no MCP manager"). Calls follow the Tool contract: done runs once on `executor`.
std::vector<ToolPtr> make_resource_tools(Executor& executor, std::weak_ptr<McpManager> manager,
                                         const ResourceToolsOptions& options = {});

// Keeps the two tools in a registry while `options.mode` wants them: added when bound and
// after each on_catalog_changed, removed when no server offers resources any more, on
// unbind and on destruction. They are registered as host tools (McpSession's refresh
// replaces the registry's MCP-owned set with the manager's tools, so it would drop them),
// which also means they win over an MCP tool of the same name (a server "list" with a tool
// "resources"), as host tools do. A host tool the host itself registered under one of the
// names is left alone, with a warning. Single-threaded on the manager's executor; the
// registry and the logger (may be null) must outlive it.
class ResourceToolsBinding {
 public:
  explicit ResourceToolsBinding(ToolRegistry& registry, ResourceToolsOptions options = {},
                                Logger* logger = nullptr);
  ~ResourceToolsBinding();
  ResourceToolsBinding(const ResourceToolsBinding&) = delete;
  ResourceToolsBinding& operator=(const ResourceToolsBinding&) = delete;

  void bind(std::shared_ptr<McpManager> manager);  // replaces an earlier binding
  void unbind();                                   // removes the tools
  // Whether the two tools are in the registry now.
  bool exposed() const { return !tools_.empty(); }

 private:
  void update();
  void remove_tools();

  ToolRegistry& registry_;
  ResourceToolsOptions options_;
  Logger* logger_;
  std::shared_ptr<McpManager> manager_;
  std::uint64_t listener_ = 0;
  std::vector<ToolPtr> tools_;  // what this binding added to the registry
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace mcprt
