// `mcprt resources`, `read`, `prompts`, `prompt` and the REPL's `/mcp prompt` end to end
// (SPEC §15): the real CLI binary against the demo server over stdio and Streamable HTTP,
// and against the real npm @modelcontextprotocol/server-everything over stdio and
// Streamable HTTP (kept on 127.0.0.1 by tests/fixtures/loopback.mjs). Then a resource
// subscription through the manager: demo://ticker updates arrive, also after the server
// was killed and the manager reconnected it.
//
// Every wait is bounded only as a safety net against a broken build; no assertion depends
// on how long anything takes.
//
// (Named resources_cli_test, not cli_resources_test: a second new source sorted before
// native_logger_test.cpp puts it in one unity batch after native_file_store_test.cpp, whose
// mcprt::testing makes its unqualified `testing::internal` ambiguous.)

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_demo_server.hpp"
#include "mcprt/config.hpp"
#include "mcprt/manager.hpp"
#include "mcprt/native/file_store.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "native_test_support.hpp"

namespace mcprt::native::test {
namespace resources_cli_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout (and stderr when the command redirects it)
  json doc;         // `out` as JSON (discarded when it is not JSON)
};

std::string everything_script() {
  return std::string(MCPRT_SOURCE_DIR) + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
}

bool have_everything() {
  struct stat st {};
  return ::stat(everything_script().c_str(), &st) == 0;
}

std::set<std::string> members(const json& rows, const char* key) {
  std::set<std::string> out;
  if (!rows.is_array()) return out;
  for (const auto& r : rows) {
    if (r.is_object() && r.contains(key) && r[key].is_string()) out.insert(r[key].get<std::string>());
  }
  return out;
}

// A temporary HOME and a config file; the CLI runs with --config FILE.
class CliResources : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    home_ = fs::temp_directory_path() / ("mcprt-cli-resources-" + std::to_string(rd()));
    fs::create_directories(home_);
  }
  void TearDown() override { fs::remove_all(home_); }

  void write_config(const json& servers) {
    std::ofstream(home_ / "mcp.json") << json{{"mcpServers", servers}}.dump(2);
  }
  static json demo_stdio(std::vector<std::string> extra = {}) {
    json args = json::array({"--quiet"});
    for (auto& a : extra) args.push_back(a);
    return json{{"command", MCPRT_DEMO_SERVER}, {"args", args}};
  }

  // `mcprt --config <file> <args>` with HOME = the temp home; stdout captured.
  CliRun run(const std::string& args, const std::string& stdin_text = "") {
    std::string cmd = "cd '" + home_.string() + "' && env -u XDG_CONFIG_HOME -u XDG_CACHE_HOME -u MCPRT_TIMEOUT_MS HOME='" +
                      home_.string() + "' " + MCPRT_CLI + " --config '" + (home_ / "mcp.json").string() + "' " + args;
    if (!stdin_text.empty()) {
      std::ofstream(home_ / "stdin.txt") << stdin_text;
      cmd += " < '" + (home_ / "stdin.txt").string() + "'";
    } else {
      cmd += " < /dev/null";
    }
    CliRun r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf{};
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.doc = json::parse(r.out, nullptr, false);
    return r;
  }

  // The checks every demo-server transport must pass.
  void expect_demo_verbs() {
    CliRun res = run("resources --json");
    ASSERT_EQ(res.exit_code, 0) << res.out;
    EXPECT_EQ(members(res.doc["resources"], "uri"),
              (std::set<std::string>{"demo://logo.png", "demo://readme", "demo://ticker"}));
    EXPECT_EQ(members(res.doc["resourceTemplates"], "uriTemplate"), (std::set<std::string>{"demo://notes/{name}"}));
    EXPECT_EQ(members(res.doc["resources"], "server"), (std::set<std::string>{"demo"}));

    CliRun table = run("resources");
    EXPECT_EQ(table.exit_code, 0);
    EXPECT_THAT(table.out, HasSubstr("Resources (3):\n"));
    EXPECT_THAT(table.out, HasSubstr("demo  demo://readme    readme    text/markdown"));
    EXPECT_THAT(table.out, HasSubstr("Resource templates (1):\n  demo  demo://notes/{name}  note  text/plain"));

    CliRun prompts = run("prompts");
    EXPECT_EQ(prompts.exit_code, 0) << prompts.out;
    EXPECT_THAT(prompts.out, HasSubstr("demo  greet      <name> [style]"));
    EXPECT_THAT(prompts.out, HasSubstr("demo  summarize  <uri>"));

    CliRun readme = run("read demo://readme");
    EXPECT_EQ(readme.exit_code, 0);
    EXPECT_EQ(readme.out.rfind("# mcprt demo server\n", 0), 0u) << readme.out;
    CliRun logo = run("read demo://logo.png");
    EXPECT_EQ(logo.exit_code, 0);
    EXPECT_EQ(logo.out, "[binary image/png, 115 bytes]\n");
    CliRun note = run("read demo://notes/gamma");
    EXPECT_EQ(note.exit_code, 0);
    EXPECT_EQ(note.out.rfind("Note gamma: ", 0), 0u) << note.out;

    CliRun greet = run("prompt demo:greet --arg name=Ada --arg style=pirate");
    EXPECT_EQ(greet.exit_code, 0) << greet.out;
    EXPECT_EQ(greet.out, "A greeting for Ada\n\nuser:\n  Please greet Ada the way a pirate would.\n");
    CliRun summarize = run("prompt summarize --arg uri=demo://notes/alpha");
    EXPECT_EQ(summarize.exit_code, 0) << summarize.out;
    EXPECT_THAT(summarize.out, HasSubstr("user:\n  [resource demo://notes/alpha]\n  Note alpha: "));
  }

  fs::path home_;
};

