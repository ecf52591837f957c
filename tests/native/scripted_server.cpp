// The scripted stdio MCP server (see scripted_server.hpp). Plain blocking POSIX I/O on
// purpose: it is a test double with exactly the behaviour each scenario names, nothing
// clever. It is the same binary as the tests, so it must not touch gtest.

#include "scripted_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace mcprt::native::test {

namespace {

using json = nlohmann::json;

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      ::_exit(141);  // the reader went away (as SIGPIPE would have ended us)
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void say(std::string_view line) {
  std::string s(line);
  s.push_back('\n');
  write_all(STDOUT_FILENO, s);
}

void complain(std::string_view line) {
  std::string s(line);
  s.push_back('\n');
  write_all(STDERR_FILENO, s);
}

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

// Reads stdin line by line. Returns false at EOF.
class LineReader {
 public:
  bool next(std::string& line) {
    while (true) {
      std::size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      char chunk[65536];
      ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buf_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  std::string buf_;
};

void sleep_forever() {
  while (true) ::pause();
}

void write_stderr_flood(std::size_t bytes) {
  std::string line;
  std::size_t written = 0;
  for (std::size_t i = 0; written < bytes; ++i) {
    line = "flood line " + std::to_string(i) + " " + std::string(100, 'e') + "\n";
    write_all(STDERR_FILENO, line);
    written += line.size();
  }
}

json tool_list() {
  return json::array({
      {{"name", "echo"},
       {"description", "Echoes the message."},
       {"inputSchema",
        {{"type", "object"},
         {"properties", {{"message", {{"type", "string"}}}}},
         {"required", {"message"}}}}},
      {{"name", "add"},
       {"description", "Adds a and b."},
       {"inputSchema",
        {{"type", "object"},
         {"properties", {{"a", {{"type", "number"}}}, {"b", {{"type", "number"}}}}},
         {"required", {"a", "b"}}}}},
  });
}

class McpServer {
 public:
  explicit McpServer(std::string scenario, long delay_ms = 0)
      : scenario_(std::move(scenario)), delay_ms_(delay_ms) {}

  int run() {
    if (scenario_ == "ignore_sigterm") {
      ::signal(SIGTERM, SIG_IGN);
      complain("ready: ignoring SIGTERM");
    }
    if (scenario_ == "flood_stderr") {
      write_stderr_flood(env_size("MCPRT_SCRIPTED_FLOOD_BYTES", 8u * 1024 * 1024));
    }
    LineReader reader;
    std::string line;
    while (reader.next(line)) {
      if (line.empty()) continue;
      json msg = json::parse(line, nullptr, false);
      if (msg.is_discarded() || !msg.is_object()) continue;
      handle(msg);
    }
    if (scenario_ == "ignore_stdin_close" || scenario_ == "ignore_sigterm") sleep_forever();
    return 0;
  }

 private:
  void handle(const json& msg) {
    auto method_it = msg.find("method");
    auto id_it = msg.find("id");
    if (method_it == msg.end() || !method_it->is_string()) return;  // a response to us
    if (id_it == msg.end()) return;                                  // a notification
    const std::string method = *method_it;
    const json id = *id_it;
    const json params = msg.value("params", json::object());

    if (scenario_ == "hang_initialize") return;

    if (method == "initialize") {
      if (scenario_ == "slow_initialize" && delay_ms_ > 0) ::usleep(static_cast<useconds_t>(delay_ms_) * 1000);
      if (scenario_ == "huge_line") {
        const std::size_t total = env_size("MCPRT_SCRIPTED_HUGE_BYTES", 100u * 1000 * 1000);
        const std::string chunk(1024 * 1024, 'x');
        std::size_t left = total;
        while (left > 0) {
          std::size_t n = left < chunk.size() ? left : chunk.size();
          write_all(STDOUT_FILENO, std::string_view(chunk.data(), n));
          left -= n;
        }
        write_all(STDOUT_FILENO, "\n");
      }
      std::string version = "2025-11-25";
      if (params.is_object()) {
        auto v = params.find("protocolVersion");
        if (v != params.end() && v->is_string()) {
          const std::string asked = *v;
          for (const char* known : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
            if (asked == known) version = asked;
          }
        }
      }
      reply(id, {{"protocolVersion", version},
                 {"capabilities", {{"tools", {{"listChanged", true}}}}},
                 {"serverInfo", {{"name", "scripted-" + scenario_}, {"version", "1.0.0"}}}});
      return;
    }
    if (method == "ping") {
      reply(id, json::object());
      return;
    }
    if (method == "tools/list") {
      if (scenario_ == "late_tool") {
        // The list as it was when asked, then (in the same write, so the client reads both
        // at once) the tool registered right after and its list_changed.
        json tools = tool_list();
        if (late_tool_added_) tools.push_back(late_tool());
        std::string out = json{{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"tools", tools}}}}.dump() + "\n";
        if (!late_tool_added_) {
          late_tool_added_ = true;
          out += json{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}}.dump() + "\n";
        }
        write_all(STDOUT_FILENO, out);
        return;
      }
      if (scenario_ == "deep_tools_list") {
        reply_raw(id, "{\"tools\":" + deep_arrays() + "}");
      } else if (scenario_ == "invalid_utf8_tools_list") {
        // dump() would refuse the byte, so the answer is spliced by hand.
        std::string result = json{{"tools", tool_list()}}.dump();
        const std::string what = "Echoes the message.";
        result.replace(result.find(what), what.size(), "Echoes the \xFF message.");
        reply_raw(id, result);
      } else {
        reply(id, {{"tools", tool_list()}});
      }
      return;
    }
    if (method == "tools/call") {
      if (scenario_ == "exit_mid_call") {
        complain("exit_mid_call: exiting on tools/call");
        ::_exit(7);
      }
      if (scenario_ == "hang_call") return;  // never answered
      if (scenario_ == "deep_call_result") {
        reply_raw(id, "{\"content\":" + deep_arrays() + "}");
        return;
      }
      const std::string name = params.value("name", "");
      const json args = params.value("arguments", json::object());
      if (name == "late" && late_tool_added_) {
        reply(id, {{"content", json::array({{{"type", "text"}, {"text", "late tool"}}})}});
      } else if (name == "echo" && args.contains("message") && args["message"].is_string()) {
        reply(id, {{"content", json::array({{{"type", "text"}, {"text", args["message"]}}})}});
      } else if (name == "add" && args.contains("a") && args.contains("b") &&
                 args["a"].is_number() && args["b"].is_number()) {
        const double sum = args["a"].get<double>() + args["b"].get<double>();
        reply(id, {{"content", json::array({{{"type", "text"}, {"text", json(sum).dump()}}})}});
      } else {
        reply_error(id, -32602, "Unknown tool or bad arguments: " + name);
      }
      return;
    }
    reply_error(id, -32601, "Method not found: " + method);
  }

