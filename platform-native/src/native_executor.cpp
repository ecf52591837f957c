// NativeExecutor on asio (see mcprt/native/executor.hpp for what it does and does not do).

#include "mcprt/native/executor.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace mcprt::native {

namespace asio = boost::asio;

struct NativeExecutor::Impl {
  struct Timer {
    explicit Timer(asio::io_context& io) : timer(io) {}
    asio::steady_timer timer;
    std::function<void()> fn;
  };

  // Declared first so it is destroyed last: timers and the work guard refer to it.
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;

  // Guards timers and next_timer_id: post_after/cancel_timer may come from other threads
  // while the loop thread fires timers.
  mutable std::mutex timers_mutex;
  std::unordered_map<TimerId, std::unique_ptr<Timer>> timers;
  TimerId next_timer_id = 1;

  std::thread thread;

  Impl() { work.emplace(asio::make_work_guard(io)); }

  ~Impl() {
    // Cancelling the waits queues their (no-op) completions; destroying io below
    // destroys them without running them.
    std::unordered_map<TimerId, std::unique_ptr<Timer>> doomed;
    {
      std::lock_guard lock(timers_mutex);
      doomed.swap(timers);
    }
    doomed.clear();  // outside the lock: a closure's destructor may cancel other timers
  }

  void fire(TimerId id) {
    std::function<void()> fn;
    {
      std::lock_guard lock(timers_mutex);
      auto it = timers.find(id);
      if (it == timers.end()) return;  // cancelled after the wait had already completed
      fn = std::move(it->second->fn);
      timers.erase(it);
    }
    fn();
  }

  // A pump after stop() must run again: asio keeps the context stopped until restart().
  void prepare_pump() {
    if (io.stopped()) io.restart();
  }
};

NativeExecutor::NativeExecutor() : impl_(std::make_unique<Impl>()) {}

NativeExecutor::~NativeExecutor() { stop_thread(); }

void NativeExecutor::post(std::function<void()> fn) { asio::post(impl_->io, std::move(fn)); }

TimerId NativeExecutor::post_after(Millis delay, std::function<void()> fn) {
  auto timer = std::make_unique<Impl::Timer>(impl_->io);
  timer->fn = std::move(fn);
  timer->timer.expires_after(delay < Millis(0) ? Millis(0) : delay);
  std::lock_guard lock(impl_->timers_mutex);
  TimerId id = impl_->next_timer_id++;
  Impl* impl = impl_.get();
  timer->timer.async_wait([impl, id](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: cancel_timer already forgot it
    impl->fire(id);
  });
  impl_->timers.emplace(id, std::move(timer));
  return id;
}

bool NativeExecutor::cancel_timer(TimerId id) {
  std::unique_ptr<Impl::Timer> victim;
  {
    std::lock_guard lock(impl_->timers_mutex);
    auto it = impl_->timers.find(id);
    if (it == impl_->timers.end()) return false;
    victim = std::move(it->second);
    impl_->timers.erase(it);
    victim->timer.cancel();
  }
  // The closure (and whatever it captured) is destroyed outside the lock: its destructor
  // may cancel other timers.
  return true;
}

TimePoint NativeExecutor::now() const {
  return std::chrono::time_point_cast<Millis>(std::chrono::steady_clock::now());
}

std::size_t NativeExecutor::run() {
  impl_->prepare_pump();
  return impl_->io.run();
}

std::size_t NativeExecutor::run_once() {
  impl_->prepare_pump();
  return impl_->io.run_one();
}

std::size_t NativeExecutor::poll() {
  impl_->prepare_pump();
  return impl_->io.poll();
}

std::size_t NativeExecutor::run_for(Millis duration) {
  impl_->prepare_pump();
  return impl_->io.run_for(duration);
}

bool NativeExecutor::run_until(const std::function<bool()>& pred, Millis limit) {
  impl_->prepare_pump();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || impl_->io.stopped()) return pred();
    impl_->io.run_one_for(deadline - now);
  }
  return true;
}

void NativeExecutor::stop() { impl_->io.stop(); }

void NativeExecutor::start_thread() {
  if (impl_->thread.joinable()) return;
  impl_->prepare_pump();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

void NativeExecutor::stop_thread() {
  if (!impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
}

bool NativeExecutor::in_loop_thread() const {
  return impl_->io.get_executor().running_in_this_thread();
}

std::size_t NativeExecutor::pending_timers() const {
  std::lock_guard lock(impl_->timers_mutex);
  return impl_->timers.size();
}

boost::asio::io_context& NativeExecutor::io_context() { return impl_->io; }

}  // namespace mcprt::native
