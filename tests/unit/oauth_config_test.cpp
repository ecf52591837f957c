// The `oauth` block of a server entry (mcprt/config.hpp): parsing, validation, substitution,
// and that no message shows a secret.

#include <gmock/gmock.h>

#include "mcprt/config.hpp"
#include "mcprt/discovery.hpp"

namespace mcprt {
namespace oauth_config_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Result<ServerConfig> parse(const json& entry) {
  ParseOptions o;
  o.validate = true;
  auto parsed = parse_mcp_servers(json{{"mcpServers", {{"s", entry}}}}, "/cfg.json", o);
  if (!parsed.errors.empty()) return parsed.errors.front().to_error();
  if (parsed.servers.empty()) return Error::make(ErrorCode::internal, "no server");
  return parsed.servers.front();
}

TEST(OAuthConfig, AllFieldsParsed_AndOAuthImpliesTheAuthType) {
  auto c = parse({{"url", "https://h/mcp"},
                  {"oauth",
                   {{"clientId", "id"},
                    {"clientSecret", "sec"},
                    {"scopes", {"a", "b"}},
                    {"clientMetadataUrl", "https://me.example.com/client.json"},
                    {"callbackPort", 8765}}}});
  ASSERT_TRUE(c.ok()) << c;
  EXPECT_TRUE(c->oauth.present);
  EXPECT_EQ(c->oauth.client_id, "id");
  EXPECT_EQ(c->oauth.client_secret, "sec");
  EXPECT_EQ(c->oauth.scopes, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c->oauth.client_metadata_url, "https://me.example.com/client.json");
  EXPECT_EQ(c->oauth.callback_port, 8765);
  EXPECT_EQ(c->oauth.grant, OAuthConfig::Grant::authorization_code);
  EXPECT_EQ(c->auth.type, AuthType::oauth);
  auto plain = parse({{"url", "https://h/mcp"}});
  EXPECT_FALSE(plain->oauth.present);
  EXPECT_EQ(plain->auth.type, AuthType::none);
  auto bearer = parse({{"url", "https://h/mcp"}, {"auth", {{"type", "bearer"}}}, {"oauth", json::object()}});
  EXPECT_EQ(bearer->auth.type, AuthType::bearer);  // an explicit auth wins
}

TEST(OAuthConfig, ScopesAsOneSpaceSeparatedString) {
  auto c = parse({{"url", "https://h/mcp"}, {"oauth", {{"scopes", "read  write"}}}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->oauth.scopes, (std::vector<std::string>{"read", "write"}));
}

TEST(OAuthConfig, ClientCredentialsWithAKey) {
  auto c = parse({{"url", "https://h/mcp"},
                  {"oauth",
                   {{"grant", "client_credentials"},
                    {"clientId", "m"},
                    {"privateKeyFile", "/k.pem"},
                    {"signingAlg", "ES256"}}}});
  ASSERT_TRUE(c.ok()) << c;
  EXPECT_EQ(c->oauth.grant, OAuthConfig::Grant::client_credentials);
  EXPECT_EQ(c->oauth.private_key_file, "/k.pem");
  EXPECT_EQ(c->oauth.signing_alg, "ES256");
}

struct BadCase {
  const char* oauth;  // JSON text
  const char* message;
};

class OAuthConfigBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(OAuthConfigBad, ClearErrorNamingTheField) {
  auto c = parse({{"url", "https://h/mcp"}, {"oauth", json::parse(GetParam().oauth)}});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::invalid_config);
  EXPECT_THAT(c.error().message, HasSubstr("Server \"s\""));
  EXPECT_THAT(c.error().message, HasSubstr("\"oauth\""));
  EXPECT_THAT(c.error().message, HasSubstr(GetParam().message));
  // Secret values never appear in a message.
  EXPECT_THAT(c.error().message, Not(HasSubstr("TOPSECRET")));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OAuthConfigBad,
    ::testing::Values(
        BadCase{R"("not an object")", "\"oauth\" must be an object"},
        BadCase{R"({"clientId": 5})", "\"clientId\" must be a string"},
        BadCase{R"({"clientSecret": "TOPSECRET"})", "\"clientSecret\" needs \"clientId\""},
        BadCase{R"({"callbackPort": 70000})", "\"callbackPort\" must be a port number"},
        BadCase{R"({"callbackPort": "80"})", "\"callbackPort\" must be a port number"},
        BadCase{R"({"scopes": ["ok", "has space"]})", "invalid scope"},
        BadCase{R"({"scopes": ["bad\"quote"]})", "invalid scope"},
        BadCase{R"({"clientMetadataUrl": "http://me.example.com/c.json"})",
                "\"clientMetadataUrl\" must be an https:// URL"},
        BadCase{R"({"clientMetadataUrl": "https://me.example.com"})", "with a path"},
        BadCase{R"({"grant": "password"})", "unknown grant \"password\""},
        BadCase{R"({"grant": "client_credentials"})", "needs \"clientId\""},
        BadCase{R"({"grant": "client_credentials", "clientId": "m"})",
                "needs \"clientSecret\" or a private key"},
        BadCase{R"({"grant": "client_credentials", "clientId": "m", "clientSecret": "TOPSECRET",
                    "privateKey": "TOPSECRET"})",
                "not both"},
        BadCase{R"({"clientId": "m", "privateKey": "TOPSECRET"})",
                "only with \"grant\": \"client_credentials\""},
        BadCase{R"({"grant": "client_credentials", "clientId": "m", "privateKey": "TOPSECRET",
                    "privateKeyFile": "/k"})",
                "one of \"privateKey\" and \"privateKeyFile\""},
        BadCase{R"({"grant": "client_credentials", "clientId": "m", "privateKey": "TOPSECRET",
                    "signingAlg": "HS256"})",
                "\"signingAlg\" must be \"RS256\" or \"ES256\""}));

TEST(OAuthConfig, StdioServerWithOAuthIsAnError) {
  auto c = parse({{"command", "x"}, {"oauth", {{"clientId", "a"}}}});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("applies to http and sse servers only"));
}

TEST(OAuthConfig, SecretsComeFromTheEnvironment) {
  ParseOptions o;
  auto parsed = parse_mcp_servers(
      json{{"mcpServers",
            {{"s",
              {{"url", "https://h/mcp"},
               {"oauth", {{"clientId", "${ID}"}, {"clientSecret", "${SECRET}"}}}}}}}},
      "/cfg.json", o);
  ASSERT_EQ(parsed.servers.size(), 1u);
  EnvLookup env = [](std::string_view n) -> std::optional<std::string> {
    if (n == "ID") return "from-env-id";
    if (n == "SECRET") return "from-env-secret";
    return std::nullopt;
  };
  ServerConfig c = substitute_variables(parsed.servers[0], env, nullptr);
  EXPECT_EQ(c.oauth.client_id, "from-env-id");
  EXPECT_EQ(c.oauth.client_secret, "from-env-secret");
  EXPECT_TRUE(validate_server_config(c).ok());
}

}  // namespace
}  // namespace oauth_config_test
}  // namespace mcprt
