// NativeHttpClient on libcurl's multi interface (see mcprt/native/http_client.hpp for what it
// does and does not do, and why one multi driven by the executor's loop).
//
// Three objects per request:
//  - NativeRequestHandle: the caller's handle; abort() and its destructor stop the request.
//  - RequestState (shared): the caller's side — callbacks, the timeout_ms deadline, the
//    "no callback after abort()" rule — and what the transfer hands over to it (the head
//    claim; the head, body and completion not delivered yet, flushed in one go).
//  - Transfer: libcurl's side — the curl easy handle, the head reader with its caps,
//    redirect hops, the watchdog. Built in send(), owned by Impl::transfers once started.
//
// Everything runs on the executor's loop thread: send(), the handles, and the turns
// (Impl::turn) that hand libcurl the sockets that moved, run its timeouts and collect what
// finished. libcurl's callbacks only buffer into the RequestState; the caller's callbacks
// run when the turn ends (Hub::deliver), or from a posted delivery after send() and the
// shutdown, never inside libcurl or send(). A handle reaches the client
// only through the Hub (commands and an eventfd that makes the loop run a turn), which
// outlives the client. Hub::in_flight is the one thing read from other threads.

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "mcprt/native/http_client.hpp"
#include "mcprt/url.hpp"
#include "native_http_headers.hpp"

namespace mcprt::native {

namespace {

using SteadyClock = std::chrono::steady_clock;

// Body bytes that arrived but the executor has not delivered yet, per request. Beyond this
// the transfer pauses (libcurl stops reading the socket) until the executor caught up, so a
// fast server cannot outrun a busy loop into unbounded memory.
constexpr std::size_t kMaxBufferedBodyBytes = 1024 * 1024;
// A redirect hop's body is read and dropped (keeping its connection reusable) up to this;
// beyond it the hop's connection is closed and the redirect followed anyway.
constexpr std::size_t kMaxRedirectBodyBytes = 64 * 1024;
// libcurl's own connect timeout is only a backstop behind the watchdog's (connect_timeout_ms):
// when libcurl times out a DNS lookup it waits for getaddrinfo to return, which would stall
// every other transfer; the watchdog reports the request at once and drops the transfer
// once its lookup returned.
constexpr long kCurlConnectBackstopMs = 10 * 60 * 1000;

bool is_redirect_status(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Request headers that stay with their origin when a followed redirect leaves it.
bool is_origin_bound_header(std::string_view name) {
  for (std::string_view n : {"authorization", "proxy-authorization", "cookie", "mcp-session-id",
                             "mcp-protocol-version"}) {
    if (iequals(name, n)) return true;
  }
  return false;
}

// The URL handed to libcurl: the origin (never the userinfo: no implicit Basic auth) and
// the request target as the core wrote it. The core hands over wire-form URLs, so only
// bytes that cannot appear on a request line are escaped; CURLOPT_PATH_AS_IS keeps libcurl
// from touching dot segments.
std::string curl_url_for(const Url& url) {
  std::string raw = url.path;
  if (url.has_query) raw += "?" + url.query;
  std::string out = url.origin();
  append_percent_encoded(out, raw,
                         [](unsigned char u, std::size_t) { return u > 0x20 && u < 0x7f; });
  return out;
}

// An IP literal needs no DNS lookup (libcurl starts no resolver thread for it).
bool is_ip_literal(const std::string& host) {
  if (!host.empty() && host.front() == '[') return true;
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1;
}

// curl_global_init once per process, thread-safely (a function-local static); never
// cleaned up (other libcurl users in the process may still need it).
bool curl_ready() {
  static const bool ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ok;
}

class RequestState;
class Transfer;

// What a handle asks of the client: queued, and done by the next turn.
struct Command {
  enum class Kind { start, cancel, resume };
  Kind kind;
  std::shared_ptr<RequestState> state;
  std::unique_ptr<Transfer> transfer;  // start only
};

// The mailbox between the handles and the client's turns; shared with every request so a
// handle that outlives the client can still call abort() safely (it knows only the hub).
// `wake_fd` (an eventfd in the client's epoll set) makes the loop run a turn for what was
// queued.
class Hub {
 public:
  explicit Hub(int wake_fd) : wake_fd_(wake_fd) {}

  // Queues a command and wakes a turn. False once the client shuts down.
  bool push(Command command) {
    if (stopping_ || wake_fd_ < 0) return false;
    // Commands already queued have signalled the eventfd, which nobody has read yet.
    const bool wake = commands_.empty();
    commands_.push_back(std::move(command));
    if (wake) signal();
    return true;
  }

  // What is queued; `stopping` says whether the client winds down.
  std::vector<Command> take(bool& stopping) {
    stopping = stopping_;
    return std::exchange(commands_, {});
  }

  void stop() { stopping_ = true; }

  // The client is gone: nobody may signal the eventfd any more; the caller closes it.
  int detach_wake_fd() {
    stopping_ = true;
    return std::exchange(wake_fd_, -1);
  }

  // Requests with something to deliver (RequestState::flush), in the order they first got
  // it. A turn the loop runs delivers them as it ends; a send() or the shutdown, which must
  // not run the caller's callbacks, posts one delivery (post_delivery).
  void queue_delivery(std::shared_ptr<RequestState> state) { ready_.push_back(std::move(state)); }
  // Runs every queued flush (defined after RequestState). Touches nothing but the hub and
  // the requests: a callback may destroy the client.
  void deliver();
  // Queues a deliver() on `executor` unless nothing waits or one is queued already.
  static void post_delivery(const std::shared_ptr<Hub>& hub, Executor& executor) {
    if (hub->ready_.empty() || std::exchange(hub->delivery_posted_, true)) return;
    executor.post([hub] {
      hub->delivery_posted_ = false;
      hub->deliver();
    });
  }

  std::atomic<std::size_t> in_flight{0};  // read by in_flight() from any thread

 private:
  void signal() {
    const std::uint64_t one = 1;
    // Cannot fail short of a counter overflow (2^64 - 1 wake-ups unread).
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }

  int wake_fd_;
  bool stopping_ = false;
  std::vector<Command> commands_;
  std::vector<std::shared_ptr<RequestState>> ready_;
  bool delivery_posted_ = false;
};

// The client's epoll set: libcurl says which sockets it waits for (CURLMOPT_SOCKETFUNCTION)
// and a turn tells libcurl which ones are ready (curl_multi_socket_action), so a
// transfer is only looked at when its socket moved, and an idle SSE stream costs nothing
// per request. The sockets of connections (opened and closed through libcurl's socket
// callbacks, so their numbers are known to be fresh or gone) stay in the set when libcurl
// stops watching them: a connection goes back to the cache after every request and is
// watched again by the next, and re-registering it each time would cost two epoll_ctl per
// request. If one of them stirs while unwatched (the server closed an idle connection), it
// is taken out then. Other sockets (the DNS resolver's) are added and removed as told.
// The loop thread only (and the destructor).
class SocketWatcher {
 public:
  explicit SocketWatcher(int epoll_fd) : epoll_fd_(epoll_fd) {}

  // CURLMOPT_SOCKETFUNCTION.
  static int on_socket(CURL*, curl_socket_t s, int what, void* self, void*) {
    static_cast<SocketWatcher*>(self)->watch(s, what);
    return 0;
  }
  // CURLOPT_CLOSESOCKETFUNCTION (the connections opened by Transfer::on_open_socket).
  static int on_close_socket(void* self, curl_socket_t s) {
    static_cast<SocketWatcher*>(self)->forget(s);
    return ::close(s);
  }

  // A socket just opened (its number may have been another socket's).
  void opened(curl_socket_t s) {
    forget(s);
    sockets_[s].connection = true;
  }

  // An event from epoll for `s`: libcurl's readiness bits, or 0 when nobody waits for
  // this socket (it is then taken out of the set).
  int ready(curl_socket_t s, std::uint32_t events) {
    auto it = sockets_.find(s);
    if (it == sockets_.end() || it->second.want == 0) {
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, s, nullptr);
      if (it != sockets_.end()) it->second.registered = 0;
      return 0;
    }
    int bits = 0;
    if ((events & EPOLLIN) != 0) bits |= CURL_CSELECT_IN;
    if ((events & EPOLLOUT) != 0) bits |= CURL_CSELECT_OUT;
    if ((events & (EPOLLERR | EPOLLHUP)) != 0) bits |= CURL_CSELECT_ERR;
    return bits;
  }

 private:
  struct Entry {
    std::uint32_t want = 0;        // what libcurl waits for (EPOLLIN / EPOLLOUT)
    std::uint32_t registered = 0;  // what the epoll set holds for it (0 = not in it)
    bool connection = false;       // opened and closed through the callbacks
  };

  void watch(curl_socket_t s, int what) {
    auto it = sockets_.find(s);
    if (what == CURL_POLL_REMOVE) {
      if (it == sockets_.end()) return;
      it->second.want = 0;
      if (!it->second.connection) {
        if (it->second.registered != 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, s, nullptr);
        sockets_.erase(it);
      }
      return;
    }
    if (it == sockets_.end()) it = sockets_.emplace(s, Entry{}).first;
    Entry& e = it->second;
    e.want = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) e.want |= EPOLLIN;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) e.want |= EPOLLOUT;
    if (e.registered == e.want) return;
    epoll_event ev{};
    ev.events = e.want;
    ev.data.fd = s;
    int op = e.registered == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (::epoll_ctl(epoll_fd_, op, s, &ev) != 0) {
      // The table was out of date (a socket closed behind libcurl's callbacks and its
      // number reused): the other operation then.
      op = errno == ENOENT ? EPOLL_CTL_ADD : errno == EEXIST ? EPOLL_CTL_MOD : -1;
      if (op < 0 || ::epoll_ctl(epoll_fd_, op, s, &ev) != 0) {
        e.registered = 0;
        return;
      }
    }
    e.registered = e.want;
  }

