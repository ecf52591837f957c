// End-to-end tests of the `mcprt` CLI: the real binary, on a temporary HOME that holds
// Claude Code (~/.claude.json), Cursor (~/.cursor/mcp.json) and VS Code
// (<cwd>/.vscode/mcp.json) configs pointing at the demo server (and at this binary as
// scripted servers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include <netinet/in.h>
#include <sys/socket.h>

#include "hostile_support.hpp"
#include "mcprt/result.hpp"
#include "native_test_support.hpp"

namespace mcprt {
namespace cli_tools_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct CliRun {
  int exit_code = -1;
  std::string out;
  json doc;  // stdout parsed as JSON (discarded when it is not JSON)
  std::string raw;  // run_on_terminal: what the terminal got, escape sequences included
};

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    marker_ = "mcprt-cli-test-" + std::to_string(rd());
    home_ = fs::temp_directory_path() / marker_;
    cwd_ = home_ / "project";
    fs::create_directories(cwd_);
  }
  void TearDown() override {
    EXPECT_TRUE(marked_processes().empty()) << "the CLI left server processes running";
    fs::remove_all(home_);
  }

  // Runs the CLI from the project directory with HOME = the temp home and no XDG
  // overrides, capturing stdout (stderr goes to the test log unless `args` redirects it).
  CliRun run(const std::string& args, const std::string& stdin_text = "") {
    std::string cmd = "cd '" + cwd_.string() + "' && env -u XDG_CONFIG_HOME -u XDG_CACHE_HOME " +
                      "-u MCPRT_TIMEOUT_MS HOME='" + home_.string() + "' " + MCPRT_CLI + " " + args;
    if (!stdin_text.empty()) {
      auto input = home_ / "stdin.txt";
      std::ofstream(input) << stdin_text;
      cmd += " < '" + input.string() + "'";
    } else {
      cmd += " < /dev/null";
    }
    CliRun r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.doc = json::parse(r.out, nullptr, false);
    return r;
  }

  // Runs the CLI on a pseudo-terminal (stdin, stdout and stderr), as a user at a terminal
  // would: each time a trust question appears ("[s]elect each: " or "[y/N] "), the next
  // of `answers` is typed; `env` is added to the environment. Bounded by 60 s.
  CliRun run_on_terminal(const std::vector<std::string>& args, std::vector<std::string> answers,
                         const std::map<std::string, std::string>& env = {}, unsigned short columns = 0) {
    CliRun r;
    int master = -1;
    winsize size{};
    size.ws_row = 24;
    size.ws_col = columns;
    pid_t pid = ::forkpty(&master, nullptr, nullptr, columns ? &size : nullptr);
    if (pid < 0) return r;
    if (pid == 0) {
      if (::chdir(cwd_.c_str()) != 0) ::_exit(126);
      ::setenv("HOME", home_.c_str(), 1);
      for (const char* v : {"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "MCPRT_TIMEOUT_MS", "NO_COLOR"}) ::unsetenv(v);
      for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
      std::vector<std::string> words = {MCPRT_CLI};
      words.insert(words.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& w : words) argv.push_back(w.data());
      argv.push_back(nullptr);
      ::execv(MCPRT_CLI, argv.data());
      ::_exit(127);
    }
    std::size_t typed = 0;
    auto questions = [&] {
      std::size_t n = 0;
      for (const char* q : {"[s]elect each: ", "[y/N] "}) {
        for (auto at = r.out.find(q); at != std::string::npos; at = r.out.find(q, at + 1)) ++n;
      }
      return n;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      while (typed < questions() && typed < answers.size()) {
        std::string line = answers[typed++] + "\n";
        if (::write(master, line.data(), line.size()) < 0) break;
      }
      pollfd pfd{master, POLLIN, 0};
      if (::poll(&pfd, 1, 100) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(master, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EIO: the child closed the terminal
      r.out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(master);
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    // What the user reads: without the terminal's carriage returns and escape sequences
    // (bold names, the progress lines' cursor movements).
    r.raw = r.out;
    std::string plain;
    for (std::size_t i = 0; i < r.out.size(); ++i) {
      if (r.out[i] == '\r') continue;
      if (r.out[i] == '\x1b' && i + 1 < r.out.size() && r.out[i + 1] == '[') {
        i += 2;
        while (i < r.out.size() && !(r.out[i] >= '@' && r.out[i] <= '~')) ++i;
        continue;
      }
      plain.push_back(r.out[i]);
    }
    r.out = std::move(plain);
    return r;
  }

  json user_file() const {
    std::ifstream f(home_ / ".config/mcprt/mcp.json");
    return json::parse(f, nullptr, false);
  }

  void write(const fs::path& path, const json& doc) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << doc.dump(2);
  }
  // The demo server; `args` keep entries apart (equal endpoints collapse into one).
  static json demo(std::vector<std::string> args = {}) {
    return {{"command", MCPRT_DEMO_SERVER}, {"args", args}};
  }
  // The demo server behind a shell that first leaves the file started-<tag> in the temp
  // home: which servers a command started.
  json tagged_demo(const std::string& tag) const {
    return {{"command", "/bin/sh"},
            {"args", {"-c", "touch '" + (home_ / ("started-" + tag)).string() + "' && exec '" +
                                MCPRT_DEMO_SERVER + "'"}}};
  }
  std::set<std::string> started() const {
    std::set<std::string> tags;
    for (const auto& e : fs::directory_iterator(home_)) {
      const std::string name = e.path().filename();
      if (name.rfind("started-", 0) == 0) tags.insert(name.substr(8));
    }
    return tags;
  }
  void forget_started() {
    for (const auto& tag : started()) fs::remove(home_ / ("started-" + tag));
  }
  json scripted(const std::string& scenario) const {
    return {{"command", native::test::self_exe()},
            {"args", {"--scripted-server=" + scenario, marker_}}};
  }
  // The three tools' configs: claude_demo, cursor_demo (user level), vsc_demo (project).
  void write_three_configs() {
    write(home_ / ".claude.json", {{"mcpServers", {{"claude_demo", demo()}}}});
    write(home_ / ".cursor/mcp.json", {{"mcpServers", {{"cursor_demo", demo({"--quiet"})}}}});
    write(cwd_ / ".vscode/mcp.json",
          {{"servers", {{"vsc_demo", {{"type", "stdio"}, {"command", MCPRT_DEMO_SERVER},
                                      {"args", {"--verbose"}}}}}}});
  }

  // Processes whose command line or environment carries this test's marker (the temp
  // HOME is in every server's environment).
  std::set<int> marked_processes() const {
    std::set<int> found;
    for (const auto& e : fs::directory_iterator("/proc")) {
      std::string pid = e.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      for (const char* file : {"cmdline", "environ"}) {
        std::ifstream f(e.path() / file, std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(f)), {});
        if (text.find(marker_) != std::string::npos) {
          // The test process itself and the shell that runs the CLI are not servers.
          std::ifstream c(e.path() / "comm");
          std::string comm;
          std::getline(c, comm);
          if (comm != "sh" && std::stoi(pid) != ::getpid()) found.insert(std::stoi(pid));
        }
      }
    }
    return found;
  }

  static std::map<std::string, json> by_name(const json& list) {
    std::map<std::string, json> out;
    for (const auto& x : list) out[x.value("name", "")] = x;
    return out;
  }

  std::string marker_;
  fs::path home_;
  fs::path cwd_;
};

// What a terminal shows once `raw` was written to it: the lines of the screen (no
// scrolling region: rows grow downwards). Understands what the CLI writes: text, \r, \n,
// CSI n F (up n lines, to column 1), CSI n A (up), CSI 2K / K (erase the line / to its end),
// CSI J (erase to the end of the screen); other sequences (colours) change nothing shown.
std::vector<std::string> screen_of(const std::string& raw) {
  std::vector<std::string> rows(1);
  std::size_t row = 0, col = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '\r') {
      col = 0;
    } else if (c == '\n') {
      if (++row >= rows.size()) rows.resize(row + 1);
      col = 0;
    } else if (c == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
      std::size_t j = i + 2;
      std::string params;
      while (j < raw.size() && !(raw[j] >= '@' && raw[j] <= '~')) params.push_back(raw[j++]);
      if (j >= raw.size()) break;
      const int n = params.empty() || params.find_first_not_of("0123456789") != std::string::npos
                        ? 0
                        : std::stoi(params);
      switch (raw[j]) {
        case 'F': row -= std::min<std::size_t>(row, std::max(n, 1)); col = 0; break;
        case 'A': row -= std::min<std::size_t>(row, std::max(n, 1)); break;
        case 'K':
          if (n == 2) rows[row].clear();
          else if (col < rows[row].size()) rows[row].resize(col);
          break;
        case 'J':
          if (col < rows[row].size()) rows[row].resize(col);
          rows.resize(row + 1);
          break;
        default: break;
      }
      i = j;
    } else {
      if (rows[row].size() <= col) rows[row].resize(col + 1, ' ');
      rows[row][col++] = c;
    }
  }
  while (!rows.empty() && rows.back().find_first_not_of(' ') == std::string::npos) rows.pop_back();
  return rows;
}

