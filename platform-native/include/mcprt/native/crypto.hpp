#pragma once
// NativeCrypto: the native Crypto seam (SPEC §13, mcprt/platform/crypto.hpp) over OpenSSL 3.
//
//   mcprt::native::NativeCrypto crypto(executor);
//   crypto.sha256("abc", [](Result<std::string> digest) { ... });   // 32 raw bytes
//
// Implements:
//  [x] random_bytes — RAND_bytes (OpenSSL's CSPRNG, seeded from the kernel)
//  [x] sha256 — EVP_Digest with SHA-256
//  [x] sign_jws — RS256 (RSASSA-PKCS1-v1_5, keys of 2048 bits or more, RFC 7518 §3.3) and
//      ES256 (ECDSA on P-256; OpenSSL's DER signature converted to the 64-byte R||S JWS
//      form, RFC 7518 §3.4), from a PEM private key: PKCS#8 "BEGIN PRIVATE KEY" or the
//      traditional "BEGIN RSA PRIVATE KEY" / "BEGIN EC PRIVATE KEY"
//  [x] errors never contain key material: they name the alg and OpenSSL's reason only; the
//      copy of the PEM text this object received is wiped (OPENSSL_cleanse) after use
//  [ ] no encrypted PEM keys: a key that needs a passphrase is refused (OpenSSL is given a
//      passphrase callback that supplies none, so it never prompts on the terminal)
//  [ ] no other algorithms (PS256, EdDSA, ...): the OAuth client needs only these two
//
// Async contract (executor.hpp): sha256 and sign_jws compute inside a closure posted to the
// executor (the work is a few milliseconds at most) and complete there, exactly once, never
// inside the call. The closures capture no pointer to this object, so it may be destroyed
// while a completion is pending. Call from the executor's thread; the executor must outlive
// every pending completion.

#include <functional>
#include <string>

#include "mcprt/platform/crypto.hpp"
#include "mcprt/platform/executor.hpp"

namespace mcprt::native {

class NativeCrypto final : public Crypto {
 public:
  explicit NativeCrypto(Executor& executor);

  Result<std::string> random_bytes(std::size_t count) override;
  void sha256(std::string data, std::function<void(Result<std::string>)> done) override;
  void sign_jws(std::string alg, std::string private_key_pem, std::string signing_input,
                std::function<void(Result<std::string>)> done) override;

 private:
  Executor& executor_;
};

}  // namespace mcprt::native
