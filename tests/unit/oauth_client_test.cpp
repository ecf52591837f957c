// The OAuth client (mcprt/oauth.hpp) against an in-process OAuth world
// (oauth_test_support.hpp): discovery, client identity, the authorization request and
// response, the token endpoint, scopes, step-up, interactive or not, login/logout/status.
// Refresh, migration and client credentials are in oauth_refresh_test.cpp.

#include <gmock/gmock.h>

#include "oauth_test_support.hpp"

namespace mcprt::testing {
namespace oauth_client_test {  // this file's own names in a unity batch
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// --- Discovery ---------------------------------------------------------------------------

TEST_F(OAuthTest, Discovery_ChallengeResourceMetadataFirst_ThenAsMetadata) {
  world.prm_path = "/custom/metadata/location.json";
  EXPECT_EQ(sign_in(), "at-1");
  ASSERT_GE(world.requests.size(), 2u);
  EXPECT_EQ(world.requests[0], "GET https://mcp.example.com/custom/metadata/location.json");
  EXPECT_EQ(world.requests[1],
            "GET https://auth.example.com/.well-known/oauth-authorization-server");
}

TEST_F(OAuthTest, Discovery_WithoutTheHeader_PathFormThenRoot) {
  world.prm_path = "/.well-known/oauth-protected-resource";
  world.prm_resource = "https://mcp.example.com";
  auto r = refresh(401, "Bearer");
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_THAT(world.requests,
              ::testing::IsSupersetOf({"GET https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
                                     "GET https://mcp.example.com/.well-known/oauth-protected-resource"}));
  EXPECT_EQ(world.requests[0], "GET https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(world.requests[1], "GET https://mcp.example.com/.well-known/oauth-protected-resource");
  // The resource goes out exactly as the PRM published it (no "/" added).
  ASSERT_EQ(world.authorizations.size(), 1u);
  EXPECT_EQ(param(world.authorizations[0], "resource"), "https://mcp.example.com");
  EXPECT_EQ(param(world.token_requests[0], "resource"), "https://mcp.example.com");
}

TEST_F(OAuthTest, Discovery_ResourceMismatch_RefusesBeforeAuthorizing) {
  world.prm_resource = "https://evil.example.com/mcp";
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::protocol);
  EXPECT_THAT(r.error().message, HasSubstr("Server \"alpha\": "));
  EXPECT_THAT(r.error().message, HasSubstr("resource mismatch"));
  EXPECT_THAT(r.error().message, HasSubstr("https://evil.example.com/mcp"));
  EXPECT_TRUE(world.authorizations.empty());
  EXPECT_TRUE(world.registrations.empty());
  EXPECT_EQ(authorizer.flows_begun(), 0);
}

TEST_F(OAuthTest, Discovery_PathIssuer_TriesTheThreePathFormsNeverTheRoot) {
  world.issuer = "https://auth.example.com/tenant1";
  world.metadata_url = "https://auth.example.com/tenant1/.well-known/openid-configuration";
  EXPECT_EQ(sign_in(), "at-1");
  std::vector<std::string> metadata;
  for (const auto& r : world.requests) {
    if (r.find("/.well-known/o") != std::string::npos && r.find("protected") == std::string::npos) {
      metadata.push_back(r);
    }
  }
  EXPECT_THAT(metadata,
              ElementsAre("GET https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                          "GET https://auth.example.com/.well-known/openid-configuration/tenant1",
                          "GET https://auth.example.com/tenant1/.well-known/openid-configuration"));
}

TEST_F(OAuthTest, Discovery_RootIssuer_OAuthThenOpenIdConfiguration) {
  world.metadata_url = "https://auth.example.com/.well-known/openid-configuration";
  EXPECT_EQ(sign_in(), "at-1");
  EXPECT_EQ(world.requests[1], "GET https://auth.example.com/.well-known/oauth-authorization-server");
  EXPECT_EQ(world.requests[2], "GET https://auth.example.com/.well-known/openid-configuration");
}

TEST_F(OAuthTest, Discovery_MetadataIssuerMismatch_Refused) {
  world.claimed_issuer = "https://attacker.example.com";
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("issuer mismatch"));
  EXPECT_THAT(r.error().message, HasSubstr("https://attacker.example.com"));
  EXPECT_TRUE(world.authorizations.empty());
}

TEST_F(OAuthTest, Discovery_Legacy_NoPrm_MetadataAtTheServerOrigin) {
  world.prm_path = "";
  world.issuer = "https://mcp.example.com";
  world.metadata_url = "https://mcp.example.com/.well-known/oauth-authorization-server";
  auto r = refresh(401, "Bearer realm=\"mcp\"");
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(*r.value(), "at-1");
  ASSERT_EQ(world.registrations.size(), 1u);
  EXPECT_EQ(param(world.token_requests[0], "resource"), "https://mcp.example.com/mcp");
}

TEST_F(OAuthTest, Discovery_Legacy_NoMetadata_DefaultEndpointsAtTheOrigin) {
  world.prm_path = "";
  world.issuer = "https://mcp.example.com";
  world.metadata_url = "";  // nothing anywhere
  auto r = refresh(401, "Bearer");
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_THAT(world.requests, ::testing::Contains("POST https://mcp.example.com/register"));
  EXPECT_THAT(world.requests, ::testing::Contains("GET https://mcp.example.com/authorize"));
  EXPECT_THAT(world.requests, ::testing::Contains("POST https://mcp.example.com/token"));
  EXPECT_EQ(param(world.authorizations.at(0), "code_challenge_method"), "S256");
}

TEST_F(OAuthTest, Discovery_PlainHttpMetadataUrlOfAnotherHostRefused) {
  auto r = refresh(401, "Bearer resource_metadata=\"http://meta.example.com/prm\"");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("not https"));
  EXPECT_TRUE(world.requests.empty());
}

