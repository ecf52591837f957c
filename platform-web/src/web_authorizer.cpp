// WebAuthorizer: the OAuth user step through a JS handler (see web_authorizer.hpp).
#include "mcprt/web/web_authorizer.hpp"

#include <emscripten/emscripten.h>

#include <utility>

#include "mcprt/url.hpp"
#include "web_js_calls.hpp"

namespace {
// mcprt_js_authorize's outcome when the handler's rejection was an AbortError.
constexpr int kAuthorizeAborted = 2;
}  // namespace

// clang-format off
// --- JS glue (one line after preprocessing: semicolons, double quotes) ---------------
// Module.mcprtAuthFlows: call id → the AbortController whose signal the handler got.
EM_JS(void, mcprt_js_authorize,
      (int id, int handler, const char* url, const char* server, const char* redirect), {
  var flows = Module["mcprtAuthFlows"] || (Module["mcprtAuthFlows"] = new Map());
  var controller = new AbortController();
  flows.set(id, controller);
  var request = {
    handler : handler,
    url : UTF8ToString(url),
    serverName : UTF8ToString(server),
    redirectUri : UTF8ToString(redirect),
    signal : controller.signal
  };
  var live = function() { return flows.get(id) === controller; };
  Promise.resolve().then(function() {
    var fn = Module["mcprtAuthorize"];
    if (typeof fn != "function") {
      throw new Error("no sign-in handler is installed (createRuntime's onAuthorize)");
    }
    return fn(request);
  }).then(function(redirected) {
    if (!live()) return;
    flows.delete(id);
    if (typeof redirected == "string" || (typeof URL == "function" && redirected instanceof URL)) {
      Module["mcprtSettle"](id, 1, String(redirected));
    } else {
      Module["mcprtSettle"](id, 0, "the sign-in handler must resolve with the redirect URL (a string), not " + (redirected === null ? "null" : typeof redirected));
    }
  }, function(e) {
    if (!live()) return;
    flows.delete(id);
    Module["mcprtSettle"](id, e && e.name == "AbortError" ? 2 : 0, Module["mcprtDescribe"](e));
  });
});

EM_JS(void, mcprt_js_authorize_abort, (int id), {
  var flows = Module["mcprtAuthFlows"];
  var controller = flows && flows.get(id);
  if (!controller) return;
  flows.delete(id);
  controller.abort();
});
// clang-format on

namespace mcprt::web {
namespace {

class WebAuthorizeFlow final : public AuthorizeFlow {
 public:
  WebAuthorizeFlow(Executor& executor, std::string redirect_uri, int handler,
                   AuthorizeFlowOptions options)
      : executor_(executor),
        redirect_uri_(std::move(redirect_uri)),
        handler_(handler),
        options_(std::move(options)) {}

  ~WebAuthorizeFlow() override { stop(); }

  const std::string& redirect_uri() const override { return redirect_uri_; }

  void authorize(std::string authorization_url,
                 std::function<void(Result<std::string>)> done) override {
    if (started_) {
      executor_.post([done = std::move(done)] {
        if (done) {
          done(Error::make(ErrorCode::invalid_argument,
                           "authorize() was already called for this sign-in flow"));
        }
      });
      return;
    }
    started_ = true;
    done_ = std::move(done);
    const std::string who = "the sign-in to " + options_.server_name;
    call_ = detail::begin_js_call(this, executor_, [this, who](int outcome, std::string value) {
      call_ = 0;
      timer_.reset();
      if (outcome == detail::kJsOk) {
        finish(std::move(value));
      } else if (outcome == kAuthorizeAborted) {
        finish(Error::make(ErrorCode::aborted, who + " was cancelled: " + value));
      } else {
        finish(Error::make(ErrorCode::needs_auth, who + " did not finish: " + value));
      }
    });
    mcprt_js_authorize(call_, handler_, authorization_url.c_str(), options_.server_name.c_str(),
                       redirect_uri_.c_str());
    if (options_.timeout.count() > 0) {
      timer_ = ScopedTimer(executor_, executor_.post_after(options_.timeout, [this, who] {
        timer_.release();
        stop();
        const long long ms = options_.timeout.count();
        finish(Error::make(
            ErrorCode::timeout,
            who + " did not finish within " +
                (ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms")));
      }));
    }
  }

 private:
  // Withdraws the JS side (its signal aborts: the default popup closes).
  void stop() {
    timer_.reset();
    if (call_ != 0 && detail::cancel_js_call(call_)) mcprt_js_authorize_abort(call_);
    call_ = 0;
  }

  void finish(Result<std::string> result) {
    auto done = std::move(done_);
    done_ = nullptr;
    if (done) done(std::move(result));  // may destroy this flow: nothing after it
  }

  Executor& executor_;
  std::string redirect_uri_;
  int handler_;
  AuthorizeFlowOptions options_;
  bool started_ = false;
  int call_ = 0;
  ScopedTimer timer_;
  std::function<void(Result<std::string>)> done_;
};

}  // namespace

Result<std::unique_ptr<AuthorizeFlow>> WebAuthorizer::begin(const AuthorizeFlowOptions& options) {
  if (!parse_http_url(redirect_uri_)) {
    return Error::make(ErrorCode::invalid_config,
                       "no usable OAuth redirect URI for " + options.server_name + " (\"" +
                           redirect_uri_ +
                           "\"): pass createRuntime({redirectUri}) an http(s) URL of "
                           "oauth-callback.html on this page's origin");
  }
  return std::unique_ptr<AuthorizeFlow>(
      std::make_unique<WebAuthorizeFlow>(executor_, redirect_uri_, handler_, options));
}

}  // namespace mcprt::web
