#include <algorithm>
#include <set>
#include <string_view>
#include <map>
#include <utility>

#include "mcprt/json_object.hpp"
#include "mcprt/session.hpp"
#include "tools/tool_set.hpp"

namespace mcprt {
namespace {

void post_error_result(Executor& executor, Error error, ToolDone done) {
  executor.post([error = std::move(error), done = std::move(done)] {
    done(mcp_error_result(error));
  });
}

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// Server instructions are scanned for tool names up to this many bytes.
constexpr std::size_t kInstructionsScanBytes = 16 * 1024;
constexpr std::size_t kToolSearchQueryMaxBytes = 1024;
constexpr std::size_t kDescriptionServerNames = 20;

bool meta_always_load(const json& definition) {
  if (!definition.is_object()) return false;
  auto meta = definition.find("_meta");
  if (meta == definition.end() || !meta->is_object()) return false;
  auto flag = meta->find("anthropic/alwaysLoad");
  return flag != meta->end() && flag->is_boolean() && flag->get<bool>();
}

bool is_tool_name_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// Whether `text` holds `word` as a whole word (not inside a longer name).
bool names_word(std::string_view text, std::string_view word) {
  if (word.empty()) return false;
  for (std::size_t pos = text.find(word); pos != std::string_view::npos;
       pos = text.find(word, pos + 1)) {
    const bool left = pos == 0 || !is_tool_name_byte(text[pos - 1]);
    const std::size_t end = pos + word.size();
    const bool right = end == text.size() || !is_tool_name_byte(text[end]);
    if (left && right) return true;
  }
  return false;
}

ToolResult text_tool_result(std::string text, json structured, bool is_error) {
  ToolResult r;
  r.content = json::array({json_object({{"type", "text"}, {"text", text}})});
  r.structured_content = std::move(structured);
  r.is_error = is_error;
  r.text = std::move(text);
  return r;
}

// mcp_tool_search: runs the session's search-and-load. The session may be gone by the
// time the model calls it (a registry that outlived its session): then it says so.
class ToolSearchMetaTool final : public Tool {
 public:
  using Run = std::function<ToolResult(const std::string& query, std::size_t limit)>;
  ToolSearchMetaTool(Executor& executor, Run run) : executor_(executor), run_(std::move(run)) {}
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const json& input_schema() const override { return schema(); }
  void set_description(std::string d) { description_ = std::move(d); }

  void call(json arguments, ToolCallOptions options, ToolDone done) override {
    if (options.signal.aborted()) {
      executor_.post([done = std::move(done)] {
        done(Error::make(ErrorCode::aborted, "mcp_tool_search: aborted"));
      });
      return;
    }
    ToolResult result = run(arguments);
    executor_.post([r = std::move(result), done = std::move(done)]() mutable { done(std::move(r)); });
  }

 private:
  static const json& schema() {
    // Built, not parsed: the web module links no JSON text parser of nlohmann's.
    static const json s = json_object(
        {{"type", "object"},
         {"properties",
          json_object(
              {{"query",
                json_object({{"type", "string"},
                             {"description",
                              "What you want to do (\"read a file\"), a tool name, or "
                              "select:name1,name2 to load tools by exact name. +word requires "
                              "the word in the tool name."}})},
               {"limit", json_object({{"type", "integer"},
                                      {"minimum", 1},
                                      {"maximum", static_cast<int>(kToolSearchMaxLimit)},
                                      {"description", "At most this many tools (default 8)."}})}})},
         {"required", json::array({"query"})}});
    return s;
  }

