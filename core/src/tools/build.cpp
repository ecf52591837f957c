// build_mcp_tools (SPEC §6): every server's raw definitions → named, filtered, sorted
// McpTools. Naming runs over the exposed tools of all servers at once, so a collision
// between servers is settled the same way as one inside a server. The manager keeps its
// tool set incrementally (ToolSet, tool_set.hpp) out of the same pieces.

#include <algorithm>
#include <utility>

#include "jsonrpc/raw_json.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/tools.hpp"
#include "tools/tool_set.hpp"
#include "util/sort_order.hpp"

namespace mcprt {

const json& SharedJson::null_value() {
  static const json kNull;
  return kNull;
}

SharedJson::SharedJson(json value) : value_(std::make_shared<const json>(std::move(value))) {}

void SharedJson::parse_schema() const { lazy_->ensure_parsed(); }

std::string SharedJson::dump() const {
  std::string out;
  if (!lazy_) {
    out = get().dump(-1, ' ', false, json::error_handler_t::replace);
  } else if (value_.get() == lazy_->schema) {
    out = *detail::SharedJsonAccess::schema_text(*this);
  } else {
    detail::dump_with_raw_member(lazy_->definition, "inputSchema",
                                 *detail::SharedJsonAccess::schema_text(*this), out);
  }
  return out;
}

namespace detail {

void LazySchema::ensure_parsed() {
  if (state.load(std::memory_order_acquire) == parsed) return;
  int expected = unparsed;
  if (state.compare_exchange_strong(expected, parsing, std::memory_order_acq_rel)) {
    json value =
        parse_json(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
    *schema = value.is_discarded() ? json() : std::move(value);  // it was checked: it parses
    state.store(parsed, std::memory_order_release);
    return;
  }
  while (state.load(std::memory_order_acquire) != parsed) {
  }
}

SharedJson SharedJsonAccess::share(json definition) {
  auto schema = definition.is_object() ? definition.find("inputSchema") : definition.end();
  if (schema == definition.end() || !is_raw_json(*schema)) return SharedJson(std::move(definition));
  auto lazy = std::make_shared<LazySchema>();
  lazy->text = std::move(schema->get_binary());
  *schema = nullptr;
  lazy->definition = std::move(definition);
  lazy->schema = &lazy->definition["inputSchema"];
  SharedJson out(std::shared_ptr<const json>(lazy, &lazy->definition));
  out.lazy_ = lazy.get();
  return out;
}

std::optional<SharedJson> SharedJsonAccess::lazy_schema(const SharedJson& definition) {
  if (!definition.lazy_) return std::nullopt;
  SharedJson out(std::shared_ptr<const json>(definition.value_, definition.lazy_->schema));
  out.lazy_ = definition.lazy_;
  return out;
}

json SharedJsonAccess::as_listed(const SharedJson& definition) {
  if (!definition.lazy_) return definition.get();
  // Member by member: the schema's slot may be being parsed on another thread.
  json out = json::object();
  for (auto it = definition.lazy_->definition.begin(); it != definition.lazy_->definition.end(); ++it) {
    if (it.key() != "inputSchema") out[it.key()] = it.value();
  }
  out["inputSchema"] = make_raw_json(*schema_text(definition));
  return out;
}

std::optional<std::string_view> SharedJsonAccess::schema_text(const SharedJson& value) {
  if (!value.lazy_) return std::nullopt;
  const json::binary_t& text = value.lazy_->text;
  return std::string_view(reinterpret_cast<const char*>(text.data()), text.size());
}

}  // namespace detail

const json& McpTool::annotations() const {
  static const json kNone = json::object();
  // Without parsing a schema kept raw: annotations are read for every tool shown.
  const json& definition = detail::SharedJsonAccess::unparsed(info_.definition);
  auto it = definition.find("annotations");
  return it != definition.end() && it->is_object() ? *it : kNone;
}

bool requires_task_support(const json& definition) {
  if (!definition.is_object()) return false;
  auto execution = definition.find("execution");
  if (execution == definition.end() || !execution->is_object()) return false;
  auto support = execution->find("taskSupport");
  return support != execution->end() && support->is_string() &&
         support->get_ref<const std::string&>() == "required";
}

namespace detail {

namespace {

// {"type":"object"}: the schema of every tool that has none, shared by all of them.
const std::shared_ptr<const json>& default_input_schema() {
  static const auto kSchema = std::make_shared<const json>(json_object({{"type", "object"}}));
  return kSchema;
}

}  // namespace

const std::string* exposed_tool_name(const json& def, const ServerConfig* config,
                                     const ToolBuildOptions& options) {
  // tools/list already drops nameless entries; cached or host-supplied lists might not.
  if (!def.is_object()) return nullptr;
  auto name = def.find("name");
  if (name == def.end() || !name->is_string()) return nullptr;
  const std::string& raw = name->get_ref<const std::string&>();
  if (config && !tool_passes_filters(*config, raw)) return nullptr;
  if (!options.task_support && requires_task_support(def)) return nullptr;
  return &raw;
}

std::shared_ptr<McpTool> make_mcp_tool(Executor& executor, const std::string& server,
                                       const SourceInfo& source, bool deferred,
                                       const SharedJson& definition, const std::string& raw_name,
                                       std::string name, const std::weak_ptr<McpToolHost>& host,
                                       const ToolBuildOptions& options) {
  const json& def = SharedJsonAccess::unparsed(definition);  // a raw schema stays raw
  McpToolInfo info;
  info.name = std::move(name);
  info.raw_name = raw_name;
  info.server = server;
  if (auto it = def.find("description"); it != def.end() && it->is_string()) {
    info.description = it->get<std::string>();
  }
  if (auto lazy = SharedJsonAccess::lazy_schema(definition)) {
    info.input_schema = std::move(*lazy);  // raw text (always an object), parsed when read
  } else if (auto it = def.find("inputSchema"); it != def.end() && it->is_object()) {
    // Points into the shared definition (the aliasing constructor): no copy.
    info.input_schema = SharedJson(std::shared_ptr<const json>(definition.shared(), &*it));
  } else {
    info.input_schema = SharedJson(default_input_schema());
  }
  info.label = server + "/" + raw_name;
  info.path = "mcp:" + server;
  if (!source.provider_name.empty()) info.path += " via " + source.provider_name;
  info.deferred = deferred;
  info.definition = definition;
  info.annotations_trusted = std::find(options.trusted_servers.begin(),
                                       options.trusted_servers.end(),
                                       server) != options.trusted_servers.end();
  if (deferred) {
    return std::make_shared<DeferredMcpTool>(executor, std::move(info), host,
                                             options.max_result_bytes, options.spill);
  }
  return std::make_shared<McpTool>(executor, std::move(info), host, options.max_result_bytes,
                                   options.spill);
}

std::vector<SharedJson> share_definitions(std::vector<json> definitions) {
  std::vector<SharedJson> out;
  out.reserve(definitions.size());
  for (json& d : definitions) out.push_back(SharedJsonAccess::share(std::move(d)));
  return out;
}

}  // namespace detail

namespace {

struct Candidate {
  const ServerTools* server;
  SharedJson definition;
  std::string raw_name;
};

// `movable`: the same vector as `servers`, when its definitions may be moved out.
std::vector<std::shared_ptr<McpTool>> build(Executor& executor,
                                            const std::vector<ServerTools>& servers,
                                            std::vector<ServerTools>* movable,
                                            std::weak_ptr<McpToolHost> host,
                                            const ToolBuildOptions& options) {
  std::vector<Candidate> candidates;
  for (std::size_t si = 0; si < servers.size(); ++si) {
    const ServerTools& s = servers[si];
    for (std::size_t di = 0; di < s.definitions.size(); ++di) {
      const std::string* raw = detail::exposed_tool_name(s.definitions[di], s.config, options);
      if (!raw) continue;
      std::string raw_name = *raw;  // read before the definition may be moved away
      SharedJson shared = movable ? SharedJson(std::move((*movable)[si].definitions[di]))
                                  : SharedJson(s.definitions[di]);
      candidates.push_back({&s, std::move(shared), std::move(raw_name)});
    }
  }

  std::vector<RawToolRef> refs;
  refs.reserve(candidates.size());
  for (const auto& c : candidates) refs.push_back({c.server->server, c.raw_name});
  std::vector<std::string> names = assign_tool_names(refs, options.max_tool_name_length);

  std::vector<std::shared_ptr<McpTool>> tools;
  tools.reserve(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    tools.push_back(detail::make_mcp_tool(executor, c.server->server, c.server->source,
                                          c.server->deferred, c.definition, c.raw_name,
                                          std::move(names[i]), host, options));
  }
  detail::sort_by(tools, [](const auto& a, const auto& b) { return a->name() < b->name(); });
  return tools;
}

}  // namespace

std::vector<std::shared_ptr<McpTool>> build_mcp_tools(Executor& executor,
                                                      const std::vector<ServerTools>& servers,
                                                      std::weak_ptr<McpToolHost> host,
                                                      const ToolBuildOptions& options) {
  return build(executor, servers, nullptr, std::move(host), options);
}

std::vector<std::shared_ptr<McpTool>> build_mcp_tools(Executor& executor,
                                                      std::vector<ServerTools>&& servers,
                                                      std::weak_ptr<McpToolHost> host,
                                                      const ToolBuildOptions& options) {
  // `servers` is ours (an rvalue): its definitions are moved out, never copied.
  return build(executor, servers, &servers, std::move(host), options);
}

}  // namespace mcprt
