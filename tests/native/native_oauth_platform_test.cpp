// The native OAuth seams (SPEC §13) against the real thing: NativeCrypto against published
// SHA-256 vectors and OpenSSL's own signature verification.

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>
#include <optional>
#include <set>
#include <string>

#include "mcprt/native/crypto.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt::native {
namespace {

using mcprt::testing::ManualExecutor;

std::string to_hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0x0F];
  }
  return out;
}

// ---- OpenSSL helpers for the test's own side (key generation, verification) ----

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;

Pkey generate_rsa(unsigned bits) { return Pkey(EVP_RSA_gen(bits)); }
Pkey generate_ec(const char* curve) { return Pkey(EVP_EC_gen(curve)); }

// PKCS#8 ("BEGIN PRIVATE KEY"), or the traditional per-type form ("BEGIN RSA/EC PRIVATE KEY").
std::string private_pem(EVP_PKEY* key, bool traditional = false) {
  BIO* bio = BIO_new(BIO_s_mem());
  const int ok = traditional
                     ? PEM_write_bio_PrivateKey_traditional(bio, key, nullptr, nullptr, 0, nullptr, nullptr)
                     : PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  EXPECT_EQ(ok, 1);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  return pem;
}

std::string encrypted_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  static char pass[] = "correct horse";
  EXPECT_EQ(PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), pass, sizeof pass - 1, nullptr,
                                          nullptr),
            1);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  return pem;
}

// Verifies a JWS signature with OpenSSL (the ES256 R||S form converted back to DER).
bool verify_jws(const std::string& alg, EVP_PKEY* key, const std::string& input, const std::string& sig) {
  std::string der = sig;
  if (alg == "ES256") {
    if (sig.size() != 64) return false;
    ECDSA_SIG* es = ECDSA_SIG_new();
    const auto* b = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG_set0(es, BN_bin2bn(b, 32, nullptr), BN_bin2bn(b + 32, 32, nullptr));
    unsigned char* out = nullptr;
    const int len = i2d_ECDSA_SIG(es, &out);
    der.assign(reinterpret_cast<char*>(out), static_cast<std::size_t>(len));
    OPENSSL_free(out);
    ECDSA_SIG_free(es);
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(der.data()), der.size(),
                             reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

// Keys are generated once: RSA-2048 generation takes a moment in a debug build.
EVP_PKEY* rsa_key() {
  static Pkey key = generate_rsa(2048);
  return key.get();
}
EVP_PKEY* ec_key() {
  static Pkey key = generate_ec("P-256");
  return key.get();
}

class NativeCryptoTest : public ::testing::Test {
 protected:
  Result<std::string> sha256(std::string data) {
    std::optional<Result<std::string>> out;
    crypto_.sha256(std::move(data), [&](Result<std::string> r) { out.emplace(std::move(r)); });
    EXPECT_FALSE(out.has_value()) << "completed inside sha256()";
    ex_.run_until_idle();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : Result<std::string>(Error{});
  }
  Result<std::string> sign(std::string alg, std::string pem, std::string input) {
    std::optional<Result<std::string>> out;
    crypto_.sign_jws(std::move(alg), std::move(pem), std::move(input),
                     [&](Result<std::string> r) { out.emplace(std::move(r)); });
    EXPECT_FALSE(out.has_value()) << "completed inside sign_jws()";
    ex_.run_until_idle();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : Result<std::string>(Error{});
  }

  ManualExecutor ex_;
  NativeCrypto crypto_{ex_};
};

// FIPS 180-2 appendix B and the usual extra vectors (empty input, a NUL byte).
TEST_F(NativeCryptoTest, Sha256MatchesPublishedVectors) {
  const std::pair<std::string, std::string> vectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1, '\0'), "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"},
      {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
  for (const auto& [input, hex] : vectors) {
    auto digest = sha256(input);
    ASSERT_TRUE(digest.ok()) << digest.error();
    EXPECT_EQ(digest->size(), 32u);
    EXPECT_EQ(to_hex(*digest), hex) << "input of " << input.size() << " bytes";
  }
}

// RFC 7636 appendix B: the S256 code challenge of the example verifier, as base64url.
TEST_F(NativeCryptoTest, Sha256GivesThePkceExampleChallenge) {
  auto digest = sha256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
  ASSERT_TRUE(digest.ok()) << digest.error();
  EXPECT_EQ(to_hex(*digest), "13d31e961a1ad8ec2f16b10c4c982e0876a878ad6df144566ee1894acb70f9c3");
}

TEST_F(NativeCryptoTest, RandomBytesHaveTheSizeAndDiffer) {
  auto a = crypto_.random_bytes(32);
  auto b = crypto_.random_bytes(32);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 32u);
  EXPECT_EQ(b->size(), 32u);
  EXPECT_NE(*a, *b);
  EXPECT_NE(*a, std::string(32, '\0'));
  auto none = crypto_.random_bytes(0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  // Over the 1 MiB chunk RAND_bytes is called with: every chunk is filled, not only the first.
  auto big = crypto_.random_bytes((3u << 20) + 5);
  ASSERT_TRUE(big.ok());
  ASSERT_EQ(big->size(), (3u << 20) + 5);
  for (std::size_t chunk = 0; chunk < 4; ++chunk) {
    const std::string part = big->substr(chunk << 20, chunk < 3 ? (1u << 20) : 5);
    std::set<unsigned char> seen(part.begin(), part.end());
    EXPECT_GT(seen.size(), chunk < 3 ? 250u : 1u) << "chunk " << chunk;
  }
}

TEST_F(NativeCryptoTest, Rs256SignatureVerifiesWithOpenSsl) {
  const std::string input = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJtY3BydCJ9";
  for (bool traditional : {false, true}) {
    auto sig = sign("RS256", private_pem(rsa_key(), traditional), input);
    ASSERT_TRUE(sig.ok()) << sig.error();
    EXPECT_EQ(sig->size(), 256u);  // the modulus size of a 2048-bit key
    EXPECT_TRUE(verify_jws("RS256", rsa_key(), input, *sig)) << "traditional=" << traditional;
    EXPECT_FALSE(verify_jws("RS256", rsa_key(), input + "x", *sig));
    // PKCS#1 v1.5 is deterministic: the same input gives the same signature.
    auto again = sign("RS256", private_pem(rsa_key(), traditional), input);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *sig);
  }
}