  ToolResult run(const json& arguments) {
    auto fail = [](std::string message) {
      return text_tool_result("mcp_tool_search: " + message, nullptr, true);
    };
    if (!arguments.is_object()) return fail("the arguments must be an object {query, limit?}");
    auto q = arguments.find("query");
    if (q == arguments.end() || !q->is_string()) return fail("\"query\" must be a string");
    const std::string& query = q->get_ref<const std::string&>();
    if (query.find_first_not_of(" \t\r\n") == std::string::npos) {
      return fail("\"query\" is empty: describe the task, or give select:<tool name>");
    }
    if (query.size() > kToolSearchQueryMaxBytes) {
      return fail("\"query\" is " + std::to_string(query.size()) + " bytes; at most " +
                  std::to_string(kToolSearchQueryMaxBytes) + " are allowed");
    }
    std::size_t limit = 0;
    if (auto l = arguments.find("limit"); l != arguments.end() && !l->is_null()) {
      if (!l->is_number_integer() || l->get<long long>() < 1 ||
          l->get<long long>() > static_cast<long long>(kToolSearchMaxLimit)) {
        return fail("\"limit\" must be an integer from 1 to " + std::to_string(kToolSearchMaxLimit));
      }
      limit = static_cast<std::size_t>(l->get<long long>());
    }
    return run_(query, limit);
  }

  Executor& executor_;
  Run run_;
  std::string name_ = kToolSearchTool;
  std::string description_;
};

}  // namespace

Result<ToolSearchMode> parse_tool_search_mode(std::string_view text) {
  if (text == "auto" || text == "automatic") return ToolSearchMode::automatic;
  if (text == "on" || text == "true") return ToolSearchMode::on;
  if (text == "off" || text == "false") return ToolSearchMode::off;
  return Error::make(ErrorCode::invalid_argument,
                     "tool search mode \"" + std::string(text) + "\": expected auto, on or off");
}

const char* to_string(ToolSearchMode mode) {
  switch (mode) {
    case ToolSearchMode::automatic:
      return "auto";
    case ToolSearchMode::on:
      return "on";
    case ToolSearchMode::off:
      return "off";
  }
  return "auto";
}

std::size_t estimate_tool_tokens(const McpToolInfo& info) {
  // A schema kept as the server's text (SharedJson) is counted as that text, unparsed.
  const std::optional<std::string_view> text = detail::SharedJsonAccess::schema_text(info.input_schema);
  const std::size_t bytes = info.name.size() + info.description.size() +
                            (text ? text->size() : info.input_schema.get().dump().size());
  return (bytes + 3) / 4;
}

// --- McpSession's tool-search state -------------------------------------------------------

struct McpSession::Search {
  ToolSearchOptions options;
  bool active = false;
  std::set<std::string> loaded;                // what searches, loads and calls loaded
  std::set<std::string> always;                // config, _meta, instructions (this refresh)
  std::vector<std::shared_ptr<McpTool>> tools;  // every MCP tool, sorted (the manager's)
  std::map<std::string, const McpTool*, std::less<>> by_name;
  mutable ToolSearchIndex index;
  mutable bool index_stale = true;
  std::shared_ptr<ToolSearchMetaTool> meta_tool;
  bool meta_registered = false;
  bool warned_name_taken = false;

