// LoopbackAuthorizer (see mcprt/native/authorizer.hpp): an asio listener on a thread of
// its own per flow, and the browser started detached with fork/execve.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "mcprt/native/authorizer.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/url.hpp"

extern char** environ;

namespace mcprt::native {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// A request head larger than this is not a browser returning from a sign-in.
constexpr std::size_t kMaxRequestHead = 8192;
// Browsers open a few speculative connections; more than this at once is not a browser.
constexpr std::size_t kMaxConnections = 16;
constexpr char kCallbackPath[] = "/callback";

std::string page(const std::string& text) {
  return "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcprt sign-in</title></head>"
         "<body style=\"font-family:sans-serif;margin:3em\"><p>" +
         text + "</p></body></html>\n";
}

std::string describe_millis(Millis ms) {
  if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
  return std::to_string(ms.count()) + " ms";
}

// The first value of `name` in a query string (without the '?'), decoded.
std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (form_decode(pair.substr(0, eq)) == name) {
      return eq == std::string_view::npos ? std::string() : form_decode(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// ---- the browser ----

std::optional<std::string> lookup(const EnvLookup& env, const char* name) {
  if (env) return env(name);
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

bool is_executable_program(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Resolves the program as execvp would, before fork (execvp itself is not safe to call in
// the child of a multi-threaded process).
std::optional<std::string> find_program(const std::string& name,
                                        const std::optional<std::string>& path_env) {
  if (name.find('/') != std::string::npos) {
    if (is_executable_program(name)) return name;
    return std::nullopt;
  }
  const std::string path =
      path_env && !path_env->empty() ? *path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + name;
      if (is_executable_program(candidate)) return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

// Starts `program` detached: a double fork, so the browser is never this process's child
// (nothing to reap, even when it runs for hours), in a session of its own with stdio on
// /dev/null. Returns 0 once execve succeeded, else the errno that stopped it.
int spawn_detached(const std::string& program, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) return errno;
  const pid_t middle = ::fork();
  if (middle < 0) {
    const int err = errno;
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    return err;
  }
  if (middle == 0) {
    // Only async-signal-safe calls from here on.
    const pid_t browser = ::fork();
    if (browser == 0) {
      // Nothing of this process may stay open in the browser (a long-lived browser would
      // keep a callback listener's port bound, or a server's pipe open), except the status
      // pipe, which closes on execve.
      const unsigned keep = static_cast<unsigned>(status_pipe[1]);
      if ((keep > 3 && ::close_range(3, keep - 1, 0) != 0) ||
          ::close_range(keep + 1, ~0U, 0) != 0) {
        const long max_fd = ::sysconf(_SC_OPEN_MAX);
        for (long fd = 3; fd < (max_fd > 0 ? max_fd : 1024); ++fd) {
          if (fd != status_pipe[1]) ::close(static_cast<int>(fd));
        }
      }
      ::setsid();
      const int null_fd = ::open("/dev/null", O_RDWR);
      if (null_fd >= 0) {
        ::dup2(null_fd, 0);
        ::dup2(null_fd, 1);
        ::dup2(null_fd, 2);
      }
      ::signal(SIGPIPE, SIG_DFL);
      sigset_t none;
      ::sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execve(program.c_str(), argv.data(), environ);
      const int err = errno;
      [[maybe_unused]] ssize_t n = ::write(status_pipe[1], &err, sizeof err);
      ::_exit(127);
    }
    if (browser < 0) {
      const int err = errno;
      [[maybe_unused]] ssize_t n = ::write(status_pipe[1], &err, sizeof err);
    }
    ::_exit(0);
  }
  ::close(status_pipe[1]);
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  // EOF = the browser's execve closed the pipe (O_CLOEXEC); an int = why it failed.
  int err = 0;
  ssize_t n;
  do {
    n = ::read(status_pipe[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  return n == static_cast<ssize_t>(sizeof err) ? err : 0;
}

struct BrowserLaunch {
  bool started = false;
  std::string command;
  std::string error;
};

BrowserLaunch launch_browser(const std::string& url, const LoopbackAuthorizerOptions& options) {
  BrowserLaunch out;
  std::vector<std::vector<std::string>> commands;
  const auto browser = lookup(options.env, "BROWSER");
  if (browser && !browser->empty()) {
    commands = browser_commands(*browser, url);
    if (commands.empty()) {
      out.error = "$BROWSER names no command";
      return out;
    }
  } else if (options.fallback_browser.empty()) {
    out.error = "$BROWSER is not set";
    return out;
  } else {
    const auto display = lookup(options.env, "DISPLAY");
    const auto wayland = lookup(options.env, "WAYLAND_DISPLAY");
    if ((!display || display->empty()) && (!wayland || wayland->empty())) {
      out.error = "no $BROWSER and no display ($DISPLAY, $WAYLAND_DISPLAY)";
      return out;
    }
    commands.push_back({options.fallback_browser, url});
  }
  const auto path_env = lookup(options.env, "PATH");
  for (const auto& argv : commands) {
    out.command = argv[0];
    const auto program = find_program(argv[0], path_env);
    if (!program) {
      out.error = argv[0] + ": not found";
      continue;
    }
    const int err = spawn_detached(*program, argv);
    if (err == 0) {
      out.started = true;
      out.error.clear();
      return out;
    }
    out.error = argv[0] + ": " + std::strerror(err);
  }
  return out;
}

void print_prompt(const AuthorizePrompt& p) {
  std::fprintf(stderr, "Sign in to %s: %s\n  %s\n", p.server_name.c_str(),
               p.browser_started ? "a browser was opened; if it did not show the page, open"
                                 : "open this URL in a browser",
               p.authorization_url.c_str());
}

// ---- the listener ----

class LoopbackFlow;

// Shared by a flow (executor thread) and its listener thread.
struct FlowState {
  // Executor thread only. `flow` is valid while `alive`.
  bool alive = true;
  LoopbackFlow* flow = nullptr;
  // Both threads, under `mutex`.
  std::mutex mutex;
  bool armed = false;  // authorize() was called
  std::optional<std::string> expected_state;
  bool answered = false;  // a callback was accepted
};

struct Reply {
  int status = 404;
  std::string body;
  std::optional<std::string> redirect;  // set when this request completes the flow
};

// The listener of one flow: accepts on 127.0.0.1 and answers on its own thread.
class Listener {
 public:
  Listener(Executor& executor, std::shared_ptr<FlowState> state, Millis request_timeout)
      : executor_(executor), state_(std::move(state)), request_timeout_(request_timeout) {}

  ~Listener() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds and listens; the port on success.
  Result<int> listen(int port, const std::string& server_name) {
    boost::system::error_code ec;
    const tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"),
                                 static_cast<unsigned short>(port));
    acceptor_.open(endpoint.protocol(), ec);
    // Not inherited by processes started meanwhile (an MCP server), which would keep the
    // port open after the flow ended.
    if (!ec) ::fcntl(acceptor_.native_handle(), F_SETFD, FD_CLOEXEC);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      const std::string where =
          port == 0 ? "127.0.0.1 (any port)" : "127.0.0.1:" + std::to_string(port);
      std::string advice = port == 0 ? ""
                           : ec == asio::error::address_in_use
                               ? " (the port is taken: set oauth.callbackPort to a free port, or "
                                 "remove it to use any free port)"
                               : "";
      return Error::make(ErrorCode::transport, "Cannot listen for the OAuth callback of server '" +
                                                   server_name + "' on " + where + ": " +
                                                   ec.message() + advice);
    }
    port_ = acceptor_.local_endpoint().port();
    host_ = "127.0.0.1:" + std::to_string(port_);
    accept();
    thread_ = std::thread([this] { io_.run(); });
    return port_;
  }

 private:
  struct Connection {
    Connection(tcp::socket s, asio::io_context& io) : socket(std::move(s)), timer(io) {}
    tcp::socket socket;
    asio::steady_timer timer;
    std::string head;
    std::array<char, 2048> buf{};
    std::string response;
  };
  using ConnectionPtr = std::shared_ptr<Connection>;

  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) return;  // closed (flow ended) or a hard error: no more connections
      if (connections_.size() >= kMaxConnections) {
        socket.close(ec);
      } else {
        ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
        auto c = std::make_shared<Connection>(std::move(socket), io_);
        connections_.insert(c);
        c->timer.expires_after(request_timeout_);
        c->timer.async_wait([this, c](boost::system::error_code tec) {
          if (!tec) close(c);
        });
        read(c);
      }
      accept();
    });
  }

  void read(const ConnectionPtr& c) {
    c->socket.async_read_some(asio::buffer(c->buf),
                              [this, c](boost::system::error_code ec, std::size_t n) {
                                if (ec) return close(c);
                                c->head.append(c->buf.data(), n);
                                const std::size_t end = c->head.find("\r\n\r\n");
                                if (end != std::string::npos) {
                                  c->head.resize(end);
                                  return respond(c, handle(c->head));
                                }
                                if (c->head.size() > kMaxRequestHead)
                                  return respond(c, Reply{431, page("Request too large."), {}});
                                read(c);
                              });
  }

  Reply handle(const std::string& head) {
    const std::size_t line_end = head.find("\r\n");
    const std::string_view line = std::string_view(head).substr(0, line_end);
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos) return Reply{400, page("Bad request."), {}};
    const std::string_view method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    for (char ch : target) {
      if (static_cast<unsigned char>(ch) <= 0x20 || static_cast<unsigned char>(ch) >= 0x7F) {
        return Reply{400, page("Bad request."), {}};
      }
    }
    const std::string_view path = target.substr(0, target.find('?'));
    if (method != "GET" || path != kCallbackPath) return Reply{404, page("Not found."), {}};

    // The Host must be this listener as the redirect URI names it: a page on another name
    // that resolves to 127.0.0.1 (DNS rebinding) cannot complete the flow.
    std::optional<std::string_view> host;
    std::size_t pos = line_end;
    while (pos != std::string::npos && pos < head.size()) {
      const std::size_t next = head.find("\r\n", pos + 2);
      const std::string_view header =
          std::string_view(head).substr(pos + 2, next == std::string::npos ? next : next - pos - 2);
      const std::size_t colon = header.find(':');
      if (colon != std::string_view::npos && iequals(trim(header.substr(0, colon)), "host")) {
        if (host) return Reply{400, page("Bad request."), {}};
        host = trim(header.substr(colon + 1));
      }
      pos = next;
    }
    if (!host || *host != host_) {
      return Reply{400, page("This address is not the one mcprt is waiting on."), {}};
    }

    const std::size_t q = target.find('?');
    const std::string_view query =
        q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->answered) return Reply{400, page("This sign-in is already complete."), {}};
    if (!state_->armed) return Reply{400, page("No sign-in is waiting for this response."), {}};
    if (state_->expected_state && query_param(query, "state") != state_->expected_state) {
      return Reply{
          400, page("This response does not belong to the sign-in mcprt is waiting for."), {}};
    }
    state_->answered = true;
    return Reply{200, page("mcprt received the sign-in response. You can close this tab."),
                 "http://" + host_ + std::string(target)};
  }

  void respond(const ConnectionPtr& c, Reply reply) {
    const char* reason = reply.status == 200   ? "OK"
                         : reply.status == 404 ? "Not Found"
                         : reply.status == 431 ? "Request Header Fields Too Large"
                                               : "Bad Request";
    c->response = "HTTP/1.1 " + std::to_string(reply.status) + " " + reason +
                  "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " +
                  std::to_string(reply.body.size()) +
                  "\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
                  "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n"
                  "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n" +
                  reply.body;
    if (reply.redirect) {
      // No more connections: this flow has its answer.
      boost::system::error_code ignored;
      acceptor_.close(ignored);
    }
    asio::async_write(
        c->socket, asio::buffer(c->response),
        [this, c, redirect = std::move(reply.redirect)](boost::system::error_code, std::size_t) {
          close(c);
          // Handed over once the browser has its page (or is gone), so the
          // flow may close this listener at once.
          if (redirect) deliver(*redirect);
        });
  }

  void deliver(const std::string& redirect);

  void close(const ConnectionPtr& c) {
    boost::system::error_code ignored;
    c->timer.cancel();
    c->socket.shutdown(tcp::socket::shutdown_both, ignored);
    c->socket.close(ignored);
    connections_.erase(c);
  }

  Executor& executor_;
  std::shared_ptr<FlowState> state_;
  Millis request_timeout_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::set<ConnectionPtr> connections_;
  int port_ = 0;
  std::string host_;
  std::thread thread_;
};

class LoopbackFlow final : public AuthorizeFlow {
 public:
  LoopbackFlow(Executor& executor, std::shared_ptr<const LoopbackAuthorizerOptions> options,
               AuthorizeFlowOptions flow_options, std::shared_ptr<FlowState> state)
      : executor_(executor),
        options_(std::move(options)),
        flow_options_(std::move(flow_options)),
        state_(std::move(state)) {
    state_->flow = this;
  }

