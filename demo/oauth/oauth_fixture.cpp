#include "oauth_fixture.hpp"

#include <httplib.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <thread>
#include <utility>

#include "http_front.hpp"

namespace mcprt::demo {
namespace {

// A real authorization server keeps codes for seconds; a minute covers a slow test run.
constexpr auto kCodeLifetime = std::chrono::seconds(60);
constexpr std::size_t kMaxClientsPerServer = 10000;
constexpr std::size_t kMaxLiveTokensPerServer = 100000;
constexpr std::size_t kMaxStringBytes = 2048;  // one registration field, one parameter
constexpr std::size_t kMaxRedirectUris = 16;
constexpr std::size_t kMaxAuthorizationServers = 64;
constexpr std::int64_t kMaxTtlSeconds = 100'000'000;
constexpr std::int64_t kMaxTokenDelayMs = 60'000;
constexpr std::size_t kMaxBodyBytes = 64 * 1024;
constexpr std::size_t kWorkerThreads = 16;
constexpr const char* kPrmPath = "/.well-known/oauth-protected-resource/mcp";
constexpr const char* kAsMetadataPrefix = "/.well-known/oauth-authorization-server";

// ---- encoding -----------------------------------------------------------------------

std::string base64url(const unsigned char* data, std::size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    acc = (acc << 8) | data[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 0x3F]);
  return out;
}

// Standard base64 (RFC 4648 §4) with optional padding; nullopt on any other byte.
std::optional<std::string> base64_decode(std::string_view in) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+') v = 62;
    if (c == '/') v = 63;
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

std::string random_secret(const char* prefix) {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) std::abort();  // no entropy: nothing is safe
  return prefix + base64url(bytes, sizeof bytes);
}

std::string s256(const std::string& verifier) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
  return base64url(digest, sizeof digest);
}

bool is_unreserved(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    if (is_unreserved(c)) {
      out.push_back(c);
    } else {
      const auto b = static_cast<unsigned char>(c);
      out += {'%', kHex[b >> 4], kHex[b & 0xF]};
    }
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding ('+' is a space); nullopt on a bad escape.
std::optional<std::string> form_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%') {
      const int hi = i + 1 < s.size() ? hex_value(s[i + 1]) : -1;
      const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

using Params = std::map<std::string, std::string>;

// Parses a form body. A repeated parameter is an error (RFC 6749 §3.1, §3.2).
std::optional<Params> parse_form(std::string_view body, std::string& error) {
  Params out;
  while (!body.empty()) {
    const auto amp = body.find('&');
    const std::string_view pair = body.substr(0, amp);
    body = amp == std::string_view::npos ? std::string_view() : body.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    auto name = form_decode(pair.substr(0, eq));
    auto value = form_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!name || !value) {
      error = "the form body has a bad %-escape";
      return std::nullopt;
    }
    if (!out.emplace(*name, *value).second) {
      error = "parameter \"" + *name + "\" is repeated";
      return std::nullopt;
    }
  }
  return out;
}

