// ServerConfig: parsing one `mcpServers` entry (shape) and validating it (meaning).

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "mcprt/config.hpp"
#include "mcprt/url.hpp"
#include "util/ascii.hpp"

namespace mcprt {

namespace {

// Entries deeper than this are rejected before anything copies them: nlohmann's copy and
// dump recurse, and a config has no business being deeply nested.
constexpr int kMaxEntryDepth = 64;
// Larger millisecond values are certainly mistakes (and would overflow conversions).
constexpr double kMaxMillis = 1e15;

using ascii::lower;

std::string entry_prefix(std::string_view name) { return "Server \"" + std::string(name) + "\": "; }

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// Depth of a JSON value without recursion (the check must itself be safe on hostile input).
bool deeper_than(const json& root, int limit) {
  std::vector<std::pair<const json*, int>> stack{{&root, 1}};
  while (!stack.empty()) {
    auto [v, d] = stack.back();
    stack.pop_back();
    if (d > limit) return true;
    if (v->is_structured()) {
      for (const auto& child : *v) {
        if (child.is_structured()) stack.emplace_back(&child, d + 1);
      }
    }
  }
  return false;
}

const json* field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// Collects the shape problems of one entry.
class EntryReader {
 public:
  explicit EntryReader(const json& entry) : entry_(entry) {}
  std::vector<std::string> problems;

  std::optional<std::string> string(const char* key) {
    const json* v = field(entry_, key);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_string()) {
      problems.push_back(quoted(key) + " must be a string (got " + v->type_name() + ")");
      return std::nullopt;
    }
    return v->get_ref<const std::string&>();
  }

  std::vector<std::string> string_array(const char* key) {
    std::vector<std::string> out;
    const json* v = field(entry_, key);
    if (!v || v->is_null()) return out;
    if (!v->is_array()) {
      problems.push_back(quoted(key) + " must be an array of strings (got " + v->type_name() + ")");
      return out;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& item = (*v)[i];
      if (!item.is_string()) {
        problems.push_back(quoted(key) + " must be an array of strings (item " + std::to_string(i) +
                           " is " + item.type_name() + ")");
        return {};
      }
      out.push_back(item.get_ref<const std::string&>());
    }
    return out;
  }

  std::map<std::string, std::string> string_map(const char* key) {
    std::map<std::string, std::string> out;
    const json* v = field(entry_, key);
    if (!v || v->is_null()) return out;
    if (!v->is_object()) {
      problems.push_back(quoted(key) + " must be an object with string values (got " +
                         v->type_name() + ")");
      return out;
    }
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it.value().is_string()) {
        problems.push_back(quoted(key) + " must be an object with string values (\"" + it.key() +
                           "\" is " + it.value().type_name() + ")");
        return {};
      }
      out.emplace(it.key(), it.value().get_ref<const std::string&>());
    }
    return out;
  }

  // A non-negative number (of `unit`), or a string holding one (as some files write).
  std::optional<long long> number(const char* key, const char* unit) {
    const json* v = field(entry_, key);
    if (!v || v->is_null()) return std::nullopt;
    std::optional<double> d;
    if (v->is_number()) {
      d = v->get<double>();
    } else if (v->is_string()) {
      d = parse_decimal(v->get_ref<const std::string&>());
    }
    if (!d || !(*d >= 0) || *d > kMaxMillis) {
      problems.push_back(quoted(key) + " must be a non-negative number of " + unit + " (got " +
                         describe_value(*v) + ")");
      return std::nullopt;
    }
    return static_cast<long long>(*d);
  }

  // `enabled`: true/false, or the strings "true"/"false"/"1"/"0".
  std::optional<bool> flag(const char* key) {
    const json* v = field(entry_, key);
    if (!v || v->is_null()) return std::nullopt;
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_string()) {
      const std::string s = lower(v->get_ref<const std::string&>());
      if (s == "true" || s == "1") return true;
      if (s == "false" || s == "0") return false;
    }
    problems.push_back(quoted(key) + " must be true, false, \"true\", \"false\", \"1\" or \"0\" (got " +
                       describe_value(*v) + ")");
    return std::nullopt;
  }

  static std::string quoted(std::string_view key) { return "\"" + std::string(key) + "\""; }

  // At most 40 bytes of a user's string for a message.
  static std::string shorten(const std::string& s) {
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }

  // A short rendering of a bad value for a message: its type, or a short scalar.
  static std::string describe_value(const json& v) {
    if (v.is_structured()) return v.type_name();
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
  }

 private:
  static std::optional<double> parse_decimal(const std::string& s) {
    if (s.empty() || s.size() > 32) return std::nullopt;
    bool dot = false, digit = false;
    for (char c : s) {
      if (c >= '0' && c <= '9') {
        digit = true;
      } else if (c == '.' && !dot) {
        dot = true;
      } else {
        return std::nullopt;
      }
    }
    if (!digit) return std::nullopt;
    double v = 0;
    double scale = 0;
    for (char c : s) {
      if (c == '.') {
        scale = 1;
        continue;
      }
      if (scale == 0) {
        v = v * 10 + (c - '0');
      } else {
        scale /= 10;
        v += (c - '0') * scale;
      }
    }
    return v;
  }

  const json& entry_;
};

