#pragma once
// Internal to platform-web/src: the one table of JS promises the C++ side waits on, for
// the seams whose JS work is a single answer (WebCrypto's digest and signature,
// WebCredentialStore's lock grants, WebAuthorizer's redirect). One exported entry point
// (mcprt_web_js_settle) and one JS helper (Module.mcprtSettle, js/web-glue.js) serve
// them all instead of a table and an export per seam.
//
// JS settles call `id` with Module.mcprtSettle(id, outcome, value): value is a string
// (UTF-8) or a Uint8Array (raw bytes), outcome a number the seam gives meaning to
// (kJsOk = success). The answer is posted to the executor given at begin_js_call and runs
// there, once — unless the call was cancelled first (cancel_js_call, cancel_js_calls_of),
// then never. Settling an unknown or cancelled id does nothing.

#include <functional>
#include <string>

#include "mcprt/platform/executor.hpp"

namespace mcprt::web::detail {

inline constexpr int kJsFailed = 0;  // value: the error's text
inline constexpr int kJsOk = 1;      // value: the result

using JsDone = std::function<void(int outcome, std::string value)>;

// Registers a call for `owner` (any address that identifies who waits) and returns its id.
int begin_js_call(const void* owner, Executor& executor, JsDone done);
// Forgets the call: its answer, if it comes, is dropped. False if it was not pending.
bool cancel_js_call(int id);
// Forgets every call `owner` started (its destructor calls this); `on_cancel(id)` runs for
// each, e.g. to tell the JS side to stop.
void cancel_js_calls_of(const void* owner, const std::function<void(int)>& on_cancel = nullptr);

}  // namespace mcprt::web::detail
