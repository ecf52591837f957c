// NativeHttpClient on cpp-httplib (see mcprt/native/http_client.hpp for what it does and
// does not do).
//
// Who touches what:
//  - RequestState::callbacks, callback_depth, deadline: the executor thread only (send(),
//    the posted deliveries, abort()).
//  - RequestState::mutex guards phase, head_seen, timed_out, shut_down and the socket
//    list: the worker, the deadline timer, abort() and the client's destructor meet there.
//  - `aborted` is atomic: written by abort() on the executor thread, read by the worker to
//    stop early (the deliveries re-check it on the executor thread, which is what makes
//    "no callback after abort()" hold).
//
// Interrupting a blocked request: httplib's own stop() takes the client's socket mutex,
// which httplib holds for the whole connect, so calling it from the loop thread could block
// the loop for the connect timeout. Instead the worker keeps a dup() of every socket httplib
// opens (set_socket_options runs before connect) and an interrupt shuts that socket down:
// a pending connect, a blocked read or write all fail at once. Owning the dup means the
// number can never be recycled for another file while we might still shut it down.

#include "mcprt/native/http_client.hpp"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "mcprt/url.hpp"

namespace mcprt::native {

namespace {

// "No read timeout" for httplib, which always has one: a day, well inside what its poll()
// timeout (an int of milliseconds) can hold.
constexpr std::int64_t kEffectivelyNoReadTimeoutMs = 24LL * 60 * 60 * 1000;

bool is_redirect_status(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Header fields go on the wire verbatim; CR/LF/NUL would let a value inject lines.
bool is_safe_header_text(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || std::string_view("()<>@,;:\\\"/[]?={}").find(c) !=
                                      std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The request target as it goes on the request line. httplib's own URL encoding is off
// (the core hands us wire-form URLs, and encoding twice would corrupt %XX); only bytes
// that cannot appear on a request line are escaped here.
std::string request_target(const Url& url) {
  std::string raw = url.path;
  if (url.has_query) raw += "?" + url.query;
  std::string out;
  append_percent_encoded(out, raw, [](unsigned char u, std::size_t) { return u > 0x20 && u < 0x7f; });
  return out;
}

// httplib wants an IPv6 literal without its brackets (it adds them back for Host).
std::string socket_host(const Url& url) {
  if (url.host.size() >= 2 && url.host.front() == '[' && url.host.back() == ']') {
    return url.host.substr(1, url.host.size() - 2);
  }
  return url.host;
}

void set_timeout(httplib::ClientImpl& cli, void (httplib::ClientImpl::*setter)(time_t, time_t),
                 std::int64_t ms) {
  (cli.*setter)(static_cast<time_t>(ms / 1000), static_cast<time_t>((ms % 1000) * 1000));
}

std::string describe(httplib::Error error, bool head_seen, bool socket_opened,
                     const std::string& host) {
  using E = httplib::Error;
  switch (error) {
    case E::Connection:
      return socket_opened ? "could not connect (connection refused or host unreachable)"
                           : "could not resolve host \"" + host + "\"";
    case E::ConnectionTimeout:
      return "connecting timed out";
    case E::Read:
      return head_seen ? "the connection broke before the response body was complete"
                       : "the connection closed before a response arrived";
    case E::Write:
      return "sending the request failed";
    case E::SSLConnection:
      return "the TLS handshake failed";
    case E::SSLLoadingCerts:
      return "the CA certificates could not be loaded";
    case E::SSLServerVerification:
      return "the server's TLS certificate could not be verified (untrusted, expired, or "
             "issued for another name)";
    case E::Compression:
      return "the response body could not be decompressed";
    default:
      return "the request failed";
  }
}

// Threads that run requests never take SIGPIPE: httplib writes with send(2) without
// MSG_NOSIGNAL, and a server that closed its end must not kill the host. The signal stays
// pending on this thread instead, and the write fails with EPIPE.
void block_sigpipe_on_this_thread() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// One request, shared by its handle, its worker and the closures posted to the executor.
class RequestState {
 public:
  // Lifecycle, under `mutex`:
  //   queued   → running (a worker took it) | finished (aborted, deadline, or client shut
  //              down before a worker took it)
  //   running  → finished (the worker is done with it)
  enum class Phase { queued, running, finished };

  RequestState(Executor& executor, HttpRequest request, Url url, HttpCallbacks callbacks)
      : executor_(executor),
        request_(std::move(request)),
        url_(std::move(url)),
        callbacks_(std::move(callbacks)) {}

  ~RequestState() {
    for (int fd : sockets_) ::close(fd);
  }

  const HttpRequest& request() const { return request_; }
  const Url& url() const { return url_; }
  Executor& executor() const { return executor_; }
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

  // --- executor thread -------------------------------------------------------------

  void set_deadline(TimerId id) { deadline_ = id; }

  // The handle's abort(): idempotent; no callback runs once this returned.
  void abort() {
    if (aborted_.exchange(true, std::memory_order_acq_rel)) return;
    cancel_deadline();
    {
      std::lock_guard lock(mutex_);
      interrupt_locked();
    }
    // Inside one of our own callbacks the std::function is still running: release later.
    if (callback_depth_ == 0) release_callbacks();
  }

  // timeout_ms passed: a request still waiting for a worker fails here; a running one is
  // interrupted unless its head already arrived (then the deadline no longer applies).
  void on_deadline() {
    deadline_ = kNoTimer;
    bool fail_now = false;
    {
      std::lock_guard lock(mutex_);
      if (phase_ == Phase::queued) {
        phase_ = Phase::finished;
        fail_now = true;
      } else if (phase_ == Phase::running && !head_seen_) {
        timed_out_ = true;
        interrupt_locked();
      }
    }
    if (fail_now) deliver_complete(timeout_error());
  }

  void deliver_head(const HttpResponseHead& head) {
    if (aborted()) return;
    cancel_deadline();
    invoke(callbacks_.on_response_head, head);
  }

  void deliver_chunk(std::string_view bytes) {
    if (aborted()) return;
    invoke(callbacks_.on_body_chunk, bytes);
  }

  void deliver_complete(Status status) {
    if (aborted() || completed_) return;
    completed_ = true;
    cancel_deadline();
    invoke(callbacks_.on_complete, std::move(status));
    if (callback_depth_ == 0) release_callbacks();
  }

  // --- any thread --------------------------------------------------------------------

  // A worker takes the request. False when it already finished (aborted, timed out or
  // shut down while it waited).
  bool begin_running() {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::queued) return false;
    if (aborted() || shut_down_) {
      phase_ = Phase::finished;
      return false;
    }
    phase_ = Phase::running;
    return true;
  }

  // The client is going away. Returns true when the request was still queued (the caller
  // then reports it, since no worker ever will).
  bool shut_down() {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    interrupt_locked();
    if (phase_ == Phase::queued) {
      phase_ = Phase::finished;
      return true;
    }
    return false;
  }

  // --- worker thread -----------------------------------------------------------------

  // Why the worker should stop now, if it should.
  bool stop_requested() {
    std::lock_guard lock(mutex_);
    return stop_requested_locked();
  }

  // httplib opened a socket (before connecting it). Keep a dup to be able to interrupt.
  void on_socket_opened(int sock) {
    std::lock_guard lock(mutex_);
    ++sockets_opened_;
    if (stop_requested_locked()) {
      ::shutdown(sock, SHUT_RDWR);
      return;
    }
    const int copy = ::dup(sock);
    if (copy >= 0) sockets_.push_back(copy);
  }

  // One attempt (one httplib send) ended: its sockets are closed by httplib; drop ours.
  void end_attempt() {
    std::lock_guard lock(mutex_);
    for (int fd : sockets_) ::close(fd);
    sockets_.clear();
  }

  // The final head arrived. False when the deadline, an abort or shutdown got there first.
  bool claim_head() {
    std::lock_guard lock(mutex_);
    if (stop_requested_locked()) return false;
    head_seen_ = true;
    return true;
  }

  struct Outcome {
    bool aborted = false;  // by the handle: report nothing
    bool timed_out = false;
    bool shut_down = false;
    bool head_seen = false;
    int sockets_opened = 0;
  };
  Outcome finish_running() {
    std::lock_guard lock(mutex_);
    phase_ = Phase::finished;
    return Outcome{aborted(), timed_out_, shut_down_, head_seen_, sockets_opened_};
  }
  Error timeout_error() const {
    return Error::make(ErrorCode::timeout,
                       "HTTP " + request_.method + " " + request_.url + ": no response within " +
                           std::to_string(request_.timeout_ms) + " ms",
                       json{{"url", request_.url}, {"timeout_ms", request_.timeout_ms}});
  }

 private:
  bool stop_requested_locked() const { return aborted() || timed_out_ || shut_down_; }

  void interrupt_locked() {
    for (int fd : sockets_) ::shutdown(fd, SHUT_RDWR);
  }

  void cancel_deadline() {
    if (deadline_ != kNoTimer) executor_.cancel_timer(deadline_);
    deadline_ = kNoTimer;
  }

  template <class Fn, class Arg>
  void invoke(Fn& fn, Arg&& arg) {
    if (!fn) return;
    ++callback_depth_;
    fn(std::forward<Arg>(arg));
    --callback_depth_;
    if (aborted() && callback_depth_ == 0) release_callbacks();
  }

  void release_callbacks() {
    // Moved out first: destroying a callback may destroy its owner, which may abort this
    // very request again.
    HttpCallbacks doomed = std::move(callbacks_);
    callbacks_ = {};
  }

  Executor& executor_;
  const HttpRequest request_;
  const Url url_;

  // Executor thread only.
  HttpCallbacks callbacks_;
  int callback_depth_ = 0;
  bool completed_ = false;
  TimerId deadline_ = kNoTimer;

  std::atomic<bool> aborted_{false};

  std::mutex mutex_;
  Phase phase_ = Phase::queued;
  bool head_seen_ = false;
  bool timed_out_ = false;
  bool shut_down_ = false;
  int sockets_opened_ = 0;
  std::vector<int> sockets_;  // dups of the current attempt's sockets
};

class NativeRequestHandle final : public HttpRequestHandle {
 public:
  explicit NativeRequestHandle(std::shared_ptr<RequestState> state) : state_(std::move(state)) {}
  ~NativeRequestHandle() override { state_->abort(); }
  void abort() override { state_->abort(); }

 private:
  std::shared_ptr<RequestState> state_;
};

HttpResponseHead make_head(const httplib::Response& res, const std::string& url) {
  HttpResponseHead head;
  head.status = res.status;
  for (const auto& [name, value] : res.headers) head.headers.add(name, value);
  head.final_url = url;
  return head;
}

}  // namespace

// --------------------------------------------------------------------------------------

struct NativeHttpClient::Impl {
  Impl(NativeExecutor& ex, NativeHttpClientOptions opts) : executor(ex), options(std::move(opts)) {
    if (options.max_threads == 0) options.max_threads = 1;
  }

