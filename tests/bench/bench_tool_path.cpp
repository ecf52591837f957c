// mcprt_bench_tool_path: SPEC §12's "tools/list of 2,000 tools (≈ 5 MB): parsed and
// registered", natively (the wasm figure comes from the seams module's toolPathRun; both
// are run against Node's JSON.parse of the same bytes by bench_compare.mjs --only toolpath).
//
//   mcprt_bench_tool_path [--tools N | --file FILE] [--write FILE] [--iterations K]
//
// --tools N makes a tools/list answer of N realistic tools (about 2.5 KB each: a
// description with some non-ASCII, an input schema of 12 described properties, enums, a
// nested object, annotations); --write saves it (the harness parses the same bytes with
// JSON.parse); --file reads one instead. Each iteration times, interleaved:
//   path        parse_untrusted_json + the page check + ToolSet::replace (tool_path.hpp)
//   parse       parse_untrusted_json alone (as the RpcPeer asks for it: schemas kept raw)
//   nlohmann    nlohmann's json::parse + the same registration (the parser mcprt had before)
// and prints one JSON line of medians (ms).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mcprt/testing/manual_executor.hpp"
#include "tool_path.hpp"

namespace {

using mcprt::json;
using Clock = std::chrono::steady_clock;

std::string tools_list_answer(int count) {
  json tools = json::array();
  for (int i = 0; i < count; ++i) {
    json properties = json::object();
    for (int p = 0; p < 12; ++p) {
      json property = {{"type", p % 3 == 0 ? "integer" : "string"},
                       {"description", "The " + std::to_string(p) + "th parameter of tool " +
                                           std::to_string(i) +
                                           ": what it filters, how it is matched (exact, prefix "
                                           "or fuzzy), and the default when it is absent."}};
      if (p % 4 == 1) property["enum"] = {"relevance", "date", "title", "author"};
      if (p % 3 == 0) property["minimum"] = 0, property["maximum"] = 1000;
      if (p == 11) {
        property = {{"type", "object"},
                    {"properties",
                     {{"after", {{"type", "string"}, {"format", "date"}}},
                      {"languages", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}};
      }
      properties["param_" + std::to_string(p)] = std::move(property);
    }
    tools.push_back({
        {"name", "search_tool_" + std::to_string(i)},
        {"title", "Search tool " + std::to_string(i)},
        {"description",
         "Searches the index for documents that match the query and returns the best matches "
         "with their titles, URLs and a short excerpt. Supports filters by date, author and "
         "language (e.g. \"fr\", \"de\", \"ja\" \xE2\x80\x94 caf\xC3\xA9, \xE6\x97\xA5\xE6\x9C\xAC). "
         "Results are sorted by relevance unless `sort` says otherwise."},
        {"inputSchema", {{"type", "object"}, {"properties", std::move(properties)}, {"required", {"param_0"}}}},
        {"annotations", {{"readOnlyHint", true}, {"openWorldHint", true}}},
    });
  }
  return json{{"jsonrpc", "2.0"}, {"id", 2}, {"result", {{"tools", std::move(tools)}}}}.dump();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--tools N | --file FILE] [--write FILE] [--iterations K]\n", argv0);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int tools = 2000;
  int iterations = 15;
  std::string file, write;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    if (k == "--tools") tools = std::max(1, std::atoi(argv[++i]));
    else if (k == "--file") file = argv[++i];
    else if (k == "--write") write = argv[++i];
    else if (k == "--iterations") iterations = std::max(0, std::atoi(argv[++i]));
    else usage(argv[0]);
  }
  std::string text;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", file.c_str());
      return 1;
    }
    std::ostringstream s;
    s << in.rdbuf();
    text = s.str();
  } else {
    text = tools_list_answer(tools);
  }
  if (!write.empty()) std::ofstream(write, std::ios::binary) << text;

  mcprt::testing::ManualExecutor executor;
  const auto registered = mcprt::bench::parse_and_register(text, executor);
  if (!registered) {
    std::fprintf(stderr, "the text is not a tools/list answer\n");
    return 1;
  }
  const std::size_t count = registered->tools().size();

  std::vector<double> path, parse, nlohmann;
  for (int i = 0; i < iterations; ++i) {
    {
      const auto t0 = Clock::now();
      auto set = mcprt::bench::parse_and_register(text, executor);
      path.push_back(ms_since(t0));
      if (!set || set->tools().size() != count) return 1;
    }
    {
      const auto t0 = Clock::now();
      auto message = mcprt::bench::parse_listing(text);
      parse.push_back(ms_since(t0));
      if (!message.ok()) return 1;
    }
    {
      const auto t0 = Clock::now();
      auto set = mcprt::bench::register_listed_tools(json::parse(text, nullptr, false), executor);
      nlohmann.push_back(ms_since(t0));
      if (!set || set->tools().size() != count) return 1;
    }
  }
  std::printf("{\"bytes\":%zu,\"tools\":%zu,\"iterations\":%d,\"path_ms\":%.3f,\"parse_ms\":%.3f,"
              "\"nlohmann_path_ms\":%.3f}\n",
              text.size(), count, iterations, median(path), median(parse), median(nlohmann));
  return 0;
}
