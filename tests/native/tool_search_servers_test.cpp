// Tool search with twelve real servers (issue 15's "done when", SPEC §16): a NativeHost with
// tool search on and twelve entries from the npm dev dependencies and the demo server —
// server-everything over stdio, Streamable HTTP and SSE; server-filesystem twice (two
// roots); server-memory; server-sequential-thinking; @playwright/mcp (headless, the system
// Chromium, no browser download); @upstash/context7-mcp (lists its tools without the
// network); the demo server over stdio, over HTTP and over stdio with the legacy protocol.
// sequential-thinking has alwaysLoad. The model's view: the registry holds mcp_tool_search and the
// always-load server's tools while the rest are deferred; mcp_tool_search with a task finds the
// right tool first and loads it; the loaded tool works; select: loads two names at once.
//
// Every server stays on this machine: the stdio servers run in `unshare -n` with only
// loopback up where that is allowed (root), else with tests/fixtures/loopback.mjs
// preloaded; the HTTP servers listen on 127.0.0.1 (the preload binds their bare ports
// there). Prints the token counts the closing note of issue 15 quotes.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mcprt/native/host.hpp"
#include "mcprt/session.hpp"
#include "mcprt/tool_search.hpp"
#include "native_test_support.hpp"

extern char** environ;

namespace mcprt {
namespace tool_search_servers_test {
namespace {

namespace fs = std::filesystem;
using native::test::free_loopback_port;
using native::test::loopback_port_accepts;
using ::testing::HasSubstr;

const std::string& source_root() {
  static const std::string root = MCPRT_SOURCE_DIR;
  return root;
}
std::string package_file(const std::string& package, const std::string& file) {
  return source_root() + "/node_modules/" + package + "/" + file;
}

// Whether `unshare -n` works here (root, or user namespaces allowed): then a stdio server
// runs in a network namespace of its own with only loopback up.
bool can_unshare_network() {
  static const bool can = std::system("unshare -n sh -c 'ip link set lo up' >/dev/null 2>&1") == 0;
  return can;
}

// The config entry of a node script run over stdio, kept off the network.
json node_stdio_entry(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"node"};
  if (!can_unshare_network()) {
    argv.push_back("--import");
    argv.push_back(source_root() + "/tests/fixtures/loopback.mjs");
  }
  argv.push_back(script);
  argv.insert(argv.end(), args.begin(), args.end());
  if (!can_unshare_network()) {
    json entry = {{"command", argv.front()},
                  {"args", json(std::vector<std::string>(argv.begin() + 1, argv.end()))}};
    return entry;
  }
  std::string line = "ip link set lo up && exec";
  for (const auto& a : argv) {
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += " " + quoted + "'";
  }
  return {{"command", "unshare"}, {"args", {"-n", "sh", "-c", line}}};
}

// A server the test starts itself (the HTTP ones): stdout and stderr go to `log`; the
// destructor kills and reaps it.
class ServerProcess {
 public:
  ServerProcess(std::vector<std::string> argv, std::vector<std::string> env_extra,
                const std::string& log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
    env.insert(env.end(), env_extra.begin(), env_extra.end());
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      error_ = "posix_spawn " + argv[0] + ": " + std::strerror(rc);
    }
  }
  ~ServerProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& error() const { return error_; }
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }

 private:
  pid_t pid_ = -1;
  std::string error_;
};