std::string joined_screen(const std::string& raw) {
  std::string out;
  for (const auto& line : screen_of(raw)) out += line + "\n";
  return out;
}

std::set<std::string> keys(const json& object) {
  std::set<std::string> out;
  for (auto& [k, v] : object.items()) out.insert(k);
  return out;
}

TEST_F(Cli, ToolsJson_HasTheExactShapeAndEachServersSource) {
  write_three_configs();
  ASSERT_EQ(run("trust").exit_code, 0);  // vsc_demo is a project server (SPEC §17)
  auto r = run("tools --json");
  ASSERT_FALSE(r.doc.is_discarded()) << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(keys(r.doc), (std::set<std::string>{"tools", "errors", "servers", "shadowed", "elapsedMs"}));
  EXPECT_EQ(r.doc["shadowed"], json::array());
  EXPECT_TRUE(r.doc["elapsedMs"].is_number());
  EXPECT_EQ(r.doc["errors"], json::array());
  ASSERT_EQ(r.doc["tools"].size(), 18u) << r.out;
  const std::set<std::string> always{"name",        "server",     "tool",
                                     "description", "deferred",   "path",
                                     "inputSchema", "annotations", "annotationsTrusted"};
  const std::set<std::string> where_given{"title", "outputSchema"};
  for (const auto& t : r.doc["tools"]) {
    for (const auto& k : always) EXPECT_TRUE(t.contains(k)) << k << " in " << t;
    for (const auto& k : keys(t)) EXPECT_TRUE(always.count(k) || where_given.count(k)) << k << " in " << t;
  }
  auto tools = by_name(r.doc["tools"]);
  ASSERT_TRUE(tools.count("mcp_cursor_demo_echo")) << r.out;
  EXPECT_EQ(tools["mcp_cursor_demo_echo"]["server"], "cursor_demo");
  EXPECT_EQ(tools["mcp_cursor_demo_echo"]["tool"], "echo");
  EXPECT_EQ(tools["mcp_cursor_demo_echo"]["deferred"], false);
  EXPECT_EQ(tools["mcp_cursor_demo_echo"]["path"], "mcp:cursor_demo via Cursor");

  auto servers = by_name(r.doc["servers"]);
  ASSERT_EQ(servers.size(), 3u) << r.out;
  for (const auto& [name, s] : servers) {
    EXPECT_EQ(keys(s), (std::set<std::string>{"name", "status", "error", "toolCount", "source", "transport",
                                              "trust", "command", "args"}));
    EXPECT_EQ(s["transport"], "stdio");
    EXPECT_EQ(s["command"], MCPRT_DEMO_SERVER);
    EXPECT_EQ(keys(s["source"]), (std::set<std::string>{"provider", "providerName", "level", "path"}));
    EXPECT_EQ(s["status"], "connected") << s;
    EXPECT_EQ(s["toolCount"], 6);
    EXPECT_TRUE(s["error"].is_null());
  }
  EXPECT_EQ(servers["claude_demo"]["source"],
            json({{"provider", "claude"}, {"providerName", "Claude Code"}, {"level", "user"},
                  {"path", (home_ / ".claude.json").string()}}));
  EXPECT_EQ(servers["cursor_demo"]["source"],
            json({{"provider", "cursor"}, {"providerName", "Cursor"}, {"level", "user"},
                  {"path", (home_ / ".cursor/mcp.json").string()}}));
  EXPECT_EQ(servers["vsc_demo"]["source"],
            json({{"provider", "vscode"}, {"providerName", "VS Code"}, {"level", "project"},
                  {"path", (cwd_ / ".vscode/mcp.json").string()}}));
  EXPECT_EQ(servers["vsc_demo"]["trust"], "trusted");
  EXPECT_EQ(servers["vsc_demo"]["args"], json::array({"--verbose"}));
  EXPECT_EQ(servers["claude_demo"]["trust"], "implicit");
}

