#include <gtest/gtest.h>

#include <vector>

#include "mcprt/abort.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace executor_test {  // this file's own names in a unity batch
namespace {

using testing::ManualExecutor;

TEST(ManualExecutor, PostedWorkRunsOnlyWhenPumped) {
  ManualExecutor ex;
  int runs = 0;
  ex.post([&] { ++runs; });
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(ex.run_until_idle(), 1u);
  EXPECT_EQ(runs, 1);
}

TEST(ManualExecutor, TimersFireInDeadlineOrderWhenClockAdvances) {
  ManualExecutor ex;
  std::vector<int> order;
  ex.post_after(Millis(20), [&] { order.push_back(20); });
  ex.post_after(Millis(10), [&] { order.push_back(10); });
  ex.advance(Millis(9));
  EXPECT_TRUE(order.empty());
  ex.advance(Millis(1));
  EXPECT_EQ(order, (std::vector<int>{10}));
  ex.advance(Millis(100));
  EXPECT_EQ(order, (std::vector<int>{10, 20}));
  EXPECT_EQ(ex.now().time_since_epoch(), Millis(110));
}

TEST(ManualExecutor, CancelledTimerNeverFires) {
  ManualExecutor ex;
  bool fired = false;
  auto id = ex.post_after(Millis(5), [&] { fired = true; });
  EXPECT_TRUE(ex.cancel_timer(id));
  EXPECT_FALSE(ex.cancel_timer(id));
  ex.advance(Millis(10));
  EXPECT_FALSE(fired);
}

TEST(ManualExecutor, TimerSetFromTimerSeesAdvancedClock) {
  ManualExecutor ex;
  TimePoint inner_at{};
  ex.post_after(Millis(10), [&] {
    ex.post_after(Millis(10), [&] { inner_at = ex.now(); });
  });
  ex.advance(Millis(30));
  EXPECT_EQ(inner_at.time_since_epoch(), Millis(20));
}

TEST(ScopedTimer, DestructionCancels) {
  ManualExecutor ex;
  bool fired = false;
  {
    ScopedTimer t(ex, ex.post_after(Millis(1), [&] { fired = true; }));
  }
  ex.advance(Millis(5));
  EXPECT_FALSE(fired);
}

TEST(AbortController, ListenersRunOnceInOrder) {
  AbortController c;
  std::vector<int> seen;
  auto sig = c.signal();
  sig.add_listener([&] { seen.push_back(1); });
  auto id2 = sig.add_listener([&] { seen.push_back(2); });
  sig.add_listener([&] { seen.push_back(3); });
  sig.remove_listener(id2);
  c.abort("stop");
  c.abort("again");
  EXPECT_TRUE(sig.aborted());
  EXPECT_EQ(sig.reason(), "stop");
  EXPECT_EQ(seen, (std::vector<int>{1, 3}));
  EXPECT_EQ(sig.add_listener([] {}), 0u);
}

TEST(AbortSignal, DefaultNeverAborts) {
  AbortSignal s;
  EXPECT_FALSE(s.aborted());
  EXPECT_EQ(s.add_listener([] {}), 0u);
}

}  // namespace
}  // namespace executor_test
}  // namespace mcprt
