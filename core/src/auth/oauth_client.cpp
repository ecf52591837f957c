// The OAuth client's state machine (mcprt/oauth.hpp). One Op per token request, login or
// logout; the Ops of one server run one at a time, in order, so a refresh that another Op
// already did is found in the store instead of being done twice. Each asynchronous step
// continues through cont(), which drops the continuation when the Op is gone.

#include <chrono>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "auth/oauth_fetch.hpp"
#include "auth/oauth_records.hpp"
#include "auth/oauth_wire.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/oauth.hpp"
#include "mcprt/url.hpp"

namespace mcprt {

using namespace detail::oauth;

namespace {

constexpr std::size_t kVerifierBytes = 32;  // 43 base64url characters (RFC 7636 §4.1)
constexpr std::size_t kStateBytes = 32;
constexpr std::int64_t kAssertionLifetimeS = 300;
constexpr int kMetadataRedirects = 3;
constexpr const char* kJwtBearerType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

std::string prefix_of(const std::string& name) { return "Server \"" + name + "\": "; }

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// The error fields of an OAuth error answer (RFC 6749 §5.2), for a message: "invalid_grant
// (the refresh token expired)"; "" when the body says nothing usable.
std::string oauth_error_of(std::string_view body) {
  auto doc = parse_object(body, "");
  if (!doc) return {};
  const auto code = doc->find("error");
  if (code == doc->end() || !code->is_string()) return {};
  std::string out = safe_text(code->get<std::string>(), 60);
  const auto desc = doc->find("error_description");
  if (desc != doc->end() && desc->is_string() && !desc->get_ref<const std::string&>().empty()) {
    out += " (" + safe_text(desc->get<std::string>(), 200) + ")";
  }
  return out;
}

std::string oauth_error_code_of(std::string_view body) {
  auto doc = parse_object(body, "");
  if (!doc) return {};
  const auto code = doc->find("error");
  return code != doc->end() && code->is_string() ? code->get<std::string>() : std::string();
}

// How the client authenticates at the token endpoint: what its registration says, else the
// best the AS lists for a client with (or without) a secret. RFC 8414's default list is
// client_secret_basic.
std::string choose_auth_method(const AuthServer& as, const ClientIdentity& client) {
  const bool secret = !client.client_secret.empty();
  const std::string& m = client.auth_method;
  if (m == "none" || ((m == "client_secret_basic" || m == "client_secret_post") && secret)) return m;
  if (!secret) return "none";
  const std::vector<std::string> supported =
      as.auth_methods_listed ? as.token_auth_methods : std::vector<std::string>{"client_secret_basic"};
  for (const char* preferred : {"client_secret_basic", "client_secret_post", "none"}) {
    if (contains(supported, preferred)) return preferred;
  }
  return "client_secret_basic";
}

// What a registration asks for: a public client when the AS allows one.
std::string registration_auth_method(const AuthServer& as) {
  if (!as.auth_methods_listed || contains(as.token_auth_methods, "none")) return "none";
  if (contains(as.token_auth_methods, "client_secret_basic")) return "client_secret_basic";
  if (contains(as.token_auth_methods, "client_secret_post")) return "client_secret_post";
  return "none";
}

std::int64_t system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

OAuthServer OAuthServer::from_config(const ServerConfig& config) {
  return OAuthServer{config.name, config.url, config.auth.type, config.oauth};
}

class OAuthOp;

struct OAuthClient::Impl : std::enable_shared_from_this<OAuthClient::Impl> {
  explicit Impl(OAuthClientOptions o) : options(std::move(o)) {
    if (!options.logger) options.logger = &null_logger;
    if (!options.now_unix_ms) options.now_unix_ms = system_now_ms;
    interactive = options.interactive;
  }

  OAuthClientOptions options;
  NullLogger null_logger;
  bool interactive = true;
  std::map<std::string, OAuthServer> servers;
  std::map<std::string, std::pair<int, std::string>> last_challenge;  // server → (status, header)
  // (A vector: a server's queue holds a few operations at most.)
  std::map<std::string, std::vector<std::shared_ptr<OAuthOp>>> queues;

  Executor& executor() const { return *options.executor; }
  Logger& log() const { return *options.logger; }
  std::int64_t now_ms() const { return options.now_unix_ms(); }

  OAuthServer server_for(const std::string& name, const std::string& url) const {
    auto it = servers.find(name);
    OAuthServer s = it != servers.end() ? it->second : OAuthServer{name, url, AuthType::none, {}};
    if (!url.empty()) s.url = url;
    return s;
  }

  void enqueue(std::shared_ptr<OAuthOp> op, const std::string& server);
  void completed(const std::string& server, const OAuthOp* op);
  void start_front(const std::string& server);
};

// --- One operation -----------------------------------------------------------------------

class OAuthOp : public std::enable_shared_from_this<OAuthOp> {
 public:
  enum class Kind { get, refresh, login, logout };

  OAuthOp(OAuthClient::Impl& impl, Kind kind, OAuthServer server)
      : impl_(impl), kind_(kind), server_(std::move(server)), prefix_(prefix_of(server_.name)) {}

  // The rejection a refresh answers.
  void set_rejection(int status, std::string challenge, std::string rejected) {
    status_ = status;
    challenge_header_ = std::move(challenge);
    challenge_ = parse_bearer_challenge(challenge_header_);
    rejected_ = std::move(rejected);
  }
  void on_token(TokenCallback done) { token_done_ = std::move(done); }
  void on_status(std::function<void(Status)> done) { status_done_ = std::move(done); }

  void start();

 private:
  // Runs `f` with the arguments of an async completion unless this Op finished or died.
  template <class F>
  auto cont(F f) {
    return [weak = weak_from_this(), f = std::move(f)](auto&&... args) mutable {
      auto self = weak.lock();
      if (self && !self->finished_) f(std::forward<decltype(args)>(args)...);
    };
  }

  // Steps.
  void start_get();
  void start_refresh();
  void start_login();
  void start_logout();
  void after_discovery();
  void ensure_auth_server(std::function<void()> next);
  void fetch_auth_server_metadata(std::vector<std::string> urls, std::size_t i,
                                  std::function<void()> next);
  void discover(std::function<void()> next);
  void fetch_prm(std::vector<std::string> urls, std::size_t i, std::function<void()> next);
  void read_credential(const std::string& issuer, const std::string& resource,
                       std::function<void()> next);
  void remember_scopes(std::vector<std::string> scopes, std::function<void()> next);
  void refresh_transaction(std::string known_token,
                           std::function<void(int outcome, Error error)> next);
  void authorize(std::vector<std::string> scopes, std::string reason);
  void identify_client(std::function<void(ClientIdentity)> next);
  void register_client(std::function<void(ClientIdentity)> next);
  void send_authorization(ClientIdentity client, std::vector<std::string> scopes);
  void redeem_code(ClientIdentity client, std::vector<std::string> scopes, std::string verifier,
                   std::string state, std::string redirect);
  void client_credentials(std::vector<std::string> scopes);
  void token_request(Params params, const ClientIdentity& client,
                     std::function<void(Result<TokenSet>)> next);
  void send_token_request(Params params, HttpHeaders headers,
                          std::function<void(Result<TokenSet>)> next);
  void private_key_assertion(const ClientIdentity& client,
                             std::function<void(Result<std::string>)> next);
  void save(TokenSet tokens, ClientIdentity client, std::vector<std::string> scopes);
  void get_json(const std::string& url, std::function<void(Result<FetchResponse>)> next);

