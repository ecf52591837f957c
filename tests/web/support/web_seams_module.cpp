// A test-only wasm module (mcprt_web_seams.mjs) that lets Node tests drive the web
// platform seams directly: WebFetchHttpClient, WebIndexedDbStore, WebConsoleLogger and
// the OAuth seams (WebCrypto, WebCredentialStore, WebAuthorizer; tests/web/oauth_seams.test.mjs),
// all on one WebExecutor; and the core's URL parser (urlParse/urlResolve), which
// tests/web/url_differential.test.mjs compares with Node's URL; and the module's strtod
// (jsonRoundTrip/strtodScan, tests/web/strtod.test.mjs) and snprintf (snprintfOne,
// tests/web/snprintf.test.mjs). Every callback is reported to JS as
// Module.seamEvent(callId, kind, payloadJson), from the executor; tests/web/web_seams.test.mjs
// asserts on those.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "mcprt/url.hpp"
#include "mcprt/web/web_authorizer.hpp"
#include "mcprt/web/web_console_logger.hpp"
#include "mcprt/web/web_credential_store.hpp"
#include "mcprt/web/web_crypto.hpp"
#include "mcprt/web/web_executor.hpp"
#include "mcprt/web/web_fetch_http_client.hpp"
#include "mcprt/web/web_indexeddb_store.hpp"

EM_JS(void, seam_js_event, (int call_id, const char* kind, const char* payload), {
  var handler = Module["seamEvent"];
  if (handler) handler(call_id, UTF8ToString(kind), UTF8ToString(payload));
});