  NativeExecutor& executor;
  NativeHttpClientOptions options;

  mutable std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::shared_ptr<RequestState>> queue;
  std::vector<std::shared_ptr<RequestState>> running;
  std::vector<std::thread> threads;
  std::vector<std::thread::id> retired;  // exited workers, still to be joined
  std::size_t alive = 0;                 // workers not retired
  std::size_t idle = 0;                  // workers waiting for a request
  bool stopping = false;

  // Joins the workers that retired (they are past their last use of the pool).
  void join_retired() {
    std::vector<std::thread> done;
    {
      std::lock_guard lock(mutex);
      for (std::thread::id id : retired) {
        auto it = std::find_if(threads.begin(), threads.end(),
                               [id](const std::thread& t) { return t.get_id() == id; });
        if (it != threads.end()) {
          done.push_back(std::move(*it));
          threads.erase(it);
        }
      }
      retired.clear();
    }
    for (std::thread& t : done) t.join();
  }

  void worker_main() {
    block_sigpipe_on_this_thread();
    std::unique_lock lock(mutex);
    for (;;) {
      while (queue.empty() && !stopping) {
        ++idle;
        wake.wait(lock);
        --idle;
      }
      if (stopping) return;  // the destructor reports what is still queued
      std::shared_ptr<RequestState> state = std::move(queue.front());
      queue.pop_front();
      running.push_back(state);
      lock.unlock();
      run(state);
      lock.lock();
      running.erase(std::find(running.begin(), running.end(), state));
      if (stopping) return;
      if (queue.empty() && idle >= options.max_idle_threads) {
        --alive;
        retired.push_back(std::this_thread::get_id());
        return;
      }
    }
  }

