// The built-in capability sources of SPEC §2.1 (the programmatic provider is in
// programmatic_provider.cpp: the web module links that one and not this file, whose
// providers all read files).
//
// Every file provider reads through DiscoveryContext::fs. A missing file contributes
// nothing; a file that cannot be read or parsed contributes one ParsedConfig holding one
// error (with line and column for syntax errors); other files still load. Formats that
// differ from `mcpServers` (Gemini, Windsurf, VS Code, Codex) are mapped onto it before the
// shared parser runs, and ServerConfig::raw is then set back to the entry as written.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/json_text.hpp"

namespace mcprt {

namespace {

using Level = SourceInfo::Level;

std::string join_path(std::string_view dir, std::string_view rel) {
  if (dir.empty()) return {};
  std::string out(dir);
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  if (out != "/") out += '/';
  out += rel;
  return out;
}

std::string strip_trailing_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string config_home(const DiscoveryContext& ctx) {
  if (!ctx.xdg_config_home.empty()) return ctx.xdg_config_home;
  return join_path(ctx.home, ".config");
}

ConfigError file_error(const std::string& path, std::string message) {
  ConfigError e;
  e.path = path;
  e.message = std::move(message);
  return e;
}

ParsedConfig error_only(const SourceInfo& source, std::string message) {
  ParsedConfig out;
  out.source = source;
  out.errors.push_back(file_error(source.path, std::move(message)));
  return out;
}

// A file's text: nullopt when there is no file (or no file system); an error ParsedConfig
// appended to `out` when it exists but cannot be read.
std::optional<std::string> read_text(const DiscoveryContext& ctx, const SourceInfo& source,
                                     std::vector<ParsedConfig>& out) {
  if (!ctx.fs || source.path.empty()) return std::nullopt;
  Result<std::optional<std::string>> r = ctx.fs->read_file(source.path);
  if (!r.ok()) {
    out.push_back(error_only(source, "cannot read the file: " + r.error().message));
    return std::nullopt;
  }
  return std::move(r).value();
}

// Rewrites the entries of a format that is almost `mcpServers` (in place).
using EntryMapper = void (*)(json& entry, const DiscoveryContext& ctx);

// Parses `servers_doc` (a document holding `servers_key`) with every entry mapped by
// `mapper`; each ServerConfig::raw becomes the entry as written.
ParsedConfig parse_mapped(const json& doc, const ParseOptions& options, const DiscoveryContext& ctx,
                          EntryMapper mapper) {
  if (!mapper || !doc.is_object()) return parse_mcp_servers(doc, options.source.path, options);
  auto servers = doc.find(options.servers_key);
  if (servers == doc.end() || !servers->is_object()) {
    return parse_mcp_servers(doc, options.source.path, options);
  }
  json mapped = doc;
  for (auto& [name, entry] : mapped[options.servers_key].items()) {
    if (entry.is_object()) mapper(entry, ctx);
  }
  ParsedConfig parsed = parse_mcp_servers(mapped, options.source.path, options);
  for (auto& cfg : parsed.servers) {
    auto original = servers->find(cfg.name);
    if (original != servers->end()) cfg.raw = *original;
  }
  return parsed;
}

// Reads and parses one JSON(C) file; nothing when it does not exist.
void load_json_file(const DiscoveryContext& ctx, SourceInfo source, ParseOptions options,
                    EntryMapper mapper, std::vector<ParsedConfig>& out) {
  std::optional<std::string> text = read_text(ctx, source, out);
  if (!text) return;
  options.source = source;
  json doc = parse_json(*text, options.allow_comments);
  if (doc.is_discarded()) {
    // The shared parser reports the syntax error with line and column (or, for an empty
    // file, an empty config).
    out.push_back(parse_mcp_servers_json(*text, source.path, options));
    return;
  }
  out.push_back(parse_mapped(doc, options, ctx, mapper));
}

SourceInfo source_of(const ConfigProvider& p, std::string path, Level level) {
  SourceInfo s;
  s.provider = p.id();
  s.provider_name = p.display_name();
  s.path = std::move(path);
  s.level = level;
  return s;
}

// --- format mappers ---------------------------------------------------------------------

bool has(const json& entry, const char* key) {
  auto it = entry.find(key);
  return it != entry.end() && !it->is_null();
}

// Gemini CLI: `httpUrl` is Streamable HTTP, `url` is SSE, `command` is stdio.
void map_gemini(json& entry, const DiscoveryContext&) {
  const bool typed = has(entry, "type") || has(entry, "transport");
  if (has(entry, "httpUrl")) {
    if (!has(entry, "url")) {
      entry["url"] = entry["httpUrl"];
      if (!typed) entry["type"] = "http";
    }
    entry.erase("httpUrl");
  } else if (has(entry, "url") && !has(entry, "command") && !typed) {
    entry["type"] = "sse";
  }
}

// Windsurf: the url key is `serverUrl`.
void map_windsurf(json& entry, const DiscoveryContext&) {
  if (has(entry, "serverUrl")) {
    if (!has(entry, "url")) entry["url"] = entry["serverUrl"];
    entry.erase("serverUrl");
  }
}

// VS Code: `${workspaceFolder}` is the project directory.
void replace_workspace_folder(json& v, const std::string& cwd, int depth) {
  if (depth > 64) return;
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    const std::string token = "${workspaceFolder}";
    std::size_t pos = 0;
    bool changed = false;
    while ((pos = s.find(token, pos)) != std::string::npos) {
      s.replace(pos, token.size(), cwd);
      pos += cwd.size();
      changed = true;
    }
    if (changed) v = s;
  } else if (v.is_structured()) {
    for (auto& child : v) replace_workspace_folder(child, cwd, depth + 1);
  }
}
void map_vscode(json& entry, const DiscoveryContext& ctx) {
  if (!ctx.cwd.empty()) replace_workspace_folder(entry, strip_trailing_slash(ctx.cwd), 0);
}

// --- Codex (TOML) -----------------------------------------------------------------------

// One `[mcp_servers.<name>]` table → an `mcpServers` entry. Problems are shape errors of
// Codex's own keys (the shared parser checks the keys that pass through unchanged).
json map_codex_entry(const json& table, std::vector<std::string>& problems) {
  json entry = json::object();
  for (const char* key : {"command", "args", "env", "cwd", "url", "enabled", "type", "transport"}) {
    if (has(table, key)) entry[key] = table[key];
  }
  // env_vars are only checked here: their values are read with ${VAR} at discovery time,
  // after the trust decision (ServerConfig::env_vars), never while a file is loaded.
  if (has(table, "env_vars")) {
    const json& names = table["env_vars"];
    bool ok = names.is_array();
    for (std::size_t i = 0; ok && i < names.size(); ++i) ok = names[i].is_string();
    if (!ok) problems.push_back("\"env_vars\" must be an array of variable names");
  }
  json headers = json::object();
  if (has(table, "http_headers")) {
    if (!table["http_headers"].is_object()) {
      problems.push_back("\"http_headers\" must be a table of strings");
    } else {
      headers = table["http_headers"];
    }
  }
  if (has(table, "env_http_headers")) {
    const json& h = table["env_http_headers"];
    if (!h.is_object()) {
      problems.push_back("\"env_http_headers\" must be a table of header = variable name");
    } else {
      for (auto it = h.begin(); it != h.end(); ++it) {
        if (!it.value().is_string()) {
          problems.push_back("\"env_http_headers\" must be a table of header = variable name");
          break;
        }
        headers[it.key()] = "${" + it.value().get<std::string>() + "}";
      }
    }
  }
  if (has(table, "bearer_token_env_var")) {
    if (!table["bearer_token_env_var"].is_string()) {
      problems.push_back("\"bearer_token_env_var\" must be a variable name");
    } else {
      headers["Authorization"] = "Bearer ${" + table["bearer_token_env_var"].get<std::string>() + "}";
    }
  }
  if (!headers.empty()) entry["headers"] = headers;

  if (has(table, "enabled_tools")) entry["includeTools"] = table["enabled_tools"];
  if (has(table, "disabled_tools")) entry["excludeTools"] = table["disabled_tools"];

  auto seconds = [&](const char* key, const char* target) {
    if (!has(table, key)) return;
    const json& v = table[key];
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1e12) {
      problems.push_back(std::string("\"") + key + "\" must be a non-negative number of seconds");
      return;
    }
    entry[target] = static_cast<long long>(v.get<double>() * 1000.0);
  };
  seconds("startup_timeout_sec", "timeout");
  if (has(table, "startup_timeout_ms")) entry["timeout"] = table["startup_timeout_ms"];
  seconds("tool_timeout_sec", "toolTimeout");
  return entry;
}

