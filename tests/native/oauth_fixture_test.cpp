// The OAuth fixture (`mcprt-oauth-fixture`, demo/oauth/) proven on its own, driven with
// plain HTTP requests (httplib::Client, hand-written OAuth parameters) so that a bug in
// mcprt's OAuth client cannot hide a bug in the world it is tested against: metadata,
// registration, the authorization redirect, the token endpoint, rotating refresh tokens
// and replay detection, expiry, step-up, a moved authorization server, counters, CORS
// and a log without secrets.
//
// Time-dependent behaviour (token expiry) runs on the fixture's own clock, which the
// test advances through /admin/advance-clock; nothing here sleeps or times anything.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "oauth_fixture_process.hpp"

namespace oauth_fixture_test {  // this file's own names in a unity batch
namespace {

using json = nlohmann::json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using mcprt::native::test::OAuthFixtureProcess;

// RFC 7636 Appendix B: this verifier's S256 challenge is that challenge.
constexpr const char* kVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
constexpr const char* kChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
constexpr const char* kOtherVerifier = "x2EBNRvVWnB-sdUJJkOWoB96qk2CmEVwxD4I2dc_vbXd3VoF";
constexpr const char* kRedirect = "http://127.0.0.1:41999/callback";
constexpr const char* kAcceptBoth = "application/json, text/event-stream";

std::string percent_decode(const std::string& s) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i] == '+' ? ' ' : s[i]);
    }
  }
  return out;
}

// application/x-www-form-urlencoded, every byte but the unreserved ones escaped (httplib's
// own Params encoding leaves '&' and '=' as they are).
std::string form_encode(const std::map<std::string, std::string>& params) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out.push_back('&');
    for (const std::string* part : {&k, &v}) {
      for (char c : *part) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~') {
          out.push_back(c);
        } else {
          const auto b = static_cast<unsigned char>(c);
          out += {'%', kHex[b >> 4], kHex[b & 0xF]};
        }
      }
      if (part == &k) out.push_back('=');
    }
  }
  return out;
}

// The query parameters of a redirect Location.
std::map<std::string, std::string> query_of(const std::string& url) {
  std::map<std::string, std::string> out;
  const auto q = url.find('?');
  if (q == std::string::npos) return out;
  std::string rest = url.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    out[percent_decode(pair.substr(0, eq))] =
        eq == std::string::npos ? std::string() : percent_decode(pair.substr(eq + 1));
    rest = amp == std::string::npos ? std::string() : rest.substr(amp + 1);
  }
  return out;
}

// The Location header of a GET, as sent. httplib 0.11's client percent-decodes response
// header values, which turns "state=a%26b" into "state=a&b"; a redirect's query must be
// read as the server wrote it, so this request goes over a plain socket.
struct RawAnswer {
  int status = 0;
  std::string location;  // "" when there is none
  std::string body;
};

RawAnswer raw_get(int port, const std::string& target) {
  RawAnswer out;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return out;
  timeval tv{10, 0};  // a safety net against a hung fixture
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string raw;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                "\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) raw.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  const auto head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || head_end == std::string::npos) return out;
  out.status = std::atoi(raw.c_str() + 9);
  out.body = raw.substr(head_end + 4);
  std::size_t at = raw.find("\r\n");
  while (at < head_end) {
    const std::size_t next = raw.find("\r\n", at + 2);
    const std::string line = raw.substr(at + 2, next - at - 2);
    if (line.size() > 10 && strncasecmp(line.c_str(), "Location: ", 10) == 0) out.location = line.substr(10);
    at = next;
  }
  return out;
}

json body_of(const httplib::Result& r) {
  return r ? json::parse(r->body, nullptr, false) : json();
}