  static std::string deep_arrays() {
    const std::size_t depth = env_size("MCPRT_SCRIPTED_DEPTH", 66000);
    return std::string(depth, '[') + std::string(depth, ']');
  }

  // An answer whose result is raw text (what json cannot hold: too deep, not UTF-8).
  void reply_raw(const json& id, const std::string& result_text) {
    before_answer();
    say("{\"jsonrpc\":\"2.0\",\"id\":" + id.dump() + ",\"result\":" + result_text + "}");
  }

  void before_answer() {
    if (scenario_ == "deep_notification") {
      say("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":"
          "{\"level\":\"error\",\"data\":" + deep_arrays() + "}}");
    }
    if (scenario_ == "garbage_lines") {
      say("this is not json");
      say("{\"truncated\": ");
      say("\x01\x02 binary \xff\xfe noise");
      say("   ");
    } else if (scenario_ == "flood_stderr") {
      write_stderr_flood(1024 * 1024);
    }
  }

  void reply(const json& id, const json& result) {
    before_answer();
    say(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump());
  }

  void reply_error(const json& id, int code, const std::string& message) {
    before_answer();
    say(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}}
            .dump());
  }

  static json late_tool() {
    return {{"name", "late"},
            {"description", "Registered right after the first tools/list."},
            {"inputSchema", {{"type", "object"}}}};
  }

  std::string scenario_;
  long delay_ms_ = 0;
  bool late_tool_added_ = false;  // late_tool: after the first tools/list
};

