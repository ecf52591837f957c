#pragma once
// The pieces build_mcp_tools and the manager's incremental tool set share, and the tool set
// itself. Internal to core.
//
// ToolSet is the manager's merged tool set (SPEC §5.1 `tools`, §6), kept per server slice.
// Replacing or removing one server's slice costs O(its tools · log all tools): its tools are
// built around its shared definitions (never copied), and every other server's tool objects
// stay as they are. The names are exactly those build_mcp_tools gives for the same slices:
// while no two exposed tools share a plain name (make_tool_name), every tool carries its
// plain name; when a change involves a collision (before or after it), the names of the
// whole set are assigned again (strings only) and only the tools whose name changed are
// built anew. The sorted vector is made when it is read after a change.

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/tools.hpp"
#include "util/string_order.hpp"

namespace mcprt::detail {

// A listed definition whose inputSchema is still the raw text (jsonrpc/raw_json.hpp):
// `definition` has the member, null until ensure_parsed() puts the parsed schema there.
// Members other than inputSchema never change, so they can be read without parsing.
//
// The core runs on one thread, but a host may read a tool's schema from another (the
// SharedJson it holds reads like an immutable value), so the first read parses under an
// atomic state: one thread parses, any other that reads meanwhile waits the microseconds
// that takes (core/ has no mutex: SPEC's platform-neutral core).
struct LazySchema {
  json definition;
  json::binary_t text;
  json* schema = nullptr;  // &definition["inputSchema"]
  enum State : int { unparsed, parsing, parsed };
  std::atomic<int> state{unparsed};
  void ensure_parsed();
};

struct SharedJsonAccess {
  // `definition` as a shared value; lazy when its inputSchema is a raw placeholder.
  static SharedJson share(json definition);
  // The inputSchema of a definition made by share(), sharing its state (null when the
  // definition is not lazy).
  static std::optional<SharedJson> lazy_schema(const SharedJson& definition);
  // The definition without parsing its schema: read members other than inputSchema only.
  static const json& unparsed(const SharedJson& definition) {
    return definition.lazy_ ? definition.lazy_->definition : definition.get();
  }
  // The raw text of a lazy definition's (or schema's) inputSchema, parsed or not; nullopt
  // for any other value.
  static std::optional<std::string_view> schema_text(const SharedJson& value);
  // A copy of the definition as it was listed: a lazy one's inputSchema is a raw
  // placeholder again (its text copied, not parsed).
  static json as_listed(const SharedJson& definition);
  // Whether a lazy value's schema was parsed (false for any other value).
  static bool schema_parsed(const SharedJson& value) {
    return value.lazy_ && value.lazy_->state.load() == LazySchema::parsed;
  }
};

// The raw name of `definition` when it becomes a tool of a server with `config` (null = no
// filter): an object with a string `name` that passes include/exclude. Else null.
const std::string* exposed_tool_name(const json& definition, const ServerConfig* config,
                                     const ToolBuildOptions& options);

// One McpTool (a DeferredMcpTool when `deferred`) around a shared definition.
std::shared_ptr<McpTool> make_mcp_tool(Executor& executor, const std::string& server,
                                       const SourceInfo& source, bool deferred,
                                       const SharedJson& definition, const std::string& raw_name,
                                       std::string name, const std::weak_ptr<McpToolHost>& host,
                                       const ToolBuildOptions& options);

// Definitions as listed → shared immutable values (moved, not copied).
std::vector<SharedJson> share_definitions(std::vector<json> definitions);

class ToolSet {
 public:
  ToolSet(Executor& executor, std::weak_ptr<McpToolHost> host, ToolBuildOptions options);

  // Installs `server`'s slice in place of the one it had (if any). `config` is read
  // during the call only.
  void replace(const std::string& server, const ServerConfig* config, const SourceInfo& source,
               const std::vector<SharedJson>& definitions, bool deferred);
  void remove(const std::string& server);
  void clear();

  bool empty() const { return by_name_.empty(); }
  std::size_t count(const std::string& server) const;
  // Every tool, sorted by name.
  const std::vector<std::shared_ptr<McpTool>>& tools() const;
  std::shared_ptr<McpTool> find(const std::string& name) const;

 private:
  struct Entry {
    std::string raw;
    std::string plain;  // make_tool_name(server, raw): the name unless it collides
    SharedJson definition;
    std::shared_ptr<McpTool> tool;
  };
  struct Slice {
    SourceInfo source;
    bool deferred = false;
    std::vector<Entry> entries;
  };

  void claim(const std::string& plain);
  void unclaim(const std::string& plain);
  void drop_entries(Slice& slice);
  std::shared_ptr<McpTool> make(const std::string& server, const Slice& slice, const Entry& e,
                                std::string name) const;
  void assign_all_names();

  Executor& executor_;
  std::weak_ptr<McpToolHost> host_;
  ToolBuildOptions options_;
  std::map<std::string, Slice> slices_;                      // by server
  std::map<std::string, std::shared_ptr<McpTool>, StringOrder> by_name_;  // the merged set
  std::map<std::string, std::size_t, StringOrder> plain_claims_;  // plain name → claimants
  std::size_t contested_ = 0;                                // plain names with 2+ claimants
  mutable std::vector<std::shared_ptr<McpTool>> sorted_;
  mutable bool sorted_stale_ = false;
};

}  // namespace mcprt::detail
