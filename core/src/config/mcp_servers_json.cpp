// The `{"mcpServers": {...}}` file format (and VS Code's top-level `servers`).

#include <utility>

#include "mcprt/json_object.hpp"
#include "mcprt/config.hpp"
#include "mcprt/json_text.hpp"

namespace mcprt {

namespace {

// Line and column (1-based) of the last character read before byte offset `position`,
// the way parse_json counts: a newline starts a new line at column 0.
void line_and_column(std::string_view text, std::size_t position, int* line, int* column) {
  const std::size_t end = position < text.size() ? position : text.size();
  std::size_t line_start = 0;
  int l = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++l;
      line_start = i + 1;
    }
  }
  *line = l;
  *column = static_cast<int>(position - line_start);
}

bool all_whitespace(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

ConfigError file_error(std::string_view path, std::string message) {
  ConfigError e;
  e.path = std::string(path);
  e.message = std::move(message);
  return e;
}

// A name list such as `disabledServers`: an array of strings.
void read_name_list(const json& doc, const char* key, std::string_view path,
                    std::vector<std::string>& out, std::vector<ConfigError>& errors) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return;
  bool ok = it->is_array();
  if (ok) {
    for (const auto& v : *it) {
      if (!v.is_string()) {
        ok = false;
        break;
      }
    }
  }
  if (!ok) {
    errors.push_back(file_error(path, std::string("\"") + key + "\" must be an array of server names"));
    return;
  }
  for (const auto& v : *it) out.push_back(v.get<std::string>());
}

// `trustedProjects` (SPEC §17): folder → {"servers": {name: hash}}. A malformed folder
// record is dropped with one error (its servers stay untrusted: fail closed); other
// keys of a record are kept by rewrites but mean nothing here.
void read_trust_records(const json& doc, std::string_view path, TrustStore& out,
                        std::vector<ConfigError>& errors) {
  auto it = doc.find("trustedProjects");
  if (it == doc.end() || it->is_null()) return;
  const char* shape = "\"trustedProjects\" must map each folder to {\"servers\": {name: hash}}";
  if (!it->is_object()) {
    errors.push_back(file_error(path, shape));
    return;
  }
  bool reported = false;
  for (auto folder = it->begin(); folder != it->end(); ++folder) {
    const json& record = folder.value();
    auto servers = record.is_object() ? record.find("servers") : record.end();
    bool ok = record.is_object() && (servers == record.end() || servers->is_object());
    if (ok && servers != record.end()) {
      for (const auto& [name, hash] : servers->items()) {
        if (!hash.is_string()) ok = false;
      }
    }
    if (!ok) {
      if (!reported) errors.push_back(file_error(path, std::string(shape) + " (folder \"" + folder.key() + "\")"));
      reported = true;
      continue;
    }
    auto& grants = out.projects[folder.key()];
    if (servers == record.end()) continue;
    for (const auto& [name, hash] : servers->items()) grants[name] = hash.get<std::string>();
  }
}

}  // namespace

bool TrustStore::trusts(const std::string& folder, const std::string& name, const std::string& hash) const {
  auto f = projects.find(folder);
  if (f == projects.end()) return false;
  auto s = f->second.find(name);
  return s != f->second.end() && s->second == hash;
}

void TrustStore::merge(const TrustStore& other) {
  for (const auto& [folder, servers] : other.projects) {
    auto& mine = projects[folder];
    for (const auto& [name, hash] : servers) mine[name] = hash;
  }
}

std::string ConfigError::describe() const {
  std::string out;
  if (!path.empty()) {
    out = path;
    if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
    out += ": ";
  } else if (line > 0) {
    out = std::to_string(line) + ":" + std::to_string(column) + ": ";
  }
  out += message;
  return out;
}

Error ConfigError::to_error() const {
  json data = json_object({{"path", path}});
  if (!server.empty()) data["server"] = server;
  if (line > 0) {
    data["line"] = line;
    data["column"] = column;
  }
  return Error::make(ErrorCode::invalid_config, describe(), std::move(data));
}

ParsedConfig parse_mcp_servers_json(std::string_view text, std::string_view path,
                                    const ParseOptions& options) {
  if (all_whitespace(text)) {
    ParsedConfig empty;
    empty.source = options.source;
    if (empty.source.path.empty()) empty.source.path = std::string(path);
    return empty;
  }
  JsonSyntaxError syntax;
  json doc = parse_json(text, options.allow_comments, &syntax);
  if (doc.is_discarded()) {
    ParsedConfig out;
    out.source = options.source;
    if (out.source.path.empty()) out.source.path = std::string(path);
    ConfigError e = file_error(path, "invalid JSON");
    e.message += ": " + syntax.message;
    line_and_column(text, syntax.position, &e.line, &e.column);
    out.errors.push_back(std::move(e));
    return out;
  }
  return parse_mcp_servers(doc, path, options);
}

ParsedConfig parse_mcp_servers(const json& doc, std::string_view path,
                               const ParseOptions& options) {
  ParsedConfig out;
  out.source = options.source;
  if (out.source.path.empty()) out.source.path = std::string(path);
  if (!doc.is_object()) {
    out.errors.push_back(file_error(
        path, std::string("expected a JSON object at the top level (got ") + doc.type_name() + ")"));
    return out;
  }

  read_name_list(doc, "disabledServers", path, out.disabled_servers, out.errors);
  read_name_list(doc, "enabledServers", path, out.enabled_servers, out.errors);
  read_trust_records(doc, path, out.trusted_projects, out.errors);

  auto servers = doc.find(options.servers_key);
  if (servers == doc.end() || servers->is_null()) return out;
  out.found_servers_key = true;
  if (!servers->is_object()) {
    out.errors.push_back(file_error(path, "\"" + options.servers_key + "\" must be an object (got " +
                                              servers->type_name() + ")"));
    return out;
  }

  ParseOptions entry_options = options;
  if (entry_options.source.path.empty()) entry_options.source.path = std::string(path);

  for (auto it = servers->begin(); it != servers->end(); ++it) {
    std::vector<std::string> warnings;
    Result<ServerConfig> cfg = parse_server_entry(it.key(), it.value(), entry_options, &warnings);
    for (auto& w : warnings) {
      ConfigError e = file_error(path, std::move(w));
      e.server = it.key();
      out.warnings.push_back(std::move(e));
    }
    Status valid = cfg.ok() && options.validate ? validate_server_config(*cfg, options.validation)
                                                : Status{};
    if (!cfg.ok() || !valid.ok()) {
      ConfigError e = file_error(path, cfg.ok() ? valid.error().message : cfg.error().message);
      e.server = it.key();
      out.errors.push_back(std::move(e));
      continue;
    }
    out.servers.push_back(std::move(cfg).value());
  }
  return out;
}

}  // namespace mcprt