void read_reconnect(const json* v, ReconnectPolicy& out, std::vector<std::string>& problems) {
  if (!v || v->is_null()) return;
  if (v->is_boolean()) {
    out.enabled = v->get<bool>();
    return;
  }
  if (!v->is_object()) {
    problems.push_back("\"reconnect\" must be true, false or {maxAttempts, initialDelayMs, maxDelayMs} (got " +
                       std::string(v->type_name()) + ")");
    return;
  }
  EntryReader r(*v);
  if (auto e = r.flag("enabled")) {
    out.enabled = *e;
  } else {
    out.enabled = true;
  }
  if (auto n = r.number("maxAttempts", "attempts")) {
    out.max_attempts = *n > 1000000 ? 1000000 : static_cast<int>(*n);
  }
  if (auto n = r.number("initialDelayMs", "milliseconds")) out.initial_delay_ms = *n;
  if (auto n = r.number("maxDelayMs", "milliseconds")) out.max_delay_ms = *n;
  for (auto& p : r.problems) problems.push_back("in \"reconnect\": " + p);
}

void read_auth(const json* v, AuthConfig& out, std::vector<std::string>& problems) {
  if (!v || v->is_null()) return;
  if (!v->is_object()) {
    problems.push_back("\"auth\" must be an object {type: \"bearer\"|\"oauth\", credentialId?} (got " +
                       std::string(v->type_name()) + ")");
    return;
  }
  EntryReader r(*v);
  const auto type = r.string("type");
  if (!type) {
    if (r.problems.empty()) r.problems.push_back("\"type\" is required (\"bearer\" or \"oauth\")");
  } else if (lower(*type) == "bearer") {
    out.type = AuthType::bearer;
  } else if (lower(*type) == "oauth") {
    out.type = AuthType::oauth;
  } else {
    r.problems.push_back("unknown type \"" + *type + "\" (expected \"bearer\" or \"oauth\")");
  }
  if (auto id = r.string("credentialId")) out.credential_id = *id;
  for (auto& p : r.problems) problems.push_back("in \"auth\": " + p);
}

