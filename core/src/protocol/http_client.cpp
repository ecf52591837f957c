#include "mcprt/json_object.hpp"
#include "mcprt/platform/http_client.hpp"

#include <algorithm>

#include "util/ascii.hpp"

namespace mcprt {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && ascii::to_lower(a[i]) != ascii::to_lower(b[i])) return false;
  }
  return true;
}

HttpHeader& HttpHeaders::add(std::string name, std::string value) {
  // Moved once, into the new element (not into a temporary, then again into the vector).
  HttpHeader& field = entries_.emplace_back();
  field.name = std::move(name);
  field.value = std::move(value);
  return field;
}

void HttpHeaders::set(std::string name, std::string value) {
  remove(name);
  add(std::move(name), std::move(value));
}

void HttpHeaders::remove(std::string_view name) {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const HttpHeader& h) { return iequals(h.name, name); }),
                 entries_.end());
}

const std::string* HttpHeaders::find(std::string_view name) const {
  for (const HttpHeader& h : entries_) {
    if (iequals(h.name, name)) return &h.value;
  }
  return nullptr;
}

std::string HttpHeaders::get(std::string_view name) const {
  const std::string* v = find(name);
  return v ? *v : std::string();
}

Error make_cors_error(std::string_view url) {
  std::string message = "the browser blocked the request to " + std::string(url) +
                        " (CORS). The server must allow this page's origin "
                        "(Access-Control-Allow-Origin), allow the request headers "
                        "(Access-Control-Allow-Headers: " +
                        std::string(kCorsAllowedRequestHeaders) +
                        ") and expose the session header (Access-Control-Expose-Headers: " +
                        std::string(kCorsExposedResponseHeaders) + ")";
  return Error::make(ErrorCode::transport, std::move(message),
                     json_object({{"cors", true}, {"url", std::string(url)}}));
}

}  // namespace mcprt