  ~LoopbackFlow() override {
    state_->alive = false;
    timeout_.reset();
    listener_.reset();
  }

  Status start(int port) {
    listener_ = std::make_unique<Listener>(executor_, state_, options_->request_timeout);
    auto bound = listener_->listen(port, flow_options_.server_name);
    if (!bound) return std::move(bound).error();
    redirect_uri_ = "http://127.0.0.1:" + std::to_string(*bound) + kCallbackPath;
    return {};
  }

  const std::string& redirect_uri() const override { return redirect_uri_; }

  void authorize(std::string authorization_url,
                 std::function<void(Result<std::string>)> done) override {
    if (called_) {
      fail_later(std::move(done),
                 Error::make(ErrorCode::invalid_argument,
                             "Sign-in to '" + flow_options_.server_name +
                                 "': authorize() was already called for this flow"));
      return;
    }
    called_ = true;
    auto url = parse_http_url_checked(authorization_url);
    if (!url) {
      fail_later(std::move(done),
                 Error::make(
                     ErrorCode::invalid_argument,
                     "Sign-in to '" + flow_options_.server_name +
                         "': the authorization URL is not an http(s) URL: " + url.error().message));
      return;
    }
    const std::string shown = url->to_string();
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->armed = true;
      state_->expected_state = query_param(url->query, "state");
    }
    done_ = std::move(done);
    timeout_ = ScopedTimer(
        executor_, executor_.post_after(std::max(flow_options_.timeout, Millis(0)), [this] {
          timeout_.release();
          finish(Error::make(ErrorCode::timeout, "Sign-in to '" + flow_options_.server_name +
                                                     "' timed out: no response reached " +
                                                     redirect_uri_ + " within " +
                                                     describe_millis(flow_options_.timeout)));
        }));

