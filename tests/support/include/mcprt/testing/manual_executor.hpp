#pragma once
// A deterministic Executor for tests: nothing runs until the test pumps it, and time
// only moves when the test advances the manual clock.

#include <deque>
#include <functional>
#include <map>
#include <utility>

#include "mcprt/platform/executor.hpp"

namespace mcprt::testing {

class ManualExecutor final : public Executor {
 public:
  void post(std::function<void()> fn) override { ready_.push_back(std::move(fn)); }
  TimerId post_after(Millis delay, std::function<void()> fn) override;
  bool cancel_timer(TimerId id) override;
  TimePoint now() const override { return now_; }

  // Runs posted work (and work it posts) until the queue is empty; timers do not fire.
  // Returns the number of closures run.
  std::size_t run_until_idle();
  // Runs at most one posted closure. Returns whether one ran.
  bool run_once();
  // Moves the clock forward by `d`, firing due timers in deadline order (each followed
  // by run_until_idle), so work scheduled at t+1 runs before work at t+2.
  void advance(Millis d);
  // Advances straight to the next timer's deadline and runs it; false if none.
  bool advance_to_next_timer();

  std::size_t pending_posts() const { return ready_.size(); }
  std::size_t pending_timers() const { return timers_.size(); }

 private:
  std::deque<std::function<void()>> ready_;
  // (deadline, id) orders timers with equal deadlines by creation.
  std::map<std::pair<TimePoint, TimerId>, std::function<void()>> timers_;
  std::map<TimerId, TimePoint> deadline_of_;
  TimePoint now_{Millis(0)};
  TimerId next_id_ = 1;
};

}  // namespace mcprt::testing
