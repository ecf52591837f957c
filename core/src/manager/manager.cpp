// McpManager (SPEC §5): per-server pipeline, startup gate, background completion,
// reconnect with backoff and a circuit breaker, ping health checks, list_changed
// re-listing, and shutdown.
//
// Everything runs on services.executor. The state lives in Impl; every callback handed to
// a session, a timer, the cache or the resolver holds only a weak reference to it, and
// checks the attempt id it was started for, so a callback from a connection that was
// replaced, disconnected or outlived its manager does nothing. Attempt ids are unique for
// the manager's lifetime, and disconnect_all additionally bumps an epoch, so a connect
// that finishes after its server was disconnected is recognised as stale and closed.

#include <algorithm>
#include <deque>
#include <set>
#include <utility>

#include "mcprt/connect.hpp"
#include "mcprt/manager.hpp"

namespace mcprt {

const char* to_string(ConnectionStatus status) {
  switch (status) {
    case ConnectionStatus::connected: return "connected";
    case ConnectionStatus::connecting: return "connecting";
    case ConnectionStatus::disconnected: return "disconnected";
  }
  return "unknown";
}

const char* to_string(ServerPhase phase) {
  switch (phase) {
    case ServerPhase::connecting: return "connecting";
    case ServerPhase::connected: return "connected";
    case ServerPhase::reconnecting: return "reconnecting";
    case ServerPhase::disconnected: return "disconnected";
    case ServerPhase::failed: return "failed";
  }
  return "unknown";
}

namespace {

std::string server_prefix(const std::string& name) { return "Server \"" + name + "\": "; }

// Errors from sessions already carry the prefix; errors made here get it once.
Error named(const std::string& server, Error e) {
  const std::string p = server_prefix(server);
  if (e.message.rfind(p, 0) != 0) e.message = p + e.message;
  return e;
}

}  // namespace

namespace {

// The exponential backoff of one outage: initial, 2×, 4×, … capped at max_delay_ms.
// `attempts_made` is how many reconnect attempts this outage already had.
Millis reconnect_delay(const ReconnectPolicy& policy, int attempts_made) {
  long long cap = std::max<long long>(policy.max_delay_ms, 0);
  long long d = std::max<long long>(policy.initial_delay_ms, 0);
  for (int i = 0; i < attempts_made && d < cap; ++i) d *= 2;
  return Millis(std::min(d, cap));
}

}  // namespace

struct McpManager::Impl : std::enable_shared_from_this<Impl> {
  // Stages of the current connection attempt (ServerPhase is what users see).
  enum class Stage {
    idle,        // nothing in flight (failed, disconnected, or waiting for a retry timer)
    resolving,   // connect-time substitution / auth lookup
    connecting,  // transport + initialize
    listing,     // tools/list
    ready,       // live
  };

  enum class CacheState { off, loading, hit, miss };

  // Why an attempt was started: its failure is final (initial, manual) or continues the
  // outage's backoff (retry).
  enum class AttemptKind { initial, retry };

  // One live or closing ClientSession, keyed by the attempt that created it.
  struct Conn {
    std::uint64_t id = 0;
    std::string server;
    std::shared_ptr<ClientSession> session;
    bool close_seen = false;  // the session's on_close already fired
    bool retired = false;     // closed on purpose; dropped once on_close fires
    std::vector<std::function<void()>> on_closed;
  };

  struct Server {
    std::string name;
    ServerConfig config;  // unresolved, as given (the cache key's input)
    std::string hash;
    ServerPhase phase = ServerPhase::disconnected;
    std::optional<Error> last_error;
    int attempts = 0;
    TimePoint since{};
    std::string stderr_tail;
    bool circuit_open = false;
    std::deque<TimePoint> closes;  // connection losses inside the breaker window

    Stage stage = Stage::idle;
    AttemptKind kind = AttemptKind::initial;
    std::uint64_t attempt = 0;  // the current attempt's id (0 = none)
    std::shared_ptr<ClientSession> session;
    json server_info;

    // This server's slice of the tool set.
    bool has_slice = false;
    bool slice_deferred = false;
    bool slice_from_cache = false;
    std::vector<json> definitions;

    CacheState cache = CacheState::off;
    std::vector<json> cached_definitions;

    ScopedTimer retry_timer;
    ScopedTimer health_timer;
    ScopedTimer debounce_timer;
    bool relisting = false;
    bool relist_again = false;

    // reconnect_server() callers waiting for the outcome of one attempt.
    std::vector<std::function<void(Status)>> attempt_done;
  };

  struct Waiter {
    std::string server;
    std::function<void(Status)> done;
    ScopedTimer timer;
    AbortSignal signal;
    std::uint64_t abort_listener = 0;
  };

  struct Gate {
    std::vector<std::string> names;
    std::map<std::string, Error> early_errors;  // invalid configs of this call
    std::function<void(GateResult)> done;
    ScopedTimer timer;
    bool timer_fired = false;
  };

  // Forwards the tools' calls to the manager while it lives.
  class Host final : public McpToolHost {
   public:
    explicit Host(std::weak_ptr<Impl> impl, Executor& ex) : impl_(std::move(impl)), ex_(ex) {}
    void call_tool(const std::string& server, const std::string& raw_tool, json arguments,
                   CallOptions options, std::function<void(Result<json>)> done) override {
      if (auto impl = impl_.lock(); impl && !impl->destroyed) {
        return impl->call_tool(server, raw_tool, std::move(arguments), std::move(options),
                               std::move(done));
      }
      ex_.post([server, done = std::move(done)] {
        done(Error::make(ErrorCode::not_connected,
                         server_prefix(server) + "not connected (the MCP manager is gone)"));
      });
    }
    void wait_for_connection(const std::string& server, AbortSignal signal,
                             std::function<void(Status)> done) override {
      if (auto impl = impl_.lock(); impl && !impl->destroyed) {
        return impl->wait_for_connection(server, std::move(signal), std::move(done));
      }
      ex_.post([server, done = std::move(done)] {
        done(Error::make(ErrorCode::not_connected,
                         server_prefix(server) + "not connected (the MCP manager is gone)"));
      });
    }