  // `s` is closed (or about to be): the kernel drops a closed socket from the set itself.
  void forget(curl_socket_t s) { sockets_.erase(s); }

  const int epoll_fd_;
  std::unordered_map<curl_socket_t, Entry> sockets_;
};

// One request, shared by its handle, its Transfer, the hub's deliveries and its deadline.
class RequestState : public std::enable_shared_from_this<RequestState> {
 public:
  RequestState(Executor& executor, HttpRequest request, Url url, HttpCallbacks callbacks,
               std::shared_ptr<Hub> hub)
      : executor_(executor),
        request_(std::move(request)),
        url_(std::move(url)),
        callbacks_(std::move(callbacks)),
        hub_(std::move(hub)) {}

  const HttpRequest& request() const { return request_; }
  const Url& url() const { return url_; }
  bool aborted() const { return aborted_; }

  // --- what the caller's side does ---------------------------------------------------

  void set_deadline(TimerId id) { deadline_ = id; }

  // The handle's abort(): idempotent; no callback runs once this returned.
  void abort() {
    if (std::exchange(aborted_, true)) return;
    cancel_deadline();
    // Once on_complete ran, the client has let go of the transfer (it hands over the
    // completion as it drops it): nothing to cancel, and no wake-up per finished request.
    if (!completed_) hub_->push(Command{Command::Kind::cancel, shared_from_this(), nullptr});
    // Inside one of our own callbacks the std::function is still running: release later.
    if (callback_depth_ == 0) release_callbacks();
  }

  // timeout_ms passed. Unless the head already arrived (then the deadline no longer
  // applies), the request fails now and the next turn drops the transfer.
  void on_deadline() {
    deadline_ = kNoTimer;
    if (head_seen_) return;
    timed_out_ = true;
    hub_->push(Command{Command::Kind::cancel, shared_from_this(), nullptr});
    deliver_complete(timeout_error());
  }

  // Delivers what the transfer handed over since the last flush, in order: the head,
  // every body byte as one chunk, the completion. Once per batch, at the end of the turn
  // that read them (never inside libcurl or send()).
  void flush() {
    std::optional<HttpResponseHead> head;
    std::string bytes;
    std::optional<Status> status;
    head.swap(pending_head_);
    bytes.swap(body_);
    status.swap(pending_status_);
    flush_queued_ = false;
    const bool resume = std::exchange(paused_, false);
    if (resume) hub_->push(Command{Command::Kind::resume, shared_from_this(), nullptr});
    if (head && !aborted()) {
      cancel_deadline();
      invoke(callbacks_.on_response_head, *head);
    }
    if (!bytes.empty() && !aborted() && !completed_) {
      invoke(callbacks_.on_body_chunk, std::string_view(bytes));
    }
    if (status) deliver_complete(std::move(*status));
  }

  void deliver_complete(Status status) {
    if (aborted() || completed_) return;
    completed_ = true;
    cancel_deadline();
    invoke(callbacks_.on_complete, std::move(status));
    if (callback_depth_ == 0) release_callbacks();
  }

  // --- what the transfer hands over, inside a turn -------------------------------------

  // True when nothing more is wanted: aborted by the handle, or timed out (already
  // reported).
  bool stop_requested() const { return aborted_ || timed_out_; }

  // The final head arrived: hand it over. False when the deadline or an abort got there first
  // (the transfer then stops). A head announcing a small body (Content-Length up to
  // kHeldBodyBytes) waits for that body and goes with it: the server computed the body
  // before it could send its length, so it is on its way, and the caller gets the answer
  // in one delivery even when the server writes head and body apart. The transfer's
  // end (or failure) hands over whatever is held.
  bool post_head(HttpResponseHead head) {
    if (stop_requested()) return false;
    head_seen_ = true;
    hold_until_ = held_body_bytes(head);
    pending_head_ = std::move(head);
    if (hold_until_ == 0) queue_flush();
    return true;
  }

  enum class Push { accepted, pause, stop };
  Push push_body(const char* data, std::size_t size) {
    if (aborted_) return Push::stop;
    if (body_.size() >= kMaxBufferedBodyBytes) {
      paused_ = true;
      return Push::pause;
    }
    body_.append(data, size);
    if (hold_until_ > 0 && body_.size() < hold_until_) return Push::accepted;
    hold_until_ = 0;
    queue_flush();
    return Push::accepted;
  }

  void post_complete(Status status) {
    hold_until_ = 0;
    pending_status_ = std::move(status);
    queue_flush();
  }

  Error timeout_error() const {
    return Error::make(ErrorCode::timeout,
                       "HTTP " + request_.method + " " + request_.url + ": no response within " +
                           std::to_string(request_.timeout_ms) + " ms",
                       json{{"url", request_.url}, {"timeout_ms", request_.timeout_ms}});
  }
  Error shut_down_error() const {
    return Error::make(
        ErrorCode::aborted,
        "HTTP " + request_.method + " " + request_.url + ": the HTTP client was shut down",
        json{{"url", request_.url}});
  }

