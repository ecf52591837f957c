#pragma once
// The Executor seam and mcprt's async contract.
//
// THE ASYNC CONTRACT (every callback-taking API in mcprt follows it):
//  1. If starting an operation fails, the error is returned from the call and the
//     callback never fires.
//  2. A callback never runs inside the call that started the operation; it always
//     arrives later through the owning object's Executor.
//  3. Every operation can be cancelled (a handle, an AbortSignal, or closing the owner).
//     After cancellation the callback either does not run, or runs exactly once with
//     ErrorCode::aborted (the API says which) — never both, never twice.
//  4. Completions run on the Executor the owning object was created with. Core objects
//     are single-threaded: call them only from their executor's thread.
//
// Lifetime: an object that schedules work on an executor cancels its timers in its
// destructor; posted closures hold weak references where the object may die first.

#include <chrono>
#include <cstdint>
#include <functional>

namespace mcprt {

using Millis = std::chrono::milliseconds;
// A monotonic instant, in milliseconds since an executor-defined origin.
using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Millis>;

using TimerId = std::uint64_t;
inline constexpr TimerId kNoTimer = 0;

class Executor {
 public:
  virtual ~Executor() = default;

  // Runs `fn` later on the executor's thread. Native executors allow calls from any
  // thread (this is how platform threads hand results to the core).
  virtual void post(std::function<void()> fn) = 0;

  // Runs `fn` on the executor's thread once `delay` has passed. Executor thread only.
  virtual TimerId post_after(Millis delay, std::function<void()> fn) = 0;

  // Cancels a timer that has not fired yet. Returns false when it already ran, was
  // already cancelled, or is unknown. Executor thread only.
  virtual bool cancel_timer(TimerId id) = 0;

  // Monotonic now.
  virtual TimePoint now() const = 0;
};

// RAII holder for a timer: cancels it on reset or destruction.
class ScopedTimer {
 public:
  ScopedTimer() = default;
  ScopedTimer(Executor& ex, TimerId id) : ex_(&ex), id_(id) {}
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;
  ScopedTimer(ScopedTimer&& o) noexcept : ex_(o.ex_), id_(o.id_) { o.id_ = kNoTimer; }
  ScopedTimer& operator=(ScopedTimer&& o) noexcept {
    if (this != &o) {
      reset();
      ex_ = o.ex_;
      id_ = o.id_;
      o.id_ = kNoTimer;
    }
    return *this;
  }
  ~ScopedTimer() { reset(); }

  void reset() {
    if (ex_ && id_ != kNoTimer) ex_->cancel_timer(id_);
    id_ = kNoTimer;
  }
  // Forget the timer without cancelling (call from inside the timer's own callback).
  void release() { id_ = kNoTimer; }
  bool active() const { return id_ != kNoTimer; }

 private:
  Executor* ex_ = nullptr;
  TimerId id_ = kNoTimer;
};

}  // namespace mcprt