  bool visible(const std::string& name) const {
    return !active || always.count(name) != 0 || loaded.count(name) != 0;
  }
  const ToolSearchIndex& current_index() const {
    if (index_stale) {
      index.rebuild(tools);
      index_stale = false;
    }
    return index;
  }
};

// --- ProxyMcpTool -------------------------------------------------------------------------

ProxyMcpTool::ProxyMcpTool(Executor& executor, McpToolInfo info, std::weak_ptr<McpManager> parent)
    : executor_(executor), info_(std::move(info)), parent_(std::move(parent)) {}

void ProxyMcpTool::call(json arguments, ToolCallOptions options, ToolDone done) {
  auto parent = parent_.lock();
  if (!parent) {
    return post_error_result(
        executor_,
        Error::make(ErrorCode::not_connected,
                    "Server " + in_quotes(info_.server) +
                        ": the parent session has shut down its MCP connections"),
        std::move(done));
  }
  // Unknown, or a row left by disconnect_server (disconnected without an error).
  const auto state = parent->server_state(info_.server);
  if (!state || (state->phase == ServerPhase::disconnected && !state->last_error)) {
    return post_error_result(
        executor_,
        Error::make(ErrorCode::not_connected, "Server " + in_quotes(info_.server) +
                                                  " was disconnected by the parent session"),
        std::move(done));
  }
  // The parent's current tool object for the same (server, raw tool): it holds the live
  // connection, or waits for it when the parent is reconnecting.
  for (const auto& tool : parent->tools()) {
    if (tool && tool->info().server == info_.server && tool->info().raw_name == info_.raw_name) {
      return tool->call(std::move(arguments), std::move(options), std::move(done));
    }
  }
  post_error_result(executor_,
                    Error::make(ErrorCode::not_connected,
                                "Server " + in_quotes(info_.server) + " no longer offers tool " +
                                    in_quotes(info_.raw_name) + " in the parent session"),
                    std::move(done));
}

// --- McpSession ---------------------------------------------------------------------------

McpSession::McpSession(ToolRegistry& registry, Logger* logger, ToolSearchOptions tool_search)
    : registry_(registry), logger_(logger), search_(std::make_unique<Search>()) {
  search_->options = tool_search;
  std::weak_ptr<bool> alive = alive_;
  search_->meta_tool = std::make_shared<ToolSearchMetaTool>(
      registry_.executor(), [this, alive](const std::string& query, std::size_t limit) {
        auto a = alive.lock();
        if (!a || !*a) {
          return text_tool_result("mcp_tool_search: the MCP session has ended", nullptr, true);
        }
        return run_tool_search(query, limit);
      });
  registry_.set_resolver([this, alive](const std::string& name) -> ToolPtr {
    auto a = alive.lock();
    if (!a || !*a || !search_->active || search_->by_name.count(name) == 0) return nullptr;
    load_tools({name});
    return registry_.find(name);
  });
}

McpSession::~McpSession() {
  *alive_ = false;
  registry_.set_resolver(nullptr);
  unbind();
  install_search_tool(false);
}

void McpSession::bind(std::shared_ptr<McpManager> manager) {
  unbind();
  manager_ = std::move(manager);
  if (!manager_) {
    refresh();  // no tools
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  listener_ = manager_->on_tools_changed([this, alive] {
    if (auto a = alive.lock(); a && *a) refresh();
  });
  refresh();
}

void McpSession::unbind() {
  std::shared_ptr<McpManager> m = child_ ? parent_manager_.lock() : manager_;
  if (m && listener_ != 0) m->remove_listener(listener_);
  listener_ = 0;
  manager_.reset();
  parent_manager_.reset();
}

std::shared_ptr<McpManager> McpSession::source_manager() const {
  return child_ ? parent_manager_.lock() : manager_;
}

void McpSession::refresh() {
  Search& s = *search_;
  const std::shared_ptr<McpManager> m = source_manager();
  s.tools = m ? m->tools() : std::vector<std::shared_ptr<McpTool>>{};
  s.index_stale = true;
  s.by_name.clear();
  for (const auto& t : s.tools) {
    if (t) s.by_name.emplace(t->name(), t.get());
  }

  // Active? (automatic: by tool count, or by the definitions' estimated tokens.)
  switch (s.options.mode) {
    case ToolSearchMode::on:
      s.active = true;
      break;
    case ToolSearchMode::off:
      s.active = false;
      break;
    case ToolSearchMode::automatic: {
      s.active = s.tools.size() > s.options.auto_tool_threshold;
      if (!s.active && s.options.auto_token_budget > 0) {
        std::size_t tokens = 0;
        for (const auto& t : s.tools) {
          if (t) tokens += estimate_tool_tokens(t->info());
        }
        s.active = tokens > s.options.auto_token_budget;
      }
      break;
    }
  }

  // Always loaded: the server's alwaysLoad, the tool's _meta, a name in the instructions.
  s.always.clear();
  if (s.active && m) {
    std::map<std::string, std::pair<bool, std::string>> servers;  // always_load, instructions
    for (const auto& t : s.tools) {
      if (!t) continue;
      const McpToolInfo& info = t->info();
      auto it = servers.find(info.server);
      if (it == servers.end()) {
        const ServerConfig* config = m->server_config(info.server);
        std::string instructions = m->instructions(info.server);
        if (instructions.size() > kInstructionsScanBytes) instructions.resize(kInstructionsScanBytes);
        it = servers.emplace(info.server, std::make_pair(config && config->always_load,
                                                         std::move(instructions)))
                 .first;
      }
      const auto& [server_always, instructions] = it->second;
      if (server_always || meta_always_load(detail::SharedJsonAccess::unparsed(info.definition)) ||
          names_word(instructions, info.raw_name) || names_word(instructions, info.name)) {
        s.always.insert(info.name);
      }
    }
  }

  if (!child_) {
    if (!s.active) {
      registry_.refresh_mcp_tools(s.tools);
    } else {
      std::vector<std::shared_ptr<McpTool>> visible;
      for (const auto& t : s.tools) {
        if (t && s.visible(t->name())) visible.push_back(t);
      }
      registry_.refresh_mcp_tools(visible);
    }
  } else {
    std::vector<ToolPtr> proxies;
    for (const auto& tool : s.tools) {
      if (!tool || !s.visible(tool->name())) continue;
      proxies.push_back(
          std::make_shared<ProxyMcpTool>(registry_.executor(), tool->info(), parent_manager_));
    }
    registry_.refresh_mcp_tools(proxies);
  }
  install_search_tool(s.active);
}

void McpSession::install_search_tool(bool active) {
  Search& s = *search_;
  if (active) {
    std::set<std::string> servers;
    std::size_t deferred = 0;
    for (const auto& t : s.tools) {
      if (!t || s.visible(t->name())) continue;
      ++deferred;
      servers.insert(t->info().server);
    }
    std::string names;
    std::size_t listed = 0;
    for (const auto& server : servers) {
      if (listed++ == kDescriptionServerNames) {
        names += ", ...";
        break;
      }
      names += (names.empty() ? "" : ", ") + server;
    }
    s.meta_tool->set_description(
        "Finds MCP tools that are not loaded yet and loads them. " + std::to_string(deferred) +
        " MCP tools" + (names.empty() ? std::string() : " from " + names) +
        " are deferred: describe what you want to do (\"read a file\"), give a tool name, or "
        "select:name1,name2 to load tools by exact name; +word requires the word in the name. "
        "Found tools stay loaded for the rest of the conversation, and their definitions come "
        "back in the result.");
    if (s.meta_registered) return;
    if (registry_.find(kToolSearchTool) && !registry_.is_mcp_tool(kToolSearchTool)) {
      if (!s.warned_name_taken && logger_) {
        logger_->warn(std::string("tool search: the host already has a tool named ") +
                      kToolSearchTool + "; deferred MCP tools can only be loaded by name");
      }
      s.warned_name_taken = true;
      return;
    }
    s.meta_registered = registry_.add_tool(s.meta_tool).ok();
  } else if (s.meta_registered) {
    s.meta_registered = false;
    registry_.remove_tool(kToolSearchTool);
  }
}

ToolResult McpSession::run_tool_search(const std::string& query, std::size_t limit) {
  Search& s = *search_;
  ToolSearchResult found = search_tools(query, limit);
  std::vector<std::string> names;
  for (const auto& hit : found.hits) names.push_back(hit.name);
  load_tools(names);

  json tools = json::array();
  std::string text;
  for (const auto& hit : found.hits) {
    auto it = s.by_name.find(hit.name);
    if (it == s.by_name.end()) continue;
    const McpToolInfo& info = it->second->info();
    tools.push_back(json_object({{"name", info.name},
                                 {"server", info.server},
                                 {"description", info.description},
                                 {"inputSchema", info.input_schema.get()}}));
    text += "\n## " + info.name + "\n" + info.description + "\nInput schema: " +
            info.input_schema.get().dump() + "\n";
  }
  std::string head;
  if (tools.empty()) {
    head = "No MCP tool matches " + in_quotes(query) + ". " + std::to_string(s.tools.size()) +
           " MCP tools are known; try other words, a tool name, or select:<name>.";
  } else {
    head = "Loaded " + std::to_string(tools.size()) + (tools.size() == 1 ? " tool" : " tools") +
           " for " + in_quotes(query) + "; they can be called now.";
  }
  if (!found.not_found.empty()) {
    head += "\nNo such tool: ";
    for (std::size_t i = 0; i < found.not_found.size(); ++i) {
      head += (i ? ", " : "") + found.not_found[i];
    }
    head += ".";
  }
  json not_found = json::array();
  for (auto& n : found.not_found) not_found.push_back(std::move(n));
  return text_tool_result(head + "\n" + text,
                          json_object({{"tools", std::move(tools)}, {"notFound", std::move(not_found)}}),
                          false);
}

void McpSession::set_tool_search(ToolSearchOptions options) {
  search_->options = options;
  refresh();
}

const ToolSearchOptions& McpSession::tool_search_options() const { return search_->options; }

bool McpSession::tool_search_active() const { return search_->active; }

std::vector<ToolCatalogEntry> McpSession::catalog() const {
  std::vector<ToolCatalogEntry> out;
  out.reserve(search_->tools.size());
  for (const auto& t : search_->tools) {
    if (!t) continue;
    out.push_back({t->name(), t->info().server, summarize_description(t->description()),
                   search_->visible(t->name())});
  }
  return out;
}

std::string McpSession::catalog_text() const {
  std::string out;
  for (const auto& t : search_->tools) {
    if (!t || search_->visible(t->name())) continue;
    out += t->name() + ": " + summarize_description(t->description()) + "\n";
  }
  return out;
}

ToolSearchResult McpSession::search_tools(std::string_view query, std::size_t limit) const {
  return search_->current_index().search(query, limit);
}

std::vector<std::string> McpSession::load_tools(const std::vector<std::string>& names) {
  std::vector<std::string> unknown;
  bool added = false;
  for (const auto& name : names) {
    if (search_->by_name.count(name) == 0) {
      unknown.push_back(name);
      continue;
    }
    added = search_->loaded.insert(name).second || added;
  }
  if (added && search_->active) refresh();
  return unknown;
}

std::vector<std::string> McpSession::loaded_tools() const {
  return {search_->loaded.begin(), search_->loaded.end()};
}

void McpSession::reset_loaded_tools() {
  if (search_->loaded.empty()) return;
  search_->loaded.clear();
  if (search_->active) refresh();
}

void McpSession::wait_for_server(const std::string& server, AbortSignal signal,
                                 std::function<void(Status)> done) {
  std::shared_ptr<McpManager> m = child_ ? parent_manager_.lock() : manager_;
  if (!m) {
    registry_.executor().post([server, done = std::move(done)] {
      done(Error::make(ErrorCode::not_connected,
                       "Server " + in_quotes(server) + ": no MCP manager is bound to the session"));
    });
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  std::weak_ptr<McpManager> weak_m = m;
  m->wait_for_connection(server, std::move(signal),
                         [this, alive, weak_m, server, done = std::move(done)](Status s) {
                           auto a = alive.lock();
                           auto mm = weak_m.lock();
                           if (s.ok() && a && *a && mm &&
                               mm->connection_status(server) == ConnectionStatus::connected) {
                             refresh();
                           }
                           done(std::move(s));
                         });
}

std::unique_ptr<McpSession> McpSession::make_child(ToolRegistry& child_registry) const {
  auto child = std::make_unique<McpSession>(child_registry, logger_, search_->options);
  child->child_ = true;
  // A grandchild proxies straight to the one manager that owns the connections.
  child->parent_manager_ = child_ ? parent_manager_ : std::weak_ptr<McpManager>(manager_);
  if (auto parent = child->parent_manager_.lock()) {
    std::weak_ptr<bool> alive = child->alive_;
    McpSession* raw = child.get();
    child->listener_ = parent->on_tools_changed([raw, alive] {
      if (auto a = alive.lock(); a && *a) raw->refresh();
    });
  }
  child->refresh();
  return child;
}

}  // namespace mcprt
