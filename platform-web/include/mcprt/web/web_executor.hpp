#pragma once
// Browser/Node event-loop executor for the wasm build.
// [x] post            → a C++ FIFO drained by one JS macrotask per batch (setImmediate in
//                       Node, a MessageChannel message in browsers, else setTimeout 0):
//                       callbacks never nest inside the poster's JS frame, and a chain of
//                       posts does not pay the browsers' 4 ms clamp on nested setTimeout
// [x] post_after      → setTimeout, cancel_timer → clearTimeout
// [x] now             → performance.now() (monotonic)
// [ ] threads         → none: everything runs on the JS event loop (no pthreads, no Asyncify)
//
// A drain runs the closures queued when it starts; closures they post wait for the next
// macrotask, so I/O callbacks (fetch, IndexedDB) interleave with long chains of posts.

#include <functional>
#include <map>
#include <vector>

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
  // Called from JS for a scheduled drain (exported as mcprt_web_drain).
  static void drain(int executor_id);

 private:
  struct Task {
    std::function<void()> fn;
    int js_handle = 0;
  };
  int id_;
  TimerId next_ = 1;
  std::map<TimerId, Task> tasks_;
  // The posted closures in order; a drain runs a prefix of them and then erases it. (A
  // vector, not a std::deque: the module has no deque instantiation then, ~1 KB gzip.)
  std::vector<std::function<void()>> posted_;
  bool drain_scheduled_ = false;
};

}  // namespace mcprt::web
