// `mcprt add|remove|get|enable|disable` (cli_config_verbs.hpp): config files only, through
// the core's config_edit.hpp and discovery. Implements:
//  [x] add: -s/--scope user|project, -t/--transport, -e KEY=VALUE, -H 'Name: value',
//      <url> | --url <url> | -- <command> [args…] (or <command> [args…] as `claude mcp add`)
//  [x] add --scope project trusts the one server it wrote (SPEC §17), never another
//  [x] remove [--scope]: the file that defines the name; names the file that does when it
//      is not mcprt's
//  [x] get [--json]: state, trust, source, what it runs; secret-named literals masked
//  [x] enable / disable: the user file's (or --config file's) lists
//  [ ] `claude mcp add-json` / `add-from-claude-desktop` equivalents
#include "cli_config_verbs.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcprt/config_edit.hpp"
#include "mcprt/native/discovery.hpp"
#include "mcprt/native/host.hpp"
#include "mcprt/redact.hpp"

namespace mcprt::cli {
namespace {

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// `s` as one POSIX shell word ('…', with '\'' for a quote) unless it needs no quoting.
std::string shell_word(const std::string& s) {
  if (!s.empty() &&
      s.find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./:@%+=,") ==
          std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A name that starts with '-' would read as an option: such commands put `--` first.
std::string name_arg(const std::string& name) {
  return (!name.empty() && name[0] == '-' ? "-- " : "") + name;
}

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "mcprt: %s\n", message.c_str());
  return code;
}

// A host for discovery only: no cache, nothing connects.
std::unique_ptr<native::NativeHost> config_host(const GlobalOptions& global) {
  native::NativeHostOptions ho;
  ho.cwd = global.cwd;
  ho.config_file = global.config_path;
  ho.use_cache = false;
  ho.log.level = LogLevel::error;
  auto host = std::make_unique<native::NativeHost>(std::move(ho));
  std::error_code ec;
  if (!std::filesystem::is_directory(host->cwd(), ec)) {
    fail(kExitUsage, "the working directory \"" + host->cwd() + "\" is not a directory");
    return nullptr;
  }
  return host;
}

struct EditTarget {
  std::string path;
  std::string scope;  // "user", "project" or "config"
};

// The file a verb edits (cli_config_verbs.hpp); nullopt = a usage error, reported.
std::optional<EditTarget> edit_target(const native::NativeHost& host, const GlobalOptions& global,
                                      const std::string& scope) {
  if (!global.config_path.empty()) {
    if (!scope.empty()) {
      fail(kExitUsage, "--scope " + scope +
                           " and --config both say which file to edit; with --config FILE the "
                           "verbs edit FILE (drop one of them)");
      return std::nullopt;
    }
    return EditTarget{host.user_config_path(), "config"};
  }
  const DiscoveryContext& ctx = host.discovery_context();
  if (scope == "project") {
    std::string path = native_project_config_path(ctx);
    if (path.empty()) {
      fail(kExitUsage, "there is no project directory to edit");
      return std::nullopt;
    }
    return EditTarget{path, "project"};
  }
  std::string path = native_user_config_path(ctx);
  if (path.empty()) {
    fail(kExitUsage,
         "there is no user config file (neither HOME nor XDG_CONFIG_HOME is set); use --config "
         "FILE");
    return std::nullopt;
  }
  return EditTarget{path, "user"};
}

// " --scope project" when the file is the project one (what to repeat in a later command).
std::string scope_flag(const EditTarget& t) {
  return t.scope == "project" ? " --scope project" : "";
}

std::string describe(const SourceInfo& s) {
  std::string out = s.provider_name.empty() ? s.provider : s.provider_name;
  return out + " (" + to_string(s.level) + ") " + s.path;
}

// A write failed (1), or the file / the request is wrong (2).
int edit_failure(const std::string& what, const Error& e) {
  return fail(e.code == ErrorCode::transport ? kExitFailed : kExitUsage, what + ": " + e.message);
}

// What discovery now makes of the entry just written at `path`: whether another entry of
// that name (or of that endpoint) wins over it, or it over others.
void report_precedence(const DiscoveryResult& d, const std::string& name, const std::string& path) {
  for (const auto& s : d.shadowed) {
    if (s.name == name && s.source.path == path) {
      auto winner = d.sources.find(s.shadowed_by);
      std::string where = winner == d.sources.end() ? "" : " in " + describe(winner->second);
      if (s.reason == "same name") {
        std::printf(
            "Note: \"%s\" is also defined%s, which takes precedence: this entry is not used "
            "(mcprt get %s).\n",
            name.c_str(), where.c_str(), name_arg(name).c_str());
      } else {
        std::printf("Note: it is the same server as \"%s\"%s: only that one is used.\n",
                    s.shadowed_by.c_str(), where.c_str());
      }
    } else if (s.shadowed_by == name && s.reason == "same name") {
      std::printf("Note: it takes precedence over \"%s\" in %s.\n", s.name.c_str(),
                  describe(s.source).c_str());
    }
  }
}

// --- get: masking --------------------------------------------------------------------------

// `${VAR}` / `${env:VAR}` alone: a reference, not a secret.
bool is_pure_reference(const std::string& v) {
  if (v.size() < 4 || v.rfind("${", 0) != 0 || v.back() != '}') return false;
  return v.find_first_of("}:-", 2) == v.size() - 1 ||
         (v.rfind("${env:", 0) == 0 && v.find('}') == v.size() - 1);
}

// The entry as written with secrets masked: string values of secret-named keys (env,
// headers, oauth.clientSecret …) unless they are a reference or a `!command`; every other
// string through redact_secrets (URL userinfo, secret query values, KEY=VALUE pairs).
json masked(const json& v, const std::string& key = "") {
  if (v.is_object()) {
    json out = json::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = masked(it.value(), it.key());
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto& e : v) out.push_back(masked(e));
    return out;
  }
  if (!v.is_string()) return v;
  const std::string& s = v.get_ref<const std::string&>();
  if (!key.empty() && is_secret_name(key) && !is_pure_reference(s) && (s.empty() || s[0] != '!')) {
    return std::string(kRedactedMask);
  }
  return redact_secrets(s);
}

}  // namespace