struct Response {
  int status = 0;
  json body;
  httplib::Headers headers;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

Response response_of(const httplib::Result& r) {
  Response out;
  if (!r) return out;
  out.status = r->status;
  out.body = json::parse(r->body, nullptr, false);
  out.headers = r->headers;
  return out;
}

// One running fixture and the HTTP a client would speak to it.
class World {
 public:
  explicit World(std::vector<std::string> args = {}) : process_(std::move(args)) {}
  // In a sanitizer build tree the fixture is sanitized too: its reports fail the test.
  ~World() {
    process_.stop_with(SIGTERM);
    const std::string log = process_.log();
    EXPECT_THAT(log, Not(HasSubstr("runtime error:")));
    EXPECT_THAT(log, Not(HasSubstr("Sanitizer")));
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  bool up() const { return process_.error().empty(); }
  const std::string& error() const { return process_.error(); }
  const json& ready() const { return process_.ready(); }
  std::string mcp_url() const { return ready().value("mcp_url", ""); }
  // The authorization server the helpers below talk to: the first one, until follow().
  std::string issuer() const { return issuer_.empty() ? ready().value("issuer", "") : issuer_; }
  void follow(const std::string& issuer) { issuer_ = issuer; }
  std::string log() const { return process_.log(); }
  OAuthFixtureProcess& process() { return process_; }

  httplib::Client mcp() const { return client(process_.mcp_port()); }
  httplib::Client as() const { return client(process_.as_port()); }

  Response admin(const std::string& action, const json& body = json::object()) {
    return response_of(mcp().Post(("/admin/" + action).c_str(), body.dump(), "application/json"));
  }
  json counters() { return body_of(mcp().Get("/admin/counters")).value("counters", json::object()); }

  // The path of a URL on either server (the fixture's URLs are all http://127.0.0.1:N/...).
  static std::string path_of(const std::string& url) {
    return url.substr(url.find('/', std::string("http://").size()));
  }

  json as_metadata() {
    const std::string suffix = path_of(issuer() + "/").substr(1);  // "" or "as2/"
    std::string path = "/.well-known/oauth-authorization-server";
    if (!suffix.empty()) path += "/" + suffix.substr(0, suffix.size() - 1);
    return body_of(as().Get(path.c_str()));
  }

  Response register_client(json metadata = json::object()) {
    json body{{"redirect_uris", {kRedirect}},
              {"token_endpoint_auth_method", "none"},
              {"grant_types", {"authorization_code", "refresh_token"}},
              {"response_types", {"code"}},
              {"application_type", "native"},
              {"client_name", "oauth_fixture_test"}};
    body.update(metadata);
    const std::string path = path_of(as_metadata().value("registration_endpoint", issuer() + "/register"));
    return response_of(as().Post(path.c_str(), body.dump(), "application/json"));
  }

  // The authorization request with every parameter right unless `change` says otherwise
  // (an empty value removes the parameter).
  RawAnswer authorize(const std::string& client_id, std::map<std::string, std::string> change = {}) {
    std::map<std::string, std::string> p{{"response_type", "code"},
                                         {"client_id", client_id},
                                         {"redirect_uri", kRedirect},
                                         {"code_challenge", kChallenge},
                                         {"code_challenge_method", "S256"},
                                         {"state", "st-1"},
                                         {"resource", mcp_url()},
                                         {"scope", "mcp:tools offline_access"}};
    for (const auto& [k, v] : change) p[k] = v;
    for (auto it = p.begin(); it != p.end();) it = it->second.empty() ? p.erase(it) : std::next(it);
    const std::string path = path_of(as_metadata().value("authorization_endpoint", issuer() + "/authorize"));
    return raw_get(process_.as_port(), path + "?" + form_encode(p));
  }

  // The code of a successful authorization, or "" (with a test failure).
  std::string code_for(const std::string& client_id, std::map<std::string, std::string> change = {}) {
    const RawAnswer r = authorize(client_id, std::move(change));
    EXPECT_EQ(r.status, 302) << r.body;
    auto q = query_of(r.location);
    EXPECT_EQ(q.count("error"), 0u) << q["error"] << ": " << q["error_description"];
    return q["code"];
  }

  Response token(std::map<std::string, std::string> form, const httplib::Headers& headers = {}) {
    for (auto it = form.begin(); it != form.end();) it = it->second.empty() ? form.erase(it) : std::next(it);
    const std::string path = path_of(as_metadata().value("token_endpoint", issuer() + "/token"));
    return response_of(as().Post(path.c_str(), headers, form_encode(form), "application/x-www-form-urlencoded"));
  }

  Response redeem(const std::string& client_id, const std::string& code,
                  std::map<std::string, std::string> change = {}) {
    std::map<std::string, std::string> form{{"grant_type", "authorization_code"},
                                            {"code", code},
                                            {"client_id", client_id},
                                            {"redirect_uri", kRedirect},
                                            {"code_verifier", kVerifier},
                                            {"resource", mcp_url()}};
    for (const auto& [k, v] : change) form[k] = v;
    return token(form);
  }

  Response refresh(const std::string& client_id, const std::string& refresh_token) {
    return token({{"grant_type", "refresh_token"},
                  {"refresh_token", refresh_token},
                  {"client_id", client_id},
                  {"resource", mcp_url()}});
  }

  // DCR + authorize + token: the token response.
  json login(std::map<std::string, std::string> change = {}) {
    const Response reg = register_client();
    EXPECT_EQ(reg.status, 201) << reg.body.dump();
    client_id_ = reg.body.value("client_id", "");
    const Response t = redeem(client_id_, code_for(client_id_, std::move(change)));
    EXPECT_EQ(t.status, 200) << t.body.dump();
    return t.body;
  }
  const std::string& client_id() const { return client_id_; }

  // One JSON-RPC message to /mcp.
  Response mcp_post(const std::string& access_token, const json& message,
                    const std::string& session = "") {
    httplib::Headers h{{"Accept", kAcceptBoth}};
    if (!access_token.empty()) h.emplace("Authorization", "Bearer " + access_token);
    if (!session.empty()) h.emplace("Mcp-Session-Id", session);
    return response_of(mcp().Post("/mcp", h, message.dump(), "application/json"));
  }

  // initialize + initialized with this token: the session id ("" when refused).
  std::string open_session(const std::string& access_token) {
    const Response r = mcp_post(access_token,
                                json{{"jsonrpc", "2.0"},
                                     {"id", 1},
                                     {"method", "initialize"},
                                     {"params",
                                      {{"protocolVersion", "2025-11-25"},
                                       {"capabilities", json::object()},
                                       {"clientInfo", {{"name", "oauth_fixture_test"}, {"version", "1"}}}}}});
    if (r.status != 200) return {};
    const std::string session = r.header("Mcp-Session-Id");
    mcp_post(access_token, json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, session);
    return session;
  }

  Response call_tool(const std::string& access_token, const std::string& session,
                     const std::string& tool, const json& args) {
    return mcp_post(access_token,
                    json{{"jsonrpc", "2.0"},
                         {"id", 7},
                         {"method", "tools/call"},
                         {"params", {{"name", tool}, {"arguments", args}}}},
                    session);
  }

 private:
  static httplib::Client client(int port) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(10);
    c.set_read_timeout(20);
    return c;
  }

  OAuthFixtureProcess process_;
  std::string issuer_;
  std::string client_id_;
};

#define ASSERT_WORLD_UP(w) ASSERT_TRUE((w).up()) << (w).error()

TEST(OAuthFixture, PrintsOneReadyLineWithLoopbackUrlsAndStopsOnSigterm) {
  World w;
  ASSERT_WORLD_UP(w);
  const json& r = w.ready();
  EXPECT_EQ(r["mcp_url"], "http://127.0.0.1:" + std::to_string(r.value("mcp_port", 0)) + "/mcp");
  EXPECT_EQ(r["issuer"], "http://127.0.0.1:" + std::to_string(r.value("as_port", 0)));
  EXPECT_NE(r.value("mcp_port", 0), r.value("as_port", 0));
  EXPECT_EQ(r["resource_metadata_url"],
            "http://127.0.0.1:" + std::to_string(r.value("mcp_port", 0)) +
                "/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(r["secret_prefixes"], json({"fxat_", "fxrt_", "fxcode_", "fxcs_"}));
  const auto status = w.process().stop_with(SIGTERM);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  EXPECT_THAT(w.log(), HasSubstr("stopped (SIGTERM)"));
}

TEST(OAuthFixture, BadFlagsExitWithStatus2AndSayWhy) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--tool-scope", "create_issue"}, "expected TOOL=SCOPE"},
           {{"--switches", R"({"no_such_switch": 1})"}, "unknown switch \"no_such_switch\""},
           {{"--authorization-iss", "sometimes"}, "bad value for switch \"authorization_iss\""},
           {{"--client", "id:secret:client_secret_jwt"}, "--client: expected"},
           {{"--port", "70000"}, "expected a port"},
           {{"--bogus"}, "unknown argument: --bogus"}}) {
    OAuthFixtureProcess p(c.args);
    EXPECT_FALSE(p.error().empty());  // no ready line
    const auto status = p.wait_exit();
    ASSERT_TRUE(status.has_value());
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 2) << c.args[0];
    EXPECT_THAT(p.log(), HasSubstr(c.says)) << c.args[0];
  }
}

