#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "mcprt/memory_store.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace memory_store_test {  // this file's own names in a unity batch
namespace {

using testing::ManualExecutor;

struct GetProbe {
  int calls = 0;
  std::optional<Result<std::optional<std::string>>> result;
  auto callback() {
    return [this](Result<std::optional<std::string>> r) {
      ++calls;
      result.emplace(std::move(r));
    };
  }
};

TEST(MemoryStore, GetOfMissingKeyIsNulloptNotError) {
  ManualExecutor ex;
  MemoryKeyValueStore store(ex);
  GetProbe probe;
  store.get("nope", probe.callback());
  ex.run_until_idle();
  ASSERT_EQ(probe.calls, 1);
  ASSERT_TRUE(probe.result->ok());
  EXPECT_FALSE(probe.result->value().has_value());
}

TEST(MemoryStore, PutThenGetReturnsTheValueAndCompletesLater) {
  ManualExecutor ex;
  MemoryKeyValueStore store(ex);
  int put_calls = 0;
  store.put("k", "v1", [&](Status s) {
    EXPECT_TRUE(s.ok());
    ++put_calls;
  });
  GetProbe probe;
  store.get("k", probe.callback());
  EXPECT_EQ(put_calls, 0);  // never inside the call
  EXPECT_EQ(probe.calls, 0);
  ex.run_until_idle();
  EXPECT_EQ(put_calls, 1);
  ASSERT_EQ(probe.calls, 1);
  EXPECT_EQ(probe.result->value(), std::optional<std::string>("v1"));
}

TEST(MemoryStore, PutReplacesAndRemoveDeletesAndRemovingMissingSucceeds) {
  ManualExecutor ex;
  MemoryKeyValueStore store(ex);
  store.put("k", "a", nullptr);
  store.put("k", "b", nullptr);
  ex.run_until_idle();
  EXPECT_EQ(store.entries().at("k"), "b");
  int ok = 0;
  store.remove("k", [&](Status s) { ok += s.ok(); });
  store.remove("k", [&](Status s) { ok += s.ok(); });
  ex.run_until_idle();
  EXPECT_EQ(ok, 2);
  EXPECT_TRUE(store.entries().empty());
}

TEST(MemoryStore, InjectedFailuresReachCallbacksAndLeaveEntriesAlone) {
  ManualExecutor ex;
  MemoryKeyValueStore store(ex);
  store.entries()["k"] = "old";
  store.fail_writes(Error::make(ErrorCode::transport, "disk full"));
  store.fail_reads(Error::make(ErrorCode::transport, "unreadable"));
  std::optional<Status> put_status;
  store.put("k", "new", [&](Status s) { put_status = std::move(s); });
  GetProbe probe;
  store.get("k", probe.callback());
  ex.run_until_idle();
  ASSERT_TRUE(put_status.has_value());
  EXPECT_FALSE(put_status->ok());
  EXPECT_EQ(put_status->error().message, "disk full");
  ASSERT_FALSE(probe.result->ok());
  EXPECT_EQ(probe.result->error().message, "unreadable");
  EXPECT_EQ(store.entries().at("k"), "old");
}

TEST(MemoryStore, CompletionRunsAfterTheStoreIsDestroyed) {
  ManualExecutor ex;
  GetProbe probe;
  {
    MemoryKeyValueStore store(ex);
    store.entries()["k"] = "v";
    store.get("k", probe.callback());
  }
  ex.run_until_idle();
  ASSERT_EQ(probe.calls, 1);
  EXPECT_EQ(probe.result->value(), std::optional<std::string>("v"));
}

}  // namespace
}  // namespace memory_store_test
}  // namespace mcprt
