// The `mcprt` commands over NativeHost: list, tools, call, status, repl.
#include "cli_commands.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/mcp_command.hpp"
#include "mcprt/native/host.hpp"

namespace mcprt::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Generous backstops: each server has its own timeouts; these only keep a broken server
// from hanging the CLI forever.
constexpr Millis kLoadLimit{10 * 60 * 1000};
constexpr Millis kCallLimit{24 * 60 * 60 * 1000};
constexpr Millis kCommandLimit{10 * 60 * 1000};

std::string first_line(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// Live per-server progress while connecting, one line per server rewritten in place as
// status events arrive. Only on a terminal (stderr); otherwise it prints nothing.
class ProgressDisplay {
 public:
  ProgressDisplay() : enabled_(::isatty(STDERR_FILENO) == 1) {}

  void on_status(const StatusEvent& e) {
    if (!enabled_ || stopped_) return;
    if (!lines_.count(e.server)) order_.push_back(e.server);
    std::string line = "  " + e.server + ": " + to_string(e.phase);
    if (e.phase == ServerPhase::connected) line += ", " + std::to_string(e.tool_count) + " tools";
    if (e.error && e.phase != ServerPhase::connected) line += ": " + first_line(e.error->message);
    if (e.phase == ServerPhase::connecting && !e.source.provider_name.empty()) {
      line += " (" + e.source.provider_name + ")";
    }
    // A wrapped line would break the cursor arithmetic of redraw().
    if (line.size() > kMaxLineChars) line = line.substr(0, kMaxLineChars - 3) + "...";
    lines_[e.server] = line;
    redraw();
  }

  // Leaves the lines as they are and ignores later events.
  void stop() { stopped_ = true; }

 private:
  void redraw() {
    std::string out;
    if (drawn_ > 0) out += "\033[" + std::to_string(drawn_) + "F";  // back to the first line
    for (const auto& name : order_) out += "\033[2K" + lines_[name] + "\n";
    drawn_ = order_.size();
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
  }

  static constexpr std::size_t kMaxLineChars = 78;
  bool enabled_;
  bool stopped_ = false;
  std::vector<std::string> order_;
  std::map<std::string, std::string> lines_;
  std::size_t drawn_ = 0;
};

// The host plus what every command needs from startup.
struct Run {
  ProgressDisplay progress;
  std::unique_ptr<native::NativeHost> host;
  LoadResult result;
  long long elapsed_ms = 0;
};

// Builds the host and loads (discover → connect → gate). nullptr = a usage/config error,
// already reported on stderr.
std::unique_ptr<Run> start(const GlobalOptions& o) {
  auto run = std::make_unique<Run>();
  native::NativeHostOptions ho;
  ho.cwd = o.cwd;
  ho.config_file = o.config_path;
  ho.use_cache = !o.no_cache;
  // The CLI reports server failures itself; the log shows only errors unless
  // MCPRT_LOG_LEVEL asks for more.
  ho.log.level = LogLevel::error;
  Run* raw = run.get();
  ho.loader.on_status = [raw](const StatusEvent& e) { raw->progress.on_status(e); };
  auto started = Clock::now();
  run->host = std::make_unique<native::NativeHost>(std::move(ho));
  if (auto ok = run->host->check(); !ok.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", ok.error().message.c_str());
    return nullptr;
  }
  run->result = run->host->load(kLoadLimit);
  run->progress.stop();
  run->elapsed_ms = std::chrono::duration_cast<Millis>(Clock::now() - started).count();
  return run;
}

json source_json(const SourceInfo& s) {
  return {{"provider", s.provider},
          {"providerName", s.provider_name},
          {"level", to_string(s.level)},
          {"path", s.path}};
}

// Every server the run knows: the manager's, then disabled and invalid ones.
json servers_json(const Run& run) {
  json out = json::array();
  const auto& d = run.result.discovery;
  std::map<std::string, json> rows;
  if (auto m = run.host->manager()) {
    for (const auto& st : m->server_states()) {
      rows[st.name] = {{"name", st.name},
                       {"status", to_string(st.phase)},
                       {"error", st.last_error && st.phase != ServerPhase::connected
                                     ? json(st.last_error->message)
                                     : json(nullptr)},
                       {"toolCount", st.tool_count},
                       {"source", source_json(st.source)}};
    }
  }
  auto source_of = [&](const std::string& name) {
    auto it = d.sources.find(name);
    return it == d.sources.end() ? SourceInfo{} : it->second;
  };
  for (const auto& name : d.disabled) {
    if (rows.count(name)) continue;
    rows[name] = {{"name", name}, {"status", "disabled"}, {"error", nullptr},
                  {"toolCount", 0},  {"source", source_json(source_of(name))}};
  }
  for (const auto& e : d.errors) {
    if (e.server.empty() || rows.count(e.server)) continue;
    SourceInfo src = source_of(e.server);
    if (src.path.empty()) src.path = e.path;
    rows[e.server] = {{"name", e.server}, {"status", "invalid"}, {"error", e.message},
                      {"toolCount", 0},   {"source", source_json(src)}};
  }
  for (auto& [name, row] : rows) out.push_back(std::move(row));
  return out;
}

bool any_server_failed(const Run& run) {
  if (auto m = run.host->manager()) {
    for (const auto& st : m->server_states()) {
      if (st.phase == ServerPhase::failed) return true;
    }
  }
  return false;
}

// Runs one /mcp line to its answer.
std::string mcp_command(native::NativeHost& host, const std::string& line) {
  auto out = std::make_shared<std::optional<std::string>>();
  host.commands().execute(line, [out](std::string s) { *out = std::move(s); });
  host.run_until([&] { return out->has_value(); }, kCommandLimit);
  return out->value_or("mcprt: the command did not finish in time\n");
}

struct CallOutcome {
  bool finished = false;
  Result<ToolResult> result = Error::make(ErrorCode::internal, "not run");
};

CallOutcome call_tool(native::NativeHost& host, const std::string& name, json args) {
  auto out = std::make_shared<CallOutcome>();
  host.registry().call(name, std::move(args), {}, [out](Result<ToolResult> r) {
    out->result = std::move(r);
    out->finished = true;
  });
  host.run_until([&] { return out->finished; }, kCallLimit);
  return *out;
}

// A JSON object of arguments, or an error message.
Result<json> parse_arguments(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  json args = json::parse(text, nullptr, false);
  if (args.is_discarded()) {
    return Error::make(ErrorCode::invalid_argument, "the arguments are not valid JSON: " + text);
  }
  if (!args.is_object()) {
    return Error::make(ErrorCode::invalid_argument, "the arguments must be a JSON object, got: " + text);
  }
  return args;
}

}  // namespace