// `oauth`: the shape only (types); what the values mean is validate_server_config's.
void read_oauth(const json* v, OAuthConfig& out, std::vector<std::string>& problems) {
  if (!v || v->is_null()) return;
  if (!v->is_object()) {
    problems.push_back("\"oauth\" must be an object {clientId?, clientSecret?, scopes?, "
                       "clientMetadataUrl?, callbackPort?, grant?, privateKey?, privateKeyFile?, "
                       "signingAlg?} (got " +
                       std::string(v->type_name()) + ")");
    return;
  }
  out.present = true;
  EntryReader r(*v);
  if (auto s = r.string("clientId")) out.client_id = *s;
  if (auto s = r.string("clientSecret")) out.client_secret = *s;
  if (auto s = r.string("clientMetadataUrl")) out.client_metadata_url = *s;
  if (auto s = r.string("privateKey")) out.private_key = *s;
  if (auto s = r.string("privateKeyFile")) out.private_key_file = *s;
  if (auto s = r.string("signingAlg")) out.signing_alg = *s;
  // `scopes`: an array of strings, or one space-separated string (the wire's own form).
  if (const json* scopes = field(*v, "scopes"); scopes && scopes->is_string()) {
    const std::string& text = scopes->get_ref<const std::string&>();
    std::size_t i = 0;
    while (i < text.size()) {
      const std::size_t end = std::min(text.find(' ', i), text.size());
      if (end > i) out.scopes.push_back(text.substr(i, end - i));
      i = end + 1;
    }
  } else {
    out.scopes = r.string_array("scopes");
  }
  if (const json* port = field(*v, "callbackPort"); port && !port->is_null()) {
    if (port->is_number_integer() && port->get<long long>() >= 0 && port->get<long long>() <= 65535) {
      out.callback_port = static_cast<int>(port->get<long long>());
    } else {
      r.problems.push_back("\"callbackPort\" must be a port number from 0 to 65535 (got " +
                           EntryReader::describe_value(*port) + ")");
    }
  }
  if (auto g = r.string("grant")) {
    const std::string grant = lower(*g);
    if (grant == "authorization_code") {
      out.grant = OAuthConfig::Grant::authorization_code;
    } else if (grant == "client_credentials") {
      out.grant = OAuthConfig::Grant::client_credentials;
    } else {
      r.problems.push_back("unknown grant \"" + EntryReader::shorten(*g) +
                           "\" (expected \"authorization_code\" or \"client_credentials\")");
    }
  }
  // Not `in "oauth": ...`: redaction reads `"oauth": "<field>"` as a secret's JSON pair.
  for (auto& p : r.problems) problems.push_back("in \"oauth\", " + p);
}

// Notes values that only VS Code can resolve (`${input:...}` prompts the user).
void find_input_variables(const json& v, bool& found) {
  std::vector<const json*> stack{&v};
  while (!stack.empty() && !found) {
    const json* cur = stack.back();
    stack.pop_back();
    if (cur->is_string()) {
      if (cur->get_ref<const std::string&>().find("${input:") != std::string::npos) found = true;
    } else if (cur->is_structured()) {
      for (const auto& c : *cur) stack.push_back(&c);
    }
  }
}

bool is_known_protocol(const std::string& v) {
  static const char* const kKnown[] = {"auto",       "legacy",     "2026-07-28", "2025-11-25",
                                       "2025-06-18", "2025-03-26", "2024-11-05"};
  for (const char* k : kKnown) {
    if (v == k) return true;
  }
  return false;
}

// `roots`: false (not declared), or an array of directory paths; a relative path is taken
// from the directory of the config file that says it.
void read_roots(const json* v, const std::string& file, std::optional<ServerConfig::Roots>& out,
                std::vector<std::string>& problems) {
  if (!v || v->is_null()) return;
  ServerConfig::Roots roots;
  if (v->is_boolean()) {
    if (v->get<bool>()) {
      problems.push_back("\"roots\" must be false or an array of directories (true is the default)");
      return;
    }
    roots.declared = false;
    out = std::move(roots);
    return;
  }
  if (!v->is_array()) {
    problems.push_back(std::string("\"roots\" must be false or an array of directories (got ") +
                       v->type_name() + ")");
    return;
  }
  std::string base;
  if (auto slash = file.find_last_of('/'); slash != std::string::npos && file.front() == '/') {
    base = file.substr(0, slash);
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!item.is_string() || item.get_ref<const std::string&>().empty()) {
      problems.push_back("\"roots\" item " + std::to_string(i) + " must be a non-empty path");
      return;
    }
    std::string path = item.get<std::string>();
    if (path.front() != '/') {
      if (base.empty()) {
        problems.push_back("\"roots\" item " + std::to_string(i) + " (\"" + path +
                           "\") must be an absolute path");
        return;
      }
      path = base + "/" + path;
    }
    roots.directories.push_back(std::move(path));
  }
  out = std::move(roots);
}

}  // namespace

const char* to_string(TransportType type) {
  switch (type) {
    case TransportType::stdio: return "stdio";
    case TransportType::http: return "http";
    case TransportType::sse: return "sse";
  }
  return "unknown";
}

