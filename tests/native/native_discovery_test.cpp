// Native discovery: NativeFileSystem, toml++ parsing and make_native_discovery_context on
// a temporary HOME with real files.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "mcprt/native/discovery.hpp"
#include "mcprt/native/file_system.hpp"

namespace mcprt::native {
namespace native_discovery_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;

// A fresh directory under /tmp, removed at the end.
struct TempDir {
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "mcprt_discovery_XXXXXX").string();
    path = ::mkdtemp(templ.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& rel) const { return path + "/" + rel; }
  std::string path;
};

void write(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << content;
}

// Sets an environment variable for one test and restores it afterwards.
struct ScopedEnv {
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

// --- NativeFileSystem -----------------------------------------------------------------

TEST(NativeFileSystem, MissingFileIsNulloptNotAnError) {
  TempDir dir;
  NativeFileSystem files;
  auto r = files.read_file(dir / "nope.json");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  auto under_file = files.read_file(dir / "nope.json/child");
  ASSERT_TRUE(under_file.ok());
  EXPECT_FALSE(under_file->has_value());
}

TEST(NativeFileSystem, DirectoryIsAnErrorNamingThePath) {
  TempDir dir;
  NativeFileSystem files;
  auto r = files.read_file(dir.path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(dir.path), std::string::npos);
}

TEST(NativeFileSystem, WriteCreatesParentsAndRoundTrips) {
  TempDir dir;
  NativeFileSystem files;
  const std::string path = dir / "a/b/c/mcp.json";
  std::string content = "{\"x\": 1}\n";
  content.push_back('\0');  // binary-safe
  content += "tail";
  ASSERT_TRUE(files.write_file(path, content).ok());
  auto r = files.read_file(path);
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ(**r, content);
}

TEST(NativeFileSystem, WriteReplacesAtomicallyAndLeavesNoTempFiles) {
  TempDir dir;
  NativeFileSystem files;
  const std::string path = dir / "mcp.json";
  write(path, "old");
  ::chmod(path.c_str(), 0640);
  // A reader holding the old file keeps seeing the old content: the write is a rename of
  // a new inode, never an in-place rewrite.
  std::ifstream before(path);
  ASSERT_TRUE(files.write_file(path, "new content").ok());
  std::string old_seen;
  std::getline(before, old_seen);
  EXPECT_EQ(old_seen, "old");
  EXPECT_EQ(**files.read_file(path), "new content");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(NativeFileSystem, NewFileIsPrivate) {
  TempDir dir;
  NativeFileSystem files;
  ASSERT_TRUE(files.write_file(dir / "secret.json", "{}").ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir / "secret.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(NativeFileSystem, WriteIntoAFileAsDirectoryFails) {
  TempDir dir;
  NativeFileSystem files;
  write(dir / "file", "x");
  Status s = files.write_file(dir / "file/mcp.json", "{}");
  EXPECT_FALSE(s.ok());
}

// --- toml++ ---------------------------------------------------------------------------

TEST(NativeToml, ConvertsTablesArraysAndScalars) {
  auto r = parse_toml(R"(
[mcp_servers.docs]
command = "npx"
args = ["-y", "docs"]
startup_timeout_sec = 20
tool_timeout_sec = 1.5
enabled = false
when = 1979-05-27T07:32:00Z
[mcp_servers.docs.env]
KEY = "v"
)", "config.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  const json& docs = (*r)["mcp_servers"]["docs"];
  EXPECT_EQ(docs["command"], "npx");
  EXPECT_EQ(docs["args"], json::array({"-y", "docs"}));
  EXPECT_EQ(docs["startup_timeout_sec"], 20);
  EXPECT_DOUBLE_EQ(docs["tool_timeout_sec"].get<double>(), 1.5);
  EXPECT_EQ(docs["enabled"], false);
  EXPECT_TRUE(docs["when"].is_string());
  EXPECT_EQ(docs["env"]["KEY"], "v");
}

TEST(NativeToml, SyntaxErrorHasLineAndColumn) {
  auto r = parse_toml("[mcp_servers.a]\ncommand = \"x\"\nargs = [1,\n  = 2\n", "config.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_config);
  ASSERT_TRUE(r.error().data.is_object());
  EXPECT_EQ(r.error().data["line"], 4);
  EXPECT_GT(r.error().data["column"].get<int>(), 0);
}

// --- make_native_discovery_context on a temporary HOME --------------------------------

TEST(NativeDiscovery, ReadsRealFilesFromHomeXdgAndTheProject) {
  TempDir home, project, xdg;
  ScopedEnv h("HOME", home.path);
  ScopedEnv x("XDG_CONFIG_HOME", xdg.path);
  ScopedEnv token("MCPRT_TEST_TOKEN", std::string("t0k"));
  write(xdg / "acme/mcp.json", R"({"mcpServers": {"native-srv": {"command": "n"}}, "disabledServers": ["off"]})");
  write(project / ".acme/mcp.json", R"({"mcpServers": {"project-srv": {"command": "p"}}})");
  write(home / ".claude.json", R"({"mcpServers": {"off": {"command": "o"},
                                   "claude-srv": {"url": "https://c.example/mcp",
                                                  "headers": {"Authorization": "Bearer ${MCPRT_TEST_TOKEN}"}}}})");
  write(home / ".codex/config.toml", "[mcp_servers.codex-srv]\ncommand = \"cx\"\nstartup_timeout_sec = 2\n");
  write(project / ".vscode/mcp.json", "// comment\n{\"servers\": {\"vs\": {\"type\": \"stdio\", \"command\": \"v\"}}}");

  DiscoveryContext ctx = make_native_discovery_context(project.path, "acme");
  EXPECT_EQ(ctx.home, home.path);
  EXPECT_EQ(ctx.xdg_config_home, xdg.path);
  DiscoveryOptions trusting;  // the project files are part of what this test reads
  trusting.trust_all_projects = true;
  DiscoveryResult r = discover_servers(ctx, trusting);
  for (const auto& e : r.errors) ADD_FAILURE() << e.describe();
  std::vector<std::string> names;
  for (const auto& c : r.configs) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"claude-srv", "codex-srv", "native-srv", "project-srv", "vs"}));
  EXPECT_EQ(r.disabled, std::vector<std::string>{"off"});
  for (const auto& c : r.configs) {
    if (c.name == "claude-srv") {
      EXPECT_EQ(c.headers.at("Authorization"), "Bearer t0k");
    } else if (c.name == "codex-srv") {
      EXPECT_EQ(c.timeout_ms, 2000);
    } else if (c.name == "native-srv") {
      EXPECT_EQ(c.source.provider_name, "acme");
    }
  }
}