TEST_F(Cli, ToolsJson_CarriesEachToolsSchemaTitleAnnotationsAndOutputSchema) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  auto r = run("tools --json");
  ASSERT_FALSE(r.doc.is_discarded()) << r.out;
  auto tools = by_name(r.doc["tools"]);
  ASSERT_TRUE(tools.count("mcp_demo_echo") && tools.count("mcp_demo_add")) << r.out;
  const json& echo = tools["mcp_demo_echo"];
  EXPECT_EQ(echo["inputSchema"]["required"], json::array({"message"})) << echo;
  EXPECT_EQ(echo["inputSchema"]["properties"]["message"].value("type", ""), "string") << echo;
  EXPECT_EQ(echo.value("title", ""), "Echo") << echo;
  EXPECT_EQ(echo["annotations"], json({{"readOnlyHint", true}, {"openWorldHint", false}})) << echo;
  EXPECT_FALSE(echo.contains("outputSchema")) << echo;  // only what the server gave
  EXPECT_EQ(tools["mcp_demo_add"]["outputSchema"]["required"], json::array({"sum"})) << tools["mcp_demo_add"];
}

TEST_F(Cli, Tools_FailedServersExitOneWithTheirErrorAndSourcePath) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()},
                                                 {"crashy", scripted("crash_at_start")},
                                                 {"bad name!", {{"command", "x"}}}}}});
  auto r = run("tools --json");
  ASSERT_FALSE(r.doc.is_discarded()) << r.out;
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto servers = by_name(r.doc["servers"]);
  EXPECT_EQ(servers["demo"]["status"], "connected");
  EXPECT_EQ(servers["crashy"]["status"], "failed");
  EXPECT_THAT(servers["crashy"]["error"].get<std::string>(), HasSubstr("exited (code 3)"));
  std::string errors = r.doc["errors"].dump();
  EXPECT_THAT(errors, HasSubstr("Server \\\"crashy\\\""));
  EXPECT_THAT(errors, HasSubstr("Server \\\"bad name!\\\""));
  for (const auto& e : r.doc["errors"]) EXPECT_EQ(e["path"], (home_ / ".claude.json").string());
}

TEST_F(Cli, Tools_TextListsServersToolsAndASummary) {
  write_three_configs();
  ASSERT_EQ(run("trust").exit_code, 0);
  auto r = run("tools");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("claude_demo (stdio, Claude Code) connected, 6 tools"));
  EXPECT_THAT(r.out, HasSubstr("mcp_vsc_demo_word_count"));
  EXPECT_THAT(r.out, HasSubstr("18 tools from 3 of 3 servers in"));
}

TEST_F(Cli, Tools_OnATerminalIsColouredUnlessNoColorIsSet) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  auto coloured = run_on_terminal({"tools"}, {});
  EXPECT_EQ(coloured.exit_code, 0) << coloured.out;
  EXPECT_THAT(coloured.raw, HasSubstr("\033[1mdemo\033[0m")) << coloured.raw;
  auto plain = run_on_terminal({"tools"}, {}, {{"NO_COLOR", "1"}});
  EXPECT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_THAT(plain.raw, HasSubstr("demo (stdio, Claude Code) connected, 6 tools")) << plain.raw;
  EXPECT_THAT(plain.raw, Not(HasSubstr("\033[1m"))) << plain.raw;
}

TEST_F(Cli, Tools_ProgressLinesFitTheTerminalsWidth) {
  write(home_ / ".claude.json", {{"mcpServers", {{"crashy", scripted("crash_at_start")}}}});
  for (unsigned short columns : {40, 120}) {
    auto r = run_on_terminal({"tools"}, {}, {}, columns);
    std::istringstream lines(r.out);
    std::string progress;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("  crashy: failed", 0) == 0) progress = line;
    }
    ASSERT_FALSE(progress.empty()) << r.out;
    if (columns == 40) {
      EXPECT_EQ(progress.size(), 39u) << progress;
      EXPECT_THAT(progress, ::testing::EndsWith("...")) << progress;
    } else {
      EXPECT_GT(progress.size(), 39u) << progress;
      EXPECT_LE(progress.size(), 119u) << progress;
    }
  }
}

TEST_F(Cli, Tools_OnATerminalTheProgressBlockIsClearedWhenDone) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}, {"crashy", scripted("crash_at_start")}}}});
  auto r = run_on_terminal({"tools"}, {}, {{"NO_COLOR", "1"}});
  EXPECT_THAT(r.raw, HasSubstr("  demo: connecting (Claude Code)")) << r.raw;  // it was shown
  const std::string screen = joined_screen(r.raw);
  EXPECT_THAT(screen, Not(HasSubstr("demo: connect"))) << screen;
  EXPECT_THAT(screen, Not(HasSubstr("crashy: "))) << screen;
  EXPECT_THAT(screen, ::testing::StartsWith("crashy (stdio, Claude Code) failed: ")) << screen;
  EXPECT_THAT(screen, HasSubstr("\ndemo (stdio, Claude Code) connected, 6 tools\n")) << screen;
}

TEST_F(Cli, Tools_OneShotRunWaitsForAListChangedReListUnderWayAndCachesItsResult) {
  write(home_ / ".claude.json", {{"mcpServers", {{"late", scripted("late_tool")}}}});
  auto r = run("tools --json");
  ASSERT_FALSE(r.doc.is_discarded()) << r.out;
  auto tools = by_name(r.doc["tools"]);
  EXPECT_TRUE(tools.count("mcp_late_late")) << r.out;
  EXPECT_EQ(by_name(r.doc["servers"])["late"]["toolCount"], 3) << r.out;
  std::string cached;
  for (const auto& e : fs::directory_iterator(home_ / ".cache/mcprt")) {
    std::ifstream f(e.path());
    cached += std::string((std::istreambuf_iterator<char>(f)), {});
  }
  EXPECT_THAT(cached, HasSubstr("Registered right after the first tools/list.")) << cached;
  // A call of that tool finds it too.
  auto call = run("call mcp_late_late");
  EXPECT_EQ(call.exit_code, 0) << call.out;
  EXPECT_EQ(call.out, "late tool\n");
}

TEST_F(Cli, Tools_TextCountsOneToolInTheSingular) {
  json one = demo();
  one["includeTools"] = {"echo"};
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", one}}}});
  auto r = run("tools");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("demo (stdio, Claude Code) connected, 1 tool\n")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("\n1 tool from 1 of 1 servers in")) << r.out;
}

