#pragma once
// ServerLink: one server's lifecycle inside the manager (DESIGN "The manager, as it grows").
//
//   resolve (connect-time substitution, stdio auth token)
//     → connect (transport + initialize)
//     → list (tools/list)
//     → ready (live; list_changed re-lists, health pings)
//     → lost (transport closed / health check failed)
//     → reconnect (backoff, circuit breaker) → resolve …
//   any of connect / list / lost failing with ErrorCode::needs_auth
//     → needs-auth (idle until a manual reconnect or connect_servers: no retry, no breaker)
//
// The link owns the server's config, its phase and error, the current session, its timers,
// the cache entry read for it, and its slice of the tool set. The manager (LinkOwner) owns
// what spans servers: the startup gates, connection waiters, tool calls, the closing of
// sessions, the merged tool set and the listeners. The link reports every change through
// the owner; the owner never reaches into a link's attempt bookkeeping.
//
// Single-threaded on the owner's executor. Callbacks the link hands to sessions, timers,
// the cache and the resolver hold a weak reference to the link and the attempt id they were
// started for: a callback from a replaced or closed attempt, or one that outlived the link,
// does nothing. Attempt ids come from the owner and are unique for the manager's lifetime.
// Internal to core/src/manager.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/manager.hpp"
#include "mcprt/tools.hpp"

namespace mcprt::detail {

class ServerLink;

// What a link needs from the manager that owns it. Every method runs on the executor.
class LinkOwner {
 public:
  virtual ~LinkOwner() = default;
  virtual Executor& executor() = 0;
  virtual const ManagerServices& services() const = 0;
  virtual const ManagerOptions& options() const = 0;
  virtual Logger& logger() = 0;
  virtual ConnectTimeResolver& resolver() = 0;
  virtual const std::shared_ptr<ToolCache>& cache() const = 0;  // null = no tool cache
  virtual std::uint64_t new_attempt_id() = 0;
  // disconnect_all bumps the epoch: a connect started before it is stale afterwards.
  virtual std::uint64_t epoch() const = 0;

  // The session of `attempt` was created: the owner tracks it until it has closed.
  virtual void adopt_session(std::uint64_t attempt, const std::string& server,
                             std::shared_ptr<ClientSession> session) = 0;
  // Close `attempt`'s session on purpose (nothing if there is none).
  virtual void retire_session(std::uint64_t attempt) = 0;
  // The on_close handler for `attempt`'s session: the owner sees every close first.
  virtual std::function<void(const Error&)> session_close_handler(std::uint64_t attempt) = 0;
  // Runs `fn` later on the executor unless the manager is gone by then.
  virtual void post(std::function<void()> fn) = 0;

  // Events.
  virtual void phase_changed(const ServerLink& link, const std::optional<Error>& error) = 0;
  // The link's slice (has_slice, definitions, slice_deferred) changed: the owner updates
  // that server's part of the tool set only.
  virtual void slice_changed(const ServerLink& link) = 0;
  // The link's catalog of `kind` changed (listed, re-listed, from the cache, dropped).
  virtual void catalog_changed(const ServerLink& link, CatalogKind kind) = 0;
  // notifications/resources/updated from the link's live session.
  virtual void resource_updated(const ServerLink& link, const json& params) = 0;
  // The link's live connection went on with a new server session (ClientOptions::
  // on_session_renewed): what the server kept per session is gone.
  virtual void session_renewed(const ServerLink& link) = 0;
  // The link reached a state a gate may be waiting for.
  virtual void link_settled() = 0;
  // Connected (ok) or given up for now (error): connection waiters learn it.
  virtual void connection_settled(const std::string& server, const Status& status) = 0;
  // True while a startup gate that includes `server` is open (it reports the failure).
  virtual bool gate_reports(const std::string& server) const = 0;
};

class ServerLink : public std::enable_shared_from_this<ServerLink> {
 public:
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

  ServerLink(LinkOwner& owner, std::string name);
  ~ServerLink();
  ServerLink(const ServerLink&) = delete;
  ServerLink& operator=(const ServerLink&) = delete;

