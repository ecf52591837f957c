#pragma once
// The tool bridge (SPEC §6): MCP tool definitions → agent tools named `mcp_<server>_<tool>`.
//
//   auto tools = build_mcp_tools(executor, {{"fs", &fs_cfg, fs_source, defs, false}},
//                                host, ToolBuildOptions{});
//   tools[0]->call(args, {.signal = s, .on_progress = p}, [](Result<ToolResult> r) {
//     if (!r) { /* only ErrorCode::aborted: abort stays abort */ }
//     else use(r->text, r->is_error);   // transport/timeout/JSON-RPC errors arrive here as
//   });                                 // is_error results whose text is "MCP error: …"
//
// An McpTool calls through the McpToolHost (the manager) it was built with; it holds the
// host weakly, so a tool that outlives its manager answers "MCP error: … not connected".
// A deferred tool (built from the tool cache while its server is still connecting) first
// waits for the server's connection, then calls.
//
// Callbacks: `done` runs once, on the tool's executor, never inside call(). A tool may be
// destroyed while its calls run (they hold copies, not the tool). The caller's abort
// completes the call at once with ErrorCode::aborted (the host also sees the signal and
// sends notifications/cancelled); the host's later answer is then dropped.

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/abort.hpp"
#include "mcprt/client.hpp"
#include "mcprt/config.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/result.hpp"
#include "mcprt/tool_names.hpp"

namespace mcprt {

inline constexpr std::size_t kDefaultMaxResultBytes = 1024 * 1024;
// The most a tool's `_meta["anthropic/maxResultSizeChars"]` can raise its cap to.
inline constexpr std::size_t kMaxToolResultCapOverride = 500000;

struct ToolResult {
  json content = json::array();  // the MCP content blocks, unchanged
  json structured_content;       // null when the server sent none
  bool is_error = false;
  std::string text;              // the rendering for the model (see render_tool_result)
  bool truncated = false;        // text was cut to its cap (head and tail kept)
  std::size_t full_bytes = 0;    // truncated: the size of the full text; else 0
  // Truncated and kept by the host's ResultSpill (NativeHost: a file in its cache dir):
  // where the full text is; the marker in `text` names it too.
  std::optional<std::string> full_text_path;
  // When mcprt made this result from a local error (not connected, timeout, needs_auth,
  // ...: "MCP error: ..."), that error's code, so that a host can act on it (a login);
  // empty for what the server answered.
  std::optional<ErrorCode> error_code;
};

struct ToolCallOptions {
  AbortSignal signal;
  std::function<void(const json& progress_params)> on_progress;  // sets progressToken
};

// Success carries every tool outcome, failures included (is_error). The only Error is
// ErrorCode::aborted, when the caller's signal aborted the call.
using ToolDone = std::function<void(Result<ToolResult>)>;

// What an agent sees: host tools and MCP tools share this interface in the session's
// registry. call() follows the async contract.
class Tool {
 public:
  virtual ~Tool() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& description() const = 0;
  virtual const json& input_schema() const = 0;
  virtual void call(json arguments, ToolCallOptions options, ToolDone done) = 0;
};
using ToolPtr = std::shared_ptr<Tool>;

// What tools need from the manager.
class McpToolHost {
 public:
  virtual ~McpToolHost() = default;
  // tools/call on the server's live connection, under the server's toolTimeout. Fails
  // (async) with not_connected when the server has no live connection.
  virtual void call_tool(const std::string& server, const std::string& raw_tool, json arguments,
                         CallOptions options, std::function<void(Result<json>)> done) = 0;
  // Completes once the server is connected or the wait fails (bounded by the server's
  // timeout; a disconnected server is reconnected). `signal` abandons the wait (aborted).
  virtual void wait_for_connection(const std::string& server, AbortSignal signal,
                                   std::function<void(Status)> done) = 0;
};

namespace detail {
struct LazySchema;
struct SharedJsonAccess;
}  // namespace detail

// An immutable JSON value, shared: every tool object built from one listed definition
// (a rename after a name collision, a deferred <-> live switch, a child session's proxy)
// points at the same value instead of copying it. Reads like a `const json&`.
//
// A definition the manager listed keeps its inputSchema as the text the server sent
// (checked as JSON when it arrived) until the schema or the whole definition is first read
// here; that read parses it, once, thread-safely. What the model is given and the tool
// cache use the text as it is (SPEC §12's tool path).
class SharedJson {
 public:
  SharedJson() = default;  // null
  SharedJson(json value);  // NOLINT(google-explicit-constructor): takes the value over
  explicit SharedJson(std::shared_ptr<const json> value) : value_(std::move(value)) {}
  SharedJson(const SharedJson&) = default;
  SharedJson& operator=(const SharedJson&) = default;
  // A moved-from value is null (lazy_ lives only as long as value_).
  SharedJson(SharedJson&& other) noexcept
      : value_(std::move(other.value_)), lazy_(std::exchange(other.lazy_, nullptr)) {}
  SharedJson& operator=(SharedJson&& other) noexcept {
    value_ = std::move(other.value_);
    lazy_ = std::exchange(other.lazy_, nullptr);
    return *this;
  }