TEST_F(OAuthTest, Discovery_OversizedMetadataIsBounded) {
  options.max_response_bytes = 4096;
  world.intercept = [&](const FakeHttpExchange& req) {
    if (req.url() != world.prm_url()) return false;
    req.head(200, {{"Content-Type", "application/json"}});
    req.chunk("{\"resource\":\"" + std::string(8192, 'x'));
    req.complete();
    return true;
  };
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());  // no PRM found anywhere usable, and no AS at the origin either
  EXPECT_TRUE(logger.has(LogLevel::debug, "larger than 4096 bytes")) << everything_visible();
  EXPECT_TRUE(world.authorizations.empty());
}

TEST_F(OAuthTest, Discovery_PrmThatIsNotJson_FailsWithWhere) {
  world.prm_override = json("not an object");
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr(world.prm_url()));
  EXPECT_THAT(r.error().message, HasSubstr("not a JSON object"));
}

// --- Client identity ---------------------------------------------------------------------

TEST_F(OAuthTest, Identity_PreRegisteredClient_NoRegistration_BasicAuth) {
  world.dcr = false;
  world.auth_methods = std::vector<std::string>{"client_secret_basic"};
  server.oauth.client_id = "pre-registered-client";
  server.oauth.client_secret = "pre-registered-secret";
  EXPECT_EQ(sign_in(), "at-1");
  EXPECT_TRUE(world.registrations.empty());
  EXPECT_EQ(param(world.authorizations[0], "client_id"), "pre-registered-client");
  // base64("pre-registered-client:pre-registered-secret")
  EXPECT_EQ(world.token_authorization[0],
            "Basic cHJlLXJlZ2lzdGVyZWQtY2xpZW50OnByZS1yZWdpc3RlcmVkLXNlY3JldA==");
  EXPECT_FALSE(has_param(world.token_requests[0], "client_secret"));
  // The configured secret is never written to the store.
  for (const auto& [key, value] : store.entries()) {
    EXPECT_THAT(value, Not(HasSubstr("pre-registered-secret"))) << key;
  }
}

TEST_F(OAuthTest, Identity_MetadataDocumentWhenTheAsSupportsIt) {
  world.cimd = true;
  options.client_metadata_url = "https://client.example.com/mcprt.json";
  EXPECT_EQ(sign_in(), "at-1");
  EXPECT_TRUE(world.registrations.empty());
  EXPECT_EQ(param(world.authorizations[0], "client_id"), "https://client.example.com/mcprt.json");
  EXPECT_EQ(param(world.token_requests[0], "client_id"), "https://client.example.com/mcprt.json");
}

