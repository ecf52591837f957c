// Tool search over hostile tool text (SPEC §16): the index is built from what servers say
// about their tools, and searched with what a model writes. Records: the first is the
// query; each later record is one tool, its lines raw name, server, title, description,
// then property names.
//
// Invariants:
//  - a search never returns more hits than its limit (select: excepted), never the same
//    tool twice, and only names of indexed tools; tiers come in order (exact name, name
//    substring, keywords); select: hits plus not_found account for every listed name;
//  - a summary is at most its cap and valid UTF-8 whenever the description was;
//  - every term is non-empty lowercase-ASCII-or-UTF-8 text without separators.

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "mcprt/tool_search.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  using namespace mcprt;
  const auto records = fuzz::split_records(fuzz::as_text(bytes, size), 48);
  const std::string_view query = records[0];

  std::vector<ToolSearchDocument> docs;
  std::set<std::string> names;
  for (std::size_t i = 1; i < records.size(); ++i) {
    std::string_view rest = records[i];
    ToolSearchDocument d;
    d.raw_name = std::string(fuzz::take_line(rest));
    d.server = std::string(fuzz::take_line(rest));
    d.title = std::string(fuzz::take_line(rest));
    d.description = std::string(fuzz::take_line(rest));
    while (!rest.empty()) d.properties.emplace_back(fuzz::take_line(rest));
    d.name = "mcp_" + d.server + "_" + d.raw_name;
    names.insert(d.name);

    for (std::size_t cap : {std::size_t{0}, std::size_t{3}, std::size_t{7}, kToolSummaryMaxBytes}) {
      const std::string summary = summarize_description(d.description, cap);
      FUZZ_CHECK(summary.size() <= cap || (cap == 0 && summary.empty()));
      if (fuzz::valid_utf8(d.description)) FUZZ_CHECK(fuzz::valid_utf8(summary));
    }
    docs.push_back(std::move(d));
  }
  for (const std::string& term : search_terms(query)) {
    FUZZ_CHECK(!term.empty());
    for (char c : term) {
      FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
      FUZZ_CHECK(c != ' ' && c != '_' && c != '-' && c != '\n');
    }
  }

  ToolSearchIndex index;
  index.rebuild(std::move(docs));
  FUZZ_CHECK(index.size() == names.size());
  const std::size_t limit = query.empty() ? 0 : static_cast<unsigned char>(query.back()) % 64;
  const ToolSearchResult r = index.search(query, limit);
  const std::size_t first = query.find_first_not_of(" \t\r\n");
  const bool select = first != std::string_view::npos && query.substr(first).rfind("select:", 0) == 0;
  if (!select) {
    const std::size_t cap = std::min(limit == 0 ? kToolSearchDefaultLimit : limit, kToolSearchMaxLimit);
    FUZZ_CHECK(r.hits.size() <= cap);
    FUZZ_CHECK(r.not_found.empty());
  }
  std::set<std::string> seen;
  int last_tier = -1;
  for (const ToolSearchHit& h : r.hits) {
    FUZZ_CHECK(names.count(h.name) == 1);
    FUZZ_CHECK(seen.insert(h.name).second);
    if (!select) {
      const int tier = h.match == ToolSearchMatch::exact_name       ? 0
                       : h.match == ToolSearchMatch::name_substring ? 1
                                                                    : 2;
      FUZZ_CHECK(h.match != ToolSearchMatch::selected);
      FUZZ_CHECK(tier >= last_tier);
      last_tier = tier;
    } else {
      FUZZ_CHECK(h.match == ToolSearchMatch::selected);
    }
  }
  return 0;
}