 private:
  void cancel_deadline() {
    if (deadline_ != kNoTimer) executor_.cancel_timer(deadline_);
    deadline_ = kNoTimer;
  }

  static constexpr std::size_t kHeldBodyBytes = 64 * 1024;
  // The body bytes to wait for before the head is delivered (0: deliver it at once).
  static std::size_t held_body_bytes(const HttpResponseHead& head) {
    const std::string* length = head.headers.find("Content-Length");
    if (length == nullptr || length->empty() || length->size() > 5) return 0;
    std::size_t n = 0;
    for (char c : *length) {
      if (c < '0' || c > '9') return 0;
      n = n * 10 + static_cast<std::size_t>(c - '0');
    }
    return n <= kHeldBodyBytes ? n : 0;
  }

  // One flush queued at a time: what arrives before it runs goes with it.
  void queue_flush() {
    if (std::exchange(flush_queued_, true)) return;
    hub_->queue_delivery(shared_from_this());
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

  HttpCallbacks callbacks_;
  int callback_depth_ = 0;
  bool completed_ = false;
  TimerId deadline_ = kNoTimer;
  bool aborted_ = false;
  const std::shared_ptr<Hub> hub_;

  bool head_seen_ = false;
  bool timed_out_ = false;
  // Handed over by the transfer, not delivered yet (flush()).
  std::optional<HttpResponseHead> pending_head_;
  std::string body_;
  std::optional<Status> pending_status_;
  bool flush_queued_ = false;
  bool paused_ = false;  // the transfer is paused until the next flush
  std::size_t hold_until_ = 0;  // the head waits until the body has this many bytes
};

void Hub::deliver() {
  // Taken whole first: a flush may queue more (a callback's own send() posts for those).
  for (const std::shared_ptr<RequestState>& state : std::exchange(ready_, {})) state->flush();
}

class NativeRequestHandle final : public HttpRequestHandle {
 public:
  explicit NativeRequestHandle(std::shared_ptr<RequestState> state) : state_(std::move(state)) {}
  ~NativeRequestHandle() override { state_->abort(); }
  void abort() override { state_->abort(); }

 private:
  std::shared_ptr<RequestState> state_;
};

// Easy handles of finished transfers, kept for the next requests: a handle and its
// buffers are allocated once, not per request, and a kept handle keeps what every
// transfer of this client sets alike (Transfer::configure_handle), so a request only sets
// its own part (Transfer::configure_transfer, which sets or clears each option a request
// may have set: no curl_easy_reset, whose defaults cost more than setting them again). At
// most kMaxIdle are kept. Loop thread only.
class EasyPool {
 public:
  EasyPool() = default;
  EasyPool(const EasyPool&) = delete;
  EasyPool& operator=(const EasyPool&) = delete;
  ~EasyPool() {
    for (CURL* easy : idle_) curl_easy_cleanup(easy);
  }

  // A kept handle, or a new one (`fresh`: it still needs Transfer::configure_handle).
  CURL* take(bool& fresh) {
    fresh = idle_.empty();
    if (fresh) return curl_easy_init();
    CURL* easy = idle_.back();
    idle_.pop_back();
    return easy;
  }
  // `easy` is in no multi. What pointed into its last transfer is cleared.
  void give(CURL* easy) {
    if (idle_.size() >= kMaxIdle) {
      curl_easy_cleanup(easy);
      return;
    }
    curl_easy_setopt(easy, CURLOPT_PRIVATE, static_cast<void*>(nullptr));
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, static_cast<const char*>(nullptr));
    idle_.push_back(easy);
  }

 private:
  static constexpr std::size_t kMaxIdle = 8;
  std::vector<CURL*> idle_;
};

// A request's header lines as libcurl's list (CURLOPT_HTTPHEADER), built in two
// allocations however many lines there are: the lines in one buffer, each ended by its NUL,
// and the list's nodes in one vector. curl_slist_append would allocate a node and a copy per
// line. libcurl only reads the list, for as long as the transfer runs (a redirect hop sends
// it again), so it must live as long as the transfer; `clear` starts a new one. No line
// holds a NUL: send() refuses header text with CR, LF or NUL (detail::is_safe_header_text).
class CurlHeaderList {
 public:
  void clear() {
    text_.clear();
    nodes_.clear();
  }
  // Room for `lines` lines of `bytes` bytes in all (their names and values), so that the
  // adds that follow do not grow the buffer line by line.
  void reserve(std::size_t lines, std::size_t bytes) {
    text_.reserve(bytes + 3 * lines);
    nodes_.reserve(lines);
  }
  // Appends "<name>: <value>", or "<name>;" for an empty value ("Name:" would make libcurl
  // drop the field; "Name;" sends it with an empty value).
  void add(std::string_view name, std::string_view value) {
    text_.append(name);
    if (value.empty()) {
      text_ += ';';
    } else {
      text_ += ": ";
      text_.append(value);
    }
    text_ += '\0';
  }
  // Appends "<name>:": removes a header libcurl would add on its own.
  void suppress(std::string_view name) {
    text_.append(name);
    text_ += ":";
    text_ += '\0';
  }
  // The list (null when empty), valid until the next clear() or add().
  curl_slist* list() {
    nodes_.clear();
    for (std::size_t at = 0; at < text_.size(); at = text_.find('\0', at) + 1) {
      nodes_.push_back(curl_slist{text_.data() + at, nullptr});
    }
    for (std::size_t i = 1; i < nodes_.size(); ++i) nodes_[i - 1].next = &nodes_[i];
    return nodes_.empty() ? nullptr : nodes_.data();
  }

 private:
  std::string text_;
  std::vector<curl_slist> nodes_;
};

// libcurl's side of one request: its easy handle, across redirect hops.
class Transfer {
 public:
  // `curl_url`: curl_url_for(state->url()), which the client keeps with the URL it parsed.
  Transfer(std::shared_ptr<RequestState> state, std::string curl_url,
           const NativeHttpClientOptions& options, SocketWatcher& watcher, EasyPool& pool)
      : state_(std::move(state)),
        options_(options),
        watcher_(watcher),
        pool_(pool),
        url_(state_->request().url),
        parsed_(state_->url()),
        curl_url_(std::move(curl_url)),
        follow_(state_->request().follow_redirects && state_->request().method == "GET"),
        reader_(detail::ResponseHeadLimits{options.max_response_header_fields,
                                           options.max_response_header_bytes}) {
    error_buffer_[0] = '\0';
  }
  // Out of the multi by now (Impl::drop and finish remove it first).
  ~Transfer() {
    if (easy_ != nullptr) pool_.give(easy_);
  }
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Creates and configures the easy handle (in send()). An error names what
  // libcurl refused.
  std::optional<Error> init() {
    bool fresh = false;
    easy_ = pool_.take(fresh);
    if (easy_ == nullptr) return setup_error("curl_easy_init failed");
    CURLcode rc = fresh ? configure_handle() : CURLE_OK;
    if (rc == CURLE_OK) rc = configure_transfer();
    if (rc == CURLE_OK) rc = configure_hop();
    if (rc != CURLE_OK) return setup_error(curl_easy_strerror(rc));
    return std::nullopt;
  }

  CURL* easy() const { return easy_; }
  RequestState& state() const { return *state_; }