TEST_F(OAuthTest, Identity_MetadataDocumentUrlIgnoredWhenNotSupported) {
  options.client_metadata_url = "https://client.example.com/mcprt.json";
  EXPECT_EQ(sign_in(), "at-1");
  ASSERT_EQ(world.registrations.size(), 1u);
  EXPECT_EQ(param(world.authorizations[0], "client_id"), "client-1");
}

TEST_F(OAuthTest, Identity_DynamicRegistration_WithApplicationTypeAndGrantTypes) {
  EXPECT_EQ(sign_in(), "at-1");
  ASSERT_EQ(world.registrations.size(), 1u);
  const json& reg = world.registrations[0];
  EXPECT_EQ(reg.value("application_type", ""), "native");
  EXPECT_EQ(reg["grant_types"], json::array({"authorization_code", "refresh_token"}));
  EXPECT_EQ(reg["redirect_uris"], json::array({kRedirect}));
  EXPECT_EQ(reg.value("client_name", ""), "mcprt");
  EXPECT_EQ(reg.value("token_endpoint_auth_method", ""), "none");
  EXPECT_EQ(param(world.authorizations[0], "client_id"), "client-1");
  EXPECT_EQ(param(world.authorizations[0], "redirect_uri"), kRedirect);
  EXPECT_EQ(param(world.token_requests[0], "redirect_uri"), kRedirect);
}

TEST_F(OAuthTest, Identity_StoredRegistrationIsReusedForTheSameRedirect) {
  EXPECT_EQ(sign_in(), "at-1");
  ASSERT_TRUE(logout().ok());
  ASSERT_TRUE(login().ok());
  EXPECT_EQ(world.registrations.size(), 1u);
  ASSERT_EQ(world.authorizations.size(), 2u);
  EXPECT_EQ(param(world.authorizations[1], "client_id"), "client-1");
}

TEST_F(OAuthTest, Identity_NothingToRegisterWith_ErrorSaysWhatToConfigure) {
  world.dcr = false;
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_config);
  EXPECT_THAT(r.error().message, HasSubstr("Server \"alpha\": "));
  EXPECT_THAT(r.error().message, HasSubstr("\"clientId\""));
  EXPECT_THAT(r.error().message, HasSubstr(kRedirect));
  EXPECT_TRUE(world.authorizations.empty());
}

// --- The authorization request and response -----------------------------------------------

TEST_F(OAuthTest, Pkce_ChallengeIsTheDigestOfTheVerifierSentLater) {
  EXPECT_EQ(sign_in(), "at-1");
  const Params& a = world.authorizations.at(0);
  const Params& t = world.token_requests.at(0);
  EXPECT_EQ(param(a, "code_challenge_method"), "S256");
  EXPECT_EQ(param(a, "response_type"), "code");
  const std::string verifier = param(t, "code_verifier");
  EXPECT_EQ(verifier.size(), 43u);  // 32 random bytes, base64url
  EXPECT_EQ(param(a, "code_challenge"), detail::oauth::base64url(FakeCrypto::digest_of(verifier)));
  EXPECT_EQ(param(t, "grant_type"), "authorization_code");
  EXPECT_EQ(param(t, "code"), "code-1");
  EXPECT_FALSE(param(a, "state").empty());
}

TEST_F(OAuthTest, Pkce_RefusedWhenTheAsDoesNotAdvertiseS256) {
  world.challenge_methods = std::vector<std::string>{"plain"};
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("S256"));
  EXPECT_TRUE(world.authorizations.empty());
  world.challenge_methods.reset();
  client_.reset();
  auto r2 = refresh(401, world.challenge());
  ASSERT_FALSE(r2.ok());
  EXPECT_THAT(r2.error().message, HasSubstr("does not advertise PKCE"));
}

TEST_F(OAuthTest, State_AnotherStateIsRefusedAndNoCodeRedeemed) {
  world.wrong_state = true;
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("state"));
  EXPECT_TRUE(world.token_requests.empty());
}

TEST_F(OAuthTest, AuthorizationError_IsNeedsAuthWithTheAsReason) {
  world.redirect_error = "access_denied";
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::needs_auth);
  EXPECT_THAT(r.error().message, HasSubstr("access_denied"));
  EXPECT_TRUE(world.token_requests.empty());
}

struct IssCase {
  const char* name;
  bool advertised;
  OAuthWorld::Iss iss;
  bool accepted;
};

class OAuthIssTest : public OAuthTest, public ::testing::WithParamInterface<IssCase> {};

TEST_P(OAuthIssTest, Rfc9207IssParameter) {
  const IssCase& c = GetParam();
  world.iss_supported = c.advertised;
  world.iss = c.iss;
  auto r = refresh(401, world.challenge());
  EXPECT_EQ(r.ok(), c.accepted) << r;
  // A refused response never reaches the token endpoint (the code is not redeemed).
  EXPECT_EQ(world.token_requests.size(), c.accepted ? 1u : 0u);
  if (!c.accepted) {
    EXPECT_THAT(r.error().message, HasSubstr("iss"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OAuthIssTest,
    ::testing::Values(IssCase{"supported", true, OAuthWorld::Iss::correct, true},
                      IssCase{"not_advertised", false, OAuthWorld::Iss::omit, true},
                      IssCase{"supported_missing", true, OAuthWorld::Iss::omit, false},
                      IssCase{"wrong_issuer", true, OAuthWorld::Iss::wrong, false},
                      IssCase{"unexpected", false, OAuthWorld::Iss::wrong, false},
                      IssCase{"normalized", true, OAuthWorld::Iss::normalized, false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(OAuthTest, Resource_InTheAuthorizationAndTokenRequests) {
  EXPECT_EQ(sign_in(), "at-1");
  EXPECT_EQ(param(world.authorizations[0], "resource"), "https://mcp.example.com/mcp");
  EXPECT_EQ(param(world.token_requests[0], "resource"), "https://mcp.example.com/mcp");
}

// --- Scopes -----------------------------------------------------------------------------

TEST_F(OAuthTest, Scope_TheChallengeWins) {
  world.prm_scopes = {"mcp:profile"};
  server.oauth.scopes = {"configured"};
  sign_in("scope=\"mcp:basic mcp:read\"");
  EXPECT_EQ(param(world.authorizations.at(0), "scope"), "mcp:basic mcp:read");
}

TEST_F(OAuthTest, Scope_ConfiguredScopesBeforePrmScopes) {
  world.prm_scopes = {"mcp:profile"};
  server.oauth.scopes = {"configured", "other"};
  sign_in();
  EXPECT_EQ(param(world.authorizations.at(0), "scope"), "configured other");
}

TEST_F(OAuthTest, Scope_PrmScopesSupportedWhenNothingElse) {
  world.prm_scopes = {"mcp:a", "mcp:b"};
  sign_in();
  EXPECT_EQ(param(world.authorizations.at(0), "scope"), "mcp:a mcp:b");
}

TEST_F(OAuthTest, Scope_OmittedWhenNothingNamesOne) {
  sign_in();
  EXPECT_FALSE(has_param(world.authorizations.at(0), "scope"));
}

TEST_F(OAuthTest, Scope_OfflineAccessOnlyWhenTheAsListsIt) {
  world.prm_scopes = {"mcp:basic"};
  world.as_scopes = {"mcp:basic", "offline_access"};
  sign_in();
  EXPECT_EQ(param(world.authorizations.at(0), "scope"), "mcp:basic offline_access");
}

TEST_F(OAuthTest, Scope_OfflineAccessDroppedWhenTheAsDoesNotListIt) {
  world.prm_scopes = {"mcp:basic", "offline_access"};
  world.as_scopes = {"mcp:basic"};
  sign_in();
  EXPECT_EQ(param(world.authorizations.at(0), "scope"), "mcp:basic");
}

// --- Token endpoint authentication -----------------------------------------------------------

TEST_F(OAuthTest, TokenAuth_BasicWhenThatIsWhatTheAsSupports) {
  world.auth_methods = std::vector<std::string>{"client_secret_basic"};
  world.registered_secret = "reg-secret";
  sign_in();
  EXPECT_EQ(world.registrations.at(0).value("token_endpoint_auth_method", ""), "client_secret_basic");
  EXPECT_EQ(world.token_authorization.at(0), "Basic " + detail::oauth::base64("client-1:reg-secret"));
  EXPECT_FALSE(has_param(world.token_requests.at(0), "client_secret"));
}

TEST_F(OAuthTest, TokenAuth_PostWhenThatIsWhatTheAsSupports) {
  world.auth_methods = std::vector<std::string>{"client_secret_post"};
  world.registered_secret = "reg-secret";
  sign_in();
  EXPECT_EQ(world.token_authorization.at(0), "");
  EXPECT_EQ(param(world.token_requests.at(0), "client_id"), "client-1");
  EXPECT_EQ(param(world.token_requests.at(0), "client_secret"), "reg-secret");
}

TEST_F(OAuthTest, TokenAuth_NoneEvenWhenTheRegistrationGaveASecret) {
  world.auth_methods = std::vector<std::string>{"none"};
  world.registered_secret = "unused-secret";
  sign_in();
  EXPECT_EQ(world.token_authorization.at(0), "");
  EXPECT_EQ(param(world.token_requests.at(0), "client_id"), "client-1");
  EXPECT_FALSE(has_param(world.token_requests.at(0), "client_secret"));
}

TEST_F(OAuthTest, TokenAuth_TheRegistrationsMethodWins) {
  world.auth_methods = std::vector<std::string>{"client_secret_basic", "client_secret_post"};
  world.registered_secret = "reg-secret";
  world.registered_method = "client_secret_post";
  sign_in();
  EXPECT_EQ(param(world.token_requests.at(0), "client_secret"), "reg-secret");
  EXPECT_EQ(world.token_authorization.at(0), "");
}

TEST_F(OAuthTest, TokenEndpoint_ANonBearerTokenIsRefused) {
  world.token_type = "DPoP";
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("supports only token_type \"Bearer\""));
}

TEST_F(OAuthTest, TokenEndpoint_ARedirectIsNotFollowed) {
  world.intercept = [&](const FakeHttpExchange& req) {
    if (req.url() != world.issuer + "/token") return false;
    req.respond(307, "", {{"Location", "https://elsewhere.example.com/token"}});
    return true;
  };
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("redirect"));
  EXPECT_THAT(world.requests, Not(::testing::Contains("POST https://elsewhere.example.com/token")));
}

// --- Step-up ----------------------------------------------------------------------------

TEST_F(OAuthTest, StepUp_Insufficient_Scope_ReauthorizesWithTheUnion) {
  const std::string first = sign_in("scope=\"mcp:basic\"");
  ASSERT_EQ(first, "at-1");
  auto r = refresh(403, world.challenge("error=\"insufficient_scope\", scope=\"mcp:write\""), first);
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(*r.value(), "at-2");
  ASSERT_EQ(world.authorizations.size(), 2u);
  EXPECT_EQ(param(world.authorizations[1], "scope"), "mcp:basic mcp:write");
}

TEST_F(OAuthTest, StepUp_NotInteractive_TheLoginOfAnotherProcessAsksForTheUnion) {
  ASSERT_EQ(sign_in("scope=\"mcp:basic\""), "at-1");
  // A second process, with no one to ask: needs-auth, and the scope is remembered.
  client_.reset();
  options.interactive = false;
  auto r = refresh(403, world.challenge("error=\"insufficient_scope\", scope=\"mcp:write\""), "at-1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::needs_auth);
  EXPECT_THAT(r.error().message, HasSubstr("it asks for more scopes: mcp:write"));
  ASSERT_EQ(world.authorizations.size(), 1u);
  // A third one (`mcprt auth login alpha`), which never saw the 403.
  client_.reset();
  ASSERT_TRUE(login().ok());
  ASSERT_EQ(world.authorizations.size(), 2u);
  EXPECT_EQ(param(world.authorizations[1], "scope"), "mcp:basic mcp:write");
}

TEST_F(OAuthTest, StepUp_AnotherForbiddenIsNotAnAuthorization) {
  const std::string first = sign_in();
  auto r = refresh(403, "Bearer error=\"access_denied\"", first);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value(), first);  // the same token: the transport reports the 403
  EXPECT_EQ(world.authorizations.size(), 1u);
}

TEST_F(OAuthTest, StepUp_AlreadyDoneByAnotherRequestIsNotRepeated) {
  const std::string first = sign_in("scope=\"mcp:basic\"");
  const std::string challenge = world.challenge("error=\"insufficient_scope\", scope=\"mcp:write\"");
  auto a = refresh(403, challenge, first);
  ASSERT_TRUE(a.ok());
  auto b = refresh(403, challenge, first);  // a request that was rejected with the old token
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b.value(), *a.value());
  EXPECT_EQ(world.authorizations.size(), 2u);
}

// --- Interactive or not ------------------------------------------------------------------

TEST_F(OAuthTest, NotInteractive_NeedsAuthNamesTheServerAndTheFix) {
  options.interactive = false;
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::needs_auth);
  EXPECT_EQ(r.error().message,
            "Server \"alpha\": needs an OAuth sign-in (no authorization is stored for it); run "
            "`mcprt auth login alpha`");
  EXPECT_EQ(authorizer.flows_begun(), 0);
  EXPECT_TRUE(world.registrations.empty());
}

TEST_F(OAuthTest, NoAuthorizer_NeedsAuth) {
  options.authorizer = nullptr;
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::needs_auth);
}

TEST_F(OAuthTest, SetInteractiveFalseThenLoginStillSignsIn) {
  client().set_interactive(false);
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::needs_auth);
  ASSERT_TRUE(login().ok());
  auto token = get();
  ASSERT_TRUE(token.ok());
  EXPECT_EQ(*token.value(), "at-1");
}

