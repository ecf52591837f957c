// Discovery-time `${VAR}` substitution (SPEC §2.4, first bullet).
//
// Forms: `${VAR}`, `${VAR:-default}` (default when VAR is unset or empty, as in sh),
// `${env:VAR}` (VS Code's spelling; `${env:VAR:-default}` works too). Anything else in
// `${...}` with a colon (`${input:token}`, `${config:x}`) is not ours and stays as written
// without a warning (the parser already warns about `${input:…}`). An unterminated `${`
// is literal text.

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/discovery.hpp"

namespace mcprt {

namespace {

struct Substituter {
  const EnvLookup& env;
  std::set<std::string> unset;  // names without a value and without a default

  std::string apply(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    std::size_t i = 0;
    while (i < in.size()) {
      const std::size_t start = in.find("${", i);
      if (start == std::string_view::npos) {
        out.append(in.substr(i));
        break;
      }
      out.append(in.substr(i, start - i));
      const std::size_t close = in.find('}', start + 2);
      if (close == std::string_view::npos) {
        out.append(in.substr(start));
        break;
      }
      const std::string_view inner = in.substr(start + 2, close - start - 2);
      out += expand(inner, in.substr(start, close - start + 1));
      i = close + 1;
    }
    return out;
  }

  std::string expand(std::string_view inner, std::string_view whole) {
    std::string_view name = inner;
    if (name.substr(0, 4) == "env:") name.remove_prefix(4);
    std::optional<std::string_view> fallback;
    if (const std::size_t dash = name.find(":-"); dash != std::string_view::npos) {
      fallback = name.substr(dash + 2);
      name = name.substr(0, dash);
    }
    if (name.empty() || name.find(':') != std::string_view::npos) return std::string(whole);
    std::optional<std::string> value = env ? env(name) : std::nullopt;
    if (fallback && (!value || value->empty())) return std::string(*fallback);
    if (value) return *value;
    unset.insert(std::string(name));
    return std::string(whole);
  }
};

void substitute_map(std::map<std::string, std::string>& map, Substituter& s) {
  for (auto& [key, value] : map) value = s.apply(value);
}

}  // namespace

ServerConfig substitute_variables(ServerConfig config, const EnvLookup& env,
                                  std::vector<ConfigError>* warnings) {
  Substituter s{env, {}};
  config.command = s.apply(config.command);
  for (auto& arg : config.args) arg = s.apply(arg);
  substitute_map(config.env, s);
  config.cwd = s.apply(config.cwd);
  config.url = s.apply(config.url);
  substitute_map(config.headers, s);
  // OAuth client settings: secrets and keys usually come from the environment.
  config.oauth.client_id = s.apply(config.oauth.client_id);
  config.oauth.client_secret = s.apply(config.oauth.client_secret);
  config.oauth.client_metadata_url = s.apply(config.oauth.client_metadata_url);
  config.oauth.private_key = s.apply(config.oauth.private_key);
  config.oauth.private_key_file = s.apply(config.oauth.private_key_file);
  // Codex env_vars: forwarded when set, silently absent otherwise (Codex's rule); an
  // explicit env value wins.
  for (const auto& name : config.env_vars) {
    if (config.env.count(name)) continue;
    if (auto v = env ? env(name) : std::nullopt) config.env[name] = *v;
  }
  config.env_vars.clear();
  if (warnings) {
    for (const auto& name : s.unset) {
      ConfigError w;
      w.path = config.source.path;
      w.server = config.name;
      w.message = "Server \"" + config.name + "\": environment variable \"" + name +
                  "\" is not set; \"${" + name + "}\" is used as written";
      warnings->push_back(std::move(w));
    }
  }
  return config;
}

}  // namespace mcprt