TEST(NativeDiscovery, TomlErrorInACodexFileIsAPerFileErrorWithPosition) {
  TempDir home, project;
  ScopedEnv h("HOME", home.path);
  ScopedEnv x("XDG_CONFIG_HOME", std::nullopt);
  write(home / ".codex/config.toml", "[mcp_servers.a]\ncommand = \n");
  write(home / ".cursor/mcp.json", R"({"mcpServers": {"ok": {"command": "c"}}})");
  DiscoveryResult r = discover_servers(make_native_discovery_context(project.path));
  ASSERT_EQ(r.configs.size(), 1u);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, home / ".codex/config.toml");
  EXPECT_EQ(r.errors[0].line, 2);
  EXPECT_GT(r.errors[0].column, 0);
}

TEST(NativeDiscovery, RelativeXdgConfigHomeIsIgnored) {
  TempDir home;
  ScopedEnv h("HOME", home.path);
  ScopedEnv x("XDG_CONFIG_HOME", std::string("relative/dir"));
  DiscoveryContext ctx = make_native_discovery_context("/nonexistent-project");
  EXPECT_TRUE(ctx.xdg_config_home.empty());
  EXPECT_EQ(native_user_config_path(ctx), home / ".config/mcprt/mcp.json");
}

TEST(NativeDiscovery, TrustIsRecordedUnderTheRealPathSoItHoldsThroughASymlink) {
  TempDir home, place;
  ScopedEnv h("HOME", home.path);
  ScopedEnv x("XDG_CONFIG_HOME", std::nullopt);
  const std::string repo = place / "repo";
  write(repo + "/.mcp.json", R"({"mcpServers": {"p": {"command": "p"}}})");
  const std::string link = place / "link";
  fs::create_directory_symlink(repo, link);
  DiscoveryContext via_link = make_native_discovery_context(link + "/");
  EXPECT_EQ(project_trust_folder(via_link), fs::canonical(repo).string());

  DiscoveryResult pending = discover_servers(via_link);
  ASSERT_EQ(pending.pending.size(), 1u);
  EXPECT_EQ(pending.pending[0].folder, fs::canonical(repo).string());
  ASSERT_TRUE(record_project_trust(*via_link.fs, native_user_config_path(via_link), pending.project_folder,
                                   {{"p", pending.pending[0].hash}}, true)
                  .ok());
  // Trusted through the link, and through the real path.
  EXPECT_EQ(discover_servers(via_link).configs.size(), 1u);
  EXPECT_EQ(discover_servers(make_native_discovery_context(repo)).configs.size(), 1u);
  // Another folder with the same file is not trusted.
  const std::string copy = place / "copy";
  write(copy + "/.mcp.json", R"({"mcpServers": {"p": {"command": "p"}}})");
  EXPECT_EQ(discover_servers(make_native_discovery_context(copy)).pending.size(), 1u);
}

TEST(NativeDiscovery, RealPathOfAMissingDirectoryIsAbsoluteAndNormalised) {
  EXPECT_EQ(real_path("/nonexistent-mcprt/a/../b/"), "/nonexistent-mcprt/b");
  EXPECT_EQ(real_path("/"), "/");
}

TEST(NativeDiscovery, EnvLookupSeesTheCurrentEnvironment) {
  EnvLookup env = native_env_lookup();
  ScopedEnv v("MCPRT_TEST_LATE", std::string("late"));
  EXPECT_EQ(env("MCPRT_TEST_LATE"), std::optional<std::string>("late"));
  ScopedEnv u("MCPRT_TEST_UNSET", std::nullopt);
  EXPECT_EQ(env("MCPRT_TEST_UNSET"), std::nullopt);
}

}  // namespace
}  // namespace native_discovery_test
}  // namespace mcprt::native