TEST_F(NativeCryptoTest, Es256SignatureIsRawRAndSAndVerifiesWithOpenSsl) {
  const std::string input = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJjbGllbnQifQ";
  for (bool traditional : {false, true}) {
    // Several signatures, so one whose R or S has leading zero bytes (1 in 128) is likelier
    // to be among them: the padding to 32 bytes each must hold for every one.
    for (int i = 0; i < 8; ++i) {
      auto sig = sign("ES256", private_pem(ec_key(), traditional), input);
      ASSERT_TRUE(sig.ok()) << sig.error();
      ASSERT_EQ(sig->size(), 64u);
      EXPECT_TRUE(verify_jws("ES256", ec_key(), input, *sig)) << "traditional=" << traditional;
      EXPECT_FALSE(verify_jws("ES256", ec_key(), "x" + input, *sig));
    }
  }
}

TEST_F(NativeCryptoTest, Es256KeyWithParametersBlockFirstIsRead) {
  // `openssl ecparam -genkey` writes an "EC PARAMETERS" block before the key.
  const std::string pem = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" +
                          private_pem(ec_key(), true);
  auto sig = sign("ES256", pem, "a.b");
  ASSERT_TRUE(sig.ok()) << sig.error();
  EXPECT_TRUE(verify_jws("ES256", ec_key(), "a.b", *sig));
}

// Every refusal is invalid_argument and its message carries no line of the key.
void expect_refused_without_key(const Result<std::string>& r, const std::string& pem, const std::string& says) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << r.error();
  EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error();
  std::size_t start = 0;
  while (start < pem.size()) {
    std::size_t end = pem.find('\n', start);
    if (end == std::string::npos) end = pem.size();
    const std::string line = pem.substr(start, end - start);
    if (line.size() >= 16 && line.rfind("-----", 0) != 0) {
      EXPECT_EQ(r.error().message.find(line.substr(0, 16)), std::string::npos) << "key text in the error";
    }
    start = end + 1;
  }
}

TEST_F(NativeCryptoTest, UnsupportedAlgIsRefused) {
  const std::string pem = private_pem(rsa_key());
  expect_refused_without_key(sign("HS256", pem, "a.b"), pem, "unsupported alg \"HS256\"");
  expect_refused_without_key(sign("none", pem, "a.b"), pem, "unsupported alg");
}

TEST_F(NativeCryptoTest, KeyOfTheWrongTypeOrSizeIsRefused) {
  const std::string rsa = private_pem(rsa_key());
  const std::string ec = private_pem(ec_key());
  expect_refused_without_key(sign("ES256", rsa, "a.b"), rsa, "not an EC key");
  expect_refused_without_key(sign("RS256", ec, "a.b"), ec, "not an RSA key");
  Pkey p384 = generate_ec("P-384");
  const std::string p384_pem = private_pem(p384.get());
  expect_refused_without_key(sign("ES256", p384_pem, "a.b"), p384_pem, "secp384r1");
  Pkey small = generate_rsa(1024);
  const std::string small_pem = private_pem(small.get());
  expect_refused_without_key(sign("RS256", small_pem, "a.b"), small_pem, "1024 bits");
}

TEST_F(NativeCryptoTest, UnreadableKeysAreRefusedWithoutTheirText) {
  const std::string rsa = private_pem(rsa_key());
  // A PEM whose base64 was damaged, a public key, text that is no PEM, an encrypted key
  // (refused without a terminal prompt).
  std::string damaged = rsa;
  damaged[damaged.find('\n') + 10] = '*';
  expect_refused_without_key(sign("RS256", damaged, "a.b"), damaged, "not a readable PEM private key");
  const std::string secret_text = "sk-live-0123456789abcdef0123456789abcdef";
  expect_refused_without_key(sign("RS256", secret_text, "a.b"), secret_text, "not a readable PEM private key");
  EXPECT_EQ(sign("RS256", secret_text, "a.b").error().message.find("sk-live"), std::string::npos);
  BIO* bio = BIO_new(BIO_s_mem());
  ASSERT_EQ(PEM_write_bio_PUBKEY(bio, rsa_key()), 1);
  char* data = nullptr;
  const long pub_len = BIO_get_mem_data(bio, &data);
  const std::string pub(data, static_cast<std::size_t>(pub_len));
  BIO_free(bio);
  expect_refused_without_key(sign("RS256", pub, "a.b"), pub, "not a readable PEM private key");
  const std::string enc = encrypted_pem(rsa_key());
  expect_refused_without_key(sign("RS256", enc, "a.b"), enc, "not a readable PEM private key");
}

TEST_F(NativeCryptoTest, CompletionOutlivesTheCryptoObject) {
  std::optional<Result<std::string>> out;
  {
    NativeCrypto crypto(ex_);
    crypto.sha256("abc", [&](Result<std::string> r) { out.emplace(std::move(r)); });
  }
  ex_.run_until_idle();
  ASSERT_TRUE(out.has_value());
  ASSERT_TRUE(out->ok());
  EXPECT_EQ(to_hex(out->value()).substr(0, 8), "ba7816bf");
}

}  // namespace
}  // namespace mcprt::native
