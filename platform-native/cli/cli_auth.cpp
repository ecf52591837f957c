// `mcprt auth login|logout|status` and the CLI's OAuth stack (cli_auth.hpp; SPEC §13).
#include "cli_auth.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_commands.hpp"
#include "cli_elicit.hpp"
#include "mcprt/memory_store.hpp"
#include "mcprt/native/authorizer.hpp"
#include "mcprt/native/credential_store.hpp"
#include "mcprt/native/crypto.hpp"
#include "mcprt/native/discovery.hpp"
#include "mcprt/redact.hpp"

namespace mcprt::cli {

// What the host owns: destroyed in reverse order, the client first.
struct OAuthStack {
  OAuthStack(native::NativeHost& host, const std::string& credentials_dir,
             const CliOAuth::Settings& settings)
      : crypto(host.executor()), authorizer(host.executor(), authorizer_options(settings)) {
    if (credentials_dir.empty()) {
      store = std::make_unique<MemoryCredentialStore>(host.executor());
    } else {
      store = std::make_unique<native::NativeCredentialStore>(credentials_dir, host.executor());
    }
    OAuthClientOptions o;
    o.executor = &host.executor();
    o.http = host.services().http_client;
    o.crypto = &crypto;
    o.store = store.get();
    o.authorizer = &authorizer;
    o.logger = &host.logger();
    o.file_system = host.discovery_context().fs;
    o.interactive = false;  // only login() asks the user
    const bool repl = settings.repl;
    o.login_hint = [repl](const std::string& server) { return login_hint(server, repl); };
    client = std::make_unique<OAuthClient>(std::move(o));
  }

  static native::LoopbackAuthorizerOptions authorizer_options(const CliOAuth::Settings& settings) {
    native::LoopbackAuthorizerOptions a;
    a.open_browser = settings.open_browser;
    a.on_prompt = [](const native::AuthorizePrompt& p) {
      std::string how;
      if (p.browser_started) {
        how = "a browser was opened (" + p.browser_command + "); if it shows nothing, open";
      } else {
        how = "open this URL in a browser";
        if (!p.browser_error.empty())
          how = "no browser was started (" + p.browser_error + "); " + how;
      }
      std::fprintf(stderr,
                   "Sign in to \"%s\": %s:\n  %s\nWaiting for the sign-in to come back to %s "
                   "(Ctrl-C cancels) ...\n",
                   p.server_name.c_str(), how.c_str(), p.authorization_url.c_str(),
                   p.redirect_uri.c_str());
      std::fflush(stderr);
    };
    return a;
  }

