// mcprt_bench_untrusted_json: what the nesting limit costs (SPEC §17 "Bounded input").
// parse_untrusted_json (a bracket pre-scan, then nlohmann's DOM parse) against plain
// json::parse(text, nullptr, false) on the same text, in the same run, interleaved, so the
// ratio holds even when the machine's speed drifts.
//
// The text is a tools/list answer of about --mb megabytes: tools with a description, an
// input schema with a few typed properties (one nested object, an enum), some non-ASCII.
//
//   mcprt_bench_untrusted_json [--mb 5] [--iterations 30]
//
// Prints a table and one JSON line (the last line) with the medians in ms and the ratios;
// "pre-scan alone" is the depth check by itself (a text it walks to the end and rejects).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jsonrpc/untrusted_json.hpp"

namespace {

using mcprt::json;
using Clock = std::chrono::steady_clock;

std::string tools_list_answer(double megabytes) {
  const std::size_t target = static_cast<std::size_t>(megabytes * 1024 * 1024);
  json tools = json::array();
  std::size_t size = 0;
  for (int i = 0; size < target; ++i) {
    json tool = {
        {"name", "tool_" + std::to_string(i)},
        {"description",
         "Searches the index for documents that match the query and returns the best "
         "matches with their titles, URLs and a short excerpt. Supports filters by date, "
         "author and language (e.g. \"fr\", \"de\", \"ja\" \xE2\x80\x94 caf\xC3\xA9, "
         "\xE6\x97\xA5\xE6\x9C\xAC). Results are sorted by relevance unless `sort` says "
         "otherwise; at most `limit` results come back (default 10)."},
        {"inputSchema",
         {{"type", "object"},
          {"properties",
           {{"query", {{"type", "string"}, {"description", "What to look for."}}},
            {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}},
            {"sort", {{"type", "string"}, {"enum", {"relevance", "date", "title"}}}},
            {"filters",
             {{"type", "object"},
              {"properties",
               {{"after", {{"type", "string"}, {"format", "date"}}},
                {"author", {{"type", "string"}}},
                {"languages", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}}}}},
          {"required", {"query"}}}},
        {"annotations", {{"readOnlyHint", true}, {"openWorldHint", true}}},
    };
    size += tool.dump().size() + 1;
    tools.push_back(std::move(tool));
  }
  return json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", {{"tools", std::move(tools)}}}}.dump();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Fn>
double time_ms(Fn&& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  double mb = 5;
  int iterations = 30;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
      mb = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--mb MB] [--iterations N]\n", argv[0]);
      return 2;
    }
  }
  const std::string text = tools_list_answer(mb);
  const std::string too_deep = std::string(66000, '[') + std::string(66000, ']');
  // The same text with one level too many at its very end: the pre-scan walks all of it
  // and then rejects, so timing this call times the pre-scan alone.
  const std::string deep_at_end =
      "[" + text + "," + std::string(128, '[') + std::string(128, ']') + "]";

  std::vector<double> plain, bounded, rejected, scan_only;
  std::size_t sink = 0;  // keeps the results alive, so nothing is optimized away
  for (int i = 0; i < iterations; ++i) {
    plain.push_back(time_ms([&] {
      json v = json::parse(text, nullptr, false);
      sink += v.is_discarded() ? 0 : v.size();
    }));
    bounded.push_back(time_ms([&] {
      auto v = mcprt::detail::parse_untrusted_json(text);
      sink += v.ok() ? v.value().size() : 0;
    }));
    rejected.push_back(time_ms([&] {
      auto v = mcprt::detail::parse_untrusted_json(too_deep);
      sink += v.ok() ? 1 : 0;
    }));
    scan_only.push_back(time_ms([&] {
      auto v = mcprt::detail::parse_untrusted_json(deep_at_end);
      sink += v.ok() ? 1 : 0;
    }));
  }
  if (!mcprt::detail::parse_untrusted_json(text).ok()) {
    std::fprintf(stderr, "the benchmark text did not parse\n");
    return 1;
  }
  if (mcprt::detail::parse_untrusted_json(deep_at_end).ok()) {
    std::fprintf(stderr, "the pre-scan-only text was accepted\n");
    return 1;
  }
  const double p = median(plain), b = median(bounded), r = median(rejected),
               s = median(scan_only);
  std::printf("tools/list answer: %zu bytes, %d iterations (medians)\n", text.size(), iterations);
  std::printf("  json::parse                 %9.3f ms\n", p);
  std::printf("  parse_untrusted_json        %9.3f ms   ratio %.3f\n", b, b / p);
  std::printf("  pre-scan alone              %9.3f ms   ratio %.3f\n", s, s / p);
  std::printf("  66k-deep line (rejected)    %9.3f ms   (%zu bytes)\n", r, too_deep.size());
  std::printf("{\"bytes\":%zu,\"iterations\":%d,\"plain_ms\":%.3f,\"bounded_ms\":%.3f,"
              "\"ratio\":%.4f,\"prescan_ms\":%.3f,\"prescan_ratio\":%.4f,"
              "\"deep_reject_ms\":%.4f,\"sink\":%zu}\n",
              text.size(), iterations, p, b, b / p, s, s / p, r, sink);
  return 0;
}
