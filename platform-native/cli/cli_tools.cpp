// `mcprt tools`: connect to every server of a config file in parallel, list the tools.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_commands.hpp"
#include "mcprt/config.hpp"
#include "mcprt/connect.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/http_client.hpp"
#include "mcprt/native/logger.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "mcprt/tool_names.hpp"

namespace mcprt::cli {
namespace {

namespace fs = std::filesystem;

struct ServerRun {
  ServerConfig config;
  std::shared_ptr<ClientSession> session;
  enum class Phase { connecting, listing, done, failed, disabled } phase = Phase::connecting;
  std::string error;
  std::vector<json> tools;
  Millis elapsed{0};
  bool connection_ended = false;  // the transport finished closing (child reaped)
};

const char* phase_name(ServerRun::Phase p) {
  switch (p) {
    case ServerRun::Phase::connecting: return "connecting";
    case ServerRun::Phase::listing: return "connecting";
    case ServerRun::Phase::done: return "connected";
    case ServerRun::Phase::failed: return "failed";
    case ServerRun::Phase::disabled: return "disabled";
  }
  return "unknown";
}

// --config, else ./.mcprt/mcp.json, else ./.mcp.json.
std::string find_config(const ToolsCommandOptions& o, const fs::path& cwd) {
  if (!o.config_path.empty()) return fs::absolute(o.config_path).string();
  for (const char* rel : {".mcprt/mcp.json", ".mcp.json"}) {
    fs::path p = cwd / rel;
    if (fs::exists(p)) return p.string();
  }
  return {};
}

Millis default_timeout_from_env() {
  if (const char* v = std::getenv("MCPRT_TIMEOUT_MS")) {
    char* end = nullptr;
    long long ms = std::strtoll(v, &end, 10);
    if (end != v && *end == '\0' && ms >= 0) return Millis(ms);
    std::fprintf(stderr, "mcprt: ignoring MCPRT_TIMEOUT_MS=\"%s\" (not a non-negative integer)\n",
                 v);
  }
  return Millis(30000);
}

std::string first_line(std::string s) {
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

}  // namespace

int run_tools_command(const ToolsCommandOptions& options) {
  auto started = std::chrono::steady_clock::now();
  std::error_code ec;
  fs::path cwd = options.cwd.empty() ? fs::current_path(ec) : fs::absolute(options.cwd, ec);
  if (ec || !fs::is_directory(cwd)) {
    std::fprintf(stderr, "mcprt: --cwd \"%s\" is not a directory\n", options.cwd.c_str());
    return 2;
  }

  std::string path = find_config(options, cwd);
  if (path.empty()) {
    std::fprintf(stderr,
                 "mcprt: no config file: pass --config FILE, or create %s/.mcprt/mcp.json or "
                 "%s/.mcp.json\n",
                 cwd.c_str(), cwd.c_str());
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "mcprt: cannot read config file %s\n", path.c_str());
    return 2;
  }
  std::stringstream text;
  text << in.rdbuf();

  ParseOptions parse_options;
  parse_options.validate = true;
  ParsedConfig parsed = parse_mcp_servers_json(text.str(), path, parse_options);
  json errors = json::array();
  for (const auto& e : parsed.errors) errors.push_back({{"path", e.path}, {"error", e.describe()}});
  if (parsed.servers.empty() && !parsed.errors.empty() && parsed.errors.front().server.empty()) {
    // The file itself is unusable (not JSON, no mcpServers): a config error.
    for (const auto& e : parsed.errors) std::fprintf(stderr, "mcprt: %s\n", e.describe().c_str());
    return 2;
  }

  native::NativeExecutor executor;
  native::SpdlogLogger logger;
  native::NativeProcessLauncher launcher(executor, &logger);
  native::NativeHttpClient http(executor);
  ConnectServices services;
  services.executor = &executor;
  services.process_launcher = &launcher;
  services.http_client = &http;
  services.logger = &logger;

  std::vector<std::unique_ptr<ServerRun>> runs;
  for (auto& config : parsed.servers) {
    auto run = std::make_unique<ServerRun>();
    run->config = config;
    runs.push_back(std::move(run));
  }

  auto finish = [&](ServerRun& run, std::string error) {
    run.elapsed = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - started);
    if (error.empty()) {
      run.phase = ServerRun::Phase::done;
    } else {
      run.phase = ServerRun::Phase::failed;
      run.error = std::move(error);
    }
  };

  ConnectOptions connect_options;
  connect_options.cwd = cwd.string();
  connect_options.default_timeout = default_timeout_from_env();
  Millis longest{0};
  for (auto& run_ptr : runs) {
    ServerRun& run = *run_ptr;
    if (!run.config.enabled) {
      run.phase = ServerRun::Phase::disabled;
      continue;
    }
    Millis timeout = effective_timeout(run.config, connect_options);
    longest = std::max(longest, timeout == Millis(0) ? Millis(24 * 3600 * 1000) : timeout);
    ConnectOptions per_server = connect_options;
    per_server.on_close = [&run](const Error&) { run.connection_ended = true; };
    auto session = connect_to_server(
        run.config, services, per_server,
        [&run, &finish](Result<std::shared_ptr<ClientSession>> r) {
          if (!r.ok()) return finish(run, r.error().message);
          run.phase = ServerRun::Phase::listing;
          run.session->list_tools([&run, &finish](Result<std::vector<json>> tools) {
            if (!tools.ok()) return finish(run, tools.error().message);
            run.tools = std::move(tools.value());
            finish(run, {});
          });
        });
    if (!session.ok()) {
      finish(run, session.error().message);
      continue;
    }
    run.session = session.value();
  }