   private:
    std::weak_ptr<Impl> impl_;
    Executor& ex_;
  };

  Impl(ManagerServices s, ManagerOptions o) : services(std::move(s)), options(std::move(o)) {
    logger = services.logger ? services.logger : &null_logger;
  }

  void init() {
    host = std::make_shared<Host>(weak_from_this(), *services.executor);
    resolver = std::make_unique<ConnectTimeResolver>(*services.executor, services.shell_runner,
                                                     services.env, services.logger);
    if (services.cache_store && services.wall_clock) {
      cache = std::make_shared<ToolCache>(*services.cache_store, services.wall_clock,
                                          services.logger);
    }
  }

  Executor& ex() { return *services.executor; }

  // ---------------------------------------------------------------- lookups

  Server* find(const std::string& name) {
    auto it = servers.find(name);
    return it == servers.end() ? nullptr : it->second.get();
  }
  const Server* find(const std::string& name) const {
    auto it = servers.find(name);
    return it == servers.end() ? nullptr : it->second.get();
  }
  // The server, if `attempt` is still its current attempt of the current epoch.
  Server* current(const std::string& name, std::uint64_t attempt, std::uint64_t at_epoch) {
    if (destroyed || at_epoch != epoch) return nullptr;
    Server* s = find(name);
    return s && s->attempt == attempt ? s : nullptr;
  }

  static ConnectionStatus status_of(const Server& s) {
    if (s.stage == Stage::ready) return ConnectionStatus::connected;
    if (s.stage != Stage::idle || s.phase == ServerPhase::reconnecting ||
        s.phase == ServerPhase::connecting) {
      return ConnectionStatus::connecting;
    }
    return ConnectionStatus::disconnected;
  }

  std::size_t tool_count(const std::string& name) const {
    return static_cast<std::size_t>(std::count_if(
        tools.begin(), tools.end(), [&](const auto& t) { return t->info().server == name; }));
  }

  ServerState state_of(const Server& s) const {
    ServerState st;
    st.name = s.name;
    st.phase = s.phase;
    st.status = status_of(s);
    st.last_error = s.last_error;
    st.attempts = s.attempts;
    st.since = s.since;
    st.stderr_tail = s.stderr_tail;
    st.tool_count = tool_count(s.name);
    st.tools_from_cache = s.has_slice && s.slice_from_cache;
    st.circuit_open = s.circuit_open;
    st.source = s.config.source;
    st.config_hash = s.hash;
    return st;
  }

  Millis server_timeout(const Server& s) const {
    return s.config.timeout_ms ? Millis(*s.config.timeout_ms) : options.default_timeout;
  }

  // ---------------------------------------------------------------- events

  void set_phase(Server& s, ServerPhase phase, std::optional<Error> error = std::nullopt) {
    const bool changed = s.phase != phase;
    s.phase = phase;
    if (error) {
      s.last_error = error;
      if (error->data.is_object()) {
        auto it = error->data.find("stderr");
        if (it != error->data.end() && it->is_string()) s.stderr_tail = it->get<std::string>();
      }
    }
    if (!changed) return;
    s.since = ex().now();
    StatusEvent ev;
    ev.server = s.name;
    ev.phase = phase;
    ev.error = error;
    ev.source = s.config.source;
    ev.tool_count = tool_count(s.name);
    emit_status(std::move(ev));
  }

  void emit_status(StatusEvent ev) {
    if (status_listeners.empty()) return;
    ex().post([weak = weak_from_this(), ev = std::move(ev)] {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      // Copy: a listener may remove itself (or others) while we iterate.
      auto listeners = self->status_listeners;
      for (auto& [id, fn] : listeners) {
        if (self->destroyed) return;
        if (self->status_listeners.count(id) && fn) fn(ev);
      }
    });
  }

  void fire_tools_changed() {
    if (tools_changed_posted) return;  // one event per burst of changes
    tools_changed_posted = true;
    ex().post([weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->tools_changed_posted = false;
      auto listeners = self->tools_listeners;
      for (auto& [id, fn] : listeners) {
        if (self->destroyed) return;
        if (self->tools_listeners.count(id) && fn) fn();
      }
    });
  }

  void rebuild_tools() {
    std::vector<ServerTools> slices;
    for (auto& [name, s] : servers) {
      if (!s->has_slice) continue;
      ServerTools st;
      st.server = name;
      st.config = &s->config;
      st.source = s->config.source;
      st.definitions = s->definitions;
      st.deferred = s->slice_deferred;
      slices.push_back(std::move(st));
    }
    tools = build_mcp_tools(ex(), slices, host, options.tools);
    fire_tools_changed();
  }

  void set_slice(Server& s, std::vector<json> defs, bool deferred, bool from_cache) {
    s.has_slice = true;
    s.definitions = std::move(defs);
    s.slice_deferred = deferred;
    s.slice_from_cache = from_cache;
    rebuild_tools();
  }

  void drop_slice(Server& s) {
    if (!s.has_slice) return;
    s.has_slice = false;
    s.definitions.clear();
    s.slice_from_cache = false;
    rebuild_tools();
  }

  // ---------------------------------------------------------------- connect_servers

