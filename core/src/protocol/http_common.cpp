#include "protocol/http_common.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "framing/utf8.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/redact.hpp"
#include "mcprt/url.hpp"

namespace mcprt::detail {

namespace {

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// The protocol headers that belong to the configured origin like the credentials do
// (SPEC §17); configured headers are added to these by HttpConnection::is_origin_bound.
constexpr std::string_view kOriginBoundHeaders[] = {"Authorization", "Cookie", "Mcp-Session-Id",
                                                    "MCP-Protocol-Version", "Last-Event-ID"};

// Mcp-Method, Mcp-Name, Mcp-Param-* (and Mcp-Session-Id): they mirror the request's body
// and belong to the configured origin like the session does.
bool is_mcp_header(std::string_view name) {
  return name.size() >= 4 && iequals(name.substr(0, 4), "Mcp-");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' ||
                        s.front() == '\n')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' ||
                        s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// The position of `needle` (lower case ASCII) in `hay`, ignoring ASCII case.
std::size_t ifind(std::string_view hay, std::string_view needle, std::size_t from = 0) {
  for (std::size_t i = from; i + needle.size() <= hay.size(); ++i) {
    if (iequals(hay.substr(i, needle.size()), needle)) return i;
  }
  return std::string_view::npos;
}

// An error body (trimmed, valid UTF-8) for a message. An HTML page (a proxy's or a web
// framework's 404) is named by its <title> instead of being pasted whole; anything else is
// shown as it came.
std::string error_body_text(std::string_view text) {
  const bool html = ifind(text.substr(0, 15), "<!doctype html") == 0 || ifind(text.substr(0, 5), "<html") == 0;
  if (!html) return std::string(text);
  std::string title;
  if (const auto open = ifind(text, "<title"); open != std::string_view::npos) {
    const auto start = text.find('>', open);
    const auto end = start == std::string_view::npos ? start : ifind(text, "</title", start);
    if (end != std::string_view::npos) {
      for (char c : trim(text.substr(start + 1, end - start - 1))) {  // whitespace collapsed
        const bool space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
        if (!space) title.push_back(c);
        else if (!title.empty() && title.back() != ' ') title.push_back(' ');
      }
    }
  }
  title = std::string(utf8_prefix(title, 200));
  return title.empty() ? std::string("an HTML page") : "an HTML page titled \"" + title + "\"";
}

}  // namespace

// --- HttpConnection ----------------------------------------------------------------------

HttpConnection::HttpConnection(Executor& executor, HttpClient& client,
                               HttpTransportOptions options)
    : executor_(&executor),
      client_(&client),
      options_(std::move(options)),
      prefix_(options_.server_name.empty() ? std::string()
                                           : "Server \"" + options_.server_name + "\": "),
      logger_(options_.logger ? options_.logger : &null_logger_),
      config_has_authorization_(options_.headers.has("Authorization")),
      origin_url_(parse_http_url(options_.url)) {}

Error HttpConnection::named(Error e) const {
  if (!prefix_.empty() && e.message.compare(0, prefix_.size(), prefix_) != 0) {
    e.message = prefix_ + e.message;
  }
  return e;
}

bool HttpConnection::credentials_allowed_for(std::string_view url) const {
  // Whatever headerPolicy says: origin_locked only changes how header values are
  // resolved (no !cmd, no env names), never where they may go. Most URLs asked about are
  // the configured one itself: no parse for those.
  if (!origin_url_) return false;
  if (url == options_.url) return true;
  const std::optional<Url> parsed = parse_http_url(url);
  return parsed && same_origin(*parsed, *origin_url_);
}

bool HttpConnection::is_origin_bound(std::string_view header_name) const {
  for (std::string_view bound : kOriginBoundHeaders) {
    if (iequals(header_name, bound)) return true;
  }
  return is_mcp_header(header_name) || options_.headers.has(header_name);
}

bool HttpConnection::uses_storage_token() const {
  return options_.auth_storage != nullptr && !config_has_authorization_;
}

std::string HttpConnection::add_credentials(std::string_view url, HttpHeaders& headers) const {
  if (!credentials_allowed_for(url)) return {};
  for (const HttpHeader& h : options_.headers) headers.add(h.name, h.value);
  if (!uses_storage_token() || token_.empty()) return {};
  headers.set("Authorization", "Bearer " + token_);
  return token_;
}

AuthRequest HttpConnection::auth_request() const {
  return AuthRequest{options_.server_name, options_.credential_id, options_.url};
}

bool HttpConnection::token_ready() const {
  return !uses_storage_token() || token_state_ == TokenState::ready;
}

void HttpConnection::when_token_ready(std::function<void()> ready) {
  if (token_ready()) {
    ready();
    return;
  }
  token_waiters_.push_back(std::move(ready));
  if (token_state_ == TokenState::fetching) return;
  token_state_ = TokenState::fetching;
  std::weak_ptr<HttpConnection> weak = weak_from_this();
  options_.auth_storage->get_token(auth_request(),
                                   [weak](Result<std::optional<std::string>> result) {
                                     if (auto self = weak.lock()) {
                                       self->on_token(std::move(result));
                                     }
                                   });
}

void HttpConnection::refresh_token(const std::string& rejected, int status,
                                   const std::string& challenge,
                                   std::function<void(const Error*)> done) {
  // Someone else already replaced the rejected token: just retry with the new one.
  if (!uses_storage_token() || token_state_ != TokenState::ready || token_ != rejected) {
    done(nullptr);
    return;
  }
  refresh_waiters_.push_back(std::move(done));
  if (refreshing_) return;
  refreshing_ = true;
  AuthRequest request = auth_request();
  request.status = status;
  request.www_authenticate = challenge;
  std::weak_ptr<HttpConnection> weak = weak_from_this();
  options_.auth_storage->refresh_token(request, rejected,
                                       [weak](Result<std::optional<std::string>> result) {
                                         if (auto self = weak.lock()) {
                                           self->on_refreshed(std::move(result));
                                         }
                                       });
}

void HttpConnection::on_token(Result<std::optional<std::string>> result) {
  if (!result) {
    // A broken storage must not stop the connection: go on without a token and let the
    // server say 401 if it needs one.
    log().warn(prefix_ + "could not get a token from the auth storage: " +
               result.error().describe());
  } else if (result.value()) {
    token_ = *result.value();
  }
  token_state_ = TokenState::ready;
  std::vector<std::function<void()>> waiters;
  waiters.swap(token_waiters_);
  for (auto& w : waiters) w();
}

void HttpConnection::on_refreshed(Result<std::optional<std::string>> result) {
  std::optional<Error> error;
  if (!result) {
    // The server already refused us: retrying without a token would only repeat its 401,
    // while the storage's reason (an OAuth client's needs_auth, a refused registration)
    // says what to do. The request fails with it.
    error = named(std::move(result).error());
    token_.clear();
  } else if (result.value()) {
    token_ = *result.value();
  } else {
    token_.clear();
  }
  refreshing_ = false;
  std::vector<std::function<void(const Error*)>> waiters;
  waiters.swap(refresh_waiters_);
  for (auto& w : waiters) w(error ? &*error : nullptr);
}

Error HttpConnection::http_status_error(int status, const std::string& url,
                                        std::string_view body) const {
  const std::string shown = sanitize_utf8(trim(utf8_prefix(body, kErrorBodyBytes)));
  std::string message = "HTTP " + std::to_string(status) + " from " + url;
  if (!shown.empty()) message += ": " + error_body_text(shown);
  return Error::make(ErrorCode::http_status, std::move(message),
                     json_object({{"status", status}, {"url", url}, {"body", shown}}));
}

// --- HttpCall ------------------------------------------------------------------------

HttpCall::HttpCall(Private, std::shared_ptr<HttpConnection> conn, Spec spec, Events events)
    : conn_(std::move(conn)), spec_(std::move(spec)), events_(std::move(events)), url_(spec_.url) {}

HttpCall::~HttpCall() = default;

std::shared_ptr<HttpCall> HttpCall::start(std::shared_ptr<HttpConnection> conn, Spec spec,
                                          Events events) {
  auto call = std::make_shared<HttpCall>(Private{}, std::move(conn), std::move(spec), std::move(events));
  if (call->conn_->token_ready()) {  // the usual case, without a callback to wait
    call->send_attempt();
    return call;
  }
  std::weak_ptr<HttpCall> weak = call;
  call->conn_->when_token_ready([weak] {
    if (auto self = weak.lock(); self && !self->cancelled_) self->send_attempt();
  });
  return call;
}

void HttpCall::cancel() {
  cancelled_ = true;
  handle_.reset();  // aborts: no platform callback runs after this
}

void HttpCall::send_attempt() {
  HttpRequest request;
  request.method = spec_.method;
  request.url = url_;
  request.body = spec_.body;
  request.timeout_ms = spec_.timeout_ms;
  request.max_redirects = conn_->options().max_redirects;
  // Credentials and session headers belong to the configured origin: a hop to another
  // origin gets none of them (SPEC §17).
  const bool home = conn_->credentials_allowed_for(url_);
  sent_token_ = home ? conn_->add_credentials(url_, request.headers) : std::string();
  if (events_.decorate) events_.decorate(request.headers);
  if (!home) {
    for (std::string_view bound : kOriginBoundHeaders) request.headers.remove(bound);
    std::vector<std::string> mirrors;
    for (const HttpHeader& h : request.headers) {
      if (is_mcp_header(h.name)) mirrors.push_back(h.name);
    }
    for (const std::string& name : mirrors) request.headers.remove(name);
  }
  // The platform may follow redirects only for a request that carries nothing bound to
  // the origin (it cannot strip what it does not know about); otherwise the core follows,
  // hop by hop, so that each hop gets only what its origin may see. POST and DELETE
  // redirects are never followed.
  bool carries_bound = false;
  for (const HttpHeader& h : request.headers)
    carries_bound = carries_bound || conn_->is_origin_bound(h.name);
  request.follow_redirects = spec_.method == "GET" && !carries_bound;

  mode_ = Mode::awaiting_head;
  status_ = 0;
  answered_url_ = url_;
  error_headers_ = {};
  error_body_.clear();

  std::weak_ptr<HttpCall> weak = weak_from_this();
  HttpCallbacks callbacks;
  callbacks.on_response_head = [weak](const HttpResponseHead& head) {
    if (auto self = weak.lock(); self && !self->cancelled_ && !self->done_) self->on_head(head);
  };
  callbacks.on_body_chunk = [weak](std::string_view bytes) {
    if (auto self = weak.lock(); self && !self->cancelled_ && !self->done_) self->on_chunk(bytes);
  };
  callbacks.on_complete = [weak](Status status) {
    if (auto self = weak.lock(); self && !self->cancelled_ && !self->done_) {
      self->on_complete(std::move(status));
    }
  };
  auto handle = conn_->client().send(std::move(request), std::move(callbacks));
  if (!handle) {
    // Never report inside the call that started us (start() may run inside send()).
    Error error = std::move(handle).error();
    conn_->executor().post([weak, error = std::move(error)]() mutable {
      if (auto self = weak.lock(); self && !self->cancelled_) {
        self->fail({std::move(error), 0, {}, HttpFailure::Kind::other});
      }
    });
    return;
  }
  handle_ = std::move(handle).value();
}

void HttpCall::on_head(const HttpResponseHead& head) {
  status_ = head.status;
  if (!head.final_url.empty() && head.final_url != url_) {
    // The platform followed redirects (only ever for a request with nothing origin-bound).
    // An https→http hop is refused here too; and from now on this call is at the final
    // URL, so a later attempt (an auth retry) carries credentials only if that URL is on
    // the configured origin.
    if (is_https_downgrade(url_, head.final_url)) {
      fail({Error::make(ErrorCode::protocol,
                        spec_.method + " " + url_ + " was redirected to " + head.final_url +
                            ": refusing an https to http redirect (it would go unencrypted)",
                        json_object({{"status", status_}, {"url", url_}, {"location", head.final_url}})),
            status_, head.headers, HttpFailure::Kind::http_answer});
      return;
    }
    url_ = head.final_url;
  }
  answered_url_ = url_;
  if (status_ >= 200 && status_ < 300) {
    mode_ = Mode::streaming;
    if (!events_.on_head) return;
    if (head.final_url == url_) return events_.on_head(head);
    HttpResponseHead h = head;  // a platform that reports no final URL
    h.final_url = url_;
    events_.on_head(h);
    return;
  }

  const std::string* location = head.headers.find("Location");
  if (is_redirect(status_) && spec_.method == "GET" && location) {
    follow(*location);
    return;
  }

  bool& retried = status_ == 401 ? retried_401_ : retried_403_;
  if ((status_ == 401 || status_ == 403) && spec_.allow_auth_retry && !retried &&
      conn_->uses_storage_token()) {
    retried = true;
    handle_.reset();
    // Every challenge of the answer (a server may send several WWW-Authenticate fields).
    std::string challenge;
    for (const HttpHeader& h : head.headers) {
      if (!iequals(h.name, "WWW-Authenticate")) continue;
      if (!challenge.empty()) challenge += ", ";
      challenge += h.value;
    }
    std::weak_ptr<HttpCall> weak = weak_from_this();
    const int status = status_;
    HttpHeaders headers = head.headers;
    conn_->refresh_token(
        sent_token_, status, challenge,
        [weak, status, headers = std::move(headers)](const Error* error) {
          auto self = weak.lock();
          if (!self || self->cancelled_ || self->done_) return;
          if (error) {
            self->fail({*error, status, headers, HttpFailure::Kind::http_answer});
            return;
          }
          self->send_attempt();
        });
    return;
  }

  mode_ = Mode::collecting_error;
  error_headers_ = head.headers;
}

// One redirect hop the core follows itself (the request carried origin-bound headers).
void HttpCall::follow(const std::string& location) {
  const std::string status = std::to_string(status_);
  if (redirects_ >= conn_->options().max_redirects) {
    fail({Error::make(ErrorCode::http_status,
                      "HTTP " + status + " from " + url_ + ": too many redirects (more than " +
                          std::to_string(conn_->options().max_redirects) + ")",
                      json_object({{"status", status_}, {"url", url_}})),
          status_,
          {},
          HttpFailure::Kind::http_answer});
    return;
  }
  const std::optional<std::string> target = resolve_url(url_, location);
  if (!target) {
    fail({Error::make(ErrorCode::protocol,
                      "HTTP " + status + " from " + url_ + " redirects to an invalid URL: " +
                          sanitize_utf8(utf8_prefix(location, 200)),
                      json_object({{"status", status_}, {"url", url_}})),
          status_,
          {},
          HttpFailure::Kind::http_answer});
    return;
  }
  if (is_https_downgrade(url_, *target)) {
    fail({Error::make(ErrorCode::protocol,
                      "HTTP " + status + " from " + url_ + " redirects to " + *target +
                          ": refusing an https to http redirect (it would go unencrypted)",
                      json_object({{"status", status_}, {"url", url_}, {"location", *target}})),
          status_,
          {},
          HttpFailure::Kind::http_answer});
    return;
  }
  if (!conn_->credentials_allowed_for(*target) && conn_->credentials_allowed_for(url_)) {
    conn_->log().debug(conn_->prefix() + "following a redirect to another origin (" + *target +
                       ") without credentials or session headers");
  }
  ++redirects_;
  url_ = *target;
  handle_.reset();
  send_attempt();
}

void HttpCall::on_chunk(std::string_view bytes) {
  if (mode_ == Mode::streaming) {
    if (events_.on_chunk) events_.on_chunk(bytes);
    return;
  }
  if (mode_ != Mode::collecting_error) return;
  const std::size_t limit = std::max(spec_.max_error_body, kErrorBodyBytes);
  const std::size_t room = limit - error_body_.size();
  error_body_.append(bytes.substr(0, room));
  if (error_body_.size() >= limit) {
    handle_.reset();  // enough to explain the failure; do not download the rest
    finish_failure();
  }
}

void HttpCall::on_complete(Status status) {
  switch (mode_) {
    case Mode::awaiting_head: {
      HttpFailure::Kind kind = HttpFailure::Kind::other;
      Error e = status ? Error::make(ErrorCode::transport, "no response") : std::move(status).error();
      if (!status && e.code == ErrorCode::transport) {
        const bool redirect = e.data.is_object() && e.data.value("redirect", false);
        kind = redirect ? HttpFailure::Kind::not_followed : HttpFailure::Kind::connection_lost;
      }
      // Name the request once: a platform whose message already does (the native client
      // says "HTTP POST <url> failed: ...") is not wrapped a second time. Its message was
      // redacted when it was made, so a URL with a secret appears there masked.
      if (e.message.find(url_) == std::string::npos && e.message.find(redact_secrets(url_)) == std::string::npos) {
        e.message = spec_.method + " " + url_ + " failed: " + e.message;
      }
      fail({std::move(e), 0, {}, kind});
      return;
    }
    case Mode::streaming: {
      done_ = true;
      handle_.reset();
      if (events_.on_end) events_.on_end(std::move(status));
      return;
    }
    case Mode::collecting_error:
      finish_failure();
      return;
  }
}

void HttpCall::finish_failure() {
  Error e = conn_->http_status_error(status_, answered_url_, error_body_);
  if (is_redirect(status_) && spec_.method != "GET") {
    // Re-sending a message body to wherever a server points is not safe; say the fix.
    const std::string* location = error_headers_.find("Location");
    e.message += " (mcprt does not follow redirects of " + spec_.method +
                 " requests; configure the URL it redirects to";
    if (location) e.message += ": " + sanitize_utf8(utf8_prefix(*location, 200));
    e.message += ")";
  }
  fail({std::move(e), status_, error_headers_, HttpFailure::Kind::http_answer,
        std::move(error_body_)});
}

void HttpCall::fail(HttpFailure failure) {
  if (done_ || cancelled_) return;
  done_ = true;
  handle_.reset();
  if (events_.on_failure) events_.on_failure(failure);
}

// --- JSON-RPC helpers ----------------------------------------------------------------

RpcKind rpc_kind(const json& message) {
  if (!message.is_object()) return RpcKind::other;
  const auto method = message.find("method");
  const bool has_id = message.contains("id");
  if (method != message.end() && method->is_string()) {
    return has_id ? RpcKind::request : RpcKind::notification;
  }
  if (has_id && (message.contains("result") || message.contains("error"))) return RpcKind::response;
  return RpcKind::other;
}

std::optional<std::string> rpc_id_key(const json& id) {
  if (id.is_number_integer()) {
    return id.is_number_unsigned() ? std::to_string(id.get<std::uint64_t>())
                                   : std::to_string(id.get<std::int64_t>());
  }
  if (id.is_string()) return id.get<std::string>();
  return std::nullopt;
}

json synthesized_error_response(const json& id, const Error& error) {
  json data = error.data.is_object() ? error.data : json::object();
  data["transport_error"] = to_string(error.code);
  return json_object({{"jsonrpc", "2.0"},
              {"id", id},
              {"error",
               json_object({{"code", kHttpTransportErrorCode}, {"message", error.message}, {"data", data}})}});
}

bool is_https_downgrade(std::string_view from, std::string_view to) {
  const std::optional<Url> a = parse_http_url(from);
  const std::optional<Url> b = parse_http_url(to);
  return a && b && a->scheme == "https" && b->scheme == "http";
}

bool media_type_is(std::string_view content_type, std::string_view media) {
  const std::size_t semi = content_type.find(';');
  if (semi != std::string_view::npos) content_type = content_type.substr(0, semi);
  return iequals(trim(content_type), media);
}

}  // namespace mcprt::detail
