#pragma once
// Tool search (SPEC §16): many MCP tools behind one meta-tool.
//
// With many servers, the tool definitions alone fill the model's context. When tool search
// is active the session registers only the *loaded* MCP tools plus one meta-tool,
// `mcp_tool_search {query, limit}`; every other MCP tool is *deferred*: listed in the
// catalog (its name and a one-line summary), found by a search, and loaded by it for the
// rest of the conversation.
//
//   ToolSearchIndex index;
//   index.rebuild(manager->tools());                 // on every tools-changed
//   for (const ToolSearchHit& hit : index.search("read a file", 8)) use(hit.name);
//   index.search("select:mcp_fs_read_file,mcp_fs_write_file", 8);   // exact names
//
// Ranking, in tiers (a higher tier always ranks first):
//   1. an exact name: the query is a tool's full name (`mcp_fs_read_file`), its raw name
//      (`read_file`) or its label (`fs/read_file`), case-insensitively;
//   2. a name substring: the query (spaces and '-' read as '_') is part of the full name,
//      for queries of at least 3 bytes;
//   3. BM25 (k1 = 1.2, b = 0.75) over the fields below, each term's frequency weighted by
//      its field, ties broken by name. A query word also counts its synonyms from a small
//      table of common verbs and abbreviations (add/create/new, remove/delete, folder/
//      directory, repo/repository, ...) at 0.4 of its weight.
// Terms are lowercased ASCII words and digit runs; snake_case, kebab-case and camelCase
// split into words (a camelCase word also counts whole: "JavaScript" is java, script and
// javascript); a plural 's' is dropped ("files" finds "file"). A query word
// `+term` is required: only tools whose name holds the term are found.
//
// Field weights (kFieldWeight*): the raw tool name 3, the title 2, the server name 1.5,
// the description 1, the input schema's property names 1. The name words weigh most
// because a model searches for what a tool does, which its name says most briefly.
//
// Everything indexed is server text: it is only tokenised and compared, never executed.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/tools.hpp"

namespace mcprt {

inline constexpr double kFieldWeightName = 3.0;
inline constexpr double kFieldWeightTitle = 2.0;
inline constexpr double kFieldWeightServer = 1.5;
inline constexpr double kFieldWeightDescription = 1.0;
inline constexpr double kFieldWeightProperties = 1.0;

inline constexpr std::size_t kToolSummaryMaxBytes = 200;
inline constexpr std::size_t kToolSearchDefaultLimit = 8;
inline constexpr std::size_t kToolSearchMaxLimit = 50;
inline constexpr const char* kToolSearchTool = "mcp_tool_search";

// The one-line summary of a description: whitespace runs (newlines included) become one
// space, and text over `max_bytes` is cut at the last word boundary that fits (at a UTF-8
// boundary when a single word is longer) and ends with "…" (within max_bytes).
std::string summarize_description(std::string_view description,
                                  std::size_t max_bytes = kToolSummaryMaxBytes);

// The words of a text as the index sees them (see above). Exposed for tests and the
// quality benchmark.
std::vector<std::string> search_terms(std::string_view text);

enum class ToolSearchMatch { exact_name, name_substring, keywords, selected };
// "exact-name", "name-substring", "keywords", "selected" (the CLI's JSON and the JS API).
const char* to_string(ToolSearchMatch match);

struct ToolSearchHit {
  std::string name;  // mcp_<server>_<tool>
  double score = 0;  // the BM25 score (0 for select: and name matches without keywords)
  ToolSearchMatch match = ToolSearchMatch::keywords;
};

struct ToolSearchResult {
  std::vector<ToolSearchHit> hits;     // best first, at most `limit`
  std::vector<std::string> not_found;  // select: names that are no tool
};

// What the index keeps of a tool. McpToolInfo fills it (title from the definition's
// `title` or `annotations.title`; property names from inputSchema.properties).
struct ToolSearchDocument {
  std::string name;         // the full name, unique
  std::string raw_name;
  std::string server;
  std::string title;
  std::string description;
  std::vector<std::string> properties;
};
ToolSearchDocument search_document(const McpToolInfo& info);

// A BM25 index over a tool set. Rebuilt whole (the cost is linear in the tools' text);
// searches are read-only. Not thread-safe; the session uses it on its executor.
class ToolSearchIndex {
 public:
  ToolSearchIndex();
  ~ToolSearchIndex();
  ToolSearchIndex(ToolSearchIndex&&) noexcept;
  ToolSearchIndex& operator=(ToolSearchIndex&&) noexcept;

  void rebuild(std::vector<ToolSearchDocument> documents);
  void rebuild(const std::vector<std::shared_ptr<McpTool>>& tools);

  // `query`: "select:a,b" (exact full names, in the order given, no limit), or keywords.
  // `limit` 0 means kToolSearchDefaultLimit; it is capped at kToolSearchMaxLimit.
  ToolSearchResult search(std::string_view query, std::size_t limit = 0) const;

  std::size_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcprt
