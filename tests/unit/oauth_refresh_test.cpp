// The OAuth client's refresh transaction, authorization server migration, coalescing and
// the client_credentials grant (mcprt/oauth.hpp), against the in-process OAuth world.

#include <gmock/gmock.h>

#include "auth/oauth_records.hpp"
#include "mcprt/testing/memory_file_system.hpp"
#include "oauth_test_support.hpp"

namespace mcprt::testing {
namespace oauth_refresh_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string b64url_decode(std::string_view s) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
  };
  std::string out;
  unsigned buf = 0;
  int bits = 0;
  for (char c : s) {
    const int v = value(c);
    if (v < 0) break;
    buf = (buf << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xFF);
    }
  }
  return out;
}

class OAuthRefresh : public OAuthTest {
 protected:
  std::string cred_key() const {
    return detail::oauth::credential_key(world.issuer, world.prm_resource);
  }
  std::string stored() { return store.entries()[cred_key()]; }
};

TEST_F(OAuthRefresh, BeforeExpiry_GetTokenRefreshesAndPersistsTheRotatedTokenFirst) {
  ASSERT_EQ(sign_in(), "at-1");
  wall_ms += (3600 - 30) * 1000;  // inside the 60 s skew
  std::optional<Result<std::optional<std::string>>> got;
  std::string stored_at_callback;
  client().get_token(request(), [&](Result<std::optional<std::string>> r) {
    stored_at_callback = stored();
    got = std::move(r);
  });
  world.serve();
  ASSERT_TRUE(got && got->ok()) << (got ? ::testing::PrintToString(*got) : "no answer");
  EXPECT_EQ(*got->value(), "at-2");
  ASSERT_EQ(world.token_requests.size(), 2u);
  EXPECT_EQ(param(world.token_requests[1], "grant_type"), "refresh_token");
  EXPECT_EQ(param(world.token_requests[1], "refresh_token"), "rt-1");
  EXPECT_EQ(param(world.token_requests[1], "resource"), "https://mcp.example.com/mcp");
  EXPECT_EQ(param(world.token_requests[1], "client_id"), "client-1");
  // The rotated refresh token was in the store before the access token was handed out.
  EXPECT_THAT(stored_at_callback, HasSubstr("\"rt-2\""));
  EXPECT_THAT(stored_at_callback, Not(HasSubstr("\"rt-1\"")));
  EXPECT_EQ(world.authorizations.size(), 1u);
  EXPECT_FALSE(store.locked(cred_key()));
}

TEST_F(OAuthRefresh, NotYetExpiring_NoRefresh) {
  sign_in();
  wall_ms += 1000 * 1000;
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value(), "at-1");
  EXPECT_EQ(world.token_requests.size(), 1u);
}

TEST_F(OAuthRefresh, On401_RefreshesInsteadOfAuthorizing) {
  sign_in();
  auto r = refresh(401, world.challenge("error=\"invalid_token\""), "at-1");
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(*r.value(), "at-2");
  EXPECT_EQ(world.authorizations.size(), 1u);
  EXPECT_EQ(param(world.token_requests.at(1), "grant_type"), "refresh_token");
}

TEST_F(OAuthRefresh, HoldsTheLockAndRereads_AnotherProcessAlreadyRefreshed) {
  sign_in();
  wall_ms += 3590 * 1000;
  // "Another process" holds the credential's lock and is refreshing.
  std::unique_ptr<CredentialLock> other;
  store.lock(cred_key(), Millis(60000), [&](Result<std::unique_ptr<CredentialLock>> l) {
    ASSERT_TRUE(l.ok());
    other = std::move(l).value();
  });
  ex.run_until_idle();
  ASSERT_TRUE(other);
  std::optional<Result<std::optional<std::string>>> got;
  client().get_token(request(), [&](Result<std::optional<std::string>> r) { got = std::move(r); });
  world.serve();
  EXPECT_FALSE(got.has_value());  // waiting for the lock
  // It refreshes and writes its result, then lets go.
  auto rec = detail::oauth::CredentialRecord::from_text(stored(), world.issuer, world.prm_resource);
  ASSERT_TRUE(rec);
  rec->tokens.access_token = "at-from-the-other-process";
  rec->tokens.refresh_token = "rt-from-the-other-process";
  rec->tokens.expires_at_ms = wall_ms + 3600 * 1000;
  store.entries()[cred_key()] = rec->to_text();
  other.reset();
  world.serve();
  ASSERT_TRUE(got && got->ok());
  EXPECT_EQ(*got->value(), "at-from-the-other-process");
  EXPECT_EQ(world.token_requests.size(), 1u);  // no second refresh
}

