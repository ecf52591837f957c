// The native OAuth seams (SPEC §13) against the real thing: NativeCrypto against published
// SHA-256 vectors and OpenSSL's own signature verification; NativeCredentialStore on the
// real file system, its lock contended by a second process (this binary, re-run with
// --credential-lock-holder); LoopbackAuthorizer with real sockets, a $BROWSER script and a
// loopback authorization server that redirects.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "loopback_http_server.hpp"
#include "mcprt/native/authorizer.hpp"
#include "mcprt/native/credential_store.hpp"
#include "mcprt/native/crypto.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/testing/env_map.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/url.hpp"
#include "native_test_support.hpp"

extern char** environ;

namespace mcprt::native {
namespace native_oauth_platform_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using mcprt::testing::env_of;
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
  const int ok =
      traditional
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
  EXPECT_EQ(PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), pass, sizeof pass - 1,
                                          nullptr, nullptr),
            1);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(len));
  BIO_free(bio);
  return pem;
}

// Verifies a JWS signature with OpenSSL (the ES256 R||S form converted back to DER).
bool verify_jws(const std::string& alg, EVP_PKEY* key, const std::string& input,
                const std::string& sig) {
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
  bool ok =
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
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
      {std::string(1000000, 'a'),
       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
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
  const std::string pem =
      "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" +
      private_pem(ec_key(), true);
  auto sig = sign("ES256", pem, "a.b");
  ASSERT_TRUE(sig.ok()) << sig.error();
  EXPECT_TRUE(verify_jws("ES256", ec_key(), "a.b", *sig));
}

// Every refusal is invalid_argument and its message carries no line of the key.
void expect_refused_without_key(const Result<std::string>& r, const std::string& pem,
                                const std::string& says) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << r.error();
  EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error();
  std::size_t start = 0;
  while (start < pem.size()) {
    std::size_t end = pem.find('\n', start);
    if (end == std::string::npos) end = pem.size();
    const std::string line = pem.substr(start, end - start);
    if (line.size() >= 16 && line.rfind("-----", 0) != 0) {
      EXPECT_EQ(r.error().message.find(line.substr(0, 16)), std::string::npos)
          << "key text in the error";
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
  expect_refused_without_key(sign("RS256", damaged, "a.b"), damaged,
                             "not a readable PEM private key");
  const std::string secret_text = "sk-live-0123456789abcdef0123456789abcdef";
  expect_refused_without_key(sign("RS256", secret_text, "a.b"), secret_text,
                             "not a readable PEM private key");
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

// ===================================== NativeCredentialStore

using LockResult = Result<std::unique_ptr<CredentialLock>>;

fs::path make_temp_dir(const char* name) {
  std::string templ = (fs::temp_directory_path() / (std::string(name) + "-XXXXXX")).string();
  EXPECT_NE(::mkdtemp(templ.data()), nullptr);
  return templ;
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::string read_whole(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(out.size()))) > 0;) {
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// This binary re-run as `--credential-lock-holder <dir> <key> <wait ms>`, with pipes to its
// stdin and from its stdout. Killed and reaped when destroyed.
class LockHolderProcess {
 public:
  LockHolderProcess(const std::string& dir, const std::string& key, Millis wait) {
    int in[2];
    int out[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    ::posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::vector<std::string> args = {test::self_exe(), "--credential-lock-holder", dir, key,
                                     std::to_string(wait.count())};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(
        ::posix_spawn(&pid_, test::self_exe().c_str(), &actions, nullptr, argv.data(), environ), 0);
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
  }
  ~LockHolderProcess() {
    ::close(stdin_);
    ::close(stdout_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      reap();
    }
  }

  pid_t pid() const { return pid_; }

  // The next line the child printed, or "" on EOF or after test::kWaitLimit.
  std::string read_line() {
    for (int rounds = 0; rounds < 1000; ++rounds) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      pollfd p{stdout_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(test::kWaitLimit.count())) <= 0) return "";
      char buf[512];
      const ssize_t n = ::read(stdout_, buf, sizeof buf);
      if (n <= 0) return "";
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
    return "";
  }
  void tell(const std::string& line) {
    const std::string text = line + "\n";
    EXPECT_EQ(::write(stdin_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void kill_hard() { ::kill(pid_, SIGKILL); }
  // Waits for the exit; the exit code, or 128 + signal.
  int reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string buffer_;
};

class CredentialStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = make_temp_dir("mcprt-credentials"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string dir() const { return (root_ / "data" / "mcprt" / "credentials").string(); }

  Result<std::optional<std::string>> get(NativeCredentialStore& store, const std::string& key) {
    std::optional<Result<std::optional<std::string>>> out;
    store.get(key, [&](Result<std::optional<std::string>> r) { out.emplace(std::move(r)); });
    EXPECT_FALSE(out.has_value()) << "completed inside get()";
    ex_.run_until_idle();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : Result<std::optional<std::string>>(Error{});
  }
  Status put(NativeCredentialStore& store, const std::string& key, std::string value) {
    std::optional<Status> out;
    store.put(key, std::move(value), [&](Status st) { out = std::move(st); });
    EXPECT_FALSE(out.has_value()) << "completed inside put()";
    ex_.run_until_idle();
    return out ? *out : Status(Error{});
  }
  // Starts a lock() whose result lands in `out`; checks it did not complete inside the call.
  void lock(NativeCredentialStore& store, const std::string& key, Millis wait,
            std::optional<LockResult>& out) {
    store.lock(key, wait, [&out](LockResult r) { out.emplace(std::move(r)); });
    EXPECT_FALSE(out.has_value()) << "completed inside lock()";
    ex_.run_until_idle();
  }

  fs::path root_;
  ManualExecutor ex_;
};

TEST_F(CredentialStoreTest, FilesAre0600InA0700DirectoryWhateverTheUmask) {
  NativeCredentialStore store(dir(), ex_);
  const mode_t old = ::umask(0);
  Status written = put(store, "issuer|resource", R"({"access_token":"at"})");
  ::umask(old);
  ASSERT_TRUE(written.ok()) << written.error();
  EXPECT_EQ(store.path_for("issuer|resource"), dir() + "/issuer%7Cresource.json");
  EXPECT_EQ(mode_of(store.path_for("issuer|resource")), 0600u);
  EXPECT_EQ(mode_of(dir()), 0700u);
  auto r = get(store, "issuer|resource");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value(), std::optional<std::string>(R"({"access_token":"at"})"));

  // The lock file too, and a directory someone made world-readable is tightened.
  ASSERT_EQ(::chmod(dir().c_str(), 0755), 0);
  std::optional<LockResult> held;
  lock(store, "issuer|resource", Millis(0), held);
  ASSERT_TRUE(held && held->ok()) << (held ? held->error().describe() : "no result");
  EXPECT_EQ(mode_of(store.lock_path_for("issuer|resource")), 0600u);
  EXPECT_EQ(mode_of(dir()), 0700u);
}

TEST_F(CredentialStoreTest, ReplaceIsAtomicRenameAndLeavesNoTempFiles) {
  NativeCredentialStore store(dir(), ex_);
  ASSERT_TRUE(put(store, "k", R"({"refresh_token":"one"})").ok());
  const std::string path = store.path_for("k");
  // A reader that opened the old file keeps reading the whole old value: the new one is a
  // new file renamed over the entry, never a rewrite of the old one.
  const int old_fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(old_fd, 0);
  struct stat before {};
  ASSERT_EQ(::fstat(old_fd, &before), 0);
  ASSERT_TRUE(put(store, "k", R"({"refresh_token":"two, longer than one"})").ok());
  EXPECT_EQ(read_whole(old_fd), R"({"refresh_token":"one"})");
  ::close(old_fd);
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  auto r = get(store, "k");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), std::optional<std::string>(R"({"refresh_token":"two, longer than one"})"));
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(dir())) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"k.json"});
}