int slow_cat() {
  char buf[4096];
  while (true) {
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    write_all(STDOUT_FILENO, std::string_view(buf, static_cast<std::size_t>(n)));
    ::usleep(200);
  }
}

int stderr_tail() {
  std::size_t written = 0;
  for (int i = 0; written < 200 * 1024; ++i) {
    std::string line = "stderr line " + std::to_string(i) + "\n";
    write_all(STDERR_FILENO, line);
    written += line.size();
  }
  complain("LAST LINE");
  return 1;
}

// burst_then_exit [N [WROTE_FILE]]: N bytes to stdout, then (when given) creates WROTE_FILE
// so a test knows the bytes are in the pipe, then exits.
int burst_then_exit(int argc, char** argv) {
  std::size_t total = argc > 0 ? std::strtoull(argv[0], nullptr, 10) : 262144;
  std::string out;
  out.reserve(total);
  for (std::size_t i = 0; i < total; ++i) out.push_back(static_cast<char>('a' + i % 26));
  write_all(STDOUT_FILENO, out);
  if (argc > 1) {
    const int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  return 0;
}

int grandchild_exit() {
  pid_t child = ::fork();
  if (child == 0) {
    // Keeps the inherited stdout/stderr open; only a signal ends it.
    sleep_forever();
  }
  say("grandchild " + std::to_string(child));
  return 5;
}

int stdout_close() {
  ::close(STDOUT_FILENO);
  complain("pid " + std::to_string(::getpid()));
  sleep_forever();
  return 0;
}

int print_env(int argc, char** argv) {
  json env = json::object();
  for (int i = 0; i < argc; ++i) {
    const char* v = std::getenv(argv[i]);
    env[argv[i]] = v ? json(v) : json(nullptr);
  }
  char cwd[4096];
  json out = {{"cwd", ::getcwd(cwd, sizeof cwd) ? json(cwd) : json(nullptr)},
              {"pid", ::getpid()},
              {"pgid", ::getpgid(0)},
              {"env", env}};
  say(out.dump());
  return 0;
}

}  // namespace

int run_scripted_server(const char* scenario, int argc, char** argv) {
  const std::string s = scenario;
  if (s == "crash_at_start") {
    complain("scripted server: cannot open the database (crash_at_start)");
    return 3;
  }
  if (s == "slow_cat") return slow_cat();
  if (s == "stderr_tail") return stderr_tail();
  if (s == "burst_then_exit") return burst_then_exit(argc, argv);
  if (s == "grandchild_exit") return grandchild_exit();
  if (s == "stdout_close") return stdout_close();
  if (s == "print_env") return print_env(argc, argv);
  if (s == "slow_initialize") {
    return McpServer(s, argc > 0 ? std::strtol(argv[0], nullptr, 10) : 1000).run();
  }
  if (s == "ok" || s == "hang_initialize" || s == "garbage_lines" || s == "huge_line" ||
      s == "flood_stderr" || s == "exit_mid_call" || s == "ignore_stdin_close" ||
      s == "ignore_sigterm" || s == "deep_tools_list" || s == "deep_call_result" ||
      s == "deep_notification" || s == "invalid_utf8_tools_list" || s == "hang_call" || s == "late_tool") {
    return McpServer(s).run();
  }
  complain("scripted server: unknown scenario \"" + s + "\"");
  return 64;
}

}  // namespace mcprt::native::test