  const json& get() const {
    if (lazy_) parse_schema();
    return value_ ? *value_ : null_value();
  }
  operator const json&() const { return get(); }  // NOLINT(google-explicit-constructor)
  const json& operator*() const { return get(); }
  const json* operator->() const { return &get(); }
  template <class Key>
  json::const_iterator find(Key&& key) const {
    return get().find(std::forward<Key>(key));
  }
  json::const_iterator end() const { return get().end(); }
  // The value as JSON text (json::dump(-1), invalid UTF-8 replaced), written without
  // parsing a schema kept as the server's text: that part is the text as it came.
  std::string dump() const;
  const std::shared_ptr<const json>& shared() const {
    if (lazy_) parse_schema();
    return value_;
  }

  friend bool operator==(const SharedJson& a, const SharedJson& b) {
    return a.value_ == b.value_ || a.get() == b.get();
  }
  friend bool operator==(const SharedJson& a, const json& b) { return a.get() == b; }
  friend std::ostream& operator<<(std::ostream& out, const SharedJson& v) { return out << v.get(); }

 private:
  friend struct detail::SharedJsonAccess;
  static const json& null_value();
  void parse_schema() const;
  std::shared_ptr<const json> value_;
  // A definition listed with its schema raw, or that schema: get() parses the schema the
  // first time (the state is owned with value_, which points into it).
  detail::LazySchema* lazy_ = nullptr;
};

struct McpToolInfo {
  std::string name;         // mcp_<server>_<tool>, unique in its set
  std::string raw_name;     // the server's own tool name
  std::string server;
  std::string description;
  SharedJson input_schema;  // passed through unchanged ({"type":"object"} when absent)
  std::string label;        // <server>/<tool>
  std::string path;         // "mcp:<server> via <provider display name>", or "mcp:<server>"
  bool deferred = false;    // built from the cache; waits for the connection first
  SharedJson definition;    // the raw definition as listed
  // The definition's `annotations` (title, readOnlyHint, destructiveHint, idempotentHint,
  // openWorldHint) are claims the server makes about its own tool (SPEC §15): a host may
  // act on them (skip a confirmation for a read-only tool) only when this is true, which
  // is when ToolBuildOptions::trusted_servers names the server.
  bool annotations_trusted = false;
};

// What a host is told when a result's text is over its tool's cap (SPEC §16). The views
// are valid during the call only.
struct ResultSpillRequest {
  std::string_view server;  // the server's configured name
  std::string_view tool;    // the server's own tool name (untrusted: sanitize before use)
  std::string_view name;    // mcp_<server>_<tool>
  std::string_view text;    // the full rendered text, before the cut
};
// Keeps the full text somewhere the user (or the model, with a file tool) can read it and
// returns where (it is named in the marker), or nullopt when it was not kept (the marker
// then names no place). Called synchronously on the tool's executor, only for results
// over their cap. The web build sets none.
using ResultSpill = std::function<std::optional<std::string>(const ResultSpillRequest& request)>;

struct ToolBuildOptions {
  std::size_t max_tool_name_length = kDefaultMaxToolNameLength;
  // The cap on a result's text (0 = none); a tool's definition may raise its own cap
  // (tool_result_cap).
  std::size_t max_result_bytes = kDefaultMaxResultBytes;
  // Null: results over their cap are cut without keeping the full text anywhere.
  ResultSpill spill;
  // The host runs MCP tasks (2025-11-25). Off: tools whose `execution.taskSupport` is
  // "required" are left out (listed or cached), because calling one without a task fails
  // with -32601; "optional" and "forbidden" tools stay.
  bool task_support = false;
  // Servers whose tool annotations the host trusts (McpToolInfo::annotations_trusted).
  std::vector<std::string> trusted_servers;
};

// Whether a raw tool definition says `"execution": {"taskSupport": "required"}`.
bool requires_task_support(const json& definition);

// The cap on one tool's result text: `configured`, raised (never lowered) by the
// definition's `_meta["anthropic/maxResultSizeChars"]` to at most
// kMaxToolResultCapOverride: max(configured, min(meta, 500000)). Only a positive JSON
// integer counts; anything else (a string, a negative, a fraction, a number too large for
// 64 bits) is ignored. The key counts characters, the cap counts UTF-8 bytes: the value is
// used as bytes, which never lets a tool's text be longer than the characters it asked
// for (each character is at least one byte), and gives text with multi-byte characters
// fewer. With the default cap (1 MiB) the override changes nothing; it matters to hosts
// that set a smaller one. `configured` 0 (no cap) stays 0.
std::size_t tool_result_cap(const json& definition, std::size_t configured);

class McpTool : public Tool {
 public:
  // `max_result_bytes` is the configured cap (the definition may raise it, see
  // tool_result_cap); `spill` keeps the full text of results over it (null = not kept).
  McpTool(Executor& executor, McpToolInfo info, std::weak_ptr<McpToolHost> host,
          std::size_t max_result_bytes, ResultSpill spill = {});
  const std::string& name() const override { return info_.name; }
  const std::string& description() const override { return info_.description; }
  const json& input_schema() const override { return info_.input_schema; }
  const McpToolInfo& info() const { return info_; }
  // The definition's `annotations` object; an empty object when it has none (or not an
  // object). Untrusted unless info().annotations_trusted.
  const json& annotations() const;
  void call(json arguments, ToolCallOptions options, ToolDone done) override;