TEST_F(CredentialStoreTest, KeysCannotEscapeTheDirectoryOrMeetLockFiles) {
  NativeCredentialStore store(dir(), ex_);
  const std::string key = "https://as.example/../../tenant|https://mcp.example/mcp";
  ASSERT_TRUE(put(store, key, "{}").ok());
  EXPECT_EQ(fs::path(store.path_for(key)).parent_path(), fs::path(dir()));
  // The entry of key "x.lock" is "x.lock.json"; the lock of key "x" is "x.lock".
  ASSERT_TRUE(put(store, "x.lock", R"({"v":1})").ok());
  std::optional<LockResult> held;
  lock(store, "x", Millis(0), held);
  ASSERT_TRUE(held && held->ok());
  EXPECT_NE(store.path_for("x.lock"), store.lock_path_for("x"));
  auto r = get(store, "x.lock");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value(), std::optional<std::string>(R"({"v":1})"));
}

TEST_F(CredentialStoreTest, MissingKeyIsNulloptAndRemoveOfMissingSucceeds) {
  NativeCredentialStore store(dir(), ex_);
  auto r = get(store, "nothing");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->has_value());
  std::optional<Status> removed;
  store.remove("nothing", [&](Status st) { removed = std::move(st); });
  ex_.run_until_idle();
  ASSERT_TRUE(removed.has_value());
  EXPECT_TRUE(removed->ok());
}