int run_list(const GlobalOptions& options) {
  auto run = start(options);
  if (!run) return kExitUsage;
  std::fputs(mcp_command(*run->host, "/mcp list").c_str(), stdout);
  for (const auto& e : run->result.discovery.errors) {
    if (e.server.empty()) std::printf("config error: %s\n", e.describe().c_str());
  }
  std::fflush(stdout);
  bool failed = any_server_failed(*run) || !run->result.errors.empty();
  run->host->shutdown();
  return failed ? kExitFailed : kExitOk;
}

int run_tools(const GlobalOptions& options, bool as_json) {
  auto run = start(options);
  if (!run) return kExitUsage;
  const LoadResult& r = run->result;

  if (as_json) {
    json out = {{"tools", json::array()},
                {"errors", json::array()},
                {"servers", servers_json(*run)},
                {"elapsedMs", run->elapsed_ms}};
    for (const auto& t : r.tools) {
      const auto& info = t->info();
      out["tools"].push_back({{"name", info.name},
                              {"server", info.server},
                              {"tool", info.raw_name},
                              {"description", info.description},
                              {"deferred", info.deferred},
                              {"path", info.path}});
    }
    for (const auto& e : r.errors) out["errors"].push_back({{"path", e.path}, {"error", e.error}});
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    const bool tty = ::isatty(STDOUT_FILENO) == 1;
    const char* bold = tty ? "\033[1m" : "";
    const char* red = tty ? "\033[31m" : "";
    const char* dim = tty ? "\033[2m" : "";
    const char* reset = tty ? "\033[0m" : "";
    std::map<std::string, const ServerConfig*> configs;
    for (const auto& c : r.discovery.configs) configs[c.name] = &c;
    std::size_t width = 0;
    for (const auto& t : r.tools) width = std::max(width, t->name().size());
    std::size_t connected = 0, total = 0;
    auto m = run->host->manager();
    for (const auto& st : m ? m->server_states() : std::vector<ServerState>{}) {
      ++total;
      auto c = configs.find(st.name);
      std::string kind = c == configs.end() ? "" : to_string(c->second->type);
      std::string via = st.source.provider_name.empty() ? "" : ", " + st.source.provider_name;
      if (st.phase == ServerPhase::failed || (st.last_error && st.phase != ServerPhase::connected &&
                                              st.tool_count == 0)) {
        std::printf("%s%s%s (%s%s) %sfailed%s: %s\n", bold, st.name.c_str(), reset, kind.c_str(),
                    via.c_str(), red, reset,
                    st.last_error ? st.last_error->message.c_str() : "unknown error");
        continue;
      }
      if (st.phase == ServerPhase::connected) ++connected;
      std::printf("%s%s%s (%s%s) %s, %zu tools%s\n", bold, st.name.c_str(), reset, kind.c_str(),
                  via.c_str(), to_string(st.phase), st.tool_count,
                  st.tools_from_cache ? " (from the cache)" : "");
      for (const auto& t : r.tools) {
        if (t->info().server != st.name) continue;
        std::printf("  %-*s  %s%s%s\n", static_cast<int>(width), t->name().c_str(), dim,
                    first_line(t->description()).c_str(), reset);
      }
    }
    for (const auto& name : r.discovery.disabled) {
      std::printf("%s%s%s %s(disabled)%s\n", bold, name.c_str(), reset, dim, reset);
    }
    for (const auto& e : r.errors) {
      if (!e.server.empty() && m && m->server_state(e.server)) continue;  // shown above
      std::printf("%sconfig error%s: %s%s\n", red, reset,
                  e.path.empty() || e.error.rfind(e.path, 0) == 0 ? "" : (e.path + ": ").c_str(),
                  e.error.c_str());
    }
    for (const auto& w : r.discovery.warnings) {
      std::printf("%swarning%s: %s\n", dim, reset, w.describe().c_str());
    }
    if (total == 0 && r.errors.empty()) {
      std::printf("No MCP servers configured (looked for %s and the other tools' configs).\n",
                  run->host->user_config_path().c_str());
    }
    std::printf("\n%zu tools from %zu of %zu servers in %.2f s\n", r.tools.size(), connected,
                total, static_cast<double>(run->elapsed_ms) / 1000.0);
  }
  std::fflush(stdout);
  run->host->shutdown();
  return r.errors.empty() ? kExitOk : kExitFailed;
}