TEST(OAuthFixture, McpWithoutTokenIs401NamingResourceMetadataAndScope) {
  World w;
  ASSERT_WORLD_UP(w);
  const Response r = w.mcp_post("", json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
  EXPECT_EQ(r.status, 401);
  const std::string challenge = r.header("WWW-Authenticate");
  EXPECT_EQ(challenge, "Bearer resource_metadata=\"" + w.ready()["resource_metadata_url"].get<std::string>() +
                           "\", scope=\"mcp:tools\"");
  // RFC 6750 §3.1: no error code for a request without credentials.
  EXPECT_THAT(challenge, Not(HasSubstr("error=")));
  EXPECT_THAT(r.header("Access-Control-Expose-Headers"), AllOf(HasSubstr("www-authenticate"), HasSubstr("mcp-session-id")));
  EXPECT_EQ(r.header("Access-Control-Allow-Origin"), "*");

  // A token that does not exist is invalid_token; one in the URL is refused outright.
  const Response bad = w.mcp_post("fxat_made-up", json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
  EXPECT_EQ(bad.status, 401);
  EXPECT_THAT(bad.header("WWW-Authenticate"), HasSubstr("error=\"invalid_token\""));
  auto in_url = w.mcp().Post("/mcp?access_token=fxat_x", httplib::Headers{{"Accept", kAcceptBoth}}, "{}",
                             "application/json");
  ASSERT_TRUE(in_url);
  EXPECT_EQ(in_url->status, 400);
  EXPECT_EQ(w.counters().value("mcp.401", 0), 2);
}

TEST(OAuthFixture, MetadataNamesTheResourceTheIssuerS256AndOfflineAccess) {
  World w;
  ASSERT_WORLD_UP(w);
  const json prm = body_of(w.mcp().Get(World::path_of(w.ready()["resource_metadata_url"]).c_str()));
  EXPECT_EQ(prm["resource"], w.mcp_url());
  EXPECT_EQ(prm["authorization_servers"], json({w.issuer()}));
  EXPECT_THAT(prm["scopes_supported"].get<std::vector<std::string>>(), Contains("mcp:tools"));
  // The root form is not this resource's metadata (RFC 9728 §3.1 inserts the path).
  auto root = w.mcp().Get("/.well-known/oauth-protected-resource");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 404);

  const json as = w.as_metadata();
  EXPECT_EQ(as["issuer"], w.issuer());
  EXPECT_EQ(as["code_challenge_methods_supported"], json({"S256"}));
  EXPECT_EQ(as["authorization_response_iss_parameter_supported"], true);
  EXPECT_EQ(as["authorization_endpoint"], w.issuer() + "/authorize");
  EXPECT_EQ(as["token_endpoint"], w.issuer() + "/token");
  EXPECT_EQ(as["registration_endpoint"], w.issuer() + "/register");
  EXPECT_THAT(as["scopes_supported"].get<std::vector<std::string>>(), Contains("offline_access"));
  EXPECT_THAT(as["token_endpoint_auth_methods_supported"].get<std::vector<std::string>>(),
              AllOf(Contains("none"), Contains("client_secret_basic"), Contains("client_secret_post")));

  // The switches take offline_access and registration away.
  ASSERT_EQ(w.admin("switches", {{"offline_access", false}, {"dynamic_registration", false}}).status, 200);
  const json after = w.as_metadata();
  EXPECT_THAT(after["scopes_supported"].get<std::vector<std::string>>(), Not(Contains("offline_access")));
  EXPECT_FALSE(after.contains("registration_endpoint"));
  EXPECT_EQ(w.register_client().status, 404);
}

TEST(OAuthFixture, FullLoginGivesATokenThatOpensTheMcpServerWithTwentyTools) {
  World w;
  ASSERT_WORLD_UP(w);
  const Response reg = w.register_client();
  ASSERT_EQ(reg.status, 201) << reg.body.dump();
  const std::string client_id = reg.body["client_id"];
  EXPECT_EQ(reg.body["token_endpoint_auth_method"], "none");
  EXPECT_FALSE(reg.body.contains("client_secret"));
  EXPECT_EQ(reg.body["redirect_uris"], json({kRedirect}));

  auto r = w.authorize(client_id, {{"state", "a b&c=d/é"}});
  ASSERT_EQ(r.status, 302) << r.body;
  const std::string location = r.location;
  EXPECT_EQ(location.rfind(std::string(kRedirect) + "?", 0), 0u) << location;
  auto q = query_of(location);
  EXPECT_EQ(q["state"], "a b&c=d/é");  // passed through exactly
  EXPECT_EQ(q["iss"], w.issuer());     // RFC 9207
  EXPECT_EQ(q["code"].rfind("fxcode_", 0), 0u);

  const Response t = w.redeem(client_id, q["code"]);
  ASSERT_EQ(t.status, 200) << t.body.dump();
  EXPECT_EQ(t.body["token_type"], "Bearer");
  EXPECT_EQ(t.body["expires_in"], 3600);
  EXPECT_EQ(t.body["scope"], "mcp:tools offline_access");
  EXPECT_EQ(t.header("Cache-Control"), "no-store");
  const std::string at = t.body["access_token"];
  EXPECT_EQ(at.rfind("fxat_", 0), 0u);
  EXPECT_EQ(t.body.value("refresh_token", "").rfind("fxrt_", 0), 0u);

  const std::string session = w.open_session(at);
  ASSERT_FALSE(session.empty());
  const Response list = w.mcp_post(at, json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}, session);
  ASSERT_EQ(list.status, 200);
  const json& tools = list.body["result"]["tools"];
  EXPECT_GE(tools.size(), 20u);
  std::vector<std::string> names;
  for (const auto& t2 : tools) names.push_back(t2["name"]);
  EXPECT_THAT(names, AllOf(Contains("echo"), Contains("create_issue"), Contains("list_issues")));

  const Response created = w.call_tool(at, session, "create_issue", {{"project", "demo"}, {"title", "From the test"}});
  ASSERT_EQ(created.status, 200);
  EXPECT_EQ(created.body["result"]["structuredContent"]["title"], "From the test");
  const Response found = w.call_tool(at, session, "search_issues", {{"query", "from the TEST"}});
  EXPECT_EQ(found.body["result"]["structuredContent"]["issues"].size(), 1u);
  const Response bad = w.call_tool(at, session, "get_issue", {{"project", "nope"}, {"number", 1}});
  EXPECT_EQ(bad.body["result"]["isError"], true);
  EXPECT_THAT(bad.body["result"]["content"][0]["text"].get<std::string>(), HasSubstr("no project \"nope\""));
}