// ---- the demo server ----------------------------------------------------------------------

TEST_F(CliResources, DemoOverStdio_ListsReadsAndRendersPrompts) {
  write_config({{"demo", demo_stdio()}});
  expect_demo_verbs();
}

TEST_F(CliResources, DemoOverHttp_ListsReadsAndRendersPrompts) {
  HttpDemoServer server({"--http", "0", "--quiet"});
  ASSERT_GT(server.port(), 0) << server.error();
  write_config({{"demo", {{"type", "http"}, {"url", "http://127.0.0.1:" + std::to_string(server.port()) + "/mcp"}}}});
  expect_demo_verbs();
}

TEST_F(CliResources, DemoOverModernHttp_ListsReadsAndRendersPrompts) {
  HttpDemoServer server({"--http", "0", "--protocol", "2026", "--quiet"});
  ASSERT_GT(server.port(), 0) << server.error();
  write_config({{"demo", {{"type", "http"}, {"url", "http://127.0.0.1:" + std::to_string(server.port()) + "/mcp"}}}});
  expect_demo_verbs();
}

TEST_F(CliResources, ReadOutWritesTheDecodedBlob) {
  write_config({{"demo", demo_stdio()}});
  const fs::path out = home_ / "logo.png";
  CliRun r = run("read demo://logo.png --out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "Wrote 115 bytes to " + out.string() + "\n");
  std::ifstream in(out, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.size(), 115u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_F(CliResources, ReadJsonPrintsTheRawResult) {
  write_config({{"demo", demo_stdio()}});
  CliRun r = run("read demo://notes/beta --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_TRUE(r.doc.is_object()) << r.out;
  EXPECT_EQ(r.doc["contents"][0]["uri"], "demo://notes/beta");
  EXPECT_EQ(r.doc["contents"][0]["mimeType"], "text/plain");
}

TEST_F(CliResources, ReadOfAUriNoServerListsIsAUsageError) {
  write_config({{"demo", demo_stdio()}});
  CliRun r = run("read demo://nowhere 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("no server lists the resource \"demo://nowhere\""));
}

TEST_F(CliResources, ReadThatTheServerRefusesFailsWithItsError) {
  write_config({{"demo", demo_stdio()}});
  // The template matches; the server has no such note.
  CliRun r = run("read demo://notes/zeta 2>&1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, HasSubstr("reading \"demo://notes/zeta\" from server \"demo\" failed"));
  EXPECT_THAT(r.out, HasSubstr("Resource not found: demo://notes/zeta"));
}

TEST_F(CliResources, ReadWithServerStartsOnlyThatServer) {
  // "broken" would fail the run if it were started.
  write_config({{"demo", demo_stdio()}, {"broken", {{"command", "/nonexistent/mcprt-no-such-server"}}}});
  CliRun r = run("read --server demo demo://readme 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("broken")));
  CliRun all = run("resources 2>&1");
  EXPECT_EQ(all.exit_code, 1) << "without a server name every server starts";
  EXPECT_THAT(all.out, HasSubstr("broken"));
  CliRun one = run("resources demo 2>&1");
  EXPECT_EQ(one.exit_code, 0) << one.out;
  CliRun prompt = run("prompt demo:greet --arg name=Bo 2>&1");
  EXPECT_EQ(prompt.exit_code, 0) << prompt.out;
  EXPECT_THAT(prompt.out, Not(HasSubstr("broken")));
}

TEST_F(CliResources, UnknownServerIsAUsageError) {
  write_config({{"demo", demo_stdio()}});
  CliRun r = run("prompts nope 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("unknown server \"nope\" (servers: demo)"));
}

TEST_F(CliResources, ABareNameTwoServersHaveIsAmbiguous) {
  // Different command lines: the same one twice would be one server (the other shadowed).
  write_config({{"demo", demo_stdio()}, {"demo2", demo_stdio({"--ticker-ms", "1000"})}});
  CliRun r = run("prompt greet --arg name=A 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.out, HasSubstr("Several servers have a prompt \"greet\"; name one: demo:greet, demo2:greet"));
  CliRun none = run("prompt nothing 2>&1");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.out, HasSubstr("No server has a prompt \"nothing\""));
  CliRun named = run("prompt demo2:greet --arg name=A");
  EXPECT_EQ(named.exit_code, 0) << named.out;
}