std::vector<std::string> split_scopes(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto sp = s.find(' ', i);
    const std::string part = s.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    if (!part.empty() && std::find(out.begin(), out.end(), part) == out.end()) out.push_back(part);
    if (sp == std::string::npos) break;
    i = sp + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// ---- redirect URIs --------------------------------------------------------------------

struct UriParts {
  std::string scheme;  // "http" / "https"
  std::string host;    // lower-cased; IPv6 with brackets
  std::string port;    // "" when absent
  std::string rest;    // path and query
};

std::optional<UriParts> split_uri(const std::string& uri) {
  UriParts p;
  std::size_t start = 0;
  if (uri.rfind("http://", 0) == 0) {
    p.scheme = "http";
    start = 7;
  } else if (uri.rfind("https://", 0) == 0) {
    p.scheme = "https";
    start = 8;
  } else {
    return std::nullopt;
  }
  const auto end = uri.find_first_of("/?#", start);
  const std::string authority = uri.substr(start, end == std::string::npos ? std::string::npos : end - start);
  p.rest = end == std::string::npos ? "/" : uri.substr(end);
  if (authority.empty() || authority.find('@') != std::string::npos) return std::nullopt;
  std::size_t colon = std::string::npos;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    p.host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      colon = close + 1;
    }
  } else {
    colon = authority.find(':');
    p.host = authority.substr(0, colon);
  }
  if (colon != std::string::npos) {
    p.port = authority.substr(colon + 1);
    if (p.port.empty() || p.port.size() > 5 ||
        !std::all_of(p.port.begin(), p.port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
  }
  for (char& c : p.host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return p;
}

bool is_loopback_ip_literal(const std::string& host) { return host == "127.0.0.1" || host == "[::1]"; }

// What a client may register: https anywhere, or http on a loopback name; no fragment.
std::string redirect_uri_problem(const std::string& uri) {
  if (uri.size() > kMaxStringBytes) return "is too long";
  if (uri.find('#') != std::string::npos) return "has a fragment (RFC 6749 §3.1.2)";
  auto p = split_uri(uri);
  if (!p) return "is not an absolute http(s) URL without userinfo";
  if (p->scheme == "http" && !is_loopback_ip_literal(p->host) && p->host != "localhost") {
    return "is http:// on a host that is not loopback (127.0.0.1, [::1], localhost)";
  }
  return {};
}

// ---- small answers --------------------------------------------------------------------

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(dump(body), "application/json");
}

void oauth_error(httplib::Response& res, int status, const std::string& error,
                 const std::string& description) {
  send_json(res, status, json{{"error", error}, {"error_description", description}});
}

// The request line for the log: parameter values only for names that carry no secret.
std::string loggable_target(const httplib::Request& req) {
  static const std::set<std::string> kShown{"response_type", "client_id", "scope", "resource",
                                            "redirect_uri", "code_challenge_method",
                                            "grant_type"};
  std::string out = req.path;
  char sep = '?';
  for (const auto& [name, value] : req.params) {
    out += sep;
    sep = '&';
    out += percent_encode(name.substr(0, 64)) + "=" +
           (kShown.count(name) ? percent_encode(value.substr(0, 256)) : std::string("…"));
  }
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool host_header_allowed(const httplib::Request& req) {
  if (!req.has_header("Host")) return true;
  std::string host = req.get_header_value("Host");
  if (!host.empty() && host.front() == '[') {
    host = host.substr(1, host.find(']') == std::string::npos ? std::string::npos : host.find(']') - 1);
  } else {
    host = host.substr(0, host.find(':'));
  }
  return is_loopback_host(host);
}

std::optional<std::vector<std::string>> string_list(const json& v) {
  if (!v.is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& s : v) {
    if (!s.is_string() || s.get_ref<const std::string&>().empty() ||
        s.get_ref<const std::string&>().find(' ') != std::string::npos) {
      return std::nullopt;
    }
    add_unique(out, s.get<std::string>());
  }
  return out;
}

}  // namespace

// ---- state ----------------------------------------------------------------------------

struct OAuthFixture::Client {
  std::string id;
  std::string secret;
  std::string auth_method;
  std::vector<std::string> redirect_uris;  // empty: any loopback http:// URI (pre-registered)
  std::vector<std::string> grant_types;
};

struct OAuthFixture::Code {
  std::string client_id;
  std::string redirect_uri;
  std::string challenge;
  std::vector<std::string> scopes;
  Clock::time_point expires;
  bool used = false;
  std::string family;  // the grant it was redeemed for
};

// One authorization grant: the tokens a code gave and every refresh since.
struct OAuthFixture::Family {
  std::string id;
  std::string client_id;
  std::vector<std::string> scopes;
  bool revoked = false;
  std::vector<std::string> access_tokens;
};

struct OAuthFixture::AccessToken {
  std::string family;
  std::vector<std::string> scopes;
  Clock::time_point expires;
  bool revoked = false;
};

struct RefreshEntry {
  std::string family;
  bool rotated_out = false;  // replaced by a newer one: using it again is a replay
  bool revoked = false;
};

struct OAuthFixture::AuthServer {
  int generation = 1;
  std::string path;    // "" or "/something"
  std::string issuer;  // as_origin + path
  std::map<std::string, Client> clients;
  std::map<std::string, Code> codes;
  std::map<std::string, Family> families;
  std::map<std::string, RefreshEntry> refresh_tokens;
  std::map<std::string, AccessToken> access_tokens;
  std::uint64_t next_family = 1;
};

json to_json(const OAuthSwitches& s) {
  return json{{"access_token_ttl_s", s.access_token_ttl_s},
              {"token_delay_ms", s.token_delay_ms},
              {"rotate_refresh_tokens", s.rotate_refresh_tokens},
              {"dynamic_registration", s.dynamic_registration},
              {"offline_access", s.offline_access},
              {"challenge_scope", s.challenge_scope},
              {"resource_metadata_in_header", s.resource_metadata_in_header},
              {"exact_redirect_port", s.exact_redirect_port},
              {"authorization_iss", s.authorization_iss},
              {"required_scopes", s.required_scopes},
              {"scopes_supported", s.scopes_supported},
              {"tool_scopes", s.tool_scopes}};
}

OAuthFixture::OAuthFixture(OAuthSwitches switches, std::vector<PreregisteredClient> clients,
                           std::string issuer_path, Log log)
    : switches_(std::move(switches)), preregistered_(std::move(clients)), log_(std::move(log)) {
  auto as = std::make_unique<AuthServer>();
  as->path = std::move(issuer_path);
  servers_.push_back(std::move(as));
}

OAuthFixture::~OAuthFixture() = default;

void OAuthFixture::set_origins(const std::string& resource_url, const std::string& as_origin) {
  std::lock_guard<std::mutex> lock(mutex_);
  resource_url_ = resource_url;
  resource_origin_ = resource_url.substr(0, resource_url.find('/', resource_url.find("//") + 2));
  as_origin_ = as_origin;
  for (auto& as : servers_) {
    as->issuer = as_origin_ + as->path;
    add_preregistered_locked(*as);
  }
}

void OAuthFixture::add_preregistered_locked(AuthServer& as) {
  for (const auto& pre : preregistered_) {
    as.clients[pre.client_id] = Client{pre.client_id, pre.client_secret, pre.auth_method,
                                       pre.redirect_uris, {"authorization_code", "refresh_token"}};
  }
}

std::string OAuthFixture::issuer() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return current_locked().issuer;
}

std::string OAuthFixture::resource_metadata_url() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return resource_origin_ + kPrmPath;
}

OAuthFixture::AuthServer& OAuthFixture::current_locked() const { return *servers_.back(); }

OAuthFixture::Clock::time_point OAuthFixture::now_locked() const {
  return Clock::now() + clock_offset_;
}

OAuthFixture::AuthServer* OAuthFixture::server_for_path_locked(const std::string& path,
                                                             std::string& endpoint) const {
  for (const auto& as : servers_) {
    for (const char* name : {"authorize", "token", "register"}) {
      if (path == as->path + "/" + name) {
        endpoint = name;
        return as.get();
      }
    }
    if (path == kAsMetadataPrefix + as->path) {
      endpoint = "metadata";
      return as.get();
    }
  }
  return nullptr;
}

std::vector<std::string> OAuthFixture::as_scopes_locked() const {
  std::vector<std::string> out = switches_.scopes_supported;
  for (const auto& s : switches_.required_scopes) add_unique(out, s);
  for (const auto& [tool, s] : switches_.tool_scopes) add_unique(out, s);
  if (switches_.offline_access) add_unique(out, "offline_access");
  return out;
}

