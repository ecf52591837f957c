#pragma once
// The OAuth 2.1 client (SPEC §13): mcprt's AuthStorage for HTTP servers that want OAuth.
//
//   OAuthClient oauth({.executor = &ex, .http = &http, .crypto = &crypto,
//                      .store = &credentials, .authorizer = &authorizer,
//                      .login_hint = [](const std::string& s) {
//                        return "run `mcprt auth login " + s + "`"; }});
//   oauth.set_server(OAuthServer::from_config(cfg));   // for every http/sse server
//   ManagerServices services{..., .auth_storage = &oauth};
//
// WHAT IT DOES, in the transports' terms (auth.hpp): get_token() answers with the stored
// access token (refreshing it first when it expires within `refresh_skew`), or with none —
// then the server's 401 brings refresh_token() with its challenge (AuthRequest::status and
// ::www_authenticate), and the client authorizes:
//  1. Protected Resource Metadata (RFC 9728): the challenge's `resource_metadata`, else
//     <origin>/.well-known/oauth-protected-resource<path>, else the root form. Its
//     `resource` must be the server URL or a parent of it (same origin, a path prefix at a
//     segment boundary), else the flow stops ("resource mismatch"): the suite publishes the
//     origin for a root PRM, so equality alone would refuse real servers. `resource` is sent
//     exactly as the PRM wrote it (RFC 8707) in the authorization and token requests.
//  2. Authorization server metadata (RFC 8414 / OIDC) for its first `authorization_servers`
//     issuer: with a path, /.well-known/oauth-authorization-server/<path>,
//     /.well-known/openid-configuration/<path>, <path>/.well-known/openid-configuration;
//     without, the two root forms. The document's `issuer` must equal the issuer (a single
//     trailing '/' aside: both spell the same well-known URL). No PRM at all (2025-03-26
//     servers): the server's origin is the issuer, its metadata is tried there, and without
//     any the endpoints are <origin>/authorize, /token and /register.
//  3. Client identity, in order: `oauth.clientId` (+ clientSecret) from the config → a
//     Client ID Metadata Document URL (`oauth.clientMetadataUrl` or
//     OAuthClientOptions::client_metadata_url) when the AS says
//     `client_id_metadata_document_supported` → the registration stored for this (issuer,
//     resource) when it lists this flow's redirect URI → Dynamic Client Registration
//     (RFC 7591: application_type, grant types authorization_code + refresh_token) → an
//     error that says what to configure.
//  4. Authorization code + PKCE S256 (refused when the metadata's
//     code_challenge_methods_supported lacks S256), `state`, `resource`, the scope (below);
//     the Authorizer shows the URL and returns the redirect; `state` must match, and `iss`
//     (RFC 9207) must be present and equal to the issuer when the AS advertises
//     authorization_response_iss_parameter_supported, and equal when present anyway
//     (plain string comparison, no URL normalisation).
//  5. Token request with client_secret_basic, client_secret_post or none — the method the
//     registration names, else the best the AS lists (basic, post, none) for the client.
// SCOPES: the challenge's `scope` → `oauth.scopes` → the PRM's scopes_supported → none;
// `offline_access` is added to a non-empty request only when the AS metadata lists it.
// A 403 with error="insufficient_scope" re-authorizes with the union of what was asked
// before and what the challenge names (step-up); the transports retry a request at most
// once per 401 and once per 403, so a server that never accepts costs one step-up per
// request, not a loop.
// REFRESH (before expiry and on a 401) is a transaction: the CredentialStore lock for the
// credential is taken, the credential is read again (another process may have refreshed
// it: its new token is used as it is), the refresh is sent, the answer — with a rotated
// refresh token — is persisted before the new access token is handed out, and the lock is
// released. A refresh the AS refuses (invalid_grant, ...) drops the refresh token and
// starts a new authorization; a refresh that found no AS (network, 5xx) is an error and
// the stored refresh token stays. Each 401 also re-reads the PRM: when its authorization
// server changed, the credential for the new (issuer, resource) is used — a new
// registration, never the old AS's client or tokens (AS migration).
// CLIENT CREDENTIALS (`oauth.grant: "client_credentials"`, machine-to-machine): discovery
// as above, then grant_type=client_credentials with clientSecret (basic/post) or a
// private_key_jwt assertion (RFC 7523: iss = sub = client_id, aud = the issuer, jti,
// 5-minute exp, signed by Crypto::sign_jws). It never needs the user.
//
// INTERACTIVE OR NOT: a step that needs the user (an authorization) runs only when an
// Authorizer is set and the client is interactive (OAuthClientOptions::interactive,
// set_interactive(), or always for login()). Otherwise the token request fails with
// ErrorCode::needs_auth:
//   Server "x": needs an OAuth sign-in (no stored authorization); run `mcprt auth login x`
// (the part after ';' is OAuthClientOptions::login_hint), which the transport returns as
// the request's error and the manager turns into the server's needs-auth phase. Its data
// is {server, status}: status 403 is a step-up (more scopes for one request: the server's
// connection stays up), 401 or 0 an authorization that is gone.
//
// KEYS AND STORAGE (CredentialStore; values are JSON): "oauth-server-<h>" per server URL
// (where its discovery led: resource, issuer; no secret) and "oauth-cred-<h>" per (issuer,
// resource) (the registration, the AS endpoints, the tokens, the scopes asked for);
// <h> = 16 hex digits of FNV-1a over the identifying strings, which the record repeats and
// which are checked on every read. Nothing else is stored; nothing is kept between calls
// but the last challenge per server.
//
// HOSTILE INPUT: every metadata, registration and token answer is bounded
// (max_response_bytes), parsed without exceptions (untrusted_json) and checked field by
// field; every URL from the wire must be http(s), https unless its host is loopback
// (localhost, 127.0.0.0/8, [::1]), without userinfo. Requests that carry a secret (token,
// registration) never follow redirects; metadata GETs (no credentials) may, and their
// final URL is checked the same way. Tokens, secrets, codes, verifiers and assertions never
// appear in a log line, an Error or a status: errors name the endpoint and the AS's
// `error` code (and a short, redacted error_description).
//
// Threading and lifetime: single-threaded on options.executor; every callback (TokenCallback,
// login/logout/status `done`) runs there, exactly once, never inside the call that started
// it. Destroying the client aborts its HTTP requests and authorizer flows and runs no
// callback afterwards. The executor, HttpClient, Crypto, CredentialStore, Authorizer,
// Logger and FileSystem must outlive the client.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/auth.hpp"
#include "mcprt/config.hpp"
#include "mcprt/platform/authorizer.hpp"
#include "mcprt/platform/credential_store.hpp"
#include "mcprt/platform/crypto.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/file_system.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/result.hpp"
#include "mcprt/version.hpp"