std::optional<TransportType> parse_transport_type(std::string_view text) {
  const std::string t = lower(text);
  if (t == "stdio") return TransportType::stdio;
  if (t == "http" || t == "streamable-http" || t == "streamablehttp") return TransportType::http;
  if (t == "sse") return TransportType::sse;
  return std::nullopt;
}

const char* to_string(AuthType type) {
  switch (type) {
    case AuthType::none: return "none";
    case AuthType::bearer: return "bearer";
    case AuthType::oauth: return "oauth";
  }
  return "unknown";
}

const char* to_string(OAuthConfig::Grant grant) {
  switch (grant) {
    case OAuthConfig::Grant::authorization_code: return "authorization_code";
    case OAuthConfig::Grant::client_credentials: return "client_credentials";
  }
  return "unknown";
}

const char* to_string(SourceInfo::Level level) {
  switch (level) {
    case SourceInfo::Level::user: return "user";
    case SourceInfo::Level::project: return "project";
    case SourceInfo::Level::native: return "native";
  }
  return "unknown";
}

Result<ServerConfig> parse_server_entry(std::string name, const json& entry,
                                        const ParseOptions& options,
                                        std::vector<std::string>* warnings) {
  const std::string prefix = entry_prefix(name);
  if (!entry.is_object()) {
    return Error::make(ErrorCode::invalid_config,
                       prefix + "entry must be a JSON object (got " + entry.type_name() + ")");
  }
  if (deeper_than(entry, kMaxEntryDepth)) {
    return Error::make(ErrorCode::invalid_config,
                       prefix + "entry is nested more than " + std::to_string(kMaxEntryDepth) +
                           " levels deep");
  }

  ServerConfig cfg;
  cfg.name = std::move(name);
  EntryReader r(entry);

  // `type` wins over `transport` (older files and some clients use the latter).
  std::optional<std::string> type = r.string("type");
  if (!type && !field(entry, "type")) type = r.string("transport");

  if (auto v = r.string("command")) cfg.command = *v;
  cfg.args = r.string_array("args");
  cfg.env = r.string_map("env");
  if (auto v = r.string("cwd")) cfg.cwd = *v;
  if (auto v = r.string("envPolicy")) {
    if (*v == "literal") {
      cfg.env_literal = true;
    } else if (warnings) {
      warnings->push_back(prefix + "unknown \"envPolicy\" \"" + *v + "\" ignored (only \"literal\" is known)");
    }
  }
  if (auto v = r.string("url")) cfg.url = *v;
  cfg.headers = r.string_map("headers");
  if (auto v = r.string("headerPolicy")) {
    if (*v == "origin-locked") {
      cfg.origin_locked = true;
    } else if (warnings) {
      warnings->push_back(prefix + "unknown \"headerPolicy\" \"" + *v +
                          "\" ignored (only \"origin-locked\" is known)");
    }
  }

  if (auto v = r.flag("enabled")) cfg.enabled = *v;
  cfg.timeout_ms = r.number("timeout", "milliseconds");
  cfg.tool_timeout_ms = r.number("toolTimeout", "milliseconds");
  cfg.include_tools = r.string_array("includeTools");
  cfg.exclude_tools = r.string_array("excludeTools");
  if (auto v = r.flag("alwaysLoad")) cfg.always_load = *v;
  if (auto v = r.string("deferTools")) {  // Copilot's spelling of the same switch
    if (*v == "never") {
      cfg.always_load = true;
    } else if (*v != "auto" && warnings) {
      warnings->push_back(prefix + "unknown \"deferTools\" \"" + *v +
                          "\" ignored (only \"auto\" and \"never\" are known)");
    }
  }
  read_reconnect(field(entry, "reconnect"), cfg.reconnect, r.problems);
  if (auto v = r.string("protocol")) {
    if (is_known_protocol(*v)) {
      cfg.protocol = *v;
    } else {
      r.problems.push_back("unknown \"protocol\" \"" + *v +
                           "\" (expected \"auto\", \"legacy\", \"2026-07-28\", \"2025-11-25\", "
                           "\"2025-06-18\", \"2025-03-26\" or \"2024-11-05\")");
    }
  }
  read_roots(field(entry, "roots"), options.source.path, cfg.roots, r.problems);
  read_auth(field(entry, "auth"), cfg.auth, r.problems);
  read_oauth(field(entry, "oauth"), cfg.oauth, r.problems);
  if (cfg.oauth.present && !field(entry, "auth")) cfg.auth.type = AuthType::oauth;

  if (type) {
    if (auto t = parse_transport_type(*type)) {
      cfg.type = *t;
      cfg.type_explicit = true;
    } else {
      r.problems.push_back("unknown server type \"" + *type +
                           "\" (expected \"stdio\", \"http\" or \"sse\")");
    }
  } else if (!cfg.command.empty()) {
    cfg.type = TransportType::stdio;
  } else if (!cfg.url.empty()) {
    cfg.type = TransportType::http;
  }

  if (!r.problems.empty()) {
    return Error::make(ErrorCode::invalid_config, prefix + join(r.problems, "; "));
  }

  if (warnings) {
    bool has_input = false;
    find_input_variables(entry, has_input);
    if (has_input) {
      warnings->push_back(prefix +
                          "${input:...} variables are not supported; those values are used as written");
    }
  }

  cfg.raw = entry;
  cfg.source = options.source;
  return cfg;
}