  bool doomed() const { return doomed_; }
  void doom() { doomed_ = true; }
  // Added to the multi: connect_timeout_ms counts from here.
  void started() { reset_watchdog(); }
  // A DNS lookup of this hop runs on a libcurl resolver thread: removing the handle now
  // would block the loop until getaddrinfo returns.
  bool resolving() const { return resolving_ && !socket_opened_; }

  // The hop to follow once this one finished, if any. Moves to it: reconfigures the easy
  // handle (the caller re-adds it). False with error() set when libcurl refused.
  bool has_next_hop() const { return redirect_to_.has_value() && !error_; }
  bool start_next_hop() {
    std::optional<Url> next = parse_http_url(*redirect_to_);
    if (!next) {  // cannot happen: resolve_url returns parseable http(s) URLs
      error_ = transport_error("the redirect target " + *redirect_to_ + " is not an http(s) URL");
      return false;
    }
    ++hops_;
    url_ = *std::exchange(redirect_to_, std::nullopt);
    parsed_ = std::move(*next);
    curl_url_ = curl_url_for(parsed_);
    reader_.reset();
    phase_ = Phase::head;
    redirect_body_bytes_ = 0;
    resolving_ = socket_opened_ = false;
    reset_watchdog();
    const CURLcode rc = configure_hop();
    if (rc != CURLE_OK) {
      error_ = transport_error(std::string("libcurl refused the redirect hop: ") +
                               curl_easy_strerror(rc));
      return false;
    }
    return true;
  }

  // The outcome once libcurl finished the transfer (or the watchdog stopped it).
  Status outcome(CURLcode code) const {
    if (error_) return *error_;
    if (code == CURLE_OK && phase_ == Phase::body) return Status();
    return curl_failure(code);
  }

