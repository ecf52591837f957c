#pragma once
// The local ErrorCode behind an error a request failed with.

#include "mcprt/result.hpp"

namespace mcprt::detail {

// `e.code`, except for an HTTP transport failure relayed to the JSON-RPC layer as an error
// response (code kHttpTransportErrorCode, data.transport_error: see http_transport.hpp),
// which arrives as ErrorCode::wire: then the code data.transport_error names (needs_auth,
// timeout, http_status, ...). A server could send such data itself; all it gets is its
// own request read as that failure.
ErrorCode local_code(const Error& e);

}  // namespace mcprt::detail
