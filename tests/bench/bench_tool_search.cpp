// mcprt_bench_tool_search: how well and how fast mcprt's tool search (SPEC §16, tool_search.hpp)
// finds the right tool in a large catalog, against a plain substring search measured in the
// same run (issue 15 item 4).
//
//   mcprt_bench_tool_search [--data DIR] [--iterations K] [--repeats R] [--sizes 250,1000,...]
//                           [--misses] [--list]
//
// The catalog (tests/bench/tool_search, README there): the tools six real servers list plus
// synthetic servers, 2,053 tools, built into McpTools by build_mcp_tools as a session builds
// them (so the names are mcprt's mcp_<server>_<tool>); the queries are queries.json, written
// before anything was ranked. It reports:
//   - recall@1 and recall@5 (a query counts when any of its expected tools is in the top 1 or
//     top 5), overall and by kind (task, synonym, exact) and target (real, synthetic);
//   - index build time (ToolSearchIndex::rebuild over the McpTools, median of K) and query time
//     (median and p95 of every query's search(q, 8), R rounds over all queries);
//   - how both grow with the catalog: 250, 1,000, 2,000 and 4,000 tools (past 2,053, copies of
//     the synthetic servers as second accounts);
//   - tokens (bytes / 4) of the catalog the model sees while tools are deferred (name and
//     summarize_description per tool) against the full definitions (name, description and the
//     inputSchema JSON), for the real tools and for the whole catalog.
// The baseline: score = how many of the query's words (split at whitespace, lowercased, leading
// and trailing punctuation dropped) occur as substrings of the lowercased name + description;
// tools scoring 0 are not found; ties by name. --misses lists every query that either
// search misses at 5 with what each ranked first; --list prints the catalog (name, summary).
// Ends with one JSON line of the numbers.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tool_search.hpp"
#include "mcprt/tools.hpp"
#include "tool_search/catalog.hpp"

#ifndef MCPRT_TOOL_SEARCH_DATA
#define MCPRT_TOOL_SEARCH_DATA "tests/bench/tool_search"
#endif

namespace {

using mcprt::json;
using Clock = std::chrono::steady_clock;
namespace tsb = mcprt::tool_search_bench;

constexpr std::size_t kSearchLimit = mcprt::kToolSearchDefaultLimit;

struct Query {
  std::string text;
  std::vector<std::string> expected;
  std::string target;  // real | synthetic
  std::string kind;    // task | synonym | exact
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The baseline: plain substring search over names and descriptions.
class SubstringSearch {
 public:
  void rebuild(const std::vector<std::shared_ptr<mcprt::McpTool>>& tools) {
    docs_.clear();
    docs_.reserve(tools.size());
    for (const auto& tool : tools) docs_.push_back({tool->name(), lowercase(tool->name() + " " + tool->description())});
  }

  std::vector<std::string> search(const std::string& query, std::size_t limit) const {
    std::vector<std::string> words;
    std::string word;
    for (char c : query + " ") {
      if (std::isspace(static_cast<unsigned char>(c))) {
        while (!word.empty() && std::ispunct(static_cast<unsigned char>(word.back()))) word.pop_back();
        std::size_t start = 0;
        while (start < word.size() && std::ispunct(static_cast<unsigned char>(word[start]))) ++start;
        if (start < word.size()) words.push_back(lowercase(word.substr(start)));
        word.clear();
      } else {
        word.push_back(c);
      }
    }
    std::vector<std::pair<int, const Doc*>> scored;
    for (const Doc& doc : docs_) {
      int score = 0;
      for (const auto& w : words) score += doc.text.find(w) != std::string::npos ? 1 : 0;
      if (score > 0) scored.emplace_back(score, &doc);
    }
    const std::size_t n = std::min(limit, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n), scored.end(),
                      [](const auto& a, const auto& b) {
                        return a.first != b.first ? a.first > b.first : a.second->name < b.second->name;
                      });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(scored[i].second->name);
    return out;
  }

