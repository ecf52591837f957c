// What the HTTP transports hand the auth storage on a rejection (AuthRequest::status and
// ::www_authenticate), how a refresh error ends the request, the 401-then-403 retries, and
// a whole sign-in through a real transport and the OAuth client.

#include <gmock/gmock.h>

#include "mcprt/http_transport.hpp"
#include "oauth_test_support.hpp"

namespace mcprt::testing {
namespace oauth_transport_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;

constexpr const char* kMcpUrl = "https://mcp.example.com/mcp";

json init_request() {
  return json{{"jsonrpc", "2.0"},
              {"id", 0},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", "2025-11-25"},
                {"capabilities", json::object()},
                {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}};
}
json init_result() {
  return json{{"jsonrpc", "2.0"},
              {"id", 0},
              {"result",
               {{"protocolVersion", "2025-11-25"},
                {"capabilities", json::object()},
                {"serverInfo", {{"name", "s"}, {"version", "1"}}}}}};
}

class RecordingStorage final : public AuthStorage {
 public:
  explicit RecordingStorage(Executor& ex) : ex_(ex) {}
  void get_token(const AuthRequest&, TokenCallback done) override {
    ex_.post([done, t = token] { done(t); });
  }
  void refresh_token(const AuthRequest& request, const std::string&, TokenCallback done) override {
    requests.push_back(request);
    if (error) {
      ex_.post([done, e = *error] { done(e); });
      return;
    }
    token = "t" + std::to_string(requests.size());
    ex_.post([done, t = token] { done(t); });
  }
  std::optional<std::string> token;
  std::optional<Error> error;
  std::vector<AuthRequest> requests;

 private:
  Executor& ex_;
};

class OAuthTransport : public OAuthTest {
 protected:
  void open(AuthStorage& storage) {
    HttpTransportOptions o;
    o.url = kMcpUrl;
    o.server_name = "alpha";
    o.mode = HttpTransportMode::streamable;
    o.auth_storage = &storage;
    o.open_get_stream = false;
    auto made = make_http_transport(ex, http, std::move(o));
    ASSERT_TRUE(made.ok());
    transport = std::move(made).value();
    TransportHandlers h;
    h.on_message = [this](json m) { received.push_back(std::move(m)); };
    h.on_close = [this](const Error& e) { closes.push_back(e); };
    transport->start(std::move(h));
  }
  std::optional<FakeHttpExchange> next() {
    ex.run_until_idle();
    return http.take();
  }
  std::unique_ptr<Transport> transport;
  std::vector<json> received;
  std::vector<Error> closes;
};

TEST_F(OAuthTransport, TheRejectionsStatusAndEveryChallengeReachTheStorage) {
  RecordingStorage storage(ex);
  open(storage);
  ASSERT_TRUE(transport->send(init_request()).ok());
  auto first = next();
  ASSERT_TRUE(first);
  HttpHeaders h;
  h.add("WWW-Authenticate", "Basic realm=\"x\"");
  h.add("www-authenticate", "Bearer resource_metadata=\"https://mcp.example.com/prm\"");
  first->respond(401, "", h);
  auto retry = next();
  ASSERT_TRUE(retry);
  ASSERT_EQ(storage.requests.size(), 1u);
  EXPECT_EQ(storage.requests[0].status, 401);
  EXPECT_EQ(storage.requests[0].www_authenticate,
            "Basic realm=\"x\", Bearer resource_metadata=\"https://mcp.example.com/prm\"");
  EXPECT_EQ(storage.requests[0].server_name, "alpha");
  EXPECT_EQ(retry->header("Authorization"), "Bearer t1");
}

TEST_F(OAuthTransport, ARefreshErrorEndsTheRequestWithThatError_NoBlindRetry) {
  RecordingStorage storage(ex);
  storage.error = Error::make(ErrorCode::needs_auth,
                              "Server \"alpha\": needs an OAuth sign-in; run `mcprt auth login alpha`");
  open(storage);
  ASSERT_TRUE(transport->send(init_request()).ok());
  next()->respond(401, "", {{"WWW-Authenticate", "Bearer"}});
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);  // not sent again without a token
  ASSERT_EQ(closes.size(), 1u);   // initialize failed: the transport closes with the error
  EXPECT_EQ(closes[0].code, ErrorCode::needs_auth);
  EXPECT_THAT(closes[0].message, HasSubstr("run `mcprt auth login alpha`"));
}

TEST_F(OAuthTransport, A401ThenA403_OneRefreshEach_ThenTheAnswerStands) {
  RecordingStorage storage(ex);
  open(storage);
  ASSERT_TRUE(transport->send(init_request()).ok());
  next()->respond(401);
  next()->respond(403, "", {{"WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"x\""}});
  auto third = next();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->header("Authorization"), "Bearer t2");
  third->respond(403, "still not");
  ex.run_until_idle();
  EXPECT_EQ(http.pending(), 0u);
  ASSERT_EQ(storage.requests.size(), 2u);
  EXPECT_EQ(storage.requests[1].status, 403);
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].data.value("status", 0), 403);
}

TEST_F(OAuthTransport, AWholeSignInThroughTheTransport) {
  int unauthorized = 0;
  world.intercept = [&](const FakeHttpExchange& req) {
    if (req.url() != kMcpUrl) return false;
    if (req.header("Authorization") != "Bearer at-1") {
      ++unauthorized;
      req.respond(401, "", {{"WWW-Authenticate", world.challenge("scope=\"mcp:basic\"")}});
      return true;
    }
    req.respond_json(init_result(), {{"Mcp-Session-Id", "s1"}});
    return true;
  };
  open(client());
  ASSERT_TRUE(transport->send(init_request()).ok());
  world.serve();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0], init_result());
  EXPECT_EQ(unauthorized, 1);
  EXPECT_TRUE(closes.empty());
  EXPECT_EQ(param(world.authorizations.at(0), "scope"), "mcp:basic");
  // A new connection (a reconnect) starts with the stored token: no 401 at all.
  transport.reset();
  received.clear();
  open(client());
  ASSERT_TRUE(transport->send(init_request()).ok());
  world.serve();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(unauthorized, 1);
}

TEST_F(OAuthTransport, NotInteractive_TheHandshakeFailsWithNeedsAuth) {
  options.interactive = false;
  world.intercept = [&](const FakeHttpExchange& req) {
    if (req.url() != kMcpUrl) return false;
    req.respond(401, "", {{"WWW-Authenticate", world.challenge()}});
    return true;
  };
  open(client());
  ASSERT_TRUE(transport->send(init_request()).ok());
  world.serve();
  ASSERT_EQ(closes.size(), 1u);
  EXPECT_EQ(closes[0].code, ErrorCode::needs_auth);
  EXPECT_EQ(closes[0].message,
            "Server \"alpha\": needs an OAuth sign-in (no authorization is stored for it); run "
            "`mcprt auth login alpha`");
}

}  // namespace
}  // namespace oauth_transport_test
}  // namespace mcprt::testing