  // The watchdog: connect_timeout_ms, write_timeout_ms, read_idle_timeout_ms. Returns false
  // with the error set when the transfer must stop; otherwise lowers `next_check` to when
  // it needs looking at again.
  bool check_stalls(SteadyClock::time_point now, SteadyClock::time_point& next_check) {
    const bool watch_write = options_.write_timeout_ms > 0;
    const bool watch_read = options_.read_idle_timeout_ms > 0;
    if (doomed_) return true;
    if (!request_sent_) {
      curl_off_t pretransfer = 0;
      curl_easy_getinfo(easy_, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
      if (pretransfer <= 0) {  // resolving, connecting, TLS, or waiting for a free connection
        const auto limit = std::chrono::milliseconds(connect_timeout_ms());
        if (now - started_at_ >= limit) {
          error_ =
              transport_error("connecting timed out after " + std::to_string(connect_timeout_ms()) +
                              " ms (connect_timeout_ms)");
          return false;
        }
        next_check = std::min(next_check, started_at_ + limit);
        return true;
      }
      if (!watch_write && !watch_read) {
        request_sent_ = true;  // nothing more to watch
        return true;
      }
      curl_off_t uploaded = 0;
      curl_easy_getinfo(easy_, CURLINFO_SIZE_UPLOAD_T, &uploaded);
      const auto body_size = static_cast<curl_off_t>(state_->request().body.size());
      if (uploaded >= body_size || phase_ != Phase::head) {
        request_sent_ = true;
        sent_at_ = now;
      } else if (uploaded != uploaded_) {
        uploaded_ = uploaded;
        write_progress_at_ = now;
      } else if (watch_write) {
        const auto limit = std::chrono::milliseconds(options_.write_timeout_ms);
        if (now - write_progress_at_ >= limit) {
          error_ = transport_error("sending the request stalled: the server read nothing for " +
                                   std::to_string(options_.write_timeout_ms) + " ms (" +
                                   std::to_string(uploaded) + " of " + std::to_string(body_size) +
                                   " body bytes sent; write_timeout_ms)");
          return false;
        }
        next_check = std::min(next_check, write_progress_at_ + limit);
      }
      if (!request_sent_) return true;
    }
    if (watch_read) {
      if (std::exchange(read_since_check_, false)) last_read_at_ = now;
      const auto limit = std::chrono::milliseconds(options_.read_idle_timeout_ms);
      const auto since = std::max(sent_at_, last_read_at_);
      if (now - since >= limit) {
        error_ = transport_error("the server sent nothing for " +
                                 std::to_string(options_.read_idle_timeout_ms) +
                                 " ms (read_idle_timeout_ms)");
        return false;
      }
      next_check = std::min(next_check, since + limit);
    }
    return true;
  }

  // --- libcurl callbacks (inside a turn) ----------------------------------------------

  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self) {
    return static_cast<Transfer*>(self)->header_line(std::string_view(data, size * n));
  }
  static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* self) {
    return static_cast<Transfer*>(self)->body_bytes(data, size * n);
  }
  static int on_resolver_start(void*, void*, void* self) {
    auto* t = static_cast<Transfer*>(self);
    t->resolving_ = !is_ip_literal(t->parsed_.host);
    return 0;
  }
  static curl_socket_t on_open_socket(void* self, curlsocktype, curl_sockaddr* address) {
    auto* t = static_cast<Transfer*>(self);
    t->socket_opened_ = true;
    if (t->doomed_) return CURL_SOCKET_BAD;  // aborted while resolving: stop here
    const curl_socket_t s =
        ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (s != CURL_SOCKET_BAD) t->watcher_.opened(s);
    return s;
  }

 private:
  enum class Phase { head, redirect_body, body };

  bool sends_body() const {
    return state_->request().method == "POST" || !state_->request().body.empty();
  }

  // What every transfer of this client sets alike: once per easy handle (EasyPool keeps
  // it across requests).
  CURLcode configure_handle() {
    CURLcode rc = CURLE_OK;
    auto set = [&](CURLoption option, auto value) {
      if (rc == CURLE_OK) rc = curl_easy_setopt(easy_, option, value);
    };
    set(CURLOPT_NOSIGNAL, 1L);
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    set(CURLOPT_FOLLOWLOCATION, 0L);  // hops are followed here (caps, https→http, final_url)
    set(CURLOPT_PATH_AS_IS, 1L);
    // No CURLOPT_PROXY: libcurl takes the proxy from the environment as curl(1) does
    // (http_proxy, lowercase only; https_proxy/HTTPS_PROXY; all_proxy/ALL_PROXY;
    // no_proxy/NO_PROXY). The request's own headers never go into a CONNECT request
    // (CURLHEADER_SEPARATE), so an https origin's credentials stay inside the tunnel; a
    // proxy's credentials come only from the userinfo of its own URL.
    set(CURLOPT_HEADEROPT, static_cast<long>(CURLHEADER_SEPARATE));
    // The proxy's answer to CONNECT is not the origin's head: never fed to the head reader.
    set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    set(CURLOPT_HEADERFUNCTION, &Transfer::on_header);
    set(CURLOPT_WRITEFUNCTION, &Transfer::on_body);
    set(CURLOPT_RESOLVER_START_FUNCTION, &Transfer::on_resolver_start);
    set(CURLOPT_OPENSOCKETFUNCTION, &Transfer::on_open_socket);
    set(CURLOPT_CLOSESOCKETFUNCTION, &SocketWatcher::on_close_socket);
    set(CURLOPT_CLOSESOCKETDATA, static_cast<void*>(&watcher_));
    set(CURLOPT_CONNECTTIMEOUT_MS,
        static_cast<long>(connect_timeout_ms()) + kCurlConnectBackstopMs);
    set(CURLOPT_TCP_KEEPALIVE, 1L);  // idle SSE streams: notice a peer that vanished
    if (options_.max_idle_connections == 0) {
      set(CURLOPT_FORBID_REUSE, 1L);
    } else {
      const std::int64_t age_ms = std::max<std::int64_t>(options_.idle_connection_timeout_ms, 1);
      set(CURLOPT_MAXAGE_CONN, static_cast<long>((age_ms + 999) / 1000));
    }
    if (!options_.ca_cert_file.empty()) set(CURLOPT_CAINFO, options_.ca_cert_file.c_str());
    if (!options_.ca_cert_dir.empty()) set(CURLOPT_CAPATH, options_.ca_cert_dir.c_str());
    // Only what the options name, not the system store besides.
    if (!options_.ca_cert_file.empty() && options_.ca_cert_dir.empty()) {
      set(CURLOPT_CAPATH, static_cast<const char*>(nullptr));
    }
    if (options_.ca_cert_file.empty() && !options_.ca_cert_dir.empty()) {
      set(CURLOPT_CAINFO, static_cast<const char*>(nullptr));
    }
    set(CURLOPT_SSL_VERIFYPEER, 1L);
    set(CURLOPT_SSL_VERIFYHOST, 2L);
    if (!options_.user_agent.empty()) set(CURLOPT_USERAGENT, options_.user_agent.c_str());
    return rc;
  }

  // This request's part: where the callbacks find it, its method and its body. A kept
  // handle still holds the last request's method and body, so each is set or cleared here
  // (in this order: CURLOPT_POSTFIELDS switches libcurl to POST, CURLOPT_HTTPGET back to a
  // GET without a body).
  CURLcode configure_transfer() {
    CURLcode rc = CURLE_OK;
    auto set = [&](CURLoption option, auto value) {
      if (rc == CURLE_OK) rc = curl_easy_setopt(easy_, option, value);
    };
    const HttpRequest& request = state_->request();
    set(CURLOPT_PRIVATE, static_cast<void*>(this));
    set(CURLOPT_ERRORBUFFER, error_buffer_);
    set(CURLOPT_HEADERDATA, static_cast<void*>(this));
    set(CURLOPT_WRITEDATA, static_cast<void*>(this));
    set(CURLOPT_RESOLVER_START_DATA, static_cast<void*>(this));
    set(CURLOPT_OPENSOCKETDATA, static_cast<void*>(this));

    set(CURLOPT_POSTFIELDS, static_cast<const char*>(nullptr));
    set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(-1));
    set(CURLOPT_CUSTOMREQUEST, static_cast<const char*>(nullptr));
    set(CURLOPT_HTTPGET, 1L);
    if (request.method == "HEAD") {
      set(CURLOPT_NOBODY, 1L);
    } else if (request.method == "POST") {
      set(CURLOPT_POST, 1L);
    } else if (request.method != "GET") {
      set(CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (sends_body()) {
      set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      set(CURLOPT_POSTFIELDS, request.body.data());
    }
    return rc;
  }

  // What changes per hop: the URL, and which request headers may go there.
  CURLcode configure_hop() {
    const HttpRequest& request = state_->request();
    const bool leaves_origin = !same_origin(parsed_, state_->url());
    headers_.clear();
    std::size_t bytes = std::string_view("Expect").size() + std::string_view("Content-Type").size();
    for (const HttpHeader& h : request.headers) bytes += h.name.size() + h.value.size();
    headers_.reserve(request.headers.size() + 2, bytes);
    for (const HttpHeader& h : request.headers) {
      if (leaves_origin && is_origin_bound_header(h.name)) continue;
      headers_.add(h.name, h.value);
    }
    // libcurl's own defaults that the seam does not want: "Expect: 100-continue" on large
    // bodies (a round trip of delay, and servers that ignore it), and a form Content-Type
    // on a body the caller gave no type.
    if (!request.headers.has("Expect")) headers_.suppress("Expect");
    if (sends_body() && !request.headers.has("Content-Type")) headers_.suppress("Content-Type");
    CURLcode rc = curl_easy_setopt(easy_, CURLOPT_URL, curl_url_.c_str());
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers_.list());
    return rc;
  }

  void reset_watchdog() {
    started_at_ = SteadyClock::now();
    request_sent_ = false;
    uploaded_ = -1;
    write_progress_at_ = sent_at_ = last_read_at_ = SteadyClock::time_point{};
    read_since_check_ = false;
  }

  std::int64_t connect_timeout_ms() const {
    return options_.connect_timeout_ms > 0 ? options_.connect_timeout_ms : 30000;
  }

  std::size_t header_line(std::string_view line) {
    if (doomed_ || state_->stop_requested()) return 0;
    read_since_check_ = true;
    switch (reader_.feed_line(line)) {
      case detail::ResponseHeadReader::Event::more:
      case detail::ResponseHeadReader::Event::interim_head:
      case detail::ResponseHeadReader::Event::trailers_end:
        return line.size();
      case detail::ResponseHeadReader::Event::final_head:
        return final_head() ? line.size() : 0;
      case detail::ResponseHeadReader::Event::failed:
        error_ = head_cap_error();
        return 0;  // libcurl stops the transfer here: nothing more is read
    }
    return 0;
  }

  // The final head of this hop: follow it, or hand it to the executor.
  bool final_head() {
    const int status = reader_.status();
    if (follow_ && is_redirect_status(status)) {
      if (const std::string* location = reader_.headers().find("Location")) {
        if (std::optional<std::string> target = resolve_url(url_, *location)) {
          std::optional<Url> next = parse_http_url(*target);
          if (next && parsed_.scheme == "https" && next->scheme == "http") {
            error_ = transport_error("refused to follow a redirect from https to http (" + *target +
                                     "): it would send the request unencrypted");
            return false;
          }
          if (hops_ >= state_->request().max_redirects) {
            error_ = Error::make(
                ErrorCode::transport,
                "HTTP GET " + state_->request().url + ": too many redirects (more than " +
                    std::to_string(state_->request().max_redirects) + "), the last to " + *target,
                json{{"url", state_->request().url}, {"last_url", *target}});
            return false;
          }
          redirect_to_ = std::move(target);
          phase_ = Phase::redirect_body;
          return true;
        }
      }
    }
    phase_ = Phase::body;
    HttpResponseHead head;
    head.status = status;
    head.headers = reader_.take_headers();
    head.final_url = url_;
    return state_->post_head(std::move(head));
  }

  std::size_t body_bytes(const char* data, std::size_t size) {
    if (doomed_) return 0;
    read_since_check_ = true;
    if (phase_ == Phase::redirect_body) {
      redirect_body_bytes_ += size;
      return redirect_body_bytes_ > kMaxRedirectBodyBytes ? 0 : size;
    }
    switch (state_->push_body(data, size)) {
      case RequestState::Push::accepted:
        return size;
      case RequestState::Push::pause:
        return CURL_WRITEFUNC_PAUSE;
      case RequestState::Push::stop:
        return 0;
    }
    return 0;
  }

  Error transport_error(const std::string& what) const {
    const HttpRequest& request = state_->request();
    return Error::make(ErrorCode::transport,
                       "HTTP " + request.method + " " + url_ + " failed: " + what,
                       json{{"url", url_}});
  }

  Error head_cap_error() const {
    const HttpRequest& request = state_->request();
    const bool fields = reader_.failure() == detail::ResponseHeadReader::Failure::too_many_fields;
    const bool bytes = reader_.failure() == detail::ResponseHeadReader::Failure::too_many_bytes;
    std::string what = reader_.error();
    json data = {{"url", url_}};
    if (fields || bytes) {
      const char* option = fields ? "max_response_header_fields" : "max_response_header_bytes";
      what +=
          " (the limit, NativeHttpClientOptions::" + std::string(option) + "); stopped reading it";
      data["limit"] = option;
      data["max"] = fields ? reader_.limits().max_fields : reader_.limits().max_bytes;
    }
    return Error::make(ErrorCode::transport,
                       "HTTP " + request.method + " " + url_ + " failed: " + what, std::move(data));
  }

  // One sentence: "HTTP POST <url> failed: <what happened>", the cause said once. curl's
  // own text is added only where it knows more than the code (TLS, the unexpected); the
  // code, its name and the OS errno stay in the error's data.
  Error curl_failure(CURLcode code) const {
    const bool head_seen = phase_ == Phase::body;
    long os_errno = 0;
    curl_easy_getinfo(easy_, CURLINFO_OS_ERRNO, &os_errno);
    // "connection refused", "network is unreachable", ... (empty when curl has no errno).
    std::string os_reason;
    if (os_errno != 0) {
      os_reason = std::error_code(static_cast<int>(os_errno), std::system_category()).message();
      if (!os_reason.empty()) os_reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(os_reason[0])));
    }
    const std::string curl_said = error_buffer_[0] != '\0' ? std::string(error_buffer_) : curl_easy_strerror(code);
    std::string what;
    // A proxy that answered CONNECT with anything but 2xx (libcurl 7.88 reports it as a
    // receive error or a failed connect; only its text says which).
    const bool tunnel_refused = curl_said.rfind("CONNECT tunnel failed", 0) == 0;
    switch (tunnel_refused ? CURLE_PROXY : code) {
      case CURLE_PROXY:
        what = "the proxy refused to open a tunnel to " + parsed_.host + ":" +
               std::to_string(parsed_.port) + " (" + curl_said + ")";
        break;
      case CURLE_OK:  // finished without a final head: a connection closed mid-head
      case CURLE_GOT_NOTHING:
        what = "the server closed the connection without answering";
        break;
      case CURLE_COULDNT_RESOLVE_HOST:
        what = "could not resolve host \"" + parsed_.host + "\"";
        break;
      case CURLE_COULDNT_RESOLVE_PROXY:
        what = "could not resolve the proxy's host (the proxy comes from the environment: " +
               curl_said + ")";
        break;
      case CURLE_COULDNT_CONNECT:
        what = "could not connect (" + (os_reason.empty() ? std::string("refused or unreachable") : os_reason) + ")";
        break;
      case CURLE_OPERATION_TIMEDOUT:
        what = "connecting timed out";
        break;
      case CURLE_SSL_CONNECT_ERROR:
        what = "the TLS handshake failed (" + curl_said + ")";
        break;
      case CURLE_PEER_FAILED_VERIFICATION:
        what =
            "the server's TLS certificate could not be verified (untrusted, expired, or "
            "issued for another name: " + curl_said + ")";
        break;
      case CURLE_SSL_CACERT_BADFILE:
        what = "the CA certificates could not be loaded (" + curl_said + ")";
        break;
      case CURLE_SEND_ERROR:
        what = "sending the request failed" + (os_reason.empty() ? std::string() : " (" + os_reason + ")");
        break;
      case CURLE_RECV_ERROR:
      case CURLE_PARTIAL_FILE:
        what = head_seen ? "the connection broke before the response body was complete"
                         : "the server closed the connection without answering";
        if (!os_reason.empty()) what += " (" + os_reason + ")";
        break;
      case CURLE_WEIRD_SERVER_REPLY:
      case CURLE_UNSUPPORTED_PROTOCOL:
        what = "the server's answer is not valid HTTP";
        break;
      case CURLE_OUT_OF_MEMORY:
        what = head_seen ? "out of memory"
                         : "a response header line is longer than libcurl accepts (the "
                           "response head is capped at " +
                               std::to_string(reader_.limits().max_bytes) + " bytes)";
        break;
      default:
        what = "the request failed (" + curl_said + ")";
        break;
    }
    const HttpRequest& request = state_->request();
    json data = {{"url", url_}, {"curl_error", curl_easy_strerror(code)}, {"curl_code", static_cast<int>(code)}};
    if (os_errno != 0) data["os_errno"] = os_errno;
    return Error::make(ErrorCode::transport, "HTTP " + request.method + " " + url_ + " failed: " + what,
                       std::move(data));
  }

  Error setup_error(const std::string& why) const {
    return Error::make(ErrorCode::transport,
                       "HTTP " + state_->request().method + " " + state_->request().url +
                           ": could not set up the request (" + why + ")",
                       json{{"url", state_->request().url}});
  }

  const std::shared_ptr<RequestState> state_;
  const NativeHttpClientOptions& options_;
  SocketWatcher& watcher_;
  EasyPool& pool_;
  CURL* easy_ = nullptr;
  CurlHeaderList headers_;  // this hop's request headers, as libcurl reads them
  std::string url_;       // this hop's URL as the core wrote it (final_url)
  Url parsed_;            // ... parsed
  std::string curl_url_;  // ... as handed to libcurl
  const bool follow_;
  int hops_ = 0;
  detail::ResponseHeadReader reader_;
  Phase phase_ = Phase::head;
  std::optional<std::string> redirect_to_;
  std::size_t redirect_body_bytes_ = 0;
  std::optional<Error> error_;  // the transfer's own failure (caps, redirects, stalls)
  bool doomed_ = false;         // aborted while resolving: dropped once the lookup returned
  bool resolving_ = false;
  bool socket_opened_ = false;
  char error_buffer_[CURL_ERROR_SIZE];

  // Watchdog (check_stalls). started_at_ is reset when the transfer is added to the multi.
  SteadyClock::time_point started_at_ = SteadyClock::now();
  bool request_sent_ = false;
  curl_off_t uploaded_ = -1;
  SteadyClock::time_point write_progress_at_{};
  SteadyClock::time_point sent_at_{};
  // When the server last sent something: the check after the turn that read it (every
  // turn ends with one) stamps it, instead of a clock read per header line and chunk.
  SteadyClock::time_point last_read_at_{};
  bool read_since_check_ = false;
};

}  // namespace

