#pragma once
// WebFetchHttpClient: the HttpClient seam (mcprt/platform/http_client.hpp) over the
// JavaScript `fetch` API, for browsers and Node 20+ (both have fetch + ReadableStream).
// [x] any method, request headers, binary-safe request body
// [x] streamed response bodies: every ReadableStream chunk becomes one on_body_chunk
// [x] response headers (a browser shows only CORS-safelisted and exposed ones: servers
//     must send Access-Control-Expose-Headers: Mcp-Session-Id, see kCorsExposedResponseHeaders)
// [x] abort through AbortController; destroying the handle or the client aborts too
// [x] timeout_ms until the response head (a C++ timer on the executor)
// [x] follow_redirects=true → fetch `redirect: "follow"` (fetch's own hop limit of 20
//     applies, not max_redirects), final_url = response.url;
//     follow_redirects=false → `redirect: "manual"` (the core asks for it for every request
//     carrying credentials or session headers): Node returns the 3xx as is (head +
//     Location; the core follows hop by hop, stripping them on a cross-origin hop); a
//     browser hides it (opaqueredirect), reported as ErrorCode::transport, data
//     {"redirect": true}, whose message says the server redirected, that mcprt does not
//     follow redirects of credentialed requests in the browser, and to configure the
//     final URL. Nothing is ever sent to where such a redirect leads.
// [x] network failure: with a cause (Node: ECONNREFUSED, ENOTFOUND...) a transport error
//     naming it; without one (a browser's opaque "Failed to fetch", which is also what a
//     CORS rejection looks like) make_cors_error's message, which says how to fix CORS
// [ ] upload streaming, per-request credentials mode (fetch defaults: same-origin cookies)
//
// JS glue: EM_JS functions in web_fetch_http_client.cpp keep an id → AbortController table
// (Module.mcprtFetches) and call back exported C functions; every callback is queued and
// delivered through the executor, in order, never inside send().
//
// Lifetime: single-threaded (the JS event loop). Destroy the client before its executor;
// destroying it aborts every request still running (no callback runs afterwards).

#include <cstddef>
#include <memory>

#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/http_client.hpp"

namespace mcprt::web {

class WebFetchHttpClient final : public HttpClient {
 public:
  explicit WebFetchHttpClient(Executor& executor);
  ~WebFetchHttpClient() override;
  WebFetchHttpClient(const WebFetchHttpClient&) = delete;
  WebFetchHttpClient& operator=(const WebFetchHttpClient&) = delete;

  Result<std::unique_ptr<HttpRequestHandle>> send(HttpRequest request,
                                                  HttpCallbacks callbacks) override;

  // Requests started and not yet completed or aborted.
  std::size_t active_requests() const;

 private:
  struct State;
  Executor& executor_;
  std::shared_ptr<State> state_;
};

}  // namespace mcprt::web
