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
//    `Last-Event-ID`, after the stream's `retry:` (default 1000 ms, raised to at least
//    min_retry_ms = 250 ms, capped at max_retry_ms). A server that answers and ends the
//    stream again is polling (SEP-1699) and is followed for as long as the request runs,
//    within the stream's RECONNECT BUDGET: at most max_reconnects_per_window (60)
//    reconnects within any reconnect_window_ms (60 s) per stream. Reconnects that get no
//    2xx answer at all (a timeout) are also bounded by max_resume_attempts in a row. A
//    POST stream that cannot be resumed (no event id, resume refused, attempts used up,
//    budget spent: `Server "x": the server at <url> keeps ending the SSE stream of this
//    request (60 reconnects within 60000 ms, the reconnect budget); not reconnecting
//    again`) fails its request; a GET stream that cannot be reopened stops with a warning
//    (server notifications outside requests are then lost; the POSTs still work).
//  - a POST stream is dropped as soon as its response arrived, and when the client sends
//    `notifications/cancelled` for its request (an open stream holds a connection).
//  - SESSION EXPIRY: a 404 to a request that carried a session id means the session is
//    gone. The transport itself replays the stored `initialize` (its response is consumed,
//    not passed up; the new session id and version replace the old) and
//    `notifications/initialized`, then re-sends the failed message once; messages sent
//    meanwhile wait and follow in order. Every message is accounted for exactly once: one
//    whose 404 arrives while the replay runs joins the re-send list; one whose 404 arrives
//    after it, for the session the replay replaced, is re-sent once with the new session
//    (no second replay); a request cancelled meanwhile is not re-sent. A second 404 for
//    the same message fails it. If the replay fails — an error or a 404 for the replayed
//    initialize or initialized, or no answer within reinitialize_timeout_ms — the
//    transport closes with that error (`Server "x": the session expired and
//    re-initializing failed: HTTP 404 from ...`), so every pending request fails once.
//    A 404 to the GET stream's request starts the same replay (nothing to re-send; the
//    stream opens again for the new session). Once the new session took the waiting
//    messages, TransportHandlers::on_renewed tells the session layer that the server's
//    per-session state (resource subscriptions) is gone.
//  - close() sends `DELETE` with the session id (best effort, bounded by close_timeout_ms)
//    and then reports on_close(ErrorCode::closed).
//
// STATELESS MESSAGES (MCP 2026-07-28; Transport::send_with with SendOptions::stateless,
// SPEC §14), Streamable HTTP and `automatic` alike:
//  - the POST carries SendOptions::headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name,
//    Mcp-Param-*, already encoded by the session; they cannot replace Content-Type,
//    Accept, Authorization, Cookie, Mcp-Session-Id or Last-Event-ID), like every `Mcp-*`
//    header only to the configured origin;
//  - no `Mcp-Session-Id` is sent, and one in the answer is ignored; no GET stream, no
//    DELETE (close() still ends a session an earlier initialize made), no resumption:
//    an SSE answer that breaks or ends before the response fails that request
//    (`Server "x": the SSE stream from <url> broke before the response (...); the request
//    was lost (2026-07-28 streams cannot be resumed)`, data.transport_error "transport");
//    a request that finds no server still closes the transport (TRANSPORT LOSS);
//  - a stateless `notifications/cancelled` is not POSTed: the transport aborts the POST
//    of the request it names (closing its stream is the cancellation) and drops it;
//  - a 4xx answer (not 401/403, which take the auth path) whose body is a JSON-RPC error
//    response with the request's id (400 with -32022/-32020/-32021/-32602, 404 with
//    -32601) is handed up as that request's response, code and data as the server sent
//    them (the first 64 KiB of the body are read); any other non-2xx answer becomes the
//    synthesized error below (5xx included: an outage, not the server's verdict);
//  - in `automatic` mode they never trigger the legacy fallback, are not replayed by it,
//    and their answers do not commit the choice, so an `initialize` sent afterwards on
//    the same transport behaves exactly as above (session, version, GET stream, legacy
//    SSE fallback). A stateless request unanswered when the fallback happens fails.
// Messages sent with send() (or stateless = false) follow the 2025-11-25 rules above;
// their SendOptions::headers are added to the POST too.
//
// LEGACY HTTP+SSE (MCP 2024-11-05), mode `sse`: GET the stream; wait for the `endpoint`
// event (resolved against the stream's final URL, and then required to be on the origin
// of the CONFIGURED URL — a redirected stream cannot move the POSTs, and the credentials
// they carry, to another origin; anything else is an error that closes the transport);
// POST every message there (2xx expected, typically 202; messages sent before the
// endpoint arrived wait); every answer arrives on the stream. The stream ending closes the
// transport (`Server "x": the server closed the SSE stream ...`); legacy SSE never
// reconnects by itself (the owner does, with a new transport).
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
// A timeout, or a redirect the browser would not show, takes the same path with its own
// ErrorCode. A 5xx or a single timeout never closes the transport.
//
// TRANSPORT LOSS: when the server is evidently gone the transport closes itself, with
// ErrorCode::transport and the cause, said once: `Server "x": HTTP POST http://h/mcp
// failed: could not connect (connection refused)` (the platform's message when it names
// the request, else `POST <url> failed: <the platform's reason>`). Then the RpcPeer fails every pending
// request exactly once (from on_close; no request also gets its own error) and the owner
// (the manager) treats it as connection loss: reconnect with backoff and breaker. "Gone"
// means: a request of any kind (a POST, a resume GET, the GET stream, the legacy stream)
// got no HTTP answer at all because the connection failed — the platform completed it
// with ErrorCode::transport before any response head (refused, reset, DNS, TLS, a
// browser's opaque network/CORS failure). So a broken SSE stream is resumed, and closes
// the transport only when the resume finds no server. Not gone: any HTTP status, a
// timeout (ErrorCode::timeout), a request the platform refused to start (send() failed),
// a redirect the platform could not show.
//
// AUTH AND HEADERS: configured headers go on every request to the configured origin;
// `Authorization: Bearer <token>` comes from AuthStorage unless the config sets
// Authorization itself (which is never overwritten, and then 401/403 is final). On
// 401/403 the transport asks the storage for a refreshed token once and retries that
// request once.
//
// ORIGINS AND REDIRECTS (SPEC §17), whatever origin_locked says (origin_locked only stops
// connect-time substitution of header values, config/connect_time): `Authorization`,
// `Cookie`, every configured header, `Mcp-Session-Id`, `MCP-Protocol-Version`,
// `Last-Event-ID` and every other `Mcp-*` header (Mcp-Method, Mcp-Name, Mcp-Param-*) go
// only to URLs on the configured URL's origin (scheme, host, port).
//  - A GET that carries any of them is sent with HttpRequest::follow_redirects = false and
//    the core follows its redirects hop by hop (at most max_redirects), sending none of
//    them to a hop on another origin. Only a GET that carries none of them may be
//    followed by the platform; the core then checks the head's final_url the same way.
//  - An https → http hop is refused (`... redirects to http://...: refusing an https to
//    http redirect (it would go unencrypted)`), on either path.
//  - After a redirect to another origin, nothing that origin says is trusted with
//    credentials: its `Mcp-Session-Id` is ignored, a legacy `endpoint` there is refused,
//    and a retry of that call (401) carries no credentials.
//  - POST and DELETE redirects are never followed: the answer is an HTTP error that says
//    so and names the Location to configure instead.
//  - In the browser, fetch cannot stop at a redirect and show it (an opaque redirect):
//    a GET with credentials that meets one fails with the web client's error, which says
//    to configure the URL the redirect leads to.
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
  // headerPolicy: "origin-locked". Kept for diagnostics: the transport sends credentials
  // and session headers only to the configured origin whatever this says (see ORIGINS).
  bool origin_locked = false;
  AuthStorage* auth_storage = nullptr;  // not owned; null = no tokens
  std::string credential_id;
  HttpTransportMode mode = HttpTransportMode::automatic;
  Logger* logger = nullptr;  // not owned; null = no logging

  std::size_t max_message_bytes = 64u * 1024 * 1024;  // one JSON body or SSE event
  // Deepest nesting of arrays/objects accepted in a message; deeper is unreadable.
  std::size_t max_json_nesting_levels = kDefaultMaxJsonNestingLevels;
  std::int64_t default_retry_ms = 1000;  // SSE reconnect delay when the server sent no retry:
  std::int64_t min_retry_ms = 250;       // floor on a server's retry: (retry: 0 → 250 ms)
  std::int64_t max_retry_ms = 60000;     // cap on a server's retry:
  int max_resume_attempts = 5;           // reconnects in a row that bring no new event
  // The reconnect budget of one SSE stream (a POST's answer with its resumes, or the GET
  // stream): at most this many reconnects within any reconnect_window_ms. The default
  // never binds a server that keeps to the default retry of 1 s; retry: 0 spends it in
  // 15 s (60 × the 250 ms floor). 0 = no budget.
  int max_reconnects_per_window = 60;
  std::int64_t reconnect_window_ms = 60000;
  // Bound on a session re-initialize (a 404 for the session): the replayed initialize and
  // initialized must be answered within it, or the transport closes. 0 = no bound.
  std::int64_t reinitialize_timeout_ms = 30000;
  std::int64_t close_timeout_ms = 2000;  // bound on the DELETE sent by close()
  int max_redirects = 5;                 // GET redirect hops (followed by the core or the platform)
  // Open the optional standalone GET stream after initialize (server-initiated messages
  // outside any request). False = answers arrive on POST streams (and their resumes) only.
  bool open_get_stream = true;
};

// Creates the transport. Fails (and nothing starts) only when `url` is not an absolute
// http(s) URL. Requests start at start() (legacy: the GET stream) or at the first send().
Result<std::unique_ptr<Transport>> make_http_transport(Executor& executor, HttpClient& client,
                                                       HttpTransportOptions options);

}  // namespace mcprt
