#pragma once
// The two HTTP transports behind make_http_transport (http_transport.hpp), for the
// factory and the auto-fallback wrapper. Internal to core/src/protocol.

#include <functional>
#include <memory>

#include "mcprt/transport.hpp"
#include "protocol/http_common.hpp"

namespace mcprt::detail {

// Called when the first `initialize` POST got an HTTP answer that is not 2xx (never for a
// stateless 2026-07-28 message: only an initialize may move a server to legacy SSE). Returning
// true means "someone else takes over": the Streamable transport then stops silently (no
// on_close, no further handler) and may be destroyed on a later executor turn.
using InitializeRejectedHook = std::function<bool(const HttpFailure&)>;

std::unique_ptr<Transport> make_streamable_http_transport(std::shared_ptr<HttpConnection> conn,
                                                          InitializeRejectedHook hook = {});

// `fallback_note`, when set, is appended to a close error that happens before the first
// message arrived ("after Streamable HTTP answered HTTP 405 to initialize").
std::unique_ptr<Transport> make_legacy_sse_transport(std::shared_ptr<HttpConnection> conn,
                                                     std::string fallback_note = {});

}  // namespace mcprt::detail