namespace mcprt {

// One server the client answers for: its name (AuthRequest::server_name), its configured
// URL (the protected resource) and its settings.
struct OAuthServer {
  std::string name;
  std::string url;
  // bearer: the host's own token (OAuthClientOptions::host_storage answers); oauth / none:
  // this client (an HTTP server without `auth` gets OAuth when it answers 401).
  AuthType auth = AuthType::none;
  OAuthConfig oauth;

  static OAuthServer from_config(const ServerConfig& config);
};

// What status() shows: never a token, a secret or a code.
struct OAuthStatus {
  std::string server;
  std::string url;
  bool known = false;          // the client has this server (set_server or a past request)
  bool has_credential = false; // something is stored for it
  std::string issuer;          // the authorization server ("" = not discovered yet)
  std::string resource;        // the resource the tokens are for
  std::string client_id;       // public by nature (a CIMD URL, a DCR id, the configured id)
  std::string client_source;   // "config", "metadata-document", "registration", "" = none
  OAuthConfig::Grant grant = OAuthConfig::Grant::authorization_code;
  bool has_access_token = false;
  bool has_refresh_token = false;
  std::optional<std::int64_t> expires_at_unix_ms;  // nullopt = the AS gave no lifetime
  bool expired = false;                            // by the wall clock now
  std::vector<std::string> scopes;                 // granted (else asked for)
};

struct OAuthClientOptions {
  Executor* executor = nullptr;           // required
  HttpClient* http = nullptr;             // required
  Crypto* crypto = nullptr;               // required
  CredentialStore* store = nullptr;       // required (MemoryCredentialStore for none)
  Authorizer* authorizer = nullptr;       // null = never interactive
  Logger* logger = nullptr;               // null = no logging
  FileSystem* file_system = nullptr;      // for oauth.privateKeyFile; null = not supported
  AuthStorage* host_storage = nullptr;    // answers for `auth: {type: "bearer"}` servers
  // Wall-clock now in Unix milliseconds (token expiry is persisted, so it is wall time).
  // Null = std::chrono::system_clock. Tests pass a manual clock.
  std::function<std::int64_t()> now_unix_ms;
  // False: a step that needs the user fails with ErrorCode::needs_auth (a background
  // reconnect, a non-interactive CLI run). login() is interactive regardless.
  bool interactive = true;
  // The fix a needs_auth message names, e.g. "run `mcprt auth login <server>`".
  std::function<std::string(const std::string& server)> login_hint;
  // The client's metadata document URL (CIMD), used when a server's config names none.
  std::string client_metadata_url;
  // Client metadata for registration (DCR) and the metadata document.
  std::string client_name = "mcprt";
  std::string client_uri;                 // optional
  std::string software_id = "mcprt";
  std::string software_version = MCPRT_VERSION;
  std::string application_type = "native";  // "web" for a browser host (SEP-837)
  // Refresh when the access token expires within this (clock skew, request latency).
  Millis refresh_skew{60000};
  Millis request_timeout{30000};          // each metadata, registration or token request
  Millis lock_wait{60000};                // the CredentialStore lock of a refresh
  Millis authorize_timeout{300000};       // the user step
  std::size_t max_response_bytes = 256 * 1024;
};

class OAuthClient final : public AuthStorage {
 public:
  explicit OAuthClient(OAuthClientOptions options);
  ~OAuthClient() override;
  OAuthClient(const OAuthClient&) = delete;
  OAuthClient& operator=(const OAuthClient&) = delete;

