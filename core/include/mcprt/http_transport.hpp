#pragma once
// The HTTP transports (SPEC §3.3), as pure core logic over the HttpClient seam:
//
//   auto t = make_http_transport(executor, http_client, {.url = "https://x/mcp",
//                                                        .server_name = "x"});
//   if (!t) ...;                      // only a URL that does not parse fails here
//   RpcPeer peer(executor, std::move(*t));
//
// STREAMABLE HTTP (MCP 2025-11-25), mode `streamable`:
//  - every message is one POST with `Content-Type: application/json` and
//    `Accept: application/json, text/event-stream`. A JSON body (one message or a batch)
//    or an SSE stream answers it; each SSE `data` is one JSON-RPC message, so notifications
//    and server requests may arrive before the response. 202 answers notifications and
//    responses. Server requests from any stream go up through on_message (the RpcPeer
//    answers; the answer is POSTed like any message).
//  - `Mcp-Session-Id` from any response is kept and sent on every later request.
//  - `MCP-Protocol-Version`: the transport watches the `initialize` request going out and
//    its result coming back, and sends the negotiated version on every later request (no
//    setter: the session layer stays transport-agnostic).
//  - after the client's `notifications/initialized` was accepted, the optional GET SSE
//    stream opens (`Accept: text/event-stream`); 405 = not offered, never retried; any
//    other refusal is logged and the stream is not retried either.
//  - a broken SSE stream (POST- or GET-originated; cut by an error or ended by the server
//    before the response) that carried an event id is resumed by a GET with
//    `Last-Event-ID`, after the stream's `retry:` (default 1000 ms, capped at
//    max_retry_ms). A server that answers and ends the stream again is polling
//    (SEP-1699) and is followed for as long as the request runs; reconnects that get no
//    2xx answer at all are bounded by max_resume_attempts in a row. A POST stream that
//    cannot be resumed (no event id, resume refused, attempts used up) fails its request.
//  - a POST stream is dropped as soon as its response arrived, and when the client sends
//    `notifications/cancelled` for its request (an open stream holds a connection).
//  - SESSION EXPIRY: a 404 to a request that carried a session id means the session is
//    gone. The transport itself replays the stored `initialize` (its response is consumed,
//    not passed up; the new session id and version replace the old) and
//    `notifications/initialized`, then re-sends the failed message once; messages sent
//    meanwhile wait and follow in order. A second 404 for the same message fails it. If
//    the replay fails, the transport closes with that error.
//  - close() sends `DELETE` with the session id (best effort, bounded by close_timeout_ms)
//    and then reports on_close(ErrorCode::closed).
//
// LEGACY HTTP+SSE (MCP 2024-11-05), mode `sse`: GET the stream; wait for the `endpoint`
// event (resolved against the stream's final URL; another origin is an error that closes
// the transport); POST every message there (2xx expected, typically 202; messages sent
// before the endpoint arrived wait); every answer arrives on the stream. The stream ending
// closes the transport (`Server "x": the server closed the SSE stream ...`).
//
// AUTO (mode `automatic`, a config `url` without `type`): Streamable HTTP first; if the
// initialize POST answers 400, 404 or 405, switch to legacy SSE transparently and re-send
// the initialize (and anything sent after it) there.
//
// ERRORS: a non-2xx answer becomes an Error with ErrorCode::http_status, the status, the
// URL and the first 1 KiB of the body: `Server "x": HTTP 500 from http://h/mcp: <body>`
// (data: {status, url, body}). An HTTP failure fails only the message it belongs to:
//  - for a request, the transport hands the RpcPeer a synthesized JSON-RPC error response
//    with that request's id (code kHttpTransportErrorCode, the message above, data
//    {transport_error: "<ErrorCode name>", status?, url, body?}), so exactly that request
//    fails and the connection stays usable;
//  - for `initialize` (nothing works without it) the transport closes with the Error
//    itself, so connect() reports http_status / transport / timeout as it is;
//  - for a notification or a response, it is logged (warn) and dropped.
// Connection failures (refused, DNS, TLS, CORS in the browser) take the same path with
// their own ErrorCode.
//
// AUTH AND HEADERS: configured headers go on every request; `Authorization: Bearer
// <token>` comes from AuthStorage unless the config sets Authorization itself (which is
// never overwritten, and then 401/403 is final). On 401/403 the transport asks the storage
// for a refreshed token once and retries that request once. With origin_locked, the
// configured headers AND the token are sent only to URLs with the configured URL's origin
// — including the final URL of redirects (GET redirects are then followed by the core
// hop by hop, so nothing leaks to the new origin).
//
// Threading and lifetime: single-threaded on `executor`; every handler runs on it, never
// inside start()/send()/close(). Destroying a transport aborts its HTTP requests (also a
// DELETE still in flight) and runs no handler. The executor, the HttpClient, the
// AuthStorage and the Logger must outlive the transport.

#include <cstdint>
#include <memory>
#include <string>

#include "mcprt/auth.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/result.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

enum class HttpTransportMode {
  streamable,  // Streamable HTTP only (config `type: "http"`)
  sse,         // legacy HTTP+SSE only (config `type: "sse"`)
  automatic,   // Streamable HTTP, falling back to legacy SSE on 400/404/405 of initialize
};

// The JSON-RPC error code of a synthesized error response: the request failed in the
// HTTP transport, not in the server's JSON-RPC layer (data.transport_error says how).
inline constexpr int kHttpTransportErrorCode = -32000;

struct HttpTransportOptions {
  std::string url;          // the configured endpoint (Streamable) or SSE stream URL (legacy)
  HttpHeaders headers;      // from config, already resolved
  std::string server_name;  // for `Server "<name>": ...` messages and logs
  bool origin_locked = false;  // headerPolicy: "origin-locked"
  AuthStorage* auth_storage = nullptr;  // not owned; null = no tokens
  std::string credential_id;
  HttpTransportMode mode = HttpTransportMode::automatic;
  Logger* logger = nullptr;  // not owned; null = no logging

  std::size_t max_message_bytes = 64u * 1024 * 1024;  // one JSON body or SSE event
  // Deepest nesting of arrays/objects accepted in a message; deeper is unreadable.
  std::size_t max_json_nesting_levels = kDefaultMaxJsonNestingLevels;
  std::int64_t default_retry_ms = 1000;  // SSE reconnect delay when the server sent no retry:
  std::int64_t max_retry_ms = 60000;     // cap on a server's retry:
  int max_resume_attempts = 5;           // reconnects in a row that bring no new event
  std::int64_t close_timeout_ms = 2000;  // bound on the DELETE sent by close()
  int max_redirects = 5;                 // GET redirect hops
  // Open the optional standalone GET stream after initialize (server-initiated messages
  // outside any request). False = answers arrive on POST streams (and their resumes) only.
  bool open_get_stream = true;
};

// Creates the transport. Fails (and nothing starts) only when `url` is not an absolute
// http(s) URL. Requests start at start() (legacy: the GET stream) or at the first send().
Result<std::unique_ptr<Transport>> make_http_transport(Executor& executor, HttpClient& client,
                                                       HttpTransportOptions options);

}  // namespace mcprt
