// WebFetchHttpClient: HttpClient over fetch + ReadableStream + AbortController (see
// web_fetch_http_client.hpp for what it does and does not do).
#include "mcprt/json_object.hpp"
#include "mcprt/web/web_fetch_http_client.hpp"

#include <emscripten/emscripten.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mcprt/json_text.hpp"
#include "mcprt/url.hpp"

namespace mcprt::web {
namespace {

// How a fetch ended, as the JS glue reports it (mcprt_web_fetch_done's `kind`).
enum class FetchEnd : int {
  ok = 0,
  network_with_cause = 1,  // TypeError with a cause (Node): the message names it
  network_opaque = 2,      // TypeError without a cause (browser): network or CORS
  platform_abort = 3,      // aborted by something other than us (page unload)
  opaque_redirect = 4,     // redirect: "manual" in a browser
  body_error = 5,          // the body stream failed after the head
  other = 6,               // anything else fetch threw
};

struct FetchRequest : std::enable_shared_from_this<FetchRequest> {
  int id = 0;
  Executor* executor = nullptr;
  std::string method;
  std::string url;
  HttpCallbacks callbacks;
  // The owning client's live requests, ascending (ids only grow). A vector: the module has
  // no std::set<int> otherwise.
  std::weak_ptr<std::vector<int>> client_ids;
  ScopedTimer head_timer;
  bool head_arrived = false;  // set when JS reports the head (before it is delivered)
  bool finished = false;      // completed or aborted: nothing more is delivered
  bool dispatching = false;   // a user callback is running (do not destroy it)
  bool drain_posted = false;
  // Events capture the request itself: they run only from its drain(), which keeps it
  // alive. (A vector of std::function<void()>, as the executor's queue: the module has no
  // std::deque.)
  std::vector<std::function<void()>> queue;

  void push(std::function<void()> event) {
    if (finished) return;
    queue.push_back(std::move(event));
    if (drain_posted) return;
    drain_posted = true;
    executor->post([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->drain();
    });
  }

  void drain() {
    drain_posted = false;
    auto keep = shared_from_this();  // a callback may drop the last other owner
    // By index: an event may push more (run in this same drain) or, finishing the
    // request, release() the queue.
    std::size_t next = 0;
    while (next < queue.size() && !finished) {
      auto event = std::move(queue[next++]);
      dispatching = true;
      event();
      dispatching = false;
    }
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(std::min(next, queue.size())));
    if (finished) release();
  }

  // Frees the user's callbacks unless one of them is running right now.
  void release() {
    queue.clear();
    if (!dispatching) callbacks = HttpCallbacks{};
  }

  void forget_id();
  void complete(Status status);
  void abort();
};

// id → request, for the JS glue's callbacks. Owning while the request runs.
std::map<int, std::shared_ptr<FetchRequest>>& registry() {
  static std::map<int, std::shared_ptr<FetchRequest>> table;
  return table;
}
int g_next_fetch_id = 1;

}  // namespace
}  // namespace mcprt::web

// --- JS glue -------------------------------------------------------------------------
// The body of an EM_JS goes through the C preprocessor and ends up on one line: every
// statement ends with a semicolon and strings use double quotes.

