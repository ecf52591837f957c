#pragma once
// AbortController / AbortSignal: the cancellation token of the async contract
// (executor.hpp). Single-threaded: create, abort and observe on one executor.
// Listeners run synchronously inside abort(), in registration order, once.

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mcprt {

class AbortSignal {
 public:
  AbortSignal() = default;  // a signal that never aborts

  bool aborted() const { return state_ && state_->aborted; }
  // It may still abort: it came from an AbortController and has not aborted yet.
  bool can_abort() const { return state_ && !state_->aborted; }
  const std::string& reason() const;

  // Registers `fn` to run when the signal aborts. Returns an id for remove_listener.
  // If the signal is already aborted the listener is not stored and 0 is returned;
  // check aborted() first. A default signal stores nothing.
  std::uint64_t add_listener(std::function<void()> fn) const;
  void remove_listener(std::uint64_t id) const;

 private:
  friend class AbortController;
  struct State {
    bool aborted = false;
    std::string reason;
    std::uint64_t next_id = 1;
    std::vector<std::pair<std::uint64_t, std::function<void()>>> listeners;
  };
  explicit AbortSignal(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

class AbortController {
 public:
  AbortController() : state_(std::make_shared<AbortSignal::State>()) {}
  AbortSignal signal() const { return AbortSignal(state_); }
  // Idempotent: the first call wins and runs the listeners.
  void abort(std::string reason = "aborted");

 private:
  std::shared_ptr<AbortSignal::State> state_;
};

}  // namespace mcprt