TEST_F(CredentialStoreTest, UnreadableValueNamesTheFileNotItsContent) {
  NativeCredentialStore store(dir(), ex_);
  ASSERT_TRUE(put(store, "ok", "{}").ok());
  // A damaged file (cut mid-write by another tool): not JSON.
  {
    std::ofstream out(store.path_for("cut"));
    out << R"({"refresh_token":"rt-SECRET-4711","access_tok)";
  }
  auto cut = get(store, "cut");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code, ErrorCode::transport);
  EXPECT_NE(cut.error().message.find(store.path_for("cut")), std::string::npos) << cut.error();
  EXPECT_NE(cut.error().message.find("not valid JSON"), std::string::npos) << cut.error();
  EXPECT_EQ(cut.error().message.find("rt-SECRET"), std::string::npos) << cut.error();
  EXPECT_EQ(cut.error().message.find("refresh_token"), std::string::npos) << cut.error();
  // An entry that cannot be read at all (a directory where the file should be).
  fs::create_directory(store.path_for("dir"));
  auto unreadable = get(store, "dir");
  ASSERT_FALSE(unreadable.ok());
  EXPECT_NE(unreadable.error().message.find(store.path_for("dir")), std::string::npos)
      << unreadable.error();
  EXPECT_NE(unreadable.error().message.find("Credential store"), std::string::npos)
      << unreadable.error();
}

TEST_F(CredentialStoreTest, DirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory to another user";
  fs::create_directories(dir());
  ASSERT_EQ(::chown(dir().c_str(), 4242, 4242), 0);
  NativeCredentialStore store(dir(), ex_);
  Status written = put(store, "k", "{}");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find("belongs to another user"), std::string::npos)
      << written.error();
  EXPECT_FALSE(fs::exists(store.path_for("k")));
}

TEST_F(CredentialStoreTest, SecondLockWaitsForTheFirstAndTimesOut) {
  NativeCredentialStore a(dir(), ex_);
  NativeCredentialStore b(dir(), ex_);
  std::optional<LockResult> first;
  lock(a, "k", Millis(0), first);
  ASSERT_TRUE(first && first->ok());

  std::optional<LockResult> second;
  lock(b, "k", Millis(500), second);
  ex_.advance(Millis(499));
  EXPECT_FALSE(second.has_value()) << "gave up before the wait passed";
  ex_.advance(Millis(1));
  ASSERT_TRUE(second.has_value());
  ASSERT_FALSE(second->ok());
  EXPECT_EQ(second->error().code, ErrorCode::timeout);
  EXPECT_NE(second->error().message.find(a.lock_path_for("k")), std::string::npos)
      << second->error();
  EXPECT_NE(second->error().message.find("by process " + std::to_string(::getpid())),
            std::string::npos)
      << second->error();

  // The same store is not re-entrant either: a lock() waits for every other holder.
  std::optional<LockResult> again;
  lock(a, "k", Millis(0), again);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->error().code, ErrorCode::timeout);
  // Another key is independent.
  std::optional<LockResult> other;
  lock(b, "other", Millis(0), other);
  ASSERT_TRUE(other && other->ok());
}

TEST_F(CredentialStoreTest, ReleasedLockGoesToTheWaiterAtTheNextPoll) {
  NativeCredentialStore a(dir(), ex_);
  NativeCredentialStore b(dir(), ex_);
  std::optional<LockResult> first;
  lock(a, "k", Millis(0), first);
  ASSERT_TRUE(first && first->ok());
  std::optional<LockResult> second;
  lock(b, "k", Millis(60000), second);
  ex_.advance(Millis(1000));
  EXPECT_FALSE(second.has_value());
  first.reset();  // destroys the CredentialLock: the flock is released
  ex_.advance(NativeCredentialStore::kLockPollInterval);
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->ok()) << second->error();
  EXPECT_EQ(ex_.pending_timers(), 0u);
}

TEST_F(CredentialStoreTest, DestroyingTheStoreCancelsAPendingLock) {
  NativeCredentialStore a(dir(), ex_);
  std::optional<LockResult> first;
  lock(a, "k", Millis(0), first);
  ASSERT_TRUE(first && first->ok());
  bool called = false;
  {
    NativeCredentialStore b(dir(), ex_);
    b.lock("k", Millis(60000), [&](LockResult) { called = true; });
    ex_.advance(Millis(100));
  }
  EXPECT_EQ(ex_.pending_timers(), 0u);
  first.reset();
  ex_.advance(Millis(60000));
  EXPECT_FALSE(called);
  // A lock taken but not yet delivered is released with the store: another can take it.
  {
    NativeCredentialStore c(dir(), ex_);
    c.lock("k", Millis(0), [&](LockResult) { called = true; });
  }
  ex_.run_until_idle();
  EXPECT_FALSE(called);
  std::optional<LockResult> last;
  lock(a, "k", Millis(0), last);
  ASSERT_TRUE(last && last->ok());
}