EM_JS(void, mcprt_js_fetch_start,
      (int id, const char* method, const char* url, const char* headers_json,
       const unsigned char* body, int body_len, int follow_redirects),
      {
        var table = Module["mcprtFetches"] || (Module["mcprtFetches"] = new Map());
        var controller = new AbortController();
        table.set(id, controller);
        var requestUrl = UTF8ToString(url);
        var init = {
          method : UTF8ToString(method),
          headers : JSON.parse(UTF8ToString(headers_json)),
          signal : controller.signal,
          redirect : follow_redirects ? "follow" : "manual",
          cache : "no-store"
        };
        if (body_len > 0) init.body = HEAPU8.slice(body, body + body_len);
        function live() { return table.get(id) === controller; }
        function sendString(fn, a, b, text) {
          var n = lengthBytesUTF8(text) + 1;
          var p = _malloc(n);
          stringToUTF8(text, p, n);
          try { Module[fn](a, b, p); } finally { _free(p); }
        }
        function done(kind, message) {
          if (!live()) return;
          table.delete(id);
          sendString("_mcprt_web_fetch_done", id, kind, message);
        }
        function describe(e) {
          if (e && e.cause) {
            var c = e.cause;
            var text = c.message || String(c);
            if (c.code && text.indexOf(c.code) < 0) text = c.code + ": " + text;
            return text;
          }
          return e && e.message ? e.message : String(e);
        }
        function failed(e) {
          if (!live()) return;
          if (e && e.name == "AbortError") { done(3, "the request was aborted by the platform"); return; }
          if (e instanceof TypeError) { done(e.cause ? 1 : 2, describe(e)); return; }
          done(6, describe(e));
        }
        var fetchFn = globalThis.fetch;
        if (typeof fetchFn != "function") {
          Promise.resolve().then(function() { done(6, "fetch is not available in this JavaScript environment"); });
          return;
        }
        Promise.resolve().then(function() { return fetchFn(requestUrl, init); }).then(function(response) {
          if (!live()) return;
          if (response.type == "opaqueredirect") {
            controller.abort();
            done(4, "the server redirected (HTTP 3xx), and in the browser mcprt does not follow redirects of requests carrying credentials or session headers (the browser hides where they lead)");
            return;
          }
          var pairs = [];
          response.headers.forEach(function(value, name) { pairs.push([ name, value ]); });
          var finalUrl = response.url || requestUrl;
          var headersText = JSON.stringify({ status : response.status, url : finalUrl, headers : pairs });
          sendString("_mcprt_web_fetch_head", id, response.status, headersText);
          if (!live()) return;
          if (!response.body) { done(0, ""); return; }
          var reader = response.body.getReader();
          function pump() {
            return reader.read().then(function(step) {
              if (!live()) { reader.cancel().catch(function() {}); return; }
              if (step.done) { done(0, ""); return; }
              var bytes = step.value;
              if (bytes && bytes.length > 0) {
                var p = _malloc(bytes.length);
                HEAPU8.set(bytes, p);
                try { Module["_mcprt_web_fetch_chunk"](id, p, bytes.length); } finally { _free(p); }
              }
              return pump();
            });
          }
          return pump().catch(function(e) {
            if (!live()) return;
            if (e && e.name == "AbortError") { done(3, "the response body was aborted by the platform"); return; }
            done(5, describe(e));
          });
        }, failed);
      });

EM_JS(void, mcprt_js_fetch_abort, (int id), {
  var table = Module["mcprtFetches"];
  if (!table) return;
  var controller = table.get(id);
  if (!controller) return;
  table.delete(id);
  controller.abort();
});

namespace mcprt::web {
namespace {

void FetchRequest::forget_id() {
  registry().erase(id);  // may drop an owner; callers hold a shared_ptr
  if (auto ids = client_ids.lock()) {
    for (auto it = ids->begin(); it != ids->end(); ++it) {
      if (*it == id) {
        ids->erase(it);
        break;
      }
    }
  }
}

void FetchRequest::complete(Status status) {
  if (finished) return;
  finished = true;
  head_timer.reset();
  auto keep = shared_from_this();
  forget_id();
  auto on_complete = std::move(callbacks.on_complete);
  release();
  if (on_complete) on_complete(std::move(status));
}

void FetchRequest::abort() {
  if (finished) return;
  finished = true;
  head_timer.reset();
  auto keep = shared_from_this();
  mcprt_js_fetch_abort(id);
  forget_id();
  release();
}

std::string prefix(const FetchRequest& r) { return r.method + " " + r.url; }

// Errors before the head carry no "METHOD url" prefix: the core's HTTP layer adds it
// (http_common.cpp); a body error comes after the head, where the core does not.
Error end_error(const FetchRequest& r, FetchEnd kind, const std::string& message) {
  switch (kind) {
    case FetchEnd::network_with_cause:
      return Error::make(ErrorCode::transport, message, json_object({{"url", r.url}}));
    case FetchEnd::network_opaque: {
      // A browser reports a refused connection, a DNS failure and a CORS rejection the
      // same way; say both, with the CORS fix.
      Error e = make_cors_error(r.url);
      e.message = message + ": the server may be unreachable, or " + e.message;
      return e;
    }
    case FetchEnd::platform_abort:
      return Error::make(ErrorCode::aborted, message);
    case FetchEnd::opaque_redirect:
      // data.redirect tells the core this is not a server that is gone (http_client.hpp).
      return Error::make(ErrorCode::transport,
                         message + ": configure the final URL (where the redirect leads) instead",
                         json_object({{"url", r.url}, {"redirect", true}}));
    case FetchEnd::body_error:
      return Error::make(ErrorCode::transport, prefix(r) + ": the response body was cut short: " + message,
                         json_object({{"url", r.url}}));
    case FetchEnd::ok:
    case FetchEnd::other:
      break;
  }
  return Error::make(ErrorCode::transport, message, json_object({{"url", r.url}}));
}

std::shared_ptr<FetchRequest> find_request(int id) {
  auto it = registry().find(id);
  return it == registry().end() ? nullptr : it->second;
}

class FetchHandle final : public HttpRequestHandle {
 public:
  explicit FetchHandle(std::weak_ptr<FetchRequest> request) : request_(std::move(request)) {}
  ~FetchHandle() override { abort(); }
  void abort() override {
    if (auto r = request_.lock()) r->abort();
  }

 private:
  std::weak_ptr<FetchRequest> request_;
};

}  // namespace
}  // namespace mcprt::web

