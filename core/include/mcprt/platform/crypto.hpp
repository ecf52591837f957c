#pragma once
// The Crypto seam (SPEC §13, DESIGN "The seams"): the few primitives OAuth needs, from the
// platform's own cryptography — never hand-written in mcprt.
//   native: OpenSSL (RAND_bytes, EVP_Digest, EVP_DigestSign);
//   web:    crypto.getRandomValues, crypto.subtle.digest / importKey / sign;
//   tests:  a deterministic fake (tests/support), whose digest is NOT SHA-256 — unit tests
//           compare the core's output with the fake's own answer, the conformance suite
//           and the native tests check the real one.
//
// random_bytes is synchronous (getRandomValues is); digest and signing are asynchronous
// because crypto.subtle is. The async contract (executor.hpp) applies: `done` runs exactly
// once, on the executor, never inside the call.

#include <cstddef>
#include <functional>
#include <string>

#include "mcprt/result.hpp"

namespace mcprt {

class Crypto {
 public:
  virtual ~Crypto() = default;

  // `count` bytes from a cryptographically secure generator (raw bytes, not text).
  virtual Result<std::string> random_bytes(std::size_t count) = 0;

  // The SHA-256 digest of `data`: 32 raw bytes.
  virtual void sha256(std::string data, std::function<void(Result<std::string>)> done) = 0;

  // A JWS signature over `signing_input` ("<b64url header>.<b64url payload>") with a
  // private key in PEM (PKCS#8 "BEGIN PRIVATE KEY"; natively also "BEGIN RSA/EC PRIVATE
  // KEY"). `alg` is "RS256" or "ES256"; the result is the raw JWS signature bytes (for
  // ES256 the 64-byte R||S form, not DER). An unsupported alg or an unreadable key is an
  // ErrorCode::invalid_argument error whose message never contains the key.
  virtual void sign_jws(std::string alg, std::string private_key_pem, std::string signing_input,
                        std::function<void(Result<std::string>)> done) = 0;
};

}  // namespace mcprt
