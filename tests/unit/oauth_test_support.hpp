#pragma once
// An OAuth world for the OAuth client's unit tests, over FakeHttpClient: an MCP server's
// Protected Resource Metadata and an authorization server (metadata, DCR, an authorize
// endpoint that approves at once by redirecting, a token endpoint with rotating refresh
// tokens), each behaviour switchable, every request recorded. serve() answers whatever the
// client sent until it is quiet; time moves only when a test moves it.

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/oauth_wire.hpp"
#include "mcprt/memory_store.hpp"
#include "mcprt/oauth.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/fake_crypto.hpp"
#include "mcprt/testing/fake_http_client.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/url.hpp"

namespace mcprt::testing {

using detail::oauth::Params;

inline std::string param(const Params& p, const std::string& name) {
  for (const auto& [k, v] : p) {
    if (k == name) return v;
  }
  return {};
}
inline bool has_param(const Params& p, const std::string& name) {
  for (const auto& [k, v] : p) {
    if (k == name) return true;
  }
  return false;
}

class OAuthWorld {
 public:
  OAuthWorld(ManualExecutor& ex, FakeHttpClient& http) : ex_(ex), http_(http) {}

  // --- the MCP server's PRM -------------------------------------------------------------
  std::string mcp_origin = "https://mcp.example.com";
  std::string prm_path = "/.well-known/oauth-protected-resource/mcp";  // "" = no PRM at all
  std::string prm_resource = "https://mcp.example.com/mcp";
  std::vector<std::string> prm_scopes;  // scopes_supported; empty = absent
  std::optional<json> prm_override;     // served as it is instead

  // --- the authorization server -----------------------------------------------------------
  std::string issuer = "https://auth.example.com";
  std::string metadata_url = "https://auth.example.com/.well-known/oauth-authorization-server";
  std::string claimed_issuer;            // "" = issuer
  std::optional<std::vector<std::string>> challenge_methods = std::vector<std::string>{"S256"};
  std::optional<std::vector<std::string>> auth_methods = std::vector<std::string>{"none"};
  std::vector<std::string> as_scopes;    // scopes_supported; empty = absent
  bool dcr = true;
  bool cimd = false;
  bool iss_supported = true;
  enum class Iss { correct, omit, wrong, normalized } iss = Iss::correct;
  // The registration's answer.
  std::string registered_secret;         // "" = a public client
  std::string registered_method;         // token_endpoint_auth_method answered ("" = none)
  // The authorize endpoint.
  std::string redirect_error;            // error=... instead of a code
  bool wrong_state = false;
  // The token endpoint.
  int expires_in = 3600;
  bool issue_refresh = true;
  bool refuse_refresh = false;           // 400 invalid_grant for any refresh
  int token_status = 0;                  // answer every token request with this (500...)
  std::string token_type = "Bearer";

  // --- records -------------------------------------------------------------------------------
  std::vector<std::string> requests;      // "GET https://..." in order (without query)
  std::vector<json> registrations;        // DCR bodies
  std::vector<Params> authorizations;     // authorize query parameters
  std::vector<Params> token_requests;     // token form bodies
  std::vector<std::string> token_authorization;  // the Authorization header of each
  std::vector<std::string> issued_access; // in order
  std::vector<std::string> issued_refresh;
  std::string live_refresh;               // the one refresh token that works (rotation)
  // Runs for every request before the world answers; true = the hook answered it.
  std::function<bool(const FakeHttpExchange&)> intercept;
  // Runs right before the token endpoint answers (observe the store at that moment).
  std::function<void(const Params&)> on_token_request;

  std::string as_origin() const { return parse_http_url(issuer)->origin(); }
  std::string prm_url() const { return mcp_origin + prm_path; }
  std::string challenge(const std::string& extra = {}) const {
    std::string c = "Bearer resource_metadata=\"" + prm_url() + "\"";
    if (!extra.empty()) c += ", " + extra;
    return c;
  }

  json metadata() const {
    json m = {{"issuer", claimed_issuer.empty() ? issuer : claimed_issuer},
              {"authorization_endpoint", issuer + "/authorize"},
              {"token_endpoint", issuer + "/token"},
              {"response_types_supported", {"code"}}};
    if (dcr) m["registration_endpoint"] = issuer + "/register";
    if (challenge_methods) m["code_challenge_methods_supported"] = *challenge_methods;
    if (auth_methods) m["token_endpoint_auth_methods_supported"] = *auth_methods;
    if (!as_scopes.empty()) m["scopes_supported"] = as_scopes;
    if (cimd) m["client_id_metadata_document_supported"] = true;
    m["authorization_response_iss_parameter_supported"] = iss_supported;
    return m;
  }