int run_call(const GlobalOptions& options, const std::string& tool, const std::string& arguments,
             bool as_json) {
  auto args = parse_arguments(arguments);
  if (!args.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", args.error().message.c_str());
    return kExitUsage;
  }
  auto run = start(options);
  if (!run) return kExitUsage;
  if (!run->host->registry().contains(tool)) {
    std::fprintf(stderr, "mcprt: unknown tool \"%s\"", tool.c_str());
    auto names = run->host->registry().names();
    if (!names.empty()) {
      std::fprintf(stderr, "; available:");
      for (const auto& n : names) std::fprintf(stderr, " %s", n.c_str());
    }
    std::fprintf(stderr, "\n");
    for (const auto& e : run->result.errors) {
      std::fprintf(stderr, "mcprt: %s%s\n", e.path.empty() ? "" : (e.path + ": ").c_str(),
                   e.error.c_str());
    }
    run->host->shutdown();
    return kExitUsage;
  }
  // A deferred tool (served from the cache) waits for its server's connection first.
  CallOutcome outcome = call_tool(*run->host, tool, std::move(args.value()));
  int rc = kExitOk;
  if (!outcome.finished) {
    std::fprintf(stderr, "mcprt: the call did not finish in time\n");
    rc = kExitFailed;
  } else if (!outcome.result.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", outcome.result.error().message.c_str());
    rc = kExitFailed;
  } else {
    const ToolResult& tr = outcome.result.value();
    if (as_json) {
      json out = {{"content", tr.content}, {"isError", tr.is_error}, {"text", tr.text}};
      if (!tr.structured_content.is_null()) out["structuredContent"] = tr.structured_content;
      std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    } else {
      std::cout << tr.text << (tr.text.empty() || tr.text.back() != '\n' ? "\n" : "");
    }
    rc = tr.is_error ? kExitFailed : kExitOk;
  }
  std::cout.flush();
  run->host->shutdown();
  return rc;
}

