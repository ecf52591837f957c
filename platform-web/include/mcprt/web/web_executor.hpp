#pragma once
// Browser/Node event-loop executor for the wasm build.
// [x] post            → queueMicrotask-free: setTimeout(0) so callbacks never nest in JS frames
// [x] post_after      → setTimeout, cancel_timer → clearTimeout
// [x] now             → performance.now() (monotonic)
// [ ] threads         → none: everything runs on the JS event loop (no pthreads, no Asyncify)

#include <functional>
#include <map>

#include "mcprt/platform/executor.hpp"

namespace mcprt::web {

class WebExecutor final : public Executor {
 public:
  WebExecutor();
  ~WebExecutor() override;
  WebExecutor(const WebExecutor&) = delete;
  WebExecutor& operator=(const WebExecutor&) = delete;

  void post(std::function<void()> fn) override;
  TimerId post_after(Millis delay, std::function<void()> fn) override;
  bool cancel_timer(TimerId id) override;
  TimePoint now() const override;

  // Called from JS when timer `id` fires (exported as mcprt_web_fire_timer).
  static void fire(int executor_id, TimerId id);

 private:
  struct Task {
    std::function<void()> fn;
    int js_handle = 0;
  };
  int id_;
  TimerId next_ = 1;
  std::map<TimerId, Task> tasks_;
};

}  // namespace mcprt::web