  native::NativeCrypto crypto;
  std::unique_ptr<CredentialStore> store;
  native::LoopbackAuthorizer authorizer;
  std::unique_ptr<OAuthClient> client;
};

std::string login_hint(const std::string& server, bool repl) {
  if (repl) return "run `/mcp auth " + server + "` (or `" + auth_login_command(server) + "`)";
  return "run `" + auth_login_command(server) + "`";
}

native::NativeHostOptions cli_host_options(const GlobalOptions& o, CliOAuth& oauth) {
  native::NativeHostOptions ho;
  ho.cwd = o.cwd;
  ho.config_file = o.config_path;
  ho.use_cache = !o.no_cache;
  ho.log.level = LogLevel::error;
  ho.trust_command = trust_command;
  // The CLI has its own verbs for resources (resources, read); no model calls its tools.
  ho.resource_tools.mode = ResourceToolsMode::never;
  // Nor does it defer tools (SPEC §16): the REPL lists and calls every tool by name; `search`
  // and `/mcp search` show what a model's mcp_tool_search would find.
  ho.tool_search.mode = ToolSearchMode::off;
  // main.cpp's --elicit check admits only the three policies.
  ho.loader.manager.input = cli_input_handlers(parse_elicit_policy(o.elicit).value_or(ElicitPolicy::ask));
  oauth.attach(ho);
  return ho;
}

void CliOAuth::attach(native::NativeHostOptions& options) {
  credentials_dir_ = native::default_credentials_dir();
  options.make_auth_storage = [this](native::NativeHost& host) -> std::shared_ptr<AuthStorage> {
    auto stack = std::make_shared<OAuthStack>(host, credentials_dir_, settings_);
    stack_ = stack.get();
    // The host holds the whole stack through the client's AuthStorage.
    return std::shared_ptr<AuthStorage>(stack, stack->client.get());
  };
  options.login = [this](const std::string& server, std::function<void(Status)> done) {
    OAuthClient* c = client();
    if (!c) {
      done(Error::make(ErrorCode::internal, "no OAuth client"));
      return;
    }
    c->login(server, std::move(done));
  };
}

OAuthClient* CliOAuth::client() const { return stack_ ? stack_->client.get() : nullptr; }

void CliOAuth::set_servers(const std::vector<ServerConfig>& configs) const {
  OAuthClient* c = client();
  if (!c) return;
  for (const auto& cfg : configs) {
    if (cfg.type == TransportType::http || cfg.type == TransportType::sse) {
      c->set_server(OAuthServer::from_config(cfg));
    }
  }
}

namespace {

// Generous backstops (each request and the user step have their own timeouts).
constexpr Millis kLoginLimit{10 * 60 * 1000};
constexpr Millis kConnectLimit{10 * 60 * 1000};
constexpr Millis kLocalLimit{60 * 1000};

bool is_http(const ServerConfig& c) {
  return c.type == TransportType::http || c.type == TransportType::sse;
}

std::string q(const std::string& s) { return "\"" + s + "\""; }

// The host every auth command runs on, with the OAuth stack attached.
struct AuthRun {
  explicit AuthRun(const GlobalOptions& o, CliOAuth::Settings settings = {}) : oauth(settings) {
    host = std::make_unique<native::NativeHost>(cli_host_options(o, oauth));
  }

  // Discovery (configs only); false = a usage error, reported.
  bool discover() {
    if (auto ok = host->check(); !ok.ok()) {
      std::fprintf(stderr, "mcprt: %s\n", ok.error().message.c_str());
      return false;
    }
    d = host->discover();
    oauth.set_servers(d.configs);
    return true;
  }

  const ServerConfig* config(const std::string& name) const {
    for (const auto& c : d.configs) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  // The http/sse server `name` (nullptr + a message and `rc` when it is not one).
  const ServerConfig* http_server(const std::string& name, int& rc) const {
    if (const ServerConfig* c = config(name)) {
      if (is_http(*c)) return c;
      std::fprintf(stderr,
                   "mcprt: server %s is a %s server; OAuth sign-in is for http and sse servers\n",
                   q(name).c_str(), to_string(c->type));
      rc = kExitUsage;
      return nullptr;
    }
    if (const ProjectServer* p = find_pending(d, name)) {
      std::fprintf(stderr, "mcprt: server %s (%s) is not trusted; to trust it: %s\n",
                   q(name).c_str(), p->config.source.path.c_str(),
                   trust_command(p->folder).c_str());
      rc = kExitNotTrusted;
      return nullptr;
    }
    for (const auto& e : d.errors) {
      if (e.server == name) {
        std::fprintf(stderr, "mcprt: %s\n", e.describe().c_str());
        rc = kExitUsage;
        return nullptr;
      }
    }
    const bool disabled = std::find(d.disabled.begin(), d.disabled.end(), name) != d.disabled.end();
    std::fprintf(stderr, "mcprt: %s %s\n", disabled ? "server is disabled:" : "unknown server",
                 q(name).c_str());
    rc = kExitUsage;
    return nullptr;
  }

  // The named server, or every http/sse server.
  std::vector<const ServerConfig*> targets(const std::string& name, int& rc) const {
    std::vector<const ServerConfig*> out;
    if (!name.empty()) {
      if (const ServerConfig* c = http_server(name, rc)) out.push_back(c);
      return out;
    }
    for (const auto& c : d.configs) {
      if (is_http(c)) out.push_back(&c);
    }
    return out;
  }

  Result<OAuthStatus> status(const std::string& server) {
    std::optional<Result<OAuthStatus>> out;
    oauth.client()->status(server, [&](Result<OAuthStatus> r) { out = std::move(r); });
    host->run_until([&] { return out.has_value(); }, kLocalLimit);
    if (!out)
      return Error::make(ErrorCode::timeout, "reading the stored credentials did not finish");
    return std::move(*out);
  }

  CliOAuth oauth;  // before the host: it outlives it
  std::unique_ptr<native::NativeHost> host;
  DiscoveryResult d;
};

// A manager of its own for the servers being signed in to: nothing else is started.
struct OneOffManager {
  explicit OneOffManager(native::NativeHost& host) : host_(host) {
    ManagerOptions mo;
    mo.cwd = host.cwd();
    mo.default_timeout = native::default_timeout_from_env(&host.logger());
    manager = std::make_shared<McpManager>(host.services(), mo);
  }
  ~OneOffManager() {
    host_.wait(
        [&](std::function<void()> complete) { manager->disconnect_all(std::move(complete)); },
        Millis(5000));
    manager.reset();
    host_.executor().poll();
  }