  void connect_servers(std::vector<ServerConfig> configs, std::function<void(GateResult)> done) {
    auto gate = std::make_shared<Gate>();
    gate->done = std::move(done);
    const ValidationOptions validation{services.process_launcher != nullptr ||
                                       static_cast<bool>(services.transport_factory)};
    for (auto& cfg : configs) {
      const std::string name = cfg.name;
      if (std::find(gate->names.begin(), gate->names.end(), name) != gate->names.end()) continue;
      gate->names.push_back(name);
      disconnected_on_purpose.erase(name);
      Server* s = find(name);
      if (s && (s->stage != Stage::idle || s->phase == ServerPhase::reconnecting)) {
        // Connected or pending: skipped; only its source metadata is refreshed.
        s->config.source = cfg.source;
        continue;
      }
      if (!s) {
        auto fresh = std::make_unique<Server>();
        fresh->name = name;
        s = fresh.get();
        servers.emplace(name, std::move(fresh));
      }
      if (!(s->config == cfg)) {
        s->config = std::move(cfg);
        s->hash = config_hash(s->config);
      }
      // A new connect_servers resets an open circuit and the outage's counters.
      s->circuit_open = false;
      s->closes.clear();
      s->attempts = 0;
      s->retry_timer.reset();

      if (Status valid = validate_server_config(s->config, validation); !valid) {
        Error e = named(name, std::move(valid).error());
        gate->early_errors[name] = e;
        set_phase(*s, ServerPhase::failed, e);
        continue;
      }
      if (!s->has_slice) start_cache_load(*s);
      begin_attempt(*s, AttemptKind::initial);
    }
    gates.push_back(gate);
    gate->timer = ScopedTimer(
        ex(), ex().post_after(std::max(options.startup_gate, Millis(0)),
                              [weak = weak_from_this(), g = std::weak_ptr<Gate>(gate)] {
                                auto self = weak.lock();
                                auto gate = g.lock();
                                if (!self || self->destroyed || !gate) return;
                                gate->timer.release();
                                gate->timer_fired = true;
                                self->check_gates();
                              }));
    check_gates();
  }

  void start_cache_load(Server& s) {
    if (!cache) {
      s.cache = CacheState::off;
      return;
    }
    s.cache = CacheState::loading;
    const std::string hash = s.hash;
    // The callback keeps the cache alive: the store may answer after the manager is gone.
    cache->load(s.config, [weak = weak_from_this(), keep = cache, name = s.name,
                           hash](std::optional<CachedTools> hit) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      Server* s = self->find(name);
      if (!s || s->hash != hash || s->cache != CacheState::loading) return;
      if (hit) {
        s->cache = CacheState::hit;
        s->cached_definitions = std::move(hit->tools);
      } else {
        s->cache = CacheState::miss;
      }
      self->check_gates();
    });
  }

  // ---------------------------------------------------------------- the gate

  enum class Settle { settled, deferred, uncached, undecided };

  Settle settle_state(const std::string& name, bool timer_fired) const {
    const Server* s = find(name);
    if (!s) return Settle::settled;  // disconnected meanwhile
    if (s->stage == Stage::ready) return Settle::settled;
    if (s->stage == Stage::idle && s->phase != ServerPhase::reconnecting) return Settle::settled;
    if (!timer_fired) return Settle::undecided;
    switch (s->cache) {
      case CacheState::loading: return Settle::undecided;
      case CacheState::hit: return Settle::deferred;
      default: break;
    }
    // A server reconnecting with its tools already registered (deferred) needs no cache.
    if (s->has_slice) return Settle::deferred;
    return Settle::uncached;
  }

  void check_gates() {
    if (destroyed || gates.empty()) return;
    auto open = gates;
    for (auto& gate : open) {
      bool ready = true;
      for (const auto& name : gate->names) {
        Settle st = settle_state(name, gate->timer_fired);
        if (st == Settle::undecided || (st == Settle::uncached && options.wait_for_uncached)) {
          ready = false;
          break;
        }
      }
      if (ready) finish_gate(gate);
    }
  }

  void finish_gate(const std::shared_ptr<Gate>& gate) {
    gates.erase(std::remove(gates.begin(), gates.end(), gate), gates.end());
    gate->timer.reset();
    GateResult r;
    r.errors = gate->early_errors;
    bool installed = false;
    for (const auto& name : gate->names) {
      Server* s = find(name);
      if (!s) continue;
      if (s->stage == Stage::ready) {
        r.connected.push_back(name);
        continue;
      }
      const bool pending = s->stage != Stage::idle || s->phase == ServerPhase::reconnecting;
      if (!pending) {
        if (!r.errors.count(name)) {
          r.errors[name] = s->last_error ? *s->last_error
                                         : Error::make(ErrorCode::not_connected,
                                                       server_prefix(name) + "not connected");
        }
        continue;
      }
      if (!s->has_slice && s->cache == CacheState::hit) {
        s->has_slice = true;
        s->definitions = s->cached_definitions;
        s->slice_deferred = true;
        s->slice_from_cache = true;
        installed = true;
      }
      if (s->has_slice) {
        r.deferred.push_back(name);
      } else {
        r.pending.push_back(name);
      }
    }
    if (installed) rebuild_tools();
    r.tools = tools;
    ex().post([weak = weak_from_this(), done = std::move(gate->done), r = std::move(r)]() mutable {
      auto self = weak.lock();
      if (!self || self->destroyed || !done) return;
      done(std::move(r));
    });
  }

  // Failures inside an open gate are reported by the gate; later ones are logged.
  bool gate_reports(const std::string& name) const {
    for (const auto& g : gates) {
      if (std::find(g->names.begin(), g->names.end(), name) != g->names.end()) return true;
    }
    return false;
  }

  // ---------------------------------------------------------------- one attempt

  void begin_attempt(Server& s, AttemptKind kind) {
    s.retry_timer.reset();
    s.attempt = next_attempt++;
    s.kind = kind;
    s.stage = Stage::resolving;
    ++s.attempts;
    set_phase(s, kind == AttemptKind::retry ? ServerPhase::reconnecting : ServerPhase::connecting);
    const std::uint64_t attempt = s.attempt;
    const std::uint64_t at_epoch = epoch;
    resolver->resolve(s.config, [weak = weak_from_this(), name = s.name, attempt,
                                 at_epoch](ServerConfig resolved) {
      auto self = weak.lock();
      if (!self) return;
      Server* s = self->current(name, attempt, at_epoch);
      if (!s) return;  // disconnected or superseded: nothing was opened yet
      self->with_auth(*s, std::move(resolved));
    });
  }

