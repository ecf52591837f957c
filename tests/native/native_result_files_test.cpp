// Full tool results in files (SPEC §16 "Output caps"): the native ResultSpill on its own,
// and NativeHost calling the demo server's echo tool over a small cap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mcprt/native/host.hpp"
#include "mcprt/native/result_files.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "native_test_support.hpp"

namespace mcprt {
namespace native_result_files_test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0xFFFF;
  return st.st_mode & 07777;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.insert(e.path().filename().string());
  return out;
}

class ResultFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("mcprt-result-files-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ResultSpill spill(std::size_t max_files = 100, std::uint64_t max_total_bytes = 1 << 20) {
    native::ResultFilesOptions o;
    o.dir = (dir_ / "cache" / "results").string();
    o.max_files = max_files;
    o.max_total_bytes = max_total_bytes;
    return native::make_result_files_spill(o, &logger_);
  }
  static ResultSpillRequest request(std::string_view text, std::string_view server = "srv",
                                    std::string_view tool = "dump") {
    return ResultSpillRequest{server, tool, "mcp_srv_dump", text};
  }
  fs::path results() const { return dir_ / "cache" / "results"; }

  fs::path dir_;
  testing::CapturingLogger logger_;
};

TEST_F(ResultFilesTest, WritesThePrivateFileWhosePathItReturns) {
  const std::string text = "line 1\n\xE2\x82\xAC and more\n" + std::string(10000, 'q');
  std::optional<std::string> path = spill()(request(text));
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(fs::path(*path).parent_path(), results());
  EXPECT_EQ(read_all(*path), text);
  EXPECT_EQ(mode_of(*path), 0600u);
  EXPECT_EQ(mode_of(results()), 0700u);
  EXPECT_THAT(fs::path(*path).filename().string(), HasSubstr("-srv-dump.txt"));
}

TEST_F(ResultFilesTest, ServerAndToolNamesCannotSteerTheFileName) {
  auto s = spill();
  std::optional<std::string> path =
      s(request("x", "../../etc", "../passwd\n/" + std::string(200, 'n')));
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(fs::path(*path).parent_path(), results());
  const std::string name = fs::path(*path).filename().string();
  EXPECT_EQ(name.find('/'), std::string::npos);
  EXPECT_EQ(name.find('\n'), std::string::npos);
  EXPECT_EQ(name.find(".."), std::string::npos);
  EXPECT_LT(name.size(), 130u);
  EXPECT_EQ(names_in(results()).size(), 1u);
  // Two results of the same tool in the same millisecond get two files.
  std::optional<std::string> again = s(request("y", "../../etc", "../passwd\n/"));
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(*again, *path);
  EXPECT_EQ(read_all(*path), "x");
}

TEST_F(ResultFilesTest, KeepsOnlyTheNewestFilesAndNeverTouchesOthers) {
  auto s = spill(/*max_files=*/3);
  fs::create_directories(results());
  std::ofstream(results() / "notes.txt") << "mine";
  std::vector<std::string> paths;
  for (int i = 0; i < 6; ++i) {
    std::optional<std::string> p = s(request("result " + std::to_string(i)));
    ASSERT_TRUE(p.has_value());
    paths.push_back(*p);
  }
  std::set<std::string> expected = {"notes.txt"};
  for (int i = 3; i < 6; ++i) expected.insert(fs::path(paths[i]).filename().string());
  EXPECT_EQ(names_in(results()), expected);
  EXPECT_EQ(read_all(paths[5]), "result 5");
}

TEST_F(ResultFilesTest, KeepsTheNewestFilesWithinTheByteBoundAndAlwaysTheNewOne) {
  auto s = spill(/*max_files=*/100, /*max_total_bytes=*/2500);
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) paths.push_back(s(request(std::string(1000, 'a' + i))).value());
  // 3,000 bytes in three files: the oldest went.
  EXPECT_EQ(names_in(results()), (std::set<std::string>{fs::path(paths[1]).filename().string(),
                                                        fs::path(paths[2]).filename().string()}));
  // A result bigger than the bound is still kept (alone).
  const std::string big = s(request(std::string(4000, 'z'))).value();
  EXPECT_EQ(names_in(results()), std::set<std::string>{fs::path(big).filename().string()});
}

