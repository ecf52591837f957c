#pragma once
// NativeExecutor: the native Executor, an asio io_context owned by the executor.
//
// Implements:
//  [x] Executor::post — thread-safe, from any thread (platform threads hand results here).
//      One FIFO for all posts; a closure posted while a pump runs an asio handler runs
//      right after that handler, before the pump waits for I/O again (no reactor poll in
//      between: a response's completion costs no extra epoll_wait)
//  [x] Executor::post_after / cancel_timer — asio steady_timer; also safe from other
//      threads (stronger than the seam asks), but the callback always runs on the loop
//  [x] Executor::now — std::chrono::steady_clock
//  [x] blocking pumps for hosts and tests (DESIGN: "blocking convenience wrappers live in
//      platform-native"): run(), run_once(), poll(), run_for(), run_until()
//  [x] an optional background loop thread: start_thread() / stop_thread()
//  [ ] no multi-threaded run(): exactly one thread pumps the loop at a time, because core
//      objects are single-threaded (executor.hpp, rule 4)
//
// Two ways to drive it (pick one per executor):
//  1. Pump from your own thread: `ex.run()` until `ex.stop()`, or the bounded pumps
//     `run_for` / `run_until` (tests and the CLI). The thread that pumps IS the loop
//     thread; call core objects only from it (or before/after pumping).
//  2. `ex.start_thread()`: a background thread runs the loop until `stop_thread()` (or
//     destruction). Then talk to core objects only through `post`.
//
// The loop never runs out of work (a work guard is held), so run() returns only after
// stop(). stop() ends the current pump; the next pump starts afresh.
//
// Lifetime: destroy every object that uses the executor (streams, sessions, timers
// holders) before the executor. Pending posted closures and timers are destroyed
// without running when the executor is destroyed.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "mcprt/platform/executor.hpp"

namespace boost::asio {
class io_context;
}

namespace mcprt::native {

class NativeExecutor final : public Executor {
 public:
  NativeExecutor();
  ~NativeExecutor() override;
  NativeExecutor(const NativeExecutor&) = delete;
  NativeExecutor& operator=(const NativeExecutor&) = delete;

  // --- Executor ---
  void post(std::function<void()> fn) override;
  TimerId post_after(Millis delay, std::function<void()> fn) override;
  bool cancel_timer(TimerId id) override;
  TimePoint now() const override;

  // --- Pumps (call from the thread that owns the loop; not while start_thread() runs) ---
  // Runs until stop(). Returns the number of handlers run.
  std::size_t run();
  // Blocks until one handler ran (or stop()). Returns 1 or 0.
  std::size_t run_once();
  // Runs the handlers that are ready now, without blocking.
  std::size_t poll();
  // Runs handlers for `duration` (or until stop()).
  std::size_t run_for(Millis duration);
  // Runs handlers until `pred()` is true or `limit` passed (or stop()). `pred` is checked
  // before the first handler and after each one. Returns the final value of `pred()`.
  bool run_until(const std::function<bool()>& pred, Millis limit);
  // Makes the current pump (or the background thread's run) return. Thread-safe.
  void stop();

  // --- Background loop thread ---
  // Starts a thread running the loop until stop_thread(). No-op when already started.
  void start_thread();
  // Stops and joins the background thread. No-op when none runs. Not from the loop thread.
  void stop_thread();

  // True on the thread currently pumping this executor.
  bool in_loop_thread() const;
  // Number of timers scheduled and not yet fired or cancelled (for tests and leak checks).
  std::size_t pending_timers() const;

  // Native-only accessor for platform code (pipes, sockets, signal sets) that must live on
  // this loop. Core code never sees asio.
  boost::asio::io_context& io_context();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcprt::native