  // stdio servers with `auth` get OAUTH_ACCESS_TOKEN (http/sse transports ask the storage
  // themselves, and refresh on 401/403).
  void with_auth(Server& s, ServerConfig resolved) {
    if (resolved.type != TransportType::stdio || resolved.auth.type == AuthType::none ||
        !services.auth_storage || resolved.env.count("OAUTH_ACCESS_TOKEN")) {
      return open_connection(s, std::move(resolved));
    }
    AuthRequest req{s.name, resolved.auth.credential_id, resolved.url};
    const std::uint64_t attempt = s.attempt;
    const std::uint64_t at_epoch = epoch;
    services.auth_storage->get_token(
        req, [weak = weak_from_this(), name = s.name, attempt, at_epoch,
              resolved = std::move(resolved)](Result<std::optional<std::string>> token) mutable {
          auto self = weak.lock();
          if (!self) return;
          Server* s = self->current(name, attempt, at_epoch);
          if (!s) return;
          if (!token.ok()) {
            self->logger->warn(server_prefix(name) + "auth storage failed: " +
                               token.error().message);
          } else if (token.value() && !token.value()->empty()) {
            resolved.env["OAUTH_ACCESS_TOKEN"] = *token.value();
          }
          self->open_connection(*s, std::move(resolved));
        });
  }

  void open_connection(Server& s, const ServerConfig& resolved) {
    ConnectServices cs;
    cs.executor = services.executor;
    cs.process_launcher = services.process_launcher;
    cs.http_client = services.http_client;
    cs.auth_storage = services.auth_storage;
    cs.logger = services.logger;
    cs.transport_factory = services.transport_factory;

    const std::uint64_t attempt = s.attempt;
    const std::uint64_t at_epoch = epoch;
    std::weak_ptr<Impl> weak = weak_from_this();
    ConnectOptions co;
    co.client_info = options.client_info;
    co.cwd = options.cwd;
    co.default_timeout = options.default_timeout;
    co.on_notification = [weak, name = s.name, attempt, at_epoch](const std::string& method,
                                                                  const json& params) {
      auto self = weak.lock();
      if (!self) return;
      self->on_notification(name, attempt, at_epoch, method, params);
    };
    co.on_close = [weak, attempt](const Error& error) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->on_session_closed(attempt, error);
    };

