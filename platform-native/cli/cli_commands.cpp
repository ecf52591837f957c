// The `mcprt` commands over NativeHost: list, tools, call, status, repl, resources, prompts,
// read, prompt, search.
#include "cli_commands.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_auth.hpp"
#include "cli_elicit.hpp"
#include "cli_line_editor.hpp"
#include "mcprt/json_text.hpp"
#include "mcprt/mcp_command.hpp"
#include "mcprt/native/discovery.hpp"
#include "mcprt/native/host.hpp"
#include "mcprt/redact.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/tool_names.hpp"

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

// "1 tool", "2 tools".
std::string tools_count(std::size_t n) { return std::to_string(n) + (n == 1 ? " tool" : " tools"); }

// Live progress on stderr: one line per key (each server while connecting, the tool while
// `call` runs), rewritten in place as events arrive, and erased by clear() when the work is
// done, so the output that follows starts where the block did and no stale "connecting"
// line stays on the screen. Only when stderr is a terminal: elsewhere (a pipe, a file, CI
// logs) it prints nothing, so what a script reads from stderr is the errors alone.
class ProgressDisplay {
 public:
  ProgressDisplay() : enabled_(::isatty(STDERR_FILENO) == 1), columns_(line_columns()) {}
  ~ProgressDisplay() { clear(); }
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  void on_status(const StatusEvent& e) {
    if (statuses_done_) return;
    std::string line = "  " + e.server + ": " + to_string(e.phase);
    if (e.phase == ServerPhase::connected) line += ", " + tools_count(e.tool_count);
    if (e.error && e.phase != ServerPhase::connected) line += ": " + first_line(e.error->message);
    if (e.phase == ServerPhase::connecting && !e.source.provider_name.empty()) {
      line += " (" + e.source.provider_name + ")";
    }
    set_line(e.server, std::move(line));
  }

  // The load is over: its block goes, and later status events (background reconnects) are
  // not shown.
  void end_statuses() {
    statuses_done_ = true;
    clear();
  }

  // notifications/progress of a call: "  <tool>: 3/10 (30%) step 3 of 10".
  void on_call_progress(const std::string& tool, const json& params) {
    std::string line = "  " + tool + ":";
    auto number = [](const json& v) {
      const double d = v.get<double>();
      if (d == static_cast<double>(static_cast<long long>(d)) && d > -1e15 && d < 1e15) {
        return std::to_string(static_cast<long long>(d));
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", d);
      return std::string(buf);
    };
    auto progress = params.find("progress");
    auto total = params.find("total");
    if (progress != params.end() && progress->is_number()) {
      line += " " + number(*progress);
      if (total != params.end() && total->is_number() && total->get<double>() > 0) {
        line += "/" + number(*total);
        const double pct = 100.0 * progress->get<double>() / total->get<double>();
        if (pct >= 0 && pct <= 100) line += " (" + std::to_string(static_cast<int>(pct)) + "%)";
      }
    }
    auto message = params.find("message");
    if (message != params.end() && message->is_string()) line += " " + first_line(message->get<std::string>());
    set_line(tool, std::move(line));
  }

  // Erases the block (cursor back to its first line, then to the end of the screen).
  void clear() {
    if (enabled_ && drawn_ > 0) {
      std::fprintf(stderr, "\033[%zuF\033[J", drawn_);
      std::fflush(stderr);
    }
    drawn_ = 0;
    order_.clear();
    lines_.clear();
  }

 private:
  void set_line(const std::string& key, std::string line) {
    if (!enabled_) return;
    if (!lines_.count(key)) order_.push_back(key);
    lines_[key] = fit(std::move(line), columns_);
    redraw();
  }

  void redraw() {
    std::string out;
    if (drawn_ > 0) out += "\033[" + std::to_string(drawn_) + "F";  // back to the first line
    for (const auto& name : order_) out += "\033[2K" + lines_[name] + "\n";
    drawn_ = order_.size();
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
  }

  // The terminal's width less one (a line that fills the last column wraps on some
  // terminals), at least 20; 78 when the terminal does not say.
  static std::size_t line_columns() {
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_col == 0) return 78;
    return std::max<std::size_t>(size.ws_col - 1, 20);
  }

  // A wrapped line would break the cursor arithmetic of redraw(): longer lines end in
  // "..." at `columns` code points (cut between UTF-8 sequences, never inside one).
  static std::string fit(std::string line, std::size_t columns) {
    std::size_t points = 0, cut = std::string::npos;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
      if (points == columns - 3) cut = i;
      if (++points > columns) {
        line.resize(cut);
        return line + "...";
      }
    }
    return line;
  }

  bool enabled_;
  std::size_t columns_;
  bool statuses_done_ = false;
  std::vector<std::string> order_;
  std::map<std::string, std::string> lines_;
  std::size_t drawn_ = 0;
};

// --- project trust ------------------------------------------------------------------------

// `s` in single quotes for a POSIX shell ('\'' for a quote inside).
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::string trust_command(const std::string& folder) { return "mcprt trust " + shell_quote(folder); }

// Server names are letters, digits and `_.:-` (validate_server_name): shell-safe, but one
// that starts with '-' would read as an option.
std::string auth_login_command(const std::string& server) {
  return std::string("mcprt auth login ") + (!server.empty() && server[0] == '-' ? "-- " : "") +
         server;
}