// --------------------------------------------------------------------------------------

struct NativeHttpClient::Impl {
  Impl(NativeExecutor& ex, NativeHttpClientOptions opts)
      : executor(ex), options(std::move(opts)), poller(ex.io_context()), timer(ex.io_context()) {
    init_error = init();
  }

  NativeExecutor& executor;
  const NativeHttpClientOptions options;
  CURLM* multi = nullptr;
  std::shared_ptr<Hub> hub;
  std::optional<Error> init_error;  // reported by every send()
  int epoll_fd = -1;
  int wake_fd = -1;  // owned by the hub once it exists
  int wake_fd_in_set = -1;  // its number, for turn() to recognise
  std::unique_ptr<SocketWatcher> watcher;
  EasyPool easy_pool;  // before `transfers`: their handles go back to it as they go
  // The last URL send() parsed, and its parse: a transport sends every request to the same
  // URL, and a parse is a dozen allocations.
  std::string last_url_text;
  std::optional<Url> last_url;
  std::string last_curl_url;  // curl_url_for(*last_url)

  // The loop's watch on the epoll set (one registration for every socket libcurl names)
  // and on the next time something is due. Their handlers check `alive` first: a wait
  // cancelled by the client's destruction still runs its handler, later.
  boost::asio::posix::stream_descriptor poller;
  boost::asio::steady_timer timer;
  std::shared_ptr<int> alive = std::make_shared<int>(0);
  bool polling = false;  // a wait on `poller` is queued
  SteadyClock::time_point timer_due = SteadyClock::time_point::max();  // max: not armed