json OAuthFixture::prm_locked() const {
  std::vector<std::string> scopes = switches_.scopes_supported;
  for (const auto& s : switches_.required_scopes) add_unique(scopes, s);
  for (const auto& [tool, s] : switches_.tool_scopes) add_unique(scopes, s);
  return json{{"resource", resource_url_},
              {"authorization_servers", {current_locked().issuer}},
              {"scopes_supported", scopes},
              {"bearer_methods_supported", {"header"}},
              {"resource_name", "mcprt OAuth fixture (issue tracker)"}};
}

json OAuthFixture::as_metadata_locked(const AuthServer& as) const {
  const std::string base = as_origin_ + as.path;
  json m{{"issuer", as.issuer},
         {"authorization_endpoint", base + "/authorize"},
         {"token_endpoint", base + "/token"},
         {"scopes_supported", as_scopes_locked()},
         {"response_types_supported", {"code"}},
         {"response_modes_supported", {"query"}},
         {"grant_types_supported", {"authorization_code", "refresh_token"}},
         {"token_endpoint_auth_methods_supported",
          {"none", "client_secret_basic", "client_secret_post"}},
         {"code_challenge_methods_supported", {"S256"}}};
  if (switches_.dynamic_registration) m["registration_endpoint"] = base + "/register";
  if (switches_.authorization_iss != "unadvertised") {
    m["authorization_response_iss_parameter_supported"] = true;
  }
  return m;
}

std::string OAuthFixture::challenge_locked(const std::string& error,
                                           const std::string& description,
                                           const std::vector<std::string>& scopes) const {
  std::vector<std::string> parts;
  auto add = [&](const char* name, std::string value) {
    // A quoted-string must not end early: tool names and scopes come from switches.
    std::replace_if(value.begin(), value.end(), [](char c) { return c == '"' || c == '\\'; }, '\'');
    parts.push_back(std::string(name) + "=\"" + value + "\"");
  };
  // RFC 6750 §3.1: a request without credentials gets no error details.
  if (!error.empty()) add("error", error);
  if (!error.empty() && !description.empty()) add("error_description", description);
  if (switches_.resource_metadata_in_header) add("resource_metadata", resource_origin_ + kPrmPath);
  // A step-up challenge always names the scopes; the first 401's scope is a switch.
  if (!scopes.empty() && (switches_.challenge_scope || error == "insufficient_scope")) {
    add("scope", join(scopes));
  }
  return parts.empty() ? std::string("Bearer") : "Bearer " + join(parts, ", ");
}

void OAuthFixture::count(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++counters_[key];
}

void OAuthFixture::log(const std::string& line) const {
  if (log_) log_(line);
}

// ---- the resource server ----------------------------------------------------------------

void OAuthFixture::install_resource(httplib::Server& server) {
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.path.rfind("/admin/", 0) != 0) count("mcp " + req.method + " " + req.path);
    if (!host_header_allowed(req)) {
      oauth_error(res, 403, "forbidden", "the Host header is not a loopback name");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    log("mcp " + req.method + " " + loggable_target(req) + " " + std::to_string(res.status));
  });
  server.Get(kPrmPath, [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    send_json(res, 200, prm_locked());
  });
  install_admin(server);
  // /mcp has its own OPTIONS route (registered first); this one answers the rest.
  server.Options(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
}

bool OAuthFixture::admit(const httplib::Request& req, httplib::Response& res) {
  if (req.has_param("access_token")) {
    count("mcp.400");
    oauth_error(res, 400, "invalid_request",
                "an access token in the URL is refused; send it in the Authorization header");
    return false;
  }
  std::vector<std::string> needed;
  std::string why_more;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    needed = switches_.required_scopes;
    if (req.method == "POST" && !switches_.tool_scopes.empty()) {
      const json body = json::parse(req.body, nullptr, false);
      const json messages = body.is_array() ? body : json::array({body});
      for (const auto& m : messages) {
        if (!m.is_object() || m.value("method", json()) != "tools/call") continue;
        const auto params = m.find("params");
        if (params == m.end() || !params->is_object()) continue;
        const auto name = params->find("name");
        if (name == params->end() || !name->is_string()) continue;
        auto it = switches_.tool_scopes.find(name->get<std::string>());
        if (it == switches_.tool_scopes.end()) continue;
        add_unique(needed, it->second);
        why_more = "tool " + it->first + " needs scope " + it->second;
      }
    }
  }
  const std::string auth = req.get_header_value("Authorization");
  std::unique_lock<std::mutex> lock(mutex_);
  auto refuse = [&](int status, const std::string& error, const std::string& description) {
    ++counters_["mcp." + std::to_string(status)];
    res.set_header("WWW-Authenticate", challenge_locked(error, description, needed));
    send_json(res, status,
              json{{"error", error.empty() ? "unauthorized" : error},
                   {"error_description", description}});
    return false;
  };
  if (auth.empty()) return refuse(401, "", "an access token is required");
  if (lower(auth.substr(0, 7)) != "bearer ") {
    return refuse(401, "invalid_request", "the Authorization header is not a Bearer token");
  }
  std::string token = auth.substr(7);
  while (!token.empty() && token.front() == ' ') token.erase(0, 1);
  while (!token.empty() && token.back() == ' ') token.pop_back();
  AuthServer& as = current_locked();
  auto it = as.access_tokens.find(token);
  if (it == as.access_tokens.end()) {
    for (const auto& other : servers_) {
      if (other.get() != &as && other->access_tokens.count(token)) {
        return refuse(401, "invalid_token",
                      "the access token was issued by " + other->issuer +
                          ", which no longer protects this resource");
      }
    }
    return refuse(401, "invalid_token", "unknown access token");
  }
  const AccessToken& t = it->second;
  if (t.revoked) return refuse(401, "invalid_token", "the access token was revoked");
  if (now_locked() >= t.expires) return refuse(401, "invalid_token", "the access token expired");
  std::vector<std::string> missing;
  for (const auto& s : needed) {
    if (!contains(t.scopes, s)) missing.push_back(s);
  }
  if (!missing.empty()) {
    return refuse(403, "insufficient_scope",
                  (why_more.empty() ? std::string("this resource needs scope ") + join(needed)
                                    : why_more) +
                      "; the token lacks " + join(missing));
  }
  ++counters_["mcp.ok"];
  return true;
}

