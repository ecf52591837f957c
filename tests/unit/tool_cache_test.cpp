#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/memory_store.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tool_cache.hpp"

namespace mcprt {
namespace tool_cache_test {  // this file's own names in a unity batch
namespace {

using testing::CapturingLogger;
using testing::ManualExecutor;

constexpr std::int64_t kDayMs = 24LL * 60 * 60 * 1000;
constexpr std::int64_t kT0 = 1'800'000'000'000LL;  // a plausible wall-clock ms value

ServerConfig make_config(const std::string& name, const std::string& command = "srv") {
  ServerConfig c;
  c.name = name;
  c.command = command;
  c.raw = json{{"command", command}, {"args", json::array({"--x"})}};
  return c;
}

std::vector<json> some_tools() {
  return {json{{"name", "echo"}, {"inputSchema", {{"type", "object"}}}},
          json{{"name", "add"}, {"description", "adds"}}};
}

const json kServerInfo = {{"protocolVersion", "2025-11-25"},
                          {"serverInfo", {{"name", "demo"}, {"version", "1"}}}};

struct CacheFixture : ::testing::Test {
  ManualExecutor ex;
  MemoryKeyValueStore store{ex};
  CapturingLogger logger;
  std::int64_t now = kT0;
  ToolCache cache{store, [this] { return now; }, &logger};

