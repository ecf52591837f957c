// NativeFileStore against the real file system, in a fresh temp directory per test.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "mcprt/native/executor.hpp"
#include "mcprt/native/file_store.hpp"
#include "mcprt/testing/env_map.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tool_cache.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace native_file_store_test {  // this file's own names in a unity batch
namespace {

namespace fs = std::filesystem;
using mcprt::testing::ManualExecutor;

class FileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "mcprt-filestore-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    root_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  Result<std::optional<std::string>> get(NativeFileStore& store, const std::string& key) {
    std::optional<Result<std::optional<std::string>>> out;
    store.get(key, [&](Result<std::optional<std::string>> r) { out.emplace(std::move(r)); });
    EXPECT_FALSE(out.has_value()) << "completed inside get()";
    ex_.run_until_idle();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : Result<std::optional<std::string>>(Error{});
  }
  Status put(NativeFileStore& store, const std::string& key, std::string value) {
    std::optional<Status> out;
    store.put(key, std::move(value), [&](Status s) { out = std::move(s); });
    EXPECT_FALSE(out.has_value()) << "completed inside put()";
    ex_.run_until_idle();
    return out ? *out : Status(Error{});
  }
  Status remove(NativeFileStore& store, const std::string& key) {
    std::optional<Status> out;
    store.remove(key, [&](Status s) { out = std::move(s); });
    ex_.run_until_idle();
    return out ? *out : Status(Error{});
  }
  std::vector<std::string> files_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path root_;
  ManualExecutor ex_;
};

TEST_F(FileStoreTest, PutThenGetRoundTripsAndCreatesTheDirectory) {
  NativeFileStore store((root_ / "nested" / "mcprt").string(), ex_);
  std::string value = R"({"version":1,"tools":[{"name":"é"}]})" + std::string("\0\xFF", 2);
  ASSERT_TRUE(put(store, "tools.fs", value).ok());
  auto r = get(store, "tools.fs");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value(), std::optional<std::string>(value));
  EXPECT_TRUE(fs::is_regular_file(store.path_for("tools.fs")));
}

TEST_F(FileStoreTest, MissingKeyAndMissingDirectoryAreNullopt) {
  NativeFileStore store((root_ / "does-not-exist").string(), ex_);
  auto r = get(store, "tools.fs");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r.value().has_value());
}

TEST_F(FileStoreTest, OverwriteReplacesAndLeavesNoTempFiles) {
  NativeFileStore store(root_.string(), ex_);
  ASSERT_TRUE(put(store, "tools.a", std::string(100000, 'x')).ok());
  ASSERT_TRUE(put(store, "tools.a", "short").ok());
  ASSERT_TRUE(put(store, "tools.b", "other").ok());
  EXPECT_EQ(get(store, "tools.a").value(), std::optional<std::string>("short"));
  EXPECT_EQ(files_in(root_), (std::vector<std::string>{"tools.a", "tools.b"}));
}

TEST_F(FileStoreTest, FailedWriteLeavesTheOldValueAndNoTempFile) {
  NativeFileStore store(root_.string(), ex_);
  ASSERT_TRUE(put(store, "tools.a", "old").ok());
  // A directory where the entry's file should go: rename(2) over it fails.
  fs::create_directory(root_ / "tools.b");
  fs::create_directory(root_ / "tools.b" / "child");
  Status s = put(store, "tools.b", "new");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::transport);
  EXPECT_NE(s.error().message.find("tools.b"), std::string::npos) << s.error();
  EXPECT_EQ(files_in(root_), (std::vector<std::string>{"tools.a", "tools.b"}));
  EXPECT_EQ(get(store, "tools.a").value(), std::optional<std::string>("old"));
}

TEST_F(FileStoreTest, DirectoryThatIsAFileIsAnErrorForEveryOperation) {
  fs::path file = root_ / "not-a-dir";
  std::ofstream(file) << "x";
  NativeFileStore store(file.string(), ex_);
  auto r = get(store, "tools.fs");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::transport);
  EXPECT_NE(r.error().message.find("not-a-dir"), std::string::npos) << r.error();
  EXPECT_FALSE(put(store, "tools.fs", "v").ok());
  EXPECT_FALSE(remove(store, "tools.fs").ok());
}

TEST_F(FileStoreTest, EntryThatIsADirectoryIsAReadError) {
  NativeFileStore store(root_.string(), ex_);
  fs::create_directory(root_ / "tools.x");
  auto r = get(store, "tools.x");
  EXPECT_FALSE(r.ok());
}

TEST_F(FileStoreTest, RemoveDeletesAndRemovingMissingSucceeds) {
  NativeFileStore store(root_.string(), ex_);
  ASSERT_TRUE(put(store, "tools.a", "v").ok());
  EXPECT_TRUE(remove(store, "tools.a").ok());
  EXPECT_FALSE(get(store, "tools.a").value().has_value());
  EXPECT_TRUE(remove(store, "tools.a").ok());
  EXPECT_TRUE(remove(store, "never-there").ok());
  EXPECT_TRUE(files_in(root_).empty());
}