    AuthorizePrompt prompt;
    prompt.server_name = flow_options_.server_name;
    prompt.authorization_url = shown;
    prompt.redirect_uri = redirect_uri_;
    if (options_->open_browser) {
      BrowserLaunch launch = launch_browser(shown, *options_);
      prompt.browser_started = launch.started;
      prompt.browser_command = std::move(launch.command);
      prompt.browser_error = std::move(launch.error);
    } else {
      prompt.browser_error = "opening a browser is turned off";
    }
    // Inside the call, so the URL is shown before any redirect can complete the flow.
    if (options_->on_prompt) {
      options_->on_prompt(prompt);
    } else {
      print_prompt(prompt);
    }
  }

  // Executor thread: the listener accepted the callback.
  void on_redirect(std::string redirect) { finish(std::move(redirect)); }

 private:
  void finish(Result<std::string> result) {
    if (!done_) return;
    timeout_.reset();
    listener_.reset();  // closes the port now, joining the listener thread
    auto done = std::move(done_);
    done_ = nullptr;
    done(std::move(result));
  }

  void fail_later(std::function<void(Result<std::string>)> done, Error error) {
    executor_.post([state = state_, done = std::move(done), error = std::move(error)]() mutable {
      if (state->alive && done) done(std::move(error));
    });
  }