TEST_F(OAuthRefresh, TheLockIsHeldDuringTheTokenRequest) {
  sign_in();
  wall_ms += 3590 * 1000;
  bool locked_during = false;
  world.on_token_request = [&](const Params& p) {
    if (param(p, "grant_type") == "refresh_token") locked_during = store.locked(cred_key());
  };
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(locked_during);
  EXPECT_FALSE(store.locked(cred_key()));
}

TEST_F(OAuthRefresh, UsesTheNewestRefreshTokenFoundUnderTheLock) {
  sign_in();
  // Another process rotated the refresh token but its access token is also near expiry.
  auto rec = detail::oauth::CredentialRecord::from_text(stored(), world.issuer, world.prm_resource);
  ASSERT_TRUE(rec);
  rec->tokens.refresh_token = "rt-newer";
  store.entries()[cred_key()] = rec->to_text();
  world.live_refresh = "rt-newer";
  wall_ms += 3590 * 1000;
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r.value(), "at-2");
  EXPECT_EQ(param(world.token_requests.at(1), "refresh_token"), "rt-newer");
}

TEST_F(OAuthRefresh, LockNeverFree_TheStillValidTokenAndAWarning) {
  sign_in();
  wall_ms += 3590 * 1000;
  std::unique_ptr<CredentialLock> other;
  store.lock(cred_key(), Millis(60000),
             [&](Result<std::unique_ptr<CredentialLock>> l) { other = std::move(l).value(); });
  ex.run_until_idle();
  std::optional<Result<std::optional<std::string>>> got;
  client().get_token(request(), [&](Result<std::optional<std::string>> r) { got = std::move(r); });
  ex.run_until_idle();
  ex.advance(options.lock_wait);
  ASSERT_TRUE(got && got->ok());
  EXPECT_EQ(*got->value(), "at-1");  // 10 s left on it
  EXPECT_TRUE(logger.has(LogLevel::warn, "locked"));
}

TEST_F(OAuthRefresh, Refused_FallsBackToANewAuthorization) {
  sign_in();
  world.refuse_refresh = true;
  auto r = refresh(401, world.challenge(), "at-1");
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(*r.value(), "at-2");
  EXPECT_EQ(world.authorizations.size(), 2u);
  EXPECT_THAT(stored(), HasSubstr("\"rt-2\""));
}

TEST_F(OAuthRefresh, Refused_NotInteractive_NeedsAuthAndTheDeadTokenIsGone) {
  sign_in();
  world.refuse_refresh = true;
  client().set_interactive(false);
  auto r = refresh(401, world.challenge(), "at-1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::needs_auth);
  EXPECT_THAT(r.error().message, HasSubstr("refused the stored refresh token"));
  EXPECT_THAT(r.error().message, HasSubstr("run `mcprt auth login alpha`"));
  EXPECT_FALSE(status()->has_refresh_token);
}

TEST_F(OAuthRefresh, GetToken_RefusedRefreshOfAnExpiredToken_NoTokenNoSignIn) {
  sign_in();
  world.refuse_refresh = true;
  wall_ms += 3700 * 1000;
  auto r = get();
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().has_value());
  EXPECT_EQ(world.authorizations.size(), 1u);
}

