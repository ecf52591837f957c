// McpManager (SPEC §5): the registry of servers and the startup gate over them. Each
// server's own lifecycle — connect, list, reconnect with backoff and a circuit breaker,
// health pings, list_changed re-listing — is its ServerLink (server_link.hpp); the manager
// fans out to the links, merges their tool slices into one sorted tool set, answers
// connection waiters and tool calls, tracks every session until it has closed, and
// publishes status and tools-changed events.
//
// Everything runs on services.executor. Callbacks handed to sessions, timers and the
// executor hold only a weak reference to Impl (or to a link), so nothing runs after the
// manager is gone. disconnect_all bumps an epoch, so a connect that finishes after its
// server was disconnected is recognised as stale and closed.

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

#include "mcprt/manager.hpp"
#include "server_link.hpp"
#include "tools/tool_set.hpp"
#include "util/local_error.hpp"

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
    case ServerPhase::needs_auth: return "needs-auth";
  }
  return "unknown";
}

const char* to_string(CatalogKind kind) {
  switch (kind) {
    case CatalogKind::resources: return "resources";
    case CatalogKind::resource_templates: return "resource templates";
    case CatalogKind::prompts: return "prompts";
  }
  return "unknown";
}

using detail::named;
using detail::server_prefix;
using detail::ServerLink;

namespace {

// A request failed because the server's authorization is gone (a refresh the user must
// replace), not because one request wants more scopes (a 403 step-up: data.status 403).
bool authorization_gone(const Error& e) {
  if (detail::local_code(e) != ErrorCode::needs_auth) return false;
  if (!e.data.is_object()) return true;
  const auto status = e.data.find("status");
  return status == e.data.end() || !status->is_number_integer() || status->get<int>() != 403;
}

// RFC 6570 simple expansion matched backwards: each {var} (or {a,b}) takes one or more
// characters other than '/', a {+var} or {#var} one or more of any; literals match as is.
// Templates with other operators ({?q}, {/p}, ...) match nothing. The template is a
// server's: matched token by token over the set of URI positions reachable so far, so the
// time is O(tokens × URI length) and nothing recurses, whatever the template holds.
bool uri_template_matches(std::string_view tmpl, std::string_view uri) {
  const std::size_t n = uri.size();
  // One byte per URI position, 1 when reachable (std::string: the web module has no
  // std::vector<bool> otherwise, whose bit iterators cost it ~1 KB).
  std::string at(n + 1, '\0'), next(n + 1, '\0');
  at[0] = 1;
  while (!tmpl.empty()) {
    std::fill(next.begin(), next.end(), '\0');
    if (tmpl.front() != '{') {
      const std::size_t brace = std::min(tmpl.find('{'), tmpl.size());
      const std::string_view literal = tmpl.substr(0, brace);
      for (std::size_t i = 0; i + literal.size() <= n; ++i) {
        if (at[i] && uri.substr(i, literal.size()) == literal) next[i + literal.size()] = 1;
      }
      tmpl.remove_prefix(brace);
    } else {
      const std::size_t close = tmpl.find('}');
      if (close == std::string_view::npos || close < 2) return false;
      const char op = tmpl[1];
      const bool reserved = op == '+' || op == '#';
      if (!reserved && !(std::isalnum(static_cast<unsigned char>(op)) || op == '_' || op == '%')) {
        return false;
      }
      // next[j]: some reachable i < j whose run uri[i, j) is allowed (no '/' unless reserved).
      bool open = false;
      for (std::size_t j = 1; j <= n; ++j) {
        open = open || at[j - 1];
        if (!reserved && uri[j - 1] == '/') open = false;
        next[j] = open ? 1 : 0;
      }
      tmpl.remove_prefix(close + 1);
    }
    at.swap(next);
  }
  return at[n] != 0;
}

}  // namespace

struct McpManager::Impl final : detail::LinkOwner, std::enable_shared_from_this<Impl> {
  using Stage = ServerLink::Stage;
  using CacheState = ServerLink::CacheState;
  using AttemptKind = ServerLink::AttemptKind;

  // One live or closing ClientSession, keyed by the attempt that created it. Sessions
  // outlive their link while they close (disconnect waits for that).
  struct Conn {
    std::uint64_t id = 0;
    std::string server;
    std::shared_ptr<ClientSession> session;
    bool close_seen = false;  // the session's on_close already fired
    bool retired = false;     // closed on purpose; dropped once on_close fires
    std::vector<std::function<void()>> on_closed;
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

  Impl(ManagerServices s, ManagerOptions o) : services_(std::move(s)), options_(std::move(o)) {
    logger_ = services_.logger ? services_.logger : &null_logger;
  }

  void init() {
    host = std::make_shared<Host>(weak_from_this(), *services_.executor);
    tool_set = std::make_unique<detail::ToolSet>(*services_.executor, host, options_.tools);
    resolver_ = std::make_unique<ConnectTimeResolver>(*services_.executor, services_.shell_runner,
                                                      services_.env, services_.logger);
    if (services_.cache_store && services_.wall_clock) {
      cache_ = std::make_shared<ToolCache>(*services_.cache_store, services_.wall_clock,
                                           services_.logger);
    }
  }

