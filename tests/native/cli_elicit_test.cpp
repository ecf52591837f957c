// The CLI's elicitation handler end to end (SPEC §15; platform-native/cli/cli_elicit.hpp):
// the real `mcprt call` against the demo server's ask_name (an elicitation form
// {name: string default "World", excited: boolean default false}), driven on a
// pseudo-terminal as a user would answer it, without a terminal (declined, with the hint),
// and with --elicit=accept-defaults / decline. A hostile server (this test binary, see
// HostileElicitServer below) checks that nothing the server sends acts on the terminal and
// drives the URL-mode consent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "mcprt/result.hpp"
#include "native_test_support.hpp"
#include "terminal_session.hpp"

namespace mcprt {
namespace cli_elicit_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using native::test::MeasuredRun;
using native::test::RunOptions;
using native::test::run_measured;
using ::testing::HasSubstr;
using ::testing::Not;

// --- a hostile stdio server -----------------------------------------------------------------
// This binary doubles as it when started with MCPRT_CLI_ELICIT_TEST_SERVER in its
// environment (the config's `env`): before main, a static object serves newline-delimited
// JSON-RPC on stdin/stdout and exits. It speaks 2025-11-25 (anything but initialize,
// tools/list, tools/call and ping gets -32601, so a 2026 probe falls back) and has two tools:
//   evil_form  sends an elicitation/create form whose message, titles, descriptions, enum
//              values carry escape sequences (OSC title, clear screen, CSI as a C1 byte, a
//              bidi override), then answers "action=<action> content=<json>" (the JSON
//              ASCII-escaped: the tool's own text is printed as it is)
//   open_page  sends a URL-mode elicitation whose URL has an ESC inside, then answers
//              "action=<action>"
constexpr const char kServerEnv[] = "MCPRT_CLI_ELICIT_TEST_SERVER";
constexpr const char kEvil[] = "\x1b]0;pwned\x07\x1b[2J\xc2\x9b" "31m evil \xe2\x80\xae reversed";

void send_line(const json& message) {
  std::string line = message.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

int serve_hostile() {
  json call_id;      // the tools/call waiting for the elicitation's answer
  std::string tool;  // its tool
  std::string line;
  while (std::getline(std::cin, line)) {
    json m = json::parse(line, nullptr, false);
    if (!m.is_object()) continue;
    const std::string method = m.value("method", "");
    if (method.empty() && m.contains("id") && m["id"] == "elicit-1") {  // the answer
      const json& r = m.contains("result") ? m["result"] : json::object();
      std::string text = "action=" + r.value("action", std::string("?"));
      if (tool == "evil_form") text += " content=" + (r.contains("content") ? r["content"].dump(-1, ' ', true) : "none");
      send_line({{"jsonrpc", "2.0"}, {"id", call_id},
                 {"result", {{"content", {{{"type", "text"}, {"text", text}}}}}}});
      continue;
    }
    if (!m.contains("id")) continue;  // notifications
    const json id = m["id"];
    if (method == "initialize") {
      send_line({{"jsonrpc", "2.0"}, {"id", id},
                 {"result", {{"protocolVersion", "2025-11-25"},
                             {"capabilities", {{"tools", json::object()}}},
                             {"serverInfo", {{"name", "hostile-elicit"}, {"version", "1"}}}}}});
    } else if (method == "ping") {
      send_line({{"jsonrpc", "2.0"}, {"id", id}, {"result", json::object()}});
    } else if (method == "tools/list") {
      json schema = {{"type", "object"}, {"properties", json::object()}};
      send_line({{"jsonrpc", "2.0"}, {"id", id},
                 {"result", {{"tools", {{{"name", "evil_form"}, {"inputSchema", schema}},
                                        {{"name", "open_page"}, {"inputSchema", schema}}}}}}});
    } else if (method == "tools/call") {
      call_id = id;
      tool = m["params"].value("name", "");
      json params;
      if (tool == "evil_form") {
        params = {{"message", std::string("Pick one ") + kEvil},
                  {"requestedSchema",
                   {{"type", "object"},
                    {"properties",
                     {{"color", {{"type", "string"},
                                 {"title", std::string("Colour ") + kEvil},
                                 {"description", std::string("desc ") + kEvil},
                                 {"enum", {std::string("red") + kEvil, "blue"}},
                                 {"default", "blue"}}}}}}}};
      } else {
        params = {{"mode", "url"}, {"elicitationId", "e-1"},
                  {"message", std::string("Open this ") + kEvil},
                  {"url", "https://example.com/pay\x1b[2Jnow?x=1"}};
      }
      send_line({{"jsonrpc", "2.0"}, {"id", "elicit-1"}, {"method", "elicitation/create"},
                 {"params", params}});
    } else {
      send_line({{"jsonrpc", "2.0"}, {"id", id},
                 {"error", {{"code", -32601}, {"message", "Method not found: " + method}}}});
    }
  }
  return 0;
}

struct HostileElicitServer {
  HostileElicitServer() {
    if (std::getenv(kServerEnv) != nullptr) {
      std::fflush(stdout);
      std::_Exit(serve_hostile());
    }
  }
};
const HostileElicitServer kHostileServer;

// --- the fixture ----------------------------------------------------------------------------

struct TerminalRun {
  int exit_code = -1;
  std::string raw;    // every byte the terminal received
  std::string plain;  // without carriage returns and CSI sequences (what the user reads)
  std::size_t prompts = 0;
};

class CliElicit : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-cli-elicit-" + std::to_string(rd()));
    fs::create_directories(home_);
    // The demo server with its test tools (any --protocol lists them).
    write_config({{"demo", {{"command", MCPRT_DEMO_SERVER}, {"args", {"--protocol", "legacy"}}}},
                  {"evil", {{"command", native::test::self_exe()},
                            {"env", {{kServerEnv, "1"}}}}}});
  }
  void TearDown() override { fs::remove_all(home_); }