  auto all_settled = [&] {
    return std::all_of(runs.begin(), runs.end(), [](const auto& r) {
      return r->phase != ServerRun::Phase::connecting && r->phase != ServerRun::Phase::listing;
    });
  };
  // Each connect has its own deadline; the pump limit is only a backstop.
  executor.run_until(all_settled, longest * 2 + Millis(5000));
  auto listed_at = std::chrono::steady_clock::now();
  for (auto& run : runs) {
    if (run->phase == ServerRun::Phase::connecting || run->phase == ServerRun::Phase::listing)
      finish(*run, "Server \"" + run->config.name + "\": did not answer in time");
  }

  // Name every tool with collisions resolved across servers.
  std::vector<RawToolRef> refs;
  std::vector<std::pair<ServerRun*, const json*>> owners;
  for (auto& run : runs) {
    for (const auto& t : run->tools) {
      refs.push_back({run->config.name, t.value("name", "")});
      owners.emplace_back(run.get(), &t);
    }
  }
  std::vector<std::string> names = assign_tool_names(refs);
  auto elapsed_ms =
      std::chrono::duration_cast<Millis>(listed_at - started).count();

  int failed = 0;
  for (auto& run : runs) failed += run->phase == ServerRun::Phase::failed;

  if (options.json) {
    json out = {{"tools", json::array()}, {"errors", errors}, {"servers", json::array()},
                {"elapsedMs", elapsed_ms}};
    std::vector<std::size_t> order(names.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return names[a] < names[b]; });
    for (auto i : order) {
      const json& t = *owners[i].second;
      out["tools"].push_back({{"name", names[i]},
                              {"server", owners[i].first->config.name},
                              {"tool", refs[i].tool},
                              {"description", t.value("description", "")},
                              {"deferred", false},
                              {"path", path}});
    }
    for (auto& run : runs) {
      json s = {{"name", run->config.name},
                {"status", phase_name(run->phase)},
                {"error", run->error.empty() ? json(nullptr) : json(run->error)},
                {"toolCount", run->tools.size()},
                {"elapsedMs", run->elapsed.count()}};
      out["servers"].push_back(std::move(s));
      if (!run->error.empty()) out["errors"].push_back({{"path", path}, {"error", run->error}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
    const bool tty = ::isatty(STDOUT_FILENO);
    const char* bold = tty ? "\033[1m" : "";
    const char* red = tty ? "\033[31m" : "";
    const char* dim = tty ? "\033[2m" : "";
    const char* reset = tty ? "\033[0m" : "";
    std::size_t width = 0;
    for (auto& n : names) width = std::max(width, n.size());
    std::size_t i = 0;
    std::size_t tool_count = 0, connected = 0;
    for (auto& run : runs) {
      const auto& c = run->config;
      if (run->phase == ServerRun::Phase::disabled) {
        std::printf("%s%s%s %s(disabled)%s\n", bold, c.name.c_str(), reset, dim, reset);
        continue;
      }
      if (run->phase == ServerRun::Phase::failed) {
        std::printf("%s%s%s %sfailed%s after %lld ms: %s\n", bold, c.name.c_str(), reset, red,
                    reset, static_cast<long long>(run->elapsed.count()), run->error.c_str());
        continue;
      }
      ++connected;
      std::printf("%s%s%s (%s) connected in %lld ms, %zu tools\n", bold, c.name.c_str(), reset,
                  to_string(c.type), static_cast<long long>(run->elapsed.count()),
                  run->tools.size());
      for (; i < owners.size() && owners[i].first == run.get(); ++i) {
        std::string desc = first_line(owners[i].second->value("description", ""));
        std::printf("  %-*s  %s%s%s\n", static_cast<int>(width), names[i].c_str(), dim,
                    desc.c_str(), reset);
        ++tool_count;
      }
    }
    for (const auto& e : parsed.errors)
      std::printf("%sconfig error%s: %s\n", red, reset, e.describe().c_str());
    std::printf("\n%zu tools from %zu of %zu servers in %.2f s\n", tool_count, connected,
                runs.size(), static_cast<double>(elapsed_ms) / 1000.0);
  }
  std::fflush(stdout);

  // Shut down cleanly: close every session (stdin close → SIGTERM → SIGKILL for servers
  // that linger) and wait until every connection reports it ended, i.e. its child was
  // reaped. The backstop covers both grace periods of the close sequence.
  for (auto& run : runs) {
    if (run->session) run->session->close();
  }
  executor.run_until(
      [&] {
        return std::all_of(runs.begin(), runs.end(),
                           [](const auto& r) { return !r->session || r->connection_ended; });
      },
      Millis(5000));
  runs.clear();
  executor.run_for(Millis(0));

  return (failed > 0 || !parsed.errors.empty()) ? 1 : 0;
}

}  // namespace mcprt::cli