// ---- the authorization server -------------------------------------------------------------

void OAuthFixture::install_authorization_server(httplib::Server& server) {
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_keep_alive_timeout(2);
  server.set_tcp_nodelay(true);
  server.set_default_headers({
      {"Access-Control-Allow-Origin", "*"},
      {"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
      {"Access-Control-Allow-Headers", "content-type, accept, authorization, mcp-protocol-version"},
      {"Access-Control-Expose-Headers", "www-authenticate"},
      {"Access-Control-Max-Age", "600"},
  });
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    count("as " + req.method + " " + req.path);
    if (!host_header_allowed(req)) {
      oauth_error(res, 403, "forbidden", "the Host header is not a loopback name");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    log("as " + req.method + " " + loggable_target(req) + " " + std::to_string(res.status));
  });
  server.Get(".*", [this](const httplib::Request& q, httplib::Response& r) { on_as_get(q, r); });
  server.Post(".*", [this](const httplib::Request& q, httplib::Response& r) { on_as_post(q, r); });
  server.Options(".*", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
}

void OAuthFixture::on_as_get(const httplib::Request& req, httplib::Response& res) {
  std::unique_lock<std::mutex> lock(mutex_);
  std::string endpoint;
  AuthServer* as = server_for_path_locked(req.path, endpoint);
  if (as && endpoint == "metadata") return send_json(res, 200, as_metadata_locked(*as));
  if (as && endpoint == "authorize") return on_authorize(*as, req, res);
  if (as && endpoint != "register") {
    res.set_header("Allow", "POST, OPTIONS");
    return oauth_error(res, 405, "invalid_request", req.path + " takes POST");
  }
  oauth_error(res, 404, "not_found", "no such endpoint: " + req.path);
}

void OAuthFixture::on_as_post(const httplib::Request& req, httplib::Response& res) {
  std::unique_lock<std::mutex> lock(mutex_);
  std::string endpoint;
  AuthServer* as = server_for_path_locked(req.path, endpoint);
  if (as && endpoint == "token") {
    const auto delay = std::chrono::milliseconds(switches_.token_delay_ms);
    if (delay.count() > 0) {
      lock.unlock();
      std::this_thread::sleep_for(delay);  // the slow-token switch: widens race windows
      lock.lock();
    }
    return on_token(*as, req, res);
  }
  if (as && endpoint == "register" && switches_.dynamic_registration) {
    return on_register(*as, req, res);
  }
  if (as && endpoint == "authorize") {
    res.set_header("Allow", "GET, OPTIONS");
    return oauth_error(res, 405, "invalid_request", req.path + " takes GET");
  }
  oauth_error(res, 404, "not_found", "no such endpoint: " + req.path);
}

void OAuthFixture::on_register(AuthServer& as, const httplib::Request& req,
                               httplib::Response& res) {
  auto bad = [&](const std::string& error, const std::string& why) {
    ++counters_["register.rejected"];
    oauth_error(res, 400, error, why);
  };
  if (lower(req.get_header_value("Content-Type")).rfind("application/json", 0) != 0) {
    return bad("invalid_client_metadata", "the registration must be application/json");
  }
  const json body = json::parse(req.body, nullptr, false);
  if (!body.is_object()) return bad("invalid_client_metadata", "the body is not a JSON object");
  if (as.clients.size() >= kMaxClientsPerServer) {
    return oauth_error(res, 503, "temporarily_unavailable", "too many registered clients");
  }
  Client c;
  const json uris = body.value("redirect_uris", json());
  auto list = string_list(uris);
  if (!list || list->empty() || list->size() > kMaxRedirectUris) {
    return bad("invalid_redirect_uri",
               "redirect_uris must be a non-empty array of at most " +
                   std::to_string(kMaxRedirectUris) + " URLs");
  }
  for (const auto& uri : *list) {
    if (auto why = redirect_uri_problem(uri); !why.empty()) {
      return bad("invalid_redirect_uri", "redirect URI \"" + uri.substr(0, 200) + "\" " + why);
    }
  }
  c.redirect_uris = *list;
  // RFC 7591 §2: without token_endpoint_auth_method the client is client_secret_basic.
  const json method = body.value("token_endpoint_auth_method", json("client_secret_basic"));
  c.auth_method = method.is_string() ? method.get<std::string>() : std::string();
  if (c.auth_method != "none" && c.auth_method != "client_secret_basic" &&
      c.auth_method != "client_secret_post") {
    return bad("invalid_client_metadata",
               "token_endpoint_auth_method must be none, client_secret_basic or "
               "client_secret_post");
  }
  auto grants = body.contains("grant_types") ? string_list(body["grant_types"])
                                             : std::optional<std::vector<std::string>>(
                                                   std::vector<std::string>{"authorization_code"});
  if (!grants || grants->empty()) return bad("invalid_client_metadata", "grant_types must be an array of strings");
  for (const auto& g : *grants) {
    if (g != "authorization_code" && g != "refresh_token") {
      return bad("invalid_client_metadata", "grant type \"" + g.substr(0, 100) + "\" is not supported");
    }
  }
  if (!contains(*grants, "authorization_code")) {
    return bad("invalid_client_metadata", "grant_types must include authorization_code");
  }
  c.grant_types = *grants;
  if (body.contains("response_types")) {
    auto rt = string_list(body["response_types"]);
    if (!rt || *rt != std::vector<std::string>{"code"}) {
      return bad("invalid_client_metadata", "response_types must be [\"code\"]");
    }
  }
  if (body.contains("application_type")) {
    const json& at = body["application_type"];
    if (!at.is_string() || (at != "native" && at != "web")) {
      return bad("invalid_client_metadata", "application_type must be \"native\" or \"web\"");
    }
  }
  if (body.contains("scope")) {
    if (!body["scope"].is_string()) return bad("invalid_client_metadata", "scope must be a string");
    const auto supported = as_scopes_locked();
    for (const auto& s : split_scopes(body["scope"].get<std::string>())) {
      if (!contains(supported, s)) return bad("invalid_client_metadata", "unknown scope \"" + s.substr(0, 100) + "\"");
    }
  }
  for (const char* field : {"client_name", "client_uri", "logo_uri", "software_id", "software_version"}) {
    if (body.contains(field) &&
        (!body[field].is_string() || body[field].get_ref<const std::string&>().size() > kMaxStringBytes)) {
      return bad("invalid_client_metadata", std::string(field) + " must be a string of at most " +
                                                std::to_string(kMaxStringBytes) + " bytes");
    }
  }
  unsigned char id_bytes[12];
  if (RAND_bytes(id_bytes, sizeof id_bytes) != 1) std::abort();
  c.id = "client_" + base64url(id_bytes, sizeof id_bytes);
  if (c.auth_method != "none") c.secret = random_secret(kClientSecretPrefix);

  json out = body;  // RFC 7591 §3.2.1: the metadata as registered, plus the credentials
  out["client_id"] = c.id;
  out["client_id_issued_at"] =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  out["redirect_uris"] = c.redirect_uris;
  out["grant_types"] = c.grant_types;
  out["response_types"] = {"code"};
  out["token_endpoint_auth_method"] = c.auth_method;
  if (!c.secret.empty()) {
    out["client_secret"] = c.secret;
    out["client_secret_expires_at"] = 0;
  }
  as.clients.emplace(c.id, c);
  ++counters_["register.ok"];
  send_json(res, 201, out);
}

void OAuthFixture::on_authorize(AuthServer& as, const httplib::Request& req,
                                httplib::Response& res) {
  auto page = [&](const std::string& why) {
    // Nowhere safe to redirect to: the user sees the error (RFC 6749 §4.1.2.1).
    ++counters_["authorize.rejected"];
    res.status = 400;
    res.set_content("authorization refused: " + why + "\n", "text/plain; charset=utf-8");
  };
  for (const auto& [name, value] : req.params) {
    if (req.params.count(name) > 1) return page("parameter \"" + name + "\" is repeated");
    if (value.size() > kMaxStringBytes) return page("parameter \"" + name + "\" is too long");
  }
  auto param = [&](const char* name) { return req.get_param_value(name); };
  const std::string client_id = param("client_id");
  auto client_it = as.clients.find(client_id);
  if (client_id.empty()) return page("no client_id");
  if (client_it == as.clients.end()) {
    return page("unknown client_id \"" + client_id.substr(0, 200) + "\" at " + as.issuer +
                " (register with this authorization server first)");
  }
  const Client& client = client_it->second;
  const std::string redirect_uri = param("redirect_uri");
  if (redirect_uri.empty()) return page("no redirect_uri");
  bool registered = false;
  auto asked = split_uri(redirect_uri);
  if (client.redirect_uris.empty()) {
    registered = asked && redirect_uri.find('#') == std::string::npos && asked->scheme == "http" &&
                 (is_loopback_ip_literal(asked->host) || asked->host == "localhost");
  }
  for (const auto& r : client.redirect_uris) {
    if (r == redirect_uri) registered = true;
    auto reg = split_uri(r);
    // RFC 8252 §7.3: any port for a loopback IP literal, everything else exact.
    if (!switches_.exact_redirect_port && reg && asked && reg->scheme == "http" &&
        is_loopback_ip_literal(reg->host) && asked->scheme == reg->scheme &&
        asked->host == reg->host && asked->rest == reg->rest && !asked->port.empty()) {
      registered = true;
    }
  }
  if (!registered) {
    return page("redirect_uri \"" + redirect_uri.substr(0, 200) +
                "\" is not registered for this client");
  }

  const std::string state = param("state");
  auto redirect = [&](std::vector<std::pair<std::string, std::string>> fields) {
    if (!state.empty()) fields.emplace_back("state", state);
    const std::string& mode = switches_.authorization_iss;
    if (mode == "issuer") fields.emplace_back("iss", as.issuer);
    if (mode == "wrong") fields.emplace_back("iss", as_origin_ + "/not-the-issuer");
    std::string location = redirect_uri;
    char sep = redirect_uri.find('?') == std::string::npos ? '?' : '&';
    for (const auto& [k, v] : fields) {
      location += sep + k + "=" + percent_encode(v);
      sep = '&';
    }
    res.status = 302;
    res.set_header("Location", location);
    res.set_header("Cache-Control", "no-store");
  };
  auto fail = [&](const std::string& error, const std::string& why) {
    ++counters_["authorize.rejected"];
    redirect({{"error", error}, {"error_description", why}});
  };
  if (param("response_type") != "code") {
    return fail("unsupported_response_type", "response_type must be code");
  }
  if (param("code_challenge_method") != "S256") {
    return fail("invalid_request", "PKCE is required: code_challenge_method must be S256");
  }
  const std::string challenge = param("code_challenge");
  if (challenge.size() != 43 ||
      !std::all_of(challenge.begin(), challenge.end(),
                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; })) {
    return fail("invalid_request",
                "code_challenge must be the base64url SHA-256 of the verifier (43 characters)");
  }
  if (state.empty()) return fail("invalid_request", "state is required");
  const std::string resource = param("resource");
  if (resource.empty()) return fail("invalid_target", "resource is required (RFC 8707)");
  if (resource != resource_url_) {
    return fail("invalid_target", "resource \"" + resource.substr(0, 200) +
                                      "\" is not a resource this server issues tokens for");
  }
  std::vector<std::string> scopes = split_scopes(param("scope"));
  const auto supported = as_scopes_locked();
  for (const auto& s : scopes) {
    if (!contains(supported, s)) return fail("invalid_scope", "unknown scope \"" + s.substr(0, 100) + "\"");
  }
  if (scopes.empty()) scopes = switches_.required_scopes;

  const auto now = now_locked();
  for (auto it = as.codes.begin(); it != as.codes.end();) {
    // Redeemed codes stay (a replay revokes their grant); expired unused ones go.
    it = (!it->second.used && it->second.expires <= now) ? as.codes.erase(it) : std::next(it);
  }
  Code code;
  code.client_id = client.id;
  code.redirect_uri = redirect_uri;
  code.challenge = challenge;
  code.scopes = scopes;
  code.expires = now + kCodeLifetime;
  const std::string value = random_secret(kCodePrefix);
  as.codes.emplace(value, std::move(code));
  ++counters_["authorize.ok"];
  redirect({{"code", value}});
}