 private:
  struct Doc {
    std::string name;
    std::string text;
  };
  std::vector<Doc> docs_;
};

std::vector<std::string> mcprt_search(const mcprt::ToolSearchIndex& index, const std::string& query) {
  std::vector<std::string> names;
  for (const auto& hit : index.search(query, kSearchLimit).hits) names.push_back(hit.name);
  return names;
}

// 1-based rank of the first expected tool in `ranked`, 0 when none is there.
std::size_t rank_of(const std::vector<std::string>& ranked, const Query& q) {
  for (std::size_t i = 0; i < ranked.size(); ++i)
    if (std::find(q.expected.begin(), q.expected.end(), ranked[i]) != q.expected.end()) return i + 1;
  return 0;
}

std::vector<std::shared_ptr<mcprt::McpTool>> build_tools(mcprt::testing::ManualExecutor& executor,
                                                         const tsb::Catalog& catalog) {
  std::vector<mcprt::ServerTools> servers;
  for (const auto& server : catalog.servers) {
    mcprt::ServerTools s;
    s.server = server.name;
    s.definitions = server.tools;
    servers.push_back(std::move(s));
  }
  // A host that runs MCP tasks: server-everything's simulate-research-query requires one and
  // would otherwise be left out.
  mcprt::ToolBuildOptions options;
  options.task_support = true;
  return mcprt::build_mcp_tools(executor, std::move(servers), {}, options);
}

struct Timing {
  double build_us = 0;        // median rebuild
  double query_us = 0;        // median search
  double query_p95_us = 0;
};

template <typename Index>
Timing time_index(Index& index, const std::vector<std::shared_ptr<mcprt::McpTool>>& tools,
                  const std::vector<Query>& queries, int iterations, int repeats,
                  std::vector<std::string> (*run)(const Index&, const std::string&)) {
  std::vector<double> builds;
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = Clock::now();
    index.rebuild(tools);
    builds.push_back(us_since(t0));
  }
  std::vector<double> searches;
  std::size_t sink = 0;
  for (int r = 0; r < repeats; ++r) {
    for (const auto& q : queries) {
      const auto t0 = Clock::now();
      sink += run(index, q.text).size();
      searches.push_back(us_since(t0));
    }
  }
  if (sink == static_cast<std::size_t>(-1)) std::puts("");  // keeps the searches observable
  return {median(builds), median(searches), percentile(searches, 0.95)};
}

std::vector<std::string> run_mcprt(const mcprt::ToolSearchIndex& index, const std::string& q) {
  return mcprt_search(index, q);
}
std::vector<std::string> run_baseline(const SubstringSearch& index, const std::string& q) {
  return index.search(q, kSearchLimit);
}

struct Tokens {
  std::size_t catalog_bytes = 0;
  std::size_t full_bytes = 0;
  std::size_t tools = 0;
};

Tokens count_tokens(const std::vector<std::shared_ptr<mcprt::McpTool>>& tools, bool real_only,
                    const std::vector<std::string>& real_servers) {
  Tokens t;
  for (const auto& tool : tools) {
    const bool real = std::find(real_servers.begin(), real_servers.end(), tool->info().server) != real_servers.end();
    if (real_only && !real) continue;
    ++t.tools;
    t.catalog_bytes += tool->name().size() + mcprt::summarize_description(tool->description()).size();
    t.full_bytes += tool->name().size() + tool->description().size() + tool->input_schema().dump().size();
  }
  return t;
}

bool load_queries(const std::string& path, const std::vector<std::shared_ptr<mcprt::McpTool>>& tools,
                  std::vector<Query>& out, std::string& error) {
  json doc;
  if (!tsb::read_json_file(path, doc, error)) return false;
  if (!doc.is_object() || !doc.contains("queries") || !doc["queries"].is_array()) {
    error = path + ": expected {\"queries\": [...]}";
    return false;
  }
  std::vector<std::string> names;
  for (const auto& tool : tools) names.push_back(tool->name());
  std::sort(names.begin(), names.end());
  for (const json& q : doc["queries"]) {
    Query query{q.value("query", ""), {}, q.value("target", ""), q.value("kind", "")};
    if (q.contains("expected") && q["expected"].is_array())
      for (const json& e : q["expected"])
        if (e.is_string()) query.expected.push_back(e.get<std::string>());
    if (query.text.empty() || query.expected.empty()) {
      error = path + ": a query without text or expected tools";
      return false;
    }
    for (const auto& e : query.expected) {
      if (!std::binary_search(names.begin(), names.end(), e)) {
        error = path + ": \"" + query.text + "\" expects " + e + ", which is no tool of the catalog";
        return false;
      }
    }
    out.push_back(std::move(query));
  }
  return true;
}

struct Recall {
  int at1 = 0, at5 = 0, total = 0;
  void add(std::size_t rank) {
    ++total;
    at1 += rank == 1 ? 1 : 0;
    at5 += rank >= 1 && rank <= 5 ? 1 : 0;
  }
  double r1() const { return total ? static_cast<double>(at1) / total : 0; }
  double r5() const { return total ? static_cast<double>(at5) / total : 0; }
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--data DIR] [--iterations K] [--repeats R] [--sizes N,N,...] [--misses] [--list]\n",
               argv0);
  std::exit(2);
}