  Executor& ex() { return *services_.executor; }

  // ---------------------------------------------------------------- LinkOwner

  Executor& executor() override { return *services_.executor; }
  const ManagerServices& services() const override { return services_; }
  const ManagerOptions& options() const override { return options_; }
  Logger& logger() override { return *logger_; }
  ConnectTimeResolver& resolver() override { return *resolver_; }
  const std::shared_ptr<ToolCache>& cache() const override { return cache_; }
  std::uint64_t new_attempt_id() override { return next_attempt++; }
  std::uint64_t epoch() const override { return epoch_; }

  void adopt_session(std::uint64_t attempt, const std::string& server,
                     std::shared_ptr<ClientSession> session) override {
    auto conn = std::make_shared<Conn>();
    conn->id = attempt;
    conn->server = server;
    conn->session = std::move(session);
    conns[attempt] = std::move(conn);
  }

  void retire_session(std::uint64_t attempt) override { retire(attempt); }

  std::function<void(const Error&)> session_close_handler(std::uint64_t attempt) override {
    return [weak = weak_from_this(), attempt](const Error& error) {
      auto self = weak.lock();
      if (!self || self->destroyed) return;
      self->on_session_closed(attempt, error);
    };
  }

  void post(std::function<void()> fn) override { post_fn(std::move(fn)); }

  void phase_changed(const ServerLink& link, const std::optional<Error>& error) override {
    if (link.phase() == ServerPhase::connected) resubscribe(link);
    StatusEvent ev;
    ev.server = link.name();
    ev.phase = link.phase();
    ev.error = error;
    ev.source = link.config().source;
    ev.tool_count = tool_count(link.name());
    emit_status(std::move(ev));
  }

  void slice_changed(const ServerLink& link) override {
    update_slice(link);
    fire_tools_changed();
  }
  void link_settled() override { check_gates(); }

  void catalog_changed(const ServerLink& link, CatalogKind kind) override {
    mark_catalog_changed(link.name(), kind);
  }

  void session_renewed(const ServerLink& link) override { resubscribe(link); }

  void resource_updated(const ServerLink& link, const json& params) override {
    auto uri = params.is_object() ? params.find("uri") : params.end();
    if (!params.is_object() || uri == params.end() || !uri->is_string()) return;
    // Each subscriber's callback is posted: it may unsubscribe, or anything else.
    for (const auto& [id, sub] : subscriptions) {
      if (sub.server != link.name() || sub.uri != uri->get_ref<const std::string&>()) continue;
      post_fn([weak = weak_from_this(), id = id, params] {
        auto self = weak.lock();
        if (!self) return;
        auto it = self->subscriptions.find(id);
        if (it != self->subscriptions.end() && it->second.on_updated) it->second.on_updated(params);
      });
    }
  }
  void connection_settled(const std::string& server, const Status& status) override {
    settle_connection_waiters(server, status);
  }

  // Failures inside an open gate are reported by the gate; later ones are logged.
  bool gate_reports(const std::string& name) const override {
    for (const auto& g : gates) {
      if (std::find(g->names.begin(), g->names.end(), name) != g->names.end()) return true;
    }
    return false;
  }

  // ---------------------------------------------------------------- lookups

  ServerLink* find(const std::string& name) {
    auto it = servers.find(name);
    return it == servers.end() ? nullptr : it->second.get();
  }
  const ServerLink* find(const std::string& name) const {
    auto it = servers.find(name);
    return it == servers.end() ? nullptr : it->second.get();
  }

  std::size_t tool_count(const std::string& name) const { return tool_set->count(name); }

  ServerState state_of(const ServerLink& s) const {
    ServerState st = s.state(tool_count(s.name()));
    st.resource_count = s.catalog(CatalogKind::resources).size();
    st.resource_template_count = s.catalog(CatalogKind::resource_templates).size();
    st.prompt_count = s.catalog(CatalogKind::prompts).size();
    return st;
  }

  // ---------------------------------------------------------------- catalogs

  const std::vector<CatalogEntry>& catalog(CatalogKind kind) {
    const auto k = static_cast<std::size_t>(kind);
    if (catalog_dirty[k]) {
      // The links are sorted by name and each catalog by its key: merged, not sorted.
      std::vector<CatalogEntry> merged;
      for (const auto& [name, link] : servers) {
        const bool from_cache = link->catalog_from_cache(kind);
        for (const SharedJson& entry : link->catalog(kind)) {
          merged.push_back(CatalogEntry{name, entry, from_cache});
        }
      }
      catalogs[k] = std::move(merged);
      catalog_dirty[k] = false;
    }
    return catalogs[k];
  }

