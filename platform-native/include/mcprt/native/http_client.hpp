#pragma once
// NativeHttpClient: the native HttpClient (mcprt/platform/http_client.hpp) on cpp-httplib
// 0.11 (+OpenSSL for https), one worker thread per request in flight, every result posted
// to the NativeExecutor.
//
// Implements:
//  [x] http:// and https:// (httplib::SSLClient; certificates verified against the system
//      CA store, or the CA file/dir in the options), SNI and host-name check by httplib
//  [x] the seam's callback sequence — head, body chunks as they arrive, complete — posted
//      to the executor; no callback ever runs on a worker thread or inside send()
//  [x] a 204 (which httplib answers without a response handler) still reports its head
//  [x] HttpRequest::timeout_ms as a deadline until the head (connect + send + head,
//      redirect hops included) → ErrorCode::timeout; a streamed body is never cut by it
//  [x] GET redirects (301/302/303/307/308) when follow_redirects, at most max_redirects
//      hops, final_url reported; otherwise the 3xx head is reported as it is
//  [x] abort(): marks the request aborted and shuts its socket down, so a read blocked on
//      a silent server or an idle SSE stream returns at once; no callback runs after
//      abort() returned (posted closures check the flag on the executor thread)
//  [x] errors: ErrorCode::transport naming the method, the URL and httplib's error
//      (refused, unresolvable host, TLS, a body cut short), ErrorCode::timeout,
//      ErrorCode::aborted when the client itself is destroyed under a live request
//  [x] SIGPIPE is blocked on the worker threads (httplib writes with plain send(2)), so a
//      peer that went away never kills the host; no process-wide signal change
//  [ ] no connection reuse: every request opens its own connection (`Connection: close`)
//  [ ] no proxy support, no client certificates, no HTTP/2
//
// Threads: each request runs, from connect to the end of its body, on one worker thread
// with its own httplib client (a Client serializes its requests, and a long-lived SSE
// stream holds its worker until it ends, so requests never share one). Workers are pooled:
// a finished worker waits for the next request; at most max_idle_threads wait, the rest
// exit. At most max_threads run at once; requests beyond that wait in FIFO order for a
// worker (their timeout_ms deadline still runs while they wait).
//
// Abort caveat: a request still resolving its host name (getaddrinfo cannot be
// interrupted) stops only when the lookup returns; abort() itself never waits for it.
//
// Threading and lifetime: send(), abort() and the handles belong to the executor's loop
// thread (as every core caller does). Destroying the client aborts every request, posts
// on_complete(ErrorCode::aborted) to requests whose handle is still alive, and joins all
// worker threads before it returns: no thread outlives the client. Destroy it on the loop
// thread or while the loop is not pumped. The executor must outlive the client; handles
// may outlive it (their abort() then has nothing left to stop).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mcprt/native/executor.hpp"
#include "mcprt/platform/http_client.hpp"

namespace mcprt::native {

struct NativeHttpClientOptions {
  // Worker threads running requests at once; more requests wait for a free worker.
  std::size_t max_threads = 64;
  // Finished workers kept waiting for the next request.
  std::size_t max_idle_threads = 4;
  // Bound on establishing a connection (TCP + TLS), also when a request has no timeout_ms.
  std::int64_t connect_timeout_ms = 30000;
  // Bound on sending the request once connected.
  std::int64_t write_timeout_ms = 30000;
  // Longest silence between two reads of a response (head or body) before the response
  // fails with ErrorCode::transport. 0 = effectively none (24 h): an idle SSE stream is
  // normal, and the caller aborts the streams it no longer wants.
  std::int64_t read_idle_timeout_ms = 0;
  // https: trust these PEM CA certificates instead of the system store (tests, private CAs).
  std::string ca_cert_file;
  std::string ca_cert_dir;
  // Sent when the request has no User-Agent header.
  std::string user_agent = std::string("mcprt/") + MCPRT_VERSION;
};

class NativeHttpClient final : public HttpClient {
 public:
  explicit NativeHttpClient(NativeExecutor& executor, NativeHttpClientOptions options = {});
  ~NativeHttpClient() override;
  NativeHttpClient(const NativeHttpClient&) = delete;
  NativeHttpClient& operator=(const NativeHttpClient&) = delete;

  // Fails (invalid_argument, no callback) for a URL that is not an absolute http(s) URL, an
  // empty method, or a header name/value that would break the request (CR, LF, NUL).
  Result<std::unique_ptr<HttpRequestHandle>> send(HttpRequest request,
                                                  HttpCallbacks callbacks) override;

  // Requests waiting for a worker or running on one (aborted ones until their worker let
  // go of them). For tests and status displays. Thread-safe.
  std::size_t in_flight() const;
  // Worker threads alive (running or idle). Thread-safe.
  std::size_t thread_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcprt::native