void load_codex_file(const DiscoveryContext& ctx, const SourceInfo& source, std::vector<ParsedConfig>& out) {
  std::optional<std::string> text = read_text(ctx, source, out);
  if (!text) return;
  if (!ctx.parse_toml) {
    out.push_back(error_only(source, "TOML is not supported on this platform"));
    return;
  }
  Result<json> doc = ctx.parse_toml(*text, source.path);
  if (!doc.ok()) {
    ParsedConfig p = error_only(source, "invalid TOML: " + doc.error().message);
    const json& data = doc.error().data;
    if (data.is_object()) {
      auto line = data.find("line");
      auto column = data.find("column");
      if (line != data.end() && line->is_number_integer()) p.errors[0].line = line->get<int>();
      if (column != data.end() && column->is_number_integer()) p.errors[0].column = column->get<int>();
    }
    out.push_back(std::move(p));
    return;
  }
  ParsedConfig parsed;
  parsed.source = source;
  auto servers = doc->find("mcp_servers");
  if (servers == doc->end() || servers->is_null()) {
    out.push_back(std::move(parsed));
    return;
  }
  if (!servers->is_object()) {
    out.push_back(error_only(source, "\"mcp_servers\" must be a table of servers"));
    return;
  }
  json mapped = json::object();
  std::vector<ConfigError> mapping_errors;
  for (auto it = servers->begin(); it != servers->end(); ++it) {
    if (!it.value().is_object()) {
      mapped[it.key()] = it.value();  // the shared parser says "must be an object"
      continue;
    }
    std::vector<std::string> problems;
    json entry = map_codex_entry(it.value(), problems);
    if (!problems.empty()) {
      std::string msg = "Server \"" + it.key() + "\": ";
      for (std::size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
      ConfigError e = file_error(source.path, std::move(msg));
      e.server = it.key();
      mapping_errors.push_back(std::move(e));
      continue;
    }
    mapped[it.key()] = std::move(entry);
  }
  ParseOptions options;
  options.source = source;
  parsed = parse_mcp_servers(json{{"mcpServers", mapped}}, source.path, options);
  for (auto& cfg : parsed.servers) {
    auto original = servers->find(cfg.name);
    if (original == servers->end()) continue;
    cfg.raw = *original;
    if (auto names = original->find("env_vars"); names != original->end() && names->is_array()) {
      for (const auto& n : *names) cfg.env_vars.push_back(n.get<std::string>());
    }
  }
  for (auto& e : mapping_errors) parsed.errors.push_back(std::move(e));
  out.push_back(std::move(parsed));
}

// --- the providers ----------------------------------------------------------------------

class BuiltinProvider : public ConfigProvider {
 public:
  BuiltinProvider(std::string id, std::string name, int priority)
      : id_(std::move(id)), name_(std::move(name)), priority_(priority) {}
  std::string id() const override { return id_; }
  std::string display_name() const override { return name_; }
  int priority() const override { return priority_; }

 protected:
  SourceInfo source(std::string path, Level level) const { return source_of(*this, std::move(path), level); }

 private:
  std::string id_, name_;
  int priority_;
};

// Shows the host's app name (DiscoveryContext::app_display_name) instead of a fixed one.
class NativeProvider final : public BuiltinProvider {
 public:
  NativeProvider() : BuiltinProvider("native", "mcprt", 100) {}
  std::vector<ParsedConfig> load(const DiscoveryContext& ctx) const override {
    std::vector<ParsedConfig> out;
    SourceInfo project = source(native_project_config_path(ctx), Level::project);
    SourceInfo user = source(native_user_config_path(ctx), Level::native);
    const std::string display = ctx.app_display_name.empty() ? ctx.app_name : ctx.app_display_name;
    project.provider_name = user.provider_name = display;
    load_json_file(ctx, project, {}, nullptr, out);
    // Only the user file's disabledServers / enabledServers count (SPEC §2.3).
    for (auto& p : out) {
      p.disabled_servers.clear();
      p.enabled_servers.clear();
    }
    load_json_file(ctx, user, {}, nullptr, out);
    return out;
  }
};

class ClaudeProvider final : public BuiltinProvider {
 public:
  ClaudeProvider() : BuiltinProvider("claude", "Claude Code", 80) {}
  std::vector<ParsedConfig> load(const DiscoveryContext& ctx) const override {
    std::vector<ParsedConfig> out;
    // ~/.claude.json holds both the per-project ("local" scope) servers, which come first
    // as Claude Code ranks them above `.mcp.json`, and the user servers, which come last.
    SourceInfo user = source(join_path(ctx.home, ".claude.json"), Level::user);
    std::optional<ParsedConfig> local;
    std::optional<ParsedConfig> user_parsed;
    std::vector<ParsedConfig> user_errors;
    if (std::optional<std::string> text = read_text(ctx, user, user_errors)) {
      ParseOptions options;
      options.source = user;
      json doc = parse_json(*text);
      if (doc.is_discarded()) {
        user_parsed = parse_mcp_servers_json(*text, user.path, options);
      } else {
        user_parsed = parse_mcp_servers(doc, user.path, options);
        if (const json* block = project_block(doc, ctx)) {
          ParseOptions local_options;
          local_options.source = source(user.path, Level::project);
          local = parse_mcp_servers(*block, user.path, local_options);
        }
      }
    }
    if (local) out.push_back(std::move(*local));
    load_json_file(ctx, source(join_path(ctx.cwd, ".mcp.json"), Level::project), {}, nullptr, out);
    for (auto& e : user_errors) out.push_back(std::move(e));
    if (user_parsed) out.push_back(std::move(*user_parsed));
    return out;
  }

 private:
  // Claude Code keys the block by the folder it ran in; the real path is tried too, as
  // it records that when started through a symlink.
  static const json* project_block(const json& doc, const DiscoveryContext& ctx) {
    const std::string& cwd = ctx.cwd;
    if (!doc.is_object() || cwd.empty()) return nullptr;
    auto projects = doc.find("projects");
    if (projects == doc.end() || !projects->is_object()) return nullptr;
    const std::string real = project_trust_folder(ctx);
    for (const std::string& key : {cwd, strip_trailing_slash(cwd), strip_trailing_slash(cwd) + "/", real}) {
      auto it = projects->find(key);
      if (it != projects->end() && it->is_object()) return &*it;
    }
    return nullptr;
  }
};

// A provider whose project and user files share one format.
class SimpleFileProvider final : public BuiltinProvider {
 public:
  SimpleFileProvider(std::string id, std::string name, int priority, std::string project_rel,
                     std::string user_rel, ParseOptions options, EntryMapper mapper)
      : BuiltinProvider(std::move(id), std::move(name), priority),
        project_rel_(std::move(project_rel)),
        user_rel_(std::move(user_rel)),
        options_(std::move(options)),
        mapper_(mapper) {}
  std::vector<ParsedConfig> load(const DiscoveryContext& ctx) const override {
    std::vector<ParsedConfig> out;
    if (!project_rel_.empty()) {
      load_json_file(ctx, source(join_path(ctx.cwd, project_rel_), Level::project), options_, mapper_, out);
    }
    if (!user_rel_.empty()) {
      load_json_file(ctx, source(join_path(ctx.home, user_rel_), Level::user), options_, mapper_, out);
    }
    return out;
  }

 private:
  std::string project_rel_, user_rel_;
  ParseOptions options_;
  EntryMapper mapper_;
};

class CodexProvider final : public BuiltinProvider {
 public:
  CodexProvider() : BuiltinProvider("codex", "Codex", 55) {}
  std::vector<ParsedConfig> load(const DiscoveryContext& ctx) const override {
    std::vector<ParsedConfig> out;
    load_codex_file(ctx, source(join_path(ctx.cwd, ".codex/config.toml"), Level::project), out);
    load_codex_file(ctx, source(join_path(ctx.home, ".codex/config.toml"), Level::user), out);
    return out;
  }
};

ParseOptions servers_key(std::string key, bool comments) {
  ParseOptions o;
  o.servers_key = std::move(key);
  o.allow_comments = comments;
  return o;
}

}  // namespace