TEST_F(OAuthTest, AuthorizerThatCannotStart_IsNeedsAuthWithItsReason) {
  class Broken final : public Authorizer {
   public:
    Result<std::unique_ptr<AuthorizeFlow>> begin(const AuthorizeFlowOptions& o) override {
      port = o.callback_port;
      return Error::make(ErrorCode::transport, "port 8765 is taken");
    }
    int port = -1;
  } broken;
  options.authorizer = &broken;
  server.oauth.callback_port = 8765;
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::needs_auth);
  EXPECT_THAT(r.error().message, HasSubstr("port 8765 is taken"));
  EXPECT_EQ(broken.port, 8765);
}

// --- get_token, login, logout, status ---------------------------------------------------------

TEST_F(OAuthTest, GetToken_NothingStored_NoNetwork) {
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().has_value());
  EXPECT_TRUE(world.requests.empty());
}

TEST_F(OAuthTest, GetToken_AfterASignIn_TheStoredToken_NoNetwork) {
  sign_in();
  const auto before = world.requests.size();
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value(), "at-1");
  EXPECT_EQ(world.requests.size(), before);
  // A second client over the same store (another process) finds it too.
  OAuthClient other(options);
  other.set_server(server);
  std::optional<Result<std::optional<std::string>>> got;
  other.get_token(request(), [&](Result<std::optional<std::string>> t) { got = std::move(t); });
  ex.run_until_idle();
  ASSERT_TRUE(got && got->ok());
  EXPECT_EQ(*got->value(), "at-1");
}

