#pragma once
// NativeHttpClient: the native HttpClient (mcprt/platform/http_client.hpp) on libcurl's multi
// interface (Debian's libcurl4-openssl-dev: OpenSSL for https), every transfer driven by
// the NativeExecutor's own loop: no thread of its own.
//
// Implements:
//  [x] http:// and https:// (OpenSSL; certificates verified against the system CA store, or
//      the CA file/dir in the options; host name checked), HTTP/1.1
//  [x] the seam's callback sequence — head once, body chunks as they arrive, complete once
//      — run by the executor's loop at the end of the turn that read them (or posted, for
//      what send() or the destructor already knows); no callback ever runs inside libcurl
//      or inside send()
//  [x] keep-alive: one connection cache for every request of the client, so requests to an
//      origin reuse an idle connection; at most max_idle_connections idle ones are kept, and
//      an idle one older than idle_connection_timeout_ms is closed, not reused
//  [x] concurrent transfers each get their own connection (no pipelining, no HTTP/2), so a
//      long-lived SSE stream never holds up a POST; at most max_connections are open at
//      once, more requests wait (FIFO) for one to free up, their timeout_ms still running
//  [x] response head caps: more than max_response_header_fields fields or
//      max_response_header_bytes bytes (the same caps again for a chunked body's trailers)
//      fail the request at once with ErrorCode::transport naming the URL and the limit;
//      the transfer is stopped there, so a server sending headers forever costs nothing
//  [x] a body the caller has not been handed yet is held up to 1 MiB per request; beyond it
//      the transfer pauses (stops reading the socket) until it was delivered
//  [x] HttpRequest::timeout_ms as a deadline until the head (connect + send + head,
//      redirect hops included) → ErrorCode::timeout; a streamed body is never cut by it
//  [x] GET redirects (301/302/303/307/308) when follow_redirects: at most max_redirects
//      hops, an https→http hop refused with a clear error, final_url reported;
//      Authorization, Proxy-Authorization, Cookie, Mcp-Session-Id and MCP-Protocol-Version
//      are not sent to a hop on another origin (the core follows hops itself when
//      configured credentials are involved). Without follow_redirects, or for other
//      methods, the 3xx head is reported as it is; nothing is ever sent elsewhere on the
//      client's own initiative
//  [x] request targets as the core hands them over (wire form: never re-encoded, dot
//      segments kept); only bytes that cannot appear on a request line are %-escaped;
//      userinfo in a URL is never sent (no implicit Basic auth); no cookies, no .netrc, no
//      compression requested (no Accept-Encoding)
//  [x] proxies from the environment, read by libcurl as curl(1) reads them: http_proxy
//      (lowercase only, as curl: HTTP_PROXY can be set by a CGI request's Proxy: header),
//      https_proxy / HTTPS_PROXY, all_proxy / ALL_PROXY, and no_proxy / NO_PROXY (a
//      comma-separated list of hosts, domains and IP ranges to reach directly; "*" = none).
//      Loopback is proxied too unless no_proxy names it, as with curl. Plain http goes to
//      the proxy in absolute form (the proxy sees the request, its headers included); https
//      goes through a CONNECT tunnel that carries none of the request's headers (the
//      origin's credentials travel only inside TLS), and the proxy's answer to CONNECT is
//      never taken for the origin's head. The proxy's own credentials come only from the
//      userinfo of its URL (http://user:pw@proxy:3128). A proxy that refuses the tunnel
//      fails the request with ErrorCode::transport naming the proxy's refusal
//  [x] abort(): no callback runs after it returned; the transfer is stopped by the loop's
//      next turn (its connection closed), without blocking the caller
//  [x] errors: ErrorCode::transport naming the method, the URL and what failed (refused,
//      unresolvable host, TLS, a body cut short, a stalled upload, read idle timeout, the
//      header caps) plus libcurl's own words; ErrorCode::aborted when the client itself is
//      destroyed under a live request
//  [x] no SIGPIPE: CURLOPT_NOSIGNAL, and libcurl sends with MSG_NOSIGNAL (TLS records too:
//      7.88's OpenSSL filter writes through the same send); no process-wide signal change
//  [x] sockets are opened close-on-exec (a spawned stdio server never inherits one)
//  [ ] no proxy settings besides the environment (no per-server proxy in the config), no
//      client certificates, no HTTP/2, no response decompression
//
// Why one curl multi on the executor's loop: a multi handle owns one connection cache, so
// every request reuses connections without pool code here (only finished requests' easy
// handles are kept for reuse), and concurrent transfers still get their own connections.
// The loop multiplexes every stream (idle SSE streams cost a socket, not a thread), and
// abort is a command for the loop's next turn. libcurl names the sockets it waits for
// (CURLMOPT_SOCKETFUNCTION) and they go into one epoll set of the client's, which the loop
// watches as one descriptor (asio registers it once): when a socket moves, the loop hands
// libcurl that socket (curl_multi_socket_action) and delivers what it read. An idle SSE
// stream is never looked at per request, and a kept-alive connection stays in the set
// between its requests (no epoll_ctl per request). A request goes out inside send(), and
// its answer is read by the thread that delivers it: a call wakes one sleeping thread, not
// two. (An I/O thread of the client's used to run libcurl and post answers to the loop:
// twice the wake-ups and context switches per call. An earlier asio design registered every
// socket with asio, re-registering a connection each time it went back to the cache, and
// set an asio timer on every libcurl timer update: here the timer is re-armed only when
// something falls due earlier.) libcurl's work, TLS handshakes included, runs on the loop:
// a handshake is a millisecond or two of its time.
//
// DNS caveat: curl resolves host names on short-lived resolver threads (getaddrinfo
// cannot be interrupted, and libcurl waits for it when a transfer is removed mid-lookup).
// An abort, a deadline or connect_timeout_ms during a lookup never blocks anything: the
// request is reported at once and the transfer dropped once its lookup returned.
// Destroying the client while a lookup runs waits for it (bounded by the system
// resolver's timeout), so no resolver thread outlives the client.
//
// Threading and lifetime: send(), abort() and the handles belong to the executor's loop
// thread (as every core caller does). Destroying the client aborts every request, posts
// on_complete(ErrorCode::aborted) to requests whose handle is still alive and closes every
// connection before it returns. Destroy it on the loop thread or while the loop is not
// pumped. Transfers move only while the loop is pumped (run, run_until, or the executor's
// background thread). The executor must outlive the client; handles may outlive it (their
// abort() then has nothing left to stop).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mcprt/native/executor.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/version.hpp"

