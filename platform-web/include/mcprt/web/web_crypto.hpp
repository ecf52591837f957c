#pragma once
// WebCrypto: the Crypto seam (mcprt/platform/crypto.hpp) over the Web Crypto API, for
// browsers and Node 20+ (both have globalThis.crypto).
// [x] random_bytes → crypto.getRandomValues (synchronous), 64 KiB per call as the API allows
// [x] sha256       → crypto.subtle.digest("SHA-256")
// [x] sign_jws     → crypto.subtle.importKey("pkcs8") + sign: RS256 as RSASSA-PKCS1-v1_5
//                    with SHA-256, ES256 as ECDSA P-256 with SHA-256 (whose output is
//                    already the JWS R||S form)
// [ ] "BEGIN RSA PRIVATE KEY" / "BEGIN EC PRIVATE KEY" / encrypted PEM: Web Crypto reads
//     only PKCS#8; such a key is an invalid_argument error that says how to convert it
// [ ] crypto.subtle outside a secure context: browsers offer it only on https:// and
//     localhost pages; there sha256/sign_jws fail with an error that says so
//
// Errors never contain the key or the data. Async contract: sha256/sign_jws complete on
// the executor, once, never inside the call; destroying the WebCrypto drops the answers of
// calls still running (their callbacks are released, not run).

#include <cstddef>
#include <functional>
#include <string>

#include "mcprt/platform/crypto.hpp"
#include "mcprt/platform/executor.hpp"

namespace mcprt::web {

class WebCrypto final : public Crypto {
 public:
  explicit WebCrypto(Executor& executor) : executor_(executor) {}
  ~WebCrypto() override;
  WebCrypto(const WebCrypto&) = delete;
  WebCrypto& operator=(const WebCrypto&) = delete;

  Result<std::string> random_bytes(std::size_t count) override;
  void sha256(std::string data, std::function<void(Result<std::string>)> done) override;
  void sign_jws(std::string alg, std::string private_key_pem, std::string signing_input,
                std::function<void(Result<std::string>)> done) override;

 private:
  Executor& executor_;
};

}  // namespace mcprt::web
