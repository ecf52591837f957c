// NativeExecutor on asio (see mcprt/native/executor.hpp for what it does and does not do).
//
// post() does not hand each closure to asio. Posted closures wait in one FIFO of the
// executor's own (`posted`), and every pump runs them after each asio handler it ran,
// before it asks the reactor for more. Why: asio's scheduler, whenever its queue holds a
// handler behind its reactor task, first polls the reactor (an epoll_wait(0) syscall). A
// completion posted by an I/O handler (every RpcPeer response is one) sat exactly there,
// so each request paid one extra epoll_wait and one more trip through the scheduler.
// A post from a thread that is not pumping (another thread, or the host before it pumps)
// also queues one asio handler (`wake`) that runs the closures, so a loop blocked in
// epoll_wait wakes up as before. One FIFO for every post keeps the order of one producer.

#include "mcprt/native/executor.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

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

  // Posted closures not run yet, oldest first from `head` on (see the top of the file).
  // `spare` keeps a drained vector's capacity, so steady posting allocates nothing.
  std::mutex posted_mutex;
  std::vector<std::function<void()>> posted;
  std::size_t head = 0;
  std::vector<std::function<void()>> spare;
  bool wake_queued = false;  // a `wake` handler is in asio's queue
  // `wake` handlers that found nothing to run (a pump had run their closures already):
  // not handlers of the host's, so the pumps do not count them.
  std::size_t idle_wakes = 0;
  // The thread inside one of the pumps below; its posts need no wake-up.
  std::atomic<std::thread::id> pump_thread{};

  std::thread thread;

  Impl() { work.emplace(asio::make_work_guard(io)); }

  ~Impl() {
    // Pending closures go without running (outside the lock: what they captured may cancel
    // timers). Cancelling the timers' waits queues their (no-op) completions; destroying io
    // below destroys them without running them.
    std::vector<std::function<void()>> dropped;
    {
      std::lock_guard lock(posted_mutex);
      dropped.swap(posted);
    }
    dropped.clear();
    std::unordered_map<TimerId, std::unique_ptr<Timer>> doomed;
    {
      std::lock_guard lock(timers_mutex);
      doomed.swap(timers);
    }
    doomed.clear();  // outside the lock: a closure's destructor may cancel other timers
  }

  void post(std::function<void()> fn) {
    {
      std::lock_guard lock(posted_mutex);
      posted.push_back(std::move(fn));
      // The pumping thread runs it after the handler it is in: nothing to wake.
      if (pump_thread.load(std::memory_order_relaxed) == std::this_thread::get_id()) return;
      if (wake_queued) return;
      wake_queued = true;
    }
    asio::post(io, [this] { wake(); });
  }

  bool has_posted() {
    std::lock_guard lock(posted_mutex);
    return head < posted.size();
  }

  // The asio handler behind a post from outside the pump: runs one closure (as a handler
  // per closure did before) and queues itself again while more wait.
  void wake() {
    {
      std::lock_guard lock(posted_mutex);
      wake_queued = false;
    }
    if (run_posted(1) == 0) ++idle_wakes;
    std::lock_guard lock(posted_mutex);
    if (head < posted.size() && !wake_queued) {
      wake_queued = true;
      asio::post(io, [this] { wake(); });
    }
  }

  // Runs up to `max` of the closures posted so far (0 = all of them; not those they post
  // in turn, so a closure that keeps re-posting itself cannot starve the reactor). Stops
  // early after stop(). Returns how many ran.
  std::size_t run_posted(std::size_t max = 0) {
    std::vector<std::function<void()>> batch;
    std::size_t from = 0;
    {
      std::lock_guard lock(posted_mutex);
      if (head == posted.size()) return 0;
      if (max != 0 && posted.size() - head > max) {
        // Only the oldest `max`: move them out, the rest stay queued.
        batch.reserve(max);
        for (std::size_t i = 0; i < max; ++i) batch.push_back(std::move(posted[head + i]));
        head += max;
      } else {
        batch.swap(posted);
        from = head;
        head = 0;
        posted.swap(spare);
      }
    }
    std::size_t ran = 0;
    std::size_t i = from;
    // What is not run (stop(), or a closure threw) goes back to the front of the queue.
    struct Requeue {
      Impl& self;
      std::vector<std::function<void()>>& batch;
      std::size_t& i;
      ~Requeue() {
        std::lock_guard lock(self.posted_mutex);
        if (i < batch.size()) {
          std::vector<std::function<void()>> rest;
          rest.reserve(batch.size() - i + self.posted.size() - self.head);
          for (; i < batch.size(); ++i) rest.push_back(std::move(batch[i]));
          for (std::size_t k = self.head; k < self.posted.size(); ++k) {
            rest.push_back(std::move(self.posted[k]));
          }
          self.posted.swap(rest);
          self.head = 0;
        }
        batch.clear();
        if (self.spare.capacity() < batch.capacity()) self.spare.swap(batch);
      }
    } requeue{*this, batch, i};
    while (i < batch.size()) {
      if (io.stopped()) break;
      auto fn = std::move(batch[i++]);
      fn();
      ++ran;
    }
    return ran;
  }

  // Marks the calling thread as the pumping one for the scope (pumps may nest).
  struct PumpScope {
    explicit PumpScope(Impl& impl)
        : impl(impl), previous(impl.pump_thread.exchange(std::this_thread::get_id())) {}
    ~PumpScope() { impl.pump_thread.store(previous); }
    Impl& impl;
    std::thread::id previous;
  };

  // Runs `f` (an io_context pump) and returns how many handlers it ran, idle wakes not
  // counted.
  template <class F>
  std::size_t counted(F f) {
    const std::size_t idle_before = idle_wakes;
    const std::size_t ran = f();
    return ran - (idle_wakes - idle_before);
  }

  // The pump loop of run(), run_for() and run_until(): asio handlers, each followed by the
  // closures it posted, until `done()`, stop() or `deadline` (none: until stop()). Returns
  // the number of handlers and closures run.
  template <class Done>
  std::size_t pump(const Done& done,
                   std::optional<std::chrono::steady_clock::time_point> deadline) {
    std::size_t n = 0;
    while (!done()) {
      if (io.stopped()) break;
      const auto now = std::chrono::steady_clock::now();
      if (deadline && now >= *deadline) break;
      if (std::size_t ran = run_posted()) {
        n += ran;
        // Closures posted by those closures: give the reactor a turn first (non-blocking).
        if (has_posted() && !done()) n += counted([&] { return io.poll_one(); });
        continue;
      }
      if (deadline) {
        n += counted([&] { return io.run_one_for(*deadline - now); });
      } else {
        n += counted([&] { return io.run_one(); });
      }
    }
    return n;
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

void NativeExecutor::post(std::function<void()> fn) { impl_->post(std::move(fn)); }

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
  Impl::PumpScope scope(*impl_);
  impl_->prepare_pump();
  return impl_->pump([] { return false; }, std::nullopt);
}

