// ToolSet (tool_set.hpp): the manager's tool set, updated one server slice at a time.

#include "tools/tool_set.hpp"

#include <utility>

namespace mcprt::detail {

ToolSet::ToolSet(Executor& executor, std::weak_ptr<McpToolHost> host, ToolBuildOptions options)
    : executor_(executor), host_(std::move(host)), options_(options) {}

void ToolSet::claim(const std::string& plain) {
  if (++plain_claims_[plain] == 2) ++contested_;
}

void ToolSet::unclaim(const std::string& plain) {
  auto it = plain_claims_.find(plain);
  if (it == plain_claims_.end()) return;
  if (it->second-- == 2) --contested_;
  if (it->second == 0) plain_claims_.erase(it);
}

void ToolSet::drop_entries(Slice& slice) {
  for (const Entry& e : slice.entries) {
    if (e.tool) by_name_.erase(e.tool->name());
    unclaim(e.plain);
  }
  slice.entries.clear();
}

std::shared_ptr<McpTool> ToolSet::make(const std::string& server, const Slice& slice,
                                       const Entry& e, std::string name) const {
  return make_mcp_tool(executor_, server, slice.source, slice.deferred, e.definition, e.raw,
                       std::move(name), host_, options_);
}

void ToolSet::replace(const std::string& server, const ServerConfig* config,
                      const SourceInfo& source, const std::vector<SharedJson>& definitions,
                      bool deferred) {
  const bool contested_before = contested_ > 0;
  Slice& slice = slices_[server];
  drop_entries(slice);
  slice.source = source;
  slice.deferred = deferred;
  slice.entries.reserve(definitions.size());
  for (const SharedJson& def : definitions) {
    const std::string* raw = exposed_tool_name(SharedJsonAccess::unparsed(def), config, options_);
    if (!raw) continue;
    Entry e;
    e.raw = *raw;
    e.plain = make_tool_name(server, e.raw, options_.max_tool_name_length);
    e.definition = def;
    claim(e.plain);
    slice.entries.push_back(std::move(e));
  }
  sorted_stale_ = true;
  if (contested_before || contested_ > 0) return assign_all_names();
  for (Entry& e : slice.entries) {
    e.tool = make(server, slice, e, e.plain);
    by_name_.emplace(e.plain, e.tool);
  }
}

void ToolSet::remove(const std::string& server) {
  auto it = slices_.find(server);
  if (it == slices_.end()) return;
  const bool contested_before = contested_ > 0;
  drop_entries(it->second);
  slices_.erase(it);
  sorted_stale_ = true;
  // A tool that lost a collision to one of these may get its plain name back.
  if (contested_before) assign_all_names();
}

void ToolSet::clear() {
  slices_.clear();
  by_name_.clear();
  plain_claims_.clear();
  contested_ = 0;
  sorted_.clear();
  sorted_stale_ = false;
}

// The rare path: some plain name has (or had) two claimants. Names over every slice, as
// build_mcp_tools assigns them; a tool is rebuilt only when its name changed.
void ToolSet::assign_all_names() {
  std::vector<RawToolRef> refs;
  std::vector<std::pair<const std::string*, Entry*>> owners;
  for (auto& [server, slice] : slices_) {
    for (Entry& e : slice.entries) {
      refs.push_back({server, e.raw});
      owners.emplace_back(&server, &e);
    }
  }
  std::vector<std::string> names = assign_tool_names(refs, options_.max_tool_name_length);
  by_name_.clear();
  for (std::size_t i = 0; i < owners.size(); ++i) {
    const std::string& server = *owners[i].first;
    Entry& e = *owners[i].second;
    if (!e.tool || e.tool->name() != names[i])
      e.tool = make(server, slices_.at(server), e, names[i]);
    by_name_.emplace(std::move(names[i]), e.tool);
  }
  sorted_stale_ = true;
}

std::size_t ToolSet::count(const std::string& server) const {
  auto it = slices_.find(server);
  return it == slices_.end() ? 0 : it->second.entries.size();
}

const std::vector<std::shared_ptr<McpTool>>& ToolSet::tools() const {
  if (sorted_stale_) {
    sorted_.clear();
    sorted_.reserve(by_name_.size());
    for (const auto& [name, tool] : by_name_) sorted_.push_back(tool);
    sorted_stale_ = false;
  }
  return sorted_;
}

std::shared_ptr<McpTool> ToolSet::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace mcprt::detail
