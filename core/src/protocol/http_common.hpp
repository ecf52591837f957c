#pragma once
// What both HTTP transports share (http_transport.hpp has the rules):
//  - HttpConnection: the per-server context — options, the `Server "x": ` prefix, which
//    headers may go to which origin (only the configured URL's origin ever sees the
//    credentials and the session headers, SPEC §17), and the bearer token from
//    AuthStorage (fetched once, refreshed at most once per rejection, shared by every
//    request of the connection and by both transports of an auto fallback);
//  - HttpCall: one logical HTTP request over the HttpClient seam with the generic rules
//    applied — headers, the token wait, GET redirects (followed hop by hop by the core
//    whenever the request carries an origin-bound header, stripping them on a
//    cross-origin hop; https→http refused either way), the 401/403 refresh-and-retry, and
//    non-2xx answers turned into an Error carrying the status and the first 1 KiB of the
//    body;
//  - small JSON-RPC helpers (message kind, id keys, synthesized error responses).
// Internal to core/src/protocol.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/http_transport.hpp"
#include "mcprt/url.hpp"

namespace mcprt::detail {

inline constexpr std::size_t kErrorBodyBytes = 1024;
// How much of a non-2xx answer a 2026-07-28 request keeps: enough for the JSON-RPC error
// a modern server puts there (-32022 with its supported versions, -32020, ...), which
// the transport hands up as that request's response.
inline constexpr std::size_t kModernErrorBodyBytes = 64 * 1024;

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(Executor& executor, HttpClient& client, HttpTransportOptions options);

  Executor& executor() const { return *executor_; }
  HttpClient& client() const { return *client_; }
  const HttpTransportOptions& options() const { return options_; }
  Logger& log() const { return *logger_; }
  // `Server "x": ` (empty without a server name).
  const std::string& prefix() const { return prefix_; }
  Error named(Error e) const;

  // Configured headers, the token and the session headers may go to `url`: only when it
  // is on the configured URL's origin, whatever the header policy (SPEC §17).
  bool credentials_allowed_for(std::string_view url) const;
  // Adds the configured headers and `Authorization: Bearer <token>` when allowed for `url`.
  // Returns the token it sent ("" = none), which a 401 then asks the storage to replace.
  std::string add_credentials(std::string_view url, HttpHeaders& headers) const;
  // True for a header that must never leave the configured origin: Authorization,
  // Cookie, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, every other `Mcp-*`
  // header (Mcp-Method, Mcp-Name, Mcp-Param-*: they mirror the request), or any
  // configured header.
  bool is_origin_bound(std::string_view header_name) const;
  // The token comes from AuthStorage (a storage is set and the config has no Authorization).
  bool uses_storage_token() const;

  // Runs `ready` once the first token lookup finished: at once (inside this call) when it
  // already did or no lookup is needed, else later from the storage's answer. Waiters run
  // in the order they were added.
  void when_token_ready(std::function<void()> ready);
  // Whether when_token_ready() would run its callback at once.
  bool token_ready() const;
  // The server rejected `rejected` with `status` and its WWW-Authenticate fields
  // (`challenge`, joined): ask the storage for a fresh token (one refresh in flight at a
  // time; if the token already changed since `rejected`, `done` runs at once). `done` gets
  // null, or the storage's error (named), which the caller fails its request with.
  void refresh_token(const std::string& rejected, int status, const std::string& challenge,
                     std::function<void(const Error*)> done);

  // "HTTP 500 from http://h/mcp: <first 1 KiB of body>" (unprefixed), code http_status,
  // data {status, url, body}.
  Error http_status_error(int status, const std::string& url, std::string_view body) const;

 private:
  enum class TokenState { unknown, fetching, ready };
  void on_token(Result<std::optional<std::string>> result);
  void on_refreshed(Result<std::optional<std::string>> result);
  AuthRequest auth_request() const;

  Executor* executor_;
  HttpClient* client_;
  HttpTransportOptions options_;
  std::string prefix_;
  NullLogger null_logger_;
  Logger* logger_;
  bool config_has_authorization_ = false;
  // options_.url, parsed once: every request asks whether its URL shares this origin.
  std::optional<Url> origin_url_;

  TokenState token_state_ = TokenState::unknown;
  std::string token_;
  // (Vectors: only appended to, then swapped out whole and run in order.)
  std::vector<std::function<void()>> token_waiters_;
  bool refreshing_ = false;
  std::vector<std::function<void(const Error*)>> refresh_waiters_;
};

