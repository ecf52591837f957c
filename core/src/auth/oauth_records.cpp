#include "auth/oauth_records.hpp"

#include <cmath>
#include <cstdio>

#include "auth/oauth_wire.hpp"
#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/hash.hpp"
#include "mcprt/platform/http_client.hpp"

namespace mcprt::detail::oauth {

namespace {

constexpr int kRecordVersion = 1;

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string string_or(const json& obj, const char* key, std::string fallback = {}) {
  const json* v = member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

bool bool_or(const json& obj, const char* key, bool fallback = false) {
  const json* v = member(obj, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

std::int64_t int_or(const json& obj, const char* key, std::int64_t fallback = 0) {
  const json* v = member(obj, key);
  if (!v || !v->is_number()) return fallback;
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < 0 || d > 9.0e15) return fallback;
  return static_cast<std::int64_t>(d);
}

// A list of strings; a field of another shape is an error (`where`, `key` named).
Result<std::vector<std::string>> string_list(const json& obj, const char* key,
                                             const std::string& where, bool* present = nullptr) {
  std::vector<std::string> out;
  const json* v = member(obj, key);
  if (present) *present = v && !v->is_null();
  if (!v || v->is_null()) return out;
  if (!v->is_array()) {
    return Error::make(ErrorCode::protocol, where + ": \"" + key + "\" is not a list of strings");
  }
  for (const json& item : *v) {
    if (!item.is_string()) {
      return Error::make(ErrorCode::protocol, where + ": \"" + key + "\" is not a list of strings");
    }
    if (out.size() >= kMaxListItems) break;
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::string> lenient_list(const json& obj, const char* key) {
  auto r = string_list(obj, key, "");
  return r ? std::move(r).value() : std::vector<std::string>{};
}

json list_json(const std::vector<std::string>& v) { return json(v); }

std::string hex16(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Result<std::string> endpoint(const json& doc, const char* key, const std::string& where,
                             bool required) {
  const json* v = member(doc, key);
  if (!v || v->is_null()) {
    if (!required) return std::string();
    return Error::make(ErrorCode::protocol, where + " has no \"" + key + "\"");
  }
  if (!v->is_string()) return Error::make(ErrorCode::protocol, where + ": \"" + key + "\" is not a URL");
  auto url = check_wire_url(v->get<std::string>(), where + ": \"" + std::string(key) + "\"");
  if (!url) return std::move(url).error();
  return url->to_string();
}

}  // namespace

Result<json> parse_object(std::string_view body, const std::string& where) {
  auto doc = parse_untrusted_json(body);
  if (!doc) {
    return Error::make(ErrorCode::protocol, where + " is not JSON (" + doc.error().message + ")");
  }
  if (!doc->is_object()) return Error::make(ErrorCode::protocol, where + " is not a JSON object");
  return std::move(doc).value();
}

Result<ResourceMetadata> read_resource_metadata(const json& doc, const std::string& where) {
  ResourceMetadata out;
  const json* resource = member(doc, "resource");
  if (!resource || !resource->is_string() || resource->get_ref<const std::string&>().empty()) {
    return Error::make(ErrorCode::protocol, where + " has no \"resource\"");
  }
  out.resource = resource->get<std::string>();
  auto servers = string_list(doc, "authorization_servers", where);
  if (!servers) return std::move(servers).error();
  out.authorization_servers = std::move(servers).value();
  if (out.authorization_servers.empty()) {
    return Error::make(ErrorCode::protocol, where + " names no authorization server "
                                                    "(\"authorization_servers\" is missing or empty)");
  }
  auto scopes = string_list(doc, "scopes_supported", where);
  if (!scopes) return std::move(scopes).error();
  out.scopes_supported = std::move(scopes).value();
  return out;
}

Result<AuthServer> read_auth_server_metadata(const json& doc, const std::string& issuer,
                                             const std::string& where) {
  AuthServer out;
  const json* claimed = member(doc, "issuer");
  if (!claimed || !claimed->is_string()) {
    return Error::make(ErrorCode::protocol, where + " has no \"issuer\"");
  }
  out.issuer = claimed->get<std::string>();
  if (!same_issuer(out.issuer, issuer)) {
    return Error::make(ErrorCode::protocol,
                       where + " claims the issuer \"" + safe_text(out.issuer, 120) +
                           "\", not \"" + issuer +
                           "\" (issuer mismatch): refusing to use it (RFC 8414 §3.3)");
  }
  auto authz = endpoint(doc, "authorization_endpoint", where, false);
  if (!authz) return std::move(authz).error();
  out.authorization_endpoint = std::move(authz).value();
  auto token = endpoint(doc, "token_endpoint", where, true);
  if (!token) return std::move(token).error();
  out.token_endpoint = std::move(token).value();
  auto reg = endpoint(doc, "registration_endpoint", where, false);
  if (!reg) return std::move(reg).error();
  out.registration_endpoint = std::move(reg).value();
  auto methods = string_list(doc, "code_challenge_methods_supported", where,
                             &out.challenge_methods_listed);
  if (!methods) return std::move(methods).error();
  out.code_challenge_methods = std::move(methods).value();
  auto auth = string_list(doc, "token_endpoint_auth_methods_supported", where,
                          &out.auth_methods_listed);
  if (!auth) return std::move(auth).error();
  out.token_auth_methods = std::move(auth).value();
  auto scopes = string_list(doc, "scopes_supported", where);
  if (!scopes) return std::move(scopes).error();
  out.scopes_supported = std::move(scopes).value();
  out.cimd_supported = bool_or(doc, "client_id_metadata_document_supported");
  out.iss_supported = bool_or(doc, "authorization_response_iss_parameter_supported");
  return out;
}

AuthServer default_endpoints(const Url& origin) {
  AuthServer out;
  const std::string base = origin.origin();
  out.issuer = base;
  out.authorization_endpoint = base + "/authorize";
  out.token_endpoint = base + "/token";
  out.registration_endpoint = base + "/register";
  out.from_metadata = false;
  return out;
}

json AuthServer::to_json() const {
  json j = json_object({{"issuer", issuer},
            {"authorization_endpoint", authorization_endpoint},
            {"token_endpoint", token_endpoint},
            {"registration_endpoint", registration_endpoint},
            {"scopes_supported", list_json(scopes_supported)},
            {"client_id_metadata_document_supported", cimd_supported},
            {"authorization_response_iss_parameter_supported", iss_supported},
            {"from_metadata", from_metadata}});
  if (challenge_methods_listed) j["code_challenge_methods_supported"] = code_challenge_methods;
  if (auth_methods_listed) j["token_endpoint_auth_methods_supported"] = token_auth_methods;
  return j;
}

std::optional<AuthServer> AuthServer::from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  AuthServer out;
  out.issuer = string_or(j, "issuer");
  out.authorization_endpoint = string_or(j, "authorization_endpoint");
  out.token_endpoint = string_or(j, "token_endpoint");
  out.registration_endpoint = string_or(j, "registration_endpoint");
  // A stored endpoint is checked again: the file is ours, but a damaged one must not send
  // a secret to a URL that was never allowed.
  for (const std::string* url : {&out.authorization_endpoint, &out.token_endpoint,
                                 &out.registration_endpoint}) {
    if (!url->empty() && !check_wire_url(*url, "a stored endpoint")) return std::nullopt;
  }
  if (out.issuer.empty() || out.token_endpoint.empty()) return std::nullopt;
  out.challenge_methods_listed = member(j, "code_challenge_methods_supported") != nullptr;
  out.code_challenge_methods = lenient_list(j, "code_challenge_methods_supported");
  out.auth_methods_listed = member(j, "token_endpoint_auth_methods_supported") != nullptr;
  out.token_auth_methods = lenient_list(j, "token_endpoint_auth_methods_supported");
  out.scopes_supported = lenient_list(j, "scopes_supported");
  out.cimd_supported = bool_or(j, "client_id_metadata_document_supported");
  out.iss_supported = bool_or(j, "authorization_response_iss_parameter_supported");
  out.from_metadata = bool_or(j, "from_metadata", true);
  return out;
}

json ClientIdentity::to_json() const {
  json j = json_object({{"client_id", client_id},
            {"auth_method", auth_method},
            {"source", source},
            {"redirect_uri", redirect_uri}});
  if (source != "config" && !client_secret.empty()) j["client_secret"] = client_secret;
  return j;
}

ClientIdentity ClientIdentity::from_json(const json& j) {
  ClientIdentity out;
  out.client_id = string_or(j, "client_id");
  out.client_secret = string_or(j, "client_secret");
  out.auth_method = string_or(j, "auth_method");
  out.source = string_or(j, "source");
  out.redirect_uri = string_or(j, "redirect_uri");
  return out;
}

json TokenSet::to_json() const {
  json j = json::object();
  if (!access_token.empty()) j["access_token"] = access_token;
  if (!refresh_token.empty()) j["refresh_token"] = refresh_token;
  if (!scope.empty()) j["scope"] = scope;
  if (expires_at_ms) j["expires_at_ms"] = expires_at_ms;
  return j;
}

TokenSet TokenSet::from_json(const json& j) {
  TokenSet out;
  out.access_token = string_or(j, "access_token");
  out.refresh_token = string_or(j, "refresh_token");
  out.scope = string_or(j, "scope");
  out.expires_at_ms = int_or(j, "expires_at_ms");
  return out;
}

Result<TokenSet> read_token_response(const json& doc, std::int64_t now_ms,
                                     const std::string& where) {
  TokenSet out;
  const json* access = member(doc, "access_token");
  if (!access || !access->is_string() || access->get_ref<const std::string&>().empty()) {
    return Error::make(ErrorCode::protocol, where + " has no \"access_token\"");
  }
  out.access_token = access->get<std::string>();
  if (out.access_token.size() > kMaxTokenBytes) {
    return Error::make(ErrorCode::protocol, where + ": the access token is larger than " +
                                                std::to_string(kMaxTokenBytes) + " bytes");
  }
  // An access token goes into a header: no control bytes, no spaces (RFC 6750 b64token
  // is narrower still; servers vary, so only what would break the header is refused).
  for (char c : out.access_token) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) {
      return Error::make(ErrorCode::protocol,
                         where + ": the access token has a character a header cannot carry");
    }
  }
  const json* type = member(doc, "token_type");
  if (type && !type->is_null()) {
    if (!type->is_string()) return Error::make(ErrorCode::protocol, where + ": \"token_type\" is not a string");
    if (!iequals(type->get_ref<const std::string&>(), "Bearer")) {
      return Error::make(ErrorCode::protocol,
                         where + " issued a \"" + safe_text(type->get<std::string>(), 40) +
                             "\" token; mcprt supports only token_type \"Bearer\"");
    }
  }
  out.refresh_token = string_or(doc, "refresh_token");
  if (out.refresh_token.size() > kMaxTokenBytes) out.refresh_token.clear();
  out.scope = string_or(doc, "scope");
  if (const json* expires = member(doc, "expires_in"); expires) {
    std::optional<double> seconds;
    if (expires->is_number()) {
      seconds = expires->get<double>();
    } else if (expires->is_string()) {
      const std::string& s = expires->get_ref<const std::string&>();
      if (!s.empty() && s.size() < 16 && s.find_first_not_of("0123456789") == std::string::npos) {
        double v = 0;
        for (char c : s) v = v * 10 + (c - '0');
        seconds = v;
      }
    }
    // Ten years at most: a larger lifetime is as good as none and would overflow nothing.
    if (seconds && std::isfinite(*seconds) && *seconds > 0 && *seconds < 3.2e8) {
      out.expires_at_ms = now_ms + static_cast<std::int64_t>(*seconds * 1000);
    }
  }
  return out;
}

std::string CredentialRecord::to_text() const {
  json j = json_object({{"v", kRecordVersion},
            {"issuer", issuer},
            {"resource", resource},
            {"client", client.to_json()},
            {"tokens", tokens.to_json()},
            {"requested_scopes", list_json(requested_scopes)}});
  if (server) j["server"] = server->to_json();
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<CredentialRecord> CredentialRecord::from_text(std::string_view text,
                                                            const std::string& issuer,
                                                            const std::string& resource) {
  auto doc = parse_untrusted_json(text);
  if (!doc || !doc->is_object() || int_or(*doc, "v") != kRecordVersion) return std::nullopt;
  if (string_or(*doc, "issuer") != issuer || string_or(*doc, "resource") != resource) {
    return std::nullopt;
  }
  CredentialRecord out;
  out.issuer = issuer;
  out.resource = resource;
  if (const json* s = member(*doc, "server")) out.server = AuthServer::from_json(*s);
  if (const json* c = member(*doc, "client")) out.client = ClientIdentity::from_json(*c);
  if (const json* t = member(*doc, "tokens")) out.tokens = TokenSet::from_json(*t);
  out.requested_scopes = lenient_list(*doc, "requested_scopes");
  return out;
}

std::string ServerRecord::to_text() const {
  return json_object({{"v", kRecordVersion}, {"url", url}, {"resource", resource}, {"issuer", issuer}})
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<ServerRecord> ServerRecord::from_text(std::string_view text, const std::string& url) {
  auto doc = parse_untrusted_json(text);
  if (!doc || !doc->is_object() || int_or(*doc, "v") != kRecordVersion) return std::nullopt;
  if (string_or(*doc, "url") != url) return std::nullopt;
  ServerRecord out;
  out.url = url;
  out.resource = string_or(*doc, "resource");
  out.issuer = string_or(*doc, "issuer");
  if (out.resource.empty() || out.issuer.empty()) return std::nullopt;
  return out;
}

std::string server_key(const std::string& url) { return "oauth-server-" + hex16(fnv1a64(url)); }

std::string credential_key(const std::string& issuer, const std::string& resource) {
  return "oauth-cred-" + hex16(fnv1a64(issuer + '\x1f' + resource));
}

}  // namespace mcprt::detail::oauth