TEST(OAuthFixture, AuthorizeRefusesAWrongClientLoudly) {
  World w;
  ASSERT_WORLD_UP(w);
  const Response reg = w.register_client();
  const std::string id = reg.body["client_id"];

  // No redirect to an unknown client or an unregistered redirect URI: a 400 page.
  for (const auto& change : std::vector<std::map<std::string, std::string>>{
           {{"client_id", "client_unknown"}},
           {{"redirect_uri", "http://127.0.0.1:41999/elsewhere"}},
           {{"redirect_uri", "http://localhost:41999/callback"}},
           {{"redirect_uri", ""}}}) {
    auto r = w.authorize(id, change);
    EXPECT_EQ(r.status, 400) << change.begin()->first;
    EXPECT_TRUE(r.location.empty());
    EXPECT_THAT(r.body, HasSubstr("authorization refused"));
  }

  // Other mistakes come back to the client as error redirects, with state and iss.
  struct Case {
    std::map<std::string, std::string> change;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{{"code_challenge_method", "plain"}}, "invalid_request"},
           {{{"code_challenge_method", ""}}, "invalid_request"},
           {{{"code_challenge", "short"}}, "invalid_request"},
           {{{"response_type", "token"}}, "unsupported_response_type"},
           {{{"resource", ""}}, "invalid_target"},
           {{{"resource", "http://127.0.0.1:1/other"}}, "invalid_target"},
           {{{"scope", "mcp:tools admin:everything"}}, "invalid_scope"}}) {
    auto r = w.authorize(id, c.change);
    ASSERT_EQ(r.status, 302) << c.change.begin()->first;
    auto q = query_of(r.location);
    EXPECT_EQ(q["error"], c.error) << c.change.begin()->first << ": " << q["error_description"];
    EXPECT_EQ(q["state"], "st-1");
    EXPECT_EQ(q["iss"], w.issuer());
    EXPECT_EQ(q.count("code"), 0u);
  }
  auto no_state = w.authorize(id, {{"state", ""}});
  ASSERT_NE(no_state.status, 0);
  EXPECT_EQ(query_of(no_state.location)["error_description"], "state is required");

  // RFC 8252 §7.3: another port of a loopback IP literal is the same redirect URI, until
  // the exact-port switch is on.
  EXPECT_FALSE(w.code_for(id, {{"redirect_uri", "http://127.0.0.1:5555/callback"}}).empty());
  ASSERT_EQ(w.admin("switches", {{"exact_redirect_port", true}}).status, 200);
  auto exact = w.authorize(id, {{"redirect_uri", "http://127.0.0.1:5555/callback"}});
  ASSERT_NE(exact.status, 0);
  EXPECT_EQ(exact.status, 400);
  EXPECT_EQ(w.counters().value("authorize.rejected", 0), 4 + 7 + 1 + 1);
}

TEST(OAuthFixture, RegistrationRefusesBadMetadata) {
  World w;
  ASSERT_WORLD_UP(w);
  struct Case {
    json metadata;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{{"redirect_uris", json::array()}}, "invalid_redirect_uri"},
           {{{"redirect_uris", {"http://example.com/callback"}}}, "invalid_redirect_uri"},
           {{{"redirect_uris", {"http://127.0.0.1:1/cb#frag"}}}, "invalid_redirect_uri"},
           {{{"redirect_uris", {"http://user@127.0.0.1/cb"}}}, "invalid_redirect_uri"},
           {{{"token_endpoint_auth_method", "private_key_jwt"}}, "invalid_client_metadata"},
           {{{"grant_types", {"implicit"}}}, "invalid_client_metadata"},
           {{{"grant_types", {"refresh_token"}}}, "invalid_client_metadata"},
           {{{"application_type", "desktop"}}, "invalid_client_metadata"},
           {{{"scope", "mcp:tools root"}}, "invalid_client_metadata"}}) {
    const Response r = w.register_client(c.metadata);
    EXPECT_EQ(r.status, 400) << c.metadata.dump();
    EXPECT_EQ(r.body["error"], c.error) << c.metadata.dump() << " " << r.body.dump();
  }
  // https anywhere and loopback http are fine; without an auth method the client is
  // client_secret_basic and gets a secret (RFC 7591 §2).
  json ok{{"redirect_uris", {"https://app.example/cb", "http://[::1]:8080/cb", "http://localhost/cb"}}};
  json basic_metadata = ok;
  const Response r = response_of(w.as().Post("/register", basic_metadata.dump(), "application/json"));
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["token_endpoint_auth_method"], "client_secret_basic");
  EXPECT_EQ(r.body.value("client_secret", "").rfind("fxcs_", 0), 0u);
  EXPECT_EQ(r.body["grant_types"], json({"authorization_code"}));
  EXPECT_EQ(w.counters().value("register.ok", 0), 1);
  EXPECT_EQ(w.counters().value("register.rejected", 0), 9);
}

