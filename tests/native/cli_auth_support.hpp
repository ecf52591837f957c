#pragma once
// The fixture of the CLI OAuth tests (cli_auth_test.cpp, cli_auth_flows_test.cpp): one
// loopback OAuth world (mcprt-oauth-fixture) per test, a private HOME/XDG tree with a
// config naming its MCP server "tracker", a $BROWSER script that follows the authorization
// URL's redirects to the loopback callback (as a user's browser would) and leaves a mark,
// and `cli(...)`, which runs the real `mcprt` there with a timeout and keeps everything it
// printed for expect_no_secret_anywhere().

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "oauth_fixture_process.hpp"

namespace mcprt::native::test {

class CliAuth : public ::testing::Test {
 protected:
  using json = nlohmann::json;

  void SetUp() override {
    ASSERT_TRUE(fixture_.error().empty()) << fixture_.error();
    std::random_device rd;
    home_ = std::filesystem::temp_directory_path() / ("mcprt-cli-auth-" + std::to_string(rd()));
    std::filesystem::create_directories(home_);
    // The "browser": follows the authorization URL's redirects to the loopback callback and
    // leaves a mark that it ran.
    browser_ = home_ / "browser.sh";
    std::ofstream(browser_)
        << "#!/bin/sh\necho started >> '" << (home_ / "browser-ran").string()
        << "'\nexec curl --noproxy '*' -s -L --max-time 20 -o /dev/null \"$1\"\n";
    std::filesystem::permissions(browser_, std::filesystem::perms::owner_all);
    write_config({{"tracker", {{"url", fixture_.ready().value("mcp_url", "")}}}});
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  void write_config(const json& servers) {
    std::ofstream(home_ / "mcp.json") << json{{"mcpServers", servers}}.dump(2);
  }

  // The environment of every run: the private tree, the browser script, no display, and
  // extra_env_ on top.
  RunOptions run_options(const std::string& stdin_text = "") const {
    RunOptions o;
    o.cwd = home_.string();
    o.env = {{"HOME", home_.string()},
             {"XDG_DATA_HOME", (home_ / "data").string()},
             {"XDG_CACHE_HOME", (home_ / "cache").string()},
             {"XDG_CONFIG_HOME", (home_ / "config").string()},
             {"BROWSER", browser_.string()}};
    o.unset_env = {"DISPLAY", "WAYLAND_DISPLAY", "MCPRT_TIMEOUT_MS", "MCPRT_LOG_LEVEL"};
    for (const auto& [k, v] : extra_env_) o.env[k] = v;
    o.stdin_text = stdin_text;
    o.timeout = Millis(60000);
    return o;
  }

  // `mcprt --config <home>/mcp.json <args...>`.
  std::vector<std::string> cli_argv(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {MCPRT_CLI, "--config", (home_ / "mcp.json").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  MeasuredRun cli(std::vector<std::string> args, const std::string& stdin_text = "") {
    MeasuredRun r = run_measured(cli_argv(args), run_options(stdin_text));
    outputs_ += r.out + r.err;
    // The browser is started detached on purpose (it is the user's, never waited for):
    // a curl still finishing its last request may outlive the CLI. Nothing else may.
    for (const auto& p : r.leftovers) {
      EXPECT_TRUE(p.find(" curl") != std::string::npos || p.find(" sh") != std::string::npos)
          << "left running: " << p;
    }
    return r;
  }

  bool browser_ran() const { return std::filesystem::exists(home_ / "browser-ran"); }

  // Everything the runs printed and every file mcprt wrote under the cache and data
  // directories (names and contents of the cache; names of the credential files).
  void expect_no_secret_anywhere() {
    using ::testing::HasSubstr;
    using ::testing::Not;
    std::string cache_text;
    if (std::filesystem::exists(home_ / "cache")) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(home_ / "cache")) {
        cache_text += e.path().string() + "\n";
        if (e.is_regular_file()) {
          std::ifstream in(e.path());
          cache_text += std::string(std::istreambuf_iterator<char>(in), {});
        }
      }
    }
    if (std::filesystem::exists(credentials_dir())) {
      for (const auto& e : std::filesystem::directory_iterator(credentials_dir())) {
        cache_text += e.path().string() + "\n";
      }
    }
    for (const auto& prefix : fixture_.ready().value("secret_prefixes", json::array())) {
      const std::string p = prefix.get<std::string>();
      EXPECT_THAT(outputs_, Not(HasSubstr(p))) << "a secret (" << p << "...) reached the output";
      EXPECT_THAT(cache_text, Not(HasSubstr(p))) << "a secret (" << p << "...) reached the cache";
    }
  }

  std::filesystem::path credentials_dir() const { return home_ / "data" / "mcprt" / "credentials"; }

  // The credential records (the *.json files holding "tokens") as parsed JSON, for tests
  // that compare token values; never print them.
  std::vector<json> credential_records() const {
    std::vector<json> out;
    if (!std::filesystem::is_directory(credentials_dir())) return out;
    for (const auto& e : std::filesystem::directory_iterator(credentials_dir())) {
      if (e.path().extension() != ".json") continue;
      std::ifstream in(e.path());
      json doc = json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
      if (doc.is_object() && doc.contains("tokens")) out.push_back(std::move(doc));
    }
    return out;
  }

  OAuthFixtureProcess fixture_;
  std::filesystem::path home_;
  std::filesystem::path browser_;
  std::map<std::string, std::string> extra_env_;  // set on top of run_options()'s
  std::string outputs_;
};

}  // namespace mcprt::native::test
