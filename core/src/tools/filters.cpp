// includeTools / excludeTools (SPEC §2.2, §6): exact names or '*' globs; exclude wins.

#include "mcprt/tools.hpp"

namespace mcprt {

bool glob_match(std::string_view pattern, std::string_view text) {
  // Greedy matching with one backtrack point (the last '*'): linear in practice and
  // never recursive, so a hostile pattern like "*a*a*a*b" cannot blow the stack.
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_t = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool tool_passes_filters(const ServerConfig& config, std::string_view raw_tool) {
  for (const auto& pattern : config.exclude_tools) {
    if (glob_match(pattern, raw_tool)) return false;
  }
  if (config.include_tools.empty()) return true;
  for (const auto& pattern : config.include_tools) {
    if (glob_match(pattern, raw_tool)) return true;
  }
  return false;
}

}  // namespace mcprt