void OAuthFixture::revoke_family_locked(AuthServer& as, const std::string& family_id) {
  auto it = as.families.find(family_id);
  if (it == as.families.end()) return;
  it->second.revoked = true;
  for (const auto& t : it->second.access_tokens) {
    if (auto at = as.access_tokens.find(t); at != as.access_tokens.end()) at->second.revoked = true;
  }
  for (auto& [token, entry] : as.refresh_tokens) {
    if (entry.family == family_id) entry.revoked = true;
  }
  ++counters_["token.families_revoked"];
}

json OAuthFixture::issue_tokens_locked(AuthServer& as, Family& family, bool with_refresh) {
  const auto now = now_locked();
  if (as.access_tokens.size() >= kMaxLiveTokensPerServer) {
    for (auto it = as.access_tokens.begin(); it != as.access_tokens.end();) {
      it = (it->second.revoked || it->second.expires <= now) ? as.access_tokens.erase(it) : std::next(it);
    }
  }
  AccessToken at;
  at.family = family.id;
  at.scopes = family.scopes;
  at.expires = now + std::chrono::seconds(switches_.access_token_ttl_s);
  const std::string value = random_secret(kAccessTokenPrefix);
  as.access_tokens.emplace(value, at);
  family.access_tokens.push_back(value);
  json out{{"access_token", value},
           {"token_type", "Bearer"},
           {"expires_in", switches_.access_token_ttl_s},
           {"scope", join(family.scopes)}};
  if (with_refresh) {
    const std::string refresh = random_secret(kRefreshTokenPrefix);
    as.refresh_tokens.emplace(refresh, RefreshEntry{family.id});
    out["refresh_token"] = refresh;
  }
  return out;
}