    s.stage = Stage::connecting;
    auto made = connect_to_server(
        resolved, cs, std::move(co),
        [weak, name = s.name, attempt, at_epoch](Result<std::shared_ptr<ClientSession>> r) {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          self->on_connected(name, attempt, at_epoch, std::move(r));
        });
    if (!made.ok()) return attempt_failed(s, std::move(made).error());
    auto conn = std::make_shared<Conn>();
    conn->id = attempt;
    conn->server = s.name;
    conn->session = made.value();
    conns[attempt] = conn;
    s.session = std::move(made.value());
  }

  void on_connected(const std::string& name, std::uint64_t attempt, std::uint64_t at_epoch,
                    Result<std::shared_ptr<ClientSession>> r) {
    Server* s = current(name, attempt, at_epoch);
    if (!s || s->stage != Stage::connecting) {
      // A connect that finished after its server was disconnected or replaced: close it.
      retire(attempt);
      return;
    }
    if (!r.ok()) return attempt_failed(*s, std::move(r).error());
    s->stage = Stage::listing;
    s->server_info = {{"protocolVersion", s->session->server().protocol_version},
                      {"serverInfo", s->session->server().server_info},
                      {"capabilities", s->session->server().capabilities}};
    s->session->list_tools([weak = weak_from_this(), name, attempt,
                            at_epoch](Result<std::vector<json>> listed) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->on_listed(name, attempt, at_epoch, std::move(listed));
    });
  }

  void on_listed(const std::string& name, std::uint64_t attempt, std::uint64_t at_epoch,
                 Result<std::vector<json>> listed) {
    Server* s = current(name, attempt, at_epoch);
    if (!s || s->stage != Stage::listing) return;
    if (!listed.ok()) return attempt_failed(*s, std::move(listed).error());
    s->stage = Stage::ready;
    s->attempts = 0;
    s->last_error.reset();
    s->stderr_tail.clear();
    save_cache(*s, listed.value());
    set_slice(*s, std::move(listed.value()), false, false);
    set_phase(*s, ServerPhase::connected);
    settle_attempt_waiters(*s, Status());
    settle_connection_waiters(name, Status());
    schedule_health(*s);
    if (s->relist_again) {  // list_changed arrived while the first list was running
      s->relist_again = false;
      schedule_relist(*s);
    }
    check_gates();
  }

  void save_cache(Server& s, const std::vector<json>& defs) {
    if (!cache) return;
    cache->save(s.config, s.server_info, defs, [keep = cache](Status) {});
  }

  // The attempt failed before the connection was live.
  void attempt_failed(Server& s, Error error) {
    error = named(s.name, std::move(error));
    const std::uint64_t attempt = s.attempt;
    s.stage = Stage::idle;
    s.session.reset();
    retire(attempt);
    settle_attempt_waiters(s, Status(error));

    const bool reported = gate_reports(s.name);
    if (s.kind == AttemptKind::retry && s.config.reconnect.enabled && !s.circuit_open &&
        (s.config.reconnect.max_attempts <= 0 || s.attempts < s.config.reconnect.max_attempts)) {
      schedule_retry(s, error);
      logger->warn(error.message + " (reconnect attempt " + std::to_string(s.attempts) + ")");
      check_gates();
      return;
    }
    // Final: no retry is scheduled.
    if (s.kind == AttemptKind::initial && s.slice_from_cache) drop_slice(s);
    set_phase(s, ServerPhase::failed, error);
    settle_connection_waiters(s.name, Status(error));
    if (!reported) logger->warn(error.message);
    check_gates();
  }

  void schedule_retry(Server& s, const Error& reason) {
    const Millis delay = reconnect_delay(s.config.reconnect, s.attempts);
    set_phase(s, ServerPhase::reconnecting, reason);
    s.retry_timer = ScopedTimer(ex(), ex().post_after(delay, [weak = weak_from_this(),
                                                              name = s.name] {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      Server* s = self->find(name);
      if (!s) return;
      s->retry_timer.release();
      if (s->stage != Stage::idle) return;
      self->begin_attempt(*s, AttemptKind::retry);
    }));
  }

  // ---------------------------------------------------------------- live connection

  void on_session_closed(std::uint64_t attempt, const Error& error) {
    auto it = conns.find(attempt);
    if (it == conns.end()) return;
    auto conn = it->second;
    conn->close_seen = true;
    if (conn->retired) {
      bury(attempt);
      return;
    }
    Server* s = find(conn->server);
    if (!s || s->attempt != attempt) return;
    // Before the connection is live, the connect / list callbacks report the failure.
    if (s->stage != Stage::ready) return;
    connection_lost(*s, error);
  }

  // Transport drop or failed health check of a live connection.
  void connection_lost(Server& s, Error reason) {
    reason = named(s.name, std::move(reason));
    const std::uint64_t attempt = s.attempt;
    s.stage = Stage::idle;
    s.session.reset();
    s.attempt = 0;
    s.health_timer.reset();
    s.debounce_timer.reset();
    s.relisting = false;
    s.relist_again = false;
    retire(attempt);
    s.attempts = 0;

    const TimePoint now = ex().now();
    s.closes.push_back(now);
    while (!s.closes.empty() && now - s.closes.front() >= options.breaker_window) {
      s.closes.pop_front();
    }

    if (!s.config.reconnect.enabled) {
      // The seed's behaviour: stays down; calls fail with a clear error until a reload.
      logger->warn(reason.message + " (reconnect is off)");
      set_phase(s, ServerPhase::disconnected, reason);
      settle_connection_waiters(s.name, Status(disconnected_error(s)));
      return;
    }
    if (options.breaker_max_closes > 0 &&
        static_cast<int>(s.closes.size()) >= options.breaker_max_closes) {
      s.circuit_open = true;
      logger->warn(reason.message + "; circuit open after " + std::to_string(s.closes.size()) +
                   " closes within " + std::to_string(options.breaker_window.count()) +
                   " ms, not reconnecting");
      mark_slice_deferred(s);
      set_phase(s, ServerPhase::failed, reason);
      settle_connection_waiters(s.name, Status(circuit_error(s)));
      return;
    }
    logger->warn(reason.message + "; reconnecting");
    mark_slice_deferred(s);
    schedule_retry(s, reason);
    s.kind = AttemptKind::retry;
    check_gates();
  }

  void mark_slice_deferred(Server& s) {
    if (!s.has_slice || s.slice_deferred) return;
    s.slice_deferred = true;
    rebuild_tools();
  }

  Error circuit_error(const Server& s) const {
    std::string m = server_prefix(s.name) + "circuit open after " +
                    std::to_string(s.closes.size()) + " connection losses within " +
                    std::to_string(options.breaker_window.count()) +
                    " ms; reconnect it by hand or reload";
    if (s.last_error) m += " (last error: " + s.last_error->message + ")";
    return Error::make(ErrorCode::not_connected, std::move(m));
  }

  Error disconnected_error(const Server& s) const {
    std::string m = server_prefix(s.name) + "disconnected";
    if (s.last_error) m += " (" + s.last_error->message + ")";
    m += "; reconnect is off for this server, reload to reconnect";
    return Error::make(ErrorCode::not_connected, std::move(m));
  }

  void on_notification(const std::string& name, std::uint64_t attempt, std::uint64_t at_epoch,
                       const std::string& method, const json&) {
    if (method != "notifications/tools/list_changed") return;
    Server* s = current(name, attempt, at_epoch);
    if (!s) return;
    if (s->stage == Stage::listing) {
      s->relist_again = true;
      return;
    }
    if (s->stage != Stage::ready) return;
    schedule_relist(*s);
  }

  void schedule_relist(Server& s) {
    // Debounce: a burst of list_changed becomes one tools/list after the burst.
    s.debounce_timer = ScopedTimer(
        ex(), ex().post_after(options.list_changed_debounce,
                              [weak = weak_from_this(), name = s.name, attempt = s.attempt] {
                                auto self = weak.lock();
                                if (!self || self->destroyed) return;
                                Server* s = self->find(name);
                                if (!s || s->attempt != attempt) return;
                                s->debounce_timer.release();
                                self->relist(*s);
                              }));
  }

  void relist(Server& s) {
    if (s.stage != Stage::ready || !s.session) return;
    if (s.relisting) {
      s.relist_again = true;
      return;
    }
    s.relisting = true;
    s.session->list_tools([weak = weak_from_this(), name = s.name, attempt = s.attempt,
                           at_epoch = epoch](Result<std::vector<json>> listed) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      Server* s = self->current(name, attempt, at_epoch);
      if (!s || s->stage != Stage::ready) return;
      s->relisting = false;
      if (!listed.ok()) {
        self->logger->warn(named(name, std::move(listed).error()).message +
                           " (re-listing tools after tools/list_changed)");
      } else {
        self->save_cache(*s, listed.value());
        self->set_slice(*s, std::move(listed.value()), false, false);
      }
      if (s->relist_again) {
        s->relist_again = false;
        self->relist(*s);
      }
    });
  }

  void schedule_health(Server& s) {
    if (options.health_interval <= Millis(0)) return;
    s.health_timer = ScopedTimer(
        ex(), ex().post_after(options.health_interval,
                              [weak = weak_from_this(), name = s.name, attempt = s.attempt] {
                                auto self = weak.lock();
                                if (!self || self->destroyed) return;
                                Server* s = self->find(name);
                                if (!s || s->attempt != attempt) return;
                                s->health_timer.release();
                                self->health_check(*s);
                              }));
  }

  void health_check(Server& s) {
    if (s.stage != Stage::ready || !s.session) return;
    Millis timeout = server_timeout(s);
    if (timeout <= Millis(0)) timeout = options.health_interval;
    s.session->ping(
        [weak = weak_from_this(), name = s.name, attempt = s.attempt, at_epoch = epoch](Status st) {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          Server* s = self->current(name, attempt, at_epoch);
          if (!s || s->stage != Stage::ready) return;
          // A server without ping (-32601) still answered: it is alive.
          if (st.ok() || (st.error().is_wire() && st.error().wire_code == rpc_code::kMethodNotFound)) {
            self->schedule_health(*s);
            return;
          }
          Error e = st.error();
          e.message = "health check failed: " + e.message;
          self->connection_lost(*s, std::move(e));
        },
        timeout);
  }

  // ---------------------------------------------------------------- closing sessions

  // Closes attempt's session on purpose; `on_closed` runs once it has closed.
  void retire(std::uint64_t attempt, std::function<void()> on_closed = nullptr) {
    auto it = conns.find(attempt);
    if (it == conns.end()) {
      if (on_closed) post_fn(std::move(on_closed));
      return;
    }
    auto conn = it->second;
    if (on_closed) conn->on_closed.push_back(std::move(on_closed));
    conn->retired = true;
    if (conn->close_seen) return bury(attempt);
    conn->session->close();
  }

  // The session closed: drop it (later: we may be inside its own callback) and tell the
  // disconnect callers.
  void bury(std::uint64_t attempt) {
    auto it = conns.find(attempt);
    if (it == conns.end()) return;
    auto conn = it->second;
    conns.erase(it);
    graveyard.push_back(conn->session);
    for (auto& fn : conn->on_closed) post_fn(std::move(fn));
    ex().post([weak = weak_from_this()] {
      if (auto self = weak.lock()) self->graveyard.clear();
    });
  }

  void post_fn(std::function<void()> fn) {
    ex().post([weak = weak_from_this(), fn = std::move(fn)] {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      fn();
    });
  }

  // ---------------------------------------------------------------- waiters

  void settle_attempt_waiters(Server& s, const Status& st) {
    auto waiting = std::move(s.attempt_done);
    s.attempt_done.clear();
    for (auto& fn : waiting) {
      post_fn([fn = std::move(fn), st] { fn(st); });
    }
  }

  void settle_connection_waiters(const std::string& name, const Status& st) {
    std::vector<std::uint64_t> ids;
    for (auto& [id, w] : waiters) {
      if (w->server == name) ids.push_back(id);
    }
    for (auto id : ids) complete_waiter(id, st);
  }

  void complete_waiter(std::uint64_t id, Status st) {
    auto it = waiters.find(id);
    if (it == waiters.end()) return;
    auto w = std::move(it->second);
    waiters.erase(it);
    w->timer.reset();
    if (w->abort_listener) w->signal.remove_listener(w->abort_listener);
    post_fn([done = std::move(w->done), st = std::move(st)] { done(st); });
  }

  void wait_for_connection(const std::string& name, AbortSignal signal,
                           std::function<void(Status)> done) {
    auto fail_now = [&](Error e) { post_fn([done, e] { done(Status(e)); }); };
    if (signal.aborted()) {
      return fail_now(Error::make(ErrorCode::aborted, server_prefix(name) +
                                                          "wait for connection aborted"));
    }
    Server* s = find(name);
    if (!s) {
      if (disconnected_on_purpose.count(name)) {
        return fail_now(Error::make(ErrorCode::not_connected,
                                    server_prefix(name) + "was disconnected; reload to reconnect"));
      }
      return fail_now(Error::make(ErrorCode::not_connected, server_prefix(name) + "unknown server"));
    }
    if (s->stage == Stage::ready) return post_fn([done] { done(Status()); });
    if (s->circuit_open) return fail_now(circuit_error(*s));
    if (s->stage == Stage::idle) {
      if (s->last_error && s->last_error->code == ErrorCode::invalid_config) {
        return fail_now(*s->last_error);
      }
      if (!s->config.reconnect.enabled) {
        if (s->phase == ServerPhase::disconnected) return fail_now(disconnected_error(*s));
        return fail_now(s->last_error ? *s->last_error
                                      : Error::make(ErrorCode::not_connected,
                                                    server_prefix(name) + "is not connected"));
      }
      if (s->phase == ServerPhase::reconnecting) {
        // A retry is scheduled: someone needs the server now, so try at once.
        begin_attempt(*s, AttemptKind::retry);
      } else {
        // Failed (or max attempts reached): one more attempt for this caller.
        s->attempts = 0;
        begin_attempt(*s, AttemptKind::initial);
      }
    }
    const std::uint64_t id = next_waiter++;
    auto w = std::make_unique<Waiter>();
    w->server = name;
    w->done = std::move(done);
    w->signal = signal;
    const Millis timeout = server_timeout(*s);
    if (timeout > Millis(0)) {
      w->timer = ScopedTimer(ex(), ex().post_after(timeout, [weak = weak_from_this(), id, name,
                                                             timeout] {
        auto self = weak.lock();
        if (!self || self->destroyed) return;
        auto it = self->waiters.find(id);
        if (it == self->waiters.end()) return;
        it->second->timer.release();
        std::string m = server_prefix(name) + "not connected after " +
                        std::to_string(timeout.count()) + " ms";
        if (const Server* s = self->find(name)) {
          m += std::string(" (") + to_string(s->phase);
          if (s->last_error) m += ": " + s->last_error->message;
          m += ")";
        }
        self->complete_waiter(id, Status(Error::make(ErrorCode::timeout, std::move(m))));
      }));
    }
    w->abort_listener = signal.add_listener([weak = weak_from_this(), id, name] {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      auto it = self->waiters.find(id);
      if (it == self->waiters.end()) return;
      it->second->abort_listener = 0;  // it already ran
      self->complete_waiter(id, Status(Error::make(ErrorCode::aborted,
                                                   server_prefix(name) +
                                                       "wait for connection aborted")));
    });
    waiters.emplace(id, std::move(w));
  }

  void call_tool(const std::string& name, const std::string& raw_tool, json arguments,
                 CallOptions call, std::function<void(Result<json>)> done) {
    Server* s = find(name);
    if (!s || s->stage != Stage::ready || !s->session) {
      Error e = !s ? Error::make(ErrorCode::not_connected,
                                 server_prefix(name) + (disconnected_on_purpose.count(name)
                                                            ? "was disconnected"
                                                            : "is not connected (unknown server)"))
            : s->circuit_open ? circuit_error(*s)
            : (!s->config.reconnect.enabled && s->phase == ServerPhase::disconnected)
                ? disconnected_error(*s)
                : Error::make(ErrorCode::not_connected,
                              server_prefix(name) + "is not connected (" + to_string(s->phase) +
                                  (s->last_error ? ": " + s->last_error->message : "") + ")");
      ex().post([done = std::move(done), e = std::move(e)] { done(e); });
      return;
    }
    if (call.timeout == Millis(0)) {
      call.timeout = s->config.tool_timeout_ms ? Millis(*s->config.tool_timeout_ms)
                                               : options.default_tool_timeout;
    }
    // Registered so that shutdown() can answer it: a destroyed session never calls back.
    const std::uint64_t id = next_call++;
    calls.emplace(id, PendingCall{name, std::move(done)});
    s->session->call_tool(raw_tool, std::move(arguments), std::move(call),
                          [weak = weak_from_this(), id](Result<json> r) {
                            auto self = weak.lock();
                            if (!self) return;
                            auto it = self->calls.find(id);
                            if (it == self->calls.end()) return;  // shutdown() answered it
                            auto done = std::move(it->second.done);
                            self->calls.erase(it);
                            done(std::move(r));
                          });
  }

  // ---------------------------------------------------------------- shutdown

  // Removes the server: no reconnect, no tools, its waiters fail, its session closes.
  void remove_server(const std::string& name) {
    Server* s = find(name);
    if (!s) return;
    const std::uint64_t attempt = s->attempt;
    s->attempt = 0;
    s->stage = Stage::idle;
    s->session.reset();
    retire(attempt);
    const bool had_slice = s->has_slice;
    auto attempt_waiters = std::move(s->attempt_done);
    const ServerPhase old_phase = s->phase;
    const SourceInfo source = s->config.source;
    servers.erase(name);  // its timers go with it
    disconnected_on_purpose.insert(name);
    Error gone = Error::make(ErrorCode::not_connected, server_prefix(name) + "was disconnected");
    for (auto& fn : attempt_waiters) post_fn([fn = std::move(fn), gone] { fn(Status(gone)); });
    settle_connection_waiters(name, Status(gone));
    if (had_slice) rebuild_tools();
    if (old_phase != ServerPhase::disconnected) {
      StatusEvent ev;
      ev.server = name;
      ev.phase = ServerPhase::disconnected;
      ev.source = source;
      emit_status(std::move(ev));
    }
  }

  // Removes `names` at once; `done` once every one of their sessions (live, connecting,
  // or still closing from earlier) has closed. Each close is independent of the others.
  void disconnect(const std::vector<std::string>& names, std::function<void()> done) {
    auto left = std::make_shared<int>(1);  // +1: the "all scheduled" tick below
    auto finish = std::make_shared<std::function<void()>>(std::move(done));
    std::weak_ptr<Impl> weak = weak_from_this();
    auto tick = [left, finish, weak] {
      if (--*left != 0) return;
      auto self = weak.lock();
      if (!self || self->destroyed || !*finish) return;
      auto f = std::move(*finish);
      *finish = nullptr;
      self->post_fn(std::move(f));
    };
    std::set<std::string> removed;
    for (const auto& name : names) {
      if (!find(name)) continue;
      remove_server(name);
      removed.insert(name);
    }
    for (auto& [id, conn] : conns) {
      if (!removed.count(conn->server)) continue;
      ++*left;
      conn->on_closed.push_back(tick);
    }
    tick();
  }

  void shutdown() {
    destroyed = true;
    gates.clear();
    // Tool calls and connection waits belong to tools, which may outlive the manager:
    // they end once, with `closed`, rather than never.
    const auto gone = [](const std::string& server) {
      return Error::make(ErrorCode::closed, server_prefix(server) + "the MCP manager shut down");
    };
    for (auto& [id, w] : waiters) {
      if (w->abort_listener) w->signal.remove_listener(w->abort_listener);
      ex().post([done = std::move(w->done), e = gone(w->server)] { done(Status(e)); });
    }
    waiters.clear();
    for (auto& [id, call] : calls) {
      ex().post([done = std::move(call.done), e = gone(call.server)] { done(e); });
    }
    calls.clear();
    for (auto& [name, s] : servers) {
      s->retry_timer.reset();
      s->health_timer.reset();
      s->debounce_timer.reset();
      s->session.reset();
    }
    // Destroying a session closes its transport at once (a stdio child is killed and
    // reaped); none of them calls back afterwards.
    for (auto& [id, conn] : conns) {
      if (conn->session) conn->session->close();
    }
    conns.clear();
    graveyard.clear();
    servers.clear();
    tools.clear();
    resolver.reset();
  }

  ManagerServices services;
  ManagerOptions options;
  NullLogger null_logger;
  Logger* logger = nullptr;
  std::shared_ptr<McpToolHost> host;
  std::unique_ptr<ConnectTimeResolver> resolver;
  std::shared_ptr<ToolCache> cache;

  bool destroyed = false;
  std::uint64_t epoch = 0;
  std::uint64_t next_attempt = 1;
  std::uint64_t next_waiter = 1;
  std::uint64_t next_listener = 1;

  std::map<std::string, std::unique_ptr<Server>> servers;
  std::set<std::string> disconnected_on_purpose;
  std::map<std::uint64_t, std::shared_ptr<Conn>> conns;
  std::vector<std::shared_ptr<ClientSession>> graveyard;
  std::vector<std::shared_ptr<Gate>> gates;
  std::map<std::uint64_t, std::unique_ptr<Waiter>> waiters;
  struct PendingCall {
    std::string server;
    std::function<void(Result<json>)> done;
  };
  std::map<std::uint64_t, PendingCall> calls;  // tools/call in flight
  std::uint64_t next_call = 1;
  std::vector<std::shared_ptr<McpTool>> tools;
  bool tools_changed_posted = false;
  std::map<std::uint64_t, std::function<void()>> tools_listeners;
  std::map<std::uint64_t, std::function<void(const StatusEvent&)>> status_listeners;
};