TEST_F(FileStoreTest, OddKeysStayInsideTheDirectoryAndRoundTrip) {
  NativeFileStore store((root_ / "store").string(), ex_);
  const std::vector<std::string> keys = {
      "..", ".", ".hidden", "../escape", "a/b", "/abs", "with space", "%41", "A",
      "tools.host%3A8080", "caf\xC3\xA9", std::string("nul\0byte", 8), "~tilde",
      std::string(300, 'k'), std::string(300, 'k') + "2", std::string(250, '/'),
  };
  std::map<std::string, std::string> expect;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    std::string v = "value " + std::to_string(i);
    ASSERT_TRUE(put(store, keys[i], v).ok()) << i;
    expect[keys[i]] = v;
  }
  for (const auto& [k, v] : expect) {
    EXPECT_EQ(get(store, k).value(), std::optional<std::string>(v)) << k.substr(0, 20);
    std::string name = NativeFileStore::file_name_for(k);
    EXPECT_LE(name.size(), 200u);
    EXPECT_NE(name[0], '.');
    EXPECT_EQ(name.find('/'), std::string::npos);
  }
  // Every key got its own file, all of them directly in the store's directory.
  EXPECT_EQ(files_in(root_ / "store").size(), keys.size());
  EXPECT_EQ(files_in(root_), (std::vector<std::string>{"store"}));
}

TEST_F(FileStoreTest, DistinctKeysNeverShareAFileName) {
  EXPECT_NE(NativeFileStore::file_name_for("a:b"), NativeFileStore::file_name_for("a%3Ab"));
  EXPECT_NE(NativeFileStore::file_name_for(".x"), NativeFileStore::file_name_for("%2Ex"));
  EXPECT_NE(NativeFileStore::file_name_for(std::string(300, 'a')),
            NativeFileStore::file_name_for(std::string(301, 'a')));
  EXPECT_EQ(NativeFileStore::file_name_for("tools.fs"), "tools.fs");
}

TEST_F(FileStoreTest, EmptyKeyIsInvalidArgument) {
  NativeFileStore store(root_.string(), ex_);
  auto r = get(store, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(put(store, "", "v").error().code, ErrorCode::invalid_argument);
}

TEST_F(FileStoreTest, CompletionRunsAfterTheStoreIsDestroyed) {
  std::optional<Status> out;
  {
    NativeFileStore store(root_.string(), ex_);
    store.put("k", "v", [&](Status s) { out = std::move(s); });
  }
  ex_.run_until_idle();
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->ok());
}

TEST_F(FileStoreTest, ToolCacheRoundTripsThroughFilesOnTheNativeExecutor) {
  NativeExecutor ex;
  NativeFileStore store(root_.string(), ex);
  ToolCache cache(store, nullptr, nullptr);
  ServerConfig cfg;
  cfg.name = "host:1";
  cfg.raw = json{{"url", "http://127.0.0.1:1/mcp"}};
  std::optional<Status> saved;
  cache.save(cfg, json{{"serverInfo", {{"name", "x"}}}}, {json{{"name", "echo"}}},
             [&](Status s) { saved = std::move(s); });
  ASSERT_TRUE(test::pump_until(ex, [&] { return saved.has_value(); }));
  ASSERT_TRUE(saved->ok()) << saved->error();
  bool loaded = false;
  std::optional<CachedTools> hit;
  cache.load(cfg, [&](std::optional<CachedTools> r) {
    hit = std::move(r);
    loaded = true;
  });
  ASSERT_TRUE(test::pump_until(ex, [&] { return loaded; }));
  ASSERT_TRUE(hit.has_value());
  ASSERT_EQ(hit->tools.size(), 1u);
  EXPECT_EQ(hit->tools[0]["name"], "echo");
  // The key "tools.host%3A1" is itself encoded by the store ('%' → %25): one file.
  EXPECT_EQ(files_in(root_), (std::vector<std::string>{"tools.host%253A1"}));
}

TEST(DefaultCacheDir, PrefersAbsoluteXdgCacheHome) {
  const auto env = mcprt::testing::env_of;
  EXPECT_EQ(default_cache_dir(env({{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}})),
            "/xdg/mcprt");
  EXPECT_EQ(default_cache_dir(env({{"XDG_CACHE_HOME", "relative"}, {"HOME", "/home/u"}})),
            "/home/u/.cache/mcprt");
  EXPECT_EQ(default_cache_dir(env({{"XDG_CACHE_HOME", ""}, {"HOME", "/home/u"}})),
            "/home/u/.cache/mcprt");
  EXPECT_EQ(default_cache_dir(env({{"HOME", "/home/u"}})), "/home/u/.cache/mcprt");
  EXPECT_EQ(default_cache_dir(env({})), "");
}

}  // namespace
}  // namespace native_file_store_test
}  // namespace mcprt::native