void OAuthFixture::on_token(AuthServer& as, const httplib::Request& req, httplib::Response& res) {
  auto fail = [&](int status, const std::string& error, const std::string& why) {
    ++counters_["token.error." + error];
    oauth_error(res, status, error, why);
  };
  if (lower(req.get_header_value("Content-Type")).rfind("application/x-www-form-urlencoded", 0) != 0) {
    return fail(400, "invalid_request", "the token request must be application/x-www-form-urlencoded");
  }
  std::string form_error;
  auto form_opt = parse_form(req.body, form_error);
  if (!form_opt) return fail(400, "invalid_request", form_error);
  const Params& form = *form_opt;
  auto field = [&](const char* name) {
    auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };

  // Client authentication, as the client registered it (RFC 6749 §2.3.1).
  std::string basic_id;
  std::string basic_secret;
  const std::string auth = req.get_header_value("Authorization");
  const bool basic = lower(auth.substr(0, 6)) == "basic ";
  if (!auth.empty() && !basic) return fail(401, "invalid_client", "only Basic client authentication is accepted here");
  if (basic) {
    auto decoded = base64_decode(auth.substr(6));
    const auto colon = decoded ? decoded->find(':') : std::string::npos;
    auto id = colon == std::string::npos ? std::nullopt : form_decode(decoded->substr(0, colon));
    auto secret = colon == std::string::npos ? std::nullopt : form_decode(decoded->substr(colon + 1));
    if (!id || !secret) return fail(401, "invalid_client", "the Basic credentials do not decode to id:secret");
    basic_id = *id;
    basic_secret = *secret;
  }
  const std::string form_id = field("client_id");
  if (basic && !form_id.empty() && form_id != basic_id) {
    return fail(400, "invalid_request", "client_id differs from the Basic credentials");
  }
  const std::string client_id = basic ? basic_id : form_id;
  auto client_it = as.clients.find(client_id);
  if (client_id.empty() || client_it == as.clients.end()) {
    if (basic) res.set_header("WWW-Authenticate", "Basic realm=\"" + as.issuer + "\"");
    return fail(401, "invalid_client",
                client_id.empty() ? std::string("no client_id")
                                  : "unknown client at " + as.issuer + " (register with it first)");
  }
  const Client& client = client_it->second;
  const bool form_secret = form.count("client_secret") > 0;
  std::string auth_problem;
  if (client.auth_method == "none" && (basic || form_secret)) {
    auth_problem = "the client registered token_endpoint_auth_method none but sent a secret";
  } else if (client.auth_method == "client_secret_basic" && (!basic || basic_secret != client.secret || form_secret)) {
    auth_problem = "the client must authenticate with client_secret_basic (its secret in a Basic header)";
  } else if (client.auth_method == "client_secret_post" &&
             (basic || !form_secret || field("client_secret") != client.secret)) {
    auth_problem = "the client must authenticate with client_secret_post (its secret in the form)";
  }
  if (!auth_problem.empty()) {
    if (basic) res.set_header("WWW-Authenticate", "Basic realm=\"" + as.issuer + "\"");
    return fail(401, "invalid_client", auth_problem);
  }

  const std::string grant = field("grant_type");
  const std::string resource = field("resource");
  auto resource_problem = [&]() -> std::string {
    if (resource.empty()) return "resource is required in token requests (RFC 8707)";
    if (resource != resource_url_) return "resource \"" + resource.substr(0, 200) + "\" is not this server's resource";
    return {};
  };
  const auto now = now_locked();
  if (grant == "authorization_code") {
    ++counters_["token.authorization_code"];
    auto code_it = as.codes.find(field("code"));
    if (code_it == as.codes.end()) return fail(400, "invalid_grant", "unknown or expired authorization code");
    Code& code = code_it->second;
    if (code.client_id != client.id) return fail(400, "invalid_grant", "the code was issued to another client");
    if (code.used) {
      revoke_family_locked(as, code.family);
      return fail(400, "invalid_grant", "the authorization code was already used; the tokens it gave are revoked");
    }
    if (code.expires <= now) return fail(400, "invalid_grant", "the authorization code expired");
    if (field("redirect_uri") != code.redirect_uri) {
      return fail(400, "invalid_grant", "redirect_uri differs from the authorization request's");
    }
    const std::string verifier = field("code_verifier");
    if (verifier.empty()) return fail(400, "invalid_request", "code_verifier is required (PKCE)");
    if (verifier.size() < 43 || verifier.size() > 128 ||
        !std::all_of(verifier.begin(), verifier.end(), is_unreserved)) {
      return fail(400, "invalid_request", "code_verifier must be 43-128 unreserved characters (RFC 7636)");
    }
    if (s256(verifier) != code.challenge) {
      return fail(400, "invalid_grant", "PKCE verification failed: the code_verifier does not match");
    }
    if (auto why = resource_problem(); !why.empty()) return fail(400, "invalid_target", why);
    code.used = true;
    Family family;
    family.id = "f" + std::to_string(as.next_family++);
    family.client_id = client.id;
    family.scopes = code.scopes;
    code.family = family.id;
    Family& stored = as.families.emplace(family.id, std::move(family)).first->second;
    ++counters_["token.authorization_code.ok"];
    return send_json(res, 200, issue_tokens_locked(as, stored, contains(client.grant_types, "refresh_token")));
  }
  if (grant == "refresh_token") {
    ++counters_["token.refresh_token"];
    const std::string presented = field("refresh_token");
    auto rt = as.refresh_tokens.find(presented);
    if (rt == as.refresh_tokens.end()) {
      for (const auto& other : servers_) {
        if (other.get() != &as && other->refresh_tokens.count(presented)) {
          return fail(400, "invalid_grant", "the refresh token was issued by " + other->issuer);
        }
      }
      return fail(400, "invalid_grant", "unknown refresh token");
    }
    Family& family = as.families[rt->second.family];
    if (family.client_id != client.id) return fail(400, "invalid_grant", "the refresh token belongs to another client");
    if (family.revoked || rt->second.revoked) return fail(400, "invalid_grant", "the refresh token was revoked");
    if (rt->second.rotated_out) {
      ++counters_["token.refresh_token.reuse"];
      revoke_family_locked(as, family.id);
      return fail(400, "invalid_grant",
                  "the refresh token was already used and replaced; every token of its grant is "
                  "now revoked");
    }
    if (auto why = resource_problem(); !why.empty()) return fail(400, "invalid_target", why);
    if (form.count("scope")) {
      for (const auto& s : split_scopes(field("scope"))) {
        if (!contains(family.scopes, s)) {
          return fail(400, "invalid_scope", "scope \"" + s.substr(0, 100) + "\" was not granted");
        }
      }
    }
    if (switches_.rotate_refresh_tokens) rt->second.rotated_out = true;
    ++counters_["token.refresh_token.ok"];
    return send_json(res, 200, issue_tokens_locked(as, family, switches_.rotate_refresh_tokens));
  }
  fail(400, "unsupported_grant_type",
       grant.empty() ? std::string("no grant_type")
                     : "grant_type \"" + grant.substr(0, 100) + "\" is not supported");
}