Status validate_server_name(std::string_view name) {
  const std::string prefix = entry_prefix(name);
  if (name.empty()) return Error::make(ErrorCode::invalid_config, prefix + "name cannot be empty");
  if (name.size() > kMaxServerNameLength) {
    return Error::make(ErrorCode::invalid_config,
                       prefix + "name is too long (" + std::to_string(name.size()) +
                           " characters, max " + std::to_string(kMaxServerNameLength) + ")");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == ':' || c == '-';
    if (!ok) {
      return Error::make(ErrorCode::invalid_config,
                         prefix + "name can only contain letters, digits, '_', '.', ':' and '-'");
    }
  }
  return {};
}

namespace {

// The config's own syntax rule: scheme "://" authority, no spaces or control characters,
// a non-empty host and a port that fits. Stricter than a browser on purpose (it refuses
// "https:///path", which a browser reads as the host "path").
bool is_plain_http_url(std::string_view url) {
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) return false;  // spaces and control characters
  }
  const std::size_t sep = url.find("://");
  if (sep == std::string_view::npos) return false;
  const std::string scheme = lower(url.substr(0, sep));
  if (scheme != "http" && scheme != "https") return false;

  std::string_view rest = url.substr(sep + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // userinfo
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return false;
    host = authority.substr(1, close - 1);
    for (char c : host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
    }
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return false;
      port = after.substr(1);
    }
  } else {
    if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    if (host.empty()) return false;
    for (char c : host) {
      const auto u = static_cast<unsigned char>(c);
      const bool ok = std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~' || c == '%' ||
                      u >= 0x80;
      if (!ok) return false;
    }
  }
  if (port.size() > 5) return false;
  long value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value <= 65535;
}

// Why `url` cannot be a server URL: "" when only the syntax rule fails; the URL parser's
// reason when it reads the URL in a way (or refuses it for a reason) a user must see —
// the transports and the browser's fetch read every accepted URL the same way.
std::optional<std::string> http_url_problem(std::string_view url) {
  if (!is_plain_http_url(url)) return std::string();
  auto parsed = parse_http_url_checked(url);
  if (!parsed.ok()) return parsed.error().message;
  return std::nullopt;
}

// RFC 6749 §3.3 scope-token: printable ASCII except space, '"' and '\\'.
bool is_scope_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7E || c == '"' || c == '\\') return false;
  }
  return true;
}

