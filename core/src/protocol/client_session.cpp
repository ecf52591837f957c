// ClientSession: the MCP client rules (SPEC §3.1, §3.4) on top of RpcPeer. The peer does
// correlation, deadlines and cancellation; this file does the handshake, version
// negotiation, pagination, answers to server requests and the error naming.

#include <algorithm>
#include <set>
#include <utility>

#include "jsonrpc/message.hpp"
#include "mcprt/client.hpp"
#include "protocol/file_uri.hpp"

namespace mcprt {
namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

LogLevel log_level_of(const std::string& mcp_level) {
  if (mcp_level == "debug") return LogLevel::debug;
  if (mcp_level == "info" || mcp_level == "notice") return LogLevel::info;
  if (mcp_level == "warning") return LogLevel::warn;
  return LogLevel::error;  // error, critical, alert, emergency, or unknown
}

}  // namespace

bool is_modern_protocol_version(const std::string& version) {
  const auto& v = modern_protocol_versions();
  return std::find(v.begin(), v.end(), version) != v.end();
}

struct ClientSession::Impl : std::enable_shared_from_this<Impl> {
  Impl(Executor& ex, std::unique_ptr<Transport> transport, ClientOptions opts)
      : executor(ex),
        options(std::move(opts)),
        logger(options.logger ? options.logger : &null_logger),
        peer(std::make_unique<RpcPeer>(ex, std::move(transport), options.logger)) {}

  Executor& executor;
  ClientOptions options;
  NullLogger null_logger;
  Logger* logger;
  std::unique_ptr<RpcPeer> peer;  // reset when the session handle is destroyed
  State state = State::idle;
  ServerInfo server;
  bool destroyed = false;
  bool close_reported = false;
  std::function<void(Status)> connect_done;  // held while the handshake runs
  ScopedTimer connect_timer;

  // --- naming and posting ------------------------------------------------------------

  std::string prefix() const {
    return options.server_name.empty() ? std::string() : "Server \"" + options.server_name + "\": ";
  }

  Error named(Error e) const {
    const std::string p = prefix();
    if (!p.empty() && e.message.compare(0, p.size(), p) != 0) e.message = p + e.message;
    return e;
  }

  Error make_error(ErrorCode code, std::string message) const {
    return named(Error::make(code, std::move(message)));
  }

  // Runs `fn(value)` later on the executor, unless the session is gone by then.
  template <class Fn, class V>
  void post_to(Fn fn, V value) {
    if (!fn) return;
    executor.post(
        [weak = weak_from_this(), fn = std::move(fn), value = std::move(value)]() mutable {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          fn(std::move(value));
        });
  }

  // Wraps a peer completion: runs `fn` only while the session is alive.
  template <class Fn>
  ResponseCallback guarded(Fn fn) {
    return [weak = weak_from_this(), fn = std::move(fn)](Result<json> r) mutable {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      fn(*self, std::move(r));
    };
  }

  Error not_ready(const std::string& what) const {
    const char* why = state == State::closed ? "the connection is closed"
                      : state == State::idle ? "connect() has not been called"
                                             : "the handshake has not finished";
    return make_error(ErrorCode::not_connected, "cannot send " + what + ": " + why);
  }

  // --- handshake ---------------------------------------------------------------------

  void connect(std::function<void(Status)> done) {
    if (state != State::idle) {
      post_to(std::move(done),
              Status(make_error(ErrorCode::invalid_argument, "connect() may only be called once")));
      return;
    }
    state = State::connecting;
    connect_done = std::move(done);
    peer->start(make_peer_handlers());

    if (options.connect_timeout > Millis(0)) {
      connect_timer = ScopedTimer(
          executor, executor.post_after(options.connect_timeout, [weak = weak_from_this()] {
            auto self = weak.lock();
            if (!self || self->destroyed) return;
            self->connect_timer.release();
            self->on_connect_timeout();
          }));
    }

    const json params = {
        {"protocolVersion", supported_protocol_versions().front()},
        {"capabilities", {{"roots", {{"listChanged", false}}}}},
        {"clientInfo",
         {{"name", options.client_info.name}, {"version", options.client_info.version}}},
    };
    auto sent = peer->request(
        "initialize", params, RequestOptions{},
        guarded([](Impl& self, Result<json> r) { self.on_initialize_answer(std::move(r)); }));
    if (!sent) fail_connect(std::move(sent).error());
  }