TEST_F(OAuthRefresh, Unreachable_AnErrorAndTheRefreshTokenStays) {
  sign_in();
  world.token_status = 503;
  auto r = refresh(401, world.challenge(), "at-1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::http_status);
  EXPECT_THAT(r.error().message, HasSubstr("HTTP 503"));
  EXPECT_TRUE(status()->has_refresh_token);
  world.token_status = 0;
  auto again = refresh(401, world.challenge(), "at-1");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(param(world.token_requests.back(), "refresh_token"), "rt-1");
}

TEST_F(OAuthRefresh, ConcurrentRejections_OneAuthorization) {
  std::vector<Result<std::optional<std::string>>> got;
  for (int i = 0; i < 3; ++i) {
    client().refresh_token(request(401, world.challenge()), "",
                           [&](Result<std::optional<std::string>> r) { got.push_back(std::move(r)); });
  }
  world.serve();
  ASSERT_EQ(got.size(), 3u);
  for (const auto& r : got) {
    ASSERT_TRUE(r.ok()) << r;
    EXPECT_EQ(*r.value(), "at-1");
  }
  EXPECT_EQ(world.authorizations.size(), 1u);
  EXPECT_EQ(world.registrations.size(), 1u);
}

TEST_F(OAuthRefresh, AsMigration_ReRegistersWithTheNewAsAndNeverShowsTheOldClient) {
  ASSERT_EQ(sign_in(), "at-1");
  world.issuer = "https://auth2.example.com";
  world.metadata_url = "https://auth2.example.com/.well-known/oauth-authorization-server";
  const std::size_t before = world.requests.size();
  auto r = refresh(401, world.challenge("error=\"invalid_token\""), "at-1");
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(*r.value(), "at-2");
  ASSERT_EQ(world.registrations.size(), 2u);
  ASSERT_EQ(world.authorizations.size(), 2u);
  EXPECT_EQ(param(world.authorizations[1], "client_id"), "client-2");
  for (std::size_t i = 1; i < world.token_requests.size(); ++i) {
    EXPECT_NE(param(world.token_requests[i], "client_id"), "client-1");
    EXPECT_NE(param(world.token_requests[i], "refresh_token"), "rt-1");  // no old credential
  }
  const std::vector<std::string> after(world.requests.begin() + static_cast<long>(before),
                                       world.requests.end());
  for (const auto& req : after) EXPECT_THAT(req, Not(HasSubstr("https://auth.example.com/")));
  auto st = status();
  EXPECT_EQ(st->issuer, "https://auth2.example.com");
  EXPECT_EQ(st->client_id, "client-2");
  // The old AS's credential is still under its own key, untouched.
  EXPECT_TRUE(store.entries().count(
      detail::oauth::credential_key("https://auth.example.com", world.prm_resource)));
}

TEST_F(OAuthRefresh, ClientCredentials_SecretWithBasic_NoUserStep) {
  server.oauth.grant = OAuthConfig::Grant::client_credentials;
  server.oauth.client_id = "machine";
  server.oauth.client_secret = "machine-secret";
  world.auth_methods = std::vector<std::string>{"client_secret_basic"};
  client().set_interactive(false);
  auto r = refresh(401, world.challenge("scope=\"jobs:run\""));
  ASSERT_TRUE(r.ok()) << r;
  EXPECT_EQ(*r.value(), "at-1");
  EXPECT_EQ(authorizer.flows_begun(), 0);
  EXPECT_TRUE(world.authorizations.empty());
  EXPECT_TRUE(world.registrations.empty());
  const Params& t = world.token_requests.at(0);
  EXPECT_EQ(param(t, "grant_type"), "client_credentials");
  EXPECT_EQ(param(t, "scope"), "jobs:run");
  EXPECT_EQ(param(t, "resource"), "https://mcp.example.com/mcp");
  EXPECT_EQ(world.token_authorization.at(0), "Basic " + detail::oauth::base64("machine:machine-secret"));
  auto cached = get();
  EXPECT_EQ(*cached.value(), "at-1");
  auto login_attempt = login();
  ASSERT_FALSE(login_attempt.ok());
  EXPECT_EQ(login_attempt.error().code, ErrorCode::invalid_argument);
}

TEST_F(OAuthRefresh, ClientCredentials_PrivateKeyJwtAssertion) {
  server.oauth.grant = OAuthConfig::Grant::client_credentials;
  server.oauth.client_id = "conformance-test-client";
  server.oauth.private_key = "-----BEGIN PRIVATE KEY-----\nFAKE\n-----END PRIVATE KEY-----\n";
  server.oauth.signing_alg = "ES256";
  world.auth_methods = std::vector<std::string>{"private_key_jwt"};
  auto r = refresh(401, world.challenge());
  ASSERT_TRUE(r.ok()) << r;
  const Params& t = world.token_requests.at(0);
  EXPECT_EQ(param(t, "client_assertion_type"),
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
  EXPECT_EQ(world.token_authorization.at(0), "");
  const std::string jwt = param(t, "client_assertion");
  const std::size_t dot1 = jwt.find('.');
  const std::size_t dot2 = jwt.rfind('.');
  ASSERT_NE(dot1, dot2);
  const json header = json::parse(b64url_decode(jwt.substr(0, dot1)));
  const json claims = json::parse(b64url_decode(jwt.substr(dot1 + 1, dot2 - dot1 - 1)));
  EXPECT_EQ(header.value("alg", ""), "ES256");
  EXPECT_EQ(claims.value("iss", ""), "conformance-test-client");
  EXPECT_EQ(claims.value("sub", ""), "conformance-test-client");
  EXPECT_EQ(claims.value("aud", ""), "https://auth.example.com");
  EXPECT_EQ(claims.value("exp", 0) - claims.value("iat", 0), 300);
  EXPECT_EQ(claims.value("iat", 0), wall_ms / 1000);
  EXPECT_FALSE(claims.value("jti", "").empty());
  EXPECT_EQ(b64url_decode(jwt.substr(dot2 + 1)),
            FakeCrypto::signature_of("ES256", jwt.substr(0, dot2)));
  ASSERT_EQ(crypto.keys_used.size(), 1u);
  EXPECT_EQ(crypto.keys_used[0], server.oauth.private_key);
  // The key is not stored and not logged.
  for (const auto& [key, value] : store.entries()) EXPECT_THAT(value, Not(HasSubstr("FAKE")));
  EXPECT_THAT(everything_visible(), Not(HasSubstr("FAKE")));
}

TEST_F(OAuthRefresh, ClientCredentials_PrivateKeyFileThroughTheFileSystem) {
  MemoryFileSystem fs;
  fs.add("/keys/m.pem", "-----BEGIN PRIVATE KEY-----\nFROMFILE\n-----END PRIVATE KEY-----\n");
  options.file_system = &fs;
  server.oauth.grant = OAuthConfig::Grant::client_credentials;
  server.oauth.client_id = "m";
  server.oauth.private_key_file = "/keys/m.pem";
  auto r = refresh(401, world.challenge());
  ASSERT_TRUE(r.ok()) << r;
  ASSERT_EQ(crypto.keys_used.size(), 1u);
  EXPECT_THAT(crypto.keys_used[0], HasSubstr("FROMFILE"));
  EXPECT_EQ(param(world.token_requests.at(0), "client_id"), "");  // the assertion names it
}

TEST_F(OAuthRefresh, ClientCredentials_SigningFailureIsAClearError) {
  server.oauth.grant = OAuthConfig::Grant::client_credentials;
  server.oauth.client_id = "m";
  server.oauth.private_key = "-----BEGIN PRIVATE KEY-----\nSECRETKEY\n-----END PRIVATE KEY-----\n";
  crypto.fail_sign = Error::make(ErrorCode::invalid_argument, "unreadable RS256 key");
  auto r = refresh(401, world.challenge());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("signing the client assertion failed: unreadable RS256 key"));
  EXPECT_THAT(r.error().message, Not(HasSubstr("SECRETKEY")));
  EXPECT_TRUE(world.token_requests.empty());
}

}  // namespace
}  // namespace oauth_refresh_test
}  // namespace mcprt::testing
