// The shared table of JS promises the web seams wait on (see web_js_calls.hpp).
#include "web_js_calls.hpp"

#include <emscripten/emscripten.h>

#include <map>
#include <utility>
#include <vector>

namespace mcprt::web::detail {
namespace {

struct JsCall {
  const void* owner = nullptr;
  Executor* executor = nullptr;
  JsDone done;
  bool settled = false;  // the answer is on its way through the executor
};

std::map<int, JsCall>& calls() {
  static std::map<int, JsCall> table;
  return table;
}
int g_next_call = 1;

}  // namespace

int begin_js_call(const void* owner, Executor& executor, JsDone done) {
  const int id = g_next_call++;
  calls()[id] = JsCall{owner, &executor, std::move(done), false};
  return id;
}

bool cancel_js_call(int id) {
  auto it = calls().find(id);
  if (it == calls().end()) return false;
  JsDone done = std::move(it->second.done);
  calls().erase(it);
  return true;  // `done` (which may own core objects) is released here, outside the table
}

void cancel_js_calls_of(const void* owner, const std::function<void(int)>& on_cancel) {
  std::vector<int> ids;
  for (const auto& [id, call] : calls()) {
    if (call.owner == owner) ids.push_back(id);
  }
  for (int id : ids) {
    if (cancel_js_call(id) && on_cancel) on_cancel(id);
  }
}

}  // namespace mcprt::web::detail

// Called by Module.mcprtSettle (js/web-glue.js) with the value in wasm memory.
extern "C" EMSCRIPTEN_KEEPALIVE void mcprt_web_js_settle(int id, int outcome, const char* bytes,
                                                         int size) {
  using namespace mcprt::web::detail;
  auto it = calls().find(id);
  if (it == calls().end() || it->second.settled) return;
  it->second.settled = true;
  std::string value(bytes ? bytes : "", bytes && size > 0 ? static_cast<std::size_t>(size) : 0);
  // Looked up again when it runs: a cancel in between wins.
  it->second.executor->post([id, outcome, value = std::move(value)]() mutable {
    auto call = calls().find(id);
    if (call == calls().end()) return;
    JsDone done = std::move(call->second.done);
    calls().erase(call);
    if (done) done(outcome, std::move(value));
  });
}