std::string native_project_config_path(const DiscoveryContext& ctx) {
  if (ctx.cwd.empty() || ctx.app_name.empty()) return {};
  return join_path(ctx.cwd, "." + ctx.app_name + "/mcp.json");
}

std::string native_user_config_path(const DiscoveryContext& ctx) {
  const std::string base = config_home(ctx);
  if (base.empty() || ctx.app_name.empty()) return {};
  return join_path(base, ctx.app_name + "/mcp.json");
}

std::vector<std::shared_ptr<const ConfigProvider>> builtin_providers() {
  return {
      std::make_shared<NativeProvider>(),
      std::make_shared<ClaudeProvider>(),
      std::make_shared<SimpleFileProvider>("gemini", "Gemini CLI", 60, ".gemini/settings.json",
                                           ".gemini/settings.json", servers_key("mcpServers", true),
                                           map_gemini),
      std::make_shared<CodexProvider>(),
      std::make_shared<SimpleFileProvider>("cursor", "Cursor", 50, ".cursor/mcp.json", ".cursor/mcp.json",
                                           servers_key("mcpServers", false), nullptr),
      std::make_shared<SimpleFileProvider>("windsurf", "Windsurf", 45, "",
                                           ".codeium/windsurf/mcp_config.json",
                                           servers_key("mcpServers", false), map_windsurf),
      std::make_shared<SimpleFileProvider>("vscode", "VS Code", 20, ".vscode/mcp.json", "",
                                           servers_key("servers", true), map_vscode),
      std::make_shared<SimpleFileProvider>("mcp-json", "MCP Config", 5, "mcp.json", "",
                                           servers_key("mcpServers", false), nullptr),
  };
}

}  // namespace mcprt