  void mark_catalog_changed(const std::string& server, CatalogKind kind) {
    catalog_dirty[static_cast<std::size_t>(kind)] = true;
    if (catalog_listeners.empty()) return;
    // One event per (server, kind) per executor turn.
    if (!catalog_events.insert({server, kind}).second || catalog_events.size() > 1) return;
    post_fn([weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self) return;
      auto events = std::move(self->catalog_events);
      self->catalog_events.clear();
      for (const auto& [server, kind] : events) {
        auto listeners = self->catalog_listeners;
        for (auto& [id, fn] : listeners) {
          if (self->destroyed) return;
          if (self->catalog_listeners.count(id) && fn) fn(server, kind);
        }
      }
    });
  }

  // ---------------------------------------------------------------- resource subscriptions

  struct Subscription {
    std::string server;
    std::string uri;
    std::function<void(const json&)> on_updated;
    std::function<void(Status)> first_done;  // until the first subscribe's answer
    std::function<void(const Error&)> on_ended;
  };

  // The server connected: every uri subscribed on it is subscribed on the new session.
  void resubscribe(const ServerLink& link) {
    std::set<std::string> uris;
    for (const auto& [id, sub] : subscriptions) {
      if (sub.server == link.name()) uris.insert(sub.uri);
    }
    for (const auto& uri : uris) send_subscribe(link, uri);
  }

  void send_subscribe(const ServerLink& link, const std::string& uri) {
    if (!link.session()) return;
    link.session()->subscribe_resource(
        uri, [weak = weak_from_this(), server = link.name(), uri](Status st) {
          auto self = weak.lock();
          if (!self || self->destroyed) return;
          self->subscribed(server, uri, std::move(st), /*sent=*/true);
        });
  }

  // The answer to a resources/subscribe (`sent`), or a subscription joining one the live
  // session has already: the subscriptions still waiting for their first answer learn it,
  // and refused ones (no such capability, an unknown resource) end there. The others were
  // subscribed on an earlier session and were sent again on a new one: taken, they get an
  // update ({uri, resubscribed: true}: whatever changed while no session was subscribed
  // was never notified); refused by the server, they end through on_ended. A failure of
  // the connection itself leaves them for the next one.
  void subscribed(const std::string& server, const std::string& uri, Status st, bool sent) {
    std::vector<std::function<void(Status)>> told;
    std::vector<std::uint64_t> renewed;
    std::vector<std::function<void(const Error&)>> ended;
    bool again = false;  // subscriptions of an earlier session were among them
    const bool refused = !st.ok() && (st.error().code == ErrorCode::wire ||
                                      st.error().code == ErrorCode::invalid_argument);
    for (auto it = subscriptions.begin(); it != subscriptions.end();) {
      Subscription& sub = it->second;
      if (sub.server != server || sub.uri != uri) {
        ++it;
        continue;
      }
      const bool first = static_cast<bool>(sub.first_done);
      if (first) {
        told.push_back(std::move(sub.first_done));
        sub.first_done = nullptr;
        it = st.ok() ? std::next(it) : subscriptions.erase(it);
        continue;
      }
      again = true;
      if (sent && st.ok()) {
        renewed.push_back(it->first);
        ++it;
      } else if (sent && refused) {
        if (sub.on_ended) ended.push_back(std::move(sub.on_ended));
        it = subscriptions.erase(it);
      } else {
        ++it;
      }
    }
    if (sent && !st.ok() && again) {
      logger().warn(named(server, st.error()).message + " (subscribing again to " + uri +
                    (refused ? "; the subscription ended)" : ")"));
    }
    for (auto& fn : told) post_fn([fn = std::move(fn), st] { fn(st); });
    if (!ended.empty()) {
      Error why = named(server, st.error());
      why.message += " (subscribing again to " + uri + " on a new session)";
      for (auto& fn : ended) post_fn([fn = std::move(fn), why] { fn(why); });
    }
    for (std::uint64_t id : renewed) {
      post_fn([weak = weak_from_this(), id, update = json{{"uri", uri}, {"resubscribed", true}}] {
        auto self = weak.lock();
        if (!self) return;
        auto it = self->subscriptions.find(id);
        if (it != self->subscriptions.end() && it->second.on_updated) it->second.on_updated(update);
      });
    }
  }

  std::uint64_t subscribe_resource(const std::string& server, const std::string& uri,
                                   std::function<void(const json&)> on_updated,
                                   std::function<void(Status)> done,
                                   std::function<void(const Error&)> on_ended) {
    const std::uint64_t id = next_listener++;
    Subscription sub{server, uri, std::move(on_updated), std::move(done), std::move(on_ended)};
    if (!sub.first_done) sub.first_done = [](Status) {};
    bool already = false;  // the live session has this uri subscribed
    for (const auto& [other_id, other] : subscriptions) {
      if (other.server == server && other.uri == uri && !other.first_done) already = true;
    }
    subscriptions.emplace(id, std::move(sub));
    ServerLink* link = find(server);
    if (link && link->stage() == Stage::ready) {
      if (already) {
        subscribed(server, uri, Status(), /*sent=*/false);
      } else {
        send_subscribe(*link, uri);
      }
      return id;
    }
    // Not connected (yet): the subscription is sent when it connects (resubscribe); a wait
    // that fails ends it with that failure.
    wait_for_connection(server, AbortSignal(), [weak = weak_from_this(), id](Status st) {
      auto self = weak.lock();
      if (!self || st.ok()) return;
      auto it = self->subscriptions.find(id);
      if (it == self->subscriptions.end() || !it->second.first_done) return;
      auto done = std::move(it->second.first_done);
      self->subscriptions.erase(it);
      done(std::move(st));
    });
    return id;
  }

