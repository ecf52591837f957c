#include "auth/oauth_wire.hpp"

#include <algorithm>

#include "framing/utf8.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/redact.hpp"

namespace mcprt::detail::oauth {

namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kB64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode64(std::string_view bytes, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += alphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    if (pad) out += "==";
  } else if (rest == 2) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    if (pad) out += '=';
  }
  return out;
}

bool is_tchar(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x80 || u <= 0x20) return false;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos ||
         (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The path without the one trailing '/' a well-known suffix would double.
std::string path_without_trailing_slash(const Url& url) {
  std::string p = url.path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p == "/" ? std::string() : p;
}

}  // namespace

std::string base64url(std::string_view bytes) { return encode64(bytes, kB64Url, false); }
std::string base64(std::string_view bytes) { return encode64(bytes, kB64, true); }

std::string form_encode(std::string_view text) {
  std::string out;
  append_percent_encoded(out, text, [](unsigned char c, std::size_t) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
  });
  return out;
}

std::string form_body(const Params& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += '&';
    out += form_encode(name);
    out += '=';
    out += form_encode(value);
  }
  return out;
}

Params parse_query(std::string_view query) {
  Params out;
  std::size_t i = 0;
  while (i <= query.size()) {
    std::size_t end = query.find('&', i);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view part = query.substr(i, end - i);
    if (!part.empty()) {
      const std::size_t eq = part.find('=');
      if (eq == std::string_view::npos) {
        out.emplace_back(form_decode(part), std::string());
      } else {
        out.emplace_back(form_decode(part.substr(0, eq)), form_decode(part.substr(eq + 1)));
      }
    }
    i = end + 1;
  }
  return out;
}

std::vector<std::string> values_of(const Params& params, std::string_view name) {
  std::vector<std::string> out;
  for (const auto& [n, v] : params) {
    if (n == name) out.push_back(v);
  }
  return out;
}

std::string append_query(const Url& url, const Params& params) {
  Url u = url;
  const std::string added = form_body(params);
  if (!added.empty()) {
    if (u.has_query && !u.query.empty()) u.query += '&';
    u.query += added;
    u.has_query = true;
  }
  return u.to_string();
}

BearerChallenge parse_bearer_challenge(std::string_view header) {
  // challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ], challenges comma-separated.
  // A new challenge starts where a token is followed by a space (or the end) instead of '='.
  BearerChallenge out;
  std::size_t i = 0;
  const std::size_t n = header.size();
  auto skip_ws = [&] {
    while (i < n && (header[i] == ' ' || header[i] == '\t' || header[i] == ',')) ++i;
  };
  bool in_bearer = false;
  while (i < n) {
    skip_ws();
    const std::size_t start = i;
    while (i < n && is_tchar(header[i])) ++i;
    if (i == start) {
      ++i;  // a byte no grammar allows here: skip it
      continue;
    }
    const std::string_view name = header.substr(start, i - start);
    std::size_t j = i;
    while (j < n && (header[j] == ' ' || header[j] == '\t')) ++j;
    if (j >= n || header[j] != '=') {
      // An auth-scheme (or another scheme's token68, which is no scheme we read either).
      in_bearer = iequals(name, "Bearer");
      if (in_bearer) out.bearer = true;
      i = j;
      continue;
    }
    i = j + 1;
    while (i < n && (header[i] == ' ' || header[i] == '\t')) ++i;
    std::string value;
    if (i < n && header[i] == '"') {
      ++i;
      while (i < n && header[i] != '"') {
        if (header[i] == '\\' && i + 1 < n) ++i;
        value += header[i];
        ++i;
      }
      if (i < n) ++i;  // closing quote
    } else {
      const std::size_t vs = i;
      while (i < n && header[i] != ',' && header[i] != ' ' && header[i] != '\t') ++i;
      value = std::string(header.substr(vs, i - vs));
    }
    if (!in_bearer) continue;
    // First occurrence wins; a repeated parameter is not allowed (RFC 6750 §3).
    auto set = [&](std::string& field) {
      if (field.empty()) field = std::move(value);
    };
    if (iequals(name, "error")) {
      set(out.error);
    } else if (iequals(name, "error_description")) {
      set(out.error_description);
    } else if (iequals(name, "scope")) {
      set(out.scope);
    } else if (iequals(name, "resource_metadata")) {
      set(out.resource_metadata);
    }
  }
  return out;
}

