// NativeExecutor: the asio-backed Executor and its blocking pumps.

#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

#include "mcprt/native/executor.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace native_executor_test {  // this file's own names in a unity batch
namespace {

using test::kWaitLimit;

TEST(NativeExecutor, PostedWorkRunsOnlyWhenPumped) {
  NativeExecutor ex;
  int runs = 0;
  ex.post([&] { ++runs; });
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(ex.poll(), 1u);
  EXPECT_EQ(runs, 1);
}

TEST(NativeExecutor, PostFromAnotherThreadRunsOnTheLoopThread) {
  NativeExecutor ex;
  std::thread::id ran_on;
  bool in_loop = false;
  std::thread producer([&] {
    ex.post([&] {
      ran_on = std::this_thread::get_id();
      in_loop = ex.in_loop_thread();
    });
  });
  producer.join();
  ASSERT_TRUE(ex.run_until([&] { return in_loop; }, kWaitLimit));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(NativeExecutor, PostKeepsOrderOfOneProducer) {
  NativeExecutor ex;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) ex.post([&order, i] { order.push_back(i); });
  ex.poll();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(NativeExecutor, TimersFireInDeadlineOrder) {
  NativeExecutor ex;
  std::vector<int> order;
  ex.post_after(Millis(40), [&] { order.push_back(40); });
  ex.post_after(Millis(5), [&] { order.push_back(5); });
  ex.post_after(Millis(20), [&] { order.push_back(20); });
  ASSERT_TRUE(ex.run_until([&] { return order.size() == 3; }, kWaitLimit));
  EXPECT_EQ(order, (std::vector<int>{5, 20, 40}));
  EXPECT_EQ(ex.pending_timers(), 0u);
}

TEST(NativeExecutor, TimerDoesNotFireBeforeItsDelay) {
  NativeExecutor ex;
  const TimePoint start = ex.now();
  TimePoint fired_at{};
  bool fired = false;
  ex.post_after(Millis(30), [&] {
    fired = true;
    fired_at = ex.now();
  });
  ASSERT_TRUE(ex.run_until([&] { return fired; }, kWaitLimit));
  EXPECT_GE((fired_at - start).count(), 30);
}

TEST(NativeExecutor, CancelledTimerNeverRunsAndCancelReportsIt) {
  NativeExecutor ex;
  bool fired = false;
  bool other = false;
  TimerId id = ex.post_after(Millis(10), [&] { fired = true; });
  ex.post_after(Millis(30), [&] { other = true; });
  EXPECT_TRUE(ex.cancel_timer(id));
  EXPECT_FALSE(ex.cancel_timer(id)) << "a second cancel must report that nothing was pending";
  ASSERT_TRUE(ex.run_until([&] { return other; }, kWaitLimit));
  EXPECT_FALSE(fired);
}

TEST(NativeExecutor, CancelAfterFiringReturnsFalse) {
  NativeExecutor ex;
  bool fired = false;
  TimerId id = ex.post_after(Millis(0), [&] { fired = true; });
  ASSERT_TRUE(ex.run_until([&] { return fired; }, kWaitLimit));
  EXPECT_FALSE(ex.cancel_timer(id));
  EXPECT_FALSE(ex.cancel_timer(kNoTimer));
  EXPECT_FALSE(ex.cancel_timer(987654));
}

TEST(NativeExecutor, TimerCancelledAfterItsWaitCompletedStillDoesNotRun) {
  NativeExecutor ex;
  bool second_fired = false;
  TimerId second = 0;
  // Both timers become due in the same loop iteration; the first cancels the second,
  // whose wait has already completed and whose handler is queued.
  ex.post_after(Millis(5), [&] { EXPECT_TRUE(ex.cancel_timer(second)); });
  second = ex.post_after(Millis(5), [&] { second_fired = true; });
  bool done = false;
  ex.post_after(Millis(40), [&] { done = true; });
  ASSERT_TRUE(ex.run_until([&] { return done; }, kWaitLimit));
  EXPECT_FALSE(second_fired);
}

TEST(NativeExecutor, ScopedTimerCancelsOnDestruction) {
  NativeExecutor ex;
  bool fired = false;
  {
    ScopedTimer t(ex, ex.post_after(Millis(5), [&] { fired = true; }));
    EXPECT_TRUE(t.active());
  }
  bool done = false;
  ex.post_after(Millis(30), [&] { done = true; });
  ASSERT_TRUE(ex.run_until([&] { return done; }, kWaitLimit));
  EXPECT_FALSE(fired);
}

TEST(NativeExecutor, RunUntilReturnsFalseWhenThePredicateNeverHolds) {
  NativeExecutor ex;
  int ticks = 0;
  ex.post([&] { ++ticks; });
  EXPECT_FALSE(ex.run_until([] { return false; }, Millis(20)));
  EXPECT_EQ(ticks, 1) << "the pump still ran the ready work";
}

TEST(NativeExecutor, StopEndsRunAndTheNextPumpWorksAgain) {
  NativeExecutor ex;
  int after = 0;
  ex.post([&] { ex.stop(); });
  ex.run();  // returns only because of stop()
  ex.post([&] { ++after; });
  EXPECT_EQ(ex.poll(), 1u);
  EXPECT_EQ(after, 1);
}

TEST(NativeExecutor, RunOnceRunsExactlyOneHandler) {
  NativeExecutor ex;
  int runs = 0;
  ex.post([&] { ++runs; });
  ex.post([&] { ++runs; });
  EXPECT_EQ(ex.run_once(), 1u);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ex.run_once(), 1u);
  EXPECT_EQ(runs, 2);
}

TEST(NativeExecutor, BackgroundThreadRunsPostedWorkAndTimers) {
  NativeExecutor ex;
  ex.start_thread();
  std::promise<bool> timer_ran_on_loop;
  auto result = timer_ran_on_loop.get_future();
  ex.post([&] {
    ex.post_after(Millis(5), [&] { timer_ran_on_loop.set_value(ex.in_loop_thread()); });
  });
  ASSERT_EQ(result.wait_for(kWaitLimit), std::future_status::ready);
  ex.stop_thread();
  EXPECT_TRUE(result.get());
  EXPECT_FALSE(ex.in_loop_thread());
}

TEST(NativeExecutor, DestroyingTheExecutorDropsPendingWorkWithoutRunningIt) {
  bool ran = false;
  auto witness = std::make_shared<int>(0);
  std::weak_ptr<int> weak = witness;
  {
    NativeExecutor ex;
    ex.post([&ran, w = std::move(witness)] { ran = true; });
    ex.post_after(Millis(1000), [&ran] { ran = true; });
  }
  EXPECT_FALSE(ran);
  EXPECT_TRUE(weak.expired()) << "the pending closure (and what it captured) was released";
}

TEST(NativeExecutor, NowIsMonotonic) {
  NativeExecutor ex;
  TimePoint a = ex.now();
  TimePoint b = ex.now();
  EXPECT_LE(a, b);
}

}  // namespace
}  // namespace native_executor_test
}  // namespace mcprt::native
