// WebCrypto: the Crypto seam over crypto.getRandomValues and crypto.subtle (see
// web_crypto.hpp).
#include "mcprt/web/web_crypto.hpp"

#include <emscripten/emscripten.h>

#include <utility>

#include "web_js_calls.hpp"

namespace {
// mcprt_js_sign_jws's outcome when the key (not the platform) was the problem.
constexpr int kKeyRejected = 2;
// Its `alg` argument.
constexpr int kRs256 = 0;
constexpr int kEs256 = 1;
}  // namespace

// clang-format off
// --- JS glue (one line after preprocessing: semicolons, double quotes, no regex escapes) --

// 1 when `count` bytes were written at `out`, 0 when there is no crypto.getRandomValues.
EM_JS(int, mcprt_js_random_bytes, (unsigned char* out, int count), {
  var c = globalThis.crypto;
  if (!c || typeof c.getRandomValues != "function") return 0;
  for (var offset = 0; offset < count; offset += 65536) {
    var n = Math.min(65536, count - offset);
    var chunk = new Uint8Array(n);
    c.getRandomValues(chunk);
    HEAPU8.set(chunk, out + offset);
  }
  return 1;
});

EM_JS(void, mcprt_js_sha256, (int id, const unsigned char* data, int size), {
  var bytes = HEAPU8.slice(data, data + size);
  Promise.resolve().then(function() {
    var subtle = globalThis.crypto && globalThis.crypto.subtle;
    if (!subtle) throw new Error("crypto.subtle is not available here (browsers offer it only to https:// and localhost pages)");
    return subtle.digest("SHA-256", bytes);
  }).then(function(digest) { Module["mcprtSettle"](id, 1, digest); },
          function(e) { Module["mcprtSettle"](id, 0, Module["mcprtDescribe"](e)); });
});

// The key is read from a PKCS#8 PEM here (atob), so no base64 decoder ships in the wasm.
EM_JS(void, mcprt_js_sign_jws,
      (int id, int alg, const char* pem, int pem_len, const unsigned char* input, int input_len), {
  var pemText = UTF8ToString(pem, pem_len);
  var data = HEAPU8.slice(input, input + input_len);
  var keyError = function(text) { var e = new Error(text); e.mcprtKey = true; return e; };
  Promise.resolve().then(function() {
    var subtle = globalThis.crypto && globalThis.crypto.subtle;
    if (!subtle) throw new Error("crypto.subtle is not available here (browsers offer it only to https:// and localhost pages)");
    var begin = "-----BEGIN PRIVATE KEY-----";
    var end = "-----END PRIVATE KEY-----";
    var from = pemText.indexOf(begin);
    var to = pemText.indexOf(end);
    if (from < 0 || to < from) {
      if (pemText.indexOf("-----BEGIN RSA PRIVATE KEY-----") >= 0 || pemText.indexOf("-----BEGIN EC PRIVATE KEY-----") >= 0) {
        throw keyError("the browser reads only PKCS#8 private keys (\"BEGIN PRIVATE KEY\"); convert this one with: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem");
      }
      if (pemText.indexOf("-----BEGIN ENCRYPTED PRIVATE KEY-----") >= 0) {
        throw keyError("the private key is encrypted; give it unencrypted as PKCS#8 (\"BEGIN PRIVATE KEY\")");
      }
      throw keyError("the private key is not a PEM \"BEGIN PRIVATE KEY\" (PKCS#8) block");
    }
    var body = pemText.slice(from + begin.length, to);
    var b64 = "";
    for (var i = 0; i < body.length; ++i) {
      var ch = body.charAt(i);
      if (ch > " ") b64 += ch;
    }
    var der;
    try {
      var raw = atob(b64);
      der = new Uint8Array(raw.length);
      for (var j = 0; j < raw.length; ++j) der[j] = raw.charCodeAt(j);
    } catch (e) {
      throw keyError("the private key's PEM body is not base64");
    }
    var importAlg = alg == 0 ? { name : "RSASSA-PKCS1-v1_5", hash : "SHA-256" } : { name : "ECDSA", namedCurve : "P-256" };
    var signAlg = alg == 0 ? { name : "RSASSA-PKCS1-v1_5" } : { name : "ECDSA", hash : "SHA-256" };
    return subtle.importKey("pkcs8", der, importAlg, false, [ "sign" ]).then(function(key) {
      return subtle.sign(signAlg, key, data);
    }, function(e) {
      throw keyError("the private key could not be read as " + (alg == 0 ? "an RSA" : "a P-256 EC") + " key (" + Module["mcprtDescribe"](e) + ")");
    });
  }).then(function(signature) { Module["mcprtSettle"](id, 1, signature); },
          function(e) { Module["mcprtSettle"](id, e && e.mcprtKey ? 2 : 0, Module["mcprtDescribe"](e)); });
});
// clang-format on

namespace mcprt::web {
namespace {

// The Result<std::string> callback as a JsDone: kJsOk → the bytes; otherwise an error
// whose code `failure_code` (a rejected key → invalid_argument).
detail::JsDone bytes_answer(std::string what, std::function<void(Result<std::string>)> done) {
  return [what = std::move(what), done = std::move(done)](int outcome, std::string value) {
    if (!done) return;
    if (outcome == detail::kJsOk) {
      done(std::move(value));
      return;
    }
    const ErrorCode code =
        outcome == kKeyRejected ? ErrorCode::invalid_argument : ErrorCode::internal;
    done(Error::make(code, what + ": " + value));
  };
}

}  // namespace

WebCrypto::~WebCrypto() { detail::cancel_js_calls_of(this); }

Result<std::string> WebCrypto::random_bytes(std::size_t count) {
  std::string out(count, '\0');
  if (count == 0) return out;
  if (!mcprt_js_random_bytes(reinterpret_cast<unsigned char*>(out.data()),
                             static_cast<int>(count))) {
    return Error::make(
        ErrorCode::internal,
        "random bytes: crypto.getRandomValues is not available in this JavaScript environment");
  }
  return out;
}

void WebCrypto::sha256(std::string data, std::function<void(Result<std::string>)> done) {
  const int id = detail::begin_js_call(this, executor_, bytes_answer("SHA-256", std::move(done)));
  mcprt_js_sha256(id, reinterpret_cast<const unsigned char*>(data.data()),
                  static_cast<int>(data.size()));
}

void WebCrypto::sign_jws(std::string alg, std::string private_key_pem, std::string signing_input,
                         std::function<void(Result<std::string>)> done) {
  const int alg_id = alg == "RS256" ? kRs256 : alg == "ES256" ? kEs256 : -1;
  if (alg_id < 0) {
    // Posted: the async contract holds for a refusal too.
    executor_.post([alg = std::move(alg), done = std::move(done)] {
      if (done) {
        done(Error::make(ErrorCode::invalid_argument,
                         "JWS signature: unsupported alg \"" + alg + "\" (RS256 and ES256 are)"));
      }
    });
    return;
  }
  const int id = detail::begin_js_call(this, executor_,
                                       bytes_answer("JWS " + alg + " signature", std::move(done)));
  mcprt_js_sign_jws(id, alg_id, private_key_pem.data(), static_cast<int>(private_key_pem.size()),
                    reinterpret_cast<const unsigned char*>(signing_input.data()),
                    static_cast<int>(signing_input.size()));
}

}  // namespace mcprt::web