namespace {

using mcprt::json;

struct Seams {
  mcprt::web::WebExecutor executor;
  mcprt::web::WebFetchHttpClient http{executor};
  std::map<int, std::unique_ptr<mcprt::HttpRequestHandle>> requests;
  std::map<std::tuple<std::string, std::string>, std::unique_ptr<mcprt::web::WebIndexedDbStore>> stores;
  mcprt::web::WebConsoleLogger logger{mcprt::LogLevel::debug};
  std::unique_ptr<mcprt::web::WebCrypto> crypto = std::make_unique<mcprt::web::WebCrypto>(executor);
  std::map<std::tuple<std::string, std::string>, std::unique_ptr<mcprt::web::WebCredentialStore>>
      credential_stores;
  std::map<int, std::unique_ptr<mcprt::CredentialLock>> locks;  // by the lock() call's id
  std::map<int, std::unique_ptr<mcprt::AuthorizeFlow>> flows;   // by authBegin's call id
};

Seams& seams() {
  static Seams* s = new Seams();  // lives as long as the module
  return *s;
}

void emit(int call_id, const char* kind, const json& payload) {
  seam_js_event(call_id, kind, payload.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
}

json error_json(const mcprt::Error& e) {
  return {{"code", mcprt::to_string(e.code)}, {"message", e.message}, {"data", e.data}};
}

// request: {method, url, headers: [[n, v]], body, timeoutMs, followRedirects}
std::string http_send(int call_id, const std::string& request_json) {
  json in = json::parse(request_json, nullptr, false);
  if (!in.is_object()) return "request is not a JSON object";
  mcprt::HttpRequest request;
  request.method = in.value("method", "GET");
  request.url = in.value("url", "");
  request.body = in.value("body", "");
  request.timeout_ms = in.value("timeoutMs", 0);
  request.follow_redirects = in.value("followRedirects", false);
  if (auto hs = in.find("headers"); hs != in.end() && hs->is_array()) {
    for (const json& h : *hs) request.headers.add(h[0].get<std::string>(), h[1].get<std::string>());
  }
  mcprt::HttpCallbacks callbacks;
  callbacks.on_response_head = [call_id](const mcprt::HttpResponseHead& head) {
    json headers = json::array();
    for (const auto& h : head.headers) headers.push_back({h.name, h.value});
    emit(call_id, "head", {{"status", head.status}, {"url", head.final_url}, {"headers", headers}});
  };
  callbacks.on_body_chunk = [call_id](std::string_view bytes) {
    emit(call_id, "chunk", {{"text", std::string(bytes)}});
  };
  callbacks.on_complete = [call_id](mcprt::Status status) {
    seams().requests.erase(call_id);
    emit(call_id, "complete", status ? json{{"ok", true}} : json{{"ok", false}, {"error", error_json(status.error())}});
  };
  auto handle = seams().http.send(std::move(request), std::move(callbacks));
  if (!handle) return handle.error().message;
  seams().requests[call_id] = std::move(handle).value();
  return "";
}

// Aborts (destroys the handle, as the core does).
void http_abort(int call_id) { seams().requests.erase(call_id); }
int http_active() { return static_cast<int>(seams().http.active_requests()); }

mcprt::web::WebIndexedDbStore& store(const std::string& db, const std::string& name) {
  auto& slot = seams().stores[{db, name}];
  if (!slot) slot = std::make_unique<mcprt::web::WebIndexedDbStore>(seams().executor, db, name);
  return *slot;
}

void kv_get(int call_id, const std::string& db, const std::string& name, const std::string& key) {
  store(db, name).get(key, [call_id](mcprt::Result<std::optional<std::string>> r) {
    if (!r) emit(call_id, "get", {{"ok", false}, {"error", error_json(r.error())}});
    else if (!r.value()) emit(call_id, "get", {{"ok", true}, {"found", false}});
    else emit(call_id, "get", {{"ok", true}, {"found", true}, {"value", *r.value()}});
  });
}

void kv_put(int call_id, const std::string& db, const std::string& name, const std::string& key,
            const std::string& value) {
  store(db, name).put(key, value, [call_id](mcprt::Status s) {
    emit(call_id, "put", s ? json{{"ok", true}} : json{{"ok", false}, {"error", error_json(s.error())}});
  });
}

void kv_remove(int call_id, const std::string& db, const std::string& name, const std::string& key) {
  store(db, name).remove(key, [call_id](mcprt::Status s) {
    emit(call_id, "remove", s ? json{{"ok", true}} : json{{"ok", false}, {"error", error_json(s.error())}});
  });
}

// Destroys the store object (its IndexedDB data stays).
void kv_drop(const std::string& db, const std::string& name) { seams().stores.erase({db, name}); }

// Posts `count` closures at once, plus a chain of `count` closures each posted by the
// previous one; every closure reports {"chain": bool, "index": i}.
void executor_post(int call_id, int count) {
  auto& ex = seams().executor;
  for (int i = 0; i < count; ++i) {
    ex.post([call_id, i] { emit(call_id, "ran", {{"chain", false}, {"index", i}}); });
  }
  struct Chain {
    static void step(int call_id, int i, int count) {
      emit(call_id, "ran", {{"chain", true}, {"index", i}});
      if (i + 1 < count) seams().executor.post([=] { step(call_id, i + 1, count); });
    }
  };
  if (count > 0) ex.post([=] { Chain::step(call_id, 0, count); });
}

// A timer that reports "fired"; returns its id for executorCancel.
double executor_timer(int call_id, int delay_ms) {
  return static_cast<double>(seams().executor.post_after(
      mcprt::Millis(delay_ms), [call_id] { emit(call_id, "fired", json::object()); }));
}
bool executor_cancel(double timer_id) {
  return seams().executor.cancel_timer(static_cast<mcprt::TimerId>(timer_id));
}

void log_at(int level, const std::string& message) {
  seams().logger.log(static_cast<mcprt::LogLevel>(level), message);
}

// The parsed URL as JSON ({ok:true, href, scheme, username, password, userinfo, host, port,
// explicitPort, path, query, hasQuery, origin}) or {ok:false, error}.
json url_json(const mcprt::Result<mcprt::Url>& url) {
  json out;
  if (!url) {
    out = {{"ok", false}, {"error", url.error().message}};
  } else {
    out = {{"ok", true},
           {"href", url->to_string()},
           {"scheme", url->scheme},
           {"username", url->username},
           {"password", url->password},
           {"userinfo", url->userinfo},
           {"host", url->host},
           {"port", url->port},
           {"explicitPort", url->explicit_port},
           {"path", url->path},
           {"query", url->query},
           {"hasQuery", url->has_query},
           {"origin", url->origin()}};
  }
  return out;
}

// parse_http_url_checked(input), and whether parse_http_url agrees.
std::string url_parse(const std::string& input) {
  mcprt::Result<mcprt::Url> url = mcprt::parse_http_url_checked(input);
  json out = url_json(url);
  out["plainAgrees"] = mcprt::parse_http_url(input).has_value() == url.ok();
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// `reference` against `base`: the fields (parse_http_url_checked with the base) and what
// resolve_url returns for the same pair (null when it rejects).
std::string url_resolve(const std::string& base, const std::string& reference) {
  const std::optional<mcprt::Url> parsed_base = mcprt::parse_http_url(base);
  if (!parsed_base) return json{{"ok", false}, {"error", "the base does not parse"}}.dump();
  json out = url_json(mcprt::parse_http_url_checked(reference, &*parsed_base));
  const std::optional<std::string> resolved = mcprt::resolve_url(base, reference);
  out["resolved"] = resolved ? json(*resolved) : json(nullptr);
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// --- strtod (platform-web/src/web_strtod.cpp) -------------------------------------------

// JSON text parsed by nlohmann (whose lexer calls strtod for numbers with a fraction or an
// exponent) and written back; "" when it does not parse.
std::string json_round_trip(const std::string& text) {
  const json doc = json::parse(text, nullptr, false);
  return doc.is_discarded() ? std::string() : doc.dump();
}

// strtod itself: {consumed, value (as text: "inf", "-inf" or the shortest round trip), erange}.
std::string strtod_scan(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  const bool erange = errno == ERANGE;
  return json{{"consumed", end - text.c_str()},
              {"value", std::isinf(value) ? (value > 0 ? "inf" : "-inf") : json(value).dump()},
              {"erange", erange}}
      .dump();
}

// The module's snprintf (platform-web/src/web_snprintf.cpp) with one argument of `kind`
// ("int", "uint", "llong", "ullong" (the argument as decimal text), "string", "pointer",
// "double", or "none"), into a buffer of `capacity` bytes: {result, text, einval}.
std::string snprintf_one(const std::string& kind, const std::string& fmt, const std::string& arg,
                         int capacity) {
  std::string buf(static_cast<std::size_t>(capacity > 0 ? capacity : 1), '#');
  char* out = capacity > 0 ? buf.data() : nullptr;
  const auto n = static_cast<std::size_t>(capacity > 0 ? capacity : 0);
  errno = 0;
  int r = 0;
  if (kind == "int") r = std::snprintf(out, n, fmt.c_str(), static_cast<int>(std::strtoll(arg.c_str(), nullptr, 10)));
  else if (kind == "uint") r = std::snprintf(out, n, fmt.c_str(), static_cast<unsigned>(std::strtoull(arg.c_str(), nullptr, 10)));
  else if (kind == "llong") r = std::snprintf(out, n, fmt.c_str(), std::strtoll(arg.c_str(), nullptr, 10));
  else if (kind == "ullong") r = std::snprintf(out, n, fmt.c_str(), std::strtoull(arg.c_str(), nullptr, 10));
  else if (kind == "string") r = std::snprintf(out, n, fmt.c_str(), arg.c_str());
  else if (kind == "pointer") r = std::snprintf(out, n, fmt.c_str(), reinterpret_cast<void*>(std::strtoull(arg.c_str(), nullptr, 10)));
  else if (kind == "double") r = std::snprintf(out, n, fmt.c_str(), std::strtod(arg.c_str(), nullptr));
  else r = std::snprintf(out, n, fmt.c_str(), 0);  // an unused argument: C ignores it
  const bool einval = errno == EINVAL;
  return json{{"result", r}, {"text", capacity > 0 ? std::string(buf.c_str()) : std::string()}, {"einval", einval}}
      .dump();
}

// --- OAuth seams ---------------------------------------------------------------------

std::string to_hex(const std::string& bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// {ok:true, hex} or {ok:false, error}; synchronous, as the seam is.
std::string crypto_random(int count) {
  auto r = seams().crypto->random_bytes(static_cast<std::size_t>(count));
  json out = r ? json{{"ok", true}, {"hex", to_hex(*r)}} : json{{"ok", false}, {"error", error_json(r.error())}};
  return out.dump();
}

void report_bytes(int call_id, const char* kind, const mcprt::Result<std::string>& r) {
  emit(call_id, kind, r ? json{{"ok", true}, {"hex", to_hex(*r)}} : json{{"ok", false}, {"error", error_json(r.error())}});
}

void crypto_sha256(int call_id, const std::string& data_hex) {
  seams().crypto->sha256(from_hex(data_hex), [call_id](mcprt::Result<std::string> r) { report_bytes(call_id, "sha256", r); });
}

void crypto_sign(int call_id, const std::string& alg, const std::string& pem, const std::string& input) {
  seams().crypto->sign_jws(alg, pem, input, [call_id](mcprt::Result<std::string> r) { report_bytes(call_id, "sign", r); });
}

// Destroys the WebCrypto (answers still running are dropped) and makes a new one.
void crypto_reset() {
  seams().crypto.reset();
  seams().crypto = std::make_unique<mcprt::web::WebCrypto>(seams().executor);
}

mcprt::web::WebCredentialStore& credential_store(const std::string& db, const std::string& name) {
  auto& slot = seams().credential_stores[{db, name}];
  if (!slot) slot = std::make_unique<mcprt::web::WebCredentialStore>(seams().executor, db, name);
  return *slot;
}

void cred_get(int call_id, const std::string& db, const std::string& name, const std::string& key) {
  credential_store(db, name).get(key, [call_id](mcprt::Result<std::optional<std::string>> r) {
    if (!r) emit(call_id, "get", {{"ok", false}, {"error", error_json(r.error())}});
    else if (!r.value()) emit(call_id, "get", {{"ok", true}, {"found", false}});
    else emit(call_id, "get", {{"ok", true}, {"found", true}, {"value", *r.value()}});
  });
}

void cred_put(int call_id, const std::string& db, const std::string& name, const std::string& key,
              const std::string& value) {
  credential_store(db, name).put(key, value, [call_id](mcprt::Status s) {
    emit(call_id, "put", s ? json{{"ok", true}} : json{{"ok", false}, {"error", error_json(s.error())}});
  });
}

void cred_remove(int call_id, const std::string& db, const std::string& name, const std::string& key) {
  credential_store(db, name).remove(key, [call_id](mcprt::Status s) {
    emit(call_id, "remove", s ? json{{"ok", true}} : json{{"ok", false}, {"error", error_json(s.error())}});
  });
}

// Reports "lock" {ok:true} (the lock is kept under call_id until credUnlock) or {ok:false, error}.
void cred_lock(int call_id, const std::string& db, const std::string& name, const std::string& key,
               int wait_ms) {
  credential_store(db, name).lock(key, mcprt::Millis(wait_ms),
                                  [call_id](mcprt::Result<std::unique_ptr<mcprt::CredentialLock>> r) {
                                    if (!r) {
                                      emit(call_id, "lock", {{"ok", false}, {"error", error_json(r.error())}});
                                      return;
                                    }
                                    seams().locks[call_id] = std::move(r).value();
                                    emit(call_id, "lock", {{"ok", true}});
                                  });
}

// Releases the lock the lock() call `call_id` got; false if it holds none.
bool cred_unlock(int call_id) { return seams().locks.erase(call_id) > 0; }

// Destroys the credential store object (its IndexedDB data and held locks stay).
void cred_drop(const std::string& db, const std::string& name) { seams().credential_stores.erase({db, name}); }

// Starts a flow kept under call_id; returns "" or begin()'s error message.
std::string auth_begin(int call_id, const std::string& redirect_uri, int handler,
                       const std::string& server, int timeout_ms) {
  mcprt::web::WebAuthorizer authorizer(seams().executor, redirect_uri, handler);
  mcprt::AuthorizeFlowOptions options;
  options.server_name = server;
  options.timeout = mcprt::Millis(timeout_ms);
  auto flow = authorizer.begin(options);
  if (!flow) return json{{"ok", false}, {"error", error_json(flow.error())}}.dump();
  const std::string redirect = (*flow)->redirect_uri();
  seams().flows[call_id] = std::move(flow).value();
  return json{{"ok", true}, {"redirectUri", redirect}}.dump();
}

// Reports "authorize" {ok:true, url} or {ok:false, error}.
void auth_authorize(int call_id, const std::string& url) {
  auto it = seams().flows.find(call_id);
  if (it == seams().flows.end()) return;
  it->second->authorize(url, [call_id](mcprt::Result<std::string> r) {
    emit(call_id, "authorize", r ? json{{"ok", true}, {"url", *r}} : json{{"ok", false}, {"error", error_json(r.error())}});
  });
}

// Destroys the flow (cancels it).
void auth_drop(int call_id) { seams().flows.erase(call_id); }

}  // namespace

EMSCRIPTEN_BINDINGS(mcprt_web_seams) {
  emscripten::function("urlParse", &url_parse);
  emscripten::function("urlResolve", &url_resolve);
  emscripten::function("jsonRoundTrip", &json_round_trip);
  emscripten::function("strtodScan", &strtod_scan);
  emscripten::function("snprintfOne", &snprintf_one);
  emscripten::function("httpSend", &http_send);
  emscripten::function("httpAbort", &http_abort);
  emscripten::function("httpActive", &http_active);
  emscripten::function("kvGet", &kv_get);
  emscripten::function("kvPut", &kv_put);
  emscripten::function("kvRemove", &kv_remove);
  emscripten::function("kvDrop", &kv_drop);
  emscripten::function("log", &log_at);
  emscripten::function("executorPost", &executor_post);
  emscripten::function("executorTimer", &executor_timer);
  emscripten::function("executorCancel", &executor_cancel);
  emscripten::function("cryptoRandom", &crypto_random);
  emscripten::function("cryptoSha256", &crypto_sha256);
  emscripten::function("cryptoSign", &crypto_sign);
  emscripten::function("cryptoReset", &crypto_reset);
  emscripten::function("credGet", &cred_get);
  emscripten::function("credPut", &cred_put);
  emscripten::function("credRemove", &cred_remove);
  emscripten::function("credLock", &cred_lock);
  emscripten::function("credUnlock", &cred_unlock);
  emscripten::function("credDrop", &cred_drop);
  emscripten::function("authBegin", &auth_begin);
  emscripten::function("authAuthorize", &auth_authorize);
  emscripten::function("authDrop", &auth_drop);
}