extern "C" {

// {"status":N,"url":"final","headers":[[name,value],...]} (JSON built by the glue).
EMSCRIPTEN_KEEPALIVE void mcprt_web_fetch_head(int id, int status, const char* head_json) {
  using namespace mcprt;
  auto request = web::find_request(id);
  if (!request || request->finished) return;
  request->head_arrived = true;
  request->head_timer.reset();
  HttpResponseHead head;
  head.status = status;
  json parsed = parse_json(head_json ? head_json : "");
  if (parsed.is_object()) {
    if (auto u = parsed.find("url"); u != parsed.end() && u->is_string()) {
      head.final_url = u->get<std::string>();
    }
    if (auto hs = parsed.find("headers"); hs != parsed.end() && hs->is_array()) {
      for (const json& pair : *hs) {
        if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string()) {
          head.headers.add(pair[0].get<std::string>(), pair[1].get<std::string>());
        }
      }
    }
  }
  if (head.final_url.empty()) head.final_url = request->url;
  request->push([&r = *request, head = std::move(head)] {
    if (r.callbacks.on_response_head) r.callbacks.on_response_head(head);
  });
}

EMSCRIPTEN_KEEPALIVE void mcprt_web_fetch_chunk(int id, const char* bytes, int size) {
  auto request = mcprt::web::find_request(id);
  if (!request || request->finished || size <= 0) return;
  request->push([&r = *request, data = std::string(bytes, static_cast<std::size_t>(size))] {
    if (r.callbacks.on_body_chunk) r.callbacks.on_body_chunk(data);
  });
}

EMSCRIPTEN_KEEPALIVE void mcprt_web_fetch_done(int id, int kind, const char* message) {
  using namespace mcprt;
  auto request = web::find_request(id);
  if (!request || request->finished) return;
  request->head_timer.reset();
  const auto end = static_cast<web::FetchEnd>(kind);
  Status status;
  if (end != web::FetchEnd::ok) status = web::end_error(*request, end, message ? message : "");
  request->push([&r = *request, status = std::move(status)]() mutable { r.complete(std::move(status)); });
}

}  // extern "C"

namespace mcprt::web {

struct WebFetchHttpClient::State {
  std::shared_ptr<std::vector<int>> ids = std::make_shared<std::vector<int>>();
};

WebFetchHttpClient::WebFetchHttpClient(Executor& executor)
    : executor_(executor), state_(std::make_shared<State>()) {}

WebFetchHttpClient::~WebFetchHttpClient() {
  const std::vector<int> ids = *state_->ids;  // abort() edits the list
  for (int id : ids) {
    if (auto r = find_request(id)) r->abort();
  }
}

std::size_t WebFetchHttpClient::active_requests() const { return state_->ids->size(); }

Result<std::unique_ptr<HttpRequestHandle>> WebFetchHttpClient::send(HttpRequest request,
                                                                    HttpCallbacks callbacks) {
  if (!parse_http_url(request.url)) {
    return Error::make(ErrorCode::invalid_argument,
                       "not an absolute http(s) URL: \"" + request.url + "\"");
  }
  if (request.method.empty()) {
    return Error::make(ErrorCode::invalid_argument, "an HTTP request needs a method");
  }

  auto r = std::make_shared<FetchRequest>();
  r->id = g_next_fetch_id++;
  r->executor = &executor_;
  r->method = request.method;
  r->url = request.url;
  r->callbacks = std::move(callbacks);
  r->client_ids = state_->ids;
  registry()[r->id] = r;
  state_->ids->push_back(r->id);

  if (request.timeout_ms > 0) {
    std::weak_ptr<FetchRequest> weak = r;
    const auto timeout_ms = request.timeout_ms;
    r->head_timer = ScopedTimer(executor_, executor_.post_after(Millis(timeout_ms), [weak, timeout_ms] {
      auto self = weak.lock();
      if (!self || self->finished || self->head_arrived) return;
      self->head_timer.release();
      mcprt_js_fetch_abort(self->id);
      self->complete(Error::make(ErrorCode::timeout,
                                 "no response within " + std::to_string(timeout_ms) + " ms",
                                 json_object({{"url", self->url}})));
    }));
  }

  json headers = json::array();
  for (const HttpHeader& h : request.headers) headers.push_back({h.name, h.value});
  mcprt_js_fetch_start(r->id, request.method.c_str(), request.url.c_str(), headers.dump(-1, ' ', false, json::error_handler_t::replace).c_str(),
                       reinterpret_cast<const unsigned char*>(request.body.data()),
                       static_cast<int>(request.body.size()), request.follow_redirects ? 1 : 0);
  return std::unique_ptr<HttpRequestHandle>(std::make_unique<FetchHandle>(r));
}

}  // namespace mcprt::web