std::string read_text(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

class ToolSearchServers : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [package, file] : std::vector<std::pair<std::string, std::string>>{
             {"@modelcontextprotocol/server-everything", "dist/index.js"},
             {"@modelcontextprotocol/server-filesystem", "dist/index.js"},
             {"@modelcontextprotocol/server-memory", "dist/index.js"},
             {"@modelcontextprotocol/server-sequential-thinking", "dist/index.js"},
             {"@playwright/mcp", "cli.js"},
             {"@upstash/context7-mcp", "dist/index.js"}}) {
      struct stat st {};
      ASSERT_EQ(::stat(package_file(package, file).c_str(), &st), 0)
          << package_file(package, file) << " is missing: install the npm dev dependencies first "
          << "(scripts/bootstrap, or `npm ci` in " << source_root() << ")";
    }
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("mcprt-tool-search-" + std::to_string(rd()));
    fs::create_directories(root_ / "files");
    fs::create_directories(root_ / "notes");
  }
  void TearDown() override {
    if (host_) host_->shutdown();
    host_.reset();
    http_servers_.clear();
    fs::remove_all(root_);
  }

  // Starts `argv` (listening on 127.0.0.1:`port`) and waits until the port accepts.
  void start_http(const std::string& label, std::vector<std::string> argv, int port) {
    const fs::path log = root_ / (label + ".log");
    auto server = std::make_unique<ServerProcess>(
        std::move(argv), std::vector<std::string>{"PORT=" + std::to_string(port)}, log.string());
    ASSERT_EQ(server->error(), "");
    // A bounded wait for a process outside any loop; a safety net, not a timing assertion.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!loopback_port_accepts(port)) {
      ASSERT_TRUE(server->running()) << label << " ended: " << read_text(log);
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << label << " did not open 127.0.0.1:" << port << "; its log: " << read_text(log);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    http_servers_.push_back(std::move(server));
  }

  // The twelve entries (the HTTP servers are started here).
  json twelve_servers() {
    const std::string everything =
        package_file("@modelcontextprotocol/server-everything", "dist/index.js");
    const std::string loopback = source_root() + "/tests/fixtures/loopback.mjs";
    const int everything_http = free_loopback_port();
    start_http("everything-http", {"node", "--import", loopback, everything, "streamableHttp"},
               everything_http);
    const int everything_sse = free_loopback_port();
    start_http("everything-sse", {"node", "--import", loopback, everything, "sse"}, everything_sse);
    const int demo_http = free_loopback_port();
    start_http("demo-http", {MCPRT_DEMO_SERVER, "--http", std::to_string(demo_http)}, demo_http);
    if (HasFatalFailure()) return {};

    auto url = [](int port, const char* path) {
      return "http://127.0.0.1:" + std::to_string(port) + path;
    };
    json servers = json::object();
    servers["everything"] = node_stdio_entry(everything, {"stdio"});
    servers["everything-http"] = {{"type", "http"}, {"url", url(everything_http, "/mcp")}};
    servers["everything-sse"] = {{"type", "sse"}, {"url", url(everything_sse, "/sse")}};
    servers["filesystem"] =
        node_stdio_entry(package_file("@modelcontextprotocol/server-filesystem", "dist/index.js"),
                         {(root_ / "files").string()});
    servers["filesystem"]["roots"] = {(root_ / "files").string()};
    servers["notes"] =
        node_stdio_entry(package_file("@modelcontextprotocol/server-filesystem", "dist/index.js"),
                         {(root_ / "notes").string()});
    servers["notes"]["roots"] = {(root_ / "notes").string()};
    servers["memory"] =
        node_stdio_entry(package_file("@modelcontextprotocol/server-memory", "dist/index.js"), {});
    servers["memory"]["env"] = {{"MEMORY_FILE_PATH", (root_ / "memory.jsonl").string()}};
    servers["sequential-thinking"] = node_stdio_entry(
        package_file("@modelcontextprotocol/server-sequential-thinking", "dist/index.js"), {});
    servers["sequential-thinking"]["alwaysLoad"] = true;
    servers["playwright"] = node_stdio_entry(
        package_file("@playwright/mcp", "cli.js"),
        {"--headless", "--isolated", "--no-sandbox", "--executable-path", "/usr/bin/chromium"});
    servers["context7"] = node_stdio_entry(package_file("@upstash/context7-mcp", "dist/index.js"),
                                           {"--transport", "stdio"});
    servers["demo"] = {{"command", MCPRT_DEMO_SERVER}};
    servers["demo-http"] = {{"type", "http"}, {"url", url(demo_http, "/mcp")}};
    servers["demo-legacy"] = {{"command", MCPRT_DEMO_SERVER}, {"args", {"--protocol", "legacy"}}};
    for (auto& [name, entry] : servers.items()) entry["timeout"] = 60000;
    return servers;
  }

  // Calls a tool through the registry, as the model would, to its end.
  ToolResult call(const std::string& name, json args) {
    auto r = host_->call(name, std::move(args));
    EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error().message);
    return r.ok() ? r.value() : ToolResult{};
  }

  bool registered(const std::string& name) const { return host_->registry().contains(name); }

  // A /mcp line, run to its answer.
  std::string command(const std::string& line) {
    std::optional<std::string> out;
    host_->commands().execute(line, [&out](std::string text) { out = std::move(text); });
    host_->run_until([&] { return out.has_value(); }, Millis(20000));
    return out.value_or("(no answer)");
  }

  fs::path root_;
  std::vector<std::unique_ptr<ServerProcess>> http_servers_;
  std::unique_ptr<native::NativeHost> host_;
};