int run_add(const GlobalOptions& global, const AddOptions& o) {
  auto host = config_host(global);
  if (!host) return kExitUsage;
  auto target = edit_target(*host, global, o.scope);
  if (!target) return kExitUsage;

  ServerEntrySpec spec;
  spec.name = o.name;
  spec.transport = o.transport;
  spec.url = o.url;
  spec.env = o.env;
  spec.headers = o.headers;
  const std::size_t after = o.after_dashes < 0 ? 0 : static_cast<std::size_t>(o.after_dashes);
  const std::vector<std::string> before(
      o.target.begin(), o.target.end() - static_cast<long>(std::min(after, o.target.size())));
  const std::vector<std::string> command(
      o.target.end() - static_cast<long>(std::min(after, o.target.size())), o.target.end());
  const std::string what = "cannot add " + in_quotes(o.name) + " to " + target->path;
  if (o.after_dashes >= 0) {
    if (!before.empty()) {
      return fail(kExitUsage, what + ": " + in_quotes(before.front()) +
                                  " before -- and a command after it: give one target");
    }
    if (command.empty()) return fail(kExitUsage, what + ": no command after --");
    spec.command = command.front();
    spec.args.assign(command.begin() + 1, command.end());
  } else if (!before.empty()) {
    if (before.size() == 1 && before.front().find("://") != std::string::npos) {
      if (!spec.url.empty())
        return fail(kExitUsage, what + ": two URLs (" + spec.url + " and " + before.front() + ")");
      spec.url = before.front();
    } else {
      spec.command = before.front();
      spec.args.assign(before.begin() + 1, before.end());
    }
  }
  auto entry = make_server_entry(spec);
  if (!entry.ok()) return fail(kExitUsage, what + ": " + entry.error().message);

  FileSystem& files = *host->discovery_context().fs;
  if (Status s = add_server_to_config(files, target->path, o.name, *entry); !s.ok()) {
    if (s.error().data.is_object() && s.error().data.value("exists", false)) {
      return fail(kExitUsage, what + ": it is already defined there; to replace it: mcprt remove" +
                                  scope_flag(*target) + " " + name_arg(o.name) +
                                  ", then add it again");
    }
    return edit_failure(what, s.error());
  }
  const std::string kind =
      spec.url.empty() ? "stdio" : (spec.transport.empty() ? "http" : spec.transport);
  std::printf(
      "Added %s server \"%s\" to %s (%s).\n", kind.c_str(), o.name.c_str(), target->path.c_str(),
      target->scope == "config" ? "the --config file" : (target->scope + " config").c_str());

  DiscoveryResult d = host->discover();
  if (target->scope == "project") {
    // The user typed this server: trust it, and only it, for this folder (its definition
    // hash, as `mcprt trust` records it), so it runs without a second step and without
    // trusting any other project server nobody reviewed.
    const std::string user_file = native_user_config_path(host->discovery_context());
    std::optional<ProjectServer> written;
    for (auto& p : project_servers(d)) {
      if (p.name == o.name && p.config.source.path == target->path) written = std::move(p);
    }
    Status trusted =
        written ? record_project_trust(files, user_file, written->folder,
                                       {{written->name, written->hash}}, /*replace=*/false)
                : Status(Error::make(ErrorCode::internal, "discovery did not find the entry"));
    if (trusted.ok()) {
      std::printf("Trusted it for %s (this server only; recorded in %s).\n",
                  written->folder.c_str(), user_file.c_str());
      d = host->discover();
    } else {
      std::printf("It is not trusted yet (%s); to trust the project's servers: %s\n",
                  trusted.error().message.c_str(),
                  trust_command(project_trust_folder(host->discovery_context())).c_str());
    }
  }
  report_precedence(d, o.name, target->path);
  for (const auto& e : d.errors) {
    if (e.server == o.name) std::printf("Warning: %s\n", e.describe().c_str());
  }
  return kExitOk;
}