 protected:
  void call_now(json arguments, ToolCallOptions options, ToolDone done);
  Executor& executor_;
  McpToolInfo info_;
  std::weak_ptr<McpToolHost> host_;
  std::size_t max_result_bytes_;              // this tool's cap (tool_result_cap)
  std::shared_ptr<const ResultSpill> spill_;  // null: none (calls share it, not copy it)
};

class DeferredMcpTool final : public McpTool {
 public:
  using McpTool::McpTool;
  void call(json arguments, ToolCallOptions options, ToolDone done) override;
};

// One server's slice of the tool set.
struct ServerTools {
  std::string server;
  const ServerConfig* config = nullptr;  // includeTools / excludeTools; null = no filter
  SourceInfo source;                      // provider display name for the path
  std::vector<json> definitions;          // raw, as listed or cached
  bool deferred = false;
};

// Applies each server's include/exclude filters, names the remaining tools across all
// servers (collisions resolved as tool_names.hpp says; filtered-out tools claim no name),
// and returns them sorted by name. Definitions that are not objects with a string `name`
// are skipped. Deferred servers give DeferredMcpTools. The rvalue overload moves the
// definitions into the tools instead of copying them.
std::vector<std::shared_ptr<McpTool>> build_mcp_tools(Executor& executor,
                                                      const std::vector<ServerTools>& servers,
                                                      std::weak_ptr<McpToolHost> host,
                                                      const ToolBuildOptions& options = {});
std::vector<std::shared_ptr<McpTool>> build_mcp_tools(Executor& executor,
                                                      std::vector<ServerTools>&& servers,
                                                      std::weak_ptr<McpToolHost> host,
                                                      const ToolBuildOptions& options = {});

// includeTools / excludeTools (names or '*' globs; exclude wins; empty include = all).
bool tool_passes_filters(const ServerConfig& config, std::string_view raw_tool);
bool glob_match(std::string_view pattern, std::string_view text);

// A CallToolResult → ToolResult: content and structuredContent kept; text joins text
// blocks, notes images/audio, shows resources as `[Resource: <uri>]` plus embedded text,
// resource links likewise. When no text block exists, structuredContent (if any) is dumped
// into the text. A malformed result (not an object, content not an array) becomes an
// is_error result; a missing content is an empty one.
//
// Text over max_result_bytes (0 = no cap) keeps its head and its tail, about half each,
// with one marker between them (cut_result_text): truncated, full_bytes and (when `spill`
// kept the full text; it is called only then) full_text_path are set. The content blocks
// are never cut.
ToolResult render_tool_result(const json& call_result, std::size_t max_result_bytes = kDefaultMaxResultBytes);
ToolResult render_tool_result(
    const json& call_result, std::size_t max_result_bytes,
    const std::function<std::optional<std::string>(std::string_view full_text)>& spill);

// `text` cut to `max_bytes` (0 = no cap; text within the cap is returned as it is):
//   <head>\n…[cut 1,234,567 of 2,283,143 bytes; the full result is in <path>]\n<tail>
// (without "; the full result is in …" when `full_text_path` is empty). Head and tail
// share what the marker leaves of the cap, about half each; both end at UTF-8 boundaries,
// and at a line boundary when one is within the last (first) tenth of the head (tail): the
// head then ends before that newline and the tail starts after one. The result is never
// longer than max_bytes, except when the marker alone is longer: then it is the marker only.
std::string cut_result_text(std::string_view text, std::size_t max_bytes,
                            std::string_view full_text_path = {});
// "MCP error: <message>", is_error.
ToolResult mcp_error_result(const Error& error);

}  // namespace mcprt