  std::unordered_map<RequestState*, std::unique_ptr<Transfer>> transfers;
  long cache_bound = -1;  // CURLMOPT_MAXCONNECTS as last set
  // libcurl's timeout (CURLMOPT_TIMERFUNCTION): when to call it with CURL_SOCKET_TIMEOUT.
  std::optional<SteadyClock::time_point> curl_due;

  static int on_timer(CURLM*, long timeout_ms, void* self) {
    auto* impl = static_cast<Impl*>(self);
    if (timeout_ms < 0) {
      impl->curl_due.reset();
    } else {
      impl->curl_due = SteadyClock::now() + std::chrono::milliseconds(timeout_ms);
    }
    return 0;
  }

  std::optional<Error> init() {
    if (!curl_ready()) {
      return Error::make(ErrorCode::transport, "libcurl could not be initialised");
    }
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epoll_fd < 0 || wake_fd < 0) {
      return Error::make(ErrorCode::transport,
                         "could not set up the HTTP client's poller: " +
                             std::error_code(errno, std::system_category()).message());
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) {
      return Error::make(ErrorCode::transport, "could not set up the HTTP client's poller");
    }
    // asio gets its own descriptor for the set (it closes what it holds).
    const int watched = ::fcntl(epoll_fd, F_DUPFD_CLOEXEC, 0);
    boost::system::error_code ec;
    if (watched >= 0) poller.assign(watched, ec);
    if (watched < 0 || ec) {
      if (watched >= 0 && ec) ::close(watched);
      return Error::make(ErrorCode::transport, "could not set up the HTTP client's poller");
    }
    watcher = std::make_unique<SocketWatcher>(epoll_fd);
    multi = curl_multi_init();
    if (multi == nullptr) return Error::make(ErrorCode::transport, "curl_multi_init failed");
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &SocketWatcher::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, static_cast<void*>(watcher.get()));
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, static_cast<void*>(this));
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_NOTHING));
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      static_cast<long>(options.max_connections));
    update_cache_bound();
    wake_fd_in_set = wake_fd;
    hub = std::make_shared<Hub>(std::exchange(wake_fd, -1));
    return std::nullopt;
  }

  void shut_down() {
    alive.reset();
    if (hub) {
      hub->stop();
      bool stopping = true;
      for (Command& command : hub->take(stopping)) run_command(command, true);
    }
    // Every transfer stops here; requests nobody aborted hear why. A removal during a DNS
    // lookup waits for it (no resolver thread outlives the client).
    if (multi != nullptr) {
      for (auto& [key, transfer] : transfers) {
        curl_multi_remove_handle(multi, transfer->easy());
        if (!transfer->state().stop_requested()) {
          transfer->state().post_complete(transfer->state().shut_down_error());
        }
      }
    }
    if (hub) hub->in_flight -= transfers.size();
    transfers.clear();
    boost::system::error_code ignored;
    timer.cancel();
    poller.close(ignored);
    // Cleaning up the multi closes the cached connections (through the watcher).
    if (multi != nullptr) curl_multi_cleanup(multi);
    multi = nullptr;
    if (hub) {
      if (const int fd = hub->detach_wake_fd(); fd >= 0) ::close(fd);
    }
    if (wake_fd >= 0) ::close(std::exchange(wake_fd, -1));
    if (epoll_fd >= 0) ::close(std::exchange(epoll_fd, -1));
    // The shutdown's own answers (and anything a turn left) reach their callers later.
    if (hub) Hub::post_delivery(hub, executor);
  }

  // --- one turn, on the loop thread ----------------------------------------------------

  // Everything libcurl needs now: the queued commands (aborts and resumes from handles),
  // the sockets that moved, the due timeouts and the finished transfers; then the waits
  // for what comes next. Runs when the epoll set stirs and when the timer fires.
  void turn() {
    if (!hub) return;
    bool stopping = false;
    for (Command& command : hub->take(stopping)) run_command(command, stopping);
    if (stopping) {
      Hub::post_delivery(hub, executor);
      return;
    }
    // One look at the set per turn. asio's watch on the set is edge-triggered, and queuing
    // the wait again (settle) re-checks the set (asio 1.74 re-arms the descriptor with
    // EPOLL_CTL_MOD, and the kernel reports a set that is still readable at once). So what
    // this turn leaves ready (more than kMaxEvents sockets, a socket libcurl did not read to
    // the end) starts the next turn, after the loop's other work, and an event after the
    // look below is not missed.
    constexpr int kMaxEvents = 32;
    epoll_event events[kMaxEvents];
    const int n = ::epoll_wait(epoll_fd, events, kMaxEvents, 0);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_in_set) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(fd, &count, sizeof count);
        for (Command& command : hub->take(stopping)) run_command(command, stopping);
        continue;
      }
      if (const int bits = watcher->ready(fd, events[i].events); bits != 0) {
        int running = 0;
        curl_multi_socket_action(multi, fd, bits, &running);
      }
    }
    collect_finished();
    settle();
    // What the turn read reaches the callers now, at the end of the loop's handler: not
    // inside libcurl, and without a posted closure (and the loop's extra wake-up) per
    // response. Last: a callback may destroy the client.
    hub->deliver();
  }

  // After a turn, or a request started in send(): the upkeep, and the waits for what
  // comes next (the set's watch stays queued when no turn ran since it was armed; queuing
  // it re-checks the set, see turn()).
  void settle() {
    arm_poller();
    SteadyClock::time_point now;
    arm_timer(upkeep(now));
  }

  void arm_poller() {
    if (polling) return;
    polling = true;
    poller.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                      [this, life = std::weak_ptr<int>(alive)](const boost::system::error_code& ec) {
                        if (life.expired()) return;
                        polling = false;
                        // Only a closed set fails a wait (the client's destruction): no retry,
                        // which would spin.
                        if (ec) return;
                        turn();
                      });
  }

  // The timer stays armed for the earliest time anything was due: a later due time needs
  // no re-arming (the turn it triggers early computes the next one), and every libcurl
  // timer update would otherwise be a timer syscall.
  void arm_timer(SteadyClock::time_point due) {
    if (due == SteadyClock::time_point::max() || due >= timer_due) return;
    timer_due = due;
    timer.expires_at(due);
    timer.async_wait([this, life = std::weak_ptr<int>(alive)](const boost::system::error_code& ec) {
      if (life.expired() || ec == boost::asio::error::operation_aborted) return;
      timer_due = SteadyClock::time_point::max();
      turn();
    });
  }

  // What a turn does after its sockets: the cache bound, libcurl's due timeouts, finished
  // and doomed transfers, stalled ones. Sets `now`; returns when the next check is due
  // (time_point::max(): nothing is).
  SteadyClock::time_point upkeep(SteadyClock::time_point& now) {
    update_cache_bound();
    run_curl_timeouts();
    collect_finished();
    reap_doomed();
    now = SteadyClock::now();
    SteadyClock::time_point next_check = SteadyClock::time_point::max();
    check_stalls(now, next_check);
    if (curl_due) next_check = std::min(next_check, *curl_due);
    return next_check;
  }

  // libcurl's own timeouts that are due (the first step of a transfer just added is one).
  void run_curl_timeouts() {
    for (int round = 0; round < 8 && curl_due && *curl_due <= SteadyClock::now(); ++round) {
      curl_due.reset();
      int running = 0;
      curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
  }

  // libcurl's CURLMOPT_MAXCONNECTS bounds its whole connection cache, busy connections
  // included: when a transfer finishes and the cache holds more, the oldest idle one
  // other than the one just freed is closed. A fixed bound of max_idle_connections would
  // close every POST's connection while that many SSE streams are open; so the bound
  // follows the transfers: the other transfers' connections plus max_idle_connections.
  void update_cache_bound() {
    if (options.max_idle_connections == 0) return;  // CURLOPT_FORBID_REUSE instead
    const long bound = static_cast<long>((transfers.empty() ? 0 : transfers.size() - 1) +
                                         options.max_idle_connections);
    if (bound == cache_bound) return;
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, bound);
    cache_bound = bound;
  }

  void run_command(Command& command, bool stopping) {
    switch (command.kind) {
      case Command::Kind::start: {
        RequestState& state = *command.state;
        if (state.stop_requested()) {
          --hub->in_flight;  // aborted or timed out before it started
          return;
        }
        if (stopping) {
          state.post_complete(state.shut_down_error());
          --hub->in_flight;
          return;
        }
        Transfer* transfer = command.transfer.get();
        transfer->started();
        transfers.emplace(&state, std::move(command.transfer));
        const CURLMcode rc = curl_multi_add_handle(multi, transfer->easy());
        if (rc != CURLM_OK) {
          state.post_complete(
              Error::make(ErrorCode::transport,
                          "HTTP " + state.request().method + " " + state.request().url +
                              ": could not start the transfer (" + curl_multi_strerror(rc) + ")",
                          json{{"url", state.request().url}}));
          drop(transfer, false);
        }
        return;
      }
      case Command::Kind::cancel: {
        auto it = transfers.find(command.state.get());
        if (it == transfers.end()) return;  // finished already, or not started yet
        Transfer* transfer = it->second.get();
        if (transfer->resolving()) {
          transfer->doom();  // removed once its lookup returned (reap_doomed)
          return;
        }
        drop(transfer, true);
        return;
      }
      case Command::Kind::resume: {
        auto it = transfers.find(command.state.get());
        if (it != transfers.end()) curl_easy_pause(it->second->easy(), CURLPAUSE_CONT);
        return;
      }
    }
  }

  // Removes a transfer from the multi (when it is in it) and destroys it.
  void drop(Transfer* transfer, bool in_multi) {
    if (in_multi) curl_multi_remove_handle(multi, transfer->easy());
    transfers.erase(&transfer->state());
    --hub->in_flight;
  }

  void collect_finished() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      void* priv = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
      auto* transfer = static_cast<Transfer*>(priv);
      const CURLcode code = msg->data.result;  // msg is invalid after the removal
      finish(transfer, code);
    }
  }

  // A transfer ended (libcurl finished it, or the watchdog stopped it): the next redirect
  // hop, or the completion.
  void finish(Transfer* transfer, CURLcode code) {
    curl_multi_remove_handle(multi, transfer->easy());
    RequestState& state = transfer->state();
    if (transfer->doomed() || state.stop_requested()) {
      drop(transfer, false);
      return;
    }
    if (transfer->has_next_hop()) {
      if (transfer->start_next_hop() &&
          curl_multi_add_handle(multi, transfer->easy()) == CURLM_OK) {
        return;
      }
    }
    state.post_complete(transfer->outcome(code));
    drop(transfer, false);
  }

  void reap_doomed() {
    std::vector<Transfer*> done;
    for (auto& [key, transfer] : transfers) {
      if (transfer->doomed() && !transfer->resolving()) done.push_back(transfer.get());
    }
    for (Transfer* t : done) drop(t, true);
  }

  void check_stalls(SteadyClock::time_point now, SteadyClock::time_point& next_check) {
    std::vector<Transfer*> stalled;
    for (auto& [key, transfer] : transfers) {
      if (!transfer->check_stalls(now, next_check)) stalled.push_back(transfer.get());
    }
    for (Transfer* t : stalled) {
      if (t->resolving()) {
        // Connect timeout during the lookup: report now, drop once the lookup returned.
        t->state().post_complete(t->outcome(CURLE_OK));
        t->doom();
      } else {
        finish(t, CURLE_OK);  // outcome() reports the watchdog's error
      }
    }
  }
};