  std::unique_ptr<httplib::ClientImpl> make_client(const Url& url, RequestState& state) const {
    std::unique_ptr<httplib::ClientImpl> cli;
    if (url.scheme == "https") {
      auto ssl = std::make_unique<httplib::SSLClient>(socket_host(url), url.port);
      if (!options.ca_cert_file.empty() || !options.ca_cert_dir.empty()) {
        ssl->set_ca_cert_path(options.ca_cert_file, options.ca_cert_dir);
      }
      ssl->enable_server_certificate_verification(true);
      cli = std::move(ssl);
    } else {
      cli = std::make_unique<httplib::ClientImpl>(socket_host(url), url.port);
    }
    cli->set_keep_alive(false);
    cli->set_follow_location(false);  // we follow, to report final_url and bound the hops
    cli->set_url_encode(false);

    std::int64_t connect_ms = options.connect_timeout_ms > 0 ? options.connect_timeout_ms : 30000;
    if (state.request().timeout_ms > 0) connect_ms = std::min(connect_ms, state.request().timeout_ms);
    set_timeout(*cli, &httplib::ClientImpl::set_connection_timeout, connect_ms);
    set_timeout(*cli, &httplib::ClientImpl::set_write_timeout,
                options.write_timeout_ms > 0 ? options.write_timeout_ms : 30000);
    set_timeout(*cli, &httplib::ClientImpl::set_read_timeout,
                options.read_idle_timeout_ms > 0
                    ? std::min(options.read_idle_timeout_ms, kEffectivelyNoReadTimeoutMs)
                    : kEffectivelyNoReadTimeoutMs);
    cli->set_socket_options([&state](socket_t sock) { state.on_socket_opened(sock); });
    return cli;
  }