  void on_connect_timeout() {
    if (!connect_done) return;
    std::string message = "connection timed out after " +
                          std::to_string(options.connect_timeout.count()) +
                          " ms during the initialize handshake";
    if (std::string diag = peer->transport().diagnostics(); !diag.empty()) {
      message += " (" + diag + ")";
    }
    fail_connect(Error::make(ErrorCode::timeout, std::move(message)));
  }

  void on_initialize_answer(Result<json> answer) {
    if (!connect_done) return;  // the handshake already ended (timeout, close)
    if (!answer.ok()) return fail_connect(std::move(answer).error());
    const json& result = answer.value();
    if (!result.is_object()) {
      return fail_connect(
          Error::make(ErrorCode::protocol,
                      "initialize returned a non-object result: " + detail::describe_json(result)));
    }
    auto version = result.find("protocolVersion");
    if (version == result.end() || !version->is_string()) {
      return fail_connect(
          Error::make(ErrorCode::protocol, "initialize result has no string protocolVersion"));
    }
    const auto& versions = supported_protocol_versions();
    const std::string& v = version->get_ref<const std::string&>();
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) {
      return fail_connect(Error::make(ErrorCode::unsupported_version,
                                      "unsupported protocol version \"" + v +
                                          "\" (client supports " + join(versions, ", ") + ")"));
    }
    server.protocol_version = v;
    if (auto it = result.find("serverInfo"); it != result.end() && it->is_object()) {
      server.server_info = *it;
    }
    if (auto it = result.find("capabilities"); it != result.end() && it->is_object()) {
      server.capabilities = *it;
    } else {
      server.capabilities = json::object();
    }
    if (auto it = result.find("instructions"); it != result.end() && it->is_string()) {
      server.instructions = it->get<std::string>();
    }
    if (auto st = peer->notify("notifications/initialized"); !st) {
      return fail_connect(std::move(st).error());
    }
    state = State::ready;
    connect_timer.reset();
    finish_connect(Status());
  }

  void fail_connect(Error error) {
    if (!connect_done) return;
    state = State::closed;
    connect_timer.reset();
    // Take the error before closing: closing fails the initialize request, which must
    // not be mistaken for the reason.
    Error reason = named(std::move(error));
    peer->close();
    finish_connect(Status(std::move(reason)));
  }

  void finish_connect(Status status) {
    auto done = std::move(connect_done);
    connect_done = nullptr;
    post_to(std::move(done), std::move(status));
  }

  // --- what the server sends us ------------------------------------------------------

  RpcPeer::Handlers make_peer_handlers() {
    RpcPeer::Handlers h;
    std::weak_ptr<Impl> weak = weak_from_this();
    h.on_request = [weak](const IncomingRequest& request, Responder respond) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->answer_server_request(request, std::move(respond));
    };
    h.on_notification = [weak](const std::string& method, const json& params) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->on_server_notification(method, params);
    };
    h.on_close = [weak](const Error& error) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->on_connection_closed(error);
    };
    return h;
  }

  void answer_server_request(const IncomingRequest& request, const Responder& respond) {
    if (request.method == "ping") {
      respond(json::object());
    } else if (request.method == "roots/list") {
      respond(roots());
    } else {
      respond(Error::wire(rpc_code::kMethodNotFound, "Method not found: " + request.method));
    }
  }

  json roots() const { return roots_list_result(options.roots.value_or(std::vector<Root>{})); }

  void on_server_notification(const std::string& method, const json& params) {
    // Progress already reached the call it belongs to (RpcPeer routes it by token).
    if (method == "notifications/progress") return;
    if (method == "notifications/message") log_server_message(params);
    if (options.on_notification) options.on_notification(method, params);
  }

  void log_server_message(const json& params) {
    if (!params.is_object()) return;
    std::string level = "info";
    if (auto it = params.find("level"); it != params.end() && it->is_string()) {
      level = it->get<std::string>();
    }
    std::string text = options.server_name.empty() ? std::string("Server")
                                                   : "Server \"" + options.server_name + "\"";
    if (auto it = params.find("logger"); it != params.end() && it->is_string()) {
      text += " [" + it->get<std::string>() + "]";
    }
    text += ": ";
    if (auto it = params.find("data"); it != params.end()) {
      text += it->is_string() ? it->get<std::string>() : detail::describe_json(*it, 2000);
    }
    logger->log(log_level_of(level), text);
  }

  void on_connection_closed(const Error& error) {
    if (close_reported) return;
    close_reported = true;
    // Normally the initialize request failed first (the peer fails requests before it
    // reports the close); this covers a handshake that had nothing in flight.
    if (connect_done) fail_connect(error);
    state = State::closed;
    connect_timer.reset();
    if (options.on_close) options.on_close(named(error));
  }

  // --- requests ----------------------------------------------------------------------

  struct ListOp {
    std::function<void(Result<std::vector<json>>)> done;
    AbortSignal signal;
    std::vector<json> tools;
    std::set<std::string> cursors;
    std::size_t pages = 0;
  };

  void list_tools(std::function<void(Result<std::vector<json>>)> done, AbortSignal signal) {
    if (state != State::ready) {
      post_to(std::move(done), Result<std::vector<json>>(not_ready("tools/list")));
      return;
    }
    auto op = std::make_shared<ListOp>();
    op->done = std::move(done);
    op->signal = std::move(signal);
    request_page(op, std::nullopt);
  }

  void request_page(const std::shared_ptr<ListOp>& op, const std::optional<std::string>& cursor) {
    json params = cursor ? json{{"cursor", *cursor}} : json(nullptr);
    RequestOptions ro;
    ro.timeout = options.request_timeout;
    ro.signal = op->signal;
    auto sent = peer->request(
        "tools/list", std::move(params), std::move(ro),
        guarded([op](Impl& self, Result<json> r) { self.on_page(op, std::move(r)); }));
    // Also reached from inside list_tools(): post, never call back synchronously.
    if (!sent) finish_list(op, named(std::move(sent).error()));
  }

  void finish_list(const std::shared_ptr<ListOp>& op, Result<std::vector<json>> result) {
    post_to(std::move(op->done), std::move(result));
  }

  void on_page(const std::shared_ptr<ListOp>& op, Result<json> answer) {
    if (!answer.ok()) return finish_list(op, named(std::move(answer).error()));
    json& page = answer.value();
    ++op->pages;
    auto list_error = [&](std::string message) {
      finish_list(op, make_error(ErrorCode::protocol, std::move(message)));
    };
    if (!page.is_object()) {
      return list_error("tools/list returned a non-object result: " + detail::describe_json(page));
    }
    auto tools = page.find("tools");
    if (tools == page.end() || !tools->is_array()) {
      return list_error("tools/list result has no \"tools\" array (page " +
                        std::to_string(op->pages) + ")");
    }
    std::size_t index = 0;
    for (auto& tool : *tools) {
      const char* problem = nullptr;
      if (!tool.is_object()) {
        problem = "not an object";
      } else if (auto name = tool.find("name"); name == tool.end() || !name->is_string()) {
        problem = "no string \"name\"";
      }
      if (problem) {
        logger->warn(prefix() + "ignoring tool " + std::to_string(index) + " of tools/list page " +
                     std::to_string(op->pages) + ": " + problem + ": " +
                     detail::describe_json(tool));
      } else {
        op->tools.push_back(std::move(tool));
      }
      ++index;
    }

    auto next = page.find("nextCursor");
    if (next == page.end() || next->is_null() ||
        (next->is_string() && next->get_ref<const std::string&>().empty())) {
      return finish_list(op, std::move(op->tools));
    }
    if (!next->is_string()) {
      return list_error("tools/list returned a nextCursor that is not a string: " +
                        detail::describe_json(*next));
    }
    std::string cursor = next->get<std::string>();
    if (!op->cursors.insert(cursor).second) {
      return list_error("tools/list returned the cursor \"" + cursor +
                        "\" twice; stopping to avoid an endless listing");
    }
    if (options.max_list_pages != 0 && op->pages >= options.max_list_pages) {
      return list_error("tools/list still had more pages after " + std::to_string(op->pages) +
                        " pages; stopping");
    }
    request_page(op, cursor);
  }

  void call_tool(const std::string& name, json arguments, CallOptions call,
                 std::function<void(Result<json>)> done) {
    if (state != State::ready) {
      post_to(std::move(done), Result<json>(not_ready("tools/call " + name)));
      return;
    }
    if (arguments.is_null()) arguments = json::object();
    if (!arguments.is_object()) {
      post_to(std::move(done),
              Result<json>(make_error(ErrorCode::invalid_argument,
                                      "tools/call " + name + ": arguments must be an object")));
      return;
    }
    RequestOptions ro;
    ro.timeout = call.timeout;
    ro.max_total_timeout = call.max_total_timeout;
    ro.signal = std::move(call.signal);
    ro.on_progress = std::move(call.on_progress);
    json params = {{"name", name}, {"arguments", std::move(arguments)}};
    auto shared_done = std::make_shared<std::function<void(Result<json>)>>(std::move(done));
    auto sent =
        peer->request("tools/call", std::move(params), std::move(ro),
                      guarded([shared_done](Impl& self, Result<json> r) {
                        auto fn = std::move(*shared_done);
                        if (!fn) return;
                        if (!r.ok()) return fn(self.named(std::move(r).error()));
                        if (!r.value().is_object()) {
                          return fn(self.make_error(ErrorCode::protocol,
                                                    "tools/call returned a non-object result: " +
                                                        detail::describe_json(r.value())));
                        }
                        fn(std::move(r));
                      }));
    if (!sent) post_to(std::move(*shared_done), Result<json>(named(std::move(sent).error())));
  }

  void ping(std::function<void(Status)> done, Millis timeout) {
    if (state != State::ready) {
      post_to(std::move(done), Status(not_ready("ping")));
      return;
    }
    RequestOptions ro;
    ro.timeout = timeout;
    auto shared_done = std::make_shared<std::function<void(Status)>>(std::move(done));
    auto sent = peer->request("ping", nullptr, std::move(ro),
                              guarded([shared_done](Impl& self, Result<json> r) {
                                auto fn = std::move(*shared_done);
                                if (!fn) return;
                                fn(r.ok() ? Status() : Status(self.named(std::move(r).error())));
                              }));
    if (!sent) post_to(std::move(*shared_done), Status(named(std::move(sent).error())));
  }

  Result<json> request(const std::string& method, json params, RequestOptions ro,
                       ResponseCallback done) {
    if (state != State::ready) return not_ready(method);
    auto sent = peer->request(method, std::move(params), std::move(ro),
                              guarded([done = std::move(done)](Impl& self, Result<json> r) {
                                if (!done) return;
                                if (!r.ok()) return done(self.named(std::move(r).error()));
                                done(std::move(r));
                              }));
    if (!sent) return named(std::move(sent).error());
    return sent;
  }

  void close() {
    if (connect_done) {
      return fail_connect(
          Error::make(ErrorCode::closed, "connection closed during the initialize handshake"));
    }
    state = State::closed;
    connect_timer.reset();
    peer->close();  // idempotent
  }
};