TEST_F(ResultFilesTest, AFailureKeepsNothingAndWarnsNamingServerAndTool) {
  fs::create_directories(results().parent_path());
  std::ofstream(results()) << "a file where the directory should be";
  std::optional<std::string> path = spill()(request(std::string(5000, 'f'), "srv", "dump"));
  EXPECT_FALSE(path.has_value());
  EXPECT_TRUE(logger_.has(LogLevel::warn, "Server \"srv\""));
  EXPECT_TRUE(logger_.has(LogLevel::warn, "tool \"dump\" (5000 bytes) was not kept"));
  EXPECT_TRUE(logger_.has(LogLevel::warn, "is not a directory"));
}

// ---- NativeHost: a call over the cap ---------------------------------------------------------

class NativeHostResultFilesTest : public ResultFilesTest {
 protected:
  native::NativeHostOptions options() {
    std::ofstream(dir_ / "mcp.json")
        << json{{"mcpServers", {{"demo", {{"command", MCPRT_DEMO_SERVER}}}}}}.dump();
    native::NativeHostOptions o;
    o.cwd = dir_.string();
    o.config_file = (dir_ / "mcp.json").string();
    o.cache_dir = (dir_ / "cache").string();
    o.log.level = LogLevel::error;
    o.loader.manager.tools.max_result_bytes = 1000;
    return o;
  }
  static std::string big_message() {
    std::string m;
    for (int i = 0; i < 400; ++i) m += "row " + std::to_string(i) + ": caf\xC3\xA9\n";
    return m;
  }
};

TEST_F(NativeHostResultFilesTest, ACallOverTheCapWritesTheFullTextToTheFileTheMarkerNames) {
  native::NativeHost host(options());
  ASSERT_TRUE(host.load(native::test::kWaitLimit).errors.empty());
  const std::string message = big_message();
  ASSERT_GT(message.size(), 5000u);
  Result<ToolResult> r = host.call("mcp_demo_echo", {{"message", message}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->is_error);
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->full_bytes, message.size());
  ASSERT_TRUE(r->full_text_path.has_value());
  const fs::path file = *r->full_text_path;
  EXPECT_EQ(file.parent_path(), results());
  EXPECT_EQ(read_all(file), message);
  EXPECT_EQ(mode_of(file), 0600u);
  EXPECT_THAT(r->text, HasSubstr("; the full result is in " + file.string() + "]\n"));
  EXPECT_LE(r->text.size(), 1000u);
  EXPECT_EQ(r->text.rfind("row 0: caf\xC3\xA9\n", 0), 0u);              // the head
  EXPECT_THAT(r->text, ::testing::EndsWith("row 399: caf\xC3\xA9\n"));  // the tail
  // Within the cap: no file.
  Result<ToolResult> small = host.call("mcp_demo_echo", {{"message", "hi"}});
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE(small->truncated);
  EXPECT_EQ(names_in(results()).size(), 1u);
}

TEST_F(NativeHostResultFilesTest, WithFullResultsOffNothingIsWrittenAndTheCutStays) {
  native::NativeHostOptions o = options();
  o.keep_full_results = false;
  native::NativeHost host(o);
  ASSERT_TRUE(host.load(native::test::kWaitLimit).errors.empty());
  Result<ToolResult> r = host.call("mcp_demo_echo", {{"message", big_message()}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->truncated);
  EXPECT_FALSE(r->full_text_path.has_value());
  EXPECT_THAT(r->text, ::testing::Not(HasSubstr("full result")));
  EXPECT_FALSE(fs::exists(results()));
}

}  // namespace
}  // namespace native_result_files_test
}  // namespace mcprt
