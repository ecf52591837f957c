#include "mcprt/testing/manual_executor.hpp"

namespace mcprt::testing {

TimerId ManualExecutor::post_after(Millis delay, std::function<void()> fn) {
  if (delay < Millis(0)) delay = Millis(0);
  TimerId id = next_id_++;
  TimePoint at = now_ + delay;
  timers_.emplace(std::make_pair(at, id), std::move(fn));
  deadline_of_.emplace(id, at);
  return id;
}

bool ManualExecutor::cancel_timer(TimerId id) {
  auto it = deadline_of_.find(id);
  if (it == deadline_of_.end()) return false;
  timers_.erase(std::make_pair(it->second, id));
  deadline_of_.erase(it);
  return true;
}

bool ManualExecutor::run_once() {
  if (ready_.empty()) return false;
  auto fn = std::move(ready_.front());
  ready_.pop_front();
  if (fn) fn();
  return true;
}

std::size_t ManualExecutor::run_until_idle() {
  std::size_t n = 0;
  while (run_once()) ++n;
  return n;
}

void ManualExecutor::advance(Millis d) {
  TimePoint target = now_ + d;
  run_until_idle();
  while (!timers_.empty() && timers_.begin()->first.first <= target) {
    advance_to_next_timer();
  }
  now_ = target;
  run_until_idle();
}

bool ManualExecutor::advance_to_next_timer() {
  if (timers_.empty()) return false;
  auto it = timers_.begin();
  if (it->first.first > now_) now_ = it->first.first;
  auto fn = std::move(it->second);
  deadline_of_.erase(it->first.second);
  timers_.erase(it);
  if (fn) fn();
  run_until_idle();
  return true;
}

}  // namespace mcprt::testing