  const std::string& name() const { return name_; }
  const ServerConfig& config() const { return config_; }
  const std::string& hash() const { return hash_; }
  ServerPhase phase() const { return phase_; }
  Stage stage() const { return stage_; }
  CacheState cache_state() const { return cache_; }
  const std::optional<Error>& last_error() const { return last_error_; }
  bool circuit_open() const { return circuit_open_; }
  // Live session (stage ready), else null.
  const std::shared_ptr<ClientSession>& session() const { return session_; }
  // The server's `instructions` (SPEC §16): the live connection's, else the cache entry's;
  // empty when it gave none.
  std::string instructions() const;
  // Connected, or a connect / list / retry is in flight or scheduled.
  bool pending() const { return stage_ != Stage::idle || phase_ == ServerPhase::reconnecting; }
  ConnectionStatus status() const;
  // `tool_count` is the number of this server's tools in the manager's merged set.
  ServerState state(std::size_t tool_count) const;
  Millis timeout() const;

  // The tool-set slice: definitions as listed (or from the cache), deferred while not live.
  bool has_slice() const { return has_slice_; }
  bool slice_deferred() const { return slice_deferred_; }
  const std::vector<SharedJson>& definitions() const { return definitions_; }

  // The catalogs (SPEC §15), each sorted by its key (uri, uriTemplate, name): listed after
  // the tools, re-listed on list_changed and on every connection, from the cache entry
  // until then. A listing that fails keeps what the link had (a warning names the server).
  const std::vector<SharedJson>& catalog(CatalogKind kind) const {
    return catalog_[static_cast<std::size_t>(kind)];
  }
  bool catalog_from_cache(CatalogKind kind) const {
    return catalog_from_cache_[static_cast<std::size_t>(kind)];
  }

  // connect_servers: adopt `config` (a changed config resets the hash) and source metadata.
  void update_config(ServerConfig config);
  void update_source(SourceInfo source) { config_.source = std::move(source); }
  // A new connect_servers / manual reconnect: closes the outage's counters and the circuit.
  void reset_outage();
  // wait_for_connection on a failed server: one more attempt, a fresh attempt count.
  void reset_attempts() { attempts_ = 0; }
  // Validation failed: the link stays failed with `error` (no attempt).
  void fail_invalid(Error error);
  void start_cache_load();
  // The gate returned with this server still pending: serve the cache hit as deferred
  // tools. Returns true when it installed them.
  bool install_cached_slice();

  void begin_attempt(AttemptKind kind);
  // reconnect_server(): drop the current attempt and connect again now.
  void reconnect_now(std::function<void(Status)> done);
  // The owner's tracking saw `attempt`'s session close without being retired.
  void on_session_closed(std::uint64_t attempt, const Error& error);
  // A request of `session` (still the live one?) failed with ErrorCode::needs_auth that is
  // not a step-up: its authorization is gone, so the connection ends and the server waits
  // in needs-auth like one that lost it on its stream.
  void authorization_lost(const ClientSession* session, Error error);
  // The link is being removed: no callback of it runs afterwards; its session is retired.
  // Returns the reconnect_server() callers still waiting (the owner answers them).
  std::vector<std::function<void(Status)>> detach();
  // Manager destruction: timers off, session dropped (the owner closes it). Returns the
  // reconnect_server() callers still waiting (the owner ends them with `closed`).
  std::vector<std::function<void(Status)>> shut_down();

  Error circuit_error() const;
  Error disconnected_error() const;
  // The error calls and connection waits get in ServerPhase::needs_auth: the one that put
  // the server there (its message says how to log in).
  Error needs_auth_error() const;

 private:
  void set_phase(ServerPhase phase, std::optional<Error> error = std::nullopt);
  void set_slice(std::vector<SharedJson> defs, bool deferred, bool from_cache);
  void drop_slice();
  void mark_slice_deferred();
  // Debug log naming the slice's tools that need task support the host lacks.
  void log_hidden_tools();
  // The link if `attempt` is still its current attempt of the owner's current epoch.
  static ServerLink* current(const std::weak_ptr<ServerLink>& weak, std::uint64_t attempt,
                             std::uint64_t at_epoch);