  std::optional<CachedTools> load(const ServerConfig& cfg) {
    int calls = 0;
    std::optional<CachedTools> out;
    cache.load(cfg, [&](std::optional<CachedTools> r) {
      ++calls;
      out = std::move(r);
    });
    EXPECT_EQ(calls, 0) << "completed inside load()";
    ex.run_until_idle();
    EXPECT_EQ(calls, 1);
    return out;
  }
  Status save(const ServerConfig& cfg, const std::vector<json>& tools) {
    std::optional<Status> out;
    cache.save(cfg, kServerInfo, tools, [&](Status s) { out = std::move(s); });
    ex.run_until_idle();
    EXPECT_TRUE(out.has_value());
    return out ? *out : Status(Error::make(ErrorCode::internal, "no completion"));
  }
};

TEST_F(CacheFixture, SavedToolsAreAHitWithServerInfoAndTime) {
  auto cfg = make_config("fs");
  ASSERT_TRUE(save(cfg, some_tools()).ok());
  now += 1000;
  auto hit = load(cfg);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->tools, some_tools());
  EXPECT_EQ(hit->server_info, kServerInfo);
  EXPECT_EQ(hit->saved_at_ms, kT0);
  EXPECT_EQ(hit->config_hash, config_hash(cfg));
}

TEST_F(CacheFixture, MissingEntryIsAMissWithoutWarning) {
  EXPECT_FALSE(load(make_config("fs")).has_value());
  EXPECT_FALSE(logger.has(LogLevel::warn, "fs"));
}

TEST_F(CacheFixture, ChangedConfigIsAMiss) {
  ASSERT_TRUE(save(make_config("fs", "old-cmd"), some_tools()).ok());
  EXPECT_FALSE(load(make_config("fs", "new-cmd")).has_value());
}

TEST_F(CacheFixture, AgeJustUnderThirtyDaysIsAHitAndThirtyDaysIsAMiss) {
  auto cfg = make_config("fs");
  ASSERT_TRUE(save(cfg, some_tools()).ok());
  now = kT0 + 30 * kDayMs - 1;
  EXPECT_TRUE(load(cfg).has_value());
  now = kT0 + 30 * kDayMs;
  EXPECT_FALSE(load(cfg).has_value());
}

TEST_F(CacheFixture, EntryFromTheFutureIsAMiss) {
  auto cfg = make_config("fs");
  ASSERT_TRUE(save(cfg, some_tools()).ok());
  now = kT0 - 1;
  EXPECT_FALSE(load(cfg).has_value());
}

TEST_F(CacheFixture, OtherVersionIsAMiss) {
  auto cfg = make_config("fs");
  json entry = json::parse(encode_cache_entry(cfg, kServerInfo, some_tools(), kT0));
  entry["version"] = kToolCacheVersion + 1;
  store.entries()[ToolCache::key_for("fs")] = entry.dump();
  EXPECT_FALSE(load(cfg).has_value());
}

TEST_F(CacheFixture, CorruptEntriesAreMisses) {
  auto cfg = make_config("fs");
  json good = json::parse(encode_cache_entry(cfg, kServerInfo, some_tools(), kT0));
  std::vector<std::string> corrupt = {
      "", "{", "not json", "[]", "42", "null",
  };
  auto variant = [&](auto mutate) {
    json e = good;
    mutate(e);
    return e.dump();
  };
  corrupt.push_back(variant([](json& e) { e.erase("version"); }));
  corrupt.push_back(variant([](json& e) { e["version"] = "1"; }));
  corrupt.push_back(variant([](json& e) { e.erase("configHash"); }));
  corrupt.push_back(variant([](json& e) { e["configHash"] = 7; }));
  corrupt.push_back(variant([](json& e) { e.erase("savedAt"); }));
  corrupt.push_back(variant([](json& e) { e["savedAt"] = "yesterday"; }));
  corrupt.push_back(variant([](json& e) { e["tools"] = json::object(); }));
  corrupt.push_back(variant([](json& e) { e.erase("tools"); }));
  corrupt.push_back(variant([](json& e) { e["tools"].push_back(42); }));
  corrupt.push_back(variant([](json& e) { e["tools"].push_back({{"name", 3}}); }));
  // Truncated in the middle of the text (a torn write from a foreign writer).
  std::string text = good.dump();
  corrupt.push_back(text.substr(0, text.size() / 2));
  for (const auto& c : corrupt) {
    store.entries()[ToolCache::key_for("fs")] = c;
    EXPECT_FALSE(load(cfg).has_value()) << c;
    EXPECT_FALSE(decode_cache_entry(c, cfg, kT0).has_value()) << c;
  }
  // The untouched entry still hits, so the misses above came from the corruption.
  store.entries()[ToolCache::key_for("fs")] = good.dump();
  EXPECT_TRUE(load(cfg).has_value());
}

TEST_F(CacheFixture, AnEntryNestedTooDeepIsAMissSayingWhy) {
  // The cache file is input too: whoever can write the cache dir must not crash us.
  auto cfg = make_config("fs");
  json good = json::parse(encode_cache_entry(cfg, kServerInfo, some_tools(), kT0));
  good["tools"][0]["inputSchema"] = "DEEP";
  const std::string text = good.dump();
  for (std::size_t levels : {200u, 66000u}) {
    std::string deep = text;
    deep.replace(deep.find("\"DEEP\""), 6,
                 std::string(levels, '[') + std::string(levels, ']'));
    store.entries()[ToolCache::key_for("fs")] = deep;
    EXPECT_FALSE(load(cfg).has_value()) << levels;
    EXPECT_FALSE(decode_cache_entry(deep, cfg, kT0).has_value()) << levels;
  }
  EXPECT_TRUE(logger.has(LogLevel::debug, "nesting deeper than 128 levels"));
  store.entries()[ToolCache::key_for("fs")] = text;
  EXPECT_TRUE(load(cfg).has_value());
}

TEST(ToolCacheEntry, AToolAtTheDeepestNestingAServerCanSendIsStillAHit) {
  // A tools/list answer at exactly the message limit: the tool sits one level deeper in
  // the answer ({result:{tools:[...]}}) than in the entry ({tools:[...]}), so whatever
  // the transport accepted, the cache reads back.
  const std::size_t inner = kDefaultMaxJsonNestingLevels - 5;
  const std::string answer = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":"
                             "\"deep\",\"inputSchema\":{\"x\":" +
                             std::string(inner, '[') + std::string(inner, ']') + "}}]}}";
  auto parsed = detail::parse_untrusted_json(answer);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  auto cfg = make_config("fs");
  std::vector<json> tools{parsed.value()["result"]["tools"][0]};
  auto back = decode_cache_entry(encode_cache_entry(cfg, kServerInfo, tools, kT0), cfg, kT0);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->tools, tools);
}

TEST_F(CacheFixture, FailedWriteIsAWarningNamingTheServerAndReportedToDone) {
  store.fail_writes(Error::make(ErrorCode::transport, "disk full"));
  Status s = save(make_config("slow-server"), some_tools());
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(logger.has(LogLevel::warn, "\"slow-server\""));
  EXPECT_TRUE(logger.has(LogLevel::warn, "disk full"));
  EXPECT_FALSE(logger.has(LogLevel::error, "slow-server"));
}

TEST_F(CacheFixture, SaveWithoutDoneStillWarnsOnFailure) {
  store.fail_writes(Error::make(ErrorCode::transport, "read-only"));
  cache.save(make_config("x"), kServerInfo, some_tools());
  ex.run_until_idle();
  EXPECT_TRUE(logger.has(LogLevel::warn, "\"x\""));
}

TEST_F(CacheFixture, StoreReadErrorIsAMissAndAWarning) {
  auto cfg = make_config("fs");
  ASSERT_TRUE(save(cfg, some_tools()).ok());
  store.fail_reads(Error::make(ErrorCode::transport, "permission denied"));
  EXPECT_FALSE(load(cfg).has_value());
  EXPECT_TRUE(logger.has(LogLevel::warn, "\"fs\""));
  EXPECT_TRUE(logger.has(LogLevel::warn, "permission denied"));
}

TEST_F(CacheFixture, RemoveDeletesTheEntry) {
  auto cfg = make_config("fs");
  ASSERT_TRUE(save(cfg, some_tools()).ok());
  cache.remove("fs");
  ex.run_until_idle();
  EXPECT_FALSE(load(cfg).has_value());
}

TEST_F(CacheFixture, EntriesOfDifferentServersAreIndependent) {
  ASSERT_TRUE(save(make_config("a"), {json{{"name", "ta"}}}).ok());
  ASSERT_TRUE(save(make_config("b"), {json{{"name", "tb"}}}).ok());
  auto a = load(make_config("a"));
  ASSERT_TRUE(a.has_value());
  ASSERT_EQ(a->tools.size(), 1u);
  EXPECT_EQ(a->tools[0]["name"], "ta");
}

TEST_F(CacheFixture, LoadCompletesAfterTheCacheIsDestroyed) {
  auto cfg = make_config("fs");
  ASSERT_TRUE(save(cfg, some_tools()).ok());
  int calls = 0;
  bool hit = false;
  {
    ToolCache short_lived(store, [this] { return now; }, &logger);
    short_lived.load(cfg, [&](std::optional<CachedTools> r) {
      ++calls;
      hit = r.has_value();
    });
  }
  ex.run_until_idle();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(hit);
}

TEST(ToolCacheEntry, EncodeWritesTheDocumentedFields) {
  auto cfg = make_config("fs");
  json e = json::parse(encode_cache_entry(cfg, kServerInfo, some_tools(), 1234));
  EXPECT_EQ(e["version"], kToolCacheVersion);
  EXPECT_EQ(e["configHash"], config_hash(cfg));
  EXPECT_EQ(e["serverInfo"], kServerInfo);
  EXPECT_EQ(e["tools"], json(some_tools()));
  EXPECT_EQ(e["savedAt"], 1234);
}

TEST(ToolCacheEntry, InvalidUtf8InToolsDoesNotBreakEncoding) {
  auto cfg = make_config("fs");
  std::vector<json> tools{json{{"name", "t"}, {"description", "bad \xFF byte"}}};
  std::string text = encode_cache_entry(cfg, kServerInfo, tools, kT0);
  auto back = decode_cache_entry(text, cfg, kT0);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->tools[0]["name"], "t");
}

TEST(ToolCacheEntry, ConfigKeyOrderDoesNotChangeTheHit) {
  ServerConfig a = make_config("fs");
  ServerConfig b = a;
  b.raw = json::parse(R"({"args":["--x"],"command":"srv"})");
  auto text = encode_cache_entry(a, nullptr, some_tools(), kT0);
  EXPECT_TRUE(decode_cache_entry(text, b, kT0).has_value());
}

TEST(ToolCacheKey, IsPrefixedAndFileNameSafe) {
  EXPECT_EQ(ToolCache::key_for("github"), "tools.github");
  EXPECT_EQ(ToolCache::key_for("a.b_c-1"), "tools.a.b_c-1");
  EXPECT_EQ(ToolCache::key_for("host:8080"), "tools.host%3A8080");
  EXPECT_EQ(ToolCache::key_for("../x"), "tools...%2Fx");
  EXPECT_EQ(ToolCache::key_for(""), "tools.");
  EXPECT_NE(ToolCache::key_for("a:b"), ToolCache::key_for("a_b"));
}

}  // namespace
}  // namespace tool_cache_test
}  // namespace mcprt