TEST_F(ToolSearchServers, TwelveServers_ToolsDeferredBehindSearch_SearchLoadsAndCallsTheRightOnes) {
  const json servers = twelve_servers();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(servers.size(), 12u);
  const fs::path config = root_ / "mcp.json";
  std::ofstream(config) << json{{"mcpServers", servers}}.dump(2);

  native::NativeHostOptions options;
  options.cwd = root_.string();
  options.config_file = config.string();
  options.use_cache = false;
  options.log.level = LogLevel::error;
  options.log.read_env = false;
  options.resource_tools.mode =
      ResourceToolsMode::never;  // the registry: MCP tools and the meta-tool
  options.tool_search.mode = ToolSearchMode::on;
  host_ = std::make_unique<native::NativeHost>(std::move(options));
  const LoadResult loaded = host_->load(Millis(120000));
  for (const auto& e : loaded.errors) ADD_FAILURE() << e.path << ": " << e.error;
  auto manager = host_->manager();
  ASSERT_NE(manager, nullptr);
  // Every entry connected (a late one would still be searchable from its cached tools,
  // but this test has no cache: each must have listed its tools).
  host_->run_until(
      [&] {
        for (const auto& st : manager->server_states()) {
          if (st.phase == ServerPhase::connecting) return false;
        }
        return true;
      },
      Millis(60000));
  std::set<std::string> servers_with_tools;
  for (const auto& st : manager->server_states()) {
    EXPECT_EQ(st.phase, ServerPhase::connected)
        << st.name << ": " << (st.last_error ? st.last_error->message : std::string("no error"));
    if (st.tool_count > 0) servers_with_tools.insert(st.name);
  }
  EXPECT_EQ(servers_with_tools.size(), 12u);

  McpSession& session = host_->session();
  ASSERT_TRUE(session.tool_search_active());
  const std::vector<ToolCatalogEntry> catalog = session.catalog();
  std::size_t deferred = 0;
  std::set<std::string> loaded_at_start;
  for (const auto& e : catalog) {
    if (e.loaded) {
      loaded_at_start.insert(e.name);
    } else {
      ++deferred;
    }
  }
  EXPECT_GT(deferred, 30u);
  // The registry: the meta-tool and the always-loaded tools, nothing deferred. Always loaded:
  // sequential-thinking's (alwaysLoad), and the tools the servers' instructions name (the
  // demo server's name all of its tools; server-everything's name get-roots-list and four
  // more).
  EXPECT_TRUE(registered(kToolSearchTool));
  EXPECT_TRUE(registered("mcp_sequential-thinking_sequentialthinking"))
      << "the server has alwaysLoad";
  EXPECT_TRUE(registered("mcp_demo-http_echo"));
  EXPECT_TRUE(registered("mcp_everything-sse_get-roots-list"));
  for (const auto& name : host_->registry().names()) {
    EXPECT_TRUE(name == kToolSearchTool || loaded_at_start.count(name))
        << name << " is registered but not loaded";
  }
  EXPECT_EQ(host_->registry().names().size(), 1 + loaded_at_start.size());
  EXPECT_FALSE(registered("mcp_filesystem_create_directory"));
  EXPECT_FALSE(registered("mcp_memory_create_entities"));

  // The numbers issue 15's closing note quotes: every tool's definition vs the catalog.
  std::size_t full_tokens = 0, loaded_tokens = 0, catalog_bytes = 0;
  for (const auto& t : manager->tools()) {
    full_tokens += estimate_tool_tokens(t->info());
    if (loaded_at_start.count(t->name())) loaded_tokens += estimate_tool_tokens(t->info());
  }
  for (const auto& e : catalog) catalog_bytes += e.name.size() + 2 + e.summary.size() + 1;
  const std::string catalog_text = session.catalog_text();
  std::string always;
  for (const auto& name : loaded_at_start) always += " " + name;
  std::printf(
      "[tool search] 12 servers, %zu tools (%zu deferred, %zu loaded at start)\n"
      "[tool search] full definitions of all tools ~%zu tokens; catalog lines of all tools ~%zu "
      "tokens; catalog_text (the deferred ones) %zu bytes ~%zu tokens; definitions of the tools "
      "loaded at start ~%zu tokens\n[tool search] loaded at start:%s\n",
      catalog.size(), deferred, loaded_at_start.size(), full_tokens, (catalog_bytes + 3) / 4,
      catalog_text.size(), (catalog_text.size() + 3) / 4, loaded_tokens, always.c_str());
  std::fflush(stdout);
  EXPECT_LT(catalog_text.size() / 4, full_tokens);

  // The user's view in a REPL: /mcp list says tool search is on; /mcp search shows the hits
  // and loads nothing.
  EXPECT_THAT(command("/mcp list"),
              HasSubstr("Tool search: on (" + std::to_string(deferred) + " deferred, " +
                        std::to_string(loaded_at_start.size()) + " loaded;"));
  const std::string shown = command("/mcp search --limit 3 create a directory");
  EXPECT_THAT(shown,
              HasSubstr("Tools for \"create a directory\" (3 of " + std::to_string(catalog.size()) +
                        " tools):\n  mcp_filesystem_create_directory "))
      << shown;
  EXPECT_FALSE(registered("mcp_filesystem_create_directory")) << "/mcp search only shows";

  // A task, as a model words it: the filesystem's create_directory first, loaded by the
  // search, then called.
  ToolResult found = call(kToolSearchTool, {{"query", "create a directory"}});
  EXPECT_FALSE(found.is_error) << found.text;
  const ToolSearchResult ranked = session.search_tools("create a directory");
  ASSERT_FALSE(ranked.hits.empty());
  EXPECT_EQ(ranked.hits[0].name, "mcp_filesystem_create_directory") << found.text;
  EXPECT_THAT(found.text, HasSubstr("mcp_filesystem_create_directory"));
  EXPECT_TRUE(registered("mcp_filesystem_create_directory")) << found.text;
  ToolResult made = call("mcp_filesystem_create_directory",
                         {{"path", (root_ / "files" / "made-by-search").string()}});
  EXPECT_FALSE(made.is_error) << made.text;
  EXPECT_TRUE(fs::is_directory(root_ / "files" / "made-by-search")) << made.text;

  ToolResult memory =
      call(kToolSearchTool, {{"query", "store an entity in the knowledge graph"}, {"limit", 3}});
  EXPECT_FALSE(memory.is_error) << memory.text;
  const ToolSearchResult memory_ranked =
      session.search_tools("store an entity in the knowledge graph", 3);
  ASSERT_FALSE(memory_ranked.hits.empty());
  EXPECT_EQ(memory_ranked.hits[0].name, "mcp_memory_create_entities") << memory.text;
  ASSERT_TRUE(registered("mcp_memory_create_entities")) << memory.text;
  ToolResult stored =
      call("mcp_memory_create_entities", {{"entities",
                                           {{{"name", "mcprt"},
                                             {"entityType", "project"},
                                             {"observations", {"found by mcp_tool_search"}}}}}});
  EXPECT_FALSE(stored.is_error) << stored.text;
  EXPECT_THAT(stored.text, HasSubstr("mcprt"));
  EXPECT_THAT(read_text(root_ / "memory.jsonl"), HasSubstr("found by mcp_tool_search"));

  // select: loads both names at once; both answer.
  EXPECT_FALSE(registered("mcp_notes_list_allowed_directories"));
  EXPECT_FALSE(registered("mcp_everything_echo"));
  ToolResult selected =
      call(kToolSearchTool,
           {{"query", "select:mcp_notes_list_allowed_directories,mcp_everything_echo"}});
  EXPECT_FALSE(selected.is_error) << selected.text;
  EXPECT_TRUE(registered("mcp_notes_list_allowed_directories")) << selected.text;
  EXPECT_TRUE(registered("mcp_everything_echo")) << selected.text;
  EXPECT_THAT(call("mcp_notes_list_allowed_directories", json::object()).text,
              HasSubstr((root_ / "notes").string()));
  EXPECT_THAT(call("mcp_everything_echo", {{"message", "loaded by select"}}).text,
              HasSubstr("loaded by select"));

  const std::vector<std::string> now_loaded = session.loaded_tools();
  for (const char* name : {"mcp_filesystem_create_directory", "mcp_memory_create_entities",
                           "mcp_notes_list_allowed_directories", "mcp_everything_echo"}) {
    EXPECT_NE(std::find(now_loaded.begin(), now_loaded.end(), name), now_loaded.end()) << name;
  }
}

}  // namespace
}  // namespace tool_search_servers_test
}  // namespace mcprt
