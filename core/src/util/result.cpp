#include "mcprt/result.hpp"

#include <string_view>

#include "mcprt/redact.hpp"
#include "util/local_error.hpp"

namespace mcprt {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::wire: return "wire";
    case ErrorCode::timeout: return "timeout";
    case ErrorCode::aborted: return "aborted";
    case ErrorCode::closed: return "closed";
    case ErrorCode::exited: return "exited";
    case ErrorCode::not_connected: return "not_connected";
    case ErrorCode::invalid_config: return "invalid_config";
    case ErrorCode::protocol: return "protocol";
    case ErrorCode::unsupported_version: return "unsupported_version";
    case ErrorCode::message_too_large: return "message_too_large";
    case ErrorCode::transport: return "transport";
    case ErrorCode::http_status: return "http_status";
    case ErrorCode::needs_auth: return "needs_auth";
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::internal: return "internal";
  }
  return "unknown";
}

namespace detail {

ErrorCode local_code(const Error& e) {
  if (e.code != ErrorCode::wire || !e.data.is_object()) return e.code;
  const auto named = e.data.find("transport_error");
  if (named == e.data.end() || !named->is_string()) return e.code;
  const std::string& name = named->get_ref<const std::string&>();
  // Every code, in declaration order, until to_string stops knowing one.
  for (int i = 1;; ++i) {
    const auto code = static_cast<ErrorCode>(i);
    const std::string_view known = to_string(code);
    if (known == "unknown") return e.code;
    if (name == known) return code;
  }
}

}  // namespace detail

namespace {

// The top-level strings of an error's data ({"url": ..., "location": ...}) are shown in JSON
// outputs next to the message, so they are masked the same way. Deeper values (a peer's own
// error data) are left as sent: walking them would be a recursion a server could drive.
void redact_data(json& data) {
  if (data.is_string()) {
    redact_secrets_in_place(data.get_ref<std::string&>());
  } else if (data.is_object()) {
    for (auto& item : data.items()) {
      if (item.value().is_string()) redact_secrets_in_place(item.value().get_ref<std::string&>());
    }
  }
}

}  // namespace

Error Error::wire(int wire_code, std::string message, json data) {
  redact_secrets_in_place(message);
  redact_data(data);
  return Error{ErrorCode::wire, std::move(message), wire_code, std::move(data)};
}

Error Error::make(ErrorCode code, std::string message, json data) {
  redact_secrets_in_place(message);
  redact_data(data);
  return Error{code, std::move(message), 0, std::move(data)};
}

std::string Error::describe() const {
  std::string out = to_string(code);
  if (code == ErrorCode::wire) out += " " + std::to_string(wire_code);
  out += ": ";
  out += message;
  return out;
}

std::ostream& operator<<(std::ostream& os, const Error& e) { return os << e.describe(); }

}  // namespace mcprt