TEST_F(CliResources, PromptErrorsFromTheServerFail) {
  write_config({{"demo", demo_stdio()}});
  CliRun missing = run("prompt demo:greet 2>&1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.out, HasSubstr("the argument \"name\" is required"));
  CliRun bad_arg = run("prompt demo:greet --arg name 2>&1");
  EXPECT_EQ(bad_arg.exit_code, 2);
  EXPECT_THAT(bad_arg.out, HasSubstr("A prompt argument is <argument>=<value>; got \"name\""));
}

TEST_F(CliResources, ToolsJsonCarriesAnnotationsMarkedUntrusted) {
  write_config({{"demo", demo_stdio()}});
  CliRun r = run("tools --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  bool seen = false;
  for (const auto& t : r.doc["tools"]) {
    if (t["tool"] != "echo") continue;
    seen = true;
    EXPECT_EQ(t["annotations"], (json{{"readOnlyHint", true}, {"openWorldHint", false}}));
    EXPECT_EQ(t["annotationsTrusted"], false);
  }
  EXPECT_TRUE(seen) << r.out;
}

TEST_F(CliResources, ReplListsReadsAndRendersPrompts) {
  write_config({{"demo", demo_stdio()}});
  CliRun r = run("repl",
                 "/mcp resources\n/mcp prompts demo\n/mcp read demo://notes/beta\n/mcp read demo://none\n"
                 "/mcp help\n/mcp prompt demo:greet name=Cy style=formal\n/mcp prompt demo:greet name\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("Resources (3):\n  demo  demo://logo.png  logo.png  image/png"));
  EXPECT_THAT(r.out, HasSubstr("Resource templates (1):\n  demo  demo://notes/{name}  note  text/plain"));
  EXPECT_THAT(r.out, HasSubstr("Prompts of \"demo\" (2):\n  demo  greet      <name> [style]"));
  EXPECT_THAT(r.out, HasSubstr("\nNote beta: "));
  EXPECT_THAT(r.out, HasSubstr("No server offers the resource \"demo://none\""));
  EXPECT_THAT(r.out, HasSubstr("/mcp resources [server]"));
  EXPECT_THAT(r.out, HasSubstr("/mcp prompt <server>:<name> [key=value"));
  EXPECT_THAT(r.out, HasSubstr("user:\n  Please write a formal greeting for Cy.\n"));
  EXPECT_THAT(r.out, HasSubstr("A prompt argument is <argument>=<value>; got \"name\""));
}

// ---- @modelcontextprotocol/server-everything ------------------------------------------------

class CliResourcesEverything : public CliResources {
 protected:
  void SetUp() override {
    CliResources::SetUp();
    ASSERT_TRUE(have_everything()) << everything_script()
                                   << " is missing: install the npm dev dependencies first (scripts/bootstrap)";
  }
  void TearDown() override {
    node_.reset();
    CliResources::TearDown();
  }

  // server-everything in streamableHttp mode on a free loopback port; its URL.
  std::string start_http() {
    const int port = free_loopback_port();
    ProcessSpec spec;
    spec.command = "node";
    spec.args = {"--import", std::string(MCPRT_SOURCE_DIR) + "/tests/fixtures/loopback.mjs", everything_script(),
                 "streamableHttp"};
    spec.env["PORT"] = std::to_string(port);
    spec.label = "everything-http";
    auto stream = launcher_.launch(spec);
    if (!stream.ok()) {
      ADD_FAILURE() << stream.error();
      return {};
    }
    node_ = std::move(stream).value();
    ByteStreamHandlers handlers;
    handlers.on_data = [](std::string_view) {};
    handlers.on_closed = [this](const StreamClosed& c) { ended_ = c; };
    node_->start(std::move(handlers));
    if (!poll_until(ex_, [&] { return ended_.has_value() || loopback_port_accepts(port); }, Millis(30000)) || ended_) {
      ADD_FAILURE() << "server-everything did not open 127.0.0.1:" << port
                    << (ended_ ? "; it ended: " + ended_->error.message + " " + ended_->stderr_tail : std::string());
      return {};
    }
    return "http://127.0.0.1:" + std::to_string(port) + "/mcp";
  }

  // The done-when, against what the installed server-everything has: 7
  // resources, 2 templates, 4 prompts; a text and a blob read; args-prompt rendered.
  void expect_everything_verbs() {
    CliRun res = run("--no-cache resources --json");
    ASSERT_EQ(res.exit_code, 0) << res.out;
    EXPECT_EQ(res.doc["resources"].size(), 7u) << res.out;
    EXPECT_TRUE(members(res.doc["resources"], "uri").count("demo://resource/static/document/architecture.md"));
    EXPECT_EQ(members(res.doc["resourceTemplates"], "uriTemplate"),
              (std::set<std::string>{"demo://resource/dynamic/blob/{resourceId}",
                                     "demo://resource/dynamic/text/{resourceId}"}));
    CliRun prompts = run("--no-cache prompts --json");
    ASSERT_EQ(prompts.exit_code, 0) << prompts.out;
    EXPECT_EQ(members(prompts.doc["prompts"], "name"),
              (std::set<std::string>{"args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"}));

    CliRun text = run("--no-cache read demo://resource/dynamic/text/2");
    EXPECT_EQ(text.exit_code, 0) << text.out;
    EXPECT_EQ(text.out.rfind("Resource 2: ", 0), 0u) << text.out;
    CliRun doc = run("--no-cache read demo://resource/static/document/architecture.md");
    EXPECT_EQ(doc.exit_code, 0) << doc.out;
    EXPECT_THAT(doc.out, HasSubstr("Architecture"));
    CliRun blob = run("--no-cache read demo://resource/dynamic/blob/3");
    EXPECT_EQ(blob.exit_code, 0) << blob.out;
    EXPECT_THAT(blob.out, ::testing::MatchesRegex("\\[binary [a-z/-]+, [0-9]+ bytes\\]\n"));

    CliRun args = run("--no-cache prompt args-prompt --arg city=Paris --arg state=Ile-de-France");
    EXPECT_EQ(args.exit_code, 0) << args.out;
    EXPECT_THAT(args.out, HasSubstr("user:\n  "));
    EXPECT_THAT(args.out, HasSubstr("Paris"));
    EXPECT_THAT(args.out, HasSubstr("Ile-de-France"));
  }

  NativeExecutor ex_;
  CapturingLogger log_;
  NativeProcessLauncher launcher_{ex_, &log_, fast_options()};
  std::unique_ptr<ByteStream> node_;
  std::optional<StreamClosed> ended_;
};

TEST_F(CliResourcesEverything, OverStdio) {
  write_config({{"everything", {{"command", "node"}, {"args", {everything_script(), "stdio"}}}}});
  expect_everything_verbs();
}

TEST_F(CliResourcesEverything, OverStreamableHttp) {
  const std::string url = start_http();
  ASSERT_FALSE(url.empty());
  write_config({{"everything", {{"type", "http"}, {"url", url}}}});
  expect_everything_verbs();
}

// ---- a subscription through the manager ---------------------------------------------------

class ManagerSubscription : public ::testing::Test {
 protected:
  ~ManagerSubscription() override {
    std::error_code ec;
    if (!cache_dir_.empty()) fs::remove_all(cache_dir_, ec);
  }
  static std::string make_dir() {
    std::string templ = (fs::temp_directory_path() / "mcprt-subscription-XXXXXX").string();
    return ::mkdtemp(templ.data()) ? templ : std::string();
  }
  ManagerServices services() {
    ManagerServices s;
    s.executor = &ex_;
    s.process_launcher = &launcher_;
    s.logger = &log_;
    s.cache_store = &store_;
    return s;
  }
  static ServerConfig demo_config() {
    auto parsed = parse_server_entry("demo", {{"command", MCPRT_DEMO_SERVER}, {"args", {"--quiet", "--ticker-ms", "50"}}});
    EXPECT_TRUE(parsed.ok()) << parsed.error();
    return parsed.ok() ? parsed.value() : ServerConfig{};
  }

  NativeExecutor ex_;
  CapturingLogger log_;
  NativeProcessLauncher launcher_{ex_, &log_, fast_options()};
  std::string cache_dir_ = make_dir();
  NativeFileStore store_{cache_dir_, ex_};
};

TEST_F(ManagerSubscription, TickerUpdatesArriveAndSurviveAReconnect) {
  McpManager m(services(), ManagerOptions{});
  std::optional<GateResult> gate;
  m.connect_servers({demo_config()}, [&](GateResult r) { gate = std::move(r); });
  ASSERT_TRUE(pump_until(ex_, [&] { return gate.has_value(); }));
  ASSERT_EQ(m.connection_status("demo"), ConnectionStatus::connected);

  std::vector<json> updates;
  std::optional<Status> subscribed;
  const auto id = m.subscribe_resource(
      "demo", "demo://ticker", [&](const json& params) { updates.push_back(params); },
      [&](Status s) { subscribed = std::move(s); });
  ASSERT_TRUE(pump_until(ex_, [&] { return subscribed.has_value(); }));
  ASSERT_TRUE(subscribed->ok()) << subscribed->error();
  ASSERT_TRUE(pump_until(ex_, [&] { return !updates.empty(); }, Millis(10000))) << "no update arrived";
  EXPECT_EQ(updates.front()["uri"], "demo://ticker");

  // Kill the server: the manager reconnects it and subscribes again.
  auto children = children_of_self();
  ASSERT_EQ(children.size(), 1u);
  ASSERT_EQ(::kill(children[0].pid, SIGKILL), 0);
  ASSERT_TRUE(pump_until(ex_, [&] { return m.connection_status("demo") != ConnectionStatus::connected; }));
  ASSERT_TRUE(pump_until(ex_, [&] { return m.connection_status("demo") == ConnectionStatus::connected; }));
  updates.clear();
  ASSERT_TRUE(pump_until(ex_, [&] { return !updates.empty(); }, Millis(10000)))
      << "no update after the reconnect: the subscription was not renewed";
  EXPECT_EQ(updates.front()["uri"], "demo://ticker");

  // Ended; the resource still reads through the manager.
  m.unsubscribe_resource(id);
  std::optional<Result<json>> read;
  m.read_resource("demo", "demo://ticker", CallOptions{}, [&](Result<json> r) { read = std::move(r); });
  ASSERT_TRUE(pump_until(ex_, [&] { return read.has_value(); }));
  ASSERT_TRUE(read->ok()) << read->error();
  EXPECT_EQ(read->value()["contents"][0]["text"].get<std::string>().rfind("tick ", 0), 0u);

  bool done = false;
  m.disconnect_all([&] { done = true; });
  EXPECT_TRUE(pump_until(ex_, [&] { return done; }));
}

}  // namespace
}  // namespace resources_cli_test
}  // namespace mcprt::native::test