namespace {

// The lines that say what a project server would do once trusted, as written.
std::vector<std::string> launch_lines(const ServerConfig& c) {
  std::vector<std::string> out;
  out.push_back(std::string(c.type == TransportType::stdio ? "runs: " : "connects to: ") + describe_launch(c));
  for (const auto& cmd : connect_time_commands(c)) out.push_back("runs at connect: " + cmd);
  auto vars = referenced_variables(c);
  if (!vars.empty()) {
    std::string line = "reads the environment variables:";
    for (const auto& v : vars) line += " " + v;
    out.push_back(line);
  }
  return out;
}

// What an entry would run, as JSON: {"command", "args"} or {"url"} (as written; the URL
// redacted) and the connect-time commands.
void add_launch_json(json& row, const ServerConfig& c) {
  if (c.type == TransportType::stdio) {
    row["command"] = c.command;
    row["args"] = c.args;
  } else {
    row["url"] = redact_url(c.url);
  }
  auto cmds = connect_time_commands(c);
  if (!cmds.empty()) row["connectCommands"] = cmds;
}

// One line from the terminal, read byte by byte so nothing the REPL reads later is
// buffered away here. Empty at EOF.
std::string read_terminal_line() {
  std::string line;
  char c;
  while (line.size() < 256) {
    ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    line.push_back(c);
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  std::size_t b = line.find_first_not_of(' ');
  return b == std::string::npos ? std::string() : line.substr(b);
}

bool is_yes(const std::string& answer) { return answer == "y" || answer == "Y" || answer == "yes"; }

// The TTY prompt: names every server with what it would run, then one question (or, on
// "s", one per server). The answer is recorded by the loader in the user file.
void prompt_for_trust(const std::vector<ProjectServer>& pending, const std::string& user_file,
                      const std::function<void(TrustAnswer)>& answer) {
  const std::string folder = pending.empty() ? std::string() : pending.front().folder;
  std::string text = "\nmcprt: the project " + folder + " configures " + std::to_string(pending.size()) +
                     " MCP server" + (pending.size() == 1 ? "" : "s") +
                     " that you have not trusted. Trusting one runs it:\n";
  for (const auto& p : pending) {
    text += "  " + p.name + " (" + to_string(p.config.type) + ", " + p.config.source.provider_name + ", " +
            p.config.source.path + ")\n";
    for (const auto& line : launch_lines(p.config)) text += "      " + line + "\n";
  }
  text += "Trust " + std::string(pending.size() == 1 ? "it" : "them") + "? The answer is recorded in " +
          user_file + ". [y]es / [N]o / [s]elect each: ";
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  std::string reply = read_terminal_line();
  TrustAnswer a;
  if (is_yes(reply)) {
    a.trust_folder = true;
  } else if (reply == "s" || reply == "S" || reply == "select") {
    for (const auto& p : pending) {
      std::fprintf(stderr, "Trust \"%s\" (%s)? [y/N] ", p.name.c_str(), describe_launch(p.config).c_str());
      std::fflush(stderr);
      a.servers[p.name] = is_yes(read_terminal_line());
    }
  }
  answer(std::move(a));
}

// The host plus what every command needs from startup.
struct Run {
  explicit Run(CliOAuth::Settings auth) : oauth(auth) {}
  ProgressDisplay progress;
  CliOAuth oauth;  // before the host: the host owns the client and outlives nothing of it
  std::unique_ptr<native::NativeHost> host;
  bool repl = false;
  // Set before load(): only these servers start (`call`); nullopt = every one.
  std::optional<std::set<std::string>> only_servers;
  LoadResult result;
  Clock::time_point started;
  long long elapsed_ms = 0;
};

// A re-list after tools/list_changed that is under way when the load returns (a server
// that registered a tool right after connecting) lands within this; a one-shot command
// waits for it so that it prints, calls and caches the tools the server has now.
constexpr Millis kToolRefreshLimit{5000};

// Builds the host; nothing is discovered or started yet. nullptr = a usage/config error,
// already reported on stderr.
// The OAuth client is attached non-interactive: a server whose 401 needs the user ends in
// needs-auth, reported with the command that signs in (`repl`: `/mcp auth <name>` too).
std::unique_ptr<Run> prepare(const GlobalOptions& o, bool repl = false) {
  auto run = std::make_unique<Run>(CliOAuth::Settings{repl, true});
  run->repl = repl;
  native::NativeHostOptions ho = cli_host_options(o, run->oauth);
  Run* raw = run.get();
  ho.loader.on_status = [raw](const StatusEvent& e) { raw->progress.on_status(e); };
  ho.loader.select_servers = [raw](const std::string& name) {
    return !raw->only_servers || raw->only_servers->count(name) > 0;
  };
  if (can_prompt()) {
    ho.loader.trust = [raw](const std::vector<ProjectServer>& pending, std::function<void(TrustAnswer)> answer) {
      prompt_for_trust(pending, native_user_config_path(raw->host->discovery_context()), answer);
    };
  }
  run->started = Clock::now();
  run->host = std::make_unique<native::NativeHost>(std::move(ho));
  if (auto ok = run->host->check(); !ok.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", ok.error().message.c_str());
    return nullptr;
  }
  return run;
}

// Discover → connect → gate (`configs`: a discovery already made, else one is made here).
void load(Run& run, const DiscoveryResult* configs = nullptr) {
  // Each http/sse server's `oauth` settings before anything connects (configs only); the
  // loader's own discovery follows. Servers trusted at the prompt get theirs after the
  // load (their first connect uses the defaults).
  run.oauth.set_servers(configs ? configs->configs : run.host->discover().configs);
  run.result = run.host->load(kLoadLimit);
  run.oauth.set_servers(run.result.discovery.configs);
  if (auto m = run.host->manager(); m && !run.repl) {
    run.host->run_until(
        [&] {
          for (const auto& st : m->server_states()) {
            if (st.tools_refreshing) return false;
          }
          return true;
        },
        kToolRefreshLimit);
    run.host->executor().poll();  // the tools-changed event the re-list posted
  }
  run.progress.end_statuses();
  run.elapsed_ms = std::chrono::duration_cast<Millis>(Clock::now() - run.started).count();
}

std::unique_ptr<Run> start(const GlobalOptions& o, bool repl = false) {
  auto run = prepare(o, repl);
  if (run) load(*run);
  return run;
}

// Non-interactive runs never prompt: each pending server is one stderr line with what it
// would run and the command that trusts it.
void report_pending(const DiscoveryResult& d) {
  for (const auto& p : d.pending) {
    std::fprintf(stderr, "mcprt: server \"%s\" (%s) is not trusted; it %s %s. To trust it: %s\n",
                 p.name.c_str(), p.config.source.path.c_str(),
                 p.config.type == TransportType::stdio ? "would run" : "would connect to",
                 describe_launch(p.config).c_str(), trust_command(p.folder).c_str());
  }
}

// The pending server whose tools `tool` would be (mcp_<server>_…), or null.
const ProjectServer* pending_owner(const DiscoveryResult& d, const std::string& tool) {
  for (const auto& p : d.pending) {
    std::string prefix = make_tool_name(p.name, "x");
    prefix.pop_back();
    if (tool.rfind(prefix, 0) == 0) return &p;
  }
  return nullptr;
}

// The trust state (and what it would run, as written) of every row of a server listing.
void add_trust_json(json& row, const DiscoveryResult& d, const std::string& name) {
  row["trust"] = to_string(trust_state(d, name));
  const ServerConfig* c = nullptr;
  if (const ProjectServer* p = find_pending(d, name)) {
    c = &p->config;
    row["trustCommand"] = trust_command(p->folder);
  } else if (auto it = d.as_written.find(name); it != d.as_written.end()) {
    c = &it->second;
  }
  row["transport"] = c ? json(to_string(c->type)) : json(nullptr);
  if (c) add_launch_json(row, *c);
}

json source_json(const SourceInfo& s) {
  return {{"provider", s.provider},
          {"providerName", s.provider_name},
          {"level", to_string(s.level)},
          {"path", s.path}};
}

// Entries that lost to another of the same name or endpoint (never started): where each
// came from, which entry won and from where, and what the loser would have run.
json shadowed_json(const DiscoveryResult& d, const std::string& only = "") {
  json out = json::array();
  for (const auto& sh : d.shadowed) {
    if (!only.empty() && sh.name != only) continue;
    json row = {{"name", sh.name},
                {"source", source_json(sh.source)},
                {"reason", sh.reason},
                {"shadowedBy", {{"name", sh.shadowed_by}, {"source", source_json(sh.shadowed_by_source)}}},
                {"transport", sh.config ? json(to_string(sh.config->type)) : json(nullptr)}};
    if (sh.config) add_launch_json(row, *sh.config);
    out.push_back(std::move(row));
  }
  return out;
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
      if (st.phase == ServerPhase::needs_auth)
        rows[st.name]["authCommand"] = auth_login_command(st.name);
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
  for (const auto& p : d.pending) {
    if (rows.count(p.name)) continue;
    rows[p.name] = {{"name", p.name},
                    {"status", "untrusted"},
                    {"error", "Server \"" + p.name + "\" is not trusted; to trust it: " + trust_command(p.folder)},
                    {"toolCount", 0},
                    {"source", source_json(p.config.source)}};
  }
  for (const auto& e : d.errors) {
    if (e.server.empty() || rows.count(e.server)) continue;
    SourceInfo src = source_of(e.server);
    if (src.path.empty()) src.path = e.path;
    rows[e.server] = {{"name", e.server}, {"status", "invalid"}, {"error", e.message},
                      {"toolCount", 0},   {"source", source_json(src)}};
  }
  for (auto& [name, row] : rows) {
    add_trust_json(row, d, name);
    out.push_back(std::move(row));
  }
  return out;
}

bool any_server_in(const Run& run, ServerPhase phase) {
  if (auto m = run.host->manager()) {
    for (const auto& st : m->server_states()) {
      if (st.phase == phase) return true;
    }
  }
  return false;
}

bool needs_auth(const Run& run, const std::string& server) {
  auto m = run.host->manager();
  auto st = m ? m->server_state(server) : std::nullopt;
  return st && st->phase == ServerPhase::needs_auth;
}

// A load error that is not a server waiting for a login (those are exit 4, not 1).
bool any_load_failure(const Run& run) {
  for (const auto& e : run.result.errors) {
    if (e.server.empty() || !needs_auth(run, e.server)) return true;
  }
  return false;
}

// Exit code of a run that loaded: 1 when a server failed, else 4 when a server needs
// authorization, else 3 when a project server is not trusted, else 0.
int load_exit_code(bool failed, bool needs_auth, const DiscoveryResult& d) {
  if (failed) return kExitFailed;
  if (needs_auth) return kExitNeedsAuth;
  return d.pending.empty() ? kExitOk : kExitNotTrusted;
}

// Runs without a login step (every command but `auth login`): each server that needs
// authorization is one stderr line with the command that logs in to it.
void report_needs_auth(const ServerState& st, bool repl = false) {
  std::fprintf(stderr, "mcprt: server \"%s\"%s needs authorization; to log in: %s\n",
               st.name.c_str(), st.source.path.empty() ? "" : (" (" + st.source.path + ")").c_str(),
               repl ? ("/mcp auth " + st.name + " (or " + auth_login_command(st.name) + ")").c_str()
                    : auth_login_command(st.name).c_str());
}
void report_needs_auth(const Run& run, bool repl = false) {
  if (auto m = run.host->manager()) {
    for (const auto& st : m->server_states()) {
      if (st.phase == ServerPhase::needs_auth) report_needs_auth(st, repl);
    }
  }
}

// A state report says where a server got to, not where a warm start left it: the load ends
// as soon as every server has tools (cached ones count), so `status` and the REPL's
// `/mcp list|status` wait while a server they show (`server`, or every one) is still
// connecting — at most `limit`; connects are bounded by the manager's own timeouts.
void wait_while_connecting(native::NativeHost& host, const std::string& server, Millis limit) {
  auto m = host.manager();
  if (!m) return;
  host.run_until(
      [&] {
        for (const auto& st : m->server_states()) {
          if ((server.empty() || st.name == server) && st.phase == ServerPhase::connecting) return false;
        }
        return true;
      },
      limit);
}

// In the REPL a listing waits this long at most for servers still connecting (a prompt
// that hangs for a server's whole connect timeout would be worse than "connecting").
constexpr Millis kReplStateWait{5000};

// Runs one /mcp line to its answer. `/mcp`, `/mcp list` and `/mcp status [name]` first
// wait (kReplStateWait) while the servers they show are connecting; `/mcp resources`,
// `prompts`, `read` and `prompt` also while catalogs are being listed.
std::string mcp_command(native::NativeHost& host, const std::string& line) {
  const std::vector<std::string> words = split_command_line(line);
  if (words.size() == 1 || (words.size() == 2 && words[1] == "list")) {
    wait_while_connecting(host, "", kReplStateWait);
  } else if (words.size() == 3 && words[1] == "status") {
    wait_while_connecting(host, words[2], kReplStateWait);
  } else if (words.size() >= 2 && (words[1] == "resources" || words[1] == "prompts" ||
                                   words[1] == "read" || words[1] == "prompt")) {
    // The catalogs come after the tools: a line typed (or piped) right after the start
    // would otherwise find them still being listed.
    wait_while_connecting(host, "", kReplStateWait);
    if (auto m = host.manager()) {
      host.run_until(
          [&] {
            for (const auto& st : m->server_states()) {
              if (st.catalogs_refreshing) return false;
            }
            return true;
          },
          kReplStateWait);
    }
  }
  auto out = std::make_shared<std::optional<std::string>>();
  host.commands().execute(line, [out](std::string s) { *out = std::move(s); });
  host.run_until([&] { return out->has_value(); }, kCommandLimit);
  return out->value_or("mcprt: the command did not finish in time\n");
}

struct CallOutcome {
  bool finished = false;
  Result<ToolResult> result = Error::make(ErrorCode::internal, "not run");
  int interrupted_by = 0;  // SIGINT or SIGTERM arrived while the call ran
};

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void record_stop_signal(int signal_number) { g_stop_signal = signal_number; }

// While a call runs, Ctrl-C (SIGINT) and SIGTERM cancel it instead of killing mcprt with
// its servers orphaned; a second one ends mcprt at once (SA_RESETHAND).
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = record_stop_signal;
    action.sa_flags = SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Waits for the call (NativeHost::call) under the caller's StopSignals; a stop signal (also
// one that came before the call started) aborts it (notifications/cancelled goes to the
// server) and waits at most kCancelLimit for the abort to settle. The loop wakes every
// kStopCheck to look at the signal flag (asio retries the interrupted epoll_wait itself).
constexpr Millis kStopCheck{100};
constexpr Millis kCancelLimit{2000};

CallOutcome call_tool(native::NativeHost& host, const std::string& name, json args,
                      std::function<void(const json&)> on_progress = nullptr) {
  CallOutcome out;
  native::HostCallOptions options;
  options.timeout = kCallLimit;
  options.on_progress = std::move(on_progress);
  options.stop_check = kStopCheck;
  options.abort_settle = kCancelLimit;
  options.stop = [&out]() -> std::optional<std::string> {
    if (g_stop_signal == 0) return std::nullopt;
    out.interrupted_by = g_stop_signal;
    return g_stop_signal == SIGINT ? "interrupted (Ctrl-C)" : "interrupted (SIGTERM)";
  };
  out.result = host.call(name, std::move(args), std::move(options));
  out.finished =
      out.interrupted_by == 0 && (out.result.ok() || out.result.error().code != ErrorCode::timeout);
  return out;
}

// A JSON object of arguments, or an error message.
Result<json> parse_arguments(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return json::object();
  json args = parse_json(text);
  if (args.is_discarded()) {
    return Error::make(ErrorCode::invalid_argument, "the arguments are not valid JSON: " + text);
  }
  if (!args.is_object()) {
    return Error::make(ErrorCode::invalid_argument, "the arguments must be a JSON object, got: " + text);
  }
  return args;
}

}  // namespace

int run_list(const GlobalOptions& options, bool as_json) {
  // Configs only: discovery, never the loader, so nothing is spawned or connected.
  native::NativeHostOptions ho;
  ho.cwd = options.cwd;
  ho.config_file = options.config_path;
  ho.use_cache = false;
  ho.log.level = LogLevel::error;
  native::NativeHost host(std::move(ho));
  if (auto ok = host.check(); !ok.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", ok.error().message.c_str());
    return kExitUsage;
  }
  DiscoverServersResult found = discover_servers_for_load(host.discovery_context(), host.discovery_options());
  const DiscoveryResult& d = found.discovery;

  // Every claimed name, plus names that only had invalid entries.
  struct Row {
    std::string name, state;
    SourceInfo source;
    const ServerConfig* config = nullptr;  // as written
    std::string error;
  };
  std::map<std::string, Row> rows;
  for (const auto& [name, c] : d.as_written) rows[name] = Row{name, "enabled", c.source, &c, ""};
  for (const auto& p : d.pending) rows[p.name] = Row{p.name, "untrusted", p.config.source, &p.config, ""};
  for (const auto& name : d.disabled) rows[name].state = "disabled";
  for (const auto& name : d.claimed) rows[name].state = "claimed";
  for (const auto& e : d.errors) {
    if (e.server.empty() || rows.count(e.server)) continue;
    auto src = d.sources.find(e.server);
    Row r{e.server, "invalid", src == d.sources.end() ? SourceInfo{} : src->second, nullptr, e.message};
    if (r.source.path.empty()) r.source.path = e.path;
    rows[e.server] = r;
  }

  bool config_errors = !found.errors.empty();
  if (as_json) {
    json out = {{"servers", json::array()},
                {"shadowed", shadowed_json(d)},
                {"errors", json::array()},
                {"projectFolder", d.project_folder}};
    for (const auto& [name, r] : rows) {
      json row = {{"name", name}, {"state", r.state}, {"source", source_json(r.source)}};
      if (!r.error.empty()) row["error"] = r.error;
      add_trust_json(row, d, name);
      out["servers"].push_back(std::move(row));
    }
    for (const auto& e : found.errors) out["errors"].push_back({{"path", e.path}, {"error", e.error}});
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    std::cout.flush();
    return config_errors ? kExitFailed : kExitOk;
  }

  if (rows.empty()) {
    std::printf("No MCP servers configured (looked for %s and the other tools' configs).\n",
                native_user_config_path(host.discovery_context()).c_str());
  } else {
    std::size_t wn = 4, wt = 5, ws = 8;
    for (const auto& [name, r] : rows) {
      wn = std::max(wn, name.size());
      std::string trust = r.state == "invalid" ? "" : to_string(trust_state(d, name));
      ws = std::max(ws, trust.size());
    }
    std::printf("MCP servers (%zu):\n", rows.size());
    for (const auto& [name, r] : rows) {
      std::string transport = r.config ? to_string(r.config->type) : "?";
      std::string trust = r.state == "invalid" ? "-" : to_string(trust_state(d, name));
      std::string state = r.state == "enabled" || r.state == "untrusted" ? "" : " (" + r.state + ")";
      std::printf("  %-*s  %-*s  %-*s  %s (%s) %s%s\n", static_cast<int>(wn), name.c_str(), static_cast<int>(wt),
                  transport.c_str(), static_cast<int>(ws), trust.c_str(),
                  r.source.provider_name.empty() ? r.source.provider.c_str() : r.source.provider_name.c_str(),
                  to_string(r.source.level), r.source.path.c_str(), state.c_str());
      if (r.config) {
        for (const auto& line : launch_lines(*r.config)) {
          std::printf("  %-*s  %s\n", static_cast<int>(wn), "", line.c_str());
        }
      }
      if (!r.error.empty()) std::printf("  %-*s  error: %s\n", static_cast<int>(wn), "", first_line(r.error).c_str());
    }
  }
  if (!d.shadowed.empty()) {
    std::printf("\nShadowed (another entry of that name or endpoint wins; never started):\n");
    for (const auto& sh : d.shadowed) {
      std::printf("  %s  %s (%s) %s\n", sh.name.c_str(),
                  sh.source.provider_name.empty() ? sh.source.provider.c_str() : sh.source.provider_name.c_str(),
                  to_string(sh.source.level), sh.source.path.c_str());
      std::printf("    %s\n", describe_shadowing(sh).c_str());
      if (sh.config) {
        for (const auto& line : launch_lines(*sh.config)) std::printf("    %s\n", line.c_str());
      }
    }
  }
  for (const auto& e : d.errors) {
    if (e.server.empty()) std::printf("config error: %s\n", e.describe().c_str());
  }
  for (const auto& e : found.errors) {
    if (e.path == ".mcp.json" && e.server.empty()) std::printf("config error: %s\n", e.error.c_str());
  }
  if (!d.pending.empty()) {
    std::printf("\n%zu project server%s in %s %s not trusted: nothing of %s runs. To trust: %s\n",
                d.pending.size(), d.pending.size() == 1 ? "" : "s", d.project_folder.c_str(),
                d.pending.size() == 1 ? "is" : "are", d.pending.size() == 1 ? "it" : "them",
                trust_command(d.project_folder).c_str());
  }
  std::fflush(stdout);
  return config_errors ? kExitFailed : kExitOk;
}

int run_trust(const GlobalOptions& options, const std::string& dir, bool trust) {
  native::NativeHostOptions ho;
  ho.cwd = dir.empty() ? options.cwd : dir;
  ho.use_cache = false;
  ho.log.level = LogLevel::error;
  native::NativeHost host(std::move(ho));
  if (auto ok = host.check(); !ok.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", ok.error().message.c_str());
    return kExitUsage;
  }
  const DiscoveryContext& ctx = host.discovery_context();
  const std::string user_file = native_user_config_path(ctx);
  const std::string folder = project_trust_folder(ctx);
  if (!ctx.fs || user_file.empty()) {
    std::fprintf(stderr, "mcprt: there is no user config file to record trust in (is HOME set?)\n");
    return kExitFailed;
  }
  if (!trust) {
    auto removed = remove_project_trust(*ctx.fs, user_file, folder);
    if (!removed.ok()) {
      std::fprintf(stderr, "mcprt: cannot untrust %s: %s\n", folder.c_str(), removed.error().message.c_str());
      return kExitFailed;
    }
    if (*removed) {
      std::printf("Untrusted %s (removed from %s): its project servers are pending again.\n", folder.c_str(),
                  user_file.c_str());
    } else {
      std::printf("%s was not trusted; nothing to remove.\n", folder.c_str());
    }
    return kExitOk;
  }
  // Discovery with the folder's current records: what is there now is what gets trusted.
  DiscoveryResult d = discover_servers_for_load(ctx, host.discovery_options()).discovery;
  std::vector<ProjectServer> servers = project_servers(d);
  std::map<std::string, std::string> grants;
  for (const auto& p : servers) grants[p.name] = p.hash;
  if (auto s = record_project_trust(*ctx.fs, user_file, folder, grants, /*replace=*/true); !s.ok()) {
    std::fprintf(stderr, "mcprt: cannot trust %s: %s\n", folder.c_str(), s.error().message.c_str());
    return kExitFailed;
  }
  std::printf("Trusted %s (recorded in %s)", folder.c_str(), user_file.c_str());
  if (servers.empty()) {
    std::printf(": it configures no MCP servers now; servers added later will be pending.\n");
    return kExitOk;
  }
  std::printf(", %zu project server%s:\n", servers.size(), servers.size() == 1 ? "" : "s");
  for (const auto& p : servers) {
    std::printf("  %s (%s, %s, %s)\n", p.name.c_str(), to_string(p.config.type),
                p.config.source.provider_name.c_str(), p.config.source.path.c_str());
    for (const auto& line : launch_lines(p.config)) std::printf("      %s\n", line.c_str());
  }
  std::printf("A changed or new project server will be pending again.\n");
  return kExitOk;
}

int run_tools(const GlobalOptions& options, bool as_json) {
  auto run = start(options);
  if (!run) return kExitUsage;
  const LoadResult& r = run->result;
  auto m = run->host->manager();
  // The manager's set, not the gate's: a re-list that landed after the gate counts.
  const std::vector<std::shared_ptr<McpTool>> tools = m ? m->tools() : r.tools;

  if (as_json) {
    json out = {{"tools", json::array()},
                {"errors", json::array()},
                {"servers", servers_json(*run)},
                {"shadowed", shadowed_json(r.discovery)},
                {"elapsedMs", run->elapsed_ms}};
    for (const auto& t : tools) {
      const auto& info = t->info();
      out["tools"].push_back({{"name", info.name},
                              {"server", info.server},
                              {"tool", info.raw_name},
                              {"description", info.description},
                              {"deferred", info.deferred},
                              {"path", info.path},
                              {"inputSchema", info.input_schema}});
      // The rest of the definition a host needs, where the server gave it (annotations are
      // the server's hints, not guarantees).
      json& row = out["tools"].back();
      for (const char* key : {"title", "outputSchema"}) {
        if (auto it = info.definition.find(key); it != info.definition.end()) row[key] = *it;
      }
      // Hints, not guarantees: trusted only where the host trusts the server (SPEC §15).
      row["annotations"] = t->annotations();
      row["annotationsTrusted"] = info.annotations_trusted;
    }
    for (const auto& e : r.errors) out["errors"].push_back({{"path", e.path}, {"error", e.error}});
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    report_pending(r.discovery);
  } else {
    // Colour on a terminal, unless NO_COLOR is set to anything (https://no-color.org).
    const char* no_color = std::getenv("NO_COLOR");
    const bool tty = ::isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || *no_color == '\0');
    const char* bold = tty ? "\033[1m" : "";
    const char* red = tty ? "\033[31m" : "";
    const char* yellow = tty ? "\033[33m" : "";
    const char* dim = tty ? "\033[2m" : "";
    const char* reset = tty ? "\033[0m" : "";
    std::map<std::string, const ServerConfig*> configs;
    for (const auto& c : r.discovery.configs) configs[c.name] = &c;
    std::size_t width = 0;
    for (const auto& t : tools) width = std::max(width, t->name().size());
    std::size_t connected = 0, total = 0;
    for (const auto& st : m ? m->server_states() : std::vector<ServerState>{}) {
      ++total;
      auto c = configs.find(st.name);
      std::string kind = c == configs.end() ? "" : to_string(c->second->type);
      std::string via = st.source.provider_name.empty() ? "" : ", " + st.source.provider_name;
      if (st.phase == ServerPhase::needs_auth) {
        // Not a failure: its tools (cached, deferred) stay listed; calling them says how to log in.
        std::printf("%s%s%s (%s%s) %sneeds-auth%s, %s%s: %s\n", bold, st.name.c_str(), reset,
                    kind.c_str(), via.c_str(), yellow, reset, tools_count(st.tool_count).c_str(),
                    st.tools_from_cache ? " (from the cache)" : "",
                    st.last_error ? st.last_error->message.c_str() : "needs authorization");
        for (const auto& t : tools) {
          if (t->info().server != st.name) continue;
          std::printf("  %-*s  %s%s%s\n", static_cast<int>(width), t->name().c_str(), dim,
                      first_line(t->description()).c_str(), reset);
        }
        continue;
      }
      if (st.phase == ServerPhase::failed || (st.last_error && st.phase != ServerPhase::connected &&
                                              st.tool_count == 0)) {
        std::printf("%s%s%s (%s%s) %sfailed%s: %s\n", bold, st.name.c_str(), reset, kind.c_str(),
                    via.c_str(), red, reset,
                    st.last_error ? st.last_error->message.c_str() : "unknown error");
        continue;
      }
      if (st.phase == ServerPhase::connected) ++connected;
      std::printf("%s%s%s (%s%s) %s, %s%s\n", bold, st.name.c_str(), reset, kind.c_str(),
                  via.c_str(), to_string(st.phase), tools_count(st.tool_count).c_str(),
                  st.tools_from_cache ? " (from the cache)" : "");
      for (const auto& t : tools) {
        if (t->info().server != st.name) continue;
        std::printf("  %-*s  %s%s%s\n", static_cast<int>(width), t->name().c_str(), dim,
                    first_line(t->description()).c_str(), reset);
      }
    }
    for (const auto& name : r.discovery.disabled) {
      std::printf("%s%s%s %s(disabled)%s\n", bold, name.c_str(), reset, dim, reset);
    }
    for (const auto& p : r.discovery.pending) {
      std::printf("%s%s%s (%s, %s) %snot trusted%s: %s %s; to trust it: %s\n", bold, p.name.c_str(), reset,
                  to_string(p.config.type), p.config.source.provider_name.c_str(), red, reset,
                  p.config.type == TransportType::stdio ? "would run" : "would connect to",
                  describe_launch(p.config).c_str(), trust_command(p.folder).c_str());
    }
    for (const auto& sh : r.discovery.shadowed) {
      std::printf("%s%s%s (%s, %s) %sshadowed%s: %s; not started\n", bold, sh.name.c_str(), reset,
                  sh.config ? to_string(sh.config->type) : "?",
                  (sh.source.provider_name.empty() ? sh.source.provider : sh.source.provider_name).c_str(), dim,
                  reset, describe_shadowing(sh).substr(std::string("shadowed ").size()).c_str());
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
    if (total == 0 && r.errors.empty() && r.discovery.pending.empty()) {
      std::printf("No MCP servers configured (looked for %s and the other tools' configs).\n",
                  run->host->user_config_path().c_str());
    }
    std::printf("\n%s from %zu of %zu servers in %.2f s\n", tools_count(tools.size()).c_str(), connected,
                total, static_cast<double>(run->elapsed_ms) / 1000.0);
  }
  std::fflush(stdout);
  if (!as_json) report_pending(r.discovery);
  report_needs_auth(*run);
  const bool failed = any_load_failure(*run);
  const bool auth = any_server_in(*run, ServerPhase::needs_auth);
  run->host->shutdown();
  return load_exit_code(failed, auth, r.discovery);
}

namespace {

// "a, b, c" (at most kNamesShown, then "and N more").
constexpr std::size_t kNamesShown = 20;
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kNamesShown) out += " and " + std::to_string(names.size() - kNamesShown) + " more";
  return out;
}