  void write_config(const json& servers) {
    std::ofstream(home_ / "mcp.json") << json{{"mcpServers", servers}}.dump(2);
  }

  std::vector<std::string> argv(const std::vector<std::string>& args) const {
    std::vector<std::string> out = {MCPRT_CLI, "--config", (home_ / "mcp.json").string(), "--no-cache"};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

  RunOptions options() const {
    RunOptions o;
    o.cwd = home_.string();
    o.env = {{"HOME", home_.string()}, {"XDG_CONFIG_HOME", (home_ / "config").string()},
             {"XDG_DATA_HOME", (home_ / "data").string()}};
    o.unset_env = {"DISPLAY", "WAYLAND_DISPLAY", "MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL"};
    o.timeout = Millis(60000);
    return o;
  }

  MeasuredRun run(const std::vector<std::string>& args) {
    MeasuredRun r = run_measured(argv(args), options());
    EXPECT_FALSE(r.timed_out);
    EXPECT_TRUE(r.leftovers.empty()) << "the CLI left processes behind";
    return r;
  }

  // Runs the CLI on a pseudo-terminal (stdin, stdout and stderr). Each time one more
  // prompt (a line ending in "> ") has appeared, the next of `answers` is typed ("\x04"
  // alone is Ctrl-D: end of input). Bounded by 60 s a step; the child is always reaped.
  TerminalRun run_on_terminal(const std::vector<std::string>& args, const std::vector<std::string>& answers) {
    TerminalRun r;
    RunOptions o = options();
    native::test::TerminalSession term(
        argv(args), {.cwd = home_.string(), .env = o.env, .unset_env = o.unset_env});
    if (!term.started()) {
      ADD_FAILURE() << "forkpty: " << std::strerror(errno);
      return r;
    }
    std::size_t typed = 0;
    while (typed < answers.size() &&
           term.wait_for([&](const std::string& raw) { return count_prompts(raw) > typed; },
                         std::chrono::seconds(60))) {
      std::string text = answers[typed++];
      if (text != "\x04") text += "\n";
      term.type(text);
    }
    r.exit_code = term.finish(std::chrono::seconds(60));
    EXPECT_NE(r.exit_code, -1) << "the CLI did not finish within 60 s; it printed:\n" << term.raw();
    r.raw = term.raw();
    r.plain = term.plain();
    r.prompts = count_prompts(r.raw);
    return r;
  }

  static std::size_t count_prompts(const std::string& text) {
    std::size_t n = 0;
    for (auto at = text.find("> "); at != std::string::npos; at = text.find("> ", at + 1)) ++n;
    return n;
  }

  fs::path home_;
};

const std::vector<std::string> kAskName = {"call", "mcp_demo_ask_name"};

// The properties come in name order: excited (boolean), then name (string).
TEST_F(CliElicit, Terminal_TypedAnswers_ReachTheServer) {
  TerminalRun r = run_on_terminal(kAskName, {"y", "Ada", "a"});
  EXPECT_EQ(r.exit_code, 0) << r.plain;
  EXPECT_THAT(r.plain, HasSubstr("Hello, Ada!!"));
  // Which server asks, its fields with type, default and the y/n form, then the summary.
  EXPECT_THAT(r.plain, HasSubstr("server \"demo\" asks for input"));
  EXPECT_THAT(r.plain, HasSubstr("excited (y/n) [n] > "));
  EXPECT_THAT(r.plain, HasSubstr("name [World] > "));
  EXPECT_THAT(r.plain, HasSubstr("(string"));
  EXPECT_THAT(r.plain, HasSubstr("(boolean"));
  EXPECT_THAT(r.plain, HasSubstr("  name: Ada\n"));
  EXPECT_THAT(r.plain, HasSubstr("  excited: true\n"));
  EXPECT_EQ(r.prompts, 3u);
}

TEST_F(CliElicit, Terminal_EmptyAnswers_TakeTheDefaults) {
  TerminalRun r = run_on_terminal(kAskName, {"", "", ""});
  EXPECT_EQ(r.exit_code, 0) << r.plain;
  EXPECT_THAT(r.plain, HasSubstr("Hello, World!"));
  EXPECT_THAT(r.plain, Not(HasSubstr("Hello, World!!")));
  EXPECT_THAT(r.plain, HasSubstr("  name: World\n"));
  EXPECT_THAT(r.plain, HasSubstr("  excited: false\n"));
}

TEST_F(CliElicit, Terminal_Decline) {
  TerminalRun r = run_on_terminal(kAskName, {"", "Ada", "d"});
  EXPECT_THAT(r.plain, HasSubstr("No name given (declined)."));
  EXPECT_THAT(r.plain, Not(HasSubstr("Hello")));
}

TEST_F(CliElicit, Terminal_CancelAtTheLastQuestion) {
  TerminalRun r = run_on_terminal(kAskName, {"", "Ada", "c"});
  EXPECT_THAT(r.plain, HasSubstr("No name given (cancelled)."));
}

TEST_F(CliElicit, Terminal_CtrlD_Cancels) {
  TerminalRun r = run_on_terminal(kAskName, {"\x04"});
  EXPECT_THAT(r.plain, HasSubstr("No name given (cancelled)."));
  EXPECT_THAT(r.plain, HasSubstr("cancelled; nothing was sent to \"demo\""));
  EXPECT_EQ(r.prompts, 1u) << "Ctrl-D ends the form at once";
}

TEST_F(CliElicit, Terminal_BadBoolean_IsAskedAgain) {
  TerminalRun r = run_on_terminal(kAskName, {"maybe", "n", "Bo", "a"});
  EXPECT_EQ(r.exit_code, 0) << r.plain;
  EXPECT_THAT(r.plain, HasSubstr("answer y or n"));
  EXPECT_THAT(r.plain, HasSubstr("Hello, Bo!"));
  EXPECT_THAT(r.plain, Not(HasSubstr("Hello, Bo!!")));
}

TEST_F(CliElicit, Terminal_EndlessBadAnswers_CancelAfterTheBound) {
  TerminalRun r = run_on_terminal(kAskName, {"x", "x", "x", "x", "x", "x", "x", "x"});
  EXPECT_THAT(r.plain, HasSubstr("No name given (cancelled)."));
  EXPECT_THAT(r.plain, HasSubstr("after 5 tries; cancelled"));
  EXPECT_EQ(r.prompts, 5u);
}

TEST_F(CliElicit, Terminal_DeclineFlag_NeverAsks) {
  TerminalRun r = run_on_terminal({"--elicit=decline", "call", "mcp_demo_ask_name"}, {});
  EXPECT_THAT(r.plain, HasSubstr("No name given (declined)."));
  EXPECT_THAT(r.plain, Not(HasSubstr("asks for input")));
  EXPECT_EQ(r.prompts, 0u);
}

TEST_F(CliElicit, NotATerminal_Declines_AndSaysHowToAllow) {
  MeasuredRun r = run(kAskName);
  EXPECT_THAT(r.out, HasSubstr("No name given (declined)."));
  EXPECT_THAT(r.err, HasSubstr("server \"demo\" asked for input"));
  EXPECT_THAT(r.err, HasSubstr("not both a terminal"));
  EXPECT_THAT(r.err, HasSubstr("--elicit=accept-defaults"));
}

TEST_F(CliElicit, AcceptDefaultsFlag_AnswersWithTheSchemaDefaults) {
  MeasuredRun r = run({"--elicit=accept-defaults", "call", "mcp_demo_ask_name"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Hello, World!\n");
  EXPECT_THAT(r.err, Not(HasSubstr("declined")));
}

TEST_F(CliElicit, UnknownElicitPolicy_IsAUsageError) {
  MeasuredRun r = run({"--elicit=always", "call", "mcp_demo_ask_name"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--elicit"));
}

TEST_F(CliElicit, HostileForm_NoControlSequenceReachesTheTerminal) {
  TerminalRun r = run_on_terminal({"call", "mcp_evil_evil_form"}, {"1", "a"});
  // The text arrives, its controls do not: no OSC (window title), no clear-screen, no C1
  // CSI, no right-to-left override, from the message, the title, the description or a choice.
  EXPECT_THAT(r.plain, HasSubstr("Pick one ]0;pwned[2J31m evil  reversed"));
  EXPECT_THAT(r.plain, HasSubstr("Colour ]0;pwned"));
  EXPECT_THAT(r.plain, HasSubstr("desc ]0;pwned"));
  EXPECT_THAT(r.raw, Not(HasSubstr("\x1b]0;")));
  EXPECT_THAT(r.raw, Not(HasSubstr("\x1b[2J")));
  EXPECT_THAT(r.raw, Not(HasSubstr("\xc2\x9b")));
  EXPECT_THAT(r.raw, Not(HasSubstr("\xe2\x80\xae")));
  EXPECT_THAT(r.raw, Not(HasSubstr("\x07")));
  // Choice 1 is sent as the server wrote it (the value, not its shown form).
  json sent = {{"color", std::string("red") + kEvil}};
  EXPECT_THAT(r.plain, HasSubstr("action=accept content=" + sent.dump(-1, ' ', true)));
}

TEST_F(CliElicit, UrlMode_ShowsTheUrl_AndAcceptsOnlyWithConsent) {
  TerminalRun yes = run_on_terminal({"call", "mcp_evil_open_page"}, {"y"});
  EXPECT_THAT(yes.plain, HasSubstr("server \"evil\" asks you to open a web page"));
  // The full URL in its serialized form: the ESC inside is percent-encoded.
  EXPECT_THAT(yes.plain, HasSubstr("URL:  https://example.com/pay%1B[2Jnow?x=1"));
  EXPECT_THAT(yes.plain, HasSubstr("Site: https://example.com"));
  EXPECT_THAT(yes.raw, Not(HasSubstr("\x1b[2J")));
  // No display in the test: the page is only printed, and the answer is accept.
  EXPECT_THAT(yes.plain, HasSubstr("no display"));
  EXPECT_THAT(yes.plain, HasSubstr("action=accept"));

  TerminalRun no = run_on_terminal({"call", "mcp_evil_open_page"}, {""});
  EXPECT_THAT(no.plain, HasSubstr("the page was not opened"));
  EXPECT_THAT(no.plain, HasSubstr("action=decline"));

  TerminalRun eof = run_on_terminal({"call", "mcp_evil_open_page"}, {"\x04"});
  EXPECT_THAT(eof.plain, HasSubstr("action=cancel"));
}

TEST_F(CliElicit, UrlMode_AcceptDefaultsFlag_Declines) {
  MeasuredRun r = run({"--elicit=accept-defaults", "call", "mcp_evil_open_page"});
  EXPECT_THAT(r.out, HasSubstr("action=decline"));
}

}  // namespace
}  // namespace cli_elicit_test
}  // namespace mcprt