int run_remove(const GlobalOptions& global, const std::string& name, const std::string& scope) {
  auto host = config_host(global);
  if (!host) return kExitUsage;
  FileSystem& files = *host->discovery_context().fs;
  std::optional<EditTarget> target;
  if (!scope.empty() || !global.config_path.empty()) {
    target = edit_target(*host, global, scope);
    if (!target) return kExitUsage;
  } else {
    // The mcprt file that defines it: user or project.
    std::vector<EditTarget> holders;
    for (const char* s : {"user", "project"}) {
      auto t = edit_target(*host, global, s);
      if (!t) return kExitUsage;
      auto defines = config_file_defines(files, t->path, name);
      if (!defines.ok()) return edit_failure("cannot remove " + in_quotes(name), defines.error());
      if (*defines) holders.push_back(*t);
    }
    if (holders.size() > 1) {
      return fail(kExitUsage, in_quotes(name) + " is defined in " + holders[0].path + " and in " +
                                  holders[1].path + "; say which: --scope user or --scope project");
    }
    target = holders.empty() ? *edit_target(*host, global, "user") : holders.front();
  }
  auto removed = remove_server_from_config(files, target->path, name);
  if (!removed.ok())
    return edit_failure("cannot remove " + in_quotes(name) + " from " + target->path, removed.error());
  if (!*removed) {
    std::string message = "no server " + in_quotes(name) + " in " + target->path;
    DiscoveryResult d = host->discover();
    if (auto it = d.sources.find(name); it != d.sources.end() && it->second.path != target->path) {
      const SourceInfo& from = it->second;
      if (from.provider == "native") {
        message += "; it is in " + from.path + " (mcprt remove" +
                   (from.level == SourceInfo::Level::project ? " --scope project " : " ") +
                   name_arg(name) + ")";
      } else {
        message += "; it comes from " + describe(from) +
                   ", which mcprt does not edit: edit that file, or turn the server off with: "
                   "mcprt disable " +
                   name_arg(name);
      }
    } else {
      message += " (mcprt list shows the configured servers)";
    }
    return fail(kExitUsage, message);
  }
  std::printf("Removed \"%s\" from %s.\n", name.c_str(), target->path.c_str());
  DiscoveryResult d = host->discover();
  if (auto it = d.sources.find(name); it != d.sources.end()) {
    std::printf("Note: \"%s\" is still defined in %s.\n", name.c_str(),
                describe(it->second).c_str());
  }
  return kExitOk;
}

int run_set_enabled(const GlobalOptions& global, const std::string& name, bool enable) {
  auto host = config_host(global);
  if (!host) return kExitUsage;
  auto target = edit_target(*host, global, "");
  if (!target) return kExitUsage;
  FileSystem& files = *host->discovery_context().fs;
  const std::string verb = enable ? "enable" : "disable";
  DiscoveryResult before = host->discover();
  bool known = before.sources.count(name) > 0;
  for (const auto& e : before.errors) known = known || e.server == name;
  if (!known) {
    // A name only the lists still hold (its entry is gone) may be cleaned up.
    auto doc = read_user_config(files, target->path);
    for (const char* key : {"disabledServers", "enabledServers"}) {
      if (!doc.ok() || !doc->contains(key) || !(*doc)[key].is_array()) continue;
      for (const auto& v : (*doc)[key])
        known = known || (v.is_string() && v.get<std::string>() == name);
    }
  }
  if (!known) {
    return fail(kExitUsage, "cannot " + verb + " " + in_quotes(name) +
                                ": no server of that name is configured (mcprt list "
                                "shows them)");
  }
  if (Status s = set_server_enabled_in_config(files, target->path, name, enable); !s.ok()) {
    return edit_failure("cannot " + verb + " " + in_quotes(name) + " in " + target->path, s.error());
  }
  std::printf("%s \"%s\" in %s.\n", enable ? "Enabled" : "Disabled", name.c_str(),
              target->path.c_str());
  if (enable) {
    DiscoveryResult d = host->discover();
    if (const ProjectServer* p = find_pending(d, name)) {
      std::printf("Note: it is a project server that is not trusted; to trust it: %s\n",
                  trust_command(p->folder).c_str());
    }
    for (const auto& e : d.errors) {
      if (e.server == name) std::printf("Note: it is invalid: %s\n", e.describe().c_str());
    }
  }
  return kExitOk;
}