  // The servers this client answers for (replaces an entry of the same name). A request
  // for an unknown server uses the AuthRequest's name and URL and default settings.
  void set_server(OAuthServer server);
  void remove_server(const std::string& name);
  // Whether steps that need the user may run (see INTERACTIVE OR NOT).
  void set_interactive(bool interactive);

  // AuthStorage (auth.hpp). get_token never starts an authorization (the server's 401
  // brings the challenge it needs); refresh_token may.
  void get_token(const AuthRequest& request, TokenCallback done) override;
  void refresh_token(const AuthRequest& request, const std::string& rejected_token,
                     TokenCallback done) override;

  // A full user flow for `server` now (interactive whatever set_interactive says; needs an
  // Authorizer): discovery, registration if needed, authorization, tokens stored. Done
  // with ok, or the error (ErrorCode::invalid_argument for an unknown server or a
  // client_credentials server, which logs in by itself). Reuses the last challenge seen
  // for the server; without one, an unauthenticated GET of its URL asks for it.
  void login(const std::string& server, std::function<void(Status)> done);
  // Forgets the server's tokens (its registration stays, so a later login does not
  // register again). Ok when nothing was stored.
  void logout(const std::string& server, std::function<void(Status)> done);
  // What is stored for `server` (no network).
  void status(const std::string& server, std::function<void(Result<OAuthStatus>)> done);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

// The Authorizer the conformance suite expects of a client, and the tests' one: GETs the
// authorization URL itself (without following redirects, without credentials) and
// completes with the Location of the 3xx answer, resolved against the URL. Anything else
// (no redirect, a non-http(s) Location, a timeout) is an error naming the URL's origin.
// Callbacks run on the executor; destroying a flow aborts its request.
class RedirectFollowingAuthorizer final : public Authorizer {
 public:
  RedirectFollowingAuthorizer(Executor& executor, HttpClient& http,
                              std::string redirect_uri = "http://127.0.0.1:33418/callback");
  Result<std::unique_ptr<AuthorizeFlow>> begin(const AuthorizeFlowOptions& options) override;
  // How many flows were begun (tests).
  int flows_begun() const { return flows_begun_; }

 private:
  Executor& executor_;
  HttpClient& http_;
  std::string redirect_uri_;
  int flows_begun_ = 0;
};

}  // namespace mcprt