  void with_auth(ServerConfig resolved);
  void open_connection(const ServerConfig& resolved);
  void on_connected(std::uint64_t attempt, Result<std::shared_ptr<ClientSession>> r);
  void on_listed(Result<std::vector<json>> listed, bool from_cache = false);
  // The cache entry's tools when they may stand for a tools/list (SEP-2549): connected
  // under the stored modern verdict, a `public` entry younger than min(ttlMs, 24 h).
  std::optional<std::vector<json>> fresh_cached_tools() const;
  void save_cache(const std::vector<json>& defs);  // with the catalogs the link has
  void attempt_failed(Error error);
  // An attempt or the live connection failed with ErrorCode::needs_auth (`error` named).
  void enter_needs_auth(Error error);
  void schedule_retry(const Error& reason);
  void connection_lost(Error reason);
  void on_notification(const std::string& method, const json& params);
  // tools/list_changed, or anything else that says the server's tools may differ now.
  void tools_may_have_changed();
  void on_session_renewed();
  void set_catalog(CatalogKind kind, std::vector<SharedJson> entries, bool from_cache);
  // Lists the kinds in `kinds` (bits of 1 << kind) on the live session; a kind already
  // being listed is listed once more after that.
  void list_catalogs(unsigned kinds);
  void on_catalog_listed(CatalogKind kind, Result<std::vector<json>> listed);
  void schedule_catalog_relist(unsigned kinds);
  void stop_catalog_listing();
  void drop_cached_catalog();
  CachedCatalog catalog_for_cache() const;
  void schedule_relist();
  void relist();
  void warn_unusable_output_schemas(const std::vector<json>& definitions);
  void schedule_health();
  void health_check();
  void settle_attempt_waiters(const Status& st);
  Logger& log() { return owner_.logger(); }

  LinkOwner& owner_;
  std::string name_;
  ServerConfig config_;  // unresolved, as given (the cache key's input)
  std::string hash_;
  ServerPhase phase_ = ServerPhase::disconnected;
  std::optional<Error> last_error_;
  int attempts_ = 0;  // connect attempts in the current outage
  TimePoint since_{};
  std::string stderr_tail_;
  bool circuit_open_ = false;
  std::vector<TimePoint> closes_;  // connection losses inside the breaker window

  Stage stage_ = Stage::idle;
  AttemptKind kind_ = AttemptKind::initial;
  std::uint64_t attempt_ = 0;  // the current attempt's id (0 = none)
  std::shared_ptr<ClientSession> session_;
  json server_info_;
  // The era verdict (SPEC §14): the cache entry's protocolVersion, then the live one's.
  std::string known_protocol_version_;
  bool used_prior_version_ = false;  // this attempt connected under the stored verdict
  bool prior_version_failed_ = false;  // ...and it failed once: probe again
  json cached_server_info_;               // the cache entry's serverInfo object (with ttlMs, cacheScope)
  std::int64_t cached_saved_at_ms_ = 0;

  bool has_slice_ = false;
  bool slice_deferred_ = false;
  bool slice_from_cache_ = false;
  std::vector<SharedJson> definitions_;  // shared with the tools built from them

  CacheState cache_ = CacheState::off;
  std::vector<SharedJson> cached_definitions_;

  std::array<std::vector<SharedJson>, 3> catalog_;         // by CatalogKind
  std::array<std::vector<SharedJson>, 3> cached_catalog_;  // the cache entry's
  std::array<bool, 3> catalog_from_cache_{};  // catalog_[k] is the cache entry's
  bool catalog_listed_ = false;      // listed live at least once (the cache is not used again)
  unsigned catalog_listing_ = 0;     // kinds in flight
  unsigned catalog_again_ = 0;       // kinds to list again once their listing ends
  unsigned catalog_debounced_ = 0;   // kinds waiting for catalog_timer_
  bool catalog_unsaved_ = false;     // a listing changed a catalog since the last cache write
  ScopedTimer catalog_timer_;

  ScopedTimer retry_timer_;
  ScopedTimer health_timer_;
  ScopedTimer debounce_timer_;
  bool relisting_ = false;
  bool relist_again_ = false;

  // reconnect_server() callers waiting for the outcome of one attempt.
  std::vector<std::function<void(Status)>> attempt_done_;
};

// `Server "<name>": ` — every message about a server starts with it, once.
std::string server_prefix(const std::string& name);
Error named(const std::string& server, Error e);

}  // namespace mcprt::detail