TEST_F(CredentialStoreTest, LockOutlivesItsStore) {
  std::optional<LockResult> held;
  {
    NativeCredentialStore a(dir(), ex_);
    lock(a, "k", Millis(0), held);
  }
  ASSERT_TRUE(held && held->ok());
  NativeCredentialStore b(dir(), ex_);
  std::optional<LockResult> other;
  lock(b, "k", Millis(0), other);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->error().code, ErrorCode::timeout);
}

// The real case: two processes. The child takes the lock; this process waits (on the
// manual clock, so every poll is counted) until the child releases it.
TEST_F(CredentialStoreTest, SecondProcessWaitsUntilTheFirstReleases) {
  NativeCredentialStore store(dir(), ex_);
  LockHolderProcess child(dir(), "k", Millis(20000));
  ASSERT_EQ(child.read_line(), "locked " + std::to_string(child.pid()));

  std::optional<LockResult> mine;
  lock(store, "k", Millis(60000), mine);
  ex_.advance(Millis(2000));  // 80 attempts, each refused: the child holds it
  EXPECT_FALSE(mine.has_value());

  child.tell("release");
  ASSERT_EQ(child.read_line(), "released");
  ex_.advance(NativeCredentialStore::kLockPollInterval);
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(mine->ok()) << mine->error();
  EXPECT_EQ(child.reap(), 0);
}

TEST_F(CredentialStoreTest, LockHeldByAnotherProcessTimesOutNamingIt) {
  NativeCredentialStore store(dir(), ex_);
  LockHolderProcess child(dir(), "k", Millis(20000));
  ASSERT_EQ(child.read_line(), "locked " + std::to_string(child.pid()));
  std::optional<LockResult> mine;
  lock(store, "k", Millis(300), mine);
  ex_.advance(Millis(299));
  EXPECT_FALSE(mine.has_value());
  ex_.advance(Millis(1));
  ASSERT_TRUE(mine.has_value());
  ASSERT_FALSE(mine->ok());
  EXPECT_EQ(mine->error().code, ErrorCode::timeout);
  EXPECT_NE(mine->error().message.find("by process " + std::to_string(child.pid())),
            std::string::npos)
      << mine->error();
}

// A holder that dies without releasing (kill -9) releases with its descriptors.
TEST_F(CredentialStoreTest, LockOfAKilledProcessIsFree) {
  NativeCredentialStore store(dir(), ex_);
  LockHolderProcess child(dir(), "k", Millis(20000));
  ASSERT_EQ(child.read_line(), "locked " + std::to_string(child.pid()));
  std::optional<LockResult> mine;
  lock(store, "k", Millis(60000), mine);
  ex_.advance(Millis(500));
  EXPECT_FALSE(mine.has_value());
  child.kill_hard();
  EXPECT_EQ(child.reap(), 128 + SIGKILL);
  ex_.advance(NativeCredentialStore::kLockPollInterval);
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(mine->ok()) << mine->error();
}

// The other direction, on the child's real executor: it waits for this process's lock,
// gives up after its wait, and gets the lock once this process released it.
TEST_F(CredentialStoreTest, OtherProcessWaitsForOurLock) {
  NativeCredentialStore store(dir(), ex_);
  std::optional<LockResult> mine;
  lock(store, "k", Millis(0), mine);
  ASSERT_TRUE(mine && mine->ok());
  {
    LockHolderProcess child(dir(), "k", Millis(200));
    const std::string line = child.read_line();
    EXPECT_EQ(line.rfind("error timeout", 0), 0u) << line;
    EXPECT_NE(line.find("by process " + std::to_string(::getpid())), std::string::npos) << line;
    EXPECT_EQ(child.reap(), 1);
  }
  mine.reset();
  LockHolderProcess child(dir(), "k", Millis(20000));
  EXPECT_EQ(child.read_line(), "locked " + std::to_string(child.pid()));
  child.tell("release");
  EXPECT_EQ(child.read_line(), "released");
  EXPECT_EQ(child.reap(), 0);
}

TEST(CredentialStoreDir, FollowsXdgDataHomeThenHome) {
  EXPECT_EQ(default_credentials_dir(env_of({{"XDG_DATA_HOME", "/x/data"}, {"HOME", "/home/u"}})),
            "/x/data/mcprt/credentials");
  EXPECT_EQ(default_credentials_dir(env_of({{"XDG_DATA_HOME", "relative"}, {"HOME", "/home/u"}})),
            "/home/u/.local/share/mcprt/credentials");
  EXPECT_EQ(default_credentials_dir(env_of({{"HOME", "/home/u"}})),
            "/home/u/.local/share/mcprt/credentials");
  EXPECT_EQ(default_credentials_dir(env_of({})), "");
}

