#pragma once
// FakeCrypto: a deterministic Crypto seam for tests (mcprt/platform/crypto.hpp). Its digest
// is NOT SHA-256 and its signatures prove nothing: tests compare what the core sent with
// the fake's own answer (digest_of, signature_of), and the conformance suite and the native
// tests check the real primitives.
//
//   random_bytes(n)  n bytes counting up from where the last call stopped (0x01, 0x02, ...)
//   sha256(d)        digest_of(d): 32 bytes of FNV-1a over d with four seeds
//   sign_jws(a,k,i)  signature_of(a, i): "sig(" + a + ":" + i + ")", when `k` is not empty
// Completions are posted to the executor (async contract). Each can be made to fail.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/platform/crypto.hpp"
#include "mcprt/platform/executor.hpp"

namespace mcprt::testing {

class FakeCrypto final : public Crypto {
 public:
  explicit FakeCrypto(Executor& executor) : executor_(executor) {}

  Result<std::string> random_bytes(std::size_t count) override;
  void sha256(std::string data, std::function<void(Result<std::string>)> done) override;
  void sign_jws(std::string alg, std::string private_key_pem, std::string signing_input,
                std::function<void(Result<std::string>)> done) override;

  static std::string digest_of(std::string_view data);
  static std::string signature_of(std::string_view alg, std::string_view signing_input);

  std::optional<Error> fail_random;
  std::optional<Error> fail_digest;
  std::optional<Error> fail_sign;
  // What was signed and with which key (tests of the assertion).
  std::vector<std::string> signing_inputs;
  std::vector<std::string> keys_used;

 private:
  Executor& executor_;
  unsigned char next_ = 1;
};

}  // namespace mcprt::testing