NativeHttpClient::NativeHttpClient(NativeExecutor& executor, NativeHttpClientOptions options)
    : impl_(std::make_unique<Impl>(executor, std::move(options))) {}

NativeHttpClient::~NativeHttpClient() { impl_->shut_down(); }

Result<std::unique_ptr<HttpRequestHandle>> NativeHttpClient::send(HttpRequest request,
                                                                  HttpCallbacks callbacks) {
  std::optional<Url> url;
  if (impl_->last_url && request.url == impl_->last_url_text) {
    url = impl_->last_url;
  } else {
    url = parse_http_url(request.url);
    if (url) {
      impl_->last_url_text = request.url;
      impl_->last_url = url;
      impl_->last_curl_url = curl_url_for(*url);
    }
  }
  if (!url) {
    return Error::make(ErrorCode::invalid_argument,
                       "not an absolute http:// or https:// URL: \"" + request.url + "\"",
                       json{{"url", request.url}});
  }
  if (!detail::is_http_token(request.method)) {
    return Error::make(ErrorCode::invalid_argument,
                       "invalid HTTP method \"" + request.method + "\" for " + request.url);
  }
  for (const HttpHeader& h : request.headers) {
    if (!detail::is_http_token(h.name) || !detail::is_safe_header_text(h.value)) {
      return Error::make(ErrorCode::invalid_argument,
                         "invalid HTTP header \"" + h.name + "\" for " + request.url +
                             " (a name must be a token; CR, LF and NUL are not allowed)");
    }
  }

  if (impl_->init_error) return *impl_->init_error;

  const std::int64_t timeout_ms = request.timeout_ms;
  auto state = std::make_shared<RequestState>(impl_->executor, std::move(request), std::move(*url),
                                              std::move(callbacks), impl_->hub);
  auto transfer =
      std::make_unique<Transfer>(state, impl_->last_curl_url, impl_->options, *impl_->watcher,
                                 impl_->easy_pool);
  if (std::optional<Error> e = transfer->init()) return std::move(*e);

  // Started here: the request goes out now (or its failure is queued), then the waits for
  // its answer.
  ++impl_->hub->in_flight;
  Command start{Command::Kind::start, state, std::move(transfer)};
  impl_->run_command(start, false);
  impl_->settle();
  // Anything already known (a failure to start) is delivered later, never inside send().
  Hub::post_delivery(impl_->hub, impl_->executor);

  if (timeout_ms > 0) {
    std::weak_ptr<RequestState> weak = state;
    state->set_deadline(impl_->executor.post_after(Millis(timeout_ms), [weak] {
      if (auto s = weak.lock()) s->on_deadline();
    }));
  }
  return std::unique_ptr<HttpRequestHandle>(new NativeRequestHandle(std::move(state)));
}

std::size_t NativeHttpClient::in_flight() const {
  return impl_->hub ? impl_->hub->in_flight.load() : 0;
}


}  // namespace mcprt::native