int run_status(const GlobalOptions& options, const std::string& server) {
  auto run = start(options);
  if (!run) return kExitUsage;
  if (server.empty()) {
    std::fputs(mcp_command(*run->host, "/mcp list").c_str(), stdout);
    std::fflush(stdout);
    bool failed = any_server_failed(*run);
    run->host->shutdown();
    return failed ? kExitFailed : kExitOk;
  }
  std::string out = mcp_command(*run->host, "/mcp status '" + server + "'");
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  int rc = kExitOk;
  auto m = run->host->manager();
  auto st = m ? m->server_state(server) : std::nullopt;
  if (out.rfind("Unknown server", 0) == 0) {
    rc = kExitUsage;
  } else if (!st || st->status != ConnectionStatus::connected) {
    rc = kExitFailed;
  }
  run->host->shutdown();
  return rc;
}

int run_repl(const GlobalOptions& options) {
  auto run = start(options);
  if (!run) return kExitUsage;
  native::NativeHost& host = *run->host;
  const bool interactive = ::isatty(STDIN_FILENO) == 1;
  for (const auto& e : run->result.errors) {
    std::fprintf(stderr, "mcprt: %s%s\n", e.path.empty() ? "" : (e.path + ": ").c_str(),
                 e.error.c_str());
  }
  if (interactive) {
    std::printf("mcprt repl: %zu tools. /mcp help for commands, <tool> <json> to call, /quit.\n",
                host.registry().tools().size());
  }

  auto handle = [&](const std::string& raw) -> bool {  // false = quit
    std::string line = raw;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    auto start_pos = line.find_first_not_of(" \t");
    if (start_pos == std::string::npos) return true;
    line = line.substr(start_pos);
    if (line[0] == '#') return true;
    if (line == "/quit" || line == "/exit") return false;
    if (line == "/mcp" || line.rfind("/mcp ", 0) == 0) {
      std::fputs(mcp_command(host, line).c_str(), stdout);
    } else if (line == "/tools") {
      for (const auto& n : host.registry().names()) std::printf("%s\n", n.c_str());
    } else if (line[0] == '/') {
      std::printf("Unknown command %s. Try /mcp help, /tools, /quit.\n", line.c_str());
    } else {
      auto space = line.find_first_of(" \t");
      std::string name = line.substr(0, space);
      auto args = parse_arguments(space == std::string::npos ? "" : line.substr(space + 1));
      if (!args.ok()) {
        std::printf("error: %s\n", args.error().message.c_str());
      } else if (!host.registry().contains(name)) {
        std::printf("error: unknown tool \"%s\" (/tools lists them)\n", name.c_str());
      } else {
        CallOutcome outcome = call_tool(host, name, std::move(args.value()));
        if (!outcome.finished) {
          std::printf("error: the call did not finish in time\n");
        } else if (!outcome.result.ok()) {
          std::printf("error: %s\n", outcome.result.error().message.c_str());
        } else {
          const ToolResult& tr = outcome.result.value();
          std::printf("%s%s\n", tr.is_error ? "error: " : "", tr.text.c_str());
        }
      }
    }
    std::fflush(stdout);
    return true;
  };

  // Reads stdin without blocking the loop, so servers keep being served (reconnects,
  // list_changed) while the user types.
  std::string pending;
  bool eof = false;
  bool quit = false;
  auto prompt = [&] {
    if (interactive) {
      std::printf("mcprt> ");
      std::fflush(stdout);
    }
  };
  prompt();
  while (!quit && !eof) {
    host.executor().poll();
    pollfd pfd{STDIN_FILENO, POLLIN, 0};
    int rc = ::poll(&pfd, 1, 20);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      eof = true;
    } else {
      pending.append(buf, static_cast<std::size_t>(n));
    }
    std::size_t nl;
    while (!quit && (nl = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      quit = !handle(line);
      if (!quit) prompt();
    }
    if (eof && !quit && !pending.empty()) quit = !handle(pending);
  }
  if (interactive && eof) std::printf("\n");
  std::fflush(stdout);
  host.shutdown();
  return kExitOk;
}

}  // namespace mcprt::cli
