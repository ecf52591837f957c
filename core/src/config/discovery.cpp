// discover_servers: merge, filter, validate and dedup (SPEC §2.3).
//
// Entries are visited once, in order: providers by priority (higher first; equal
// priorities keep registration order, built-ins before the host's), and within a provider
// in the order its load() returned (project files first). For each entry:
//   project level while project config is off → gone (claims no name, no errors);
//   name already claimed                        → shadowed "same name";
//   disabled (disabledServers, or enabled:false not overridden by enabledServers)
//                                               → claims its name, listed in `disabled`;
//   project level and not trusted (SPEC §17)   → claims its name, listed in `pending` as
//                                                 written; nothing below runs on it, so
//                                                 no ${VAR}, no env_vars, no claim filter
//                                                 (which could extract keys), no
//                                                 validation (which needs the values);
//   ${VAR} substitution (and Codex env_vars);
//   a claim filter drops it                     → claims its name, listed in `claimed`;
//   invalid                                     → an error; claims NO name, so a valid
//                                                 lower-priority entry of that name wins;
//   same endpoint as an accepted server         → claims its name, shadowed "same endpoint";
//   otherwise accepted.
// Disabled, pending and claimed entries never shadow a differently named server: they will
// not connect, so the other one is the only way to reach that endpoint.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "util/sort_order.hpp"
#include "mcprt/discovery.hpp"

