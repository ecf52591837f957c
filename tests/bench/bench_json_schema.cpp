// mcprt_bench_json_schema: what checking a tool result against its outputSchema costs
// (SPEC §15). validate_json_schema on a search tool's structuredContent (a ~20-property
// hit object under $ref, nested arrays and objects, a pattern, enums, anyOf, a nullable
// type) with 10, 100 and 1000 hits, against two baselines on the same value in the same
// run, interleaved: nlohmann's dump() of it and json::parse of its text (what receiving
// the result already costs).
//
//   mcprt_bench_json_schema [--iterations 30] [--max-items 1000]
//
// Prints a table (µs per call, medians) and one JSON line (the last line).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mcprt/json_schema.hpp"

namespace {

using mcprt::json;
using Clock = std::chrono::steady_clock;

const char* kSearchSchema = R"json({
  "type": "object",
  "required": ["query", "total", "results"],
  "properties": {
    "query": {"type": "string", "minLength": 1},
    "total": {"type": "integer", "minimum": 0},
    "page": {"type": "integer", "minimum": 1},
    "pageSize": {"type": "integer", "minimum": 1, "maximum": 1000},
    "tookMs": {"type": "number", "minimum": 0},
    "nextCursor": {"type": ["string", "null"]},
    "results": {"type": "array", "items": {"$ref": "#/$defs/hit"}},
    "facets": {"type": "object", "additionalProperties": {
      "type": "array", "items": {"type": "object", "required": ["value", "count"],
        "properties": {"value": {"type": "string"}, "count": {"type": "integer", "minimum": 0}}}}}
  },
  "$defs": {
    "hit": {
      "type": "object",
      "required": ["id", "title", "url", "score"],
      "additionalProperties": false,
      "properties": {
        "id": {"type": "string", "pattern": "^[a-z0-9-]+$"},
        "title": {"type": "string", "maxLength": 500},
        "url": {"type": "string", "format": "uri"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "snippet": {"type": "string"},
        "author": {"type": ["string", "null"]},
        "published": {"type": "string", "format": "date-time"},
        "language": {"enum": ["en", "fr", "de", "ja", "es"]},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
        "wordCount": {"type": "integer", "minimum": 0},
        "source": {"type": "object", "required": ["name"],
                   "properties": {"name": {"type": "string"}, "domain": {"type": "string"}}},
        "highlights": {"type": "array", "maxItems": 10, "items": {"type": "object",
          "properties": {"field": {"type": "string"},
                         "fragments": {"type": "array", "items": {"type": "string"}}}}},
        "rank": {"type": "integer", "minimum": 1},
        "cached": {"type": "boolean"},
        "thumbnail": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "license": {"enum": ["cc-by", "cc-by-sa", "proprietary", "unknown"]},
        "readingMinutes": {"type": "number", "exclusiveMinimum": 0},
        "category": {"type": "string"},
        "explanation": {"type": "object"},
        "deleted": {"const": false}
      }
    }
  }
})json";