TEST_F(OAuthTest, Login_ProbesTheServerForItsChallenge) {
  world.intercept = [&](const FakeHttpExchange& req) {
    if (req.method() != "GET" || req.url() != server.url) return false;
    req.respond(401, "", {{"WWW-Authenticate", world.challenge("scope=\"probe:scope\"")}});
    return true;
  };
  ASSERT_TRUE(login().ok());
  EXPECT_EQ(world.requests.at(0), "GET https://mcp.example.com/mcp");
  EXPECT_EQ(param(world.authorizations.at(0), "scope"), "probe:scope");
}

TEST_F(OAuthTest, Login_UnknownServerOrNoAuthorizer) {
  auto unknown = login("nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::invalid_argument);
  EXPECT_THAT(unknown.error().message, HasSubstr("Server \"nope\""));
  options.authorizer = nullptr;
  client_.reset();
  auto none = login();
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("no Authorizer"));
}

TEST_F(OAuthTest, Logout_ForgetsTokensKeepsTheRegistration) {
  sign_in();
  ASSERT_TRUE(logout().ok());
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().has_value());
  auto st = status();
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->has_credential);
  EXPECT_FALSE(st->has_access_token);
  EXPECT_FALSE(st->has_refresh_token);
  EXPECT_EQ(st->client_id, "client-1");
  EXPECT_EQ(st->client_source, "registration");
  EXPECT_TRUE(logout().ok());  // nothing left: still fine
}

