#include "mcprt/testing/fake_crypto.hpp"

#include <utility>

#include "mcprt/hash.hpp"

namespace mcprt::testing {

Result<std::string> FakeCrypto::random_bytes(std::size_t count) {
  if (fail_random) return *fail_random;
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    out += static_cast<char>(next_);
    next_ = static_cast<unsigned char>(next_ + 1);
  }
  return out;
}

std::string FakeCrypto::digest_of(std::string_view data) {
  std::string out;
  for (std::uint64_t seed : {0xcbf29ce484222325ull, 1ull, 2ull, 3ull}) {
    std::uint64_t h = fnv1a64(data, seed);
    for (int i = 0; i < 8; ++i) {
      out += static_cast<char>(h & 0xFF);
      h >>= 8;
    }
  }
  return out;
}

std::string FakeCrypto::signature_of(std::string_view alg, std::string_view signing_input) {
  return "sig(" + std::string(alg) + ":" + std::string(signing_input) + ")";
}

void FakeCrypto::sha256(std::string data, std::function<void(Result<std::string>)> done) {
  Result<std::string> r = fail_digest ? Result<std::string>(*fail_digest)
                                      : Result<std::string>(digest_of(data));
  executor_.post([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

void FakeCrypto::sign_jws(std::string alg, std::string private_key_pem, std::string signing_input,
                          std::function<void(Result<std::string>)> done) {
  signing_inputs.push_back(signing_input);
  keys_used.push_back(private_key_pem);
  Result<std::string> r = std::string();
  if (fail_sign) {
    r = *fail_sign;
  } else if (private_key_pem.empty() || (alg != "RS256" && alg != "ES256")) {
    r = Error::make(ErrorCode::invalid_argument, "FakeCrypto: no key or an unsupported alg");
  } else {
    r = signature_of(alg, signing_input);
  }
  executor_.post([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

}  // namespace mcprt::testing
