// The built-in Exa claim filter (SPEC §2.3). The host serves Exa's web search natively,
// so an Exa MCP server is dropped (its keys handed to the host) unless it asks for tools
// beyond web_search_exa. Hand-written matching instead of std::regex: the patterns are
// simple and std::regex costs a lot of wasm size.

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/discovery.hpp"
#include "util/ascii.hpp"

namespace mcprt {

namespace {

constexpr std::string_view kExaHost = "mcp.exa.ai";
constexpr std::string_view kNativeExaTool = "web_search_exa";

using ascii::lower;

bool is_whitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string trimmed(std::string_view s) {
  while (!s.empty() && is_whitespace(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_whitespace(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// Every value of `key=` in `text` (case-insensitive key), up to '&' or whitespace.
// `at_boundary`: the key must start the text or follow whitespace, '?' or '&' (so that
// `tools=` does not match inside `mytools=`).
std::vector<std::string> values_of(std::string_view text, std::string_view key, bool at_boundary) {
  std::vector<std::string> out;
  const std::string low = lower(text);
  const std::string k = lower(key) + "=";
  std::size_t pos = 0;
  while ((pos = low.find(k, pos)) != std::string::npos) {
    const bool boundary =
        pos == 0 || is_whitespace(low[pos - 1]) || low[pos - 1] == '?' || low[pos - 1] == '&';
    const std::size_t begin = pos + k.size();
    std::size_t end = begin;
    while (end < text.size() && text[end] != '&' && !is_whitespace(text[end])) ++end;
    if ((!at_boundary || boundary) && end > begin) out.emplace_back(text.substr(begin, end - begin));
    pos = begin;
  }
  return out;
}

void split_tools(std::string_view list, std::vector<std::string>& out) {
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string t = trimmed(list.substr(start, comma - start));
    if (!t.empty()) out.push_back(std::move(t));
    start = comma + 1;
  }
}

// The tools a stdio Exa server asks for: `--tools a,b`, `-tools a,b`, `--tools=a,b`,
// or `tools=a,b` anywhere an arg has it.
std::vector<std::string> requested_tools_from_args(const std::vector<std::string>& args) {
  std::vector<std::string> tools;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string a = lower(args[i]);
    if ((a == "--tools" || a == "-tools") && i + 1 < args.size()) {
      split_tools(args[i + 1], tools);
      continue;
    }
    std::string_view rest = args[i];
    if (a.rfind("--tools=", 0) == 0) {
      split_tools(rest.substr(8), tools);
      continue;
    }
    if (a.rfind("-tools=", 0) == 0) {
      split_tools(rest.substr(7), tools);
      continue;
    }
    for (const auto& v : values_of(args[i], "tools", true)) split_tools(v, tools);
  }
  return tools;
}

ClaimDecision inspect_exa(const ServerConfig& config) {
  ClaimDecision d;
  const bool stdio = config.type == TransportType::stdio;
  bool exa = lower(config.name) == "exa";
  if (!stdio && lower(config.url).find(kExaHost) != std::string::npos) exa = true;
  if (stdio) {
    for (const auto& a : config.args) {
      if (lower(a).find(kExaHost) != std::string::npos) exa = true;
    }
  }
  if (!exa) return d;
  d.claimed = true;

  std::vector<std::string> tools;
  if (stdio) {
    for (const auto& a : config.args) {
      for (auto& k : values_of(a, "exaApiKey", false)) d.api_keys.push_back(std::move(k));
    }
    tools = requested_tools_from_args(config.args);
  } else {
    for (auto& k : values_of(config.url, "exaApiKey", false)) d.api_keys.push_back(std::move(k));
    const std::size_t q = config.url.find('?');
    if (q != std::string::npos) {
      std::string_view query = std::string_view(config.url).substr(q);
      query = query.substr(0, query.find('#'));
      for (const auto& v : values_of(query, "tools", true)) split_tools(v, tools);
    }
  }
  if (auto it = config.env.find("EXA_API_KEY"); it != config.env.end() && !it->second.empty()) {
    d.api_keys.push_back(it->second);
  }

  bool wants_more = false;
  for (const auto& t : tools) {
    if (t != kNativeExaTool) wants_more = true;
  }
  d.drop = !wants_more;
  return d;
}

}  // namespace

ClaimFilter exa_claim_filter() { return ClaimFilter{"exa", inspect_exa}; }

}  // namespace mcprt