std::size_t NativeExecutor::run_once() {
  Impl::PumpScope scope(*impl_);
  impl_->prepare_pump();
  for (;;) {
    if (impl_->run_posted(1) == 1) return 1;
    if (impl_->io.stopped()) return 0;
    const std::size_t idle_before = impl_->idle_wakes;
    if (impl_->io.run_one() == 0) return 0;
    // A `wake` whose closures an earlier pump already ran is not a handler of the host's.
    if (impl_->idle_wakes == idle_before) return 1;
  }
}

std::size_t NativeExecutor::poll() {
  Impl::PumpScope scope(*impl_);
  impl_->prepare_pump();
  std::size_t n = 0;
  for (;;) {
    std::size_t ran = impl_->run_posted();
    ran += impl_->counted([&] { return impl_->io.poll(); });
    if (ran == 0 || impl_->io.stopped()) return n + ran;
    n += ran;
  }
}

std::size_t NativeExecutor::run_for(Millis duration) {
  Impl::PumpScope scope(*impl_);
  impl_->prepare_pump();
  return impl_->pump([] { return false; }, std::chrono::steady_clock::now() + duration);
}

bool NativeExecutor::run_until(const std::function<bool()>& pred, Millis limit) {
  Impl::PumpScope scope(*impl_);
  impl_->prepare_pump();
  impl_->pump(pred, std::chrono::steady_clock::now() + limit);
  return pred();
}

void NativeExecutor::stop() { impl_->io.stop(); }

void NativeExecutor::start_thread() {
  if (impl_->thread.joinable()) return;
  impl_->prepare_pump();
  impl_->thread = std::thread([impl = impl_.get()] {
    Impl::PumpScope scope(*impl);
    impl->pump([] { return false; }, std::nullopt);
  });
}

void NativeExecutor::stop_thread() {
  if (!impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
}

bool NativeExecutor::in_loop_thread() const {
  return impl_->pump_thread.load() == std::this_thread::get_id() ||
         impl_->io.get_executor().running_in_this_thread();
}

std::size_t NativeExecutor::pending_timers() const {
  std::lock_guard lock(impl_->timers_mutex);
  return impl_->timers.size();
}

boost::asio::io_context& NativeExecutor::io_context() { return impl_->io; }

}  // namespace mcprt::native