  GateResult connect(std::vector<ServerConfig> configs) {
    std::optional<GateResult> gate;
    manager->connect_servers(std::move(configs), [&](GateResult r) { gate = std::move(r); });
    host_.run_until([&] { return gate.has_value(); }, kConnectLimit);
    return gate.value_or(GateResult{});
  }

  Status reconnect(const std::string& name) {
    std::optional<Status> st;
    manager->reconnect_server(name, [&](Status s) { st = std::move(s); });
    host_.run_until([&] { return st.has_value(); }, kConnectLimit);
    return st.value_or(Status(
        Error::make(ErrorCode::timeout, server_prefix_of(name) + "did not connect in time")));
  }

  static std::string server_prefix_of(const std::string& name) {
    return "Server " + q(name) + ": ";
  }

  native::NativeHost& host_;
  std::shared_ptr<McpManager> manager;
};

Status login(AuthRun& run, const std::string& server) {
  std::optional<Status> st;
  run.oauth.client()->login(server, [&](Status s) { st = std::move(s); });
  run.host->run_until([&] { return st.has_value(); }, kLoginLimit);
  return st.value_or(Status(Error::make(ErrorCode::timeout, "the sign-in did not finish in time")));
}

// "Signed in to "x": 3 tools" and the tools, as `mcprt tools` prints them.
void print_connected(const McpManager& m, const std::string& server) {
  std::vector<std::shared_ptr<McpTool>> tools;
  std::size_t width = 0;
  for (const auto& t : m.tools()) {
    if (t->info().server != server) continue;
    tools.push_back(t);
    width = std::max(width, t->name().size());
  }
  std::printf("Signed in to %s and connected: %zu tool%s\n", q(server).c_str(), tools.size(),
              tools.size() == 1 ? "" : "s");
  for (const auto& t : tools) {
    std::string desc = t->description();
    if (auto nl = desc.find('\n'); nl != std::string::npos) desc.resize(nl);
    std::printf("  %-*s  %s\n", static_cast<int>(width), t->name().c_str(), desc.c_str());
  }
}

// "in 52 min" / "12 min ago" for an expiry time.
std::string relative_time(std::int64_t at_unix_ms) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  std::int64_t s = (at_unix_ms - now) / 1000;
  const bool past = s < 0;
  if (past) s = -s;
  std::string n = s < 120    ? std::to_string(s) + " s"
                  : s < 7200 ? std::to_string(s / 60) + " min"
                             : std::to_string(s / 3600) + " h";
  return past ? n + " ago" : "in " + n;
}

bool signed_in(const OAuthStatus& st) {
  return (st.has_access_token && !st.expired) || st.has_refresh_token;
}

std::string state_text(const OAuthStatus& st) {
  if (st.grant == OAuthConfig::Grant::client_credentials) {
    return st.has_access_token && !st.expired
               ? "client credentials (token held)"
               : "client credentials (no token yet; gets one by itself)";
  }
  if (st.has_access_token && !st.expired) return "signed in";
  if (st.has_refresh_token) return "signed in (access token expired; refreshes on use)";
  if (st.has_credential) return "not signed in (client registered)";
  return "not signed in";
}

}  // namespace

int run_auth_login(const GlobalOptions& options, const std::string& server, bool open_browser) {
  AuthRun run(options, CliOAuth::Settings{false, open_browser});
  if (!run.discover()) return kExitUsage;
  int rc = kExitOk;
  std::vector<const ServerConfig*> targets = run.targets(server, rc);
  if (rc != kExitOk) return rc;
  if (targets.empty()) {
    std::printf("No http or sse MCP servers are configured; nothing to sign in to.\n");
    return kExitOk;
  }
  if (run.oauth.credentials_dir().empty()) {
    std::fprintf(stderr,
                 "mcprt: there is no place to store credentials (set HOME or XDG_DATA_HOME)\n");
    return kExitFailed;
  }
  OneOffManager mm(*run.host);

  // Without a name: connect every http/sse server (no user step) and sign in to those
  // that need it.
  std::vector<std::string> wanted;
  if (!server.empty()) {
    wanted.push_back(server);
  } else {
    std::vector<ServerConfig> configs;
    for (const auto* c : targets) configs.push_back(*c);
    GateResult gate = mm.connect(std::move(configs));
    wanted = gate.needs_auth;
    for (const auto& name : gate.connected)
      std::printf("%s is connected (no sign-in needed).\n", q(name).c_str());
    for (const auto& [name, err] : gate.errors) {
      if (err.code != ErrorCode::needs_auth)
        std::fprintf(stderr, "mcprt: %s\n", err.message.c_str());
    }
    if (wanted.empty()) {
      std::printf("No server needs a sign-in.\n");
      std::fflush(stdout);
      return gate.errors.empty() ? kExitOk : kExitFailed;
    }
  }

  bool failed = false, still_needs_auth = false;
  for (const auto& name : wanted) {
    std::fflush(stdout);
    Status in = login(run, name);
    if (!in.ok()) {
      std::fprintf(stderr, "mcprt: sign-in to %s failed: %s\n", q(name).c_str(),
                   in.error().message.c_str());
      failed = true;
      continue;
    }
    Status connected;
    if (mm.manager->server_state(name)) {
      connected = mm.reconnect(name);
    } else {
      GateResult gate = mm.connect({*run.config(name)});
      if (auto it = gate.errors.find(name); it != gate.errors.end()) connected = Status(it->second);
    }
    if (!connected.ok()) {
      const bool auth = connected.error().code == ErrorCode::needs_auth;
      std::fprintf(stderr, "mcprt: signed in to %s, but connecting %s: %s\n", q(name).c_str(),
                   auth ? "still needs authorization" : "failed",
                   connected.error().message.c_str());
      if (auth) {
        still_needs_auth = true;
      } else {
        failed = true;
      }
      continue;
    }
    print_connected(*mm.manager, name);
  }
  std::fflush(stdout);
  if (failed) return kExitFailed;
  return still_needs_auth ? kExitNeedsAuth : kExitOk;
}

int run_auth_logout(const GlobalOptions& options, const std::string& server) {
  AuthRun run(options);
  if (!run.discover()) return kExitUsage;
  int rc = kExitOk;
  std::vector<const ServerConfig*> targets = run.targets(server, rc);
  if (rc != kExitOk) return rc;
  for (const auto* c : targets) {
    auto before = run.status(c->name);
    const bool had = before.ok() && (before->has_access_token || before->has_refresh_token);
    std::optional<Status> st;
    run.oauth.client()->logout(c->name, [&](Status s) { st = std::move(s); });
    run.host->run_until([&] { return st.has_value(); }, kLocalLimit);
    if (!st || !st->ok()) {
      std::fprintf(stderr, "mcprt: sign-out of %s failed: %s\n", q(c->name).c_str(),
                   st ? st->error().message.c_str() : "it did not finish in time");
      rc = kExitFailed;
      continue;
    }
    if (had) {
      std::printf("Signed out of %s: its tokens were deleted (the client registration is kept).\n",
                  q(c->name).c_str());
    } else {
      std::printf("%s was not signed in; nothing to delete.\n", q(c->name).c_str());
    }
  }
  if (targets.empty()) std::printf("No http or sse MCP servers are configured.\n");
  std::fflush(stdout);
  return rc;
}

int run_auth_status(const GlobalOptions& options, const std::string& server, bool as_json) {
  AuthRun run(options);
  if (!run.discover()) return kExitUsage;
  int rc = kExitOk;
  std::vector<const ServerConfig*> targets = run.targets(server, rc);
  if (rc != kExitOk) return rc;
  const std::string& dir = run.oauth.credentials_dir();
  json rows = json::array();
  std::vector<std::string> lines;
  std::size_t width = 4;
  for (const auto* c : targets) width = std::max(width, c->name.size());
  bool any_signed_out = false;
  for (const auto* c : targets) {
    auto st = run.status(c->name);
    if (!st.ok()) {
      rows.push_back(
          {{"name", c->name}, {"url", redact_url(c->url)}, {"error", st.error().message}});
      lines.push_back("  " + c->name + std::string(width - c->name.size(), ' ') +
                      "  error: " + st.error().message);
      rc = kExitFailed;
      continue;
    }
    const OAuthStatus& s = *st;
    if (!signed_in(s) && s.grant == OAuthConfig::Grant::authorization_code) any_signed_out = true;
    json row = {{"name", c->name},
                {"url", redact_url(c->url)},
                {"signedIn", signed_in(s)},
                {"state", state_text(s)},
                {"issuer", s.issuer},
                {"resource", s.resource},
                {"clientId", s.client_id},
                {"clientSource", s.client_source},
                {"grant", to_string(s.grant)},
                {"hasAccessToken", s.has_access_token},
                {"hasRefreshToken", s.has_refresh_token},
                {"expiresAt", s.expires_at_unix_ms ? json(*s.expires_at_unix_ms) : json(nullptr)},
                {"expired", s.expired},
                {"scopes", s.scopes}};
    rows.push_back(std::move(row));
    std::string line =
        "  " + c->name + std::string(width - c->name.size(), ' ') + "  " + state_text(s);
    if (s.has_access_token && s.expires_at_unix_ms) {
      line += std::string(s.expired ? ", expired " : ", expires ") +
              relative_time(*s.expires_at_unix_ms);
    }
    if (!s.issuer.empty()) line += "; issuer " + s.issuer;
    if (!s.client_source.empty()) line += "; client from " + s.client_source;
    if (!s.scopes.empty()) {
      line += "; scopes";
      for (const auto& sc : s.scopes) line += " " + sc;
    }
    lines.push_back(std::move(line));
  }
  if (as_json) {
    json out = {{"credentialsDir", dir.empty() ? json(nullptr) : json(dir)}, {"servers", rows}};
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else if (targets.empty()) {
    std::printf("No http or sse MCP servers are configured.\n");
  } else {
    std::printf("OAuth sign-ins (credentials in %s):\n",
                dir.empty() ? "memory only: no HOME or XDG_DATA_HOME" : dir.c_str());
    for (const auto& l : lines) std::printf("%s\n", l.c_str());
  }
  std::cout.flush();
  // One named server that is not signed in: 4, so scripts can test it.
  if (rc == kExitOk && !server.empty() && any_signed_out) rc = kExitNeedsAuth;
  return rc;
}

}  // namespace mcprt::cli