std::shared_ptr<ClientSession> ClientSession::create(Executor& executor,
                                                     std::unique_ptr<Transport> transport,
                                                     ClientOptions options) {
  return std::shared_ptr<ClientSession>(
      new ClientSession(executor, std::move(transport), std::move(options)));
}

ClientSession::ClientSession(Executor& executor, std::unique_ptr<Transport> transport,
                             ClientOptions options)
    : impl_(std::make_shared<Impl>(executor, std::move(transport), std::move(options))) {}

ClientSession::~ClientSession() {
  impl_->destroyed = true;
  impl_->connect_timer.reset();
  impl_->connect_done = nullptr;
  // Destroying the peer closes the transport and silences everything it had posted.
  impl_->peer.reset();
}

void ClientSession::connect(std::function<void(Status)> done) { impl_->connect(std::move(done)); }

void ClientSession::list_tools(std::function<void(Result<std::vector<json>>)> done,
                               AbortSignal signal) {
  impl_->list_tools(std::move(done), std::move(signal));
}

void ClientSession::call_tool(const std::string& name, json arguments, CallOptions options,
                              std::function<void(Result<json>)> done) {
  impl_->call_tool(name, std::move(arguments), std::move(options), std::move(done));
}

void ClientSession::ping(std::function<void(Status)> done, Millis timeout) {
  impl_->ping(std::move(done), timeout);
}

Result<json> ClientSession::request(const std::string& method, json params, RequestOptions options,
                                    ResponseCallback done) {
  return impl_->request(method, std::move(params), std::move(options), std::move(done));
}

void ClientSession::close() { impl_->close(); }

ClientSession::State ClientSession::state() const { return impl_->state; }

const ServerInfo& ClientSession::server() const { return impl_->server; }

const std::string& ClientSession::name() const { return impl_->options.server_name; }

RpcPeer& ClientSession::peer() { return *impl_->peer; }

}  // namespace mcprt
