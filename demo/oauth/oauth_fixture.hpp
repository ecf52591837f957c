#pragma once
// A loopback OAuth 2.1 world for mcprt's own tests (SPEC §13): an authorization server and
// the MCP server it protects, each on its own 127.0.0.1 port, with switches for the
// misbehaviours the client must survive. Not a production authorization server: it
// approves every authorization request at once, and keeps everything in memory.
//
// The protected resource (the demo server's Streamable HTTP front end, http_front.hpp):
//  [x] /mcp needs `Authorization: Bearer <token>` from the current authorization server:
//      none or a bad/expired/revoked one → 401 with `WWW-Authenticate: Bearer
//      resource_metadata="…", scope="…"` (and error="invalid_token" for a bad one); a token
//      without the required scopes, or a tools/call of a tool that needs a scope the
//      token lacks → 403 `error="insufficient_scope", scope="<all scopes needed>"`; a
//      token in the URL (`?access_token=`) → 400
//  [x] RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp
//  [x] admin endpoints under /admin/ (see OAuthFixture::install_admin)
// The authorization server (issuer http://127.0.0.1:<as-port><issuer-path>):
//  [x] RFC 8414 metadata at /.well-known/oauth-authorization-server<issuer-path>: S256
//      only, `authorization_response_iss_parameter_supported`, scopes incl. offline_access
//  [x] RFC 7591 registration (<issuer-path>/register); pre-registered clients (flags)
//  [x] <issuer-path>/authorize: checks the client, the redirect URI (exact, or any port
//      for a loopback IP literal as RFC 8252 §7.3 allows), response_type=code, PKCE S256,
//      state, resource (RFC 8707) and scope; approves at once with a 302 to the redirect
//      URI carrying code, state and iss (RFC 9207). An unknown client or redirect URI is
//      a 400 page, never a redirect; other errors redirect with error=…
//  [x] <issuer-path>/token: authorization_code (PKCE verifier, redirect URI, resource,
//      single-use codes: a replay revokes what the code gave) and refresh_token with
//      rotation (a rotated-out refresh token used again is refused AND revokes its whole
//      family, as real servers do); client auth none / client_secret_basic /
//      client_secret_post as registered; access tokens expire after a set time
//  [x] switches, from flags or POST /admin/switches mid-run; moving the authorization
//      server (a new issuer path, its own clients and tokens; the resource then accepts
//      only the new server's tokens)
//  [x] counters per endpoint (GET /admin/counters), a clock tests can advance
//  [x] CORS on every response (WWW-Authenticate and Mcp-Session-Id exposed), preflights
//  [x] one stderr line per request, without tokens, codes, secrets, state or verifiers
//  [ ] no Client ID Metadata Documents, no client_credentials, no DPoP, no OIDC
//
// Every token, code and secret starts with a prefix of kSecretPrefixes, so a test can grep
// any log or file for leaks without knowing the values.
//
// Threading: httplib serves each connection on a pool thread of its server; one mutex
// guards all state. The slow-token switch sleeps before taking it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace mcprt::demo {

using json = nlohmann::json;

inline constexpr const char* kAccessTokenPrefix = "fxat_";
inline constexpr const char* kRefreshTokenPrefix = "fxrt_";
inline constexpr const char* kCodePrefix = "fxcode_";
inline constexpr const char* kClientSecretPrefix = "fxcs_";
inline constexpr const char* kSecretPrefixes[] = {kAccessTokenPrefix, kRefreshTokenPrefix,
                                                  kCodePrefix, kClientSecretPrefix};

