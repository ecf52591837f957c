#include "util/sort_order.hpp"
#include "mcprt/tool_names.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numeric>

namespace mcprt {

namespace {

void append_sanitized(std::string& out, std::string_view s) {
  for (unsigned char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    out.push_back(ok ? static_cast<char>(c) : '_');
  }
}

std::string hash_suffix(std::string_view server, std::string_view tool) {
  // The NUL separator keeps ("a_b","c") and ("a","b_c") apart.
  std::string key;
  key.reserve(server.size() + tool.size() + 1);
  key.append(server).push_back('\0');
  key.append(tool);
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(fnv1a64(key) >> 32));
  return std::string("_") + buf;
}

std::string with_suffix(std::string base, std::string_view server, std::string_view tool,
                        std::size_t max_length) {
  std::string suffix = hash_suffix(server, tool);
  std::size_t keep = max_length > suffix.size() ? max_length - suffix.size() : 0;
  if (base.size() > keep) base.resize(keep);
  return base + suffix;
}

}  // namespace

std::string make_tool_name(std::string_view server, std::string_view tool,
                           std::size_t max_length) {
  std::string name = "mcp_";
  append_sanitized(name, server);
  name.push_back('_');
  append_sanitized(name, tool);
  if (name.size() <= max_length) return name;
  return with_suffix(std::move(name), server, tool, max_length);
}

std::vector<std::string> assign_tool_names(const std::vector<RawToolRef>& refs,
                                           std::size_t max_length) {
  std::vector<std::string> names(refs.size());
  // Visit pairs in raw (server, tool) order so the first one keeps a contested name.
  const std::vector<std::size_t> order =
      detail::sorted_order(refs.size(), [&](std::size_t a, std::size_t b) {
        if (refs[a].server != refs[b].server) return refs[a].server < refs[b].server;
        return refs[a].tool < refs[b].tool;
      });
  std::map<std::string, std::size_t> taken;  // name → owner index
  for (std::size_t i : order) {
    std::string name = make_tool_name(refs[i].server, refs[i].tool, max_length);
    if (taken.count(name)) {
      name = with_suffix(make_tool_name(refs[i].server, refs[i].tool, SIZE_MAX), refs[i].server,
                         refs[i].tool, max_length);
      // A suffixed name can in theory collide too (hash collision or an identical raw
      // pair listed twice); extend with a counter so every tool keeps a distinct name.
      std::string base = name;
      for (int n = 2; taken.count(name); ++n) {
        std::string counter = "_" + std::to_string(n);
        name = base.substr(0, std::min(base.size(), max_length - counter.size())) + counter;
      }
    }
    taken.emplace(name, i);
    names[i] = std::move(name);
  }
  return names;
}

std::vector<std::string> servers_for_tool_name(std::string_view tool_name,
                                               const std::vector<std::string>& servers,
                                               std::size_t max_length) {
  const std::size_t suffix_size = 9;  // "_" + 8 hex digits
  const bool maybe_cut = tool_name.size() == max_length && max_length > suffix_size;
  const std::size_t kept = maybe_cut ? max_length - suffix_size : tool_name.size();
  std::vector<std::pair<std::size_t, std::string>> found;  // (prefix length, server)
  for (const auto& server : servers) {
    std::string prefix = "mcp_";
    append_sanitized(prefix, server);
    prefix.push_back('_');
    const bool plain = tool_name.size() > prefix.size() && tool_name.compare(0, prefix.size(), prefix) == 0;
    // A cut name keeps only its first `kept` characters of mcp_<server>_<tool>.
    const bool cut = maybe_cut && prefix.size() >= kept && tool_name.compare(0, kept, prefix, 0, kept) == 0;
    if (plain || cut) found.emplace_back(prefix.size(), server);
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& f : found) {
    if (std::find(out.begin(), out.end(), f.second) == out.end()) out.push_back(std::move(f.second));
  }
  return out;
}

}  // namespace mcprt
