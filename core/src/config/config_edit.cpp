// Editing an MCP config file (config_edit.hpp): building and checking an `add` entry, and
// the add / remove / enable / disable rewrites over read_user_config / write_user_config.

#include "mcprt/config_edit.hpp"

#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/config.hpp"

namespace mcprt {
namespace {

constexpr const char* kServersKey = "mcpServers";

std::string q(std::string_view s) { return "\"" + std::string(s) + "\""; }

Error bad(const std::string& name, const std::string& what) {
  return Error::make(ErrorCode::invalid_argument, "Server " + q(name) + ": " + what);
}

// POSIX environment variable names: a letter or '_', then letters, digits and '_'.
bool is_env_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

// An HTTP field name: RFC 9110 token characters.
bool is_header_name(std::string_view s) {
  if (s.empty()) return false;
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  for (char c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    kSpecials.find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool looks_like_url(std::string_view s) { return s.find("://") != std::string_view::npos; }

// The file as an object whose "mcpServers" is an object (or absent); the error names the
// file.
Result<ordered_json> read_for_edit(FileSystem& fs, const std::string& path) {
  auto doc = read_user_config(fs, path);
  if (!doc.ok()) return doc.error();
  auto servers = doc->find(kServersKey);
  if (servers != doc->end() && !servers->is_null() && !servers->is_object()) {
    return Error::make(ErrorCode::invalid_config,
                       q(kServersKey) + " in " + path + " is not an object; fix it by hand first");
  }
  return doc;
}

// Removes every `name` string from the array `key` (other values stay as written).
void remove_name(ordered_json& doc, const char* key, const std::string& name) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) return;
  ordered_json kept = ordered_json::array();
  for (const auto& v : *it) {
    if (!(v.is_string() && v.get_ref<const std::string&>() == name)) kept.push_back(v);
  }
  *it = std::move(kept);
}

// Appends `name` to the array `key` unless it is there. A `key` that is not an array is
// the user's to fix: rewriting it would lose what they wrote.
Status add_name(ordered_json& doc, const char* key, const std::string& name,
                const std::string& path) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) {
    doc[key] = ordered_json::array({name});
    return {};
  }
  if (!it->is_array()) {
    return Error::make(ErrorCode::invalid_config,
                       q(key) + " in " + path + " is not a list of names; fix it by hand first");
  }
  for (const auto& v : *it) {
    if (v.is_string() && v.get_ref<const std::string&>() == name) return {};
  }
  it->push_back(name);
  return {};
}

}  // namespace

Result<ordered_json> make_server_entry(const ServerEntrySpec& spec) {
  const std::string& name = spec.name;
  if (Status v = validate_server_name(name); !v.ok())
    return Error::make(ErrorCode::invalid_argument, v.error().message);
  const std::string& t = spec.transport;
  if (!t.empty() && t != "stdio" && t != "http" && t != "sse") {
    return bad(name, "unknown transport " + q(t) + " (stdio, http or sse)");
  }
  const bool has_url = !spec.url.empty();
  const bool has_command = !spec.command.empty() || !spec.args.empty();
  if (has_url && has_command)
    return bad(name, "give either a URL or a command (-- <command> [args…]), not both");
  if (!has_url && !has_command)
    return bad(name, "give a URL (http/sse) or -- <command> [args…] (stdio)");
  if (has_url && t == "stdio") {
    return bad(name, "--transport stdio runs a command (-- <command> [args…]); " + q(spec.url) +
                         " is a URL (use --transport http or sse)");
  }
  if (has_command && (t == "http" || t == "sse")) {
    return bad(name, "--transport " + t + " needs a URL, not a command");
  }
  if (has_command && spec.command.empty()) return bad(name, "the command is empty");
  if (has_command && looks_like_url(spec.command) && spec.args.empty()) {
    return bad(name, q(spec.command) +
                         " looks like a URL: give it without -- (add --transport http or sse)");
  }
  if (has_url && !is_valid_http_url(spec.url)) {
    return bad(name, q(spec.url) + " is not an http:// or https:// URL");
  }
  if (has_url && !spec.env.empty()) {
    return bad(name, "-e sets the environment of a stdio server; an " +
                         std::string(t.empty() ? "http" : t) +
                         " server takes headers (-H 'Name: value')");
  }
  if (has_command && !spec.headers.empty()) {
    return bad(name,
               "-H sets a header of an http/sse server; a stdio server takes its environment (-e "
               "NAME=VALUE)");
  }

  ordered_json entry = ordered_json::object();
  if (!t.empty()) entry["type"] = t;
  if (has_command) {
    entry["command"] = spec.command;
    entry["args"] = spec.args;
    if (!spec.env.empty()) {
      ordered_json env = ordered_json::object();
      for (const auto& item : spec.env) {
        auto eq = item.find('=');
        if (eq == std::string::npos) return bad(name, "-e " + q(item) + " is not NAME=VALUE");
        std::string key = item.substr(0, eq);
        if (!is_env_name(key)) {
          return bad(name, "-e " + q(item) + ": " + q(key) +
                               " is not an environment variable name (letters, digits and _, not "
                               "starting with a digit)");
        }
        if (env.contains(key)) return bad(name, "-e " + key + " is given twice");
        env[key] = item.substr(eq + 1);
      }
      entry["env"] = std::move(env);
    }
  } else {
    entry["url"] = spec.url;
    if (!spec.headers.empty()) {
      ordered_json headers = ordered_json::object();
      std::set<std::string> seen;  // field names are case-insensitive
      for (const auto& item : spec.headers) {
        auto colon = item.find(':');
        if (colon == std::string::npos)
          return bad(name, "-H needs 'Name: value' (no ':' in the header given)");
        std::string key(trim(std::string_view(item).substr(0, colon)));
        std::string value(trim(std::string_view(item).substr(colon + 1)));
        if (!is_header_name(key)) return bad(name, "-H " + q(key) + " is not an HTTP header name");
        if (value.find_first_of("\r\n") != std::string::npos ||
            value.find('\0') != std::string::npos) {
          return bad(name, "-H " + key + ": the value holds a line break");
        }
        std::string lower;
        for (char c : key)
          lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
        if (!seen.insert(lower).second) return bad(name, "-H " + key + " is given twice");
        headers[key] = std::move(value);
      }
      entry["headers"] = std::move(headers);
    }
  }

  // What discovery will say about it, said now.
  auto parsed = parse_server_entry(name, json(entry));
  if (!parsed.ok()) return Error::make(ErrorCode::invalid_argument, parsed.error().message);
  if (Status v = validate_server_config(*parsed); !v.ok()) {
    return Error::make(ErrorCode::invalid_argument, v.error().message);
  }
  return entry;
}