json search_result(int hits) {
  json results = json::array();
  for (int i = 0; i < hits; ++i) {
    results.push_back({
        {"id", "doc-" + std::to_string(i)},
        {"title", "Result number " + std::to_string(i) + " about caf\xC3\xA9s in Paris"},
        {"url", "https://example.com/articles/" + std::to_string(i)},
        {"score", 1.0 / (i + 1)},
        {"snippet", "A short excerpt of the document with the matching words highlighted."},
        {"author", i % 3 == 0 ? json(nullptr) : json("Author " + std::to_string(i % 7))},
        {"published", "2026-11-2" + std::to_string(i % 10) + "T10:00:00Z"},
        {"language", i % 2 ? "en" : "fr"},
        {"tags", {"travel", "food", "tag" + std::to_string(i % 5)}},
        {"wordCount", 800 + i},
        {"source", {{"name", "Example"}, {"domain", "example.com"}}},
        {"highlights", {{{"field", "title"}, {"fragments", {"caf\xC3\xA9s", "Paris"}}}}},
        {"rank", i + 1},
        {"cached", i % 2 == 0},
        {"thumbnail", i % 4 == 0 ? json(nullptr) : json("https://example.com/t.png")},
        {"license", "cc-by"},
        {"readingMinutes", 3.5},
        {"category", "travel"},
        {"explanation", {{"bm25", 12.5}}},
        {"deleted", false},
    });
  }
  return {{"query", "cafes paris"},
          {"total", hits * 10},
          {"page", 1},
          {"pageSize", hits},
          {"tookMs", 12.25},
          {"nextCursor", "abc"},
          {"results", std::move(results)},
          {"facets",
           {{"language", {{{"value", "en"}, {"count", 5}}, {{"value", "fr"}, {"count", 4}}}}}}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// µs per call of fn, over `reps` calls.
template <class Fn>
double time_us(int reps, Fn&& fn) {
  const auto t0 = Clock::now();
  for (int r = 0; r < reps; ++r) fn();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / reps;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 30;
  int max_items = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--max-items") == 0 && i + 1 < argc) {
      max_items = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N] [--max-items N]\n", argv[0]);
      return 2;
    }
  }
  const json schema = json::parse(kSearchSchema, nullptr, false);
  if (schema.is_discarded() || mcprt::check_json_schema(schema)) {
    std::fprintf(stderr, "the benchmark schema is not usable\n");
    return 1;
  }
  std::printf("validate_json_schema on a search result (%d iterations, medians, us per call)\n",
              iterations);
  std::printf("  %6s %9s %12s %12s %12s %10s %10s\n", "hits", "bytes", "validate", "dump()",
              "parse", "/dump", "/parse");
  std::string json_line = "{\"iterations\":" + std::to_string(iterations) + ",\"sizes\":[";
  std::size_t sink = 0;
  bool first = true;
  for (int hits : {10, 100, 1000}) {
    if (hits > max_items) break;
    const json value = search_result(hits);
    const std::string text = value.dump();
    if (auto e = mcprt::validate_json_schema(schema, value)) {
      std::fprintf(stderr, "the benchmark value does not validate: %s\n",
                   mcprt::to_string(*e).c_str());
      return 1;
    }
    json broken = value;
    broken["results"][hits - 1]["rank"] = "last";
    if (!mcprt::validate_json_schema(schema, broken)) {
      std::fprintf(stderr, "a broken value validated\n");
      return 1;
    }
    // About 2 ms per sample whatever the size.
    const int reps = std::max(1, 20000 / (hits * 10));
    std::vector<double> validate, dump, parse;
    for (int i = 0; i < iterations; ++i) {
      validate.push_back(
          time_us(reps, [&] { sink += mcprt::validate_json_schema(schema, value) ? 1 : 0; }));
      dump.push_back(time_us(reps, [&] { sink += value.dump().size(); }));
      parse.push_back(time_us(reps, [&] { sink += json::parse(text, nullptr, false).size(); }));
    }
    const double v = median(validate), d = median(dump), p = median(parse);
    std::printf("  %6d %9zu %12.2f %12.2f %12.2f %10.3f %10.3f\n", hits, text.size(), v, d, p,
                v / d, v / p);
    char entry[256];
    std::snprintf(entry, sizeof entry,
                  "%s{\"hits\":%d,\"bytes\":%zu,\"validate_us\":%.3f,\"dump_us\":%.3f,"
                  "\"parse_us\":%.3f,\"ratio_dump\":%.4f,\"ratio_parse\":%.4f}",
                  first ? "" : ",", hits, text.size(), v, d, p, v / d, v / p);
    json_line += entry;
    first = false;
  }
  std::printf("%s],\"sink\":%zu}\n", json_line.c_str(), sink);
  return 0;
}