  Executor& executor_;
  std::shared_ptr<const LoopbackAuthorizerOptions> options_;
  AuthorizeFlowOptions flow_options_;
  std::shared_ptr<FlowState> state_;
  std::unique_ptr<Listener> listener_;
  std::string redirect_uri_;
  bool called_ = false;
  std::function<void(Result<std::string>)> done_;
  ScopedTimer timeout_;
};

void Listener::deliver(const std::string& redirect) {
  executor_.post([state = state_, redirect] {
    if (state->alive) state->flow->on_redirect(redirect);
  });
}

}  // namespace

std::vector<std::vector<std::string>> browser_commands(std::string_view browser_env,
                                                       const std::string& url) {
  std::vector<std::vector<std::string>> out;
  std::size_t start = 0;
  while (start <= browser_env.size()) {
    std::size_t end = browser_env.find(':', start);
    if (end == std::string_view::npos) end = browser_env.size();
    const std::string_view part = browser_env.substr(start, end - start);
    start = end + 1;

    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    bool broken = false;
    for (std::size_t i = 0; i < part.size() && !broken; ++i) {
      const char c = part[i];
      if (c == ' ' || c == '\t' || c == '\n') {
        if (in_word) words.push_back(std::move(word));
        word.clear();
        in_word = false;
      } else if (c == '\'') {
        const std::size_t close = part.find('\'', i + 1);
        if (close == std::string_view::npos) {
          broken = true;
        } else {
          word.append(part.substr(i + 1, close - i - 1));
          in_word = true;
          i = close;
        }
      } else if (c == '"') {
        in_word = true;
        std::size_t j = i + 1;
        for (; j < part.size() && part[j] != '"'; ++j) {
          if (part[j] == '\\' && j + 1 < part.size() &&
              (part[j + 1] == '"' || part[j + 1] == '\\' || part[j + 1] == '$' ||
               part[j + 1] == '`')) {
            ++j;
          }
          word += part[j];
        }
        if (j >= part.size()) broken = true;
        i = j;
      } else if (c == '\\') {
        if (i + 1 < part.size()) word += part[++i];
        in_word = true;
      } else {
        word += c;
        in_word = true;
      }
    }
    if (broken) continue;
    if (in_word) words.push_back(std::move(word));
    if (words.empty()) continue;
    bool substituted = false;
    for (auto& w : words) {
      for (std::size_t p = w.find("%s"); p != std::string::npos; p = w.find("%s", p + url.size())) {
        w.replace(p, 2, url);
        substituted = true;
      }
    }
    if (!substituted) words.push_back(url);
    out.push_back(std::move(words));
  }
  return out;
}

LoopbackAuthorizer::LoopbackAuthorizer(Executor& executor, LoopbackAuthorizerOptions options)
    : executor_(executor),
      options_(std::make_shared<const LoopbackAuthorizerOptions>(std::move(options))) {}

Result<std::unique_ptr<AuthorizeFlow>> LoopbackAuthorizer::begin(
    const AuthorizeFlowOptions& options) {
  if (options.callback_port < 0 || options.callback_port > 65535) {
    return Error::make(ErrorCode::invalid_argument,
                       "Sign-in to '" + options.server_name + "': callback port " +
                           std::to_string(options.callback_port) + " is not in 0..65535");
  }
  auto flow =
      std::make_unique<LoopbackFlow>(executor_, options_, options, std::make_shared<FlowState>());
  if (Status s = flow->start(options.callback_port); !s) return std::move(s).error();
  return std::unique_ptr<AuthorizeFlow>(std::move(flow));
}

int start_detached(const std::vector<std::string>& argv) {
  if (argv.empty()) return EINVAL;
  const auto program = find_program(argv[0], lookup(EnvLookup{}, "PATH"));
  if (!program) return ENOENT;
  return spawn_detached(*program, argv);
}

}  // namespace mcprt::native