  void post(const std::shared_ptr<RequestState>& state, Status status) {
    executor.post([state, status = std::move(status)]() mutable {
      state->deliver_complete(std::move(status));
    });
  }

  // Runs one request on this worker thread: connect, send, stream the answer, follow GET
  // redirects when asked, then post the completion.
  void run(const std::shared_ptr<RequestState>& state) {
    if (!state->begin_running()) return;

    const HttpRequest& request = state->request();
    const bool follow = request.follow_redirects && request.method == "GET";
    std::string current_url = request.url;
    Url current = state->url();
    int hops = 0;
    httplib::Error error = httplib::Error::Success;
    bool ok = false;
    std::optional<Error> own_error;

    for (;;) {
      if (state->stop_requested()) break;
      std::unique_ptr<httplib::ClientImpl> cli = make_client(current, *state);

      httplib::Request req;
      req.method = request.method;
      req.path = request_target(current);
      for (const HttpHeader& h : request.headers) req.headers.emplace(h.name, h.value);
      if (!request.headers.has("User-Agent") && !options.user_agent.empty()) {
        req.headers.emplace("User-Agent", options.user_agent);
      }
      req.body = request.body;

      std::optional<std::string> redirect_to;
      bool head_posted = false;
      req.response_handler = [&](const httplib::Response& res) {
        if (follow && is_redirect_status(res.status) && res.has_header("Location")) {
          std::optional<std::string> target =
              resolve_url(current_url, res.get_header_value("Location"));
          if (target) {
            redirect_to = std::move(target);
            return false;  // drop this hop's body and connection
          }
        }
        if (!state->claim_head()) return false;
        head_posted = true;
        executor.post([state, head = make_head(res, current_url)] { state->deliver_head(head); });
        return true;
      };
      req.content_receiver = [&](const char* data, std::size_t size, std::uint64_t,
                                 std::uint64_t) {
        if (state->aborted()) return false;
        executor.post([state, bytes = std::string(data, size)] { state->deliver_chunk(bytes); });
        return true;
      };

      httplib::Response res;
      error = httplib::Error::Success;
      ok = cli->send(req, res, error);
      state->end_attempt();
      cli.reset();

      if (redirect_to) {
        if (hops >= request.max_redirects) {
          own_error = Error::make(
              ErrorCode::transport,
              "HTTP GET " + request.url + ": too many redirects (more than " +
                  std::to_string(request.max_redirects) + "), the last to " + *redirect_to,
              json{{"url", request.url}, {"last_url", *redirect_to}});
          break;
        }
        std::optional<Url> next = parse_http_url(*redirect_to);
        if (!next) break;  // cannot happen: resolve_url returns parseable http(s) URLs
        ++hops;
        current_url = *redirect_to;
        current = *next;
        continue;
      }
      // A 204 (and any answer httplib reads without calling the response handler) still
      // has a head to report.
      if (ok && !head_posted) {
        if (state->claim_head()) {
          executor.post([state, head = make_head(res, current_url)] { state->deliver_head(head); });
        } else {
          ok = false;
        }
      }
      break;
    }

    const RequestState::Outcome outcome = state->finish_running();
    if (outcome.aborted) return;
    if (outcome.shut_down) {
      post(state, Error::make(ErrorCode::aborted,
                              "HTTP " + request.method + " " + request.url +
                                  ": the HTTP client was shut down",
                              json{{"url", request.url}}));
      return;
    }
    if (outcome.timed_out) {
      post(state, state->timeout_error());
      return;
    }
    if (own_error) {
      post(state, std::move(*own_error));
      return;
    }
    if (ok) {
      post(state, Status());
      return;
    }
    post(state, failure(request, current_url, current, error, outcome));
  }