// ---- switches and admin -------------------------------------------------------------------

std::string OAuthFixture::apply_switches(const json& patch) {
  if (!patch.is_object()) return "switches must be a JSON object";
  OAuthSwitches next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    next = switches_;
  }
  auto number = [&](const json& v, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi) return false;
    out = v.get<std::int64_t>();
    return true;
  };
  auto boolean = [](const json& v, bool& out) {
    if (!v.is_boolean()) return false;
    out = v.get<bool>();
    return true;
  };
  for (const auto& [name, v] : patch.items()) {
    bool ok = false;
    if (name == "access_token_ttl_s") {
      ok = number(v, 0, kMaxTtlSeconds, next.access_token_ttl_s);
    } else if (name == "token_delay_ms") {
      ok = number(v, 0, kMaxTokenDelayMs, next.token_delay_ms);
    } else if (name == "rotate_refresh_tokens") {
      ok = boolean(v, next.rotate_refresh_tokens);
    } else if (name == "dynamic_registration") {
      ok = boolean(v, next.dynamic_registration);
    } else if (name == "offline_access") {
      ok = boolean(v, next.offline_access);
    } else if (name == "challenge_scope") {
      ok = boolean(v, next.challenge_scope);
    } else if (name == "resource_metadata_in_header") {
      ok = boolean(v, next.resource_metadata_in_header);
    } else if (name == "exact_redirect_port") {
      ok = boolean(v, next.exact_redirect_port);
    } else if (name == "authorization_iss") {
      ok = v.is_string() && (v == "issuer" || v == "omit" || v == "wrong" || v == "unadvertised");
      if (ok) next.authorization_iss = v.get<std::string>();
    } else if (name == "required_scopes" || name == "scopes_supported") {
      auto list = string_list(v);
      ok = list.has_value();
      if (ok) (name == "required_scopes" ? next.required_scopes : next.scopes_supported) = *list;
    } else if (name == "tool_scopes") {
      ok = v.is_object();
      std::map<std::string, std::string> scopes;
      for (const auto& [tool, scope] : v.items()) {
        ok = ok && scope.is_string() && !scope.get_ref<const std::string&>().empty() &&
             scope.get_ref<const std::string&>().find(' ') == std::string::npos;
        if (ok) scopes[tool] = scope.get<std::string>();
      }
      if (ok) next.tool_scopes = std::move(scopes);
    } else {
      const json known = to_json(OAuthSwitches{});
      std::string names;
      for (auto it = known.begin(); it != known.end(); ++it) names += (names.empty() ? "" : ", ") + it.key();
      return "unknown switch \"" + name + "\" (known: " + names + ")";
    }
    if (!ok) return "bad value for switch \"" + name + "\": " + dump(v).substr(0, 200);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  switches_ = std::move(next);
  return {};
}