TEST(OAuthFixture, TokenChecksVerifierRedirectResourceAndUsesACodeOnce) {
  World w;
  ASSERT_WORLD_UP(w);
  const std::string id = w.register_client().body["client_id"];
  const std::string code = w.code_for(id);

  struct Case {
    std::map<std::string, std::string> change;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{{"code_verifier", kOtherVerifier}}, "invalid_grant"},
           {{{"code_verifier", ""}}, "invalid_request"},
           {{{"code_verifier", "too-short"}}, "invalid_request"},
           {{{"redirect_uri", "http://127.0.0.1:41999/other"}}, "invalid_grant"},
           {{{"resource", ""}}, "invalid_target"},
           {{{"resource", "http://127.0.0.1:1/mcp"}}, "invalid_target"},
           {{{"code", "fxcode_unknown"}}, "invalid_grant"},
           {{{"client_id", "client_other"}}, "invalid_client"},
           {{{"grant_type", "password"}}, "unsupported_grant_type"}}) {
    const Response r = w.redeem(id, code, c.change);
    EXPECT_EQ(r.body["error"], c.error) << c.change.begin()->first << ": " << r.body.dump();
    EXPECT_EQ(r.status, c.error == "invalid_client" ? 401 : 400);
  }
  // None of those spent the code; the right request does, once.
  const Response t = w.redeem(id, code);
  ASSERT_EQ(t.status, 200) << t.body.dump();
  const std::string at = t.body["access_token"];
  EXPECT_FALSE(w.open_session(at).empty());
  const Response replay = w.redeem(id, code);
  EXPECT_EQ(replay.status, 400);
  EXPECT_EQ(replay.body["error"], "invalid_grant");
  // RFC 6749 §4.1.2: a replayed code revokes what it gave.
  EXPECT_EQ(w.mcp_post(at, json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}).status, 401);
  EXPECT_EQ(w.refresh(id, t.body["refresh_token"]).body["error"], "invalid_grant");

  // A body that is not a form is refused.
  auto json_body = w.as().Post("/token", R"({"grant_type":"authorization_code"})", "application/json");
  ASSERT_TRUE(json_body);
  EXPECT_EQ(body_of(json_body)["error"], "invalid_request");
}

TEST(OAuthFixture, RefreshRotatesAndAReusedRefreshTokenRevokesTheWholeGrant) {
  World w;
  ASSERT_WORLD_UP(w);
  const json first = w.login();
  const std::string id = w.client_id();
  const std::string rt1 = first["refresh_token"];

  const Response second = w.refresh(id, rt1);
  ASSERT_EQ(second.status, 200) << second.body.dump();
  const std::string rt2 = second.body["refresh_token"];
  const std::string at2 = second.body["access_token"];
  EXPECT_NE(rt2, rt1);
  EXPECT_NE(at2, first["access_token"].get<std::string>());
  EXPECT_EQ(second.body["scope"], "mcp:tools offline_access");
  const Response third = w.refresh(id, rt2);
  ASSERT_EQ(third.status, 200);
  const std::string rt3 = third.body["refresh_token"];
  EXPECT_FALSE(w.open_session(third.body["access_token"]).empty());

  // rt1 again: a replay. Refused, and every token of the grant dies with it.
  const Response reuse = w.refresh(id, rt1);
  EXPECT_EQ(reuse.status, 400);
  EXPECT_EQ(reuse.body["error"], "invalid_grant");
  EXPECT_THAT(reuse.body["error_description"].get<std::string>(), HasSubstr("already used"));
  EXPECT_EQ(w.refresh(id, rt3).body["error"], "invalid_grant");
  EXPECT_EQ(w.mcp_post(third.body["access_token"], json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}).status,
            401);
  const json c = w.counters();
  EXPECT_EQ(c.value("token.refresh_token.ok", 0), 2);
  EXPECT_EQ(c.value("token.refresh_token.reuse", 0), 1);

  // Another client cannot use the refresh token, and a refresh may not widen the scope.
  const json other = w.login();
  const std::string other_id = w.client_id();
  EXPECT_EQ(w.refresh(id, other["refresh_token"]).body["error"], "invalid_grant");
  const Response wider = w.token({{"grant_type", "refresh_token"},
                                  {"refresh_token", other["refresh_token"]},
                                  {"client_id", other_id},
                                  {"resource", w.mcp_url()},
                                  {"scope", "mcp:tools issues:write"}});
  EXPECT_EQ(wider.body["error"], "invalid_scope");
}

TEST(OAuthFixture, WithoutRotationARefreshKeepsTheRefreshToken) {
  World w({"--no-refresh-rotation"});
  ASSERT_WORLD_UP(w);
  const json first = w.login();
  const Response a = w.refresh(w.client_id(), first["refresh_token"]);
  ASSERT_EQ(a.status, 200);
  EXPECT_FALSE(a.body.contains("refresh_token"));
  EXPECT_EQ(w.refresh(w.client_id(), first["refresh_token"]).status, 200);
}

TEST(OAuthFixture, AccessTokensExpireAfterTheTtlOnTheFixtureClock) {
  World w({"--access-token-ttl", "60"});
  ASSERT_WORLD_UP(w);
  const json t = w.login();
  EXPECT_EQ(t["expires_in"], 60);
  const std::string at = t["access_token"];
  const std::string session = w.open_session(at);
  ASSERT_FALSE(session.empty());
  const json ping{{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}};

  ASSERT_EQ(w.admin("advance-clock", {{"seconds", 59}}).status, 200);
  EXPECT_EQ(w.mcp_post(at, ping, session).status, 200);
  ASSERT_EQ(w.admin("advance-clock", {{"seconds", 1}}).status, 200);
  const Response expired = w.mcp_post(at, ping, session);
  EXPECT_EQ(expired.status, 401);
  EXPECT_THAT(expired.header("WWW-Authenticate"),
              AllOf(HasSubstr("error=\"invalid_token\""), HasSubstr("expired")));

  // A refresh gives a fresh token for the same session; "expire now" ends it early.
  const Response r = w.refresh(w.client_id(), t["refresh_token"]);
  ASSERT_EQ(r.status, 200);
  const std::string at2 = r.body["access_token"];
  EXPECT_EQ(w.mcp_post(at2, ping, session).status, 200);
  const Response expire = w.admin("expire-access-tokens");
  EXPECT_EQ(expire.body["expired"], 1);
  EXPECT_EQ(w.mcp_post(at2, ping, session).status, 401);

  // The TTL switch applies to tokens issued after it.
  ASSERT_EQ(w.admin("switches", {{"access_token_ttl_s", 5}}).status, 200);
  const Response r2 = w.refresh(w.client_id(), r.body["refresh_token"]);
  EXPECT_EQ(r2.body["expires_in"], 5);
  EXPECT_EQ(w.admin("advance-clock", {{"seconds", 0}}).status, 400);
}

