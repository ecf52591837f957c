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
}

EM_JS(int, mcprt_js_set_timeout, (int executor_id, double timer_id, double delay_ms), {
  return setTimeout(function() { Module["_mcprt_web_fire_timer"](executor_id, timer_id); },
                    delay_ms);
});
EM_JS(void, mcprt_js_clear_timeout, (int handle), { clearTimeout(handle); });
EM_JS(double, mcprt_js_now_ms, (), { return performance.now(); });

namespace mcprt::web {

WebExecutor::WebExecutor() : id_(g_next_executor++) { executors()[id_] = this; }

WebExecutor::~WebExecutor() {
  for (auto& [id, task] : tasks_) mcprt_js_clear_timeout(task.js_handle);
  executors().erase(id_);
}

void WebExecutor::post(std::function<void()> fn) { post_after(Millis(0), std::move(fn)); }

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
