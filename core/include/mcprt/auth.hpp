#pragma once
// The AuthStorage seam (SPEC §2.4): the host supplies bearer tokens for servers whose
// config says `auth: {type: "bearer"|"oauth", credentialId?}`. mcprt never stores or logs
// a token; it asks the host each time a transport needs one.
//
// Who uses it: the HTTP transports (http_transport.hpp) send `Authorization: Bearer
// <token>` unless the config sets an explicit Authorization header (which always wins),
// and call refresh_token on a rejection and retry the request: at most once for a 401 and
// once for a 403 per request. The OAuth client (mcprt/oauth.hpp) is the core's storage.
//
// Contract (executor.hpp's async contract): `done` runs exactly once, on the executor the
// caller lives on, never inside get_token()/refresh_token(). There is no cancel: a caller
// that went away meanwhile ignores the answer (it holds only weak references), so the
// storage must tolerate being answered into the void. An empty optional means "no
// credential for this server". A Result error from get_token means "the storage failed"
// (logged by the caller, then treated like "no token"); from refresh_token it fails the
// rejected request with that error (prefixed with the server name when it is not), so an
// ErrorCode::needs_auth or a clear OAuth error reaches the user instead of a bare 401.

#include <functional>
#include <optional>
#include <string>

#include "mcprt/result.hpp"

namespace mcprt {

// Which credential is wanted: by credential id when the config names one, else by url
// (and the server name, for storages keyed by name).
struct AuthRequest {
  std::string server_name;
  std::string credential_id;  // empty = look it up by url / server name
  std::string url;            // the configured server URL
  // refresh_token only: the rejection that asked for it, so an OAuth storage can follow
  // the server's challenge (SPEC §13): the HTTP status (401, 403; 0 = unknown) and every
  // `WWW-Authenticate` field of that answer joined with ", " ("" = none).
  int status = 0;
  std::string www_authenticate{};
};

using TokenCallback = std::function<void(Result<std::optional<std::string>>)>;

class AuthStorage {
 public:
  virtual ~AuthStorage() = default;
  // The current bearer token (without the "Bearer " prefix), if any.
  virtual void get_token(const AuthRequest& request, TokenCallback done) = 0;
  // The server rejected `rejected_token` (401/403): return a fresh token, if the storage
  // can get one (OAuth refresh, re-reading a file...). Returning the same token again is
  // allowed; the transport then retries once and reports the failure.
  virtual void refresh_token(const AuthRequest& request, const std::string& rejected_token,
                             TokenCallback done) = 0;
};

}  // namespace mcprt
