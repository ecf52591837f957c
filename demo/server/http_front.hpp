#pragma once
// The demo MCP server's Streamable HTTP front end (MCP 2025-11-25, "Transports"), on
// cpp-httplib, endpoint path `/mcp`, loopback addresses only.
//
// Implements:
//  [x] POST /mcp: one JSON-RPC message or a batch. `initialize` creates a session (its
//      answer carries `Mcp-Session-Id`); every other POST needs a known session id
//      (missing → 400, unknown or deleted → 404). Requests are answered with
//      `application/json`, except a tools/call carrying `_meta.progressToken` that is still
//      running after it was handled (slow_task): that one is answered with an SSE stream
//      (`event: message`, `id: <n>` counting from 1 per stream), its progress
//      notifications first, then the result. A batch answers with a JSON array (or one
//      stream). Notifications and responses alone → 202, empty body.
//  [x] `notifications/cancelled` for a running request ends its stream (or its pending
//      JSON answer) without a result; a client that disconnects cancels its requests.
//  [x] header checks: Accept must list application/json and text/event-stream (406),
//      Content-Type must be application/json (415), an unsupported MCP-Protocol-Version
//      → 400, a Host header that is not a loopback name → 403 (DNS-rebinding guard).
//  [x] GET /mcp with a session → its standalone SSE stream, open (and quiet: the demo
//      sends nothing outside a request's answer) until the session ends or the client
//      goes away; one per session (409), at most kMaxGetStreams at once (then 405); 400
//      without a session id, 404 for an unknown one, 406 without text/event-stream.
//      DELETE /mcp → 200 and the session is gone (400 without, 404 for unknown id).
//  [x] CORS on every response, errors included (Allow-Origin *, the MCP request headers
//      allowed, Mcp-Session-Id and WWW-Authenticate exposed); OPTIONS preflight → 204,
//      allowing the request headers it asks for (a page's own server headers).
//  [x] hooks for a front end that protects /mcp (HttpFrontOptions::admit) and serves more
//      paths on the same port (HttpFrontOptions::add_routes): the OAuth fixture.
//  [x] 2026-07-28 (options.server.protocol modern, or dual without a session): one
//      JSON-RPC request per POST, no session; MCP-Protocol-Version must equal the _meta
//      version, Mcp-Method the method, Mcp-Name a tools/call's params.name, and each
//      x-mcp-header argument must come as Mcp-Param-<Name> (=?base64?...?= decoded), else
//      400 + -32020; missing _meta → 400 + -32602; unsupported version → 400 + -32022;
//      unknown method → 404 + -32601. Each request gets its own DemoServer (sharing
//      DemoShared); a listen stream or running task answers with SSE until it ends
//      (drop_listen closes it without a result); GET and DELETE → 405.
//  [x] legacy input tools: their request to the client goes out on the tools/call's SSE
//      answer; the client's response comes in a POST of its own (202).
//  [ ] no resumability (Last-Event-ID is ignored), no Origin allow-list (any
//      origin may call, as a local demo wants; the Host check is what stops DNS
//      rebinding).
//
// Threading: cpp-httplib serves each connection on a pool thread. One mutex guards every
// session (each with its own DemoServer) and the timer queue; a timer thread runs the
// slow_task steps under that mutex, so each DemoServer still sees one thread at a time.
// An SSE or delayed JSON answer is a chunked content provider that waits on a condition
// variable for its messages, writing outside the lock.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "mcp_demo_server.hpp"
#include "timer_queue.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace mcprt::demo {

struct HttpFrontOptions {
  std::string host = "127.0.0.1";  // must be a loopback address or "localhost"
  int port = 0;                    // 0 = an ephemeral port (see bind())
  // Options of each session's DemoServer; its `log` is also used for the front end's logs.
  DemoServerOptions server;
  // Asked first (after the Host check) for every POST, GET and DELETE on /mcp: false means
  // the request is refused and `res` holds the answer. Runs on an httplib pool thread,
  // outside the front end's lock, several at once. The OAuth fixture's bearer-token check.
  std::function<bool(const httplib::Request& req, httplib::Response& res)> admit;
  // Called once at the end of the constructor to add routes (and handlers such as a
  // logger) to the same server; routes added here never shadow /mcp.
  std::function<void(httplib::Server& server)> add_routes;
};

// True for "localhost", "::1" and any 127.0.0.0/8 address.
bool is_loopback_host(std::string_view host);

class HttpFrontEnd {
 public:
  explicit HttpFrontEnd(HttpFrontOptions options);
  ~HttpFrontEnd();  // stops, ends every session; call after run() returned
  HttpFrontEnd(const HttpFrontEnd&) = delete;
  HttpFrontEnd& operator=(const HttpFrontEnd&) = delete;

  // Binds the listening socket. Returns the bound port, or -1 with `error` set (a
  // non-loopback host is refused here, before any socket exists).
  int bind(std::string& error);
  // Serves until stop(). Blocks; returns false when the server could not run.
  bool run();
  // Thread-safe, idempotent: ends open streams, then makes run() return.
  void stop();

  // http://<host>:<port>/mcp (IPv6 hosts bracketed).
  std::string url() const;

 private:
  struct Exchange;
  struct Session;
  class LockedScheduler;

  void on_post(const httplib::Request& req, httplib::Response& res);
  // A 2026-07-28 POST: header and envelope checks, then a DemoServer of its own.
  void on_modern_post(const httplib::Request& req, httplib::Response& res, const json& message);
  void on_get(const httplib::Request& req, httplib::Response& res);
  void on_delete(const httplib::Request& req, httplib::Response& res);
  bool host_allowed(const httplib::Request& req) const;
  // The answers of POST whose requests are still running: SSE or delayed JSON.
  // `abandon` runs with mutex_ held when the client went away; `release` (may be null)
  // runs without it once the response is finished either way.
  void stream_answer(httplib::Response& res, const std::shared_ptr<Exchange>& ex, bool sse,
                     bool batch, std::function<void()> abandon, std::function<void()> release);
  // With mutex_ held: cancels the still-running requests of `ex` (client gone).
  void abandon_locked(Exchange& ex, const std::string& session_id);
  // With mutex_ held: removes a session; its open answers end.
  void end_session_locked(std::map<std::string, std::unique_ptr<Session>>::iterator it);
  void timer_loop();
  void log(const std::string& line) const;

  HttpFrontOptions options_;
  std::function<void(std::string_view method)> on_request_;  // options.server.on_request
  int port_ = -1;
  std::unique_ptr<httplib::Server> http_;

  mutable std::mutex mutex_;
  std::condition_variable data_cv_;   // new messages for an Exchange, or it was closed
  std::condition_variable timer_cv_;  // the timer queue changed, or stopping
  std::unique_ptr<LockedScheduler> scheduler_;
  std::map<std::string, std::unique_ptr<Session>> sessions_;
  // 2026-07-28 requests still answering (listen streams, slow tasks), one DemoServer each.
  std::map<std::uint64_t, std::unique_ptr<DemoServer>> stateless_;
  std::uint64_t next_stateless_ = 1;
  std::size_t open_get_streams_ = 0;  // standalone GET streams now open (kMaxGetStreams)
  bool stopping_ = false;
  std::thread timer_thread_;
  // stop() may come before run() reached httplib's accept loop, where httplib's own stop()
  // would do nothing; these two let stop() and run() see each other.
  std::atomic<bool> stop_requested_{false};
  std::atomic<int> run_state_{0};  // 0 not started, 1 in run(), 2 returned
};

}  // namespace mcprt::demo