void OAuthFixture::install_admin(httplib::Server& server) {
  auto body_json = [](const httplib::Request& req) {
    return req.body.empty() ? json::object() : json::parse(req.body, nullptr, false);
  };
  server.Get("/admin/switches", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    send_json(res, 200, to_json(switches_));
  });
  server.Post("/admin/switches", [this, body_json](const httplib::Request& req, httplib::Response& res) {
    const std::string error = apply_switches(body_json(req));
    if (!error.empty()) return send_json(res, 400, json{{"error", error}});
    std::lock_guard<std::mutex> lock(mutex_);
    log("admin: switches now " + dump(to_json(switches_)));
    send_json(res, 200, to_json(switches_));
  });
  server.Get("/admin/counters", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    send_json(res, 200, json{{"counters", counters_}});
  });
  server.Post("/admin/reset-counters", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    counters_.clear();
    send_json(res, 200, json{{"counters", json::object()}});
  });
  server.Get("/admin/state", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = now_locked();
    json servers = json::array();
    for (const auto& as : servers_) {
      std::size_t live = 0;
      for (const auto& [t, at] : as->access_tokens) live += (!at.revoked && at.expires > now) ? 1 : 0;
      std::size_t refresh = 0;
      for (const auto& [t, e] : as->refresh_tokens) {
        auto f = as->families.find(e.family);
        refresh += (!e.revoked && !e.rotated_out && f != as->families.end() && !f->second.revoked) ? 1 : 0;
      }
      servers.push_back({{"issuer", as->issuer},
                         {"clients", as->clients.size()},
                         {"live_access_tokens", live},
                         {"live_refresh_tokens", refresh},
                         {"grants", as->families.size()}});
    }
    send_json(res, 200,
              json{{"issuer", current_locked().issuer},
                   {"resource", resource_url_},
                   {"clock_offset_s", clock_offset_.count()},
                   {"authorization_servers", servers}});
  });
  server.Post("/admin/expire-access-tokens", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = now_locked();
    std::size_t n = 0;
    for (auto& as : servers_) {
      for (auto& [t, at] : as->access_tokens) {
        if (at.expires > now) {
          at.expires = now;
          ++n;
        }
      }
    }
    log("admin: expired " + std::to_string(n) + " access token(s)");
    send_json(res, 200, json{{"expired", n}});
  });
  server.Post("/admin/revoke-refresh-tokens", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t n = 0;
    for (auto& as : servers_) {
      for (auto& [t, e] : as->refresh_tokens) {
        if (!e.revoked && !e.rotated_out) ++n;
        e.revoked = true;
      }
    }
    log("admin: revoked " + std::to_string(n) + " refresh token(s)");
    send_json(res, 200, json{{"revoked", n}});
  });
  server.Post("/admin/advance-clock", [this, body_json](const httplib::Request& req, httplib::Response& res) {
    const json body = body_json(req);
    const json seconds = body.is_object() ? body.value("seconds", json()) : json();
    if (!seconds.is_number_integer() || seconds.get<std::int64_t>() < 1 ||
        seconds.get<std::int64_t>() > kMaxTtlSeconds) {
      return send_json(res, 400, json{{"error", "give {\"seconds\": N} with 1 <= N <= " +
                                                    std::to_string(kMaxTtlSeconds)}});
    }
    std::lock_guard<std::mutex> lock(mutex_);
    clock_offset_ += std::chrono::seconds(seconds.get<std::int64_t>());
    log("admin: clock advanced to +" + std::to_string(clock_offset_.count()) + " s");
    send_json(res, 200, json{{"clock_offset_s", clock_offset_.count()}});
  });
  server.Post("/admin/move-authorization-server",
              [this, body_json](const httplib::Request& req, httplib::Response& res) {
    const json body = body_json(req);
    std::lock_guard<std::mutex> lock(mutex_);
    if (servers_.size() >= kMaxAuthorizationServers) {
      return send_json(res, 400, json{{"error", "moved too often"}});
    }
    std::string path = "/as" + std::to_string(servers_.size() + 1);
    if (body.is_object() && body.contains("issuer_path")) {
      const json& p = body["issuer_path"];
      const bool ok = p.is_string() && p.get_ref<const std::string&>().size() > 1 &&
                      p.get_ref<const std::string&>().size() <= 200 &&
                      p.get_ref<const std::string&>().front() == '/' &&
                      p.get_ref<const std::string&>().back() != '/' &&
                      std::all_of(p.get_ref<const std::string&>().begin(), p.get_ref<const std::string&>().end(),
                                  [](char c) { return is_unreserved(c) || c == '/'; });
      if (!ok) {
        return send_json(res, 400, json{{"error", "issuer_path must look like \"/tenant\" (unreserved characters and '/')"}});
      }
      path = p.get<std::string>();
    }
    for (const auto& as : servers_) {
      if (as->path == path) return send_json(res, 400, json{{"error", "issuer path " + path + " was used before"}});
    }
    auto as = std::make_unique<AuthServer>();
    as->generation = static_cast<int>(servers_.size()) + 1;
    as->path = path;
    as->issuer = as_origin_ + path;
    add_preregistered_locked(*as);
    servers_.push_back(std::move(as));
    log("admin: the authorization server moved to " + current_locked().issuer);
    send_json(res, 200, json{{"issuer", current_locked().issuer}});
  });
}

}  // namespace mcprt::demo
