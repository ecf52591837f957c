#include <algorithm>
#include <utility>

#include "mcprt/json_object.hpp"
#include "mcprt/session.hpp"

namespace mcprt {
namespace {

// Wraps an McpTool under its name (SPEC §8): the registry holds its own handle, so the
// agent-facing entry stays valid even when the manager rebuilds its tool objects.
class RegisteredMcpTool final : public Tool {
 public:
  explicit RegisteredMcpTool(std::shared_ptr<McpTool> tool) : tool_(std::move(tool)) {}
  const std::string& name() const override { return tool_->name(); }
  const std::string& description() const override { return tool_->description(); }
  const json& input_schema() const override { return tool_->input_schema(); }
  void call(json arguments, ToolCallOptions options, ToolDone done) override {
    tool_->call(std::move(arguments), std::move(options), std::move(done));
  }

 private:
  std::shared_ptr<McpTool> tool_;
};

}  // namespace

ToolRegistry::ToolRegistry(Executor& executor) : executor_(executor) {}

Status ToolRegistry::add_tool(ToolPtr tool) {
  if (!tool) return Error::make(ErrorCode::invalid_argument, "add_tool: the tool is null");
  const std::string name = tool->name();
  if (name.empty()) return Error::make(ErrorCode::invalid_argument, "add_tool: the tool has no name");
  if (host_.count(name)) {
    return Error::make(ErrorCode::invalid_argument,
                       "add_tool: a tool named \"" + name + "\" is already registered");
  }
  host_.emplace(name, std::move(tool));
  changed();
  return {};
}

bool ToolRegistry::remove_tool(const std::string& name) {
  if (host_.erase(name) == 0) return false;
  changed();
  return true;
}

void ToolRegistry::refresh_mcp_tools(const std::vector<std::shared_ptr<McpTool>>& tools) {
  // The manager's set is sorted by unique names: merge it into mcp_ in place. Anything
  // else (unsorted, duplicate names) takes the general path below.
  bool sorted = true;
  for (std::size_t i = 0; i < tools.size() && sorted; ++i) {
    sorted = tools[i] && !tools[i]->name().empty() &&
             (i == 0 || tools[i - 1]->name() < tools[i]->name());
  }
  if (!sorted) {
    std::vector<ToolPtr> wrapped;
    wrapped.reserve(tools.size());
    for (const auto& t : tools) {
      if (t) wrapped.push_back(std::make_shared<RegisteredMcpTool>(t));
    }
    refresh_mcp_tools(wrapped);  // (sources unknown: the next refresh wraps anew)
    return;
  }
  auto it = mcp_.begin();
  for (const auto& t : tools) {
    const std::string& name = t->name();
    while (it != mcp_.end() && it->first < name) it = mcp_.erase(it);
    if (it != mcp_.end() && it->first == name) {
      if (it->second.source != t.get()) {
        it->second = {std::make_shared<RegisteredMcpTool>(t), t.get()};
      }
      ++it;
    } else {
      mcp_.emplace_hint(it, name, McpEntry{std::make_shared<RegisteredMcpTool>(t), t.get()});
    }
  }
  mcp_.erase(it, mcp_.end());
  changed();
}

void ToolRegistry::refresh_mcp_tools(const std::vector<ToolPtr>& tools) {
  // Everything MCP-owned goes, whatever its name; host tools stay.
  mcp_.clear();
  for (const auto& t : tools) {
    // The first of a name wins.
    if (t && !t->name().empty()) mcp_.emplace(t->name(), McpEntry{t, nullptr});
  }
  changed();
}

ToolPtr ToolRegistry::find(const std::string& name) const {
  if (auto it = host_.find(name); it != host_.end()) return it->second;
  if (auto it = mcp_.find(name); it != mcp_.end()) return it->second.tool;
  return nullptr;
}

bool ToolRegistry::is_mcp_tool(const std::string& name) const {
  return !host_.count(name) && mcp_.count(name);
}

std::vector<ToolPtr> ToolRegistry::tools() const {
  std::vector<ToolPtr> out;
  out.reserve(host_.size() + mcp_.size());
  // Both maps are sorted; merge them, the host tool winning a shared name.
  auto h = host_.begin();
  auto m = mcp_.begin();
  while (h != host_.end() || m != mcp_.end()) {
    if (m == mcp_.end() || (h != host_.end() && h->first <= m->first)) {
      if (m != mcp_.end() && h->first == m->first) ++m;
      out.push_back((h++)->second);
    } else {
      out.push_back((m++)->second.tool);
    }
  }
  return out;
}

std::vector<std::string> ToolRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& t : tools()) out.push_back(t->name());
  return out;
}

std::size_t ToolRegistry::mcp_tool_count() const {
  std::size_t n = 0;
  for (const auto& [name, tool] : mcp_) n += host_.count(name) ? 0 : 1;
  return n;
}

std::vector<std::string> ToolRegistry::mcp_conflicts() const {
  std::vector<std::string> out;
  for (const auto& [name, tool] : mcp_) {
    if (host_.count(name)) out.push_back(name);
  }
  return out;
}

void ToolRegistry::call(const std::string& name, json arguments, ToolCallOptions options,
                        ToolDone done) {
  ToolPtr tool = find(name);
  if (!tool && resolver_) tool = resolver_(name);
  if (!tool) {
    executor_.post([name, done = std::move(done)] {
      ToolResult r;
      r.is_error = true;
      r.text = "Unknown tool: " + name;
      r.content = json::array({json_object({{"type", "text"}, {"text", r.text}})});
      done(std::move(r));
    });
    return;
  }
  tool->call(std::move(arguments), std::move(options), std::move(done));
}

std::uint64_t ToolRegistry::on_changed(std::function<void()> listener) {
  const std::uint64_t id = next_listener_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void ToolRegistry::remove_listener(std::uint64_t id) { listeners_.erase(id); }

void ToolRegistry::set_resolver(std::function<ToolPtr(const std::string& name)> resolver) {
  resolver_ = std::move(resolver);
}

void ToolRegistry::changed() {
  ++generation_;
  // A listener may remove itself (or others) while we iterate: work on a copy of the ids.
  std::vector<std::uint64_t> ids;
  for (const auto& [id, fn] : listeners_) ids.push_back(id);
  for (auto id : ids) {
    auto it = listeners_.find(id);
    if (it == listeners_.end()) continue;
    auto fn = it->second;
    fn();
  }
}

}  // namespace mcprt