TEST(OAuthFixture, RevokedRefreshTokensAreRefusedAndANewLoginWorks) {
  World w;
  ASSERT_WORLD_UP(w);
  const json t = w.login();
  const Response revoke = w.admin("revoke-refresh-tokens");
  EXPECT_EQ(revoke.body["revoked"], 1);
  const Response r = w.refresh(w.client_id(), t["refresh_token"]);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"], "invalid_grant");
  EXPECT_THAT(r.body["error_description"].get<std::string>(), HasSubstr("revoked"));
  // Access tokens live on until they expire; a new authorization gives a working grant.
  EXPECT_FALSE(w.open_session(t["access_token"]).empty());
  const Response again = w.redeem(w.client_id(), w.code_for(w.client_id()));
  ASSERT_EQ(again.status, 200);
  EXPECT_EQ(w.refresh(w.client_id(), again.body["refresh_token"]).status, 200);
}

TEST(OAuthFixture, AToolThatNeedsAScopeAnswers403InsufficientScopeUntilStepUp) {
  World w({"--tool-scope", "create_issue=issues:write"});
  ASSERT_WORLD_UP(w);
  const json t = w.login();  // scope "mcp:tools offline_access"
  const std::string at = t["access_token"];
  const std::string session = w.open_session(at);
  ASSERT_FALSE(session.empty());
  EXPECT_EQ(w.call_tool(at, session, "list_issues", {{"project", "demo"}}).status, 200);

  const Response denied = w.call_tool(at, session, "create_issue", {{"project", "demo"}, {"title", "x"}});
  EXPECT_EQ(denied.status, 403);
  const std::string challenge = denied.header("WWW-Authenticate");
  EXPECT_THAT(challenge, AllOf(HasSubstr("error=\"insufficient_scope\""), HasSubstr("scope=\"mcp:tools issues:write\""),
                               HasSubstr("resource_metadata=\"")));
  EXPECT_EQ(w.counters().value("mcp.403", 0), 1);

  // Step-up: authorize again with the union of scopes, same client.
  const Response up = w.redeem(w.client_id(), w.code_for(w.client_id(), {{"scope", "mcp:tools issues:write offline_access"}}));
  ASSERT_EQ(up.status, 200);
  EXPECT_EQ(w.call_tool(up.body["access_token"], session, "create_issue", {{"project", "demo"}, {"title", "x"}}).status,
            200);

  // The switch can move mid-run; a token without the required base scope is a 403 too.
  ASSERT_EQ(w.admin("switches", {{"tool_scopes", {{"list_issues", "issues:read"}}}}).status, 200);
  EXPECT_EQ(w.call_tool(at, session, "create_issue", {{"project", "demo"}, {"title", "y"}}).status, 200);
  EXPECT_EQ(w.call_tool(at, session, "list_issues", {{"project", "demo"}}).status, 403);
  const Response narrow = w.redeem(w.client_id(), w.code_for(w.client_id(), {{"scope", "issues:read"}}));
  ASSERT_EQ(narrow.status, 200);
  const Response base = w.mcp_post(narrow.body["access_token"], json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}},
                                   session);
  EXPECT_EQ(base.status, 403);
  EXPECT_THAT(base.header("WWW-Authenticate"), HasSubstr("scope=\"mcp:tools\""));
}

