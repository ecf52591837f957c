#pragma once
// Errors are values. Two families, kept apart by `ErrorCode`:
//  - wire errors (`ErrorCode::wire`): a JSON-RPC error object the peer sent; `wire_code`
//    holds its code (e.g. -32601) and `data` its optional data;
//  - local errors (every other code): something this process decided (timeout, closed,
//    exited, aborted, invalid config, ...).
// No exception crosses a core API.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <variant>

namespace mcprt {

using json = nlohmann::json;

enum class ErrorCode {
  wire,                  // the peer answered with a JSON-RPC error
  timeout,               // a deadline passed
  aborted,               // the caller cancelled
  closed,                // the transport closed (or was closed) before an answer
  exited,                // the server process exited
  not_connected,         // no live connection for the request
  invalid_config,        // a config entry or file is invalid
  protocol,              // the peer broke the protocol (bad JSON-RPC, bad result shape)
  unsupported_version,   // protocol version negotiation failed
  message_too_large,     // a framed message exceeded max_message_bytes
  transport,             // I/O failure (spawn failed, pipe error, connection refused)
  http_status,           // non-2xx HTTP answer
  invalid_argument,      // a caller passed something unusable
  internal,              // a bug or an unexpected exception, caught at a boundary
  needs_auth,            // the server wants an authorization (OAuth) that needs the user
};

const char* to_string(ErrorCode code);

// JSON-RPC 2.0 error codes used on the wire.
namespace rpc_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
}  // namespace rpc_code

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
  int wire_code = 0;  // meaningful only when code == ErrorCode::wire
  json data;          // optional details (wire `data`, HTTP status, exit code, ...)

  // Both mask secrets in `message` (URL userinfo, secret-looking query values, bearer
  // tokens; mcprt/redact.hpp), so no error text can leak them into a log, a status or a
  // tool result (SPEC §17); so are the top-level string values of `data`.
  static Error wire(int wire_code, std::string message, json data = nullptr);
  static Error make(ErrorCode code, std::string message, json data = nullptr);
  bool is_wire() const { return code == ErrorCode::wire; }

  // "timeout: Request tools/list timed out after 30000 ms" / "wire -32601: Method not found".
  std::string describe() const;
};

std::ostream& operator<<(std::ostream& os, const Error& e);

// Result<T>: a T or an Error. Result<void> holds only a possible Error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

template <class T>
std::ostream& operator<<(std::ostream& os, const Result<T>& r) {
  if (r.ok()) return os << "ok";
  return os << r.error();
}

}  // namespace mcprt