  // Answers every request until none is left (at most `rounds` requests).
  void serve(int rounds = 200) {
    for (int i = 0; i < rounds; ++i) {
      ex_.run_until_idle();
      auto req = http_.take();
      if (!req) {
        ex_.run_until_idle();
        if (http_.pending() == 0) return;
        continue;
      }
      answer(*req);
    }
    ADD_FAILURE() << "the OAuth world was still busy after " << rounds << " requests";
  }

  void answer(const FakeHttpExchange& req) {
    const std::string url = req.url();
    const std::string bare = url.substr(0, url.find('?'));
    requests.push_back(req.method() + " " + bare);
    if (intercept && intercept(req)) return;
    if (req.method() == "GET" && !prm_path.empty() && bare == prm_url()) {
      json prm = prm_override ? *prm_override
                              : json{{"resource", prm_resource}, {"authorization_servers", {issuer}}};
      if (!prm_override && !prm_scopes.empty()) prm["scopes_supported"] = prm_scopes;
      return req.respond_json(prm);
    }
    if (req.method() == "GET" && bare == metadata_url) return req.respond_json(metadata());
    if (req.method() == "POST" && dcr && bare == issuer + "/register") return do_register(req);
    if (req.method() == "GET" && bare == issuer + "/authorize") return do_authorize(req);
    if (req.method() == "POST" && bare == issuer + "/token") return do_token(req);
    req.respond(404, "not found");
  }

 private:
  void do_register(const FakeHttpExchange& req) {
    registrations.push_back(req.json_body());
    json answer = {{"client_id", "client-" + std::to_string(registrations.size())}};
    if (!registered_secret.empty()) answer["client_secret"] = registered_secret;
    if (!registered_method.empty()) answer["token_endpoint_auth_method"] = registered_method;
    req.respond_json(answer, {}, 201);
  }

  void do_authorize(const FakeHttpExchange& req) {
    auto url = parse_http_url(req.url());
    Params q = detail::oauth::parse_query(url->query);
    authorizations.push_back(q);
    std::string target = param(q, "redirect_uri");
    target += target.find('?') == std::string::npos ? "?" : "&";
    Params answer;
    if (!redirect_error.empty()) {
      answer.emplace_back("error", redirect_error);
    } else {
      answer.emplace_back("code", "code-" + std::to_string(authorizations.size()));
    }
    answer.emplace_back("state", wrong_state ? "forged" : param(q, "state"));
    if (iss == Iss::correct) answer.emplace_back("iss", claimed_issuer.empty() ? issuer : claimed_issuer);
    if (iss == Iss::wrong) answer.emplace_back("iss", "https://evil.example.com");
    if (iss == Iss::normalized) answer.emplace_back("iss", issuer + "/");
    target += detail::oauth::form_body(answer);
    req.respond(302, "", {{"Location", target}});
  }

  void do_token(const FakeHttpExchange& req) {
    Params body = detail::oauth::parse_query(req.body());
    token_requests.push_back(body);
    token_authorization.push_back(req.header("Authorization"));
    if (on_token_request) on_token_request(body);
    if (token_status) return req.respond(token_status, "{\"error\":\"server_error\"}");
    const std::string grant = param(body, "grant_type");
    std::string scope;
    if (grant == "authorization_code") {
      if (!authorizations.empty()) scope = param(authorizations.back(), "scope");
    } else if (grant == "refresh_token") {
      if (refuse_refresh || param(body, "refresh_token") != live_refresh) {
        return req.respond_json({{"error", "invalid_grant"},
                                 {"error_description", "the refresh token is not valid"}},
                                {}, 400);
      }
    } else if (grant == "client_credentials") {
      scope = param(body, "scope");
    } else {
      return req.respond_json({{"error", "unsupported_grant_type"}}, {}, 400);
    }
    const std::string access = "at-" + std::to_string(issued_access.size() + 1);
    issued_access.push_back(access);
    json answer = {{"access_token", access}, {"token_type", token_type}};
    if (expires_in > 0) answer["expires_in"] = expires_in;
    if (!scope.empty()) answer["scope"] = scope;
    if (issue_refresh && grant != "client_credentials") {
      live_refresh = "rt-" + std::to_string(issued_refresh.size() + 1);
      issued_refresh.push_back(live_refresh);
      answer["refresh_token"] = live_refresh;
    }
    req.respond_json(answer);
  }