// Every name discovery gave an entry that could have tools: configured, pending, disabled.
std::vector<std::string> claimable_names(const DiscoveryResult& d) {
  std::set<std::string> names;
  for (const auto& c : d.configs) names.insert(c.name);
  for (const auto& p : d.pending) names.insert(p.name);
  for (const auto& n : d.disabled) names.insert(n);
  return {names.begin(), names.end()};
}

// The agent-facing names of `server`'s cached tools (empty without a cache hit).
std::set<std::string> cached_tool_names(native::NativeHost& host, const ServerConfig& config) {
  std::set<std::string> out;
  KeyValueStore* store = host.services().cache_store;
  if (!store) return out;
  ToolCache cache(*store, nullptr, &host.logger());
  auto hit = std::make_shared<std::optional<std::optional<CachedTools>>>();
  cache.load(config, [hit](std::optional<CachedTools> entry) { *hit = std::move(entry); });
  host.run_until([&] { return hit->has_value(); }, kCommandLimit);
  if (!hit->has_value() || !hit->value()) return out;
  for (const auto& def : hit->value()->tools) {
    auto name = def.is_object() ? def.find("name") : def.end();
    if (!def.is_object() || name == def.end() || !name->is_string()) continue;
    if (!tool_passes_filters(config, name->get<std::string>())) continue;
    out.insert(make_tool_name(config.name, name->get<std::string>()));
  }
  return out;
}

