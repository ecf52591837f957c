// End-to-end tests of `mcprt tools`: the real CLI binary against real server processes
// (the demo server and this binary as scripted servers), from a temporary config file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "mcprt/result.hpp"
#include "native_test_support.hpp"

namespace mcprt {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int exit_code = -1;
  std::string out;
};

// Runs the CLI with `args`, capturing stdout (stderr goes to the test log).
CliRun run_cli(const std::string& args) {
  CliRun r;
  std::string cmd = std::string(MCPRT_CLI) + " " + args;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class CliTools : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    marker_ = "mcprt-cli-test-" + std::to_string(rd());
    dir_ = fs::temp_directory_path() / marker_;
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_config(const json& doc, const std::string& name = "mcp.json") {
    auto path = dir_ / name;
    std::ofstream(path) << doc.dump(2);
    return path.string();
  }
  json scripted(const std::string& scenario) const {
    // The marker arg lets the test find any process the CLI failed to clean up.
    return {{"command", native::test::self_exe()},
            {"args", {"--scripted-server=" + scenario, marker_}}};
  }
  // Processes anywhere on the machine whose command line carries this test's marker.
  std::set<int> marked_processes() const {
    std::set<int> found;
    for (const auto& e : fs::directory_iterator("/proc")) {
      std::string pid = e.path().filename();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream f(e.path() / "cmdline", std::ios::binary);
      std::string cmdline((std::istreambuf_iterator<char>(f)), {});
      if (cmdline.find(marker_) != std::string::npos) found.insert(std::stoi(pid));
    }
    return found;
  }

  std::string marker_;
  fs::path dir_;
};

TEST_F(CliTools, Json_ListsToolsOfEveryServerAndReportsFailuresPerServer) {
  auto config = write_config({{"mcpServers",
                               {{"demo", {{"command", MCPRT_DEMO_SERVER}}},
                                {"scripted", scripted("ok")},
                                {"crashy", scripted("crash_at_start")},
                                {"bad name!", {{"command", "x"}}}}}});
  auto r = run_cli("tools --json --config " + config);
  EXPECT_EQ(r.exit_code, 1) << r.out;  // some servers failed
  auto out = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.out;

  std::set<std::string> names;
  for (auto& t : out["tools"]) names.insert(t["name"].get<std::string>());
  for (auto* n : {"mcp_demo_echo", "mcp_demo_add", "mcp_demo_now", "mcp_demo_word_count",
                  "mcp_demo_slow_task", "mcp_demo_fail", "mcp_scripted_echo", "mcp_scripted_add"})
    EXPECT_TRUE(names.count(n)) << n << " missing from " << r.out;
  EXPECT_EQ(names.size(), 8u);

  std::map<std::string, json> servers;
  for (auto& s : out["servers"]) servers[s["name"].get<std::string>()] = s;
  EXPECT_EQ(servers["demo"]["status"], "connected");
  EXPECT_EQ(servers["demo"]["toolCount"], 6);
  EXPECT_EQ(servers["crashy"]["status"], "failed");
  EXPECT_NE(servers["crashy"]["error"].get<std::string>().find("exited (code 3)"),
            std::string::npos)
      << servers["crashy"];

  std::string all_errors = out["errors"].dump();
  EXPECT_NE(all_errors.find("Server \\\"bad name!\\\""), std::string::npos) << all_errors;
  EXPECT_NE(all_errors.find("Server \\\"crashy\\\""), std::string::npos) << all_errors;
  EXPECT_TRUE(out["elapsedMs"].is_number());
  EXPECT_TRUE(marked_processes().empty()) << "the CLI left server processes running";
}

TEST_F(CliTools, Text_PrintsToolNamesDescriptionsAndSummary) {
  auto config = write_config({{"mcpServers", {{"demo", {{"command", MCPRT_DEMO_SERVER}}}}}});
  auto r = run_cli("tools --config " + config);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("demo (stdio) connected in"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mcp_demo_word_count"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 tools from 1 of 1 servers in"), std::string::npos) << r.out;
}

TEST_F(CliTools, ServerThatIgnoresStdinCloseIsStillStoppedOnExit) {
  auto config = write_config({{"mcpServers", {{"stubborn", scripted("ignore_stdin_close")}}}});
  auto r = run_cli("tools --json --config " + config);
  auto out = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(out.is_discarded()) << r.out;
  EXPECT_EQ(out["servers"][0]["status"], "connected");
  EXPECT_TRUE(marked_processes().empty()) << "the stubborn server outlived the CLI";
}

TEST_F(CliTools, InvalidJsonConfigIsAUsageErrorWithLineAndColumn) {
  auto path = dir_ / "broken.json";
  std::ofstream(path) << "{\n  \"mcpServers\": {\n    \"a\": ,\n  }\n}\n";
  auto r = run_cli("tools --config " + path.string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find(path.string() + ":3:"), std::string::npos) << r.out;
}

TEST_F(CliTools, MissingConfigIsAUsageError) {
  auto r = run_cli("tools --cwd " + dir_.string() + " 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("no config file"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace mcprt
