// The OAuth client's pure helpers (core/src/auth/oauth_wire.hpp): challenge parsing,
// encodings, the discovery URL orders, the resource and issuer comparisons.

#include <gtest/gtest.h>

#include "auth/oauth_wire.hpp"
#include "mcprt/url.hpp"

namespace mcprt::detail::oauth {
namespace oauth_wire_test {  // this file's own names in a unity batch
namespace {

Url url(const char* text) { return *parse_http_url(text); }

TEST(OAuthWire, Challenge_ReadsQuotedAndTokenParams) {
  auto c = parse_bearer_challenge(
      R"(Bearer realm="mcp", error="insufficient_scope", scope="files:read files:write", )"
      R"(resource_metadata="https://h/.well-known/oauth-protected-resource/mcp")");
  EXPECT_TRUE(c.bearer);
  EXPECT_EQ(c.error, "insufficient_scope");
  EXPECT_EQ(c.scope, "files:read files:write");
  EXPECT_EQ(c.resource_metadata, "https://h/.well-known/oauth-protected-resource/mcp");
  auto t = parse_bearer_challenge("bearer error=invalid_token,scope=a");
  EXPECT_TRUE(t.bearer);
  EXPECT_EQ(t.error, "invalid_token");
  EXPECT_EQ(t.scope, "a");
}

TEST(OAuthWire, Challenge_PicksTheBearerOneAmongSeveral) {
  auto c = parse_bearer_challenge(
      R"(Basic realm="x", scope="basic-scope", Bearer scope="mcp", DPoP algs="ES256", scope="dpop")");
  EXPECT_TRUE(c.bearer);
  EXPECT_EQ(c.scope, "mcp");
  EXPECT_FALSE(parse_bearer_challenge(R"(Basic realm="x", scope="s")").bearer);
  EXPECT_EQ(parse_bearer_challenge(R"(Basic realm="x", scope="s")").scope, "");
}

TEST(OAuthWire, Challenge_EscapesAndGarbageDoNotBreakIt) {
  auto c = parse_bearer_challenge(R"(Bearer error_description="a \"quoted\" word", scope="x)");
  EXPECT_EQ(c.error_description, "a \"quoted\" word");
  EXPECT_EQ(c.scope, "x");  // unterminated quote: to the end
  auto g = parse_bearer_challenge("\x01\x02 ===,,, Bearer ,,, scope=\"ok\"");
  EXPECT_TRUE(g.bearer);
  EXPECT_EQ(g.scope, "ok");
  EXPECT_FALSE(parse_bearer_challenge("").bearer);
}

TEST(OAuthWire, Base64urlAndBase64) {
  EXPECT_EQ(base64url(""), "");
  EXPECT_EQ(base64url("f"), "Zg");
  EXPECT_EQ(base64url("fo"), "Zm8");
  EXPECT_EQ(base64url("foo"), "Zm9v");
  EXPECT_EQ(base64url("\xfb\xff"), "-_8");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("client:secret"), "Y2xpZW50OnNlY3JldA==");
}

TEST(OAuthWire, FormEncodingRoundTrips) {
  const Params p{{"scope", "a b"}, {"redirect_uri", "http://127.0.0.1:5/cb?x=1&y"}, {"k", "é+%"}};
  const std::string body = form_body(p);
  EXPECT_EQ(body.find(' '), std::string::npos);
  EXPECT_EQ(parse_query(body), p);
  EXPECT_EQ(parse_query("a=1+2&b=%zz&c"), (Params{{"a", "1 2"}, {"b", "%zz"}, {"c", ""}}));
}

TEST(OAuthWire, AppendQueryKeepsAnExistingQuery) {
  EXPECT_EQ(append_query(url("https://as/authorize?tenant=1"), {{"state", "s"}}),
            "https://as/authorize?tenant=1&state=s");
  EXPECT_EQ(append_query(url("https://as/authorize"), {{"a", "b c"}}), "https://as/authorize?a=b%20c");
}

TEST(OAuthWire, PrmWellKnownUrls_PathFormThenRoot) {
  EXPECT_EQ(prm_well_known_urls(url("https://h:8443/api/mcp")),
            (std::vector<std::string>{"https://h:8443/.well-known/oauth-protected-resource/api/mcp",
                                      "https://h:8443/.well-known/oauth-protected-resource"}));
  EXPECT_EQ(prm_well_known_urls(url("https://h/")),
            (std::vector<std::string>{"https://h/.well-known/oauth-protected-resource"}));
}

TEST(OAuthWire, AsMetadataUrls_ThreeWithAPathTwoWithout) {
  EXPECT_EQ(as_metadata_urls(url("https://as/tenant1")),
            (std::vector<std::string>{"https://as/.well-known/oauth-authorization-server/tenant1",
                                      "https://as/.well-known/openid-configuration/tenant1",
                                      "https://as/tenant1/.well-known/openid-configuration"}));
  EXPECT_EQ(as_metadata_urls(url("https://as")),
            (std::vector<std::string>{"https://as/.well-known/oauth-authorization-server",
                                      "https://as/.well-known/openid-configuration"}));
}

TEST(OAuthWire, ResourceCovers_SameOriginAndAPathPrefixAtASegment) {
  const Url server = url("https://h/api/mcp");
  EXPECT_TRUE(resource_covers(url("https://h/api/mcp"), server));
  EXPECT_TRUE(resource_covers(url("https://h"), server));
  EXPECT_TRUE(resource_covers(url("https://h/api"), server));
  EXPECT_TRUE(resource_covers(url("https://h/api/"), server));
  EXPECT_FALSE(resource_covers(url("https://h/ap"), server));
  EXPECT_FALSE(resource_covers(url("https://h/api/mcp/x"), server));
  EXPECT_FALSE(resource_covers(url("https://evil.example.com/api/mcp"), server));
  EXPECT_FALSE(resource_covers(url("http://h/api/mcp"), server));
  EXPECT_FALSE(resource_covers(url("https://h:444/api/mcp"), server));
}

TEST(OAuthWire, SameIssuer_OnlyOneTrailingSlashAside) {
  EXPECT_TRUE(same_issuer("https://as", "https://as"));
  EXPECT_TRUE(same_issuer("https://as/", "https://as"));
  EXPECT_FALSE(same_issuer("https://AS", "https://as"));
  EXPECT_FALSE(same_issuer("https://attacker.example.com", "https://as"));
  EXPECT_FALSE(same_issuer("", "https://as"));
}

TEST(OAuthWire, WireUrls_HttpsUnlessLoopbackAndNoUserinfo) {
  EXPECT_TRUE(check_wire_url("https://as.example.com/x", "it"));
  EXPECT_TRUE(check_wire_url("http://localhost:3000/x", "it"));
  EXPECT_TRUE(check_wire_url("http://127.0.0.7/x", "it"));
  EXPECT_TRUE(check_wire_url("http://[::1]:9/x", "it"));
  auto plain = check_wire_url("http://as.example.com/x", "the token endpoint");
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.error().message.find("the token endpoint http://as.example.com is not https"),
            std::string::npos);
  EXPECT_FALSE(check_wire_url("https://user:pw@as/x", "it"));
  EXPECT_FALSE(check_wire_url("javascript:alert(1)", "it"));
  EXPECT_FALSE(check_wire_url("http://127.example.com/x", "it"));
}

TEST(OAuthWire, SafeTextMasksSecretsAndControls) {
  const std::string s = safe_text("bad\r\nInjected access_token=abc123 and more", 200);
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_EQ(s.find("abc123"), std::string::npos);
  EXPECT_EQ(safe_text(std::string(500, 'a'), 10), std::string(10, 'a') + "...");
}

TEST(OAuthWire, Scopes_SplitJoinUnion) {
  EXPECT_EQ(split_scopes("  a b  a c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(join_scopes({"a", "b"}), "a b");
  EXPECT_EQ(scope_union({"a", "b"}, {"b", "c"}), (std::vector<std::string>{"a", "b", "c"}));
}

}  // namespace
}  // namespace oauth_wire_test
}  // namespace mcprt::detail::oauth
