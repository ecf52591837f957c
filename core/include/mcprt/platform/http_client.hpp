#pragma once
// The HttpClient seam: a platform moves HTTP bytes; the core does every MCP rule on top
// (Streamable HTTP and legacy SSE transports, http_transport.hpp).
//   native: libcurl (+OpenSSL), one multi handle driven by the executor's loop, results
//           posted to it (platform-native/src/native_http_client.cpp);
//   web:    fetch + ReadableStream + AbortController (JS glue);
//   tests:  FakeHttpClient (tests/support), which the test answers chunk by chunk.
//
// One request, one callback sequence, always on the executor the client was built with:
//
//     on_response_head(head)  once, when the status line and headers arrived
//     on_body_chunk(bytes)    zero or more times, the body in order, any chunking
//     on_complete(status)     exactly once, last
//
// or, when the request fails before a response head arrived, only on_complete(error).
// A non-2xx status is NOT an error at this level: it is a head, its body, and
// on_complete(ok). on_complete carries an error only when the exchange itself failed:
//   ErrorCode::transport  connection refused, DNS, TLS, reset, a body cut short;
//                         a browser CORS rejection is ErrorCode::transport with
//                         data {"cors": true} (see make_cors_error), so the core reports
//                         it through the same path with a message that says the fix;
//                         a redirect the platform can neither follow nor show (fetch's
//                         opaque redirect) is ErrorCode::transport with data
//                         {"redirect": true};
//   ErrorCode::timeout    timeout_ms passed before the head arrived, or any other
//                         deadline of the platform's own (a read/idle timeout);
//   ErrorCode::aborted    the platform itself gave up (page unload, client shut down).
// The core reads ErrorCode::transport before any head (without "redirect") as "the server
// is gone" and closes the connection (http_transport.hpp, TRANSPORT LOSS), so a platform
// must report its own timeouts as ErrorCode::timeout, never as transport.
//
// The async contract (executor.hpp) applies: if send() fails, the error is returned and
// no callback ever runs; no callback runs inside send(); callbacks run on the executor.
// Cancellation: HttpRequestHandle::abort() — after it returns NO callback runs at all (not
// even on_complete(aborted)): the caller already knows it cancelled. Destroying the
// handle aborts the request. Both may happen inside the request's own callbacks.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/result.hpp"

namespace mcprt {

// ASCII case-insensitive comparison (HTTP header names, media types, URL schemes).
bool iequals(std::string_view a, std::string_view b);

struct HttpHeader {
  std::string name;
  std::string value;
  bool operator==(const HttpHeader&) const = default;
};

// Header fields in the order they were added (the order they go on the wire), with
// case-insensitive lookup by name.
class HttpHeaders {
 public:
  HttpHeaders() = default;
  HttpHeaders(std::initializer_list<HttpHeader> init) : entries_(init) {}

  // Appends a field (duplicates allowed) and returns it (valid until the next change).
  HttpHeader& add(std::string name, std::string value);
  // Replaces every field named `name` by one field (appended when absent).
  void set(std::string name, std::string value);
  void remove(std::string_view name);

  // The first field named `name`, or null.
  const std::string* find(std::string_view name) const;
  // Its value, or "" when absent.
  std::string get(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  // Room for `n` fields without reallocating.
  void reserve(std::size_t n) { entries_.reserve(n); }

  const std::vector<HttpHeader>& entries() const { return entries_; }
  std::vector<HttpHeader>::const_iterator begin() const { return entries_.begin(); }
  std::vector<HttpHeader>::const_iterator end() const { return entries_.end(); }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  bool operator==(const HttpHeaders&) const = default;

 private:
  std::vector<HttpHeader> entries_;
};

struct HttpRequest {
  std::string method = "GET";  // "GET", "POST", "DELETE"
  std::string url;             // absolute http:// or https:// URL
  HttpHeaders headers;
  std::string body;
  // Deadline until the response head arrives (connect + send + head); 0 = none. A
  // streamed body is never cut by it: the caller aborts a stream it no longer wants.
  std::int64_t timeout_ms = 0;
  // GET only: follow 301/302/303/307/308 (at most max_redirects hops) and report the final
  // URL in the head. When false, a 3xx is reported as it is (head + Location header) and
  // the core decides. The core sets it ONLY for a request that carries none of the
  // headers bound to an origin (Authorization, Cookie, configured headers,
  // Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID: SPEC §17); every other request it
  // follows itself, hop by hop, stripping them on a cross-origin hop. A platform that
  // follows adds nothing of its own on a hop (no cookies from a jar, no stored auth) and
  // may refuse an https→http hop itself (the core refuses it anyway from final_url). A
  // platform that cannot stop at a redirect and show it (fetch's opaque redirects)
  // completes with an ErrorCode::transport error, data {"redirect": true}, that says so.
  bool follow_redirects = false;
  int max_redirects = 5;
};

struct HttpResponseHead {
  int status = 0;
  HttpHeaders headers;
  // The URL that answered: the request URL, or where the redirects ended. Platforms fill
  // it; the core treats an empty value as the request URL.
  std::string final_url;
};

struct HttpCallbacks {
  std::function<void(const HttpResponseHead&)> on_response_head;
  std::function<void(std::string_view bytes)> on_body_chunk;  // valid during the call only
  std::function<void(Status)> on_complete;
};

// Cancels one request. Destroying the handle cancels it too.
class HttpRequestHandle {
 public:
  virtual ~HttpRequestHandle() = default;
  // Idempotent. No callback of this request runs after abort() returned.
  virtual void abort() = 0;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Starts a request. A request that cannot start (malformed URL, unsupported scheme) is
  // an error here and no callback runs. The callbacks are moved into the request and
  // released after on_complete (or abort).
  virtual Result<std::unique_ptr<HttpRequestHandle>> send(HttpRequest request,
                                                          HttpCallbacks callbacks) = 0;
};

// The request headers a browser-facing MCP server must allow, and the response headers it
// must expose, for mcprt to work through fetch (SPEC §11).
inline constexpr std::string_view kCorsAllowedRequestHeaders =
    "content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id";
inline constexpr std::string_view kCorsExposedResponseHeaders = "mcp-session-id";

// The error a web HttpClient completes with when the browser blocked a request by CORS:
// ErrorCode::transport, data {"cors": true, "url": url}, and a message naming the fix.
Error make_cors_error(std::string_view url);

}  // namespace mcprt