Result<ServerEntrySpec> parse_add_words(const std::vector<std::string>& words) {
  ServerEntrySpec spec;
  bool have_name = false;
  std::vector<std::string> target;  // the words that are neither options nor the name
  bool after_dashes = false;
  auto fail = [](std::string what) {
    return Error::make(ErrorCode::invalid_argument, std::move(what));
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (after_dashes) {
      target.push_back(w);
      continue;
    }
    if (w == "--") {
      after_dashes = true;
      if (!target.empty())
        return fail("a command after -- and " + q(target.front()) + " before it: give one target");
      continue;
    }
    // -t X, --transport X, --transport=X (same for -e, -H, --url).
    auto value_of =
        [&](std::initializer_list<const char*> names) -> std::optional<Result<std::string>> {
      for (const char* n : names) {
        const std::string flag = n;
        if (w == flag) {
          if (i + 1 >= words.size()) return Result<std::string>(fail(flag + " needs a value"));
          return Result<std::string>(words[++i]);
        }
        if (flag.rfind("--", 0) == 0 && w.rfind(flag + "=", 0) == 0) {
          return Result<std::string>(w.substr(flag.size() + 1));
        }
      }
      return std::nullopt;
    };
    if (auto v = value_of({"-t", "--transport"})) {
      if (!v->ok()) return v->error();
      spec.transport = v->value();
    } else if (auto e = value_of({"-e", "--env"})) {
      if (!e->ok()) return e->error();
      spec.env.push_back(e->value());
    } else if (auto h = value_of({"-H", "--header"})) {
      if (!h->ok()) return h->error();
      spec.headers.push_back(h->value());
    } else if (auto u = value_of({"--url"})) {
      if (!u->ok()) return u->error();
      spec.url = u->value();
    } else if (w.size() > 1 && w[0] == '-') {
      return fail("unknown option " + q(w) +
                  " (a command's own options go after --: add <name> -- <command> " + w + " …)");
    } else if (!have_name) {
      spec.name = w;
      have_name = true;
    } else {
      target.push_back(w);
    }
  }
  if (!have_name) return fail("the server's name is missing");
  if (!target.empty()) {
    if (!after_dashes && target.size() == 1 && looks_like_url(target[0])) {
      if (!spec.url.empty()) return fail("two URLs: " + q(spec.url) + " and " + q(target[0]));
      spec.url = target[0];
    } else {
      spec.command = target[0];
      spec.args.assign(target.begin() + 1, target.end());
    }
  }
  if (after_dashes && target.empty()) return fail("no command after --");
  return spec;
}

Result<bool> config_file_defines(FileSystem& fs, const std::string& path, const std::string& name) {
  auto doc = read_for_edit(fs, path);
  if (!doc.ok()) return doc.error();
  auto servers = doc->find(kServersKey);
  return servers != doc->end() && servers->is_object() && servers->contains(name);
}

Status add_server_to_config(FileSystem& fs, const std::string& path, const std::string& name,
                            const ordered_json& entry) {
  auto doc = read_for_edit(fs, path);
  if (!doc.ok()) return doc.error();
  ordered_json& servers = (*doc)[kServersKey];
  if (servers.is_null()) servers = ordered_json::object();
  if (servers.contains(name)) {
    return Error::make(ErrorCode::invalid_argument,
                       "Server " + q(name) + " is already defined in " + path,
                       json{{"exists", true}});
  }
  servers[name] = entry;
  return write_user_config(fs, path, *doc);
}

Result<bool> remove_server_from_config(FileSystem& fs, const std::string& path,
                                       const std::string& name) {
  auto doc = read_for_edit(fs, path);
  if (!doc.ok()) return doc.error();
  auto servers = doc->find(kServersKey);
  if (servers == doc->end() || !servers->is_object() || !servers->contains(name)) return false;
  servers->erase(name);
  remove_name(*doc, "enabledServers", name);
  remove_name(*doc, "disabledServers", name);
  if (Status w = write_user_config(fs, path, *doc); !w.ok()) return w.error();
  return true;
}

Status set_server_enabled_in_config(FileSystem& fs, const std::string& path,
                                    const std::string& name, bool enabled) {
  auto doc = read_user_config(fs, path);
  if (!doc.ok()) return doc.error();
  remove_name(*doc, enabled ? "disabledServers" : "enabledServers", name);
  if (Status s = add_name(*doc, enabled ? "enabledServers" : "disabledServers", name, path);
      !s.ok())
    return s;
  return write_user_config(fs, path, *doc);
}

}  // namespace mcprt