// ===================================== LoopbackAuthorizer

TEST(BrowserCommands, SplitLikeAShellWithoutOne) {
  const std::string url = "https://as.example/authorize?a=1&b=$(x)";
  using Commands = std::vector<std::vector<std::string>>;
  EXPECT_EQ(browser_commands("firefox", url), (Commands{{"firefox", url}}));
  EXPECT_EQ(browser_commands("chromium --new-window %s", url),
            (Commands{{"chromium", "--new-window", url}}));
  EXPECT_EQ(browser_commands("app --url=%s --again=%s", url),
            (Commands{{"app", "--url=" + url, "--again=" + url}}));
  EXPECT_EQ(browser_commands("'/opt/my browser/run' \"--profile=a b\" x\\ y", url),
            (Commands{{"/opt/my browser/run", "--profile=a b", "x y", url}}));
  EXPECT_EQ(browser_commands(R"(b "say \"hi\" \$HOME \n")", url),
            (Commands{{"b", R"(say "hi" $HOME \n)", url}}));
  // ':' separates commands to try in turn; empty parts and broken quotes are left out.
  EXPECT_EQ(browser_commands("first:: second %s:'broken", url),
            (Commands{{"first", url}, {"second", url}}));
  EXPECT_TRUE(browser_commands("  :", url).empty());
  // A URL that contains "%s" is inserted once, not expanded again.
  EXPECT_EQ(browser_commands("b %s", "http://h/?q=%s"), (Commands{{"b", "http://h/?q=%s"}}));
}

// Writes an executable shell script and returns its path.
std::string write_script(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path path = dir / name;
  {
    std::ofstream out(path);
    out << "#!/bin/sh\n" << body;
  }
  fs::permissions(path, fs::perms::owner_all);
  return path.string();
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A port nobody listens on right now (bound and closed at once).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool can_connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

int port_of(const std::string& redirect_uri) {
  auto url = parse_http_url(redirect_uri);
  return url ? url->port : -1;
}

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = make_temp_dir("mcprt-authorizer"); }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // An authorizer whose browser is `browser` ($BROWSER) and whose prompts are recorded.
  LoopbackAuthorizerOptions options_with(std::optional<std::string> browser) {
    LoopbackAuthorizerOptions o;
    std::map<std::string, std::string> env;
    if (browser) env["BROWSER"] = *browser;
    o.env = env_of(env);
    o.on_prompt = [this](const AuthorizePrompt& p) { prompts_.push_back(p); };
    return o;
  }

  fs::path root_;
  std::vector<AuthorizePrompt> prompts_;
};

// begin -> authorize -> $BROWSER (a script running curl) follows the authorization URL to
// a loopback authorization server, which redirects to the callback -> the redirect URL.
TEST_F(AuthorizerTest, BrowserScriptFollowsTheRedirectBackToTheFlow) {
  NativeExecutor ex;
  test::LoopbackHttpServer as;
  as.get("/authorize", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 302;
    res.set_header("Location", req.get_param_value("redirect_uri") + "?code=c0de&state=" +
                                   req.get_param_value("state") + "&iss=http%3A%2F%2F127.0.0.1");
  });
  as.start();
  const std::string args_file = (root_ / "args").string();
  const std::string fds_file = (root_ / "fds").string();
  // Records its arguments and its open descriptors, then follows the URL like a browser.
  const std::string script = write_script(
      root_, "browser",
      "ls -l /proc/$$/fd > '" + fds_file + "'\nprintf '%s\\n' \"$@\" > '" + args_file +
          ".tmp' && mv '" + args_file + ".tmp' '" + args_file +
          "'\nfor url; do :; done\nexec curl --noproxy '*' -s -L -o /dev/null \"$url\"\n");
  LoopbackAuthorizer authorizer(ex, options_with(script + " --first %s"));
  auto flow = authorizer.begin({.server_name = "demo"});
  ASSERT_TRUE(flow.ok()) << flow.error();
  const std::string redirect_uri = (*flow)->redirect_uri();
  ASSERT_EQ(redirect_uri.rfind("http://127.0.0.1:", 0), 0u) << redirect_uri;
  ASSERT_EQ(redirect_uri.substr(redirect_uri.size() - 9), "/callback");
  const int port = port_of(redirect_uri);

  std::string encoded_redirect;
  append_percent_encoded(encoded_redirect, redirect_uri, [](unsigned char c, std::size_t) {
    return std::isalnum(c) != 0 || c == '.' || c == '-' || c == '_';
  });
  const std::string authorization_url =
      as.url("/authorize") + "?response_type=code&state=st4te&redirect_uri=" + encoded_redirect;
  // A descriptor some other code of this process opened without O_CLOEXEC: the browser
  // must not get it either.
  const int inheritable = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(inheritable, 0);
  std::optional<Result<std::string>> redirect;
  (*flow)->authorize(authorization_url,
                     [&](Result<std::string> r) { redirect.emplace(std::move(r)); });
  ::close(inheritable);
  EXPECT_FALSE(redirect.has_value()) << "completed inside authorize()";
  ASSERT_EQ(prompts_.size(), 1u);
  EXPECT_TRUE(prompts_[0].browser_started) << prompts_[0].browser_error;
  EXPECT_EQ(prompts_[0].browser_command, script);
  EXPECT_EQ(prompts_[0].server_name, "demo");
  EXPECT_EQ(prompts_[0].authorization_url, authorization_url);
  EXPECT_EQ(prompts_[0].redirect_uri, redirect_uri);

  ASSERT_TRUE(test::pump_until(ex, [&] { return redirect.has_value(); }));
  ASSERT_TRUE(redirect->ok()) << redirect->error();
  EXPECT_EQ(redirect->value(), redirect_uri + "?code=c0de&state=st4te&iss=http%3A%2F%2F127.0.0.1");
  EXPECT_EQ(as.count("GET", "/authorize"), 1u);
  EXPECT_EQ(read_lines(args_file), (std::vector<std::string>{"--first", authorization_url}));
  // The browser inherited no socket of this process (the listener's among them).
  std::ifstream fds(fds_file);
  const std::string listing((std::istreambuf_iterator<char>(fds)),
                            std::istreambuf_iterator<char>());
  EXPECT_NE(listing.find("/dev/null"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("socket:"), std::string::npos) << listing;
  // The flow ended: its port is closed.
  EXPECT_FALSE(can_connect(port));
}

