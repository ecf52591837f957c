#include "mcprt/abort.hpp"

namespace mcprt {

const std::string& AbortSignal::reason() const {
  static const std::string kEmpty;
  return state_ ? state_->reason : kEmpty;
}

std::uint64_t AbortSignal::add_listener(std::function<void()> fn) const {
  if (!state_ || state_->aborted) return 0;
  auto id = state_->next_id++;
  state_->listeners.emplace_back(id, std::move(fn));
  return id;
}

void AbortSignal::remove_listener(std::uint64_t id) const {
  if (!state_ || id == 0) return;
  auto& ls = state_->listeners;
  for (auto it = ls.begin(); it != ls.end(); ++it) {
    if (it->first == id) {
      ls.erase(it);
      return;
    }
  }
}

void AbortController::abort(std::string reason) {
  if (state_->aborted) return;
  state_->aborted = true;
  state_->reason = std::move(reason);
  // Listeners may remove other listeners while we run; take them out first.
  auto listeners = std::move(state_->listeners);
  state_->listeners.clear();
  for (auto& [id, fn] : listeners) {
    if (fn) fn();
  }
}

}  // namespace mcprt