// Why an HttpCall did not produce a 2xx answer.
struct HttpFailure {
  enum class Kind {
    http_answer,      // a non-2xx answer (status set), or a redirect the core refused
    connection_lost,  // no HTTP answer: the platform's ErrorCode::transport before any head
                      // (refused, reset, DNS, TLS, a browser's opaque network/CORS failure):
                      // the server is evidently gone (http_transport.hpp, TRANSPORT LOSS)
    not_followed,     // the platform stopped at a redirect it cannot show (fetch's opaque
                      // redirect, data {"redirect": true})
    other,            // no answer for another reason: timeout, aborted, send() refused
  };
  HttpFailure() = default;
  HttpFailure(Error e, int s, HttpHeaders h, Kind k, std::string b = {})
      : error(std::move(e)), status(s), headers(std::move(h)), kind(k), body(std::move(b)) {}

  Error error;       // unprefixed; http_status for an HTTP answer, else the platform's error
  int status = 0;    // 0 = no HTTP answer at all (refused, timeout, CORS, ...)
  HttpHeaders headers;
  Kind kind = Kind::other;
  // The answer's body as received, up to Spec::max_error_body bytes (error.data.body
  // holds only its first kErrorBodyBytes, cleaned for display).
  std::string body;
};

// One logical request. Exactly one of on_end / on_failure fires, unless cancel() is
// called first (then none). Events run on the executor, never inside start() or cancel().
class HttpCall : public std::enable_shared_from_this<HttpCall> {
 public:
  struct Events {
    // Per attempt (first try, redirect hop, auth retry): add the protocol headers.
    std::function<void(HttpHeaders&)> decorate;
    std::function<void(const HttpResponseHead&)> on_head;  // a 2xx head (final_url set)
    std::function<void(std::string_view)> on_chunk;        // its body
    // The 2xx body ended: ok, or the stream was cut (the platform's error, unprefixed).
    std::function<void(Status)> on_end;
    std::function<void(const HttpFailure&)> on_failure;
    // What the events above share, kept alive with them: they may capture a plain pointer
    // to it (a two-word capture std::function stores without allocating) since the call
    // runs them only while it is alive itself.
    std::shared_ptr<const void> context;
  };
  struct Spec {
    Spec(std::string m, std::string u, std::string b, std::int64_t timeout, bool auth_retry)
        : method(std::move(m)),
          url(std::move(u)),
          body(std::move(b)),
          timeout_ms(timeout),
          allow_auth_retry(auth_retry) {}

    std::string method;
    std::string url;
    std::string body;
    std::int64_t timeout_ms = 0;
    bool allow_auth_retry = true;
    // Bytes of a non-2xx answer's body kept for HttpFailure::body.
    std::size_t max_error_body = kErrorBodyBytes;
  };

  static std::shared_ptr<HttpCall> start(std::shared_ptr<HttpConnection> conn, Spec spec,
                                         Events events);
 private:
  struct Private {};  // only start() constructs (one allocation with its control block)

 public:
  HttpCall(Private, std::shared_ptr<HttpConnection> conn, Spec spec, Events events);
  ~HttpCall();
  // No event runs after this. Idempotent; safe inside this call's own events.
  void cancel();
  // Where the call is now (after redirects).
  const std::string& url() const { return url_; }

 private:
  void send_attempt();
  void on_head(const HttpResponseHead& head);
  void follow(const std::string& location);
  void on_chunk(std::string_view bytes);
  void on_complete(Status status);
  void finish_failure();
  void fail(HttpFailure failure);

  std::shared_ptr<HttpConnection> conn_;
  Spec spec_;
  Events events_;
  std::string url_;
  std::unique_ptr<HttpRequestHandle> handle_;
  std::string sent_token_;
  bool cancelled_ = false;
  bool done_ = false;
  // One storage refresh per request for a 401 and one for a 403 (a step-up after a
  // sign-in), never more: a server that keeps refusing ends the request.
  bool retried_401_ = false;
  bool retried_403_ = false;
  int redirects_ = 0;
  // The current attempt's answer.
  enum class Mode { awaiting_head, streaming, collecting_error } mode_ = Mode::awaiting_head;
  int status_ = 0;
  std::string answered_url_;  // who sent the error answer (the platform may have followed)
  HttpHeaders error_headers_;
  std::string error_body_;
};

// --- JSON-RPC helpers ------------------------------------------------------------------

enum class RpcKind { request, notification, response, other };
RpcKind rpc_kind(const json& message);
// A key that matches a response id to its request: "7" for 7 and for "7".
std::optional<std::string> rpc_id_key(const json& id);
// The error response the RpcPeer turns into this request's failure.
json synthesized_error_response(const json& id, const Error& error);
// True for a Content-Type naming `media` (ignores case and parameters).
bool media_type_is(std::string_view content_type, std::string_view media);
// True when `to` downgrades `from`: https → http.
bool is_https_downgrade(std::string_view from, std::string_view to);

}  // namespace mcprt::detail