// The URL is hostile: it reaches the browser as one argument, never through a shell.
TEST_F(AuthorizerTest, HostileUrlReachesTheBrowserAsOneArgument) {
  NativeExecutor ex;
  const std::string args_file = (root_ / "args").string();
  const std::string script =
      write_script(root_, "browser",
                   "printf '%s\\n' \"$@\" > '" + args_file + ".tmp' && mv '" + args_file +
                       ".tmp' '" + args_file + "'\n");
  LoopbackAuthorizer authorizer(ex, options_with("/nonexistent/browser %s:" + script));
  auto flow = authorizer.begin({.server_name = "evil"});
  ASSERT_TRUE(flow.ok()) << flow.error();
  const std::string pwned = (root_ / "pwned").string();
  const std::string url = "http://127.0.0.1:9/authorize?a=$(touch${IFS}" + pwned + ")&b=`touch " +
                          pwned + "`;touch${IFS}" + pwned + "|x&c='\"&state=s";
  const std::string shown = parse_http_url(url)->to_string();
  bool called = false;
  (*flow)->authorize(url, [&](Result<std::string>) { called = true; });
  ASSERT_EQ(prompts_.size(), 1u);
  EXPECT_TRUE(prompts_[0].browser_started) << prompts_[0].browser_error;
  EXPECT_EQ(prompts_[0].browser_command, script);  // the first command does not exist
  EXPECT_EQ(prompts_[0].authorization_url, shown);
  ASSERT_TRUE(test::poll_until(ex, [&] { return fs::exists(args_file); }));
  EXPECT_EQ(read_lines(args_file), std::vector<std::string>{shown});
  EXPECT_NE(shown.find("$(touch${IFS}"), std::string::npos) << shown;
  EXPECT_FALSE(fs::exists(pwned));
  EXPECT_FALSE(called);
}

