// WebExecutor: the JS event loop as mcprt's Executor (see web_executor.hpp).
#include "mcprt/web/web_executor.hpp"

#include <emscripten/emscripten.h>

#include <chrono>

namespace {

std::map<int, mcprt::web::WebExecutor*>& executors() {
  static std::map<int, mcprt::web::WebExecutor*> m;
  return m;
}
int g_next_executor = 1;

}  // namespace

extern "C" {
EMSCRIPTEN_KEEPALIVE void mcprt_web_fire_timer(int executor_id, double timer_id) {
  mcprt::web::WebExecutor::fire(executor_id, static_cast<mcprt::TimerId>(timer_id));
}
EMSCRIPTEN_KEEPALIVE void mcprt_web_drain(int executor_id) { mcprt::web::WebExecutor::drain(executor_id); }
}

// One macrotask that runs the executor's queue. setImmediate (Node) and MessageChannel
// (browsers, workers) are not clamped like nested setTimeout(0).
EM_JS(void, mcprt_js_schedule_drain, (int executor_id), {
  var run = function() { Module["_mcprt_web_drain"](executor_id); };
  if (typeof setImmediate == "function") { setImmediate(run); return; }
  if (typeof MessageChannel == "function") {
    var channel = Module["mcprtDrainChannel"];
    if (!channel) {
      channel = new MessageChannel();
      channel.queue = [];
      channel.port1.onmessage = function() { var fn = channel.queue.shift(); if (fn) fn(); };
      Module["mcprtDrainChannel"] = channel;
    }
    channel.queue.push(run);
    channel.port2.postMessage(0);
    return;
  }
  setTimeout(run, 0);
});

EM_JS(int, mcprt_js_set_timeout, (int executor_id, double timer_id, double delay_ms), {
  return setTimeout(function() { Module["_mcprt_web_fire_timer"](executor_id, timer_id); },
                    delay_ms);
});
EM_JS(void, mcprt_js_clear_timeout, (int handle), { clearTimeout(handle); });
EM_JS(double, mcprt_js_now_ms, (), { return performance.now(); });

namespace mcprt::web {

WebExecutor::WebExecutor() : id_(g_next_executor++) { executors()[id_] = this; }

WebExecutor::~WebExecutor() {
  executors().erase(id_);  // a drain or timer already scheduled in JS finds nothing
  // Closures may own objects whose destructors cancel timers or post: release them while
  // the queues are still valid (and empty), until nothing is left.
  while (!tasks_.empty() || !posted_.empty()) {
    auto tasks = std::move(tasks_);
    tasks_.clear();
    auto posted = std::move(posted_);
    posted_.clear();
    for (auto& [id, task] : tasks) mcprt_js_clear_timeout(task.js_handle);
  }
}

void WebExecutor::post(std::function<void()> fn) {
  posted_.push_back(std::move(fn));
  if (drain_scheduled_) return;
  drain_scheduled_ = true;
  mcprt_js_schedule_drain(id_);
}

void WebExecutor::drain(int executor_id) {
  auto ex = executors().find(executor_id);
  if (ex == executors().end()) return;
  WebExecutor* self = ex->second;
  self->drain_scheduled_ = false;
  // Only what was queued before this drain: later posts get the next macrotask. Each
  // closure is read by index (a post may grow the vector) and moved out before it runs;
  // the ones not yet run stay in posted_, where the destructor releases them.
  const std::size_t n = self->posted_.size();
  for (std::size_t i = 0; i < n; ++i) {
    auto fn = std::move(self->posted_[i]);
    if (fn) fn();
    // The closure may have destroyed the executor.
    if (executors().find(executor_id) == executors().end()) return;
  }
  self->posted_.erase(self->posted_.begin(), self->posted_.begin() + static_cast<std::ptrdiff_t>(n));
  if (!self->posted_.empty() && !self->drain_scheduled_) {
    self->drain_scheduled_ = true;
    mcprt_js_schedule_drain(executor_id);
  }
}

TimerId WebExecutor::post_after(Millis delay, std::function<void()> fn) {
  TimerId id = next_++;
  auto& task = tasks_[id];
  task.fn = std::move(fn);
  task.js_handle = mcprt_js_set_timeout(id_, static_cast<double>(id),
                                        static_cast<double>(delay.count() < 0 ? 0 : delay.count()));
  return id;
}

bool WebExecutor::cancel_timer(TimerId id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return false;
  mcprt_js_clear_timeout(it->second.js_handle);
  tasks_.erase(it);
  return true;
}

TimePoint WebExecutor::now() const {
  return TimePoint(Millis(static_cast<long long>(mcprt_js_now_ms())));
}

void WebExecutor::fire(int executor_id, TimerId id) {
  auto ex = executors().find(executor_id);
  if (ex == executors().end()) return;
  auto& tasks = ex->second->tasks_;
  auto it = tasks.find(id);
  if (it == tasks.end()) return;
  auto fn = std::move(it->second.fn);
  tasks.erase(it);
  if (fn) fn();
}

}  // namespace mcprt::web