TEST_F(Cli, Tools_SecondRunServesASlowServerFromTheCacheAsDeferredTools) {
  write(home_ / ".claude.json",
        {{"mcpServers", {{"slow", demo({"--startup-delay-ms", "3000"})}, {"fast", demo()}}}});
  // First run: nothing cached, so the gate waits for the slow server.
  auto first = run("tools --json");
  ASSERT_FALSE(first.doc.is_discarded()) << first.out;
  auto t1 = by_name(first.doc["tools"]);
  ASSERT_TRUE(t1.count("mcp_slow_echo")) << first.out;
  EXPECT_EQ(t1["mcp_slow_echo"]["deferred"], false);
  EXPECT_EQ(by_name(first.doc["servers"])["slow"]["status"], "connected");
  EXPECT_TRUE(fs::exists(home_ / ".cache/mcprt"));

  // Second run: the slow server is still starting at the gate; its tools come from the cache.
  auto second = run("tools --json");
  ASSERT_FALSE(second.doc.is_discarded()) << second.out;
  auto t2 = by_name(second.doc["tools"]);
  ASSERT_TRUE(t2.count("mcp_slow_echo")) << second.out;
  EXPECT_EQ(t2["mcp_slow_echo"]["deferred"], true);
  EXPECT_EQ(t2["mcp_fast_echo"]["deferred"], false);
  EXPECT_EQ(by_name(second.doc["servers"])["slow"]["status"], "connecting");

  // --no-cache: the gate waits again, nothing deferred.
  auto third = run("tools --json --no-cache");
  ASSERT_FALSE(third.doc.is_discarded()) << third.out;
  EXPECT_EQ(by_name(third.doc["tools"])["mcp_slow_echo"]["deferred"], false);
}

TEST_F(Cli, Tools_HttpFailuresNameTheUrlAndTheCauseOnce) {
  // A loopback port that refuses (bound, not listening) and a server that hangs up.
  const int bound = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(bound, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(bound, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string refusing = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  native::test::RawHttpServer hang_up([](native::test::RawHttpServer::Connection&) {});
  write(home_ / ".claude.json",
        {{"mcpServers", {{"refused", {{"url", refusing + "/mcp?token=abc123"}}},
                         {"refused_sse", {{"type", "sse"}, {"url", refusing + "/sse"}}},
                         {"closer", {{"url", hang_up.url("/mcp")}}}}}});
  auto r = run("tools --json");
  ::close(bound);
  ASSERT_FALSE(r.doc.is_discarded()) << r.out;
  auto servers = by_name(r.doc["servers"]);
  EXPECT_EQ(servers["refused"]["error"], "Server \"refused\": HTTP POST " + refusing +
                                             "/mcp?token=*** failed: could not connect (connection refused)");
  EXPECT_EQ(servers["refused_sse"]["error"],
            "Server \"refused_sse\": HTTP GET " + refusing + "/sse failed: could not connect (connection refused)");
  EXPECT_EQ(servers["closer"]["error"], "Server \"closer\": HTTP POST " + hang_up.url("/mcp") +
                                            " failed: the server closed the connection without answering");
  EXPECT_THAT(r.out, Not(HasSubstr("abc123")));
}

TEST_F(Cli, Call_ExitCodesFollowTheResult) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  auto ok = run("call mcp_demo_echo '{\"message\":\"hello there\"}'");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(ok.out, "hello there\n");

  auto is_error = run("call mcp_demo_fail '{\"message\":\"boom\"}' --json");
  EXPECT_EQ(is_error.exit_code, 1) << is_error.out;
  ASSERT_FALSE(is_error.doc.is_discarded()) << is_error.out;
  EXPECT_EQ(is_error.doc["isError"], true);
  EXPECT_EQ(is_error.doc["text"], "boom");

  auto structured = run("call mcp_demo_add '{\"a\":2,\"b\":3}' --json");
  EXPECT_EQ(structured.exit_code, 0);
  EXPECT_EQ(structured.doc["structuredContent"], json({{"sum", 5}})) << structured.out;

  EXPECT_EQ(run("call mcp_demo_nope '{}' 2>&1").exit_code, 2);
  auto bad_json = run("call mcp_demo_echo '{nope' 2>&1");
  EXPECT_EQ(bad_json.exit_code, 2);
  EXPECT_THAT(bad_json.out, HasSubstr("not valid JSON"));
  EXPECT_EQ(run("call 2>&1").exit_code, 2);
}

TEST_F(Cli, Call_OfAFailedServersToolSaysTheServerFailedAndWhy) {
  write(home_ / ".claude.json", {{"mcpServers", {{"crashy", scripted("crash_at_start")}, {"demo", demo()}}}});
  auto r = run("call mcp_crashy_lookup '{}' 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, ::testing::StartsWith("mcprt: the tool \"mcp_crashy_lookup\" would come from server "
                                           "\"crashy\", which failed: ")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("cannot open the database")) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("available:"))) << r.out;
  // A name no server claims is still a usage error that lists what there is.
  auto unknown = run("call mcp_nobody_x '{}' 2>&1");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_EQ(unknown.out, "mcprt: unknown tool \"mcp_nobody_x\": it names no configured server (tools are "
                         "mcp_<server>_<tool>; servers: crashy, demo)\n");
  // A server's tool it does not have: that server's tools are the list.
  auto missing = run("call mcp_demo_nope '{}' 2>&1");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("unknown tool \"mcp_demo_nope\"; server \"demo\" has: mcp_demo_add, ")) << missing.out;
}