TEST_F(AuthorizerTest, OnlyTheCallbackOfThisSignInCompletesTheFlow) {
  NativeExecutor ex;
  LoopbackAuthorizerOptions options = options_with(std::nullopt);
  options.open_browser = false;
  LoopbackAuthorizer authorizer(ex, options);
  auto flow = authorizer.begin({.server_name = "demo"});
  ASSERT_TRUE(flow.ok()) << flow.error();
  const int port = port_of((*flow)->redirect_uri());
  httplib::Client client("127.0.0.1", port);

  // Before authorize(): nothing is waiting for a redirect.
  auto early = client.Get("/callback?code=x&state=st4te");
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 400);

  std::optional<Result<std::string>> redirect;
  (*flow)->authorize("http://127.0.0.1:9/authorize?client_id=c&state=st4te",
                     [&](Result<std::string> r) { redirect.emplace(std::move(r)); });
  ASSERT_EQ(prompts_.size(), 1u);
  EXPECT_FALSE(prompts_[0].browser_started);

  auto other = client.Get("/favicon.ico");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
  auto post = client.Post("/callback?code=x&state=st4te", "", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);
  auto prefix = client.Get("/callbackx?code=x&state=st4te");
  ASSERT_TRUE(prefix);
  EXPECT_EQ(prefix->status, 404);
  auto wrong_state = client.Get("/callback?code=x&state=guess");
  ASSERT_TRUE(wrong_state);
  EXPECT_EQ(wrong_state->status, 400);
  auto no_state = client.Get("/callback?code=x");
  ASSERT_TRUE(no_state);
  EXPECT_EQ(no_state->status, 400);
  // A page on a name that resolves to 127.0.0.1 (DNS rebinding) sends its own Host.
  auto rebound = client.Get("/callback?code=x&state=st4te",
                            {{"Host", "evil.example:" + std::to_string(port)}});
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 400);
  ex.run_for(Millis(50));
  EXPECT_FALSE(redirect.has_value()) << "a refused request completed the flow";

  auto good = client.Get("/callback?code=c0de&state=st%34te");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->status, 200);
  EXPECT_NE(good->body.find("You can close this tab"), std::string::npos);
  EXPECT_EQ(good->get_header_value("Cache-Control"), "no-store");
  ASSERT_TRUE(test::pump_until(ex, [&] { return redirect.has_value(); }));
  ASSERT_TRUE(redirect->ok()) << redirect->error();
  EXPECT_EQ(redirect->value(), (*flow)->redirect_uri() + "?code=c0de&state=st%34te");
  EXPECT_FALSE(can_connect(port));
}

TEST_F(AuthorizerTest, TakenPortIsAnErrorNamingIt) {
  NativeExecutor ex;
  test::LoopbackHttpServer taken;
  taken.start();
  LoopbackAuthorizer authorizer(ex, options_with(std::nullopt));
  auto flow = authorizer.begin({.server_name = "demo", .callback_port = taken.port()});
  ASSERT_FALSE(flow.ok());
  EXPECT_EQ(flow.error().code, ErrorCode::transport);
  EXPECT_NE(flow.error().message.find("127.0.0.1:" + std::to_string(taken.port())),
            std::string::npos)
      << flow.error();
  EXPECT_NE(flow.error().message.find("demo"), std::string::npos) << flow.error();
  EXPECT_NE(flow.error().message.find("oauth.callbackPort"), std::string::npos) << flow.error();
  auto bad = authorizer.begin({.server_name = "demo", .callback_port = 70000});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::invalid_argument);
}

TEST_F(AuthorizerTest, FixedCallbackPortIsUsed) {
  NativeExecutor ex;
  LoopbackAuthorizer authorizer(ex, options_with(std::nullopt));
  const int port = free_port();
  auto flow = authorizer.begin({.server_name = "demo", .callback_port = port});
  ASSERT_TRUE(flow.ok()) << flow.error();
  EXPECT_EQ((*flow)->redirect_uri(), "http://127.0.0.1:" + std::to_string(port) + "/callback");
  EXPECT_TRUE(can_connect(port));
  // Two flows never share a listener: a second one on the same fixed port is refused.
  auto second = authorizer.begin({.server_name = "other", .callback_port = port});
  EXPECT_FALSE(second.ok());
  flow->reset();
  EXPECT_FALSE(can_connect(port));
}

TEST_F(AuthorizerTest, NoAnswerTimesOutAndClosesTheListener) {
  ManualExecutor ex;
  LoopbackAuthorizerOptions options = options_with(std::nullopt);
  options.open_browser = false;
  LoopbackAuthorizer authorizer(ex, options);
  auto flow = authorizer.begin({.server_name = "demo", .timeout = Millis(120000)});
  ASSERT_TRUE(flow.ok()) << flow.error();
  const int port = port_of((*flow)->redirect_uri());
  std::optional<Result<std::string>> redirect;
  (*flow)->authorize("https://as.example/authorize?state=s",
                     [&](Result<std::string> r) { redirect.emplace(std::move(r)); });
  ex.advance(Millis(119999));
  EXPECT_FALSE(redirect.has_value());
  EXPECT_TRUE(can_connect(port));
  ex.advance(Millis(1));
  ASSERT_TRUE(redirect.has_value());
  ASSERT_FALSE(redirect->ok());
  EXPECT_EQ(redirect->error().code, ErrorCode::timeout);
  EXPECT_NE(redirect->error().message.find("'demo'"), std::string::npos) << redirect->error();
  EXPECT_NE(redirect->error().message.find("120 s"), std::string::npos) << redirect->error();
  EXPECT_FALSE(can_connect(port));
}

