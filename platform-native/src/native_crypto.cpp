// NativeCrypto (see mcprt/native/crypto.hpp): OpenSSL 3's RAND, EVP digest and EVP sign.

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <utility>

#include "mcprt/native/crypto.hpp"

namespace mcprt::native {

namespace {

// RFC 7518 §3.3: "A key of size 2048 bits or larger MUST be used with these algorithms."
constexpr int kMinRsaBits = 2048;
// RFC 7518 §3.4: R and S as 32-byte big-endian unsigned integers for P-256.
constexpr int kEs256HalfBytes = 32;
// RAND_bytes takes an int count; larger requests are served in chunks.
constexpr std::size_t kRandomChunk = 1 << 20;

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct EcdsaSigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};

// OpenSSL's reason for the oldest error on this thread's queue (text OpenSSL wrote, never
// input bytes), and an empty queue afterwards so the next OpenSSL user starts clean.
std::string take_openssl_reason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no reason given";
  const char* reason = ERR_reason_error_string(code);
  return reason ? reason : "error " + std::to_string(code);
}

Error crypto_error(const std::string& what) {
  return Error::make(ErrorCode::internal, what + " (OpenSSL: " + take_openssl_reason() + ")");
}

// A PEM passphrase callback that supplies none: an encrypted key fails to load instead of
// OpenSSL prompting on the terminal (its default).
int no_passphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*user*/) { return -1; }

Result<std::unique_ptr<EVP_PKEY, PkeyFree>> read_private_key(const std::string& alg,
                                                             const std::string& pem) {
  if (pem.size() > static_cast<std::size_t>(INT_MAX)) {
    return Error::make(ErrorCode::invalid_argument,
                       "sign_jws " + alg + ": the private key is too large");
  }
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return crypto_error("sign_jws " + alg + ": cannot read the private key");
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  if (!key) {
    return Error::make(
        ErrorCode::invalid_argument,
        "sign_jws " + alg +
            ": the private key is not a readable PEM private key (PKCS#8, RSA or EC; "
            "unencrypted) (OpenSSL: " +
            take_openssl_reason() + ")");
  }
  return key;
}

// The key must suit the alg: an RSA key of 2048+ bits for RS256, a P-256 key for ES256.
Status check_key_for(const std::string& alg, EVP_PKEY* key) {
  if (alg == "RS256") {
    if (!EVP_PKEY_is_a(key, "RSA")) {
      return Error::make(
          ErrorCode::invalid_argument,
          "sign_jws RS256: the private key is not an RSA key (" +
              std::string(EVP_PKEY_get0_type_name(key) ? EVP_PKEY_get0_type_name(key) : "?") + ")");
    }
    const int bits = EVP_PKEY_get_bits(key);
    if (bits < kMinRsaBits) {
      return Error::make(ErrorCode::invalid_argument,
                         "sign_jws RS256: the RSA key has " + std::to_string(bits) +
                             " bits; RS256 needs at least " + std::to_string(kMinRsaBits));
    }
    return {};
  }
  if (!EVP_PKEY_is_a(key, "EC")) {
    return Error::make(
        ErrorCode::invalid_argument,
        "sign_jws ES256: the private key is not an EC key (" +
            std::string(EVP_PKEY_get0_type_name(key) ? EVP_PKEY_get0_type_name(key) : "?") + ")");
  }
  char group[64] = {0};
  std::size_t group_len = 0;
  if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                     &group_len) != 1) {
    return crypto_error("sign_jws ES256: cannot read the EC key's curve");
  }
  const std::string curve(group, group_len);
  if (curve != SN_X9_62_prime256v1) {
    return Error::make(ErrorCode::invalid_argument, "sign_jws ES256: the EC key is on " + curve +
                                                        "; ES256 needs P-256 (prime256v1)");
  }
  return {};
}

// OpenSSL's ECDSA signature is DER (SEQUENCE { r INTEGER, s INTEGER }); JWS wants R||S.
Result<std::string> der_to_jws_es256(const unsigned char* der, std::size_t der_len) {
  const unsigned char* p = der;
  std::unique_ptr<ECDSA_SIG, EcdsaSigFree> sig(
      d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der_len)));
  if (!sig) return crypto_error("sign_jws ES256: cannot decode the signature");
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  std::string out(2 * kEs256HalfBytes, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  if (BN_bn2binpad(r, bytes, kEs256HalfBytes) != kEs256HalfBytes ||
      BN_bn2binpad(s, bytes + kEs256HalfBytes, kEs256HalfBytes) != kEs256HalfBytes) {
    return crypto_error("sign_jws ES256: the signature does not fit 64 bytes");
  }
  return out;
}

Result<std::string> compute_sha256(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &md_len, EVP_sha256(), nullptr) != 1) {
    return crypto_error("sha256 failed");
  }
  return std::string(reinterpret_cast<const char*>(md), md_len);
}

Result<std::string> compute_signature(const std::string& alg, const std::string& pem,
                                      const std::string& signing_input) {
  if (alg != "RS256" && alg != "ES256") {
    return Error::make(ErrorCode::invalid_argument,
                       "sign_jws: unsupported alg \"" + alg.substr(0, 32) + "\" (RS256 or ES256)");
  }
  auto key = read_private_key(alg, pem);
  if (!key) return std::move(key).error();
  if (Status s = check_key_for(alg, key->get()); !s) return std::move(s).error();

  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key->get()) != 1) {
    return crypto_error("sign_jws " + alg + ": cannot start signing");
  }
  const auto* input = reinterpret_cast<const unsigned char*>(signing_input.data());
  std::size_t sig_len = 0;
  if (EVP_DigestSign(ctx.get(), nullptr, &sig_len, input, signing_input.size()) != 1) {
    return crypto_error("sign_jws " + alg + ": signing failed");
  }
  std::string sig(sig_len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &sig_len, input,
                     signing_input.size()) != 1) {
    return crypto_error("sign_jws " + alg + ": signing failed");
  }
  sig.resize(sig_len);
  if (alg == "RS256") return sig;
  return der_to_jws_es256(reinterpret_cast<const unsigned char*>(sig.data()), sig.size());
}

}  // namespace

NativeCrypto::NativeCrypto(Executor& executor) : executor_(executor) {}

Result<std::string> NativeCrypto::random_bytes(std::size_t count) {
  std::string out(count, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  for (std::size_t off = 0; off < count; off += kRandomChunk) {
    const std::size_t n = std::min(kRandomChunk, count - off);
    if (RAND_bytes(bytes + off, static_cast<int>(n)) != 1) {
      return crypto_error("random_bytes: the random generator failed");
    }
  }
  return out;
}

void NativeCrypto::sha256(std::string data, std::function<void(Result<std::string>)> done) {
  executor_.post([data = std::move(data), done = std::move(done)]() mutable {
    Result<std::string> digest = compute_sha256(data);
    if (done) done(std::move(digest));
  });
}

void NativeCrypto::sign_jws(std::string alg, std::string private_key_pem, std::string signing_input,
                            std::function<void(Result<std::string>)> done) {
  executor_.post([alg = std::move(alg), pem = std::move(private_key_pem),
                  input = std::move(signing_input), done = std::move(done)]() mutable {
    Result<std::string> sig = compute_signature(alg, pem, input);
    // The key now lives only in OpenSSL's structures (freed with cleansing); wipe the text.
    OPENSSL_cleanse(pem.data(), pem.size());
    if (done) done(std::move(sig));
  });
}

}  // namespace mcprt::native