TEST_F(OAuthTest, Status_ShowsWhatIsStoredNeverTheTokens) {
  auto before = status();
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(before->known);
  EXPECT_FALSE(before->has_credential);
  sign_in("scope=\"mcp:basic\"");
  auto st = status();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->issuer, "https://auth.example.com");
  EXPECT_EQ(st->resource, "https://mcp.example.com/mcp");
  EXPECT_TRUE(st->has_access_token);
  EXPECT_TRUE(st->has_refresh_token);
  ASSERT_TRUE(st->expires_at_unix_ms.has_value());
  EXPECT_EQ(*st->expires_at_unix_ms, wall_ms + 3600 * 1000);
  EXPECT_FALSE(st->expired);
  EXPECT_THAT(st->scopes, ElementsAre("mcp:basic"));
  wall_ms += 3601 * 1000;
  EXPECT_TRUE(status()->expired);
  auto unknown = status("nope");
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->known);
}

TEST_F(OAuthTest, BearerServers_GoToTheHostStorage) {
  class HostStorage final : public AuthStorage {
   public:
    explicit HostStorage(Executor& ex) : ex_(ex) {}
    void get_token(const AuthRequest&, TokenCallback done) override {
      ex_.post([done] { done(std::optional<std::string>("host-token")); });
    }
    void refresh_token(const AuthRequest&, const std::string&, TokenCallback done) override {
      ex_.post([done] { done(std::optional<std::string>("host-token-2")); });
    }
    Executor& ex_;
  } host(ex);
  options.host_storage = &host;
  server.auth = AuthType::bearer;
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value(), "host-token");
  auto f = refresh(401, world.challenge(), "host-token");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f.value(), "host-token-2");
  EXPECT_TRUE(world.requests.empty());
}

TEST_F(OAuthTest, CallbacksNeverRunInsideTheCall) {
  bool ran = false;
  client().get_token(request(), [&](Result<std::optional<std::string>>) { ran = true; });
  EXPECT_FALSE(ran);
  client().refresh_token(request(401, "Bearer"), "", [&](Result<std::optional<std::string>>) {});
  client().login("nope", [&](Status) { ran = true; });
  EXPECT_FALSE(ran);
  ex.run_until_idle();
  EXPECT_TRUE(ran);
}

TEST_F(OAuthTest, DestroyingTheClientMidFlowRunsNoCallbackAndAbortsItsRequest) {
  bool ran = false;
  client().refresh_token(request(401, world.challenge()), "",
                         [&](Result<std::optional<std::string>>) { ran = true; });
  ex.run_until_idle();
  auto prm = http.take();
  ASSERT_TRUE(prm);
  client_.reset();
  EXPECT_TRUE(prm->aborted());
  prm->respond(404);
  ex.run_until_idle();
  EXPECT_FALSE(ran);
}

// --- Secrets ------------------------------------------------------------------------------

TEST_F(OAuthTest, NoTokenSecretCodeOrVerifierInLogsOrErrors) {
  world.auth_methods = std::vector<std::string>{"client_secret_post"};
  world.registered_secret = "reg-secret-XYZ";
  world.expires_in = 60;
  sign_in();
  wall_ms += 3600 * 1000;
  world.refuse_refresh = true;
  client().set_interactive(false);
  std::vector<std::string> errors;
  auto r = refresh(401, world.challenge(), "at-1");
  if (!r.ok()) errors.push_back(r.error().message);
  world.token_status = 500;
  auto r2 = refresh(401, world.challenge(), "at-1");
  if (!r2.ok()) errors.push_back(r2.error().message);
  std::string visible = everything_visible();
  for (const auto& e : errors) visible += e + "\n";
  const std::string verifier = param(world.token_requests.at(0), "code_verifier");
  for (const std::string& secret : {std::string("at-1"), std::string("rt-1"),
                                    std::string("reg-secret-XYZ"), std::string("code-1"), verifier,
                                    param(world.authorizations.at(0), "state")}) {
    EXPECT_THAT(visible, Not(HasSubstr(secret))) << secret;
  }
  EXPECT_FALSE(errors.empty());
}

}  // namespace
}  // namespace oauth_client_test
}  // namespace mcprt::testing