TEST_F(AuthorizerTest, DestroyingTheFlowCancelsItWithoutACallback) {
  ManualExecutor ex;
  LoopbackAuthorizerOptions options = options_with(std::nullopt);
  options.open_browser = false;
  LoopbackAuthorizer authorizer(ex, options);
  auto flow = authorizer.begin({.server_name = "demo", .timeout = Millis(1000)});
  ASSERT_TRUE(flow.ok());
  const int port = port_of((*flow)->redirect_uri());
  bool called = false;
  (*flow)->authorize("https://as.example/authorize", [&](Result<std::string>) { called = true; });
  flow->reset();
  EXPECT_FALSE(can_connect(port));
  ex.advance(Millis(5000));
  EXPECT_FALSE(called);
  EXPECT_EQ(ex.pending_timers(), 0u);
}

TEST_F(AuthorizerTest, PromptShowsTheSerializedUrlAndWhyNoBrowserStarted) {
  ManualExecutor ex;
  // Headless: no $BROWSER, no display. xdg-open is not tried.
  LoopbackAuthorizer authorizer(ex, options_with(std::nullopt));
  auto flow = authorizer.begin({.server_name = "demo"});
  ASSERT_TRUE(flow.ok());
  bool called = false;
  (*flow)->authorize("https://as.example/authorize?x=\x1b[31mred a",
                     [&](Result<std::string>) { called = true; });
  ASSERT_EQ(prompts_.size(), 1u);
  EXPECT_FALSE(prompts_[0].browser_started);
  EXPECT_NE(prompts_[0].browser_error.find("no display"), std::string::npos)
      << prompts_[0].browser_error;
  EXPECT_EQ(prompts_[0].authorization_url, "https://as.example/authorize?x=%1B[31mred%20a");
  EXPECT_FALSE(called);
}

TEST_F(AuthorizerTest, UrlThatIsNotHttpIsRefusedAndSecondAuthorizeFails) {
  ManualExecutor ex;
  const std::string marker = (root_ / "started").string();
  const std::string script = write_script(root_, "browser", "touch '" + marker + "'\n");
  LoopbackAuthorizer authorizer(ex, options_with(script));
  auto flow = authorizer.begin({.server_name = "demo"});
  ASSERT_TRUE(flow.ok());
  std::optional<Result<std::string>> first;
  (*flow)->authorize("--remote-debugging-port=9222",
                     [&](Result<std::string> r) { first.emplace(std::move(r)); });
  EXPECT_FALSE(first.has_value());
  ex.run_until_idle();
  ASSERT_TRUE(first.has_value());
  ASSERT_FALSE(first->ok());
  EXPECT_EQ(first->error().code, ErrorCode::invalid_argument);
  EXPECT_TRUE(prompts_.empty());
  EXPECT_FALSE(fs::exists(marker));
  std::optional<Result<std::string>> second;
  (*flow)->authorize("https://as.example/authorize",
                     [&](Result<std::string> r) { second.emplace(std::move(r)); });
  ex.run_until_idle();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->error().code, ErrorCode::invalid_argument);
}

// The detached launcher the authorizer and the CLI's URL-mode elicitation share.
TEST(StartDetached, StartsAProgramFromPathAndNamesWhyOneCannotStart) {
  const fs::path marker = fs::temp_directory_path() / ("mcprt-detached-" + std::to_string(::getpid()));
  fs::remove(marker);
  EXPECT_EQ(start_detached({"touch", marker.string()}), 0);
  for (int i = 0; i < 200 && !fs::exists(marker); ++i) ::usleep(10 * 1000);
  EXPECT_TRUE(fs::exists(marker)) << "the detached program ran";
  fs::remove(marker);
  EXPECT_EQ(start_detached({"mcprt-no-such-program-anywhere"}), ENOENT);
  EXPECT_EQ(start_detached({}), EINVAL);
}

}  // namespace
}  // namespace native_oauth_platform_test

namespace test {

// `--credential-lock-holder <dir> <key> <wait ms>`: takes the lock, prints "locked <pid>",
// holds it until a line arrives on stdin (or stdin closes), releases, prints "released".
// When the lock cannot be had: prints "error <describe()>" and exits 1.
int run_credential_lock_holder(int argc, char** argv) {
  if (argc < 3) return 2;
  NativeExecutor ex;
  NativeCredentialStore store(argv[0], ex);
  std::optional<native_oauth_platform_test::LockResult> got;
  store.lock(argv[1], Millis(std::strtoll(argv[2], nullptr, 10)),
             [&](native_oauth_platform_test::LockResult r) { got.emplace(std::move(r)); });
  ex.run_until([&] { return got.has_value(); }, kWaitLimit);
  if (!got || !got->ok()) {
    std::printf("error %s\n", got ? got->error().describe().c_str() : "no answer");
    std::fflush(stdout);
    return 1;
  }
  std::printf("locked %d\n", static_cast<int>(::getpid()));
  std::fflush(stdout);
  char c = 0;
  while (::read(0, &c, 1) == 1 && c != '\n') {
  }
  got.reset();
  std::printf("released\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace test
}  // namespace mcprt::native
