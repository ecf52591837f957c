#include "timer_queue.hpp"

#include <vector>

namespace mcprt::demo {

Scheduler::TimerId TimerQueue::call_after(std::chrono::milliseconds delay,
                                          std::function<void()> fn) {
  if (delay.count() < 0) delay = std::chrono::milliseconds(0);
  const TimerId id = next_id_++;
  const auto due = Clock::now() + delay;
  timers_.emplace(std::make_pair(due, id), std::move(fn));
  deadlines_.emplace(id, due);
  return id;
}

void TimerQueue::cancel(TimerId id) {
  auto it = deadlines_.find(id);
  if (it == deadlines_.end()) return;
  timers_.erase(std::make_pair(it->second, id));
  deadlines_.erase(it);
}

std::optional<TimerQueue::Clock::time_point> TimerQueue::next_due() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.begin()->first.first;
}

void TimerQueue::run_due(Clock::time_point now) {
  // Take the due batch first: a timer may cancel or add others while it runs.
  std::vector<TimerId> due;
  for (const auto& [key, fn] : timers_) {
    if (key.first > now) break;
    due.push_back(key.second);
  }
  for (TimerId id : due) {
    auto d = deadlines_.find(id);
    if (d == deadlines_.end()) continue;  // cancelled by an earlier timer of this batch
    auto node = timers_.extract(std::make_pair(d->second, id));
    deadlines_.erase(d);
    if (!node.empty() && node.mapped()) node.mapped()();
  }
}

}  // namespace mcprt::demo