int run_get(const GlobalOptions& global, const std::string& name, bool as_json) {
  auto host = config_host(global);
  if (!host) return kExitUsage;
  DiscoveryResult d = host->discover();
  const ServerConfig* config = nullptr;
  std::string state;
  std::string error;
  if (auto it = d.as_written.find(name); it != d.as_written.end()) {
    config = &it->second;
    state = "enabled";
  }
  const ProjectServer* pending = find_pending(d, name);
  if (pending) {
    config = &pending->config;
    state = "untrusted";
  }
  for (const auto& n : d.disabled) {
    if (n == name) state = "disabled";
  }
  for (const auto& n : d.claimed) {
    if (n == name) state = "claimed";
  }
  SourceInfo source;
  if (auto it = d.sources.find(name); it != d.sources.end()) source = it->second;
  if (!config) {
    for (const auto& e : d.errors) {
      if (e.server != name) continue;
      state = "invalid";
      error = e.message;
      if (source.path.empty()) source.path = e.path;
    }
  }
  if (state.empty()) {
    return fail(kExitUsage, "no server " + in_quotes(name) + " is configured (mcprt list shows them)");
  }
  if (config) source = config->source;
  const std::string trust = state == "invalid" ? "" : to_string(trust_state(d, name));
  std::vector<const ShadowedServer*> others;
  for (const auto& s : d.shadowed) {
    if (s.name == name && s.source.path != source.path) others.push_back(&s);
  }
  std::string remove_command;
  if (source.provider == "config") {
    remove_command = "mcprt --config " + shell_word(source.path) + " remove " + name_arg(name);
  } else if (source.provider == "native") {
    remove_command =
        "mcprt remove" +
        std::string(source.level == SourceInfo::Level::project ? " --scope project " : " ") +
        name_arg(name);
  }

  if (as_json) {
    json out = {{"name", name},
                {"state", state},
                {"source",
                 {{"provider", source.provider},
                  {"providerName", source.provider_name},
                  {"level", to_string(source.level)},
                  {"path", source.path}}}};
    if (!trust.empty()) out["trust"] = trust;
    if (pending) out["trustCommand"] = trust_command(pending->folder);
    if (config) {
      out["transport"] = to_string(config->type);
      out["config"] = masked(config->raw);
      out["runs"] = describe_launch(*config);
      auto cmds = connect_time_commands(*config);
      if (!cmds.empty()) out["connectCommands"] = cmds;
    }
    if (!error.empty()) out["error"] = error;
    json shadowed = json::array();
    for (const auto* s : others) {
      shadowed.push_back({{"path", s->source.path},
                          {"providerName", s->source.provider_name},
                          {"reason", s->reason}});
    }
    out["shadowed"] = std::move(shadowed);
    if (!remove_command.empty()) out["removeCommand"] = remove_command;
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return kExitOk;
  }

  std::printf("%s\n", name.c_str());
  std::printf("  state:     %s\n", state.c_str());
  if (!trust.empty()) std::printf("  trust:     %s\n", trust.c_str());
  std::printf("  source:    %s\n", describe(source).c_str());
  if (!error.empty()) std::printf("  error:     %s\n", error.c_str());
  if (config) {
    std::printf("  transport: %s\n", to_string(config->type));
    std::printf("  %s %s\n", config->type == TransportType::stdio ? "runs:     " : "url:      ",
                describe_launch(*config).c_str());
    json m = masked(config->raw);
    for (const char* key : {"env", "headers"}) {
      if (!m.contains(key) || !m[key].is_object() || m[key].empty()) continue;
      std::string line;
      for (auto it = m[key].begin(); it != m[key].end(); ++it) {
        line += (line.empty() ? "" : ", ") + it.key() + (std::string(key) == "env" ? "=" : ": ") +
                (it->is_string() ? it->get<std::string>() : it->dump());
      }
      std::printf("  %-10s %s\n", (std::string(key) + ":").c_str(), line.c_str());
    }
    for (const auto& c : connect_time_commands(*config))
      std::printf("  at connect: %s\n", c.c_str());
  }
  for (const auto* s : others) {
    std::printf("  also in:   %s (not used: %s)\n", describe(s->source).c_str(), s->reason.c_str());
  }
  if (pending) std::printf("  to trust:  %s\n", trust_command(pending->folder).c_str());
  if (!remove_command.empty()) std::printf("  to remove: %s\n", remove_command.c_str());
  return kExitOk;
}

}  // namespace mcprt::cli
