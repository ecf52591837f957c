// Project trust (SPEC §17): the folder trust is recorded under, the trust state of a
// discovered name and what an entry would run (for prompts and listings). The records in
// the user file's `trustedProjects` are read and written in user_file.cpp. The decision
// itself is made in discover_servers (discovery.cpp), before substitution; nothing here
// reads the environment.

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/redact.hpp"

namespace mcprt {

namespace {

std::string without_trailing_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// A control byte (or DEL) as \xHH: a config file must not be able to move the cursor or
// rewrite the terminal line a trust prompt is shown on.
void append_visible(std::string& out, char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7f) {
    static const char* kHex = "0123456789abcdef";
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 0xF];
  } else {
    out += c;
  }
}

std::string visible(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) append_visible(out, c);
  return out;
}

// One word as a POSIX shell would need it: bare when it is only safe characters, else in
// single quotes (with ' written as '\'').
std::string shell_word(std::string_view word) {
  static const std::string_view kSafe =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-";
  bool safe = !word.empty();
  for (char c : word) safe = safe && kSafe.find(c) != std::string_view::npos;
  if (safe) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      append_visible(out, c);
    }
  }
  out += "'";
  return out;
}

// The names in ${NAME}, ${NAME:-default}, ${env:NAME} of `text` (the substitution rules of
// substitution.cpp, read-only).
void collect_references(std::string_view text, std::set<std::string>& out) {
  std::size_t i = 0;
  while (true) {
    const std::size_t start = text.find("${", i);
    if (start == std::string_view::npos) return;
    const std::size_t close = text.find('}', start + 2);
    if (close == std::string_view::npos) return;
    std::string_view name = text.substr(start + 2, close - start - 2);
    if (name.substr(0, 4) == "env:") name.remove_prefix(4);
    if (const std::size_t dash = name.find(":-"); dash != std::string_view::npos) name = name.substr(0, dash);
    if (!name.empty() && name.find(':') == std::string_view::npos) out.insert(std::string(name));
    i = close + 1;
  }
}

}  // namespace

const char* to_string(TrustState state) {
  switch (state) {
    case TrustState::implicit: return "implicit";
    case TrustState::trusted: return "trusted";
    case TrustState::pending: return "pending";
  }
  return "unknown";
}

std::string project_trust_folder(const DiscoveryContext& ctx) {
  if (ctx.cwd.empty()) return {};
  if (ctx.real_path) {
    std::string real = ctx.real_path(ctx.cwd);
    if (!real.empty()) return without_trailing_slash(std::move(real));
  }
  return without_trailing_slash(ctx.cwd);
}

const ProjectServer* find_pending(const DiscoveryResult& result, const std::string& name) {
  for (const auto& p : result.pending) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TrustState trust_state(const DiscoveryResult& result, const std::string& name) {
  if (find_pending(result, name)) return TrustState::pending;
  auto it = result.sources.find(name);
  if (it != result.sources.end() && it->second.level == SourceInfo::Level::project) {
    return TrustState::trusted;
  }
  return TrustState::implicit;
}

std::vector<ProjectServer> project_servers(const DiscoveryResult& result) {
  std::vector<ProjectServer> out;
  for (const auto& [name, config] : result.as_written) {
    if (config.source.level != SourceInfo::Level::project) continue;
    out.push_back(ProjectServer{name, result.project_folder, config_hash(config), config});
  }
  return out;  // as_written is a map: already sorted by name
}

std::string describe_launch(const ServerConfig& config) {
  if (config.type != TransportType::stdio) return visible(redact_url(config.url));
  std::string out = shell_word(config.command);
  for (const auto& arg : config.args) out += " " + shell_word(arg);
  return out;
}

std::vector<std::string> connect_time_commands(const ServerConfig& config) {
  std::vector<std::string> out;
  auto scan = [&](const std::map<std::string, std::string>& values, const char* field) {
    for (const auto& [key, value] : values) {
      if (!value.empty() && value.front() == '!') out.push_back(std::string(field) + " " + visible(key) + ": " + visible(value));
    }
  };
  if (!config.env_literal) scan(config.env, "env");
  if (!config.origin_locked) scan(config.headers, "header");
  return out;
}

std::vector<std::string> referenced_variables(const ServerConfig& config) {
  std::set<std::string> names(config.env_vars.begin(), config.env_vars.end());
  collect_references(config.command, names);
  for (const auto& a : config.args) collect_references(a, names);
  for (const auto& [k, v] : config.env) collect_references(v, names);
  collect_references(config.cwd, names);
  collect_references(config.url, names);
  for (const auto& [k, v] : config.headers) collect_references(v, names);
  std::vector<std::string> out;
  for (const auto& n : names) out.push_back(visible(n));
  return out;
}

}  // namespace mcprt
