// ServerLink (server_link.hpp): one server's resolve → connect → list → ready → lost →
// reconnect machine, with its backoff, circuit breaker, health pings and list_changed
// re-listing, and the needs-auth phase (SPEC §13).

#include "server_link.hpp"

#include <algorithm>
#include <utility>

#include "mcprt/json_object.hpp"
#include "mcprt/json_schema.hpp"
#include "mcprt/connect.hpp"
#include "tools/tool_set.hpp"
#include "util/local_error.hpp"
#include "util/sort_order.hpp"

namespace mcprt::detail {

std::string server_prefix(const std::string& name) { return "Server \"" + name + "\": "; }

// Errors from sessions already carry the prefix; errors made here get it once.
Error named(const std::string& server, Error e) {
  const std::string p = server_prefix(server);
  if (e.message.rfind(p, 0) != 0) e.message = p + e.message;
  return e;
}

namespace {

// The exponential backoff of one outage: initial, 2×, 4×, … capped at max_delay_ms.
// SEP-2549's cap on how long a listing may stand for the server's tools.
constexpr std::int64_t kMaxCacheTtlMs = 24LL * 60 * 60 * 1000;

constexpr std::size_t kCatalogKinds = 3;
constexpr unsigned kAllCatalogs = 0b111;
constexpr CatalogKind kCatalogKind[kCatalogKinds] = {
    CatalogKind::resources, CatalogKind::resource_templates, CatalogKind::prompts};
constexpr unsigned catalog_bit(CatalogKind kind) { return 1u << static_cast<unsigned>(kind); }

// The member each kind of entry is keyed and sorted by.
const char* catalog_key(CatalogKind kind) {
  switch (kind) {
    case CatalogKind::resources: return "uri";
    case CatalogKind::resource_templates: return "uriTemplate";
    case CatalogKind::prompts: return "name";
  }
  return "name";
}

// Entries sorted by their key (the session checked that it is a string), so the catalog
// is deterministic whatever order the server listed it in.
std::vector<SharedJson> sorted_catalog(CatalogKind kind, std::vector<SharedJson> entries) {
  const char* key = catalog_key(kind);
  const auto key_of = [key](const SharedJson& e) -> const std::string& {
    static const std::string none;
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get_ref<const std::string&>() : none;
  };
  sort_by(entries, [&key_of](const SharedJson& a, const SharedJson& b) {
    return key_of(a) < key_of(b);
  });
  return entries;
}

bool same_entries(const std::vector<SharedJson>& a, const std::vector<SharedJson>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

// `attempts_made` is how many reconnect attempts this outage already had.
Millis reconnect_delay(const ReconnectPolicy& policy, int attempts_made) {
  long long cap = std::max<long long>(policy.max_delay_ms, 0);
  long long d = std::max<long long>(policy.initial_delay_ms, 0);
  for (int i = 0; i < attempts_made && d < cap; ++i) d *= 2;
  return Millis(std::min(d, cap));
}

}  // namespace

ServerLink::ServerLink(LinkOwner& owner, std::string name) : owner_(owner), name_(std::move(name)) {}

ServerLink::~ServerLink() = default;

// ------------------------------------------------------------------ state

ConnectionStatus ServerLink::status() const {
  if (stage_ == Stage::ready) return ConnectionStatus::connected;
  if (stage_ != Stage::idle || phase_ == ServerPhase::reconnecting ||
      phase_ == ServerPhase::connecting) {
    return ConnectionStatus::connecting;
  }
  return ConnectionStatus::disconnected;
}

ServerState ServerLink::state(std::size_t tool_count) const {
  ServerState st;
  st.name = name_;
  st.phase = phase_;
  st.status = status();
  st.last_error = last_error_;
  st.attempts = attempts_;
  st.since = since_;
  st.stderr_tail = stderr_tail_;
  st.tool_count = tool_count;
  st.tools_from_cache = has_slice_ && slice_from_cache_;
  st.tools_refreshing = (stage_ == Stage::listing || stage_ == Stage::ready) &&
                        (debounce_timer_.active() || relisting_ || relist_again_);
  st.catalogs_refreshing = stage_ == Stage::listing ||
                           (stage_ == Stage::ready && (catalog_listing_ != 0 || catalog_timer_.active()));
  st.circuit_open = circuit_open_;
  st.source = config_.source;
  st.config_hash = hash_;
  return st;
}

Millis ServerLink::timeout() const {
  return config_.timeout_ms ? Millis(*config_.timeout_ms) : owner_.options().default_timeout;
}

void ServerLink::set_phase(ServerPhase phase, std::optional<Error> error) {
  const bool changed = phase_ != phase;
  phase_ = phase;
  if (error) {
    last_error_ = error;
    if (error->data.is_object()) {
      auto it = error->data.find("stderr");
      if (it != error->data.end() && it->is_string()) stderr_tail_ = it->get<std::string>();
    }
  }
  if (!changed) return;
  since_ = owner_.executor().now();
  owner_.phase_changed(*this, error);
}

Error ServerLink::circuit_error() const {
  std::string m = server_prefix(name_) + "circuit open after " + std::to_string(closes_.size()) +
                  " connection losses within " +
                  std::to_string(owner_.options().breaker_window.count()) +
                  " ms; reconnect it by hand or reload";
  if (last_error_) m += " (last error: " + last_error_->message + ")";
  return Error::make(ErrorCode::not_connected, std::move(m));
}

Error ServerLink::needs_auth_error() const {
  if (last_error_ && last_error_->code == ErrorCode::needs_auth) return *last_error_;
  return Error::make(ErrorCode::needs_auth, server_prefix(name_) + "needs authorization");
}

Error ServerLink::disconnected_error() const {
  std::string m = server_prefix(name_) + "disconnected";
  if (last_error_) m += " (" + last_error_->message + ")";
  m += "; reconnect is off for this server, reload to reconnect";
  return Error::make(ErrorCode::not_connected, std::move(m));
}

// ------------------------------------------------------------------ the slice

void ServerLink::set_slice(std::vector<SharedJson> defs, bool deferred, bool from_cache) {
  has_slice_ = true;
  definitions_ = std::move(defs);
  log_hidden_tools();
  slice_deferred_ = deferred;
  slice_from_cache_ = from_cache;
  owner_.slice_changed(*this);
}

void ServerLink::drop_slice() {
  if (!has_slice_) return;
  has_slice_ = false;
  definitions_.clear();
  slice_from_cache_ = false;
  owner_.slice_changed(*this);
}

void ServerLink::mark_slice_deferred() {
  if (!has_slice_ || slice_deferred_) return;
  slice_deferred_ = true;
  owner_.slice_changed(*this);
}

bool ServerLink::install_cached_slice() {
  if (has_slice_ || cache_ != CacheState::hit) return false;
  // Installed without an event: the gate updates the tool set and fires one event for all.
  has_slice_ = true;
  definitions_ = cached_definitions_;
  log_hidden_tools();
  slice_deferred_ = true;
  slice_from_cache_ = true;
  return true;
}

// build_mcp_tools leaves these out; the log says which, so a missing tool is explained.
void ServerLink::log_hidden_tools() {
  if (owner_.options().tools.task_support) return;
  std::string names;
  std::size_t n = 0;
  for (const SharedJson& shared : definitions_) {
    const json& def = detail::SharedJsonAccess::unparsed(shared);  // a raw schema stays raw
    if (!requires_task_support(def)) continue;
    ++n;
    auto name = def.find("name");
    names += (names.empty() ? "" : ", ") + (name != def.end() && name->is_string() ? name->get<std::string>() : "?");
  }
  if (n == 0) return;
  log().debug(server_prefix(name_) + "hides " + std::to_string(n) +
              (n == 1 ? " tool that requires" : " tools that require") +
              " task support (execution.taskSupport \"required\"; this host runs no tasks): " + names);
}

// ------------------------------------------------------------------ configuration

void ServerLink::update_config(ServerConfig config) {
  if (config_ == config) return;
  config_ = std::move(config);
  hash_ = config_hash(config_);
}

void ServerLink::reset_outage() {
  circuit_open_ = false;
  closes_.clear();
  attempts_ = 0;
  retry_timer_.reset();
}

void ServerLink::fail_invalid(Error error) { set_phase(ServerPhase::failed, std::move(error)); }

void ServerLink::start_cache_load() {
  const auto& cache = owner_.cache();
  if (!cache) {
    cache_ = CacheState::off;
    return;
  }
  cache_ = CacheState::loading;
  // The callback keeps the cache alive: the store may answer after the manager is gone.
  cache->load(config_, [weak = weak_from_this(), keep = cache,
                        hash = hash_](std::optional<CachedTools> hit) {
    auto self = weak.lock();
    if (!self || self->hash_ != hash || self->cache_ != CacheState::loading) return;
    if (hit) {
      self->cache_ = CacheState::hit;
      self->cached_definitions_ = detail::share_definitions(std::move(hit->tools));
      self->cached_catalog_ = {
          sorted_catalog(CatalogKind::resources,
                         detail::share_definitions(std::move(hit->catalog.resources))),
          sorted_catalog(CatalogKind::resource_templates,
                         detail::share_definitions(std::move(hit->catalog.resource_templates))),
          sorted_catalog(CatalogKind::prompts,
                         detail::share_definitions(std::move(hit->catalog.prompts)))};
      self->cached_saved_at_ms_ = hit->saved_at_ms;
      if (hit->server_info.is_object()) {
        self->cached_server_info_ = std::move(hit->server_info);
        auto version = self->cached_server_info_.find("protocolVersion");
        if (self->known_protocol_version_.empty() && version != self->cached_server_info_.end() &&
            version->is_string()) {
          self->known_protocol_version_ = version->get<std::string>();
        }
      }
    } else {
      self->cache_ = CacheState::miss;
    }
    // The entry's catalogs stand for the server's until it lists its own.
    if (self->cache_ == CacheState::hit && !self->catalog_listed_) {
      for (CatalogKind kind : kCatalogKind) {
        self->set_catalog(kind, self->cached_catalog_[static_cast<std::size_t>(kind)], true);
      }
    }
    self->owner_.link_settled();
  });
}

void ServerLink::save_cache(const std::vector<json>& defs) {
  const auto& cache = owner_.cache();
  if (!cache) return;
  // SEP-2549: the listing's ttlMs / cacheScope go with the entry (absent: a 2025 server).
  // (server_info_ is rebuilt at every connect, and a connection keeps its era.)
  if (session_ && server_info_.is_object()) {
    const json hint = session_->tools_cache_hint();
    if (hint.is_object()) server_info_.update(hint);
  }
  cache->save(config_, server_info_, defs, catalog_for_cache(), [keep = cache](Status) {});
  catalog_unsaved_ = false;
}

CachedCatalog ServerLink::catalog_for_cache() const {
  CachedCatalog out;
  std::vector<json>* lists[kCatalogKinds] = {&out.resources, &out.resource_templates,
                                              &out.prompts};
  for (std::size_t k = 0; k < kCatalogKinds; ++k) {
    lists[k]->reserve(catalog_[k].size());
    for (const SharedJson& e : catalog_[k]) lists[k]->push_back(e.get());
  }
  return out;
}

// ------------------------------------------------------------------ one attempt

ServerLink* ServerLink::current(const std::weak_ptr<ServerLink>& weak, std::uint64_t attempt,
                                std::uint64_t at_epoch) {
  auto self = weak.lock();
  if (!self || self->attempt_ != attempt || self->owner_.epoch() != at_epoch) return nullptr;
  return self.get();  // owned by the manager's registry for as long as this callback runs
}

void ServerLink::begin_attempt(AttemptKind kind) {
  retry_timer_.reset();
  attempt_ = owner_.new_attempt_id();
  stop_catalog_listing();
  kind_ = kind;
  stage_ = Stage::resolving;
  ++attempts_;
  set_phase(kind == AttemptKind::retry ? ServerPhase::reconnecting : ServerPhase::connecting);
  owner_.resolver().resolve(config_, [weak = weak_from_this(), attempt = attempt_,
                                      at_epoch = owner_.epoch()](ServerConfig resolved) {
    ServerLink* self = current(weak, attempt, at_epoch);
    if (!self) return;  // disconnected or superseded: nothing was opened yet
    self->with_auth(std::move(resolved));
  });
}

// stdio servers with `auth` get OAUTH_ACCESS_TOKEN (http/sse transports ask the storage
// themselves, and refresh on 401/403).
void ServerLink::with_auth(ServerConfig resolved) {
  AuthStorage* storage = owner_.services().auth_storage;
  if (resolved.type != TransportType::stdio || resolved.auth.type == AuthType::none || !storage ||
      resolved.env.count("OAUTH_ACCESS_TOKEN")) {
    return open_connection(resolved);
  }
  AuthRequest req{name_, resolved.auth.credential_id, resolved.url};
  storage->get_token(req, [weak = weak_from_this(), attempt = attempt_, at_epoch = owner_.epoch(),
                           resolved = std::move(resolved)](
                              Result<std::optional<std::string>> token) mutable {
    ServerLink* self = current(weak, attempt, at_epoch);
    if (!self) return;
    if (!token.ok()) {
      self->log().warn(server_prefix(self->name_) + "auth storage failed: " +
                       token.error().message);
    } else if (token.value() && !token.value()->empty()) {
      resolved.env["OAUTH_ACCESS_TOKEN"] = *token.value();
    }
    self->open_connection(resolved);
  });
}

void ServerLink::open_connection(const ServerConfig& resolved) {
  const ManagerServices& services = owner_.services();
  ConnectServices cs;
  cs.executor = services.executor;
  cs.process_launcher = services.process_launcher;
  cs.http_client = services.http_client;
  cs.auth_storage = services.auth_storage;
  cs.logger = services.logger;
  cs.transport_factory = services.transport_factory;

  const std::uint64_t attempt = attempt_;
  const std::uint64_t at_epoch = owner_.epoch();
  std::weak_ptr<ServerLink> weak = weak_from_this();
  ConnectOptions co;
  co.client_info = owner_.options().client_info;
  co.cwd = owner_.options().cwd;
  co.default_timeout = owner_.options().default_timeout;
  co.roots = owner_.options().roots;
  co.input = owner_.options().input;
  co.protocol = owner_.options().protocol;
  co.probe_network_failure_means_legacy = owner_.options().probe_network_failure_means_legacy;
  used_prior_version_ = !prior_version_failed_ && !known_protocol_version_.empty();
  if (used_prior_version_) co.prior_protocol_version = known_protocol_version_;
  co.on_notification = [weak, attempt, at_epoch](const std::string& method, const json& params) {
    if (ServerLink* self = current(weak, attempt, at_epoch)) self->on_notification(method, params);
  };
  co.on_session_renewed = [weak, attempt, at_epoch] {
    if (ServerLink* self = current(weak, attempt, at_epoch)) self->on_session_renewed();
  };
  // Closes go through the owner, which tracks every session until it has closed.
  co.on_close = owner_.session_close_handler(attempt);
  if (const auto& on_message = owner_.options().on_message) {
    co.message_tap = [on_message, name = name_](MessageDirection direction, const json& message) {
      on_message(name, direction, message);
    };
  }

  stage_ = Stage::connecting;
  auto made = connect_to_server(
      resolved, cs, std::move(co),
      [weak, attempt](Result<std::shared_ptr<ClientSession>> r) {
        if (auto self = weak.lock()) self->on_connected(attempt, std::move(r));
      });
  if (!made.ok()) return attempt_failed(std::move(made).error());
  owner_.adopt_session(attempt, name_, made.value());
  session_ = std::move(made.value());
}

void ServerLink::on_connected(std::uint64_t attempt, Result<std::shared_ptr<ClientSession>> r) {
  if (attempt_ != attempt || stage_ != Stage::connecting) {
    // A connect that finished after its attempt was replaced: close it.
    owner_.retire_session(attempt);
    return;
  }
  if (!r.ok()) return attempt_failed(std::move(r).error());
  stage_ = Stage::listing;
  known_protocol_version_ = session_->server().protocol_version;
  server_info_ = json_object({{"protocolVersion", session_->server().protocol_version},
                  {"serverInfo", session_->server().server_info},
                  {"capabilities", session_->server().capabilities}});
  if (!session_->server().instructions.empty()) {
    server_info_["instructions"] = session_->server().instructions;
  } else if (session_->server().era_source == "prior" && cached_server_info_.is_object()) {
    auto cached = cached_server_info_.find("instructions");
    if (cached != cached_server_info_.end() && cached->is_string()) server_info_["instructions"] = *cached;
  }
  if (session_->server().era_source == "prior" && cached_server_info_.is_object()) {
    // Connected under the stored verdict, so nothing was asked: keep what the entry knew.
    for (const char* key : {"serverInfo", "capabilities"}) {
      auto cached = cached_server_info_.find(key);
      if ((server_info_[key].is_null() || server_info_[key].empty()) &&
          cached != cached_server_info_.end() && cached->is_object()) {
        server_info_[key] = *cached;
      }
    }
  }
  if (auto fresh = fresh_cached_tools()) {
    // SEP-2549: the entry is still fresh, so these are the server's live tools; no
    // tools/list (and no cache write: its age stays what the server allowed).
    return on_listed(session_->adopt_tools(std::move(*fresh)), /*from_cache=*/true);
  }
  session_->list_tools_raw([weak = weak_from_this(), attempt,
                        at_epoch = owner_.epoch()](Result<std::vector<json>> listed) {
    ServerLink* self = current(weak, attempt, at_epoch);
    if (!self || self->stage_ != Stage::listing) return;
    self->on_listed(std::move(listed));
  });
}

std::optional<std::vector<json>> ServerLink::fresh_cached_tools() const {
  if (cache_ != CacheState::hit || !session_ || !session_->server().modern ||
      session_->server().era_source != "prior" || !cached_server_info_.is_object()) {
    return std::nullopt;
  }
  // Only `public` entries: a `private` one belongs to one authorization context, and is
  // never served as live (it still shows deferred tools at the gate, as any entry does).
  auto scope = cached_server_info_.find("cacheScope");
  if (scope == cached_server_info_.end() || *scope != "public") return std::nullopt;
  const json ttl = cached_server_info_.value("ttlMs", json());
  if (!ttl.is_number_integer() || ttl.get<std::int64_t>() <= 0) return std::nullopt;
  const WallClock& clock = owner_.services().wall_clock;
  if (!clock) return std::nullopt;
  const std::int64_t now = clock();
  const std::int64_t age = now - cached_saved_at_ms_;
  if (age < 0 || age >= std::min<std::int64_t>(ttl.get<std::int64_t>(), kMaxCacheTtlMs)) {
    return std::nullopt;
  }
  std::vector<json> tools;  // adopt_tools takes its own copy (rare: SEP-2549 fresh entries)
  tools.reserve(cached_definitions_.size());
  for (const SharedJson& d : cached_definitions_) tools.push_back(d.get());
  return tools;
}

void ServerLink::on_listed(Result<std::vector<json>> listed, bool from_cache) {
  if (!listed.ok()) return attempt_failed(std::move(listed).error());
  stage_ = Stage::ready;
  attempts_ = 0;
  prior_version_failed_ = false;
  last_error_.reset();
  stderr_tail_.clear();
  if (!from_cache) {
    warn_unusable_output_schemas(listed.value());
    save_cache(listed.value());
  }
  set_slice(detail::share_definitions(std::move(listed.value())), false, false);
  set_phase(ServerPhase::connected);
  settle_attempt_waiters(Status());
  owner_.connection_settled(name_, Status());
  schedule_health();
  list_catalogs(kAllCatalogs);
  if (relist_again_) {  // list_changed arrived while the first list was running
    relist_again_ = false;
    schedule_relist();
  }
  owner_.link_settled();
}

// The attempt failed before the connection was live.
void ServerLink::attempt_failed(Error error) {
  error = named(name_, std::move(error));
  const std::uint64_t attempt = attempt_;
  stage_ = Stage::idle;
  session_.reset();
  owner_.retire_session(attempt);
  // Only what a wrong wire looks like; an outage under a stored verdict is an outage.
  const ErrorCode local = detail::local_code(error);
  const bool era_mismatch = local == ErrorCode::wire || local == ErrorCode::protocol ||
                            local == ErrorCode::unsupported_version ||
                            local == ErrorCode::http_status;
  if (used_prior_version_ && era_mismatch) {
    // The stored era verdict may be stale (the server was upgraded or downgraded): probe
    // once before this counts as a failure (SPEC §14).
    used_prior_version_ = false;
    prior_version_failed_ = true;
    log().debug(error.message + " (under the stored protocol version \"" +
                known_protocol_version_ + "\"; probing again)");
    --attempts_;
    begin_attempt(kind_);
    return;
  }
  settle_attempt_waiters(Status(error));
  if (error.code == ErrorCode::needs_auth) return enter_needs_auth(std::move(error));

  const bool reported = owner_.gate_reports(name_);
  if (kind_ == AttemptKind::retry && config_.reconnect.enabled && !circuit_open_ &&
      (config_.reconnect.max_attempts <= 0 || attempts_ < config_.reconnect.max_attempts)) {
    schedule_retry(error);
    log().warn(error.message + " (reconnect attempt " + std::to_string(attempts_) + ")");
    owner_.link_settled();
    return;
  }
  // Final: no retry is scheduled.
  if (kind_ == AttemptKind::initial && slice_from_cache_) drop_slice();
  if (kind_ == AttemptKind::initial) drop_cached_catalog();
  set_phase(ServerPhase::failed, error);
  owner_.connection_settled(name_, Status(error));
  if (!reported) log().warn(error.message);
  owner_.link_settled();
}

// Nothing will change until the user logs in, so no retry, backoff or breaker count: the
// server waits, its tools deferred, until reconnect_server or connect_servers.
void ServerLink::enter_needs_auth(Error error) {
  retry_timer_.reset();
  kind_ = AttemptKind::initial;
  const bool reported = owner_.gate_reports(name_);
  if (has_slice_) {
    mark_slice_deferred();
  } else if (cache_ == CacheState::hit && !reported) {
    // An open gate installs the cache hit itself when it returns; here nobody else would.
    set_slice(cached_definitions_, true, true);
  }
  set_phase(ServerPhase::needs_auth, error);
  owner_.connection_settled(name_, Status(error));
  if (!reported) log().warn(error.message);
  owner_.link_settled();
}

void ServerLink::schedule_retry(const Error& reason) {
  const Millis delay = reconnect_delay(config_.reconnect, attempts_);
  set_phase(ServerPhase::reconnecting, reason);
  retry_timer_ = ScopedTimer(owner_.executor(),
                             owner_.executor().post_after(delay, [weak = weak_from_this()] {
                               auto self = weak.lock();
                               if (!self) return;
                               self->retry_timer_.release();
                               if (self->stage_ != Stage::idle) return;
                               self->begin_attempt(AttemptKind::retry);
                             }));
}

void ServerLink::reconnect_now(std::function<void(Status)> done) {
  reset_outage();
  health_timer_.reset();
  debounce_timer_.reset();
  relisting_ = false;
  relist_again_ = false;
  if (attempt_) owner_.retire_session(attempt_);
  session_.reset();
  stage_ = Stage::idle;
  attempt_ = 0;
  if (done) attempt_done_.push_back(std::move(done));
  mark_slice_deferred();
  begin_attempt(AttemptKind::initial);
}

void ServerLink::settle_attempt_waiters(const Status& st) {
  auto waiting = std::move(attempt_done_);
  attempt_done_.clear();
  for (auto& fn : waiting) owner_.post([fn = std::move(fn), st] { fn(st); });
}

// ------------------------------------------------------------------ live connection

void ServerLink::on_session_closed(std::uint64_t attempt, const Error& error) {
  if (attempt_ != attempt) return;
  // Before the connection is live, the connect / list callbacks report the failure.
  if (stage_ != Stage::ready) return;
  connection_lost(error);
}

void ServerLink::authorization_lost(const ClientSession* session, Error error) {
  if (stage_ != Stage::ready || session_.get() != session) return;
  // As the local error it stands for (it may have come relayed as a JSON-RPC error).
  connection_lost(Error::make(ErrorCode::needs_auth, std::move(error.message), std::move(error.data)));
}

// Transport drop or failed health check of a live connection.
void ServerLink::connection_lost(Error reason) {
  reason = named(name_, std::move(reason));
  const std::uint64_t attempt = attempt_;
  stage_ = Stage::idle;
  session_.reset();
  attempt_ = 0;
  health_timer_.reset();
  debounce_timer_.reset();
  relisting_ = false;
  relist_again_ = false;
  stop_catalog_listing();
  owner_.retire_session(attempt);
  attempts_ = 0;
  // The live transport lost its authorization (a refresh the user must replace): not a
  // crash, so neither a reconnect nor a breaker count.
  if (reason.code == ErrorCode::needs_auth) return enter_needs_auth(std::move(reason));

  const ManagerOptions& options = owner_.options();
  const TimePoint now = owner_.executor().now();
  closes_.push_back(now);
  std::size_t expired = 0;
  while (expired < closes_.size() && now - closes_[expired] >= options.breaker_window) ++expired;
  closes_.erase(closes_.begin(), closes_.begin() + static_cast<std::ptrdiff_t>(expired));

  if (!config_.reconnect.enabled) {
    // The seed's behaviour: stays down; calls fail with a clear error until a reload.
    log().warn(reason.message + " (reconnect is off)");
    set_phase(ServerPhase::disconnected, reason);
    owner_.connection_settled(name_, Status(disconnected_error()));
    return;
  }
  if (options.breaker_max_closes > 0 &&
      static_cast<int>(closes_.size()) >= options.breaker_max_closes) {
    circuit_open_ = true;
    log().warn(reason.message + "; circuit open after " + std::to_string(closes_.size()) +
               " closes within " + std::to_string(options.breaker_window.count()) +
               " ms, not reconnecting");
    mark_slice_deferred();
    set_phase(ServerPhase::failed, reason);
    owner_.connection_settled(name_, Status(circuit_error()));
    return;
  }
  log().warn(reason.message + "; reconnecting");
  mark_slice_deferred();
  schedule_retry(reason);
  kind_ = AttemptKind::retry;
  owner_.link_settled();
}

void ServerLink::on_notification(const std::string& method, const json& params) {
  if (method == "notifications/resources/updated") {
    if (stage_ == Stage::ready) owner_.resource_updated(*this, params);
    return;
  }
  if (method == "notifications/resources/list_changed") {
    return schedule_catalog_relist(catalog_bit(CatalogKind::resources) |
                                   catalog_bit(CatalogKind::resource_templates));
  }
  if (method == "notifications/prompts/list_changed") {
    return schedule_catalog_relist(catalog_bit(CatalogKind::prompts));
  }
  if (method == "notifications/tools/list_changed") tools_may_have_changed();
}

void ServerLink::tools_may_have_changed() {
  // The cached list is out of date at once, whatever its ttlMs said: a restart before the
  // re-list lands must not serve it as live.
  if (cached_server_info_.is_object()) cached_server_info_.erase("ttlMs");
  if (stage_ == Stage::listing) {
    relist_again_ = true;
    return;
  }
  if (stage_ != Stage::ready) return;
  schedule_relist();
}

// A new server session under the live connection is likely a restarted server: its tools
// and catalogs are listed again (as after list_changed), and the owner subscribes again.
void ServerLink::on_session_renewed() {
  tools_may_have_changed();
  schedule_catalog_relist(kAllCatalogs);
  if (stage_ == Stage::ready) owner_.session_renewed(*this);
}

void ServerLink::schedule_relist() {
  // Debounce: a burst of list_changed becomes one tools/list after the burst.
  debounce_timer_ = ScopedTimer(
      owner_.executor(),
      owner_.executor().post_after(owner_.options().list_changed_debounce,
                                   [weak = weak_from_this(), attempt = attempt_] {
                                     auto self = weak.lock();
                                     if (!self || self->attempt_ != attempt) return;
                                     self->debounce_timer_.release();
                                     self->relist();
                                   }));
}

// A tool whose outputSchema cannot be used (bad keyword values, a $ref that does not
// resolve, an unsupported pattern) has its results passed on unchecked (McpTool): say so
// once per listing, naming the server and the tool, rather than silently.
void ServerLink::warn_unusable_output_schemas(const std::vector<json>& definitions) {
  if (!json_schema_validation_available()) return;
  for (const json& def : definitions) {
    if (!def.is_object()) continue;
    auto schema = def.find("outputSchema");
    auto name = def.find("name");
    if (schema == def.end() || !schema->is_object() || name == def.end() || !name->is_string()) {
      continue;
    }
    std::optional<SchemaError> e = check_json_schema(*schema);
    if (!e || e->kind != SchemaErrorKind::bad_schema) continue;
    log().warn(server_prefix(name_) + "tool \"" + name->get<std::string>() +
               "\" declares an outputSchema that cannot be used (" + to_string(*e) +
               "); its results are passed on unchecked");
  }
}

void ServerLink::relist() {
  if (stage_ != Stage::ready || !session_) return;
  if (relisting_) {
    relist_again_ = true;
    return;
  }
  relisting_ = true;
  session_->list_tools_raw([weak = weak_from_this(), attempt = attempt_,
                        at_epoch = owner_.epoch()](Result<std::vector<json>> listed) {
    ServerLink* self = current(weak, attempt, at_epoch);
    if (!self || self->stage_ != Stage::ready) return;
    self->relisting_ = false;
    if (!listed.ok()) {
      self->log().warn(named(self->name_, std::move(listed).error()).message +
                       " (re-listing tools after tools/list_changed)");
    } else {
      self->warn_unusable_output_schemas(listed.value());
      self->save_cache(listed.value());
      self->set_slice(detail::share_definitions(std::move(listed.value())), false, false);
    }
    if (self->relist_again_) {
      self->relist_again_ = false;
      self->relist();
    }
  });
}

void ServerLink::schedule_health() {
  const Millis interval = owner_.options().health_interval;
  if (interval <= Millis(0)) return;
  health_timer_ = ScopedTimer(
      owner_.executor(),
      owner_.executor().post_after(interval, [weak = weak_from_this(), attempt = attempt_] {
        auto self = weak.lock();
        if (!self || self->attempt_ != attempt) return;
        self->health_timer_.release();
        self->health_check();
      }));
}

void ServerLink::health_check() {
  if (stage_ != Stage::ready || !session_) return;
  Millis limit = timeout();
  if (limit <= Millis(0)) limit = owner_.options().health_interval;
  session_->ping(
      [weak = weak_from_this(), attempt = attempt_, at_epoch = owner_.epoch()](Status st) {
        ServerLink* self = current(weak, attempt, at_epoch);
        if (!self || self->stage_ != Stage::ready) return;
        // A server without ping (-32601) still answered: it is alive.
        if (st.ok() || (st.error().is_wire() && st.error().wire_code == rpc_code::kMethodNotFound)) {
          self->schedule_health();
          return;
        }
        Error e = st.error();
        e.message = "health check failed: " + e.message;
        self->connection_lost(std::move(e));
      },
      limit);
}

// ------------------------------------------------------------------ the catalogs

void ServerLink::set_catalog(CatalogKind kind, std::vector<SharedJson> entries, bool from_cache) {
  auto& current = catalog_[static_cast<std::size_t>(kind)];
  catalog_from_cache_[static_cast<std::size_t>(kind)] = from_cache;
  if (same_entries(current, entries)) return;
  current = std::move(entries);
  owner_.catalog_changed(*this, kind);
}

void ServerLink::drop_cached_catalog() {
  for (CatalogKind kind : kCatalogKind) {
    if (catalog_from_cache_[static_cast<std::size_t>(kind)]) set_catalog(kind, {}, false);
  }
}

void ServerLink::list_catalogs(unsigned kinds) {
  if (stage_ != Stage::ready || !session_) return;
  for (CatalogKind kind : kCatalogKind) {
    const unsigned bit = catalog_bit(kind);
    if (!(kinds & bit)) continue;
    if (catalog_listing_ & bit) {
      catalog_again_ |= bit;
      continue;
    }
    catalog_listing_ |= bit;
    auto done = [weak = weak_from_this(), attempt = attempt_, at_epoch = owner_.epoch(),
                 kind](Result<std::vector<json>> listed) {
      ServerLink* self = current(weak, attempt, at_epoch);
      if (!self || self->stage_ != Stage::ready) return;
      self->on_catalog_listed(kind, std::move(listed));
    };
    switch (kind) {
      case CatalogKind::resources: session_->list_resources(std::move(done)); break;
      case CatalogKind::resource_templates: session_->list_resource_templates(std::move(done)); break;
      case CatalogKind::prompts: session_->list_prompts(std::move(done)); break;
    }
  }
}

void ServerLink::on_catalog_listed(CatalogKind kind, Result<std::vector<json>> listed) {
  const unsigned bit = catalog_bit(kind);
  catalog_listing_ &= ~bit;
  if (!listed.ok()) {
    log().warn(named(name_, std::move(listed).error()).message + " (listing " +
               to_string(kind) + ")");
  } else {
    std::vector<SharedJson> entries =
        sorted_catalog(kind, detail::share_definitions(std::move(listed.value())));
    if (!same_entries(catalog_[static_cast<std::size_t>(kind)], entries)) catalog_unsaved_ = true;
    catalog_listed_ = true;
    set_catalog(kind, std::move(entries), false);
  }
  if (catalog_again_ & bit) {
    catalog_again_ &= ~bit;
    list_catalogs(bit);
  }
  // Every listing of this round is in: one cache write, only when something changed (an
  // entry the server lists as it was cached is not written again).
  if (catalog_listing_ == 0 && catalog_unsaved_) {
    std::vector<json> defs;
    defs.reserve(definitions_.size());
    for (const SharedJson& d : definitions_) defs.push_back(detail::SharedJsonAccess::as_listed(d));
    save_cache(defs);
  }
}

void ServerLink::schedule_catalog_relist(unsigned kinds) {
  if (stage_ == Stage::listing) {
    // The first listing of the catalogs follows the tools' and asks for every kind.
    return;
  }
  if (stage_ != Stage::ready) return;
  catalog_debounced_ |= kinds;
  // Debounce as for tools: a burst of list_changed becomes one listing after the burst.
  catalog_timer_ = ScopedTimer(
      owner_.executor(),
      owner_.executor().post_after(owner_.options().list_changed_debounce,
                                   [weak = weak_from_this(), attempt = attempt_] {
                                     auto self = weak.lock();
                                     if (!self || self->attempt_ != attempt) return;
                                     self->catalog_timer_.release();
                                     const unsigned due = self->catalog_debounced_;
                                     self->catalog_debounced_ = 0;
                                     self->list_catalogs(due);
                                   }));
}

void ServerLink::stop_catalog_listing() {
  catalog_listing_ = 0;
  catalog_again_ = 0;
  catalog_debounced_ = 0;
  catalog_timer_.reset();
}

// ------------------------------------------------------------------ removal

std::vector<std::function<void(Status)>> ServerLink::detach() {
  const std::uint64_t attempt = attempt_;
  attempt_ = 0;
  stage_ = Stage::idle;
  session_.reset();
  retry_timer_.reset();
  health_timer_.reset();
  debounce_timer_.reset();
  stop_catalog_listing();
  owner_.retire_session(attempt);
  auto waiting = std::move(attempt_done_);
  attempt_done_.clear();
  return waiting;
}

std::vector<std::function<void(Status)>> ServerLink::shut_down() {
  retry_timer_.reset();
  health_timer_.reset();
  debounce_timer_.reset();
  stop_catalog_listing();
  session_.reset();
  auto waiting = std::move(attempt_done_);
  attempt_done_.clear();
  return waiting;
}

std::string ServerLink::instructions() const {
  for (const json* info : {&server_info_, &cached_server_info_}) {
    if (!info->is_object()) continue;
    auto it = info->find("instructions");
    if (it != info->end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

}  // namespace mcprt::detail