namespace mcprt {

namespace {

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool same_endpoint(const ServerConfig& a, const ServerConfig& b) {
  if (a.type != b.type || a.auth != b.auth) return false;
  if (a.type == TransportType::stdio) {
    return a.command == b.command && a.args == b.args && a.env == b.env && a.cwd == b.cwd;
  }
  return a.url == b.url && a.headers == b.headers;
}

std::vector<std::shared_ptr<const ConfigProvider>> active_providers(const DiscoveryOptions& options) {
  std::vector<std::shared_ptr<const ConfigProvider>> providers;
  if (options.use_builtin_providers) {
    for (auto& p : builtin_providers()) {
      if (!contains(options.removed_providers, p->id())) providers.push_back(std::move(p));
    }
  }
  for (const auto& p : options.extra_providers) {
    if (p) providers.push_back(p);
  }
  detail::sort_by(providers, [](const auto& a, const auto& b) { return a->priority() > b->priority(); });
  return providers;
}

}  // namespace

DiscoveryResult discover_servers(const DiscoveryContext& ctx, const DiscoveryOptions& options) {
  DiscoveryResult result;

  std::vector<ParsedConfig> files;
  for (const auto& provider : active_providers(options)) {
    for (auto& parsed : provider->load(ctx)) files.push_back(std::move(parsed));
  }

  // The native user file's lists (SPEC §2.3) and trust records (§17): the files of level
  // native, which are that file or the one a host reads instead (the CLI's --config, whose
  // `/mcp disable` must hold as it does in the user file). Only those: a project file that
  // writes `trustedProjects` trusts nothing, and other tools' files never disable ours.
  std::vector<std::string> disabled_list, enabled_list;
  for (const auto& f : files) {
    if (f.source.level == SourceInfo::Level::native) {
      disabled_list.insert(disabled_list.end(), f.disabled_servers.begin(), f.disabled_servers.end());
      enabled_list.insert(enabled_list.end(), f.enabled_servers.begin(), f.enabled_servers.end());
      result.trust.merge(f.trusted_projects);
    }
  }
  result.trust.merge(options.extra_trust);
  result.project_folder = project_trust_folder(ctx);

  std::vector<ClaimFilter> filters;
  if (options.filter_exa) filters.push_back(exa_claim_filter());
  for (const auto& f : options.claim_filters) {
    if (f.inspect) filters.push_back(f);
  }

  std::set<std::string> claimed;                   // names taken by an earlier entry
  std::map<std::string, SourceInfo> invalid_sources;  // names that only had invalid entries
  std::vector<ServerConfig> accepted;
  std::set<std::string> keys_seen;

  // The loser keeps its source and, when it parsed, its entry as written; the winner is
  // named with where it came from.
  auto shadow = [&](const std::string& name, const SourceInfo& source, std::string by, const char* reason,
                    const SourceInfo& by_source, std::optional<ServerConfig> written) {
    result.shadowed.push_back(
        ShadowedServer{name, source, std::move(by), reason, by_source, std::move(written)});
  };
  auto claim = [&](const std::string& name, const SourceInfo& source) {
    claimed.insert(name);
    result.sources[name] = source;
  };
  // An entry that cannot be used: an error naming its file and server.
  auto reject = [&](const std::string& name, const SourceInfo& source, std::string message) {
    ConfigError e;
    e.path = source.path;
    e.server = name;
    e.message = std::move(message);
    result.errors.push_back(std::move(e));
    invalid_sources.emplace(name, source);
  };

  for (auto& file : files) {
    if (file.source.level == SourceInfo::Level::project && !options.enable_project_config) continue;

    for (auto& e : file.errors) {
      if (!e.server.empty() && claimed.count(e.server)) {
        shadow(e.server, file.source, e.server, "same name", result.sources[e.server], std::nullopt);
        continue;
      }
      if (!e.server.empty()) invalid_sources.emplace(e.server, file.source);
      result.errors.push_back(std::move(e));
    }
    for (auto& w : file.warnings) {
      if (w.server.empty() || !claimed.count(w.server)) result.warnings.push_back(std::move(w));
    }

    for (auto& entry : file.servers) {
      const std::string name = entry.name;
      if (claimed.count(name)) {
        shadow(name, entry.source, name, "same name", result.sources[name], entry);
        continue;
      }
      const bool force_off = contains(disabled_list, name);
      const bool force_on = contains(enabled_list, name);
      if (force_off || (!entry.enabled && !force_on)) {
        claim(name, entry.source);
        result.disabled.push_back(name);
        result.as_written[name] = std::move(entry);
        continue;
      }
      entry.enabled = true;

      if (entry.source.level == SourceInfo::Level::project && !options.trust_all_projects) {
        // The name is checked now (it reads nothing): listings print it, and an invalid
        // one must not claim a name a valid lower-priority entry could have.
        if (Status valid = validate_server_name(name); !valid.ok()) {
          reject(name, entry.source, valid.error().message);
          continue;
        }
        std::string hash = config_hash(entry);
        if (!result.trust.trusts(result.project_folder, name, hash)) {
          claim(name, entry.source);
          result.as_written[name] = entry;
          result.pending.push_back(
              ProjectServer{name, result.project_folder, std::move(hash), std::move(entry)});
          continue;
        }
      }

      ServerConfig written = entry;
      ServerConfig cfg = substitute_variables(std::move(entry), ctx.env, &result.warnings);

      bool drop = false;
      for (const auto& filter : filters) {
        ClaimDecision d = filter.inspect(cfg);
        if (!d.claimed) continue;
        drop = drop || d.drop;
        for (auto& k : d.api_keys) {
          if (keys_seen.insert(k).second) result.exa_api_keys.push_back(std::move(k));
        }
      }
      if (drop) {
        claim(name, cfg.source);
        result.claimed.push_back(name);
        result.as_written[name] = std::move(written);
        continue;
      }

      ValidationOptions validation;
      validation.stdio_available = options.stdio_available;
      if (Status valid = validate_server_config(cfg, validation); !valid.ok()) {
        reject(name, cfg.source, valid.error().message);
        continue;
      }

      auto twin = std::find_if(accepted.begin(), accepted.end(),
                               [&](const ServerConfig& a) { return same_endpoint(a, cfg); });
      if (twin != accepted.end()) {
        claim(name, cfg.source);
        shadow(name, cfg.source, twin->name, "same endpoint", twin->source, std::move(written));
        continue;
      }
      claim(name, cfg.source);
      result.as_written[name] = std::move(written);
      accepted.push_back(std::move(cfg));
    }
  }

  for (auto& [name, source] : invalid_sources) result.sources.emplace(name, source);
  detail::sort_by(accepted, [](const ServerConfig& a, const ServerConfig& b) { return a.name < b.name; });
  result.configs = std::move(accepted);
  detail::sort_by(result.pending,
                  [](const ProjectServer& a, const ProjectServer& b) { return a.name < b.name; });
  return result;
}

std::vector<const ShadowedServer*> find_shadowed(const DiscoveryResult& result, const std::string& name) {
  std::vector<const ShadowedServer*> out;
  for (const auto& s : result.shadowed) {
    if (s.name == name) out.push_back(&s);
  }
  return out;
}

std::string describe_shadowing(const ShadowedServer& s) {
  const SourceInfo& by = s.shadowed_by_source;
  std::string where = by.provider_name.empty() ? by.provider : by.provider_name;
  if (!where.empty()) where += std::string(" (") + to_string(by.level) + ")";
  if (!by.path.empty()) where += (where.empty() ? "" : " ") + by.path;
  return "shadowed by \"" + s.shadowed_by + "\"" + (where.empty() ? "" : " from " + where) + " (" + s.reason + ")";
}

}  // namespace mcprt