  void unsubscribe_resource(std::uint64_t id) {
    auto it = subscriptions.find(id);
    if (it == subscriptions.end()) return;
    const std::string server = it->second.server;
    const std::string uri = it->second.uri;
    subscriptions.erase(it);
    for (const auto& [other_id, other] : subscriptions) {
      if (other.server == server && other.uri == uri) return;  // still wanted
    }
    ServerLink* link = find(server);
    if (!link || link->stage() != Stage::ready || !link->session()) return;
    link->session()->unsubscribe_resource(uri, [weak = weak_from_this(), server, uri](Status st) {
      auto self = weak.lock();
      if (!self || self->destroyed || st.ok()) return;
      self->logger().debug(named(server, st.error()).message + " (unsubscribing from " + uri + ")");
    });
  }

  // ---------------------------------------------------------------- events

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

  // That server's part of the tool set follows its link's slice: O(its own tools), the
  // other servers' tool objects untouched (SPEC §5.3).
  void update_slice(const ServerLink& link) {
    if (link.has_slice()) {
      tool_set->replace(link.name(), &link.config(), link.config().source, link.definitions(),
                        link.slice_deferred());
    } else {
      tool_set->remove(link.name());
    }
  }

  // ---------------------------------------------------------------- connect_servers

  void connect_servers(std::vector<ServerConfig> configs, std::function<void(GateResult)> done) {
    auto gate = std::make_shared<Gate>();
    gate->done = std::move(done);
    const ValidationOptions validation{services_.process_launcher != nullptr ||
                                       static_cast<bool>(services_.transport_factory)};
    for (auto& cfg : configs) {
      const std::string name = cfg.name;
      if (std::find(gate->names.begin(), gate->names.end(), name) != gate->names.end()) continue;
      gate->names.push_back(name);
      disconnected_on_purpose.erase(name);
      disconnected_rows.erase(name);
      ServerLink* s = find(name);
      if (s && s->pending()) {
        // Connected or pending: skipped; only its source metadata is refreshed.
        s->update_source(cfg.source);
        continue;
      }
      if (!s) {
        auto fresh = std::make_shared<ServerLink>(*this, name);
        s = fresh.get();
        servers.emplace(name, std::move(fresh));
      }
      s->update_config(std::move(cfg));
      // A new connect_servers resets an open circuit and the outage's counters.
      s->reset_outage();

      if (Status valid = validate_server_config(s->config(), validation); !valid) {
        Error e = named(name, std::move(valid).error());
        gate->early_errors[name] = e;
        s->fail_invalid(e);
        continue;
      }
      if (!s->has_slice()) s->start_cache_load();
      s->begin_attempt(AttemptKind::initial);
    }
    gates.push_back(gate);
    gate->timer = ScopedTimer(
        ex(), ex().post_after(std::max(options_.startup_gate, Millis(0)),
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

  // ---------------------------------------------------------------- the gate

  enum class Settle { settled, deferred, uncached, undecided };

  Settle settle_state(const std::string& name, bool timer_fired) const {
    const ServerLink* s = find(name);
    if (!s) return Settle::settled;  // disconnected meanwhile
    if (s->stage() == Stage::ready) return Settle::settled;
    if (!s->pending()) {
      // A needs-auth server keeps its cached tools: the gate waits for the cache read.
      if (s->phase() == ServerPhase::needs_auth && s->cache_state() == CacheState::loading) {
        return Settle::undecided;
      }
      return Settle::settled;
    }
    if (!timer_fired) return Settle::undecided;
    switch (s->cache_state()) {
      case CacheState::loading: return Settle::undecided;
      case CacheState::hit: return Settle::deferred;
      default: break;
    }
    // A server reconnecting with its tools already registered (deferred) needs no cache.
    if (s->has_slice()) return Settle::deferred;
    return Settle::uncached;
  }

  void check_gates() {
    if (destroyed || gates.empty()) return;
    auto open = gates;
    for (auto& gate : open) {
      bool ready = true;
      for (const auto& name : gate->names) {
        Settle st = settle_state(name, gate->timer_fired);
        if (st == Settle::undecided || (st == Settle::uncached && options_.wait_for_uncached)) {
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
      ServerLink* s = find(name);
      if (!s) continue;
      if (s->stage() == Stage::ready) {
        r.connected.push_back(name);
        continue;
      }
      if (s->phase() == ServerPhase::needs_auth) {
        if (s->install_cached_slice()) {
          update_slice(*s);
          installed = true;
        }
        r.needs_auth.push_back(name);
        if (!r.errors.count(name)) r.errors[name] = s->needs_auth_error();
        continue;
      }
      if (!s->pending()) {
        if (!r.errors.count(name)) {
          r.errors[name] = s->last_error() ? *s->last_error()
                                           : Error::make(ErrorCode::not_connected,
                                                         server_prefix(name) + "not connected");
        }
        continue;
      }
      if (s->install_cached_slice()) {
        update_slice(*s);
        installed = true;
      }
      if (s->has_slice()) {
        r.deferred.push_back(name);
      } else {
        r.pending.push_back(name);
      }
    }
    if (installed) fire_tools_changed();  // one event for every slice the gate installed
    r.tools = tool_set->tools();
    ex().post([weak = weak_from_this(), done = std::move(gate->done), r = std::move(r)]() mutable {
      auto self = weak.lock();
      if (!self || self->destroyed || !done) return;
      done(std::move(r));
    });
  }

  // ---------------------------------------------------------------- closing sessions

  void on_session_closed(std::uint64_t attempt, const Error& error) {
    auto it = conns.find(attempt);
    if (it == conns.end()) return;
    auto conn = it->second;
    conn->close_seen = true;
    if (conn->retired) {
      bury(attempt);
      return;
    }
    if (ServerLink* s = find(conn->server)) s->on_session_closed(attempt, error);
  }

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

  // `limit` bounds the wait when it is shorter than the server's timeout (a tool call's
  // own deadline).
  void wait_for_connection(const std::string& name, AbortSignal signal,
                           std::function<void(Status)> done, Millis limit = Millis(0)) {
    auto fail_now = [&](Error e) { post_fn([done, e] { done(Status(e)); }); };
    if (signal.aborted()) {
      return fail_now(Error::make(ErrorCode::aborted, server_prefix(name) +
                                                          "wait for connection aborted"));
    }
    ServerLink* s = find(name);
    if (!s) {
      if (disconnected_on_purpose.count(name)) {
        return fail_now(Error::make(ErrorCode::not_connected,
                                    server_prefix(name) + "was disconnected; reload to reconnect"));
      }
      return fail_now(Error::make(ErrorCode::not_connected, server_prefix(name) + "unknown server"));
    }
    if (s->stage() == Stage::ready) return post_fn([done] { done(Status()); });
    if (s->circuit_open()) return fail_now(s->circuit_error());
    if (s->stage() == Stage::idle) {
      if (s->last_error() && s->last_error()->code == ErrorCode::invalid_config) {
        return fail_now(*s->last_error());
      }
      // Only a login changes this; another attempt now would ask for it again.
      if (s->phase() == ServerPhase::needs_auth) return fail_now(s->needs_auth_error());
      if (!s->config().reconnect.enabled) {
        if (s->phase() == ServerPhase::disconnected) return fail_now(s->disconnected_error());
        return fail_now(s->last_error() ? *s->last_error()
                                        : Error::make(ErrorCode::not_connected,
                                                      server_prefix(name) + "is not connected"));
      }
      if (s->phase() == ServerPhase::reconnecting) {
        // A retry is scheduled: someone needs the server now, so try at once.
        s->begin_attempt(AttemptKind::retry);
      } else {
        // Failed (or max attempts reached): one more attempt for this caller.
        s->reset_attempts();
        s->begin_attempt(AttemptKind::initial);
      }
    }
    const std::uint64_t id = next_waiter++;
    auto w = std::make_unique<Waiter>();
    w->server = name;
    w->done = std::move(done);
    w->signal = signal;
    Millis timeout = s->timeout();
    if (limit > Millis(0) && (timeout <= Millis(0) || limit < timeout)) timeout = limit;
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
        if (const ServerLink* s = self->find(name)) {
          m += std::string(" (") + to_string(s->phase());
          if (s->last_error()) m += ": " + s->last_error()->message;
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

  // The call's deadline: its own, else the server's toolTimeout, else the host default;
  // a deadline gets the total cap unless the call brings one.
  void resolve_call_timeouts(const ServerLink& s, CallOptions& call) const {
    if (call.timeout == Millis(0)) {
      call.timeout = s.config().tool_timeout_ms ? Millis(*s.config().tool_timeout_ms)
                                                : options_.default_tool_timeout;
    }
    if (call.timeout > Millis(0) && call.max_total_timeout == Millis(0)) {
      call.max_total_timeout = options_.max_tool_call_total;
    }
  }

  // One request of a host on a server's live session (tools/call, resources/read, ...).
  using SessionRequest = std::function<void(ClientSession& session, CallOptions call,
                                            std::function<void(Result<json>)> done)>;

  // A call made during an outage: wait for the reconnect within the call's deadline, then
  // call with what is left of it.
  void call_after_reconnect(const std::string& name, const char* method, SessionRequest request,
                            CallOptions call, std::function<void(Result<json>)> done) {
    const TimePoint started = ex().now();
    const Millis budget = call.timeout;
    AbortSignal signal = call.signal;
    wait_for_connection(
        name, std::move(signal),
        [weak = weak_from_this(), name, method, request = std::move(request),
         call = std::move(call), done = std::move(done), started, budget](Status st) mutable {
          auto self = weak.lock();
          if (!self || self->destroyed) {
            return done(Error::make(ErrorCode::closed,
                                    server_prefix(name) + "the MCP manager shut down"));
          }
          if (!st.ok()) return done(std::move(st).error());
          if (budget > Millis(0)) {
            const Millis left =
                std::chrono::duration_cast<Millis>(budget - (self->ex().now() - started));
            if (left <= Millis(0)) {
              return done(Error::make(ErrorCode::timeout,
                                      server_prefix(name) + "Request " + method +
                                          " timed out after " + std::to_string(budget.count()) +
                                          " ms (waiting for the server to reconnect)"));
            }
            call.timeout = left;
          }
          self->session_request(name, method, std::move(request), std::move(call),
                                std::move(done));
        },
        budget);
  }

  void call_tool(const std::string& name, const std::string& raw_tool, json arguments,
                 CallOptions call, std::function<void(Result<json>)> done) {
    session_request(
        name, "tools/call",
        [raw_tool, arguments = std::move(arguments)](ClientSession& session, CallOptions call,
                                                     std::function<void(Result<json>)> done) mutable {
          session.call_tool(raw_tool, std::move(arguments), std::move(call), std::move(done));
        },
        std::move(call), std::move(done));
  }

  // `request` on the server's live session: a server connecting or reconnecting is waited
  // for; one that is not there (unknown, failed, needs auth, down) fails at once.
  void session_request(const std::string& name, const char* method, SessionRequest request,
                       CallOptions call, std::function<void(Result<json>)> done) {
    ServerLink* s = find(name);
    if (s && s->stage() != Stage::ready && s->pending() && !s->circuit_open()) {
      resolve_call_timeouts(*s, call);
      return call_after_reconnect(name, method, std::move(request), std::move(call),
                                  std::move(done));
    }
    if (!s || s->stage() != Stage::ready || !s->session()) {
      Error e = !s ? Error::make(ErrorCode::not_connected,
                                 server_prefix(name) + (disconnected_on_purpose.count(name)
                                                            ? "was disconnected"
                                                            : "is not connected (unknown server)"))
            : s->circuit_open() ? s->circuit_error()
            : s->phase() == ServerPhase::needs_auth ? s->needs_auth_error()
            : (!s->config().reconnect.enabled && s->phase() == ServerPhase::disconnected)
                ? s->disconnected_error()
                : Error::make(ErrorCode::not_connected,
                              server_prefix(name) + "is not connected (" + to_string(s->phase()) +
                                  (s->last_error() ? ": " + s->last_error()->message : "") + ")");
      ex().post([done = std::move(done), e = std::move(e)] { done(e); });
      return;
    }
    resolve_call_timeouts(*s, call);
    // Registered so that shutdown() can answer it: a destroyed session never calls back.
    const std::uint64_t id = next_call++;
    calls.emplace(id, PendingCall{name, std::move(done)});
    const ClientSession* session = s->session().get();
    request(*s->session(), std::move(call), [weak = weak_from_this(), id, session](Result<json> r) {
                              auto self = weak.lock();
                              if (!self) return;
                              auto it = self->calls.find(id);
                              if (it == self->calls.end()) return;  // shutdown() answered it
                              auto done = std::move(it->second.done);
                              const std::string server = it->second.server;
                              self->calls.erase(it);
                              if (!r && authorization_gone(r.error())) {
                                if (ServerLink* link = self->find(server)) {
                                  link->authorization_lost(session, r.error());
                                }
                              }
                              done(std::move(r));
                            });
  }

  // ---------------------------------------------------------------- shutdown

  // Removes the server's link: no reconnect, no tools, its waiters fail, its session
  // closes. `keep_row`: it stays listed as a `disconnected` row (disconnect_server).
  void drop_link(const std::string& name, bool keep_row) {
    auto it = servers.find(name);
    if (it == servers.end()) return;
    std::shared_ptr<ServerLink> link = it->second;
    if (keep_row) {
      ServerState row;
      row.name = name;
      row.since = ex().now();
      row.source = link->config().source;
      row.config_hash = link->hash();
      disconnected_rows.emplace(name, std::move(row));  // no row while the link exists
    }
    auto attempt_waiters = link->detach();
    const bool had_slice = link->has_slice();
    std::vector<CatalogKind> had_catalog;
    for (CatalogKind kind : {CatalogKind::resources, CatalogKind::resource_templates,
                             CatalogKind::prompts}) {
      if (!link->catalog(kind).empty()) had_catalog.push_back(kind);
    }
    const ServerPhase old_phase = link->phase();
    const SourceInfo source = link->config().source;
    servers.erase(it);  // its timers go with it
    disconnected_on_purpose.insert(name);
    Error gone = Error::make(ErrorCode::not_connected, server_prefix(name) + "was disconnected");
    for (auto& fn : attempt_waiters) post_fn([fn = std::move(fn), gone] { fn(Status(gone)); });
    settle_connection_waiters(name, Status(gone));
    if (had_slice) {
      tool_set->remove(name);
      fire_tools_changed();
    }
    for (CatalogKind kind : had_catalog) mark_catalog_changed(name, kind);
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
  // `keep_rows`: each stays a `disconnected` row; otherwise it is forgotten.
  void disconnect(const std::vector<std::string>& names, bool keep_rows,
                  std::function<void()> done) {
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
      if (!keep_rows) disconnected_rows.erase(name);
      if (!find(name)) continue;
      drop_link(name, keep_rows);
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
    subscriptions.clear();
    catalog_listeners.clear();
    // A reconnect_server still waiting for its attempt ends too.
    for (auto& [name, s] : servers) {
      for (auto& fn : s->shut_down()) ex().post([fn = std::move(fn), e = gone(name)] { fn(Status(e)); });
    }
    // Destroying a session closes its transport at once (a stdio child is killed and
    // reaped); none of them calls back afterwards.
    for (auto& [id, conn] : conns) {
      if (conn->session) conn->session->close();
    }
    conns.clear();
    graveyard.clear();
    servers.clear();
    tool_set->clear();  // no event: nobody may be told anything once the manager is gone
    resolver_.reset();
  }

  ManagerServices services_;
  ManagerOptions options_;
  NullLogger null_logger;
  Logger* logger_ = nullptr;
  std::shared_ptr<McpToolHost> host;
  std::unique_ptr<ConnectTimeResolver> resolver_;
  std::shared_ptr<ToolCache> cache_;

  bool destroyed = false;
  std::uint64_t epoch_ = 0;
  std::uint64_t next_attempt = 1;
  std::uint64_t next_waiter = 1;
  std::uint64_t next_listener = 1;

  std::map<std::string, std::shared_ptr<ServerLink>> servers;
  std::set<std::string> disconnected_on_purpose;  // for the errors of later calls
  // disconnect_server's rows; a name is never both here and in `servers`.
  std::map<std::string, ServerState> disconnected_rows;
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
  std::unique_ptr<detail::ToolSet> tool_set;
  bool tools_changed_posted = false;
  std::map<std::uint64_t, std::function<void()>> tools_listeners;
  std::map<std::uint64_t, std::function<void(const StatusEvent&)>> status_listeners;
  std::map<std::uint64_t, std::function<void(const std::string&, CatalogKind)>> catalog_listeners;
  std::set<std::pair<std::string, CatalogKind>> catalog_events;  // posted, not yet told
  std::array<std::vector<CatalogEntry>, 3> catalogs;               // merged, by CatalogKind
  std::array<bool, 3> catalog_dirty{true, true, true};
  std::map<std::uint64_t, Subscription> subscriptions;
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
  return s ? s->status() : ConnectionStatus::disconnected;
}

std::string McpManager::instructions(const std::string& name) const {
  const auto* s = impl_->find(name);
  return s ? s->instructions() : std::string();
}

const ServerConfig* McpManager::server_config(const std::string& name) const {
  const auto* s = impl_->find(name);
  return s ? &s->config() : nullptr;
}

std::optional<ServerState> McpManager::server_state(const std::string& name) const {
  if (const auto* s = impl_->find(name)) return impl_->state_of(*s);
  auto row = impl_->disconnected_rows.find(name);
  if (row != impl_->disconnected_rows.end()) return row->second;
  return std::nullopt;
}

std::vector<ServerState> McpManager::server_states() const {
  // Both maps are sorted by name and never share one: merged, not sorted (no std::sort of
  // ServerState in the web module).
  std::vector<ServerState> out;
  auto row = impl_->disconnected_rows.begin();
  const auto rows_end = impl_->disconnected_rows.end();
  for (const auto& [name, s] : impl_->servers) {
    for (; row != rows_end && row->first < name; ++row) out.push_back(row->second);
    out.push_back(impl_->state_of(*s));
  }
  for (; row != rows_end; ++row) out.push_back(row->second);
  return out;
}

std::map<std::string, SourceInfo> McpManager::sources() const {
  std::map<std::string, SourceInfo> out;
  for (const auto& [name, s] : impl_->servers) out.emplace(name, s->config().source);
  return out;
}

const std::vector<std::shared_ptr<McpTool>>& McpManager::tools() const {
  return impl_->tool_set->tools();
}

std::shared_ptr<McpTool> McpManager::find_tool(const std::string& name) const {
  return impl_->tool_set->find(name);
}

std::shared_ptr<ClientSession> McpManager::connection(const std::string& name) const {
  const auto* s = impl_->find(name);
  return s && s->stage() == Impl::Stage::ready ? s->session() : nullptr;
}

const std::vector<CatalogEntry>& McpManager::catalog(CatalogKind kind) const {
  return impl_->catalog(kind);
}
std::vector<CatalogEntry> McpManager::resources() const {
  return impl_->catalog(CatalogKind::resources);
}
std::vector<CatalogEntry> McpManager::resource_templates() const {
  return impl_->catalog(CatalogKind::resource_templates);
}
std::vector<CatalogEntry> McpManager::prompts() const {
  return impl_->catalog(CatalogKind::prompts);
}

std::string McpManager::server_for_resource(const std::string& uri) const {
  for (const CatalogEntry& e : impl_->catalog(CatalogKind::resources)) {
    if (*e.definition.find("uri") == uri) return e.server;
  }
  for (const CatalogEntry& e : impl_->catalog(CatalogKind::resource_templates)) {
    if (uri_template_matches(e.definition.find("uriTemplate")->get_ref<const std::string&>(), uri)) {
      return e.server;
    }
  }
  return {};
}

void McpManager::read_resource(const std::string& server, const std::string& uri,
                               CallOptions options, std::function<void(Result<json>)> done) {
  impl_->session_request(
      server, "resources/read",
      [uri](ClientSession& session, CallOptions call, std::function<void(Result<json>)> done) {
        session.read_resource(uri, std::move(call), std::move(done));
      },
      std::move(options), std::move(done));
}

void McpManager::get_prompt(const std::string& server, const std::string& name, json arguments,
                            CallOptions options, std::function<void(Result<json>)> done) {
  impl_->session_request(
      server, "prompts/get",
      [name, arguments = std::move(arguments)](ClientSession& session, CallOptions call,
                                               std::function<void(Result<json>)> done) {
        session.get_prompt(name, arguments, std::move(call), std::move(done));
      },
      std::move(options), std::move(done));
}

void McpManager::complete(const std::string& server, json ref, const std::string& argument,
                          const std::string& value, json context, CallOptions options,
                          std::function<void(Result<json>)> done) {
  impl_->session_request(
      server, "completion/complete",
      [ref = std::move(ref), argument, value, context = std::move(context)](
          ClientSession& session, CallOptions call, std::function<void(Result<json>)> done) {
        session.complete(ref, argument, value, context, std::move(call), std::move(done));
      },
      std::move(options), std::move(done));
}

std::uint64_t McpManager::subscribe_resource(const std::string& server, const std::string& uri,
                                             std::function<void(const json& params)> on_updated,
                                             std::function<void(Status)> done,
                                             std::function<void(const Error&)> on_ended) {
  return impl_->subscribe_resource(server, uri, std::move(on_updated), std::move(done),
                                   std::move(on_ended));
}

void McpManager::unsubscribe_resource(std::uint64_t id) { impl_->unsubscribe_resource(id); }

void McpManager::wait_for_connection(const std::string& name, AbortSignal signal,
                                     std::function<void(Status)> done) {
  impl_->wait_for_connection(name, std::move(signal), std::move(done));
}

void McpManager::reconnect_server(const std::string& name, std::function<void(Status)> done) {
  Impl& m = *impl_;
  auto* s = m.find(name);
  std::optional<Error> refused;
  if (!s) {
    refused = Error::make(ErrorCode::not_connected,
                          server_prefix(name) + (m.disconnected_on_purpose.count(name)
                                                     ? "was disconnected; reload to reconnect"
                                                     : "unknown server"));
  } else if (s->last_error() && s->last_error()->code == ErrorCode::invalid_config) {
    refused = *s->last_error();
  }
  if (refused) {
    m.post_fn([done = std::move(done), e = *refused] {
      if (done) done(Status(e));
    });
    return;
  }
  s->reconnect_now(std::move(done));
}

void McpManager::disconnect_server(const std::string& name, std::function<void()> done) {
  impl_->disconnect({name}, /*keep_rows=*/true, std::move(done));
}

void McpManager::remove_server(const std::string& name, std::function<void()> done) {
  impl_->disconnect({name}, /*keep_rows=*/false, std::move(done));
}

void McpManager::disconnect_all(std::function<void()> done) {
  Impl& m = *impl_;
  ++m.epoch_;
  // Every slice goes at once, with one event; removing the servers below touches no tool.
  if (!m.tool_set->empty()) {
    m.tool_set->clear();
    m.fire_tools_changed();
  }
  std::vector<std::string> names;
  for (const auto& [name, s] : m.servers) names.push_back(name);
  m.disconnected_rows.clear();
  m.disconnect(std::move(names), /*keep_rows=*/false, std::move(done));
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

std::uint64_t McpManager::on_catalog_changed(
    std::function<void(const std::string& server, CatalogKind kind)> listener) {
  const auto id = impl_->next_listener++;
  impl_->catalog_listeners.emplace(id, std::move(listener));
  return id;
}

void McpManager::remove_listener(std::uint64_t id) {
  impl_->tools_listeners.erase(id);
  impl_->status_listeners.erase(id);
  impl_->catalog_listeners.erase(id);
}

std::shared_ptr<McpToolHost> McpManager::tool_host() const { return impl_->host; }

Executor& McpManager::executor() const { return *impl_->services_.executor; }

}  // namespace mcprt