namespace mcprt::native {

struct NativeHttpClientOptions {
  // Connections open at once, all origins together (busy and idle). Requests beyond it
  // wait for one to finish. 0 = no limit.
  std::size_t max_connections = 64;
  // Idle keep-alive connections kept for reuse, all origins together: when a request
  // finishes and more are idle, the oldest idle one is closed (several finishing in the
  // same instant may leave a few more, closed as the next ones finish). Open streams do not
  // count, so they never cost a request its keep-alive. 0 = no keep-alive (every
  // connection closes after its request).
  std::size_t max_idle_connections = 8;
  // An idle connection older than this is closed instead of reused (libcurl counts whole
  // seconds: rounded up). Servers often close theirs after 5 s; libcurl notices that and
  // opens a new one.
  std::int64_t idle_connection_timeout_ms = 60000;
  // Bound on establishing a connection (DNS + TCP + TLS, and any wait for a free connection
  // when max_connections are busy), also when a request has no timeout_ms.
  std::int64_t connect_timeout_ms = 30000;
  // Longest stall while the request body is being sent (the server stopped reading it)
  // before the request fails with ErrorCode::transport. 0 = none.
  std::int64_t write_timeout_ms = 30000;
  // Longest silence from the server once the request was sent — waiting for the head or
  // between two pieces of the body — before the request fails with ErrorCode::transport.
  // 0 = none (the default: an idle SSE stream is normal, and the caller aborts the
  // streams it no longer wants).
  std::int64_t read_idle_timeout_ms = 0;
  // Caps on a response head (and, separately, on the trailers of a chunked body): fields
  // and bytes (line endings included). A response beyond either fails at once.
  std::size_t max_response_header_fields = 256;
  std::size_t max_response_header_bytes = 64 * 1024;
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
  // invalid method, or a header name/value that would break the request (a name that is
  // not a token; CR, LF or NUL in a value).
  Result<std::unique_ptr<HttpRequestHandle>> send(HttpRequest request,
                                                  HttpCallbacks callbacks) override;

  // Requests the client has not let go of yet (aborted ones until the loop's next turn
  // dropped them). For tests and status displays. Thread-safe.
  std::size_t in_flight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcprt::native