  // Helpers.
  std::vector<std::string> choose_scopes() const;
  bool may_ask_user() const;
  Error needs_auth(const std::string& reason) const;
  Error named(Error e) const;
  bool expiring(const TokenSet& t) const;
  bool expired(const TokenSet& t) const;
  const std::string& redirect_uri() const { return redirect_uri_; }

  // Ending.
  void finish_token(Result<std::optional<std::string>> result);
  void give(const std::string& token) { finish_token(std::optional<std::string>(token)); }
  void finish_status(Status status);
  void fail(Error e);
  void release();

  OAuthClient::Impl& impl_;
  Kind kind_;
  OAuthServer server_;
  std::string prefix_;
  int status_ = 0;
  std::string challenge_header_;
  BearerChallenge challenge_;
  std::string rejected_;
  TokenCallback token_done_;
  std::function<void(Status)> status_done_;
  bool finished_ = false;

  Url server_url_;
  std::unique_ptr<Fetch> fetch_;
  std::unique_ptr<AuthorizeFlow> flow_;
  std::string redirect_uri_;  // the flow's, kept for the token request after it ended
  std::unique_ptr<CredentialLock> lock_;

  // What discovery found.
  bool have_prm_ = false;
  ResourceMetadata prm_;
  std::string prm_url_;
  std::string resource_;  // sent as `resource` (the PRM's, else the server's URL)
  std::string issuer_;
  std::optional<AuthServer> as_;
  // The stored credential for (issuer_, resource_), or a fresh one.
  CredentialRecord cred_;
  bool have_cred_ = false;
  std::optional<ServerRecord> record_;
};

void OAuthOp::start() {
  auto url = parse_http_url(server_.url);
  if (!url) {
    fail(Error::make(ErrorCode::invalid_config,
                     prefix_ + "OAuth needs the server's http(s) URL (got none that parses)"));
    return;
  }
  server_url_ = *url;
  switch (kind_) {
    case Kind::get: return start_get();
    case Kind::refresh: return start_refresh();
    case Kind::login: return start_login();
    case Kind::logout: return start_logout();
  }
}

// --- get_token: what is stored, refreshed ahead of its expiry ----------------------------

void OAuthOp::start_get() {
  const std::string url = server_url_.to_string();
  impl_.options.store->get(server_key(url), cont([this, url](Result<std::optional<std::string>> r) {
    if (!r) {
      fail(named(Error::make(r.error().code, "reading the OAuth credentials failed: " +
                                                 r.error().message)));
      return;
    }
    if (!r.value()) return finish_token(std::optional<std::string>());
    record_ = ServerRecord::from_text(*r.value(), url);
    if (!record_) return finish_token(std::optional<std::string>());
    resource_ = record_->resource;
    issuer_ = record_->issuer;
    read_credential(issuer_, resource_, [this] {
      const TokenSet& t = cred_.tokens;
      if (t.access_token.empty()) return finish_token(std::optional<std::string>());
      if (!expiring(t)) return give(t.access_token);
      if (t.refresh_token.empty()) {
        return finish_token(expired(t) ? std::optional<std::string>() : t.access_token);
      }
      refresh_transaction(t.access_token, [this](int outcome, Error error) {
        if (outcome == 0) return give(cred_.tokens.access_token);
        if (outcome == 2) {
          impl_.log().warn(prefix_ + "refreshing the OAuth token failed: " + error.message);
        }
        // Refused (1) or unreachable (2): the server's 401 will bring the challenge a new
        // authorization needs; a token that has not expired yet may still work.
        const TokenSet& now = cred_.tokens;
        finish_token(!now.access_token.empty() && !expired(now)
                         ? std::optional<std::string>(now.access_token)
                         : std::optional<std::string>());
      });
    });
  }));
}

// --- refresh_token: the server refused --------------------------------------------------

void OAuthOp::start_refresh() {
  if (status_ == 403 && challenge_.error != "insufficient_scope") {
    // Forbidden for another reason: no token OAuth could get changes that. The transport
    // retries once with the same token and reports the server's answer.
    return finish_token(rejected_.empty() ? std::optional<std::string>() : rejected_);
  }
  if (!challenge_header_.empty()) impl_.last_challenge[server_.name] = {status_, challenge_header_};
  discover([this] { after_discovery(); });
}

void OAuthOp::after_discovery() {
  const TokenSet& t = cred_.tokens;
  const bool step_up = status_ == 403;
  // Another request (or process) already replaced the rejected token: use the new one.
  if (!t.access_token.empty() && t.access_token != rejected_ && !expiring(t)) {
    return give(t.access_token);
  }
  std::vector<std::string> scopes = choose_scopes();
  if (step_up) {
    scopes = scope_union(scope_union(cred_.requested_scopes, split_scopes(t.scope)),
                         split_scopes(challenge_.scope));
  }
  if (server_.oauth.grant == OAuthConfig::Grant::client_credentials) {
    return ensure_auth_server([this, scopes] { client_credentials(scopes); });
  }
  if (step_up) {
    std::string reason = "it asks for more scopes: " + safe_text(challenge_.scope, 200);
    if (may_ask_user() || !have_cred_) return authorize(scopes, std::move(reason));
    // No one to ask now: the sign-in this answer points to (`mcprt auth login`, maybe in
    // another process, which sees no 403) must ask for the union.
    return remember_scopes(scopes, [this, scopes, reason = std::move(reason)]() mutable {
      authorize(std::move(scopes), std::move(reason));
    });
  }
  if (t.refresh_token.empty()) {
    return authorize(scopes, t.access_token.empty()
                                 ? "no authorization is stored for it"
                                 : "the stored access token was refused and there is no refresh token");
  }
  ensure_auth_server([this, scopes] {
    refresh_transaction(rejected_, [this, scopes](int outcome, Error error) {
      if (outcome == 0) return give(cred_.tokens.access_token);
      if (outcome == 2) return fail(std::move(error));
      authorize(scopes, "the authorization server refused the stored refresh token");
    });
  });
}

// --- login / logout ------------------------------------------------------------------------

void OAuthOp::start_login() {
  if (server_.oauth.grant == OAuthConfig::Grant::client_credentials) {
    return fail(Error::make(ErrorCode::invalid_argument,
                            prefix_ + "uses the client_credentials grant: it gets its tokens "
                                      "without a sign-in"));
  }
  if (!impl_.options.authorizer) {
    return fail(Error::make(ErrorCode::invalid_argument,
                            prefix_ + "cannot sign in: this host has no way to show an "
                                      "authorization page (no Authorizer)"));
  }
  auto go = [this] {
    // What was asked for before (a step-up's union survives a sign-out) and the challenge.
    discover([this] {
      authorize(scope_union(cred_.requested_scopes, choose_scopes()), "a sign-in was asked for");
    });
  };
  if (auto it = impl_.last_challenge.find(server_.name); it != impl_.last_challenge.end()) {
    status_ = it->second.first;
    challenge_header_ = it->second.second;
    challenge_ = parse_bearer_challenge(challenge_header_);
    return go();
  }
  // No challenge seen yet: ask the server for one (an unauthenticated GET; a server that
  // does not send one is discovered through the well-known locations instead).
  HttpRequest request;
  request.method = "GET";
  request.url = server_url_.to_string();
  request.headers.add("Accept", "application/json, text/event-stream");
  request.timeout_ms = impl_.options.request_timeout.count();
  fetch_ = Fetch::start(impl_.executor(), *impl_.options.http, std::move(request), 16 * 1024,
                        cont([this, go](Result<FetchResponse> r) {
                          if (r && r->status == 401) {
                            std::string header;
                            for (const HttpHeader& h : r->headers) {
                              if (!iequals(h.name, "WWW-Authenticate")) continue;
                              if (!header.empty()) header += ", ";
                              header += h.value;
                            }
                            status_ = 401;
                            challenge_header_ = header;
                            challenge_ = parse_bearer_challenge(header);
                          }
                          go();
                        }));
}

void OAuthOp::start_logout() {
  const std::string url = server_url_.to_string();
  impl_.last_challenge.erase(server_.name);
  impl_.options.store->get(server_key(url), cont([this, url](Result<std::optional<std::string>> r) {
    if (!r) return fail(named(std::move(r).error()));
    if (!r.value()) return finish_status({});
    record_ = ServerRecord::from_text(*r.value(), url);
    if (!record_) return finish_status({});
    read_credential(record_->issuer, record_->resource, [this] {
      if (!have_cred_) return finish_status({});
      cred_.tokens = TokenSet{};
      impl_.options.store->put(credential_key(cred_.issuer, cred_.resource), cred_.to_text(),
                               cont([this](Status s) {
                                 if (!s) return fail(named(std::move(s).error()));
                                 impl_.log().info(prefix_ + "signed out (OAuth tokens removed)");
                                 finish_status({});
                               }));
    });
  }));
}

// --- Discovery -----------------------------------------------------------------------------

void OAuthOp::discover(std::function<void()> next) {
  std::vector<std::string> urls;
  if (!challenge_.resource_metadata.empty()) {
    auto url = check_wire_url(challenge_.resource_metadata, "the resource_metadata URL of the challenge");
    if (!url) return fail(named(std::move(url).error()));
    urls.push_back(url->to_string());
  }
  for (std::string& u : prm_well_known_urls(server_url_)) {
    if (!contains(urls, u)) urls.push_back(std::move(u));
  }
  fetch_prm(std::move(urls), 0, std::move(next));
}

void OAuthOp::get_json(const std::string& url, std::function<void(Result<FetchResponse>)> next) {
  HttpRequest request;
  request.method = "GET";
  request.url = url;
  request.headers.add("Accept", "application/json");
  request.timeout_ms = impl_.options.request_timeout.count();
  // Metadata carries no credentials, so the platform may follow redirects; where they end is
  // checked like any URL from the wire.
  request.follow_redirects = true;
  request.max_redirects = kMetadataRedirects;
  fetch_ = Fetch::start(impl_.executor(), *impl_.options.http, std::move(request),
                        impl_.options.max_response_bytes,
                        cont([next = std::move(next)](Result<FetchResponse> r) mutable {
                          if (r && !r->final_url.empty()) {
                            auto final_url = check_wire_url(r->final_url, "a redirected metadata URL");
                            if (!final_url) return next(std::move(final_url).error());
                          }
                          next(std::move(r));
                        }));
}

void OAuthOp::fetch_prm(std::vector<std::string> urls, std::size_t i, std::function<void()> next) {
  if (i >= urls.size()) {
    // No Protected Resource Metadata (a 2025-03-26 server): its own origin is the
    // authorization server.
    have_prm_ = false;
    resource_ = server_url_.to_string();
    issuer_ = server_url_.origin();
    impl_.log().debug(prefix_ + "no protected resource metadata; using " + issuer_ +
                      " as the authorization server (2025-03-26)");
    return read_credential(issuer_, resource_, [this, next = std::move(next)]() mutable {
      ensure_auth_server(std::move(next));
    });
  }
  const std::string url = urls[i];
  get_json(url, cont([this, urls = std::move(urls), i, url, next = std::move(next)](
                         Result<FetchResponse> r) mutable {
    if (!r || r->status < 200 || r->status >= 300) {
      if (!r) impl_.log().debug(prefix_ + "protected resource metadata: " + r.error().message);
      return fetch_prm(std::move(urls), i + 1, std::move(next));
    }
    const std::string where = "the protected resource metadata at " + url;
    auto doc = parse_object(r->body, where);
    if (!doc) return fail(named(std::move(doc).error()));
    auto prm = read_resource_metadata(*doc, where);
    if (!prm) return fail(named(std::move(prm).error()));
    auto resource = parse_http_url(prm->resource);
    if (!resource || !resource_covers(*resource, server_url_)) {
      return fail(named(Error::make(
          ErrorCode::protocol, where + " is for the resource \"" + safe_text(prm->resource, 200) +
                                   "\", not for " + server_url_.to_string() +
                                   " (resource mismatch): refusing to authorize")));
    }
    auto issuer = check_wire_url(prm->authorization_servers.front(), where + ": its authorization server");
    if (!issuer) return fail(named(std::move(issuer).error()));
    have_prm_ = true;
    prm_ = std::move(prm).value();
    prm_url_ = url;
    resource_ = prm_.resource;
    issuer_ = prm_.authorization_servers.front();
    read_credential(issuer_, resource_, [this, next = std::move(next)]() mutable {
      ensure_auth_server(std::move(next));
    });
  }));
}

void OAuthOp::read_credential(const std::string& issuer, const std::string& resource,
                              std::function<void()> next) {
  impl_.options.store->get(
      credential_key(issuer, resource),
      cont([this, issuer, resource, next = std::move(next)](Result<std::optional<std::string>> r) {
        if (!r) {
          return fail(named(Error::make(r.error().code, "reading the OAuth credentials failed: " +
                                                            r.error().message)));
        }
        std::optional<CredentialRecord> rec;
        if (r.value()) rec = CredentialRecord::from_text(*r.value(), issuer, resource);
        have_cred_ = rec.has_value();
        cred_ = rec ? std::move(*rec) : CredentialRecord{};
        cred_.issuer = issuer;
        cred_.resource = resource;
        // A registration made with another client id than the one configured now is not
        // this client's.
        if (cred_.client.source == "config") {
          if (cred_.client.client_id != server_.oauth.client_id) {
            cred_.client = {};
            cred_.tokens = {};
          } else {
            cred_.client.client_secret = server_.oauth.client_secret;  // never stored
          }
        }
        next();
      }));
}

void OAuthOp::ensure_auth_server(std::function<void()> next) {
  if (as_ && same_issuer(as_->issuer, issuer_)) return next();
  if (cred_.server && cred_.server->issuer.size() && same_issuer(cred_.server->issuer, issuer_)) {
    as_ = cred_.server;
    return next();
  }
  auto issuer = parse_http_url(issuer_);
  if (!issuer) {
    return fail(named(Error::make(ErrorCode::protocol, "the authorization server \"" +
                                                           safe_text(issuer_, 120) +
                                                           "\" is not a URL")));
  }
  fetch_auth_server_metadata(as_metadata_urls(*issuer), 0, std::move(next));
}

void OAuthOp::fetch_auth_server_metadata(std::vector<std::string> urls, std::size_t i,
                                         std::function<void()> next) {
  if (i >= urls.size()) {
    if (!have_prm_) {
      // 2025-03-26: no metadata either; the default endpoints at the server's origin.
      as_ = default_endpoints(server_url_);
      impl_.log().debug(prefix_ + "no authorization server metadata at " + issuer_ +
                        "; using its /authorize, /token and /register (2025-03-26)");
      return next();
    }
    return fail(named(Error::make(ErrorCode::protocol,
                                  "the authorization server " + issuer_ +
                                      " publishes no metadata (tried " + urls.front() + " and " +
                                      std::to_string(urls.size() - 1) + " more)")));
  }
  const std::string url = urls[i];
  get_json(url, cont([this, urls = std::move(urls), i, url, next = std::move(next)](
                         Result<FetchResponse> r) mutable {
    if (!r || r->status < 200 || r->status >= 300) {
      return fetch_auth_server_metadata(std::move(urls), i + 1, std::move(next));
    }
    const std::string where = "the authorization server metadata at " + url;
    auto doc = parse_object(r->body, where);
    if (!doc) return fail(named(std::move(doc).error()));
    // Without PRM (2025-03-26) nothing named an issuer: the metadata at the server's own
    // origin says which it is (the suite's own serves "<origin>/oauth").
    std::string expected = issuer_;
    if (!have_prm_) {
      if (auto claimed = doc->find("issuer"); claimed != doc->end() && claimed->is_string()) {
        expected = claimed->get<std::string>();
      }
    }
    auto as = read_auth_server_metadata(*doc, expected, where);
    if (!as) return fail(named(std::move(as).error()));
    as_ = std::move(as).value();
    next();
  }));
}

// --- Scopes to ask for next time ---------------------------------------------------------

// Adds `scopes` to the stored credential's requested scopes, under its lock and on the
// record as it is now (another process may have rotated its tokens meanwhile), then runs
// `next` whatever happened: remembering is a courtesy to the next sign-in.
void OAuthOp::remember_scopes(std::vector<std::string> scopes, std::function<void()> next) {
  const std::string key = credential_key(issuer_, resource_);
  impl_.options.store->lock(
      key, impl_.options.lock_wait,
      cont([this, key, scopes = std::move(scopes), next = std::move(next)](
               Result<std::unique_ptr<CredentialLock>> locked) mutable {
        if (!locked) return next();
        lock_ = std::move(locked).value();
        impl_.options.store->get(key, cont([this, key, scopes = std::move(scopes),
                                            next = std::move(next)](
                                               Result<std::optional<std::string>> r) mutable {
          std::optional<CredentialRecord> fresh;
          if (r && r.value()) fresh = CredentialRecord::from_text(*r.value(), issuer_, resource_);
          if (!fresh) {
            lock_.reset();
            return next();
          }
          fresh->requested_scopes = scope_union(fresh->requested_scopes, scopes);
          cred_ = std::move(*fresh);
          impl_.options.store->put(key, cred_.to_text(), cont([this, next = std::move(next)](Status s) mutable {
            if (!s) {
              impl_.log().warn(prefix_ + "could not store the scopes it asks for: " + s.error().message);
            }
            lock_.reset();
            next();
          }));
        }));
      }));
}

// --- The refresh transaction ------------------------------------------------------------

// outcome 0: cred_.tokens holds a usable token (refreshed now, or by someone else);
//         1: the AS refused the refresh token (it is dropped); 2: no answer (error).
void OAuthOp::refresh_transaction(std::string known_token,
                                  std::function<void(int outcome, Error error)> next) {
  const std::string key = credential_key(issuer_, resource_);
  impl_.options.store->lock(
      key, impl_.options.lock_wait,
      cont([this, key, known_token, next = std::move(next)](
               Result<std::unique_ptr<CredentialLock>> locked) mutable {
        if (!locked) {
          return next(2, named(Error::make(locked.error().code,
                                           "the credential stayed locked by another refresh: " +
                                               locked.error().message)));
        }
        lock_ = std::move(locked).value();
        // Read it again under the lock: another process may have refreshed meanwhile.
        impl_.options.store->get(key, cont([this, key, known_token, next = std::move(next)](
                                               Result<std::optional<std::string>> r) mutable {
          if (r && r.value()) {
            if (auto fresh = CredentialRecord::from_text(*r.value(), issuer_, resource_)) {
              const TokenSet& t = fresh->tokens;
              if (!t.access_token.empty() && t.access_token != known_token && !expiring(t)) {
                cred_ = std::move(*fresh);
                lock_.reset();
                impl_.log().debug(prefix_ + "the OAuth token was already refreshed elsewhere");
                return next(0, Error{});
              }
              cred_.tokens = fresh->tokens;  // the newest refresh token
            }
          }
          if (cred_.tokens.refresh_token.empty()) {
            lock_.reset();
            return next(1, Error{});
          }
          auto refresh_with = [this, key, next = std::move(next)]() mutable {
            const ClientIdentity client = cred_.client;
            Params params{{"grant_type", "refresh_token"},
                          {"refresh_token", cred_.tokens.refresh_token}};
            token_request(std::move(params), client,
                          [this, key, next = std::move(next)](Result<TokenSet> tokens) mutable {
              if (!tokens) {
                const bool refused = tokens.error().data.is_object() &&
                                     tokens.error().data.value("refused", false);
                if (!refused) {
                  lock_.reset();
                  return next(2, std::move(tokens).error());
                }
                impl_.log().info(prefix_ + "the authorization server refused the refresh token: " +
                                 tokens.error().message);
                cred_.tokens = TokenSet{};
                impl_.options.store->put(key, cred_.to_text(),
                                         cont([this, next = std::move(next)](Status) mutable {
                                           lock_.reset();
                                           next(1, Error{});
                                         }));
                return;
              }
              TokenSet t = std::move(tokens).value();
              if (t.refresh_token.empty()) t.refresh_token = cred_.tokens.refresh_token;
              if (t.scope.empty()) t.scope = cred_.tokens.scope;
              cred_.tokens = std::move(t);
              // Persist (a rotated refresh token above all) before the new access token is
              // handed out; only then release the lock.
              impl_.options.store->put(key, cred_.to_text(),
                                       cont([this, next = std::move(next)](Status s) mutable {
                                         if (!s) {
                                           impl_.log().warn(prefix_ + "could not store the refreshed "
                                                                      "OAuth token: " +
                                                            s.error().message);
                                         }
                                         lock_.reset();
                                         impl_.log().debug(prefix_ + "refreshed the OAuth token");
                                         next(0, Error{});
                                       }));
            });
          };
          if (as_) return refresh_with();
          ensure_auth_server(std::move(refresh_with));
        }));
      }));
}

// --- Authorization code flow --------------------------------------------------------------

bool OAuthOp::may_ask_user() const {
  return impl_.options.authorizer && (kind_ == Kind::login || impl_.interactive);
}

void OAuthOp::authorize(std::vector<std::string> scopes, std::string reason) {
  if (!may_ask_user()) return fail(needs_auth(reason));
  ensure_auth_server([this, scopes = std::move(scopes)]() mutable {
    const AuthServer& as = *as_;
    if (as.authorization_endpoint.empty()) {
      return fail(named(Error::make(ErrorCode::protocol,
                                    "the authorization server " + issuer_ +
                                        " has no authorization_endpoint")));
    }
    if (as.from_metadata && !contains(as.code_challenge_methods, "S256")) {
      return fail(named(Error::make(
          ErrorCode::protocol,
          "the authorization server " + issuer_ +
              (as.challenge_methods_listed ? " does not list S256 in code_challenge_methods_supported"
                                           : " does not advertise PKCE (code_challenge_methods_supported)") +
              "; mcprt authorizes only with PKCE S256")));
    }
    AuthorizeFlowOptions fo;
    fo.server_name = server_.name;
    fo.callback_port = server_.oauth.callback_port;
    fo.timeout = impl_.options.authorize_timeout;
    auto flow = impl_.options.authorizer->begin(fo);
    if (!flow) {
      return fail(Error::make(ErrorCode::needs_auth,
                              prefix_ + "cannot start the sign-in: " + flow.error().message));
    }
    flow_ = std::move(flow).value();
    redirect_uri_ = flow_->redirect_uri();
    identify_client([this, scopes = std::move(scopes)](ClientIdentity client) mutable {
      send_authorization(std::move(client), std::move(scopes));
    });
  });
}

void OAuthOp::identify_client(std::function<void(ClientIdentity)> next) {
  const AuthServer& as = *as_;
  if (!server_.oauth.client_id.empty()) {
    ClientIdentity c;
    c.client_id = server_.oauth.client_id;
    c.client_secret = server_.oauth.client_secret;
    c.source = "config";
    c.auth_method = choose_auth_method(as, c);
    return next(std::move(c));
  }
  const std::string cimd = !server_.oauth.client_metadata_url.empty()
                               ? server_.oauth.client_metadata_url
                               : impl_.options.client_metadata_url;
  if (as.cimd_supported && !cimd.empty()) {
    ClientIdentity c;
    c.client_id = cimd;
    c.source = "metadata-document";
    c.auth_method = "none";
    return next(std::move(c));
  }
  const ClientIdentity& stored = cred_.client;
  if (stored.source == "registration" && !stored.client_id.empty() &&
      stored.redirect_uri == redirect_uri()) {
    ClientIdentity c = stored;
    c.auth_method = choose_auth_method(as, c);
    return next(std::move(c));
  }
  if (!as.registration_endpoint.empty()) return register_client(std::move(next));
  std::string what = "offers neither dynamic client registration nor client ID metadata documents";
  if (as.cimd_supported) what = "supports client ID metadata documents but none is configured";
  fail(named(Error::make(
      ErrorCode::invalid_config,
      "the authorization server " + issuer_ + " " + what + "; register mcprt there (redirect URI " +
          redirect_uri() + ") and set \"oauth\": {\"clientId\": \"...\"} (with \"clientSecret\" "
          "for a confidential client) in this server's config" +
          (as.cimd_supported ? ", or \"oauth\": {\"clientMetadataUrl\": \"https://...\"}" : ""))));
}

void OAuthOp::register_client(std::function<void(ClientIdentity)> next) {
  const AuthServer& as = *as_;
  const std::string method = registration_auth_method(as);
  json body = json_object({{"client_name", impl_.options.client_name},
               {"redirect_uris", json::array({redirect_uri()})},
               {"grant_types", json::array({"authorization_code", "refresh_token"})},
               {"response_types", json::array({"code"})},
               {"token_endpoint_auth_method", method},
               {"application_type", impl_.options.application_type}});
  if (!impl_.options.software_id.empty()) body["software_id"] = impl_.options.software_id;
  if (!impl_.options.software_version.empty()) body["software_version"] = impl_.options.software_version;
  if (!impl_.options.client_uri.empty()) body["client_uri"] = impl_.options.client_uri;

  HttpRequest request;
  request.method = "POST";
  request.url = as.registration_endpoint;
  request.headers.add("Content-Type", "application/json");
  request.headers.add("Accept", "application/json");
  request.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  request.timeout_ms = impl_.options.request_timeout.count();
  const std::string where = "the client registration at " + as.registration_endpoint;
  fetch_ = Fetch::start(
      impl_.executor(), *impl_.options.http, std::move(request), impl_.options.max_response_bytes,
      cont([this, where, method, next = std::move(next)](Result<FetchResponse> r) mutable {
        if (!r) return fail(named(Error::make(r.error().code, where + " failed: " + r.error().message)));
        if (r->status < 200 || r->status >= 300) {
          std::string why = oauth_error_of(r->body);
          return fail(named(Error::make(
              ErrorCode::protocol, where + " was refused (HTTP " + std::to_string(r->status) +
                                       (why.empty() ? std::string() : ": " + why) + ")")));
        }
        auto doc = parse_object(r->body, where);
        if (!doc) return fail(named(std::move(doc).error()));
        const auto id = doc->find("client_id");
        if (id == doc->end() || !id->is_string() || id->get_ref<const std::string&>().empty() ||
            id->get_ref<const std::string&>().size() > 4096) {
          return fail(named(Error::make(ErrorCode::protocol, where + " answered without a client_id")));
        }
        ClientIdentity c;
        c.client_id = id->get<std::string>();
        const auto secret = doc->find("client_secret");
        if (secret != doc->end() && secret->is_string() &&
            secret->get_ref<const std::string&>().size() <= 4096) {
          c.client_secret = secret->get<std::string>();
        }
        const auto m = doc->find("token_endpoint_auth_method");
        c.auth_method = m != doc->end() && m->is_string() ? m->get<std::string>() : std::string();
        c.auth_method = choose_auth_method(*as_, c);
        c.source = "registration";
        c.redirect_uri = redirect_uri();
        impl_.log().info(prefix_ + "registered mcprt with the authorization server " + issuer_);
        // Kept at once: a flow that fails later need not register again.
        cred_.client = c;
        cred_.server = as_;
        impl_.options.store->put(credential_key(issuer_, resource_), cred_.to_text(),
                                 cont([this, c, next = std::move(next)](Status s) mutable {
                                   if (!s) {
                                     impl_.log().warn(prefix_ + "could not store the client "
                                                                "registration: " +
                                                      s.error().message);
                                   }
                                   next(std::move(c));
                                 }));
      }));
}

void OAuthOp::send_authorization(ClientIdentity client, std::vector<std::string> scopes) {
  auto verifier_bytes = impl_.options.crypto->random_bytes(kVerifierBytes);
  auto state_bytes = impl_.options.crypto->random_bytes(kStateBytes);
  if (!verifier_bytes || !state_bytes) {
    return fail(named(Error::make(ErrorCode::internal, "no random bytes for PKCE: " +
                                                           (verifier_bytes ? state_bytes.error()
                                                                           : verifier_bytes.error())
                                                               .message)));
  }
  std::string verifier = base64url(*verifier_bytes);
  std::string state = base64url(*state_bytes);
  impl_.options.crypto->sha256(
      verifier, cont([this, client = std::move(client), scopes = std::move(scopes), verifier,
                      state](Result<std::string> digest) mutable {
        if (!digest || digest->size() != 32) {
          return fail(named(Error::make(ErrorCode::internal,
                                        "SHA-256 for PKCE failed" +
                                            (digest ? std::string() : ": " + digest.error().message))));
        }
        auto endpoint = parse_http_url(as_->authorization_endpoint);
        if (!endpoint) {
          return fail(named(Error::make(ErrorCode::protocol, "the authorization endpoint is not a URL")));
        }
        Params params{{"response_type", "code"},
                      {"client_id", client.client_id},
                      {"redirect_uri", redirect_uri()},
                      {"code_challenge", base64url(*digest)},
                      {"code_challenge_method", "S256"},
                      {"state", state}};
        if (!scopes.empty()) params.emplace_back("scope", join_scopes(scopes));
        if (!resource_.empty()) params.emplace_back("resource", resource_);
        const std::string url = append_query(*endpoint, params);
        impl_.log().info(prefix_ + "asking for an OAuth authorization at " + endpoint->origin());
        flow_->authorize(url, cont([this, client = std::move(client), scopes = std::move(scopes),
                                    verifier = std::move(verifier),
                                    state = std::move(state)](Result<std::string> redirect) mutable {
          flow_.reset();  // the listener (popup, follower) is done
          if (!redirect) {
            return fail(Error::make(ErrorCode::needs_auth,
                                    prefix_ + "the sign-in did not complete: " +
                                        redirect.error().message));
          }
          redeem_code(std::move(client), std::move(scopes), std::move(verifier), std::move(state),
                      std::move(redirect).value());
        }));
      }));
}

void OAuthOp::redeem_code(ClientIdentity client, std::vector<std::string> scopes,
                          std::string verifier, std::string state, std::string redirect) {
  auto url = parse_http_url(redirect);
  if (!url) {
    return fail(named(Error::make(ErrorCode::protocol, "the authorization redirect is not a URL")));
  }
  const Params params = parse_query(url->query);
  const auto states = values_of(params, "state");
  if (states.size() != 1 || states.front() != state) {
    return fail(named(Error::make(ErrorCode::protocol,
                                  "the authorization response carries " +
                                      std::string(states.empty() ? "no state"
                                                  : states.size() > 1 ? "several states"
                                                                      : "another state") +
                                      " than the request (refused: it may be forged)")));
  }
  if (const auto errors = values_of(params, "error"); !errors.empty()) {
    std::string why = safe_text(errors.front(), 60);
    if (const auto d = values_of(params, "error_description"); !d.empty() && !d.front().empty()) {
      why += " (" + safe_text(d.front(), 200) + ")";
    }
    return fail(Error::make(ErrorCode::needs_auth,
                            prefix_ + "the authorization server did not authorize mcprt: " + why));
  }
  // RFC 9207: the response names the issuer it came from; plain string comparison.
  const auto iss = values_of(params, "iss");
  if (iss.size() > 1) {
    return fail(named(Error::make(ErrorCode::protocol,
                                  "the authorization response carries several iss values (refused)")));
  }
  if (iss.empty() && as_->iss_supported) {
    return fail(named(Error::make(
        ErrorCode::protocol, "the authorization response has no iss although " + as_->issuer +
                                 " advertises it (RFC 9207; refused: it may come from another "
                                 "authorization server)")));
  }
  if (!iss.empty() && iss.front() != as_->issuer) {
    return fail(named(Error::make(
        ErrorCode::protocol, "the authorization response comes from the issuer \"" +
                                 safe_text(iss.front(), 120) + "\", not " + as_->issuer +
                                 " (RFC 9207 mix-up defence: refused)")));
  }
  const auto codes = values_of(params, "code");
  if (codes.size() != 1 || codes.front().empty()) {
    return fail(named(Error::make(ErrorCode::protocol,
                                  "the authorization response has " +
                                      std::string(codes.size() > 1 ? "several codes" : "no code"))));
  }
  // The redirect URI of the authorization request, as sent there (RFC 6749 §4.1.3).
  Params token_params{{"grant_type", "authorization_code"},
                      {"code", codes.front()},
                      {"redirect_uri", redirect_uri_},
                      {"code_verifier", verifier}};
  token_request(std::move(token_params), client,
                [this, client, scopes = std::move(scopes)](Result<TokenSet> tokens) mutable {
                  if (!tokens) return fail(std::move(tokens).error());
                  save(std::move(tokens).value(), std::move(client), std::move(scopes));
                });
}

// --- Client credentials --------------------------------------------------------------------

void OAuthOp::client_credentials(std::vector<std::string> scopes) {
  ClientIdentity client;
  client.client_id = server_.oauth.client_id;
  client.client_secret = server_.oauth.client_secret;
  client.source = "config";
  const bool key = !server_.oauth.private_key.empty() || !server_.oauth.private_key_file.empty();
  client.auth_method = key ? "private_key_jwt" : choose_auth_method(*as_, client);
  if (client.client_id.empty() || (client.client_secret.empty() && !key)) {
    return fail(named(Error::make(ErrorCode::invalid_config,
                                  "the client_credentials grant needs \"oauth\": {\"clientId\", "
                                  "and \"clientSecret\" or \"privateKey\"/\"privateKeyFile\"}")));
  }
  Params params{{"grant_type", "client_credentials"}};
  if (!scopes.empty()) params.emplace_back("scope", join_scopes(scopes));
  token_request(std::move(params), client,
                [this, client, scopes](Result<TokenSet> tokens) mutable {
                  if (!tokens) return fail(std::move(tokens).error());
                  save(std::move(tokens).value(), std::move(client), std::move(scopes));
                });
}

void OAuthOp::private_key_assertion(const ClientIdentity& client,
                                    std::function<void(Result<std::string>)> next) {
  std::string pem = server_.oauth.private_key;
  if (pem.empty()) {
    if (!impl_.options.file_system) {
      return next(Error::make(ErrorCode::invalid_config,
                              "\"privateKeyFile\" cannot be read on this platform; use \"privateKey\""));
    }
    auto text = impl_.options.file_system->read_file(server_.oauth.private_key_file);
    if (!text) return next(std::move(text).error());
    if (!text.value()) {
      return next(Error::make(ErrorCode::invalid_config, "the private key file " +
                                                             server_.oauth.private_key_file +
                                                             " does not exist"));
    }
    pem = std::move(*text.value());
  }
  const std::string alg = server_.oauth.signing_alg.empty() ? "RS256" : server_.oauth.signing_alg;
  auto jti = impl_.options.crypto->random_bytes(16);
  if (!jti) return next(std::move(jti).error());
  const std::int64_t now_s = impl_.now_ms() / 1000;
  const json header = json_object({{"alg", alg}, {"typ", "JWT"}});
  const json claims = json_object({{"iss", client.client_id},
                       {"sub", client.client_id},
                       {"aud", as_->issuer},
                       {"iat", now_s},
                       {"exp", now_s + kAssertionLifetimeS},
                       {"jti", base64url(*jti)}});
  std::string signing_input =
      base64url(header.dump(-1, ' ', false, json::error_handler_t::replace)) + "." +
      base64url(claims.dump(-1, ' ', false, json::error_handler_t::replace));
  impl_.options.crypto->sign_jws(
      alg, std::move(pem), signing_input,
      cont([signing_input, next = std::move(next)](Result<std::string> sig) mutable {
        if (!sig) return next(std::move(sig).error());
        next(signing_input + "." + base64url(*sig));
      }));
}

// --- The token endpoint ----------------------------------------------------------------------

void OAuthOp::token_request(Params params, const ClientIdentity& client,
                            std::function<void(Result<TokenSet>)> next) {
  if (!resource_.empty()) params.emplace_back("resource", resource_);
  HttpHeaders headers;
  const std::string& method = client.auth_method;
  if (method == "client_secret_basic") {
    headers.add("Authorization", "Basic " + base64(form_encode(client.client_id) + ":" +
                                                   form_encode(client.client_secret)));
  } else if (method == "client_secret_post") {
    params.emplace_back("client_id", client.client_id);
    params.emplace_back("client_secret", client.client_secret);
  } else if (method == "private_key_jwt") {
    return private_key_assertion(
        client, cont([this, params = std::move(params), headers = std::move(headers),
                      next = std::move(next)](Result<std::string> assertion) mutable {
          if (!assertion) {
            return next(named(Error::make(assertion.error().code,
                                          "signing the client assertion failed: " +
                                              assertion.error().message)));
          }
          params.emplace_back("client_assertion_type", kJwtBearerType);
          params.emplace_back("client_assertion", std::move(assertion).value());
          send_token_request(std::move(params), std::move(headers), std::move(next));
        }));
  } else {
    params.emplace_back("client_id", client.client_id);
  }
  send_token_request(std::move(params), std::move(headers), std::move(next));
}

void OAuthOp::send_token_request(Params params, HttpHeaders headers,
                                 std::function<void(Result<TokenSet>)> next) {
  HttpRequest request;
  request.method = "POST";
  request.url = as_->token_endpoint;
  request.headers = std::move(headers);
  request.headers.add("Content-Type", "application/x-www-form-urlencoded");
  request.headers.add("Accept", "application/json");
  request.body = form_body(params);
  request.timeout_ms = impl_.options.request_timeout.count();
  request.follow_redirects = false;  // the body holds secrets: never to another place
  std::string grant;
  for (const auto& [k, v] : params) {
    if (k == "grant_type") grant = v;
  }
  const std::string where = "the token endpoint " + as_->token_endpoint;
  fetch_ = Fetch::start(
      impl_.executor(), *impl_.options.http, std::move(request), impl_.options.max_response_bytes,
      cont([this, where, grant, next = std::move(next)](Result<FetchResponse> r) mutable {
        if (!r) {
          return next(named(Error::make(r.error().code, where + " failed (" + grant + "): " +
                                                            r.error().message)));
        }
        if (is_redirect(r->status)) {
          return next(named(Error::make(
              ErrorCode::protocol, where + " answered with a redirect; mcprt does not send "
                                           "credentials to where a token endpoint redirects")));
        }
        if (r->status < 200 || r->status >= 300) {
          const std::string why = oauth_error_of(r->body);
          const std::string code = oauth_error_code_of(r->body);
          // An OAuth error answer (RFC 6749 §5.2) is the AS's verdict on this grant; a
          // 5xx or a body that is not one says nothing about the credential.
          const bool refused = !code.empty() && r->status >= 400 && r->status < 500;
          return next(named(Error::make(
              ErrorCode::http_status,
              where + " refused the " + grant + " grant (HTTP " + std::to_string(r->status) +
                  (why.empty() ? std::string() : ": " + why) + ")",
              json_object({{"status", r->status}, {"refused", refused}, {"oauth_error", code}}))));
        }
        auto doc = parse_object(r->body, "the answer of " + where);
        if (!doc) return next(named(std::move(doc).error()));
        auto tokens = read_token_response(*doc, impl_.now_ms(), "the answer of " + where);
        if (!tokens) return next(named(std::move(tokens).error()));
        next(std::move(tokens).value());
      }));
}

void OAuthOp::save(TokenSet tokens, ClientIdentity client, std::vector<std::string> scopes) {
  cred_.issuer = issuer_;
  cred_.resource = resource_;
  cred_.server = as_;
  cred_.client = std::move(client);
  cred_.tokens = std::move(tokens);
  cred_.requested_scopes = std::move(scopes);
  ServerRecord record{server_url_.to_string(), resource_, issuer_};
  if (record_ && record_->issuer != issuer_) {
    impl_.log().info(prefix_ + "its authorization server is now " + issuer_ + " (was " +
                     record_->issuer + "): signed in there with a registration of its own");
  }
  impl_.options.store->put(
      credential_key(issuer_, resource_), cred_.to_text(), cont([this, record](Status s) {
        if (!s) {
          impl_.log().warn(prefix_ + "could not store the OAuth credential: " + s.error().message);
        }
        impl_.options.store->put(server_key(record.url), record.to_text(), cont([this](Status s2) {
          if (!s2) {
            impl_.log().warn(prefix_ + "could not store the OAuth server record: " +
                             s2.error().message);
          }
          impl_.log().info(prefix_ + "authorized (OAuth, " + issuer_ + ")");
          if (kind_ == Kind::login) return finish_status({});
          give(cred_.tokens.access_token);
        }));
      }));
}

// --- Helpers ------------------------------------------------------------------------------

std::vector<std::string> OAuthOp::choose_scopes() const {
  std::vector<std::string> scopes;
  if (!challenge_.scope.empty()) {
    scopes = split_scopes(challenge_.scope);
  } else if (!server_.oauth.scopes.empty()) {
    scopes = server_.oauth.scopes;
  } else if (have_prm_) {
    scopes = prm_.scopes_supported;
  }
  const bool as_lists_offline = as_ && contains(as_->scopes_supported, "offline_access");
  const bool cc = server_.oauth.grant == OAuthConfig::Grant::client_credentials;
  std::vector<std::string> out;
  for (auto& s : scopes) {
    if (s == "offline_access" && (!as_lists_offline || cc)) continue;
    out.push_back(std::move(s));
  }
  if (!out.empty() && as_lists_offline && !cc && !contains(out, "offline_access")) {
    out.push_back("offline_access");
  }
  return out;
}

Error OAuthOp::needs_auth(const std::string& reason) const {
  std::string hint = impl_.options.login_hint ? impl_.options.login_hint(server_.name)
                                              : "sign in to it with the host's login command";
  // `status`: the HTTP status that asked (0: none yet). A 403 is a step-up: the token still
  // serves the server's other requests, so its connection stays up.
  json data = json::object();
  data["server"] = server_.name;
  data["status"] = status_;
  return Error::make(ErrorCode::needs_auth,
                     prefix_ + "needs an OAuth sign-in (" + reason + "); " + hint, std::move(data));
}

Error OAuthOp::named(Error e) const {
  if (e.message.compare(0, prefix_.size(), prefix_) != 0) e.message = prefix_ + e.message;
  return e;
}

bool OAuthOp::expiring(const TokenSet& t) const {
  return t.expires_at_ms != 0 && impl_.now_ms() + impl_.options.refresh_skew.count() >= t.expires_at_ms;
}

bool OAuthOp::expired(const TokenSet& t) const {
  return t.expires_at_ms != 0 && impl_.now_ms() >= t.expires_at_ms;
}

void OAuthOp::release() {
  finished_ = true;
  fetch_.reset();
  flow_.reset();
  lock_.reset();
}

void OAuthOp::finish_token(Result<std::optional<std::string>> result) {
  if (finished_) return;
  release();
  auto done = std::move(token_done_);
  auto status_done = std::move(status_done_);
  impl_.completed(server_.name, this);  // nothing of impl_ is touched after the callback
  if (done) {
    done(std::move(result));
  } else if (status_done) {
    status_done(result ? Status() : Status(std::move(result).error()));
  }
}

void OAuthOp::finish_status(Status status) {
  if (finished_) return;
  release();
  auto done = std::move(status_done_);
  auto token_done = std::move(token_done_);
  impl_.completed(server_.name, this);
  if (done) {
    done(std::move(status));
  } else if (token_done) {
    token_done(status ? Result<std::optional<std::string>>(std::optional<std::string>())
                      : Result<std::optional<std::string>>(std::move(status).error()));
  }
}

void OAuthOp::fail(Error e) {
  impl_.log().warn(e.message);
  if (token_done_) return finish_token(std::move(e));
  finish_status(std::move(e));
}

// --- The queue per server --------------------------------------------------------------------

void OAuthClient::Impl::enqueue(std::shared_ptr<OAuthOp> op, const std::string& server) {
  auto& q = queues[server];
  q.push_back(std::move(op));
  if (q.size() == 1) start_front(server);
}

void OAuthClient::Impl::start_front(const std::string& server) {
  // Always on a later turn: no callback runs inside the call that queued the Op.
  std::weak_ptr<Impl> weak = weak_from_this();
  executor().post([weak, server] {
    auto self = weak.lock();
    if (!self) return;
    auto it = self->queues.find(server);
    if (it == self->queues.end() || it->second.empty()) return;
    std::shared_ptr<OAuthOp> op = it->second.front();
    op->start();
  });
}

void OAuthClient::Impl::completed(const std::string& server, const OAuthOp* op) {
  auto it = queues.find(server);
  if (it == queues.end()) return;
  auto& q = it->second;
  if (q.empty() || q.front().get() != op) return;
  // The Op stays alive through its caller's own reference until its callback returned.
  q.erase(q.begin());
  if (q.empty()) {
    queues.erase(it);
  } else {
    start_front(server);
  }
}

// --- OAuthClient ---------------------------------------------------------------------------

OAuthClient::OAuthClient(OAuthClientOptions options)
    : impl_(std::make_shared<Impl>(std::move(options))) {}

OAuthClient::~OAuthClient() = default;

void OAuthClient::set_server(OAuthServer server) {
  std::string name = server.name;
  impl_->servers[name] = std::move(server);
}

void OAuthClient::remove_server(const std::string& name) { impl_->servers.erase(name); }

void OAuthClient::set_interactive(bool interactive) { impl_->interactive = interactive; }

namespace {

bool ready(const OAuthClientOptions& o) { return o.executor && o.http && o.crypto && o.store; }

}  // namespace

void OAuthClient::get_token(const AuthRequest& request, TokenCallback done) {
  OAuthServer server = impl_->server_for(request.server_name, request.url);
  if (server.auth == AuthType::bearer || !ready(impl_->options)) {
    if (server.auth == AuthType::bearer && impl_->options.host_storage) {
      return impl_->options.host_storage->get_token(request, std::move(done));
    }
    impl_->executor().post([done = std::move(done)] { done(std::optional<std::string>()); });
    return;
  }
  auto op = std::make_shared<OAuthOp>(*impl_, OAuthOp::Kind::get, server);
  op->on_token(std::move(done));
  impl_->enqueue(std::move(op), server.name);
}

void OAuthClient::refresh_token(const AuthRequest& request, const std::string& rejected_token,
                                TokenCallback done) {
  OAuthServer server = impl_->server_for(request.server_name, request.url);
  if (server.auth == AuthType::bearer || !ready(impl_->options)) {
    if (server.auth == AuthType::bearer && impl_->options.host_storage) {
      return impl_->options.host_storage->refresh_token(request, rejected_token, std::move(done));
    }
    impl_->executor().post([done = std::move(done), rejected_token] {
      done(rejected_token.empty() ? std::optional<std::string>() : rejected_token);
    });
    return;
  }
  auto op = std::make_shared<OAuthOp>(*impl_, OAuthOp::Kind::refresh, server);
  op->set_rejection(request.status, request.www_authenticate, rejected_token);
  op->on_token(std::move(done));
  impl_->enqueue(std::move(op), server.name);
}

void OAuthClient::login(const std::string& server, std::function<void(Status)> done) {
  auto it = impl_->servers.find(server);
  if (it == impl_->servers.end() || !ready(impl_->options)) {
    std::string why = it == impl_->servers.end() ? "is not an HTTP server this client knows"
                                                 : "cannot sign in: the OAuth client is not set up";
    impl_->executor().post([done = std::move(done), server, why] {
      done(Error::make(ErrorCode::invalid_argument, prefix_of(server) + why));
    });
    return;
  }
  auto op = std::make_shared<OAuthOp>(*impl_, OAuthOp::Kind::login, it->second);
  op->on_status(std::move(done));
  impl_->enqueue(std::move(op), server);
}

void OAuthClient::logout(const std::string& server, std::function<void(Status)> done) {
  auto it = impl_->servers.find(server);
  if (it == impl_->servers.end() || !ready(impl_->options)) {
    impl_->executor().post([done = std::move(done), server] {
      done(Error::make(ErrorCode::invalid_argument,
                       prefix_of(server) + "is not an HTTP server this client knows"));
    });
    return;
  }
  auto op = std::make_shared<OAuthOp>(*impl_, OAuthOp::Kind::logout, it->second);
  op->on_status(std::move(done));
  impl_->enqueue(std::move(op), server);
}

void OAuthClient::status(const std::string& server,
                         std::function<void(Result<OAuthStatus>)> done) {
  auto base = std::make_shared<OAuthStatus>();
  base->server = server;
  auto it = impl_->servers.find(server);
  if (it == impl_->servers.end() || !ready(impl_->options)) {
    impl_->executor().post([done = std::move(done), base] { done(*base); });
    return;
  }
  base->known = true;
  base->grant = it->second.oauth.grant;
  auto url = parse_http_url(it->second.url);
  if (!url) {
    impl_->executor().post([done = std::move(done), base] { done(*base); });
    return;
  }
  base->url = url->to_string();
  std::weak_ptr<Impl> weak = impl_;
  CredentialStore* store = impl_->options.store;
  store->get(server_key(base->url), [weak, store, base, done = std::move(done)](
                                        Result<std::optional<std::string>> r) mutable {
    auto self = weak.lock();
    if (!self) return;
    if (!r) return done(std::move(r).error());
    std::optional<ServerRecord> record;
    if (r.value()) record = ServerRecord::from_text(*r.value(), base->url);
    if (!record) return done(*base);
    base->issuer = record->issuer;
    base->resource = record->resource;
    store->get(credential_key(record->issuer, record->resource),
               [weak, base, record = *record, done = std::move(done)](
                   Result<std::optional<std::string>> c) mutable {
                 auto self = weak.lock();
                 if (!self) return;
                 if (!c) return done(std::move(c).error());
                 std::optional<CredentialRecord> cred;
                 if (c.value()) cred = CredentialRecord::from_text(*c.value(), record.issuer, record.resource);
                 if (!cred) return done(*base);
                 base->has_credential = true;
                 base->client_id = cred->client.client_id;
                 base->client_source = cred->client.source;
                 base->has_access_token = !cred->tokens.access_token.empty();
                 base->has_refresh_token = !cred->tokens.refresh_token.empty();
                 if (cred->tokens.expires_at_ms) {
                   base->expires_at_unix_ms = cred->tokens.expires_at_ms;
                   base->expired = self->now_ms() >= cred->tokens.expires_at_ms;
                 }
                 base->scopes = !cred->tokens.scope.empty() ? split_scopes(cred->tokens.scope)
                                                            : cred->requested_scopes;
                 done(*base);
               });
  });
}

}  // namespace mcprt