// ------------------------------------------------------------------ McpManager

McpManager::McpManager(ManagerServices services, ManagerOptions options)
    : impl_(std::make_shared<Impl>(std::move(services), std::move(options))) {
  impl_->init();
}

McpManager::~McpManager() {
  if (impl_) impl_->shutdown();
}

void McpManager::connect_servers(std::vector<ServerConfig> configs,
                                 std::function<void(GateResult)> done) {
  impl_->connect_servers(std::move(configs), std::move(done));
}

ConnectionStatus McpManager::connection_status(const std::string& name) const {
  const auto* s = impl_->find(name);
  return s ? Impl::status_of(*s) : ConnectionStatus::disconnected;
}

std::optional<ServerState> McpManager::server_state(const std::string& name) const {
  const auto* s = impl_->find(name);
  if (!s) return std::nullopt;
  return impl_->state_of(*s);
}

std::vector<ServerState> McpManager::server_states() const {
  std::vector<ServerState> out;
  for (const auto& [name, s] : impl_->servers) out.push_back(impl_->state_of(*s));
  return out;
}

std::map<std::string, SourceInfo> McpManager::sources() const {
  std::map<std::string, SourceInfo> out;
  for (const auto& [name, s] : impl_->servers) out.emplace(name, s->config.source);
  return out;
}

