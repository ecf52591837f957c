// RedirectFollowingAuthorizer (mcprt/oauth.hpp): the user step as the conformance suite
// and the tests play it — GET the authorization URL and hand back where it redirects.

#include <utility>

#include "auth/oauth_fetch.hpp"
#include "auth/oauth_wire.hpp"
#include "mcprt/oauth.hpp"
#include "mcprt/url.hpp"

namespace mcprt {

using namespace detail::oauth;

namespace {

class RedirectFollowingFlow final : public AuthorizeFlow {
 public:
  RedirectFollowingFlow(Executor& executor, HttpClient& http, std::string redirect_uri,
                        Millis timeout)
      : executor_(executor), http_(http), redirect_uri_(std::move(redirect_uri)), timeout_(timeout) {}

  const std::string& redirect_uri() const override { return redirect_uri_; }

  void authorize(std::string authorization_url,
                 std::function<void(Result<std::string>)> done) override {
    auto url = parse_http_url(authorization_url);
    if (!url) {
      executor_.post([done = std::move(done)] {
        done(Error::make(ErrorCode::invalid_argument, "the authorization URL is not an http(s) URL"));
      });
      return;
    }
    const std::string origin = url->origin();
    HttpRequest request;
    request.method = "GET";
    request.url = url->to_string();
    request.follow_redirects = false;  // the redirect is the answer
    request.timeout_ms = timeout_.count();
    fetch_ = Fetch::start(executor_, http_, std::move(request), 64 * 1024,
                          [base = url->to_string(), origin, done = std::move(done)](
                              Result<FetchResponse> r) {
                            if (!r) {
                              return done(Error::make(r.error().code,
                                                      "following the authorization URL at " +
                                                          origin + " failed: " + r.error().message));
                            }
                            const std::string* location = r->headers.find("Location");
                            if (r->status < 300 || r->status > 399 || !location) {
                              return done(Error::make(
                                  ErrorCode::protocol,
                                  "the authorization endpoint at " + origin + " answered HTTP " +
                                      std::to_string(r->status) + " without a redirect"));
                            }
                            auto target = resolve_url(base, *location);
                            if (!target) {
                              return done(Error::make(ErrorCode::protocol,
                                                      "the authorization endpoint at " + origin +
                                                          " redirects to something that is not an "
                                                          "http(s) URL"));
                            }
                            done(std::move(*target));
                          });
  }

 private:
  Executor& executor_;
  HttpClient& http_;
  std::string redirect_uri_;
  Millis timeout_;
  std::unique_ptr<Fetch> fetch_;
};

}  // namespace

RedirectFollowingAuthorizer::RedirectFollowingAuthorizer(Executor& executor, HttpClient& http,
                                                         std::string redirect_uri)
    : executor_(executor), http_(http), redirect_uri_(std::move(redirect_uri)) {}

Result<std::unique_ptr<AuthorizeFlow>> RedirectFollowingAuthorizer::begin(
    const AuthorizeFlowOptions& options) {
  ++flows_begun_;
  return std::unique_ptr<AuthorizeFlow>(
      std::make_unique<RedirectFollowingFlow>(executor_, http_, redirect_uri_, options.timeout));
}

}  // namespace mcprt