TEST(OAuthFixture, AMovedAuthorizationServerHasItsOwnClientsAndTokens) {
  World w;
  ASSERT_WORLD_UP(w);
  const json old_tokens = w.login();
  const std::string old_client = w.client_id();
  const std::string old_issuer = w.issuer();
  const std::string prm_path = World::path_of(w.ready()["resource_metadata_url"]);

  const Response moved = w.admin("move-authorization-server", {{"issuer_path", "/tenant-b"}});
  ASSERT_EQ(moved.status, 200) << moved.body.dump();
  const std::string new_issuer = moved.body["issuer"];
  EXPECT_EQ(new_issuer, old_issuer + "/tenant-b");
  EXPECT_EQ(body_of(w.mcp().Get(prm_path.c_str()))["authorization_servers"], json({new_issuer}));
  // RFC 8414 §3: the path goes after the well-known prefix.
  const json meta = body_of(w.as().Get("/.well-known/oauth-authorization-server/tenant-b"));
  EXPECT_EQ(meta["issuer"], new_issuer);
  EXPECT_EQ(meta["token_endpoint"], new_issuer + "/token");
  // The old server still answers for itself, but the resource trusts only the new one.
  EXPECT_EQ(body_of(w.as().Get("/.well-known/oauth-authorization-server"))["issuer"], old_issuer);
  const Response old_at = w.mcp_post(old_tokens["access_token"], json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
  EXPECT_EQ(old_at.status, 401);
  EXPECT_THAT(old_at.header("WWW-Authenticate"), HasSubstr("no longer protects this resource"));

  // The old registration means nothing to the new server: a loud refusal, not a token.
  auto old_reg = w.as().Get(("/tenant-b/authorize?response_type=code&client_id=" + old_client).c_str());
  ASSERT_TRUE(old_reg);
  EXPECT_EQ(old_reg->status, 400);
  EXPECT_THAT(old_reg->body, HasSubstr("unknown client_id"));
  w.follow(new_issuer);
  EXPECT_EQ(w.refresh(old_client, old_tokens["refresh_token"]).body["error"], "invalid_client");

  // A new registration with the new server works end to end.
  const json state = body_of(w.mcp().Get("/admin/state"));
  EXPECT_EQ(state["issuer"], new_issuer);
  EXPECT_EQ(state["authorization_servers"].size(), 2u);
  const json t = w.login();
  EXPECT_NE(w.client_id(), old_client);
  auto a = w.authorize(w.client_id());
  ASSERT_NE(a.status, 0);
  EXPECT_EQ(query_of(a.location)["iss"], new_issuer);
  EXPECT_FALSE(w.open_session(t["access_token"]).empty());
  EXPECT_EQ(body_of(w.mcp().Get("/admin/state"))["authorization_servers"][1]["clients"], 1);
  EXPECT_EQ(w.admin("move-authorization-server", {{"issuer_path", "/tenant-b"}}).status, 400);
}

TEST(OAuthFixture, TwoRefreshesRacingWithOneTokenGiveExactlyOneSuccess) {
  // What two client processes without a shared lock would do: both send the same refresh
  // token while the slow token endpoint holds the first. One wins; the other is a replay,
  // which revokes the grant, so even the winner's new refresh token is dead.
  World w({"--token-delay-ms", "300"});
  ASSERT_WORLD_UP(w);
  const json t = w.login();
  ASSERT_EQ(w.admin("reset-counters").status, 200);
  Response a;
  Response b;
  std::thread ta([&] { a = w.refresh(w.client_id(), t["refresh_token"]); });
  std::thread tb([&] { b = w.refresh(w.client_id(), t["refresh_token"]); });
  ta.join();
  tb.join();
  EXPECT_EQ((a.status == 200) + (b.status == 200), 1) << a.body.dump() << " / " << b.body.dump();
  const Response& winner = a.status == 200 ? a : b;
  const Response& loser = a.status == 200 ? b : a;
  EXPECT_EQ(loser.body["error"], "invalid_grant");
  EXPECT_EQ(w.refresh(w.client_id(), winner.body["refresh_token"]).body["error"], "invalid_grant");
  const json c = w.counters();
  EXPECT_EQ(c.value("as POST /token", 0), 3);
  EXPECT_EQ(c.value("token.refresh_token", 0), 3);
  EXPECT_EQ(c.value("token.refresh_token.ok", 0), 1);
  EXPECT_EQ(c.value("token.refresh_token.reuse", 0), 1);
}

TEST(OAuthFixture, ClientAuthenticationIsWhatTheClientRegistered) {
  World w({"--client", "pre-public", "--client", "pre-post:s3cret:client_secret_post"});
  ASSERT_WORLD_UP(w);
  const Response reg = w.register_client({{"token_endpoint_auth_method", "client_secret_basic"}});
  ASSERT_EQ(reg.status, 201);
  const std::string id = reg.body["client_id"];
  const std::string secret = reg.body["client_secret"];
  const std::string code = w.code_for(id);
  std::map<std::string, std::string> form{{"grant_type", "authorization_code"}, {"code", code},
                                          {"redirect_uri", kRedirect},          {"code_verifier", kVerifier},
                                          {"resource", w.mcp_url()}};
  // No secret, the secret in the form, a wrong secret: invalid_client (401).
  auto with_id = form;
  with_id["client_id"] = id;
  EXPECT_EQ(w.token(with_id).status, 401);
  with_id["client_secret"] = secret;
  EXPECT_EQ(w.token(with_id).body["error"], "invalid_client");
  const Response wrong = w.token(form, {httplib::make_basic_authentication_header(id, "fxcs_wrong")});
  EXPECT_EQ(wrong.status, 401);
  EXPECT_THAT(wrong.header("WWW-Authenticate"), HasSubstr("Basic realm="));
  const Response right = w.token(form, {httplib::make_basic_authentication_header(id, secret)});
  EXPECT_EQ(right.status, 200) << right.body.dump();

  // Pre-registered clients: any loopback redirect URI, the auth method the flag named.
  const std::string pre_code = w.code_for("pre-public", {{"redirect_uri", "http://127.0.0.1:7777/cb"}});
  EXPECT_EQ(w.redeem("pre-public", pre_code, {{"redirect_uri", "http://127.0.0.1:7777/cb"}}).status, 200);
  auto not_loopback = w.authorize("pre-public", {{"redirect_uri", "http://example.com/cb"}});
  ASSERT_NE(not_loopback.status, 0);
  EXPECT_EQ(not_loopback.status, 400);
  const std::string post_code = w.code_for("pre-post");
  EXPECT_EQ(w.redeem("pre-post", post_code, {{"client_secret", "s3cret"}}).status, 200);
}

TEST(OAuthFixture, IssModeSwitchShapesTheAuthorizationResponse) {
  World w;
  ASSERT_WORLD_UP(w);
  const std::string id = w.register_client().body["client_id"];
  auto iss_after = [&](const std::string& mode) {
    EXPECT_EQ(w.admin("switches", {{"authorization_iss", mode}}).status, 200);
    auto q = query_of(w.authorize(id).location);
    return q.count("iss") ? q["iss"] : std::string("(none)");
  };
  EXPECT_EQ(iss_after("omit"), "(none)");
  EXPECT_EQ(w.as_metadata()["authorization_response_iss_parameter_supported"], true);
  EXPECT_EQ(iss_after("wrong"), w.issuer() + "/not-the-issuer");
  EXPECT_EQ(iss_after("unadvertised"), "(none)");
  EXPECT_FALSE(w.as_metadata().contains("authorization_response_iss_parameter_supported"));
  EXPECT_EQ(iss_after("issuer"), w.issuer());
}

TEST(OAuthFixture, ChallengeSwitchesDropScopeAndResourceMetadata) {
  World w({"--no-challenge-scope", "--no-resource-metadata-header"});
  ASSERT_WORLD_UP(w);
  const Response r = w.mcp_post("", json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.header("WWW-Authenticate"), "Bearer");
}

TEST(OAuthFixture, EveryEndpointAnswersCorsPreflights) {
  World w;
  ASSERT_WORLD_UP(w);
  httplib::Headers preflight{{"Origin", "http://127.0.0.1:9"},
                             {"Access-Control-Request-Method", "POST"},
                             {"Access-Control-Request-Headers", "authorization, content-type"}};
  for (const char* path : {"/token", "/register", "/.well-known/oauth-authorization-server"}) {
    auto r = w.as().Options(path, preflight);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 204) << path;
    EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "*") << path;
    EXPECT_THAT(r->get_header_value("Access-Control-Allow-Headers"), HasSubstr("authorization")) << path;
  }
  for (const char* path : {"/mcp", "/.well-known/oauth-protected-resource/mcp"}) {
    auto r = w.mcp().Options(path, preflight);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 204) << path;
    EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "*") << path;
  }
  // Error answers carry CORS too, so a page can read them.
  const Response err = w.token({{"grant_type", "password"}});
  EXPECT_EQ(err.header("Access-Control-Allow-Origin"), "*");
}