std::vector<std::string> split_scopes(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find(' ', i);
    if (end == std::string_view::npos) end = text.size();
    if (end > i) {
      std::string s(text.substr(i, end - i));
      if (!contains(out, s)) out.push_back(std::move(s));
    }
    i = end + 1;
  }
  return out;
}

std::string join_scopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

std::vector<std::string> scope_union(const std::vector<std::string>& a,
                                     const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const auto& s : a) {
    if (!contains(out, s)) out.push_back(s);
  }
  for (const auto& s : b) {
    if (!contains(out, s)) out.push_back(s);
  }
  return out;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "[::1]") return true;
  if (host.size() > 10 && host.substr(host.size() - 10) == ".localhost") return true;
  // The parser serializes every IPv4 form as dotted decimal.
  if (host.substr(0, 4) == "127.") {
    return std::all_of(host.begin(), host.end(),
                       [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  }
  return false;
}

Result<Url> check_wire_url(std::string_view url, std::string_view what) {
  Result<Url> parsed = parse_http_url_checked(url);
  if (!parsed) {
    return Error::make(ErrorCode::protocol, std::string(what) + " is not an http(s) URL (" +
                                                safe_text(url, 120) + ")");
  }
  if (!parsed->userinfo.empty()) {
    return Error::make(ErrorCode::protocol, std::string(what) + " " + parsed->origin() +
                                                " carries a user name or password");
  }
  if (parsed->scheme != "https" && !is_loopback_host(parsed->host)) {
    return Error::make(ErrorCode::protocol,
                       std::string(what) + " " + parsed->origin() +
                           " is not https (only a loopback address may use plain http)");
  }
  return parsed;
}

std::vector<std::string> prm_well_known_urls(const Url& server) {
  std::vector<std::string> out;
  std::string suffix = path_without_trailing_slash(server);
  if (server.has_query) suffix += "?" + server.query;
  if (!suffix.empty()) out.push_back(server.origin() + "/.well-known/oauth-protected-resource" + suffix);
  out.push_back(server.origin() + "/.well-known/oauth-protected-resource");
  return out;
}

std::vector<std::string> as_metadata_urls(const Url& issuer) {
  const std::string path = path_without_trailing_slash(issuer);
  const std::string origin = issuer.origin();
  if (path.empty()) {
    return {origin + "/.well-known/oauth-authorization-server",
            origin + "/.well-known/openid-configuration"};
  }
  return {origin + "/.well-known/oauth-authorization-server" + path,
          origin + "/.well-known/openid-configuration" + path,
          origin + path + "/.well-known/openid-configuration"};
}

bool resource_covers(const Url& resource, const Url& server) {
  if (resource.origin() != server.origin()) return false;
  if (resource.has_query && !resource.query.empty()) {
    return resource.path == server.path && resource.query == server.query;
  }
  const std::string& rp = resource.path;
  const std::string& sp = server.path;
  if (rp == "/" || rp == sp) return true;
  if (rp.back() == '/') return sp.compare(0, rp.size(), rp) == 0;
  return sp.size() > rp.size() && sp.compare(0, rp.size(), rp) == 0 && sp[rp.size()] == '/';
}

bool same_issuer(std::string_view claimed, std::string_view expected) {
  if (claimed == expected) return true;
  auto strip = [](std::string_view s) {
    if (!s.empty() && s.back() == '/') s.remove_suffix(1);
    return s;
  };
  return !claimed.empty() && strip(claimed) == strip(expected);
}

std::string safe_text(std::string_view text, std::size_t max_bytes) {
  std::string out = sanitize_utf8(utf8_prefix(text, max_bytes));
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F) c = ' ';
  }
  if (text.size() > max_bytes) out += "...";
  return redact_secrets(out);
}

}  // namespace mcprt::detail::oauth