// The servers `call` starts for `tool` (SPEC §18: the tool's server only): the configured
// names whose `mcp_<server>_` prefix fits the tool name (servers_for_tool_name), longest
// first. Names may overlap ("a" and "a_b" both fit mcp_a_b_c): then the tool cache decides
// when exactly one of them has the tool in its cached list; otherwise all of them start.
std::vector<std::string> servers_for_call(native::NativeHost& host, const DiscoveryResult& d,
                                          const std::string& tool) {
  std::vector<std::string> candidates = servers_for_tool_name(tool, claimable_names(d));
  if (candidates.size() < 2) return candidates;
  std::vector<std::string> holders;
  for (const auto& name : candidates) {
    for (const auto& c : d.configs) {
      if (c.name == name && cached_tool_names(host, c).count(tool)) holders.push_back(name);
    }
  }
  return holders.size() == 1 ? holders : candidates;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

int run_call(const GlobalOptions& options, const std::string& tool_arg, const std::string& arguments,
             bool as_json, const std::string& server) {
  auto args = parse_arguments(arguments);
  if (!args.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", args.error().message.c_str());
    return kExitUsage;
  }
  // From before the servers start: a signal during the load cancels the call at once.
  StopSignals stop_signals;
  auto run = prepare(options);
  if (!run) return kExitUsage;
  // Configs only, to find the tool's server: nothing else starts.
  const DiscoveryResult found = run->host->discover();
  const std::vector<std::string> known = claimable_names(found);
  std::vector<std::string> servers;
  if (!server.empty()) {
    if (!contains(known, server)) {
      if (auto shadowed = find_shadowed(found, server); !shadowed.empty()) {
        std::fprintf(stderr, "mcprt: server \"%s\" (%s) is %s; it is never started\n", server.c_str(),
                     shadowed.front()->source.path.c_str(), describe_shadowing(*shadowed.front()).c_str());
        return kExitUsage;
      }
      std::fprintf(stderr, "mcprt: unknown server \"%s\" (%s)\n", server.c_str(),
                   known.empty() ? "no MCP servers are configured" : ("servers: " + joined(known)).c_str());
      return kExitUsage;
    }
    servers = {server};
  } else {
    servers = servers_for_call(*run->host, found, tool_arg);
  }
  if (servers.empty()) {
    std::fprintf(stderr, "mcprt: unknown tool \"%s\": it names no configured server (tools are "
                         "mcp_<server>_<tool>; %s)\n",
                 tool_arg.c_str(),
                 known.empty() ? "no MCP servers are configured" : ("servers: " + joined(known)).c_str());
    // An entry that could not be used may be the one meant.
    for (const auto& e : found.errors) {
      if (!e.server.empty() && servers_for_tool_name(tool_arg, {e.server}).empty()) continue;
      std::fprintf(stderr, "mcprt: config error: %s\n", e.describe().c_str());
    }
    return kExitUsage;
  }
  run->only_servers = std::set<std::string>(servers.begin(), servers.end());
  load(*run, &found);

  auto m = run->host->manager();
  std::string tool = tool_arg;
  if (!run->host->registry().contains(tool) && !server.empty() && m) {
    // --server NAME: the tool may be given by the server's own name for it.
    for (const auto& t : m->tools()) {
      if (t->info().server == server && t->info().raw_name == tool_arg) tool = t->name();
    }
  }
  if (!run->host->registry().contains(tool)) {
    if (const ProjectServer* p = server.empty() ? pending_owner(run->result.discovery, tool)
                                                : find_pending(run->result.discovery, server)) {
      std::fprintf(stderr, "mcprt: the tool \"%s\" would come from server \"%s\" (%s), which is not trusted; "
                           "it %s %s. To trust it: %s\n",
                   tool.c_str(), p->name.c_str(), p->config.source.path.c_str(),
                   p->config.type == TransportType::stdio ? "would run" : "would connect to",
                   describe_launch(p->config).c_str(), trust_command(p->folder).c_str());
      run->host->shutdown();
      return kExitNotTrusted;
    }
    // A server that failed: its tools are missing because of that, and that is the news.
    for (const auto& st : m ? m->server_states() : std::vector<ServerState>{}) {
      if (st.phase != ServerPhase::failed) continue;
      std::fprintf(stderr, "mcprt: the tool \"%s\" would come from server \"%s\", which failed: %s\n",
                   tool.c_str(), st.name.c_str(),
                   st.last_error ? st.last_error->message.c_str() : "unknown error");
      run->host->shutdown();
      return kExitFailed;
    }
    for (const auto& name : servers) {
      if (!contains(run->result.discovery.disabled, name) || (m && m->server_state(name))) continue;
      auto src = run->result.discovery.sources.find(name);
      std::fprintf(stderr, "mcprt: the tool \"%s\" would come from server \"%s\", which is disabled%s\n",
                   tool.c_str(), name.c_str(),
                   src == run->result.discovery.sources.end() ? "" : (" (" + src->second.path + ")").c_str());
      run->host->shutdown();
      return kExitUsage;
    }
    std::fprintf(stderr, "mcprt: unknown tool \"%s\"", tool.c_str());
    auto names = run->host->registry().names();
    if (!names.empty()) {
      std::fprintf(stderr, "; %s has: %s%s", servers.size() == 1 ? ("server \"" + servers[0] + "\"").c_str() : "its servers have",
                   joined(names).c_str(), names.size() > kNamesShown ? " (mcprt tools lists them)" : "");
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
  // Progress (notifications/progress) is one live line on stderr while the call runs.
  Run* raw = run.get();
  CallOutcome outcome =
      call_tool(*run->host, tool, std::move(args.value()),
                [raw, tool](const json& p) { raw->progress.on_call_progress(tool, p); });
  run->progress.clear();
  int rc = kExitOk;
  if (outcome.interrupted_by != 0) {
    std::fprintf(stderr, "mcprt: interrupted; the call was cancelled\n");
    run->host->shutdown();
    return 128 + outcome.interrupted_by;
  }
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
  // A tool of a server that needs authorization answers at once with the login hint; so
  // does one that wants more scopes than the token has (a step-up: the server stays
  // connected, the result says which scopes).
  if (rc == kExitFailed) {
    auto t = m ? m->find_tool(tool) : nullptr;
    auto st = t ? m->server_state(t->info().server) : std::nullopt;
    const bool step_up = outcome.result.ok() && outcome.result.value().error_code == ErrorCode::needs_auth;
    if (st && (st->phase == ServerPhase::needs_auth || step_up)) {
      report_needs_auth(*st);
      rc = kExitNeedsAuth;
    }
  }
  run->host->shutdown();
  return rc;
}

// --- resources, prompts, read, prompt (SPEC §15) --------------------------------------------

namespace {

// `server` is a name discovery knows; otherwise the usage error is printed and false
// returned.
bool known_server_or_report(const DiscoveryResult& found, const std::string& server) {
  const std::vector<std::string> known = claimable_names(found);
  if (contains(known, server)) return true;
  if (auto shadowed = find_shadowed(found, server); !shadowed.empty()) {
    std::fprintf(stderr, "mcprt: server \"%s\" (%s) is %s; it is never started\n", server.c_str(),
                 shadowed.front()->source.path.c_str(), describe_shadowing(*shadowed.front()).c_str());
    return false;
  }
  std::fprintf(stderr, "mcprt: unknown server \"%s\" (%s)\n", server.c_str(),
               known.empty() ? "no MCP servers are configured" : ("servers: " + joined(known)).c_str());
  return false;
}

// Starts the servers a catalog command needs: `only` (when not empty), else every one.
// Waits until none of them is still connecting (a warm start's gate returns on cached
// tools). nullptr = a usage error, already reported.
std::unique_ptr<Run> start_for_catalog(const GlobalOptions& options, const std::set<std::string>& only) {
  auto run = prepare(options);
  if (!run) return nullptr;
  const DiscoveryResult found = run->host->discover();
  for (const auto& name : only) {
    if (!known_server_or_report(found, name)) return nullptr;
  }
  if (!only.empty()) run->only_servers = only;
  load(*run, &found);
  wait_while_connecting(*run->host, "", kLoadLimit);
  return run;
}

struct Catalogs {
  std::vector<CatalogEntry> resources, templates, prompts;
};

// The manager's catalogs (all, or of one server) once none of those servers is still
// listing them: the manager lists them after the tools on every connection
// (ServerState::catalogs_refreshing), so right after the load they may not be there yet.
// A server that did not connect keeps what its cache entry had (from_cache).
Catalogs settled_catalogs(Run& run, const std::string& only_server) {
  Catalogs out;
  auto m = run.host->manager();
  if (!m) return out;
  run.host->run_until(
      [&] {
        for (const auto& st : m->server_states()) {
          if ((only_server.empty() || st.name == only_server) && st.catalogs_refreshing) return false;
        }
        return true;
      },
      kLoadLimit);
  auto of_server = [&](std::vector<CatalogEntry> entries) {
    if (!only_server.empty()) {
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [&](const CatalogEntry& e) { return e.server != only_server; }),
                    entries.end());
    }
    return entries;
  };
  out.resources = of_server(m->resources());
  out.templates = of_server(m->resource_templates());
  out.prompts = of_server(m->prompts());
  return out;
}

// The load's errors as `tools --json` prints them.
json load_errors_json(const Run& run) {
  json out = json::array();
  for (const auto& e : run.result.errors) out.push_back({{"path", e.path}, {"error", e.error}});
  return out;
}

// One entry of a --json listing: the server's definition with "server" (and "fromCache")
// added.
json catalog_row(const CatalogEntry& e) {
  json row = e.definition.get().is_object() ? e.definition.get() : json::object();
  row["server"] = e.server;
  if (e.from_cache) row["fromCache"] = true;
  return row;
}

json catalog_rows(const std::vector<CatalogEntry>& entries) {
  json rows = json::array();
  for (const auto& e : entries) rows.push_back(catalog_row(e));
  return rows;
}

// Exit code and stderr lines shared by the listings, as `tools`: a load failure is 1, then
// needs-auth 4, then untrusted 3.
int finish_listing(Run& run) {
  for (const auto& e : run.result.errors) {
    if (!e.server.empty() && needs_auth(run, e.server)) continue;
    std::fprintf(stderr, "mcprt: %s%s\n", e.path.empty() || e.error.rfind(e.path, 0) == 0 ? "" : (e.path + ": ").c_str(),
                 e.error.c_str());
  }
  report_pending(run.result.discovery);
  report_needs_auth(run);
  const bool failed = any_load_failure(run);
  const bool auth = any_server_in(run, ServerPhase::needs_auth);
  run.host->shutdown();
  return load_exit_code(failed, auth, run.result.discovery);
}

// A manager call (read_resource, get_prompt) run to its end.
Result<json> wait_for_result(native::NativeHost& host,
                             const std::function<void(std::function<void(Result<json>)>)>& start) {
  auto out = std::make_shared<std::optional<Result<json>>>();
  start([out](Result<json> r) { *out = std::move(r); });
  host.run_until([&] { return out->has_value(); }, kCallLimit);
  if (!out->has_value()) return Error::make(ErrorCode::timeout, "the request did not finish in time");
  return std::move(**out);
}

}  // namespace

int run_resources(const GlobalOptions& options, const std::string& server, bool as_json) {
  auto run = start_for_catalog(options, server.empty() ? std::set<std::string>{} : std::set<std::string>{server});
  if (!run) return kExitUsage;
  const Catalogs cats = settled_catalogs(*run, server);
  if (as_json) {
    json out = {{"resources", catalog_rows(cats.resources)},
                {"resourceTemplates", catalog_rows(cats.templates)},
                {"errors", load_errors_json(*run)},
                {"servers", servers_json(*run)}};
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else if (cats.resources.empty() && cats.templates.empty()) {
    std::printf("%s\n", server.empty() ? "No MCP resources." : ("Server \"" + server + "\" has no resources.").c_str());
  } else {
    if (!cats.resources.empty()) {
      std::printf("Resources (%zu):\n%s", cats.resources.size(),
                  format_catalog(CatalogKind::resources, cats.resources).c_str());
    }
    if (!cats.templates.empty()) {
      std::printf("%sResource templates (%zu):\n%s", cats.resources.empty() ? "" : "\n", cats.templates.size(),
                  format_catalog(CatalogKind::resource_templates, cats.templates).c_str());
    }
  }
  std::fflush(stdout);
  std::cout.flush();
  return finish_listing(*run);
}

int run_prompts(const GlobalOptions& options, const std::string& server, bool as_json) {
  auto run = start_for_catalog(options, server.empty() ? std::set<std::string>{} : std::set<std::string>{server});
  if (!run) return kExitUsage;
  const Catalogs cats = settled_catalogs(*run, server);
  if (as_json) {
    json out = {{"prompts", catalog_rows(cats.prompts)}, {"errors", load_errors_json(*run)}, {"servers", servers_json(*run)}};
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else if (cats.prompts.empty()) {
    std::printf("%s\n", server.empty() ? "No MCP prompts." : ("Server \"" + server + "\" has no prompts.").c_str());
  } else {
    std::printf("Prompts (%zu):\n%s", cats.prompts.size(), format_catalog(CatalogKind::prompts, cats.prompts).c_str());
  }
  std::fflush(stdout);
  std::cout.flush();
  return finish_listing(*run);
}

int run_search(const GlobalOptions& options, const std::string& query, std::size_t limit,
               const std::vector<std::string>& servers, bool as_json) {
  if (query.find_first_not_of(" \t\r\n") == std::string::npos) {
    std::fprintf(stderr,
                 "mcprt: search needs a query: mcprt search <words> (\"read a file\"), or "
                 "select:<tool>[,<tool>...] for full names\n");
    return kExitUsage;
  }
  // As `tools` connects (the gate returns on cached tools), with --server limiting who starts.
  auto run = prepare(options);
  if (!run) return kExitUsage;
  const DiscoveryResult found = run->host->discover();
  for (const auto& name : servers) {
    if (!known_server_or_report(found, name)) return kExitUsage;
  }
  if (!servers.empty()) run->only_servers = std::set<std::string>(servers.begin(), servers.end());
  load(*run, &found);

  // The session's index: every tool of the manager (cached ones count), as mcp_tool_search
  // searches it, although the CLI defers nothing.
  McpSession& session = run->host->session();
  const ToolSearchResult result = session.search_tools(query, limit);
  const std::vector<ToolCatalogEntry> catalog = session.catalog();

  if (as_json) {
    std::map<std::string, const McpTool*> by_name;
    if (auto m = run->host->manager()) {
      for (const auto& t : m->tools()) {
        if (t) by_name[t->name()] = t.get();
      }
    }
    json hits = json::array();
    for (const auto& hit : result.hits) {
      json row = {
          {"name", hit.name}, {"match", to_string(hit.match)}, {"score", hit.score}};
      if (auto it = by_name.find(hit.name); it != by_name.end()) {
        const McpToolInfo& info = it->second->info();
        row["server"] = info.server;
        row["tool"] = info.raw_name;
        row["summary"] = summarize_description(info.description);
        row["description"] = info.description;
        row["inputSchema"] = info.input_schema;
        row["deferred"] = info.deferred;
      }
      hits.push_back(std::move(row));
    }
    json out = {{"query", query},
                {"hits", std::move(hits)},
                {"notFound", result.not_found},
                {"toolCount", catalog.size()},
                {"errors", load_errors_json(*run)},
                {"servers", servers_json(*run)},
                {"elapsedMs", run->elapsed_ms}};
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::fputs(format_tool_search(query, result, catalog).c_str(), stdout);
  }
  std::fflush(stdout);
  std::cout.flush();
  const int code = finish_listing(*run);
  return code == kExitFailed || result.not_found.empty() ? code : kExitUsage;
}

int run_read(const GlobalOptions& options, const std::string& uri, const std::string& server_arg, bool as_json,
             const std::string& out_file) {
  auto run = start_for_catalog(options, server_arg.empty() ? std::set<std::string>{} : std::set<std::string>{server_arg});
  if (!run) return kExitUsage;
  auto m = run->host->manager();
  std::string server = server_arg;
  if (server.empty() && m) {
    // The first server (by name) that lists the resource, else one with a template that
    // matches it.
    settled_catalogs(*run, "");
    server = m->server_for_resource(uri);
    if (server.empty()) {
      std::fprintf(stderr, "mcprt: no server lists the resource \"%s\" (mcprt resources lists them; "
                           "--server NAME reads it from one server anyway)\n", uri.c_str());
      report_pending(run->result.discovery);
      report_needs_auth(*run);
      run->host->shutdown();
      return kExitUsage;
    }
  }
  if (!m) {
    run->host->shutdown();
    return kExitFailed;
  }
  Result<json> result = wait_for_result(*run->host, [&](std::function<void(Result<json>)> done) {
    m->read_resource(server, uri, CallOptions{}, std::move(done));
  });
  int rc = kExitOk;
  if (!result.ok()) {
    std::fprintf(stderr, "mcprt: reading \"%s\" from server \"%s\" failed: %s\n", uri.c_str(), server.c_str(),
                 result.error().message.c_str());
    rc = kExitFailed;
    auto st = m->server_state(server);
    if (st && st->phase == ServerPhase::needs_auth) {
      report_needs_auth(*st);
      rc = kExitNeedsAuth;
    }
  } else if (!out_file.empty()) {
    // The first content's bytes: a blob decoded, a text as UTF-8.
    const json& contents = result.value().contains("contents") ? result.value()["contents"] : json();
    const json first = contents.is_array() && !contents.empty() ? contents[0] : json();
    std::optional<std::string> bytes;
    if (first.is_object() && first.contains("blob") && first["blob"].is_string()) {
      bytes = decode_base64(first["blob"].get_ref<const std::string&>());
      if (!bytes) std::fprintf(stderr, "mcprt: the resource's blob is not valid base64\n");
    } else if (first.is_object() && first.contains("text") && first["text"].is_string()) {
      bytes = first["text"].get<std::string>();
    } else {
      std::fprintf(stderr, "mcprt: the resource has no contents to write\n");
    }
    if (!bytes) {
      rc = kExitFailed;
    } else if (FILE* f = std::fopen(out_file.c_str(), "wb"); f == nullptr) {
      std::fprintf(stderr, "mcprt: cannot write %s: %s\n", out_file.c_str(), std::strerror(errno));
      rc = kExitFailed;
    } else {
      const bool written = std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
      const bool closed = std::fclose(f) == 0;
      if (!written || !closed) {
        std::fprintf(stderr, "mcprt: cannot write %s: %s\n", out_file.c_str(), std::strerror(errno));
        rc = kExitFailed;
      } else {
        std::printf("Wrote %zu bytes to %s\n", bytes->size(), out_file.c_str());
      }
    }
  } else if (as_json) {
    std::cout << result.value().dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::cout << format_resource_contents(result.value());
  }
  std::cout.flush();
  std::fflush(stdout);
  run->host->shutdown();
  return rc;
}

int run_prompt(const GlobalOptions& options, const std::string& name, const std::vector<std::string>& arg_words,
               bool as_json) {
  auto arguments = parse_prompt_arguments(arg_words);
  if (!arguments.ok()) {
    std::fprintf(stderr, "mcprt: %s (--arg <argument>=<value>)\n", arguments.error().message.c_str());
    return kExitUsage;
  }
  auto run = prepare(options);
  if (!run) return kExitUsage;
  // "server:name" starts only that server (each split whose left part is a configured name).
  const DiscoveryResult found = run->host->discover();
  std::set<std::string> only;
  for (const auto& known : claimable_names(found)) {
    if (name.size() > known.size() + 1 && name.compare(0, known.size(), known) == 0 && name[known.size()] == ':') {
      only.insert(known);
    }
  }
  if (!only.empty()) run->only_servers = only;
  load(*run, &found);
  wait_while_connecting(*run->host, "", kLoadLimit);
  auto m = run->host->manager();
  if (!m) {
    run->host->shutdown();
    return kExitFailed;
  }
  std::vector<std::string> servers;
  for (const auto& st : m->server_states()) servers.push_back(st.name);
  const Catalogs cats = settled_catalogs(*run, "");
  auto target = resolve_prompt_name(name, servers, cats.prompts);
  if (!target.ok()) {
    std::fprintf(stderr, "mcprt: %s\n", target.error().message.c_str());
    report_pending(run->result.discovery);
    report_needs_auth(*run);
    run->host->shutdown();
    return kExitUsage;
  }
  const PromptTarget t = target.value();
  Result<json> result = wait_for_result(*run->host, [&](std::function<void(Result<json>)> done) {
    m->get_prompt(t.server, t.name, arguments.value(), CallOptions{}, std::move(done));
  });
  int rc = kExitOk;
  if (!result.ok()) {
    std::fprintf(stderr, "mcprt: prompt \"%s:%s\" failed: %s\n", t.server.c_str(), t.name.c_str(),
                 result.error().message.c_str());
    rc = kExitFailed;
    auto st = m->server_state(t.server);
    if (st && st->phase == ServerPhase::needs_auth) {
      report_needs_auth(*st);
      rc = kExitNeedsAuth;
    }
  } else if (as_json) {
    std::cout << result.value().dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::cout << format_prompt_messages(result.value());
  }
  std::cout.flush();
  run->host->shutdown();
  return rc;
}

int run_status(const GlobalOptions& options, const std::string& server, bool as_json) {
  auto run = start(options);
  if (!run) return kExitUsage;
  wait_while_connecting(*run->host, server, kLoadLimit);
  // --json: the rows of `tools --json`'s "servers", all or the named one.
  json rows = json::array();
  if (as_json) {
    for (auto& row : servers_json(*run)) {
      if (server.empty() || row.value("name", "") == server) rows.push_back(std::move(row));
    }
  }
  if (server.empty()) {
    if (as_json) {
      std::cout << json{{"servers", rows}, {"shadowed", shadowed_json(run->result.discovery)}}.dump(
                       2, ' ', false, json::error_handler_t::replace)
                << "\n";
    } else {
      std::fputs(mcp_command(*run->host, "/mcp list").c_str(), stdout);
    }
    std::fflush(stdout);
    report_pending(run->result.discovery);
    report_needs_auth(*run);
    const bool failed = any_server_in(*run, ServerPhase::failed);
    const bool auth = any_server_in(*run, ServerPhase::needs_auth);
    run->host->shutdown();
    return load_exit_code(failed, auth, run->result.discovery);
  }
  std::string out = mcp_command(*run->host, "/mcp status '" + server + "'");
  const bool unknown = out.rfind("Unknown server", 0) == 0;
  if (!as_json) {
    std::fputs(out.c_str(), stdout);
  } else if (unknown) {
    std::fprintf(stderr, "mcprt: %s\n", out.c_str());
  } else {
    std::cout << json{{"servers", rows}, {"shadowed", shadowed_json(run->result.discovery, server)}}.dump(
                     2, ' ', false, json::error_handler_t::replace)
              << "\n";
  }
  std::fflush(stdout);
  int rc = kExitOk;
  auto m = run->host->manager();
  auto st = m ? m->server_state(server) : std::nullopt;
  if (find_pending(run->result.discovery, server)) {
    rc = kExitNotTrusted;
  } else if (unknown) {
    rc = kExitUsage;
  } else if (st && st->phase == ServerPhase::needs_auth) {
    report_needs_auth(*st);
    rc = kExitNeedsAuth;
  } else if (!st || st->status != ConnectionStatus::connected) {
    rc = kExitFailed;
  }
  run->host->shutdown();
  return rc;
}

int run_repl(const GlobalOptions& options) {
  auto run = start(options, /*repl=*/true);
  if (!run) return kExitUsage;
  native::NativeHost& host = *run->host;
  const bool interactive = ::isatty(STDIN_FILENO) == 1;
  for (const auto& e : run->result.errors) {
    if (!e.server.empty() && needs_auth(*run, e.server)) continue;  // reported just below
    std::fprintf(stderr, "mcprt: %s%s\n", e.path.empty() ? "" : (e.path + ": ").c_str(),
                 e.error.c_str());
  }
  report_pending(run->result.discovery);
  report_needs_auth(*run, /*repl=*/true);
  if (interactive) {
    std::printf("mcprt repl: %s. /mcp help for commands, <tool> <json> to call, /quit.\n",
                tools_count(host.registry().tools().size()).c_str());
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
        StopSignals stop_signals;
        CallOutcome outcome = call_tool(host, name, std::move(args.value()));
        if (outcome.interrupted_by != 0) {
          std::printf("error: interrupted; the call was cancelled\n");
        } else if (!outcome.finished) {
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

  // On a terminal: line editing, history and Tab completion (cli_line_editor.hpp); the
  // servers keep being served while the user types (the editor's idle hook).
  if (interactive && ::isatty(STDOUT_FILENO) == 1) {
    LineEditor::Options eo;
    eo.history_file = default_history_file();
    eo.idle = [&host] { host.executor().poll(); };
    eo.complete = [&host](const std::string& before) {
      std::vector<std::string> servers;
      for (const auto& [name, source] : host.commands().last_discovery().sources)
        servers.push_back(name);
      if (auto m = host.manager()) {
        for (const auto& st : m->server_states()) servers.push_back(st.name);
      }
      return repl_candidates(before, servers, host.registry().names());
    };
    {
      LineEditor editor(std::move(eo));
      bool more = true;
      while (more) {
        std::optional<std::string> line = editor.read_line();
        if (!line) {
          std::printf("\n");
          break;
        }
        more = handle(*line);
      }
    }
    std::fflush(stdout);
    host.shutdown();
    return kExitOk;
  }

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