// What the fixture does; every field can be changed mid-run (POST /admin/switches takes
// the same names as JSON; see OAuthFixture::apply_switches).
struct OAuthSwitches {
  std::int64_t access_token_ttl_s = 3600;  // expires_in of new access tokens
  std::int64_t token_delay_ms = 0;         // /token waits this long first (race windows)
  bool rotate_refresh_tokens = true;       // a refresh returns a new refresh token
  bool dynamic_registration = true;        // registration_endpoint offered
  bool offline_access = true;              // "offline_access" in the AS scopes_supported
  bool challenge_scope = true;             // scope="…" in the 401 challenge
  bool resource_metadata_in_header = true; // resource_metadata="…" in the 401 challenge
  bool exact_redirect_port = false;        // no RFC 8252 any-port rule for loopback IPs
  // "issuer" (RFC 9207), "omit" (no iss), or "wrong" (another issuer's URL).
  std::string authorization_iss = "issuer";
  // Every /mcp request needs these; also what an authorization without `scope` grants.
  std::vector<std::string> required_scopes{"mcp:tools"};
  // What the PRM lists (the AS adds offline_access when that switch is on).
  std::vector<std::string> scopes_supported{"mcp:tools", "issues:write"};
  // tools/call of the tool needs the scope too (step-up). Its scope joins scopes_supported.
  std::map<std::string, std::string> tool_scopes;
};

json to_json(const OAuthSwitches& s);

// A client the authorization server knows without registration. Without redirect URIs
// any loopback http:// redirect URI is accepted.
struct PreregisteredClient {
  std::string client_id;
  std::string client_secret;  // empty: a public client (auth method "none")
  std::string auth_method;    // none, client_secret_basic, client_secret_post
  std::vector<std::string> redirect_uris;
};

class OAuthFixture {
 public:
  using Clock = std::chrono::steady_clock;
  using Log = std::function<void(std::string_view line)>;

  OAuthFixture(OAuthSwitches switches, std::vector<PreregisteredClient> clients,
               std::string issuer_path, Log log);
  ~OAuthFixture();
  OAuthFixture(const OAuthFixture&) = delete;
  OAuthFixture& operator=(const OAuthFixture&) = delete;

  // Where the two servers listen, once they are bound (before any request is served).
  void set_origins(const std::string& resource_url, const std::string& as_origin);

  // The resource server's routes besides /mcp (PRM, admin), its counter and logger.
  void install_resource(httplib::Server& server);
  // The authorization server's routes (every issuer path, current and past).
  void install_authorization_server(httplib::Server& server);
  // The /mcp gate (HttpFrontOptions::admit): true lets the request through.
  bool admit(const httplib::Request& req, httplib::Response& res);

  // Applies a JSON object of switches (a subset of to_json's names). On a bad name or
  // value nothing changes and the reason is returned.
  std::string apply_switches(const json& patch);

  std::string issuer() const;
  std::string resource_metadata_url() const;

 private:
  struct Client;
  struct Code;
  struct Family;
  struct AccessToken;
  struct AuthServer;

  AuthServer& current_locked() const;
  AuthServer* server_for_path_locked(const std::string& path, std::string& endpoint) const;
  Clock::time_point now_locked() const;

  void on_as_get(const httplib::Request& req, httplib::Response& res);
  void on_as_post(const httplib::Request& req, httplib::Response& res);
  void on_authorize(AuthServer& as, const httplib::Request& req, httplib::Response& res);
  void on_token(AuthServer& as, const httplib::Request& req, httplib::Response& res);
  void on_register(AuthServer& as, const httplib::Request& req, httplib::Response& res);
  json as_metadata_locked(const AuthServer& as) const;
  json prm_locked() const;
  std::vector<std::string> as_scopes_locked() const;
  void add_preregistered_locked(AuthServer& as);
  void revoke_family_locked(AuthServer& as, const std::string& family_id);
  json issue_tokens_locked(AuthServer& as, Family& family, bool with_refresh);
  std::string challenge_locked(const std::string& error, const std::string& description,
                               const std::vector<std::string>& scopes) const;

  void install_admin(httplib::Server& server);
  void count(const std::string& key);
  void log(const std::string& line) const;

  mutable std::mutex mutex_;
  OAuthSwitches switches_;
  std::vector<PreregisteredClient> preregistered_;
  Log log_;
  std::string resource_url_;  // http://127.0.0.1:<port>/mcp
  std::string resource_origin_;
  std::string as_origin_;
  // Every authorization server this fixture has been; the last one is current.
  std::vector<std::unique_ptr<AuthServer>> servers_;
  std::chrono::seconds clock_offset_{0};
  std::map<std::string, std::int64_t> counters_;
};

}  // namespace mcprt::demo