// What the `oauth` values mean. Messages name fields, never secret values.
void validate_oauth(const ServerConfig& config, std::vector<std::string>& problems) {
  const OAuthConfig& o = config.oauth;
  if (!o.present) return;
  std::vector<std::string> p;
  if (config.type == TransportType::stdio) {
    p.push_back("applies to http and sse servers only (a stdio server gets no OAuth flow)");
  }
  if (!o.client_secret.empty() && o.client_id.empty()) {
    p.push_back("\"clientSecret\" needs \"clientId\" (the client it belongs to)");
  }
  for (const std::string& scope : o.scopes) {
    if (!is_scope_token(scope)) {
      p.push_back("\"scopes\" has an invalid scope \"" + EntryReader::shorten(scope) +
                  "\" (printable ASCII without spaces, '\"' or '\\')");
      break;
    }
  }
  if (!o.client_metadata_url.empty()) {
    auto url = parse_http_url(o.client_metadata_url);
    if (!url || url->scheme != "https" || url->path == "/") {
      p.push_back("\"clientMetadataUrl\" must be an https:// URL with a path (the client ID "
                  "metadata document's address, used as the client_id)");
    }
  }
  const bool has_key = !o.private_key.empty() || !o.private_key_file.empty();
  if (!o.private_key.empty() && !o.private_key_file.empty()) {
    p.push_back("set one of \"privateKey\" and \"privateKeyFile\", not both");
  }
  if (!o.signing_alg.empty() && o.signing_alg != "RS256" && o.signing_alg != "ES256") {
    p.push_back("\"signingAlg\" must be \"RS256\" or \"ES256\" (got \"" +
                EntryReader::shorten(o.signing_alg) + "\")");
  }
  if (o.grant == OAuthConfig::Grant::client_credentials) {
    if (o.client_id.empty()) p.push_back("grant \"client_credentials\" needs \"clientId\"");
    if (o.client_secret.empty() && !has_key) {
      p.push_back("grant \"client_credentials\" needs \"clientSecret\" or a private key "
                  "(\"privateKey\" / \"privateKeyFile\")");
    }
    if (!o.client_secret.empty() && has_key) {
      p.push_back("grant \"client_credentials\" takes \"clientSecret\" or a private key, not both");
    }
  } else if (has_key) {
    p.push_back("a private key is used only with \"grant\": \"client_credentials\"");
  }
  for (auto& m : p) problems.push_back("in \"oauth\", " + m);
}

}  // namespace

bool is_valid_http_url(std::string_view url) { return !http_url_problem(url).has_value(); }

Status validate_server_config(const ServerConfig& config, const ValidationOptions& options) {
  std::vector<std::string> problems;
  if (Status name = validate_server_name(config.name); !name) {
    std::string m = name.error().message;
    m.erase(0, entry_prefix(config.name).size());
    problems.push_back(std::move(m));
  }

  const bool has_command = !config.command.empty();
  const bool has_url = !config.url.empty();
  if (has_command && has_url) {
    problems.push_back(
        "both \"command\" and \"url\" are set; a server is either stdio (command) or http/sse (url)");
  } else if (config.type == TransportType::stdio) {
    if (!has_command) {
      problems.push_back(config.type_explicit ? "stdio server needs \"command\""
                                              : "needs \"command\" (stdio) or \"url\" (http/sse)");
    }
  } else if (!has_url) {
    problems.push_back(std::string(to_string(config.type)) + " server needs \"url\"");
  }

  if (has_url && !has_command && config.type != TransportType::stdio) {
    if (auto problem = http_url_problem(config.url)) {
      // Only the part before any query: query strings often carry API keys.
      std::string shown = config.url.substr(0, config.url.find_first_of("?#"));
      if (shown.size() > 200) shown = shown.substr(0, 200) + "...";
      std::string m = "\"url\" must be an absolute http:// or https:// URL (got \"" + shown + "\")";
      if (!problem->empty()) m += ": " + *problem;
      problems.push_back(std::move(m));
    }
  }

  if (config.timeout_ms && *config.timeout_ms < 0) {
    problems.push_back("\"timeout\" must be a non-negative number of milliseconds");
  }
  if (config.tool_timeout_ms && *config.tool_timeout_ms < 0) {
    problems.push_back("\"toolTimeout\" must be a non-negative number of milliseconds");
  }
  if (config.reconnect.max_attempts < 0 || config.reconnect.initial_delay_ms < 0 ||
      config.reconnect.max_delay_ms < 0) {
    problems.push_back("\"reconnect\" values must be non-negative");
  }

  validate_oauth(config, problems);

  if (config.type == TransportType::stdio && !options.stdio_available) {
    problems.push_back(
        "stdio servers are not available in the browser (the web build connects to http and sse "
        "servers only)");
  }

  if (problems.empty()) return {};
  return Error::make(ErrorCode::invalid_config, entry_prefix(config.name) + join(problems, "; "));
}

}  // namespace mcprt