TEST_F(Cli, Call_StartsOnlyTheToolsServer) {
  json servers = {{"demo", tagged_demo("demo")}, {"dem", tagged_demo("dem")}};
  for (int i = 1; i <= 10; ++i) servers["other" + std::to_string(i)] = tagged_demo("other" + std::to_string(i));
  write(home_ / ".claude.json", {{"mcpServers", servers}});  // 12 servers
  auto r = run("call mcp_demo_echo '{\"message\":\"only one\"}'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "only one\n");
  EXPECT_EQ(started(), std::set<std::string>{"demo"});
}

TEST_F(Cli, Call_OfOverlappingServerNamesStartsTheOneTheCacheNames) {
  // "demo" and "demo_x" both fit mcp_demo_x_echo ("demo" could have a tool "x_echo").
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", tagged_demo("demo")}, {"demo_x", tagged_demo("demo_x")}}}});
  auto cold = run("call mcp_demo_x_echo '{\"message\":\"cold\"}'");
  EXPECT_EQ(cold.exit_code, 0) << cold.out;
  EXPECT_EQ(cold.out, "cold\n");
  EXPECT_EQ(started(), (std::set<std::string>{"demo", "demo_x"}));  // nothing cached: both
  ASSERT_EQ(run("tools --json").exit_code, 0);                       // fills the cache
  forget_started();
  auto warm = run("call mcp_demo_x_echo '{\"message\":\"warm\"}'");
  EXPECT_EQ(warm.exit_code, 0) << warm.out;
  EXPECT_EQ(warm.out, "warm\n");
  EXPECT_EQ(started(), std::set<std::string>{"demo_x"});
  forget_started();
  EXPECT_EQ(run("call mcp_demo_echo '{\"message\":\"d\"}'").out, "d\n");  // only "demo" fits
  EXPECT_EQ(started(), std::set<std::string>{"demo"});
}

TEST_F(Cli, Call_ServerFlagStartsThatServerAndTakesItsOwnToolName) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", tagged_demo("demo")}, {"other", tagged_demo("other")}}}});
  auto raw_name = run("call --server demo echo '{\"message\":\"by its own name\"}'");
  EXPECT_EQ(raw_name.exit_code, 0) << raw_name.out;
  EXPECT_EQ(raw_name.out, "by its own name\n");
  auto full_name = run("call mcp_demo_echo '{\"message\":\"full\"}' --server demo");
  EXPECT_EQ(full_name.out, "full\n");
  EXPECT_EQ(started(), std::set<std::string>{"demo"});
  auto ghost = run("call --server ghost echo 2>&1");
  EXPECT_EQ(ghost.exit_code, 2);
  EXPECT_EQ(ghost.out, "mcprt: unknown server \"ghost\" (servers: demo, other)\n");
}

TEST_F(Cli, Call_OnATerminalShowsProgressOnStderrAndClearsItWhenDone) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  const std::string args = R"({"steps":3,"interval_ms":100})";
  auto r = run_on_terminal({"call", "mcp_demo_slow_task", args}, {});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.raw, HasSubstr("  mcp_demo_slow_task: 1/3 (33%) step 1 of 3")) << r.raw;
  EXPECT_THAT(r.raw, HasSubstr("  mcp_demo_slow_task: 3/3 (100%) step 3 of 3")) << r.raw;
  // What stays on the screen: the result, no progress line.
  EXPECT_EQ(joined_screen(r.raw), "slow_task completed 3 steps of 100 ms\n") << r.raw;
  // Off a terminal nothing but the result.
  auto piped = run("call mcp_demo_slow_task '" + args + "' 2>&1");
  EXPECT_EQ(piped.out, "slow_task completed 3 steps of 100 ms\n");
}

TEST_F(Cli, Call_SigtermCancelsTheCallStopsItsServersAndExits143) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  // The environment goes through env(1), which execs the CLI in the same process: nothing
  // but async-signal-safe calls runs between fork and exec in this threaded test process.
  const std::string home = "HOME=" + home_.string();
  const pid_t cli = ::fork();
  ASSERT_GE(cli, 0);
  if (cli == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(out[1], STDERR_FILENO);
    ::close(out[0]);
    if (::chdir(cwd_.c_str()) != 0) ::_exit(126);
    // 100 steps of 100 ms: the call is still running when the signal comes.
    ::execl("/usr/bin/env", "env", "-u", "XDG_CONFIG_HOME", "-u", "XDG_CACHE_HOME", "-u", "MCPRT_TIMEOUT_MS",
            home.c_str(), MCPRT_CLI, "call", "mcp_demo_slow_task", R"({"steps":100,"interval_ms":100})",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  // The CLI and its demo server both carry the marker (HOME).
  const auto started = std::chrono::steady_clock::now();
  while (marked_processes().size() < 2 && std::chrono::steady_clock::now() - started < std::chrono::seconds(10)) {
    ::poll(nullptr, 0, 20);
  }
  ASSERT_GE(marked_processes().size(), 2u) << "the demo server never started";
  ASSERT_EQ(::kill(cli, SIGTERM), 0);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) output.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(cli, &status, 0), cli);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ": " << output;
  EXPECT_EQ(WEXITSTATUS(status), 143) << output;
  EXPECT_THAT(output, HasSubstr("mcprt: interrupted; the call was cancelled")) << output;
  EXPECT_TRUE(marked_processes().empty()) << "the demo server outlived the CLI";
}

TEST_F(Cli, Call_WaitsForASlowServerThroughItsDeferredTool) {
  write(home_ / ".claude.json", {{"mcpServers", {{"slow", demo({"--startup-delay-ms", "1500"})}}}});
  ASSERT_EQ(run("tools --json").exit_code, 0);  // fills the cache
  auto r = run("call mcp_slow_echo '{\"message\":\"waited\"}'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "waited\n");
}

TEST_F(Cli, Status_ShowsOneServerOrAll) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  auto one = run("status demo");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  EXPECT_THAT(one.out, HasSubstr("Server \"demo\""));
  EXPECT_THAT(one.out, HasSubstr("state:    connected"));
  EXPECT_THAT(one.out, HasSubstr("source:   Claude Code (user) " + (home_ / ".claude.json").string()));
  auto all = run("status");
  EXPECT_EQ(all.exit_code, 0);
  EXPECT_THAT(all.out, ::testing::ContainsRegex("demo +connected +6 tools"));
  EXPECT_EQ(run("status ghost").exit_code, 2);
}

TEST_F(Cli, Status_AfterAWarmStartWaitsForTheServerAndSaysConnectedOnce) {
  write(home_ / ".claude.json", {{"mcpServers", {{"slow", demo({"--startup-delay-ms", "1500"})}}}});
  ASSERT_EQ(run("tools --json").exit_code, 0);  // fills the cache
  // The load now ends at once on the cached tools; status waits for the connect itself.
  auto one = run("status slow");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  EXPECT_THAT(one.out, HasSubstr("  state:    connected\n")) << one.out;
  EXPECT_THAT(one.out, HasSubstr("  tools:    6\n")) << one.out;  // live, not "(from the cache)"
  auto all = run("status");
  EXPECT_EQ(all.exit_code, 0) << all.out;
  EXPECT_THAT(all.out, ::testing::ContainsRegex("slow +connected +6 tools")) << all.out;
}

TEST_F(Cli, StatusJson_HasTheRowsOfToolsJsonAndTheSameExitCodes) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}, {"crashy", scripted("crash_at_start")}}}});
  auto all = run("status --json");
  EXPECT_EQ(all.exit_code, 1) << all.out;  // crashy failed
  ASSERT_FALSE(all.doc.is_discarded()) << all.out;
  auto rows = by_name(all.doc["servers"]);
  ASSERT_EQ(rows.size(), 2u) << all.out;
  EXPECT_EQ(rows["demo"]["status"], "connected");
  EXPECT_EQ(rows["demo"]["toolCount"], 6);
  EXPECT_EQ(rows["crashy"]["status"], "failed");
  EXPECT_THAT(rows["crashy"]["error"].get<std::string>(), HasSubstr("crashy"));
  auto one = run("status demo --json");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  ASSERT_EQ(one.doc["servers"].size(), 1u) << one.out;
  EXPECT_EQ(one.doc["servers"][0], rows["demo"]);
  auto ghost = run("status ghost --json 2>/dev/null");
  EXPECT_EQ(ghost.exit_code, 2);
  EXPECT_EQ(ghost.out, "");
}