TEST(OAuthFixture, AdminRefusesUnknownSwitchesAndChangesNothing) {
  World w;
  ASSERT_WORLD_UP(w);
  const json before = body_of(w.mcp().Get("/admin/switches"));
  const Response r = w.admin("switches", {{"access_token_ttl_s", 10}, {"typo_switch", true}});
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(r.body["error"].get<std::string>(), HasSubstr("unknown switch \"typo_switch\""));
  EXPECT_EQ(w.admin("switches", {{"token_delay_ms", -1}}).status, 400);
  EXPECT_EQ(w.admin("switches", {{"required_scopes", {"a b"}}}).status, 400);
  EXPECT_EQ(body_of(w.mcp().Get("/admin/switches")), before);
  // Admin requests are not counted as traffic.
  EXPECT_EQ(w.counters(), json::object());
}

TEST(OAuthFixture, MalformedRequestsGetOAuthErrorsAndTheFixtureKeepsServing) {
  World w;
  ASSERT_WORLD_UP(w);
  const std::string id = w.register_client().body["client_id"];
  auto post = [&](const std::string& path, const std::string& body, const std::string& type,
                  httplib::Headers h = {}) { return response_of(w.as().Post(path.c_str(), h, body, type.c_str())); };
  EXPECT_EQ(post("/register", "{not json", "application/json").body["error"], "invalid_client_metadata");
  EXPECT_EQ(post("/register", R"({"redirect_uris":["http://127.0.0.1/cb"]})", "text/plain").body["error"],
            "invalid_client_metadata");
  EXPECT_EQ(post("/register", R"({"redirect_uris":[1,2]})", "application/json").body["error"], "invalid_redirect_uri");
  EXPECT_EQ(post("/token", "grant_type=%zz", "application/x-www-form-urlencoded").body["error"], "invalid_request");
  EXPECT_EQ(post("/token", "grant_type=a&grant_type=b", "application/x-www-form-urlencoded").body["error"],
            "invalid_request");
  const Response garbage_basic = post("/token", "grant_type=refresh_token", "application/x-www-form-urlencoded",
                                      {{"Authorization", "Basic !!!not-base64"}});
  EXPECT_EQ(garbage_basic.status, 401);
  EXPECT_EQ(garbage_basic.body["error"], "invalid_client");
  EXPECT_EQ(post("/token", "grant_type=x", "application/x-www-form-urlencoded", {{"Authorization", "Bearer x"}}).status,
            401);
  auto big = w.as().Post("/token", std::string(128 * 1024, 'a'), "application/x-www-form-urlencoded");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  // (httplib folds a pair repeated with the same value; a conflicting one is what matters.)
  const RawAnswer repeated =
      raw_get(w.process().as_port(), "/authorize?client_id=" + id + "&client_id=other&response_type=code");
  EXPECT_EQ(repeated.status, 400);
  EXPECT_THAT(repeated.body, HasSubstr("repeated"));
  const RawAnswer huge = raw_get(w.process().as_port(), "/authorize?client_id=" + std::string(4000, 'x'));
  EXPECT_EQ(huge.status, 400);
  EXPECT_EQ(w.as().Get("/authorize/../token")->status, 404);
  auto bad_mcp = w.mcp().Post("/mcp", httplib::Headers{{"Accept", kAcceptBoth}}, "[not json", "application/json");
  ASSERT_TRUE(bad_mcp);
  EXPECT_EQ(bad_mcp->status, 401);  // the gate answers before the body is read as JSON-RPC
  // Still up, still right.
  EXPECT_FALSE(w.open_session(w.login()["access_token"]).empty());
}

TEST(OAuthFixture, TheLogHasARequestLineForEachRequestAndNoSecrets) {
  World w({"--tool-scope", "create_issue=issues:write"});
  ASSERT_WORLD_UP(w);
  const Response reg = w.register_client({{"token_endpoint_auth_method", "client_secret_post"}});
  const std::string id = reg.body["client_id"];
  const std::string secret = reg.body["client_secret"];
  const std::string state = "state-value-7c1e";
  const std::string code = w.code_for(id, {{"state", state}});
  const Response t = w.redeem(id, code, {{"client_secret", secret}});
  ASSERT_EQ(t.status, 200);
  const Response r = w.token({{"grant_type", "refresh_token"},
                              {"refresh_token", t.body["refresh_token"]},
                              {"client_id", id},
                              {"client_secret", secret},
                              {"resource", w.mcp_url()}});
  ASSERT_EQ(r.status, 200);
  const std::string session = w.open_session(r.body["access_token"]);
  w.call_tool(r.body["access_token"], session, "create_issue", {{"project", "demo"}, {"title", "x"}});
  w.redeem(id, code, {{"client_secret", secret}});  // a replay, logged too
  ASSERT_TRUE(w.process().stop_with(SIGTERM).has_value());

  const std::string log = w.log();
  EXPECT_THAT(log, HasSubstr("as POST /register 201"));
  EXPECT_THAT(log, HasSubstr("as GET /authorize?"));
  EXPECT_THAT(log, HasSubstr("grant_type=refresh_token"));
  EXPECT_THAT(log, HasSubstr("mcp POST /mcp 403"));
  for (const std::string& secret_value :
       {secret, code, state, std::string(kVerifier), std::string(kChallenge), t.body["access_token"].get<std::string>(),
        t.body["refresh_token"].get<std::string>(), r.body["access_token"].get<std::string>(),
        r.body["refresh_token"].get<std::string>()}) {
    EXPECT_THAT(log, Not(HasSubstr(secret_value)));
  }
  for (const auto& prefix : w.ready()["secret_prefixes"]) {
    EXPECT_THAT(log, Not(HasSubstr(prefix.get<std::string>())));
  }
}

}  // namespace
}  // namespace oauth_fixture_test