std::string ratio(double ours, double base) {
  if (base <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", ours / base);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = MCPRT_TOOL_SEARCH_DATA;
  int iterations = 15;
  int repeats = 20;
  std::vector<std::size_t> sizes = {250, 1000, 2000, 4000};
  bool misses = false, list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--data" && has_value) data = argv[++i];
    else if (arg == "--iterations" && has_value) iterations = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--repeats" && has_value) repeats = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--sizes" && has_value) {
      sizes.clear();
      for (const char* p = argv[++i]; *p;) {
        char* end = nullptr;
        const long n = std::strtol(p, &end, 10);
        if (end == p || n <= 0) usage(argv[0]);
        sizes.push_back(static_cast<std::size_t>(n));
        p = *end == ',' ? end + 1 : end;
      }
    } else if (arg == "--misses") misses = true;
    else if (arg == "--list") list = true;
    else usage(argv[0]);
  }

  tsb::Catalog catalog;
  std::string error;
  if (!tsb::load_catalog(data + "/real_tools.json", data + "/synthetic_servers.json", catalog, error)) {
    std::fprintf(stderr, "bench_tool_search: %s\n", error.c_str());
    return 1;
  }
  std::vector<std::string> real_servers;
  for (const auto& s : catalog.servers)
    if (s.real) real_servers.push_back(s.name);

  mcprt::testing::ManualExecutor executor;
  const auto tools = build_tools(executor, catalog);
  if (tools.size() != catalog.size()) {
    std::fprintf(stderr, "bench_tool_search: %zu definitions gave %zu tools\n", catalog.size(), tools.size());
    return 1;
  }
  if (list) {
    for (const auto& tool : tools)
      std::printf("%s\t%s\n", tool->name().c_str(), mcprt::summarize_description(tool->description()).c_str());
    return 0;
  }
  std::vector<Query> queries;
  if (!load_queries(data + "/queries.json", tools, queries, error)) {
    std::fprintf(stderr, "bench_tool_search: %s\n", error.c_str());
    return 1;
  }

  // Quality, on the whole catalog.
  mcprt::ToolSearchIndex index;
  index.rebuild(tools);
  SubstringSearch baseline;
  baseline.rebuild(tools);
  std::map<std::string, std::pair<Recall, Recall>> recall;  // group -> (mcprt, baseline)
  std::vector<std::string> miss_lines;
  for (const auto& q : queries) {
    const auto ours = mcprt_search(index, q.text);
    const auto base = baseline.search(q.text, kSearchLimit);
    const std::size_t our_rank = rank_of(ours, q), base_rank = rank_of(base, q);
    for (const std::string& group : {std::string("all"), "kind " + q.kind, "target " + q.target}) {
      recall[group].first.add(our_rank);
      recall[group].second.add(base_rank);
    }
    if (our_rank != 1 || base_rank != 1) {
      char line[1024];
      std::snprintf(line, sizeof line, "  %-7s %-7s \"%s\"\n      expected %s%s\n      mcprt    #%s  first: %s\n      baseline #%s  first: %s\n",
                    q.target.c_str(), q.kind.c_str(), q.text.c_str(), q.expected[0].c_str(),
                    q.expected.size() > 1 ? " (or another listed)" : "",
                    our_rank ? std::to_string(our_rank).c_str() : "-", ours.empty() ? "(nothing)" : ours[0].c_str(),
                    base_rank ? std::to_string(base_rank).c_str() : "-", base.empty() ? "(nothing)" : base[0].c_str());
      miss_lines.push_back(line);
    }
  }

  std::printf("Tool search quality: %zu tools (%zu real from %zu servers, %zu synthetic), %zu queries\n\n",
              tools.size(), count_tokens(tools, true, real_servers).tools, real_servers.size(),
              tools.size() - count_tokens(tools, true, real_servers).tools, queries.size());
  std::printf("%-18s %6s | %10s %10s | %10s %10s | %8s %8s\n", "queries", "count", "mcprt @1", "mcprt @5",
              "substr @1", "substr @5", "@1 ratio", "@5 ratio");
  for (const auto& [group, r] : recall) {
    std::printf("%-18s %6d | %9.1f%% %9.1f%% | %9.1f%% %9.1f%% | %8s %8s\n", group.c_str(), r.first.total,
                100 * r.first.r1(), 100 * r.first.r5(), 100 * r.second.r1(), 100 * r.second.r5(),
                ratio(r.first.r1(), r.second.r1()).c_str(), ratio(r.first.r5(), r.second.r5()).c_str());
  }

  // Speed, on the whole catalog and as it grows.
  std::printf("\n%-7s | %12s %12s %12s | %12s %12s %12s | %8s %8s\n", "tools", "mcprt build", "query med",
              "query p95", "substr build", "query med", "query p95", "build", "query");
  std::printf("%-7s | %12s %12s %12s | %12s %12s %12s | %8s %8s\n", "", "(ms)", "(us)", "(us)", "(ms)", "(us)",
              "(us)", "ratio", "ratio");
  json growth = json::array();
  Timing full_ours, full_base;
  std::vector<std::size_t> all_sizes = sizes;
  all_sizes.push_back(tools.size());
  std::sort(all_sizes.begin(), all_sizes.end());
  all_sizes.erase(std::unique(all_sizes.begin(), all_sizes.end()), all_sizes.end());
  for (std::size_t size : all_sizes) {
    const auto sized = size == tools.size() ? tools : build_tools(executor, tsb::sized_catalog(catalog, size));
    mcprt::ToolSearchIndex sized_index;
    SubstringSearch sized_baseline;
    const Timing ours = time_index(sized_index, sized, queries, iterations, repeats, run_mcprt);
    const Timing base = time_index(sized_baseline, sized, queries, iterations, repeats, run_baseline);
    if (size == tools.size()) full_ours = ours, full_base = base;
    std::printf("%-7zu | %12.2f %12.1f %12.1f | %12.2f %12.1f %12.1f | %8s %8s\n", sized.size(),
                ours.build_us / 1000, ours.query_us, ours.query_p95_us, base.build_us / 1000, base.query_us,
                base.query_p95_us, ratio(ours.build_us, base.build_us).c_str(),
                ratio(ours.query_us, base.query_us).c_str());
    growth.push_back({{"tools", sized.size()},
                      {"mcprt_build_ms", ours.build_us / 1000},
                      {"mcprt_query_us", ours.query_us},
                      {"mcprt_query_p95_us", ours.query_p95_us},
                      {"baseline_build_ms", base.build_us / 1000},
                      {"baseline_query_us", base.query_us},
                      {"baseline_query_p95_us", base.query_p95_us}});
  }

  // Tokens the model sees.
  const Tokens real_tokens = count_tokens(tools, true, real_servers);
  const Tokens all_tokens = count_tokens(tools, false, real_servers);
  std::printf("\n%-22s %6s | %14s %14s %8s\n", "tokens (bytes/4)", "tools", "catalog", "full defs", "ratio");
  for (const auto& [label, t] : {std::pair<const char*, Tokens>{"real servers", real_tokens},
                                 std::pair<const char*, Tokens>{"whole catalog", all_tokens}}) {
    std::printf("%-22s %6zu | %14zu %14zu %7.1f%%\n", label, t.tools, t.catalog_bytes / 4, t.full_bytes / 4,
                t.full_bytes ? 100.0 * static_cast<double>(t.catalog_bytes) / static_cast<double>(t.full_bytes) : 0);
  }

  if (misses) {
    std::printf("\nQueries not ranked first by one of them (%zu):\n", miss_lines.size());
    for (const auto& line : miss_lines) std::fputs(line.c_str(), stdout);
  }

  json recall_json = json::object();
  for (const auto& [group, r] : recall) {
    recall_json[group] = {{"count", r.first.total},
                          {"mcprt_at1", r.first.r1()},
                          {"mcprt_at5", r.first.r5()},
                          {"baseline_at1", r.second.r1()},
                          {"baseline_at5", r.second.r5()}};
  }
  const json out = {
      {"tools", tools.size()},
      {"queries", queries.size()},
      {"recall", recall_json},
      {"mcprt_build_ms", full_ours.build_us / 1000},
      {"mcprt_query_us", full_ours.query_us},
      {"baseline_build_ms", full_base.build_us / 1000},
      {"baseline_query_us", full_base.query_us},
      {"growth", growth},
      {"tokens",
       {{"real", {{"tools", real_tokens.tools}, {"catalog", real_tokens.catalog_bytes / 4}, {"full", real_tokens.full_bytes / 4}}},
        {"all", {{"tools", all_tokens.tools}, {"catalog", all_tokens.catalog_bytes / 4}, {"full", all_tokens.full_bytes / 4}}}}},
  };
  std::printf("\n%s\n", out.dump().c_str());
  return 0;
}