const std::vector<std::shared_ptr<McpTool>>& McpManager::tools() const { return impl_->tools; }

std::shared_ptr<McpTool> McpManager::find_tool(const std::string& name) const {
  auto it = std::lower_bound(impl_->tools.begin(), impl_->tools.end(), name,
                             [](const auto& t, const std::string& n) { return t->name() < n; });
  if (it != impl_->tools.end() && (*it)->name() == name) return *it;
  // build_mcp_tools promises sorted output; fall back to a scan if it ever is not.
  for (const auto& t : impl_->tools) {
    if (t->name() == name) return t;
  }
  return nullptr;
}

std::shared_ptr<ClientSession> McpManager::connection(const std::string& name) const {
  const auto* s = impl_->find(name);
  return s && s->stage == Impl::Stage::ready ? s->session : nullptr;
}

void McpManager::wait_for_connection(const std::string& name, AbortSignal signal,
                                     std::function<void(Status)> done) {
  impl_->wait_for_connection(name, std::move(signal), std::move(done));
}

void McpManager::reconnect_server(const std::string& name, std::function<void(Status)> done) {
  Impl& m = *impl_;
  auto* s = m.find(name);
  if (!s) {
    Error e = Error::make(ErrorCode::not_connected, server_prefix(name) + "unknown server");
    m.post_fn([done = std::move(done), e] {
      if (done) done(Status(e));
    });
    return;
  }
  if (s->last_error && s->last_error->code == ErrorCode::invalid_config) {
    Error e = *s->last_error;
    m.post_fn([done = std::move(done), e] {
      if (done) done(Status(e));
    });
    return;
  }
  s->circuit_open = false;
  s->closes.clear();
  s->attempts = 0;
  s->retry_timer.reset();
  s->health_timer.reset();
  s->debounce_timer.reset();
  s->relisting = false;
  s->relist_again = false;
  if (s->attempt) m.retire(s->attempt);
  s->session.reset();
  s->stage = Impl::Stage::idle;
  s->attempt = 0;
  if (done) s->attempt_done.push_back(std::move(done));
  m.mark_slice_deferred(*s);
  m.begin_attempt(*s, Impl::AttemptKind::initial);
}

void McpManager::disconnect_server(const std::string& name, std::function<void()> done) {
  impl_->disconnect({name}, std::move(done));
}

void McpManager::disconnect_all(std::function<void()> done) {
  Impl& m = *impl_;
  ++m.epoch;
  std::vector<std::string> names;
  for (const auto& [name, s] : m.servers) names.push_back(name);
  m.disconnect(std::move(names), std::move(done));
  // Every gate still open answers now with what it has (its servers are gone).
  m.check_gates();
}

std::uint64_t McpManager::on_tools_changed(std::function<void()> listener) {
  const auto id = impl_->next_listener++;
  impl_->tools_listeners.emplace(id, std::move(listener));
  return id;
}

std::uint64_t McpManager::on_status(std::function<void(const StatusEvent&)> listener) {
  const auto id = impl_->next_listener++;
  impl_->status_listeners.emplace(id, std::move(listener));
  return id;
}

void McpManager::remove_listener(std::uint64_t id) {
  impl_->tools_listeners.erase(id);
  impl_->status_listeners.erase(id);
}

std::shared_ptr<McpToolHost> McpManager::tool_host() const { return impl_->host; }

Executor& McpManager::executor() const { return *impl_->services.executor; }

}  // namespace mcprt