  Error failure(const HttpRequest& request, const std::string& url, const Url& parsed,
                httplib::Error error, const RequestState::Outcome& outcome) const {
    if (error == httplib::Error::ConnectionTimeout && request.timeout_ms > 0 &&
        request.timeout_ms <= options.connect_timeout_ms) {
      return Error::make(ErrorCode::timeout,
                         "HTTP " + request.method + " " + url + ": no connection within " +
                             std::to_string(request.timeout_ms) + " ms",
                         json{{"url", url}, {"timeout_ms", request.timeout_ms}});
    }
    const std::string what =
        describe(error, outcome.head_seen, outcome.sockets_opened > 0, parsed.host);
    return Error::make(ErrorCode::transport,
                       "HTTP " + request.method + " " + url + " failed: " + what +
                           " [httplib: " + httplib::to_string(error) + "]",
                       json{{"url", url}, {"httplib_error", httplib::to_string(error)}});
  }
};

NativeHttpClient::NativeHttpClient(NativeExecutor& executor, NativeHttpClientOptions options)
    : impl_(std::make_unique<Impl>(executor, std::move(options))) {}

NativeHttpClient::~NativeHttpClient() {
  std::vector<std::shared_ptr<RequestState>> queued;
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    for (auto& state : impl_->running) state->shut_down();
    for (auto& state : impl_->queue) {
      if (state->shut_down()) queued.push_back(state);
    }
    impl_->queue.clear();
    threads = std::move(impl_->threads);
  }
  impl_->wake.notify_all();
  for (std::thread& t : threads) t.join();
  for (auto& state : queued) {
    impl_->post(state, Error::make(ErrorCode::aborted,
                                   "HTTP " + state->request().method + " " +
                                       state->request().url + ": the HTTP client was shut down",
                                   json{{"url", state->request().url}}));
  }
}

Result<std::unique_ptr<HttpRequestHandle>> NativeHttpClient::send(HttpRequest request,
                                                                  HttpCallbacks callbacks) {
  std::optional<Url> url = parse_http_url(request.url);
  if (!url) {
    return Error::make(ErrorCode::invalid_argument,
                       "not an absolute http:// or https:// URL: \"" + request.url + "\"",
                       json{{"url", request.url}});
  }
  if (!is_token(request.method)) {
    return Error::make(ErrorCode::invalid_argument,
                       "invalid HTTP method \"" + request.method + "\" for " + request.url);
  }
  for (const HttpHeader& h : request.headers) {
    if (!is_token(h.name) || !is_safe_header_text(h.value)) {
      return Error::make(ErrorCode::invalid_argument,
                         "invalid HTTP header \"" + h.name + "\" for " + request.url +
                             " (a name must be a token; CR, LF and NUL are not allowed)");
    }
  }

  impl_->join_retired();

  const std::int64_t timeout_ms = request.timeout_ms;
  auto state = std::make_shared<RequestState>(impl_->executor, std::move(request), std::move(*url),
                                              std::move(callbacks));
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) {
      return Error::make(ErrorCode::aborted, "the HTTP client is shutting down");
    }
    impl_->queue.push_back(state);
    // Requests beyond the idle workers (some may be woken but not running yet) need a new
    // worker, up to the cap.
    if (impl_->queue.size() > impl_->idle && impl_->alive < impl_->options.max_threads) {
      try {
        impl_->threads.emplace_back([impl = impl_.get()] { impl->worker_main(); });
        ++impl_->alive;
      } catch (const std::system_error& e) {
        if (impl_->alive == 0) {
          impl_->queue.pop_back();
          return Error::make(ErrorCode::transport,
                             "could not start an HTTP worker thread: " + std::string(e.what()));
        }
        // Otherwise it waits for a running worker.
      }
    }
  }
  impl_->wake.notify_one();

  if (timeout_ms > 0) {
    std::weak_ptr<RequestState> weak = state;
    state->set_deadline(impl_->executor.post_after(Millis(timeout_ms), [weak] {
      if (auto s = weak.lock()) s->on_deadline();
    }));
  }
  return std::unique_ptr<HttpRequestHandle>(new NativeRequestHandle(std::move(state)));
}

std::size_t NativeHttpClient::in_flight() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->queue.size() + impl_->running.size();
}

std::size_t NativeHttpClient::thread_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->alive;
}

}  // namespace mcprt::native
