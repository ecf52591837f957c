// mcprt-oauth-fixture: a loopback OAuth authorization server and the MCP server it
// protects (oauth_fixture.hpp), for mcprt's tests and for trying `mcprt auth login` by
// hand. Both listen on 127.0.0.1 only. When both are ready it prints one JSON line on
// stdout (the URLs and ports), then logs one line per request on stderr, without secrets.
// Stops on SIGINT/SIGTERM (and on stdin EOF with --stop-on-stdin-eof).
//
// Native (POSIX) only.

#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "http_front.hpp"
#include "oauth_fixture.hpp"
#include "tracker_tools.hpp"

#ifndef MCPRT_DEMO_VERSION
#define MCPRT_DEMO_VERSION "0.0.0"
#endif

namespace {

using mcprt::demo::json;

constexpr const char* kHost = "127.0.0.1";

void log_line(std::string_view line) {
  std::string out = "[mcprt-oauth-fixture] ";
  out.append(line);
  out.push_back('\n');
  ssize_t ignored = ::write(STDERR_FILENO, out.data(), out.size());  // best effort
  (void)ignored;
}

const char* const kUsage =
    "usage: mcprt-oauth-fixture [options]\n"
    "\n"
    "A loopback OAuth 2.1 authorization server and the MCP server it protects (22 tools:\n"
    "the demo server's and an issue tracker's). Prints one JSON line on stdout when ready:\n"
    "  {\"mcp_url\", \"resource_metadata_url\", \"issuer\", \"admin_url\", \"mcp_port\",\n"
    "   \"as_port\", \"secret_prefixes\"}\n"
    "\n"
    "  --port N                the MCP server's port (default 0: any free port)\n"
    "  --as-port N             the authorization server's port (default 0)\n"
    "  --issuer-path /P        the issuer is http://127.0.0.1:<as-port>/P (default: no path)\n"
    "  --access-token-ttl S    access tokens expire after S seconds (default 3600)\n"
    "  --token-delay-ms N      /token waits N ms before answering (race windows)\n"
    "  --no-refresh-rotation   a refresh keeps the refresh token (default: rotate)\n"
    "  --no-dcr                no dynamic client registration\n"
    "  --no-offline-access     offline_access not in the AS scopes_supported\n"
    "  --no-challenge-scope    no scope=\"...\" in the 401 challenge\n"
    "  --no-resource-metadata-header\n"
    "                          no resource_metadata=\"...\" in the 401 challenge\n"
    "  --exact-redirect-port   loopback redirect URIs must match with their port\n"
    "  --authorization-iss M   issuer (default), omit, wrong or unadvertised (RFC 9207)\n"
    "  --required-scopes \"A B\" what every MCP request needs (default mcp:tools)\n"
    "  --tool-scope TOOL=SCOPE calling TOOL also needs SCOPE (step-up); repeatable\n"
    "  --client ID[:SECRET[:METHOD]]\n"
    "                          a pre-registered client (METHOD client_secret_basic (default\n"
    "                          with a secret) or client_secret_post); repeatable\n"
    "  --switches JSON         any switches, as POST /admin/switches takes them\n"
    "  --stop-on-stdin-eof     exit when stdin closes (a parent that dies takes us along)\n"
    "  --quiet                 no request log (the ready line is still printed)\n"
    "\n"
    "Admin endpoints (on the MCP server's port; JSON bodies):\n"
    "  GET  /admin/switches, POST /admin/switches {name: value, ...}\n"
    "  GET  /admin/counters, POST /admin/reset-counters\n"
    "  GET  /admin/state\n"
    "  POST /admin/expire-access-tokens, POST /admin/revoke-refresh-tokens\n"
    "  POST /admin/move-authorization-server [{\"issuer_path\": \"/new\"}]\n"
    "  POST /admin/advance-clock {\"seconds\": N}\n";

bool parse_int(std::string_view text, long long lo, long long hi, long long& out) {
  if (text.empty() || text.size() > 12) return false;
  long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return false;
  out = v;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

struct Args {
  int port = 0;
  int as_port = 0;
  std::string issuer_path;
  json switches = json::object();
  std::vector<mcprt::demo::PreregisteredClient> clients;
  bool quiet = false;
  bool stop_on_stdin_eof = false;
};

// Returns false (after logging why) on a bad command line.
bool parse_args(int argc, char** argv, Args& a, bool& done) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) {
        log_line(arg + " needs a value (see --help)");
        return false;
      }
      out = argv[++i];
      return true;
    };
    std::string v;
    long long n = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      done = true;
      return true;
    } else if (arg == "--version") {
      std::printf("mcprt-oauth-fixture %s\n", MCPRT_DEMO_VERSION);
      done = true;
      return true;
    } else if (arg == "--port" || arg == "--as-port") {
      if (!value(v) || !parse_int(v, 0, 65535, n)) {
        log_line(arg + ": expected a port 0..65535");
        return false;
      }
      (arg == "--port" ? a.port : a.as_port) = static_cast<int>(n);
    } else if (arg == "--issuer-path") {
      if (!value(v)) return false;
      if (v.size() < 2 || v.front() != '/' || v.back() == '/' || v.find_first_of("?#% ") != std::string::npos) {
        log_line("--issuer-path: expected a path like /tenant (no trailing '/', no query)");
        return false;
      }
      a.issuer_path = v;
    } else if (arg == "--access-token-ttl") {
      if (!value(v) || !parse_int(v, 0, 100000000, n)) {
        log_line("--access-token-ttl: expected seconds (0..100000000)");
        return false;
      }
      a.switches["access_token_ttl_s"] = n;
    } else if (arg == "--token-delay-ms") {
      if (!value(v) || !parse_int(v, 0, 60000, n)) {
        log_line("--token-delay-ms: expected milliseconds (0..60000)");
        return false;
      }
      a.switches["token_delay_ms"] = n;
    } else if (arg == "--no-refresh-rotation") {
      a.switches["rotate_refresh_tokens"] = false;
    } else if (arg == "--no-dcr") {
      a.switches["dynamic_registration"] = false;
    } else if (arg == "--no-offline-access") {
      a.switches["offline_access"] = false;
    } else if (arg == "--no-challenge-scope") {
      a.switches["challenge_scope"] = false;
    } else if (arg == "--no-resource-metadata-header") {
      a.switches["resource_metadata_in_header"] = false;
    } else if (arg == "--exact-redirect-port") {
      a.switches["exact_redirect_port"] = true;
    } else if (arg == "--authorization-iss") {
      if (!value(v)) return false;
      a.switches["authorization_iss"] = v;  // checked with the other switches
    } else if (arg == "--required-scopes") {
      if (!value(v)) return false;
      json list = json::array();
      for (const auto& s : split(v, ' ')) {
        if (!s.empty()) list.push_back(s);
      }
      a.switches["required_scopes"] = list;
    } else if (arg == "--tool-scope") {
      if (!value(v)) return false;
      const auto eq = v.find('=');
      if (eq == 0 || eq == std::string::npos || eq + 1 == v.size()) {
        log_line("--tool-scope: expected TOOL=SCOPE, got \"" + v + "\"");
        return false;
      }
      if (!a.switches.contains("tool_scopes")) a.switches["tool_scopes"] = json::object();
      a.switches["tool_scopes"][v.substr(0, eq)] = v.substr(eq + 1);
    } else if (arg == "--client") {
      if (!value(v)) return false;
      const auto parts = split(v, ':');
      mcprt::demo::PreregisteredClient c;
      c.client_id = parts[0];
      if (parts.size() > 1) c.client_secret = parts[1];
      c.auth_method = c.client_secret.empty() ? "none" : "client_secret_basic";
      if (parts.size() > 2) c.auth_method = parts[2];
      const bool method_ok = (c.client_secret.empty() && c.auth_method == "none") ||
                             (!c.client_secret.empty() && (c.auth_method == "client_secret_basic" ||
                                                           c.auth_method == "client_secret_post"));
      if (c.client_id.empty() || parts.size() > 3 || !method_ok) {
        log_line("--client: expected ID, ID:SECRET or ID:SECRET:client_secret_basic|client_secret_post");
        return false;
      }
      a.clients.push_back(c);
    } else if (arg == "--switches") {
      if (!value(v)) return false;
      const json patch = json::parse(v, nullptr, false);
      if (!patch.is_object()) {
        log_line("--switches: expected a JSON object");
        return false;
      }
      for (const auto& [k, val] : patch.items()) a.switches[k] = val;
    } else if (arg == "--stop-on-stdin-eof") {
      a.stop_on_stdin_eof = true;
    } else if (arg == "--quiet" || arg == "-q") {
      a.quiet = true;
    } else {
      log_line("unknown argument: " + arg + " (see --help)");
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  bool done = false;  // --help or --version
  if (!parse_args(argc, argv, args, done)) return 2;
  if (done) return 0;
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // before any thread starts

  mcprt::demo::OAuthFixture::Log log;
  if (!args.quiet) log = log_line;
  mcprt::demo::OAuthFixture fixture({}, args.clients, args.issuer_path, log);
  if (const std::string error = fixture.apply_switches(args.switches); !error.empty()) {
    log_line(error);
    return 2;
  }

  httplib::Server as_server;
  fixture.install_authorization_server(as_server);
  const int as_port = args.as_port == 0 ? as_server.bind_to_any_port(kHost)
                                        : (as_server.bind_to_port(kHost, args.as_port) ? args.as_port : -1);
  if (as_port < 0) {
    log_line("cannot listen on 127.0.0.1:" + std::to_string(args.as_port) + " for the authorization server");
    return 1;
  }

  mcprt::demo::HttpFrontOptions options;
  options.host = kHost;
  options.port = args.port;
  options.server.server_name = "mcprt-oauth-fixture";
  options.server.server_version = MCPRT_DEMO_VERSION;
  options.server.log = log;
  options.server.extra_tools = mcprt::demo::make_tracker_tools();
  options.admit = [&fixture](const httplib::Request& req, httplib::Response& res) {
    return fixture.admit(req, res);
  };
  options.add_routes = [&fixture](httplib::Server& server) { fixture.install_resource(server); };
  mcprt::demo::HttpFrontEnd front(std::move(options));
  std::string error;
  const int mcp_port = front.bind(error);
  if (mcp_port < 0) {
    log_line(error);
    return 1;
  }
  const std::string as_origin = std::string("http://") + kHost + ":" + std::to_string(as_port);
  fixture.set_origins(front.url(), as_origin);

  std::atomic<bool> as_ok{true};
  std::atomic<bool> as_done{false};
  std::atomic<bool> mcp_ok{true};
  std::thread as_thread([&] {
    as_ok = as_server.listen_after_bind();
    as_done = true;
    ::kill(::getpid(), SIGTERM);  // wake sigwait if it ended on its own
  });
  std::thread mcp_thread([&] {
    mcp_ok = front.run();
    ::kill(::getpid(), SIGTERM);
  });
  if (args.stop_on_stdin_eof) {
    std::thread([] {
      char buf[256];
      while (::read(STDIN_FILENO, buf, sizeof buf) > 0) {
      }
      ::kill(::getpid(), SIGTERM);
    }).detach();
  }

  const std::string origin = front.url().substr(0, front.url().rfind("/mcp"));
  json ready{{"mcp_url", front.url()},
             {"resource_metadata_url", fixture.resource_metadata_url()},
             {"issuer", fixture.issuer()},
             {"as_url", as_origin},
             {"admin_url", origin + "/admin"},
             {"mcp_port", mcp_port},
             {"as_port", as_port},
             {"secret_prefixes", mcprt::demo::kSecretPrefixes}};
  const std::string line = ready.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
  log_line("listening on " + front.url() + " (authorization server " + fixture.issuer() + ")");

  int sig = 0;
  ::sigwait(&stop_signals, &sig);
  front.stop();
  // httplib's stop() does nothing until the accept loop runs; wait for it to start.
  while (!as_done && !as_server.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  as_server.stop();
  as_thread.join();
  mcp_thread.join();
  if (!as_ok || !mcp_ok) {
    log_line("a server failed");
    return 1;
  }
  log_line(std::string("stopped (") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ")");
  return 0;
}