  ManualExecutor& ex_;
  FakeHttpClient& http_;
};

// The fixture: an OAuthClient over the world, with a manual wall clock.
class OAuthTest : public ::testing::Test {
 protected:
  static constexpr const char* kRedirect = "http://127.0.0.1:5000/callback";

  OAuthTest() {
    options.executor = &ex;
    options.http = &http;
    options.crypto = &crypto;
    options.store = &store;
    options.authorizer = &authorizer;
    options.logger = &logger;
    options.now_unix_ms = [this] { return wall_ms; };
    options.login_hint = [](const std::string& s) { return "run `mcprt auth login " + s + "`"; };
    server = {"alpha", "https://mcp.example.com/mcp", AuthType::none, {}};
  }

  OAuthClient& client() {
    if (!client_) {
      client_ = std::make_unique<OAuthClient>(options);
      client_->set_server(server);
    }
    return *client_;
  }

  AuthRequest request(int status = 0, std::string challenge = {}) const {
    AuthRequest r;
    r.server_name = server.name;
    r.url = server.url;
    r.status = status;
    r.www_authenticate = std::move(challenge);
    return r;
  }

  // What a transport does after a rejection, answered by the world.
  Result<std::optional<std::string>> refresh(int status, std::string challenge,
                                             std::string rejected = {}) {
    std::optional<Result<std::optional<std::string>>> got;
    client().refresh_token(request(status, std::move(challenge)), rejected,
                           [&](Result<std::optional<std::string>> r) { got = std::move(r); });
    world.serve();
    if (!got) return Error::make(ErrorCode::internal, "refresh_token never answered");
    return std::move(*got);
  }
  // The first token a transport asks for.
  Result<std::optional<std::string>> get() {
    std::optional<Result<std::optional<std::string>>> got;
    client().get_token(request(), [&](Result<std::optional<std::string>> r) { got = std::move(r); });
    world.serve();
    if (!got) return Error::make(ErrorCode::internal, "get_token never answered");
    return std::move(*got);
  }
  // A sign-in after a 401 with the world's challenge: the access token it got.
  std::string sign_in(const std::string& extra_challenge = {}) {
    auto r = refresh(401, world.challenge(extra_challenge));
    EXPECT_TRUE(r.ok()) << r;
    if (!r.ok() || !r.value()) return {};
    return *r.value();
  }
  Status login(const std::string& name = "alpha") {
    std::optional<Status> got;
    client().login(name, [&](Status s) { got = std::move(s); });
    world.serve();
    if (!got) return Error::make(ErrorCode::internal, "login never answered");
    return std::move(*got);
  }
  Status logout(const std::string& name = "alpha") {
    std::optional<Status> got;
    client().logout(name, [&](Status s) { got = std::move(s); });
    world.serve();
    if (!got) return Error::make(ErrorCode::internal, "logout never answered");
    return std::move(*got);
  }
  Result<OAuthStatus> status(const std::string& name = "alpha") {
    std::optional<Result<OAuthStatus>> got;
    client().status(name, [&](Result<OAuthStatus> s) { got = std::move(s); });
    ex.run_until_idle();
    if (!got) return Error::make(ErrorCode::internal, "status never answered");
    return std::move(*got);
  }

  // Every stored value and log line, for leak checks.
  std::string everything_visible() const {
    std::string all;
    for (const auto& [level, line] : logger.lines) all += line + "\n";
    return all;
  }

  ManualExecutor ex;
  FakeHttpClient http{ex};
  FakeCrypto crypto{ex};
  MemoryCredentialStore store{ex};
  RedirectFollowingAuthorizer authorizer{ex, http, kRedirect};
  CapturingLogger logger;
  OAuthWorld world{ex, http};
  std::int64_t wall_ms = 1'700'000'000'000;
  OAuthClientOptions options;
  OAuthServer server;
  std::unique_ptr<OAuthClient> client_;
};

}  // namespace mcprt::testing
