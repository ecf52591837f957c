#pragma once
// The Authorizer seam (SPEC §13 "The user step", DESIGN "The seams"): how the user (or a
// test) approves an OAuth authorization request and how its redirect comes back.
//   native: a loopback listener on 127.0.0.1 (ephemeral port unless the config fixes
//           `oauth.callbackPort`), one per flow, that serves /callback; the browser is
//           opened with $BROWSER or xdg-open and the URL is printed as well;
//   web:    the host's onAuthorize(url) callback; the default opens a popup on
//           js/oauth-callback.html, which posts the redirect back to the opener;
//   tests / conformance: a follower that GETs the authorization URL itself and reads the
//           redirect's Location (what the conformance suite expects of a client).
//
// One flow: begin() gives the redirect URI (it must be known before client registration,
// which lists it), then authorize() is called once with the full authorization URL and
// completes with the URL the authorization server redirected to (its query carries code,
// state, iss or error — the core checks all of them). Destroying the flow cancels it
// (closes the listener, the popup); no callback runs after that. The async contract
// (executor.hpp) applies to both calls.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "mcprt/platform/executor.hpp"
#include "mcprt/result.hpp"

namespace mcprt {

struct AuthorizeFlowOptions {
  std::string server_name;  // shown to the user ("Sign in to <server>")
  int callback_port = 0;    // 0 = any free port (native); ignored where it means nothing
  Millis timeout{300000};   // how long to wait for the user before ErrorCode::timeout
};

class AuthorizeFlow {
 public:
  virtual ~AuthorizeFlow() = default;
  // Where the authorization server must redirect: e.g. http://127.0.0.1:53121/callback.
  virtual const std::string& redirect_uri() const = 0;
  // Shows `authorization_url` to the user (or follows it) and completes with the full
  // redirect URL the flow received. Called at most once per flow.
  virtual void authorize(std::string authorization_url,
                         std::function<void(Result<std::string>)> done) = 0;
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  // Starts one flow (natively: binds the listener). An error here means no user step is
  // possible (port taken, no display): the server stays needs-auth with that message.
  virtual Result<std::unique_ptr<AuthorizeFlow>> begin(const AuthorizeFlowOptions& options) = 0;
};

}  // namespace mcprt
