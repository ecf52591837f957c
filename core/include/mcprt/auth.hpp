#pragma once
// The AuthStorage seam (SPEC §2.4): the host supplies bearer tokens for servers whose
// config says `auth: {type: "bearer"|"oauth", credentialId?}`. mcprt never stores or logs
// a token; it asks the host each time a transport needs one.
//
// Who uses it: the HTTP transports (http_transport.hpp) send `Authorization: Bearer
// <token>` unless the config sets an explicit Authorization header (which always wins),
// and on a 401/403 call refresh_token once and retry the request once.
//
// Contract (executor.hpp's async contract): `done` runs exactly once, on the executor the
// caller lives on, never inside get_token()/refresh_token(). There is no cancel: a caller
// that went away meanwhile ignores the answer (it holds only weak references), so the
// storage must tolerate being answered into the void. A Result error means "the storage
// failed" (logged by the caller, then treated like "no token"); an empty optional means
// "no credential for this server".

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
