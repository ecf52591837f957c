#pragma once
// WebAuthorizer: the Authorizer seam (mcprt/platform/authorizer.hpp) in the browser — the
// user step of an OAuth login is a JS function the host (or js/index.js) supplies.
// [x] begin(): the redirect URI given at construction (js/index.js: the page's own copy
//     of js/oauth-callback.html, or the host's redirectUri); it must be an absolute http(s)
//     URL, else begin() fails with an error that says what to configure
// [x] authorize(url): calls Module.mcprtAuthorize({handler, url, serverName, redirectUri,
//     signal}) and waits for its Promise: a string (or URL) is the redirect URL the flow
//     completes with; a rejection is an ErrorCode::needs_auth error carrying its message
//     (an AbortError: ErrorCode::aborted); a missing Module.mcprtAuthorize is an error
//     that says to pass onAuthorize. js/index.js routes `handler` to the runtime's
//     onAuthorize, by default a popup on js/oauth-callback.html
// [x] the flow's timeout: ErrorCode::timeout, and `signal` aborts (the popup closes)
// [x] destroying the flow aborts `signal` too; no callback runs afterwards
// [ ] checking the redirect's code/state/iss: the core does (this seam only carries it)
//
// Async contract: authorize() completes on the executor, once, never inside the call.
// Destroy the flows before the executor.

#include <memory>
#include <string>

#include "mcprt/platform/authorizer.hpp"
#include "mcprt/platform/executor.hpp"

namespace mcprt::web {

class WebAuthorizer final : public Authorizer {
 public:
  // `handler` is passed through to Module.mcprtAuthorize so that one JS entry point can
  // serve several runtimes (js/index.js passes the runtime's id).
  WebAuthorizer(Executor& executor, std::string redirect_uri, int handler)
      : executor_(executor), redirect_uri_(std::move(redirect_uri)), handler_(handler) {}

  Result<std::unique_ptr<AuthorizeFlow>> begin(const AuthorizeFlowOptions& options) override;

  const std::string& redirect_uri() const { return redirect_uri_; }

 private:
  Executor& executor_;
  std::string redirect_uri_;
  int handler_;
};

}  // namespace mcprt::web
