#pragma once
// A single-threaded timer queue for the demo server's event loop. The loop asks
// `next_due()` to bound its poll() timeout and calls `run_due()` after each wake-up.
// Not thread-safe: everything runs on the loop's one thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>

namespace mcprt::demo {

// What DemoServer needs from a loop: run a function later, or not at all. A front end
// (the stdio loop today, an HTTP loop later) supplies the implementation.
class Scheduler {
 public:
  using TimerId = std::uint64_t;
  virtual ~Scheduler() = default;
  // `fn` runs on the loop thread after at least `delay`, never inside this call.
  virtual TimerId call_after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  // After cancel(id) the function of `id` never runs. Unknown or finished ids are ignored.
  virtual void cancel(TimerId id) = 0;
};

class TimerQueue final : public Scheduler {
 public:
  using Clock = std::chrono::steady_clock;

  TimerId call_after(std::chrono::milliseconds delay, std::function<void()> fn) override;
  void cancel(TimerId id) override;

  // The earliest deadline, if any timer is queued.
  std::optional<Clock::time_point> next_due() const;
  // Runs every timer whose deadline is <= now, earliest first (ties in the order they
  // were added). Timers added by a running timer wait for the next call, so a timer
  // that re-arms itself with a zero delay cannot starve the loop.
  void run_due(Clock::time_point now);
  bool empty() const { return timers_.empty(); }

 private:
  // Keyed by (deadline, id): ids increase, so equal deadlines keep insertion order.
  std::map<std::pair<Clock::time_point, TimerId>, std::function<void()>> timers_;
  std::map<TimerId, Clock::time_point> deadlines_;
  TimerId next_id_ = 1;
};

}  // namespace mcprt::demo