TEST_F(Cli, Status_OfAFailedServerShowsItsErrorAndStderrAndExitsOne) {
  write(home_ / ".claude.json", {{"mcpServers", {{"crashy", scripted("crash_at_start")}}}});
  auto r = run("status crashy");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("state:    failed"));
  EXPECT_THAT(r.out, HasSubstr("cannot open the database"));
}

TEST_F(Cli, List_ReadsConfigsOnlyAndShowsSourceTransportTrustAndWhatEachWouldRun) {
  write_three_configs();
  // A user-level server that would leave a marker file if anything started it.
  const fs::path marker = home_ / "started";
  write(home_ / ".config/mcprt/mcp.json",
        {{"mcpServers", {{"toucher", {{"command", "/bin/sh"}, {"args", {"-c", "touch '" + marker.string() + "'"}}}},
                         {"remote", {{"url", "http://127.0.0.1:9/mcp?token=abc123"}}}}}});
  auto r = run("list");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("MCP servers (5):"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("vsc_demo +stdio +pending +VS Code \\(project\\) " +
                                              (cwd_ / ".vscode/mcp.json").string()));
  EXPECT_THAT(r.out, HasSubstr("runs: " + std::string(MCPRT_DEMO_SERVER) + " --verbose"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("claude_demo +stdio +implicit +Claude Code \\(user\\)"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("remote +http +implicit"));
  EXPECT_THAT(r.out, HasSubstr("connects to: http://127.0.0.1:9/mcp?token=***"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("abc123")));
  EXPECT_THAT(r.out, HasSubstr("To trust: mcprt trust '" + fs::canonical(cwd_).string() + "'"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("connected")));  // no status: nothing connected
  EXPECT_FALSE(fs::exists(marker)) << "list started a server";
  EXPECT_FALSE(fs::exists(home_ / ".cache/mcprt")) << "list touched the tool cache";

  ASSERT_EQ(run("trust").exit_code, 0);
  EXPECT_THAT(run("list").out, ::testing::ContainsRegex("vsc_demo +stdio +trusted +VS Code"));
}

TEST_F(Cli, ListJson_HasEachServersStateTrustAndLaunchAsWritten) {
  write_three_configs();
  write(cwd_ / ".mcp.json", {{"mcpServers", {{"web", {{"url", "http://u:pw@127.0.0.1:9/${NOPE}"},
                                                       {"headers", {{"X-K", "!echo hi"}}}}},
                                             {"off", {{"command", "x"}, {"enabled", false}}}}}});
  auto r = run("list --json");
  ASSERT_FALSE(r.doc.is_discarded()) << r.out;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(keys(r.doc), (std::set<std::string>{"servers", "shadowed", "errors", "projectFolder"}));
  EXPECT_EQ(r.doc["projectFolder"], fs::canonical(cwd_).string());
  auto servers = by_name(r.doc["servers"]);
  ASSERT_EQ(servers.size(), 5u) << r.out;
  EXPECT_EQ(servers["web"]["trust"], "pending");
  EXPECT_EQ(servers["web"]["state"], "untrusted");
  EXPECT_EQ(servers["web"]["transport"], "http");
  EXPECT_EQ(servers["web"]["url"], "http://***@127.0.0.1:9/${NOPE}");
  EXPECT_EQ(servers["web"]["connectCommands"], json::array({"header X-K: !echo hi"}));
  EXPECT_EQ(servers["web"]["trustCommand"], "mcprt trust '" + fs::canonical(cwd_).string() + "'");
  EXPECT_EQ(servers["off"]["state"], "disabled");
  EXPECT_EQ(servers["claude_demo"]["state"], "enabled");
  EXPECT_EQ(servers["claude_demo"]["trust"], "implicit");
  EXPECT_EQ(servers["claude_demo"]["command"], MCPRT_DEMO_SERVER);
  EXPECT_EQ(servers["vsc_demo"]["source"]["level"], "project");
}

TEST_F(Cli, ShadowedEntriesAreShownInListToolsAndStatusWithTheEntryThatWon) {
  // Claude Code outranks Cursor: Cursor's "demo" loses by name, its "twin" by endpoint.
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  write(home_ / ".cursor/mcp.json", {{"mcpServers", {{"demo", demo({"--quiet"})}, {"twin", demo()}}}});
  const std::string claude = (home_ / ".claude.json").string();
  const std::string cursor = (home_ / ".cursor/mcp.json").string();
  const std::string by_name = "shadowed by \"demo\" from Claude Code (user) " + claude + " (same name)";
  const std::string by_endpoint = "shadowed by \"demo\" from Claude Code (user) " + claude + " (same endpoint)";

  auto list = run("list");
  EXPECT_EQ(list.exit_code, 0) << list.out;
  EXPECT_THAT(list.out, HasSubstr("Shadowed (another entry of that name or endpoint wins; never started):\n"
                                  "  demo  Cursor (user) " + cursor + "\n    " + by_name + "\n"
                                  "    runs: " + std::string(MCPRT_DEMO_SERVER) + " --quiet\n")) << list.out;
  EXPECT_THAT(list.out, HasSubstr("  twin  Cursor (user) " + cursor + "\n    " + by_endpoint + "\n")) << list.out;

  auto list_json = run("list --json");
  ASSERT_EQ(list_json.doc["shadowed"].size(), 2u) << list_json.out;
  const json& loser = list_json.doc["shadowed"][0];
  EXPECT_EQ(loser["name"], "demo");
  EXPECT_EQ(loser["reason"], "same name");
  EXPECT_EQ(loser["source"]["path"], cursor);
  EXPECT_EQ(loser["shadowedBy"], json({{"name", "demo"},
                                       {"source", {{"provider", "claude"}, {"providerName", "Claude Code"},
                                                   {"level", "user"}, {"path", claude}}}}));
  EXPECT_EQ(loser["args"], json::array({"--quiet"}));
  EXPECT_EQ(list_json.doc["shadowed"][1]["name"], "twin");
  EXPECT_EQ(list_json.doc["shadowed"][1]["reason"], "same endpoint");

  auto tools = run("tools");
  EXPECT_THAT(tools.out, HasSubstr("twin (stdio, Cursor) shadowed: by \"demo\" from Claude Code (user) " + claude +
                                   " (same endpoint); not started\n")) << tools.out;
  auto tools_json = run("tools --json");
  EXPECT_EQ(tools_json.doc["shadowed"], list_json.doc["shadowed"]) << tools_json.out;

  auto twin = run("status twin");
  EXPECT_EQ(twin.exit_code, 1) << twin.out;  // never started, like a disabled one
  EXPECT_EQ(twin.out, "Server \"twin\"\n  state:    " + by_endpoint + "; never started\n  source:   Cursor (user) " +
                          cursor + "\n");
  auto status_demo = run("status demo");
  EXPECT_THAT(status_demo.out, HasSubstr("  shadows:  Cursor (user) " + cursor + " (same name; not used)\n"));
  auto all = run("status");
  EXPECT_THAT(all.out, ::testing::ContainsRegex("twin +shadowed +- +Cursor \\(user\\)")) << all.out;
  auto twin_json = run("status twin --json");
  ASSERT_EQ(twin_json.doc["shadowed"].size(), 1u) << twin_json.out;
  EXPECT_EQ(twin_json.doc["shadowed"][0]["shadowedBy"]["name"], "demo");
}

TEST_F(Cli, Trust_RecordsTheFolderAndEveryProjectServerAndUntrustRemovesIt) {
  write_three_configs();
  write(cwd_ / ".mcp.json", {{"mcpServers", {{"dot", demo({"--startup-delay-ms", "0"})}}}});
  const std::string folder = fs::canonical(cwd_).string();
  // Before: the project servers are pending; the user ones connect.
  auto before = run("tools --json");
  EXPECT_EQ(before.exit_code, 3) << before.out;
  auto b = by_name(before.doc["servers"]);
  EXPECT_EQ(b["vsc_demo"]["status"], "untrusted");
  EXPECT_EQ(b["vsc_demo"]["trust"], "pending");
  EXPECT_THAT(b["vsc_demo"]["error"].get<std::string>(), HasSubstr("mcprt trust '" + folder + "'"));
  EXPECT_EQ(b["claude_demo"]["status"], "connected");
  EXPECT_EQ(before.doc["tools"].size(), 12u);

  auto t = run("trust");
  EXPECT_EQ(t.exit_code, 0) << t.out;
  EXPECT_THAT(t.out, HasSubstr("Trusted " + folder));
  EXPECT_THAT(t.out, HasSubstr("vsc_demo (stdio, VS Code, " + (cwd_ / ".vscode/mcp.json").string() + ")"));
  EXPECT_THAT(t.out, HasSubstr("runs: " + std::string(MCPRT_DEMO_SERVER) + " --verbose"));
  EXPECT_THAT(t.out, HasSubstr("dot (stdio, Claude Code"));
  std::ifstream f(home_ / ".config/mcprt/mcp.json");
  json doc = json::parse(f, nullptr, false);
  ASSERT_TRUE(doc["trustedProjects"].contains(folder)) << doc;
  EXPECT_EQ(keys(doc["trustedProjects"][folder]["servers"]), (std::set<std::string>{"dot", "vsc_demo"}));

  auto after = run("tools --json");
  EXPECT_EQ(after.exit_code, 0) << after.out;
  EXPECT_EQ(by_name(after.doc["servers"])["vsc_demo"]["status"], "connected");
  EXPECT_EQ(after.doc["tools"].size(), 24u);

  auto u = run("untrust");
  EXPECT_EQ(u.exit_code, 0);
  EXPECT_THAT(u.out, HasSubstr("Untrusted " + folder));
  EXPECT_EQ(by_name(run("tools --json").doc["servers"])["vsc_demo"]["trust"], "pending");
  EXPECT_THAT(run("untrust").out, HasSubstr("was not trusted"));
}

TEST_F(Cli, Trust_OfAnotherDirectoryTrustsThatDirectory) {
  fs::path other = home_ / "other";
  write(other / ".mcp.json", {{"mcpServers", {{"o", demo()}}}});
  auto t = run("trust '" + other.string() + "'");
  EXPECT_EQ(t.exit_code, 0) << t.out;
  EXPECT_THAT(t.out, HasSubstr("Trusted " + fs::canonical(other).string()));
  auto r = run("tools --json --cwd '" + other.string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(by_name(r.doc["servers"])["o"]["status"], "connected");
  EXPECT_EQ(run("trust '" + (home_ / "absent").string() + "' 2>&1").exit_code, 2);
}

TEST_F(Cli, Status_OfAnUntrustedServerSaysSoAndExitsThree) {
  write(cwd_ / ".mcp.json", {{"mcpServers", {{"proj", demo()}}}});
  auto r = run("status proj 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("state:    not trusted"));
  EXPECT_THAT(r.out, HasSubstr("would run: " + std::string(MCPRT_DEMO_SERVER)));
  EXPECT_THAT(r.out, HasSubstr("to trust: mcprt trust '" + fs::canonical(cwd_).string() + "'"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Unknown server")));
  auto all = run("status");
  EXPECT_EQ(all.exit_code, 3) << all.out;
  EXPECT_THAT(all.out, ::testing::ContainsRegex("proj +not trusted"));
}

TEST_F(Cli, Call_OfAnUntrustedServersToolNamesTheFixAndExitsThree) {
  write(cwd_ / ".mcp.json", {{"mcpServers", {{"proj", demo()}}}});
  auto r = run("call mcp_proj_echo '{\"message\":\"x\"}' 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("server \"proj\""));
  EXPECT_THAT(r.out, HasSubstr("which is not trusted"));
  EXPECT_THAT(r.out, HasSubstr("To trust it: mcprt trust '" + fs::canonical(cwd_).string() + "'"));
  ASSERT_EQ(run("trust").exit_code, 0);
  auto ok = run("call mcp_proj_echo '{\"message\":\"now\"}'");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(ok.out, "now\n");
}

TEST_F(Cli, Prompt_OnATerminalNamesEachCommandAndAYesIsRecordedAndConnects) {
  write_three_configs();
  write(cwd_ / ".mcp.json", {{"mcpServers", {{"web", {{"url", "http://u:pw@127.0.0.1:9/mcp"},
                                                       {"headers", {{"X-K", "!pass show k"}}}}}}}});
  auto r = run_on_terminal({"tools"}, {"y"});
  EXPECT_THAT(r.out, HasSubstr("configures 2 MCP servers that you have not trusted"));
  EXPECT_THAT(r.out, HasSubstr("runs: " + std::string(MCPRT_DEMO_SERVER) + " --verbose"));
  EXPECT_THAT(r.out, HasSubstr("connects to: http://***@127.0.0.1:9/mcp"));
  EXPECT_THAT(r.out, HasSubstr("runs at connect: header X-K: !pass show k"));
  EXPECT_THAT(r.out, HasSubstr("vsc_demo (stdio, VS Code) connected, 6 tools"));
  json doc = user_file();
  const std::string folder = fs::canonical(cwd_).string();
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(keys(doc["trustedProjects"][folder]["servers"]), (std::set<std::string>{"vsc_demo", "web"}));
  // Asked once: the next run on the terminal has nothing to ask.
  auto again = run_on_terminal({"tools"}, {});
  EXPECT_THAT(again.out, Not(HasSubstr("[s]elect each")));
}

TEST_F(Cli, Prompt_NoOrNoAnswerRecordsNothingAndReportsEachServer) {
  write_three_configs();
  auto r = run_on_terminal({"tools"}, {"n"});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("vsc_demo (stdio, VS Code) not trusted"));
  EXPECT_THAT(r.out, HasSubstr("To trust it: mcprt trust '" + fs::canonical(cwd_).string() + "'"));
  EXPECT_FALSE(fs::exists(home_ / ".config/mcprt/mcp.json"));
}

TEST_F(Cli, Prompt_SelectEachTrustsOnlyTheServersAnsweredYes) {
  write(cwd_ / ".mcp.json", {{"mcpServers", {{"a_yes", demo({"--quiet"})}, {"b_no", demo({"--verbose"})}}}});
  auto r = run_on_terminal({"tools"}, {"s", "y", "n"});
  EXPECT_THAT(r.out, HasSubstr("Trust \"a_yes\""));
  EXPECT_THAT(r.out, HasSubstr("Trust \"b_no\""));
  EXPECT_THAT(r.out, HasSubstr("a_yes (stdio, Claude Code) connected"));
  EXPECT_THAT(r.out, HasSubstr("b_no (stdio, Claude Code) not trusted"));
  json doc = user_file();
  EXPECT_EQ(keys(doc["trustedProjects"][fs::canonical(cwd_).string()]["servers"]),
            std::set<std::string>{"a_yes"});
}

TEST_F(Cli, Repl_RunsMcpCommandsAndToolCallsFromPipedStdin) {
  write(home_ / ".claude.json", {{"mcpServers", {{"demo", demo()}}}});
  auto r = run("repl",
               "/mcp list\n"
               "mcp_demo_echo {\"message\":\"from the repl\"}\n"
               "mcp_demo_fail {}\n"
               "/mcp tools demo\n"
               "/mcp nonsense\n"
               "/quit\n"
               "mcp_demo_echo {\"message\":\"after quit\"}\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("demo +connected +6 tools"));
  EXPECT_THAT(r.out, HasSubstr("from the repl\n"));
  EXPECT_THAT(r.out, HasSubstr("error: The fail tool always fails."));
  EXPECT_THAT(r.out, HasSubstr("Tools of \"demo\" (6):"));
  EXPECT_THAT(r.out, HasSubstr("Unknown subcommand \"nonsense\"."));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("after quit")));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("mcprt>")));  // no prompt off a terminal
}

TEST_F(Cli, Repl_McpListAfterAWarmStartShowsWhereTheServersGotTo) {
  write(home_ / ".claude.json",
        {{"mcpServers", {{"slow", demo({"--startup-delay-ms", "1000"})}, {"fast", demo()}}}});
  ASSERT_EQ(run("tools --json").exit_code, 0);  // fills the cache: the next load ends at once
  auto r = run("repl", "/mcp list\n/mcp status slow\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("fast +connected +6 tools")) << r.out;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("slow +connected +6 tools")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("  state:    connected\n")) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("connecting"))) << r.out;
}

TEST_F(Cli, Repl_McpAddWritesTheNativeUserFileAndConnects) {
  auto r = run("repl", std::string("/mcp add late -- ") + MCPRT_DEMO_SERVER + "\nmcp_late_echo {\"message\":\"added\"}\n");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("Connected \"late\"."));
  EXPECT_THAT(r.out, HasSubstr("added\n"));
  std::ifstream f(home_ / ".config/mcprt/mcp.json");
  json doc = json::parse(f, nullptr, false);
  EXPECT_EQ(doc["mcpServers"]["late"]["command"], MCPRT_DEMO_SERVER) << doc;
}

TEST_F(Cli, ConfigFlag_UsesOnlyThatFile) {
  write_three_configs();
  write(home_ / "only.json", {{"mcpServers", {{"only", demo()}}}});
  auto r = run("tools --json --config " + (home_ / "only.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto servers = by_name(r.doc["servers"]);
  ASSERT_EQ(servers.size(), 1u) << r.out;
  EXPECT_EQ(servers["only"]["source"]["path"], (home_ / "only.json").string());
}

TEST_F(Cli, ConfigFlag_InvalidJsonIsAUsageErrorWithLineAndColumn) {
  auto path = home_ / "broken.json";
  std::ofstream(path) << "{\n  \"mcpServers\": {\n    \"a\": ,\n  }\n}\n";
  auto r = run("tools --config " + path.string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr(path.string() + ":3:"));
}

TEST_F(Cli, ConfigFlag_MissingFileIsAUsageError) {
  auto r = run("tools --config " + (home_ / "absent.json").string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("does not exist"));
}

TEST_F(Cli, NoConfigAnywhereIsAnEmptyResultNotAnError) {
  auto r = run("tools --json");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.doc["tools"], json::array());
  EXPECT_EQ(r.doc["servers"], json::array());
}

TEST_F(Cli, UnknownCommandIsAUsageError) {
  auto unknown = run("--config /dev/null frobnicate --json 2>&1");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.out, HasSubstr("unknown command \"frobnicate\" (commands: list, trust, untrust, "
                                     "tools, call, search, resources, read, prompts, prompt, status, repl, "
                                     "auth, add, remove, get, enable, disable, completion, "
                                     "serve-demo; see mcprt --help)"))
      << unknown.out;
  EXPECT_EQ(run("2>&1").exit_code, 2);
  // An option's value is no command; a known command after it still runs.
  EXPECT_EQ(run("--config " + (home_ / "none.json").string() + " bogus 2>&1").exit_code, 2);
  EXPECT_EQ(run("--elicit decline list 2>&1").exit_code, 0);
}

}  // namespace
}  // namespace cli_tools_test
}  // namespace mcprt
