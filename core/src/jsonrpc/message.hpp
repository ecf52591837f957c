#pragma once
// The JSON-RPC 2.0 message model: classifying what arrived (request, notification,
// response, or something invalid) and building what we send. Pure functions over
// untrusted JSON: nothing here throws or reads a field without checking its type.

#include <cstdint>
#include <optional>
#include <string>

#include "mcprt/result.hpp"

namespace mcprt::detail {

enum class MessageKind {
  request,       // method + id
  notification,  // method, no id
  response,      // id + exactly one of result / error
  invalid,       // anything else; `problem` says why
};

// What an invalid message most looks like, so the peer can answer it the right way
// (a broken request gets -32600; a broken response fails the request it names).
enum class LooksLike { nothing, request, response };

struct Message {
  MessageKind kind = MessageKind::invalid;
  json id;                     // request/response id; null when absent or unusable
  std::string method;          // request / notification
  json params;                 // request / notification; null when absent
  json result;                 // response, when it is a success
  std::optional<Error> error;  // response, when it is an error (always ErrorCode::wire)
  // Only for kind == invalid.
  std::string problem;
  LooksLike looks_like = LooksLike::nothing;
};

// Classifies one message (not a batch). Moves the large members out of `raw`.
Message classify_message(json&& raw);

// A JSON-RPC id is a string or a number. (null is only allowed in error responses.)
bool is_valid_id(const json& id);

// The integer an id stands for, when it stands for one: an integer number, an integral
// float, or a string of decimal digits (some servers echo numeric ids as strings).
std::optional<std::int64_t> id_as_integer(const json& id);

json make_request(const json& id, const std::string& method, json params);
json make_notification(const std::string& method, json params);
json make_result_response(const json& id, json result);
json make_error_response(const json& id, int code, const std::string& message,
                         const json& data = nullptr);

// Frees `value`, leaving it null, without allocating. nlohmann's destructor frees a
// non-empty object or array through a work stack it allocates (a std::vector the size of
// the container) so that a deep DOM cannot overflow the call stack; this empties the
// containers from the leaves up, so that each is empty when freed. It recurses at most
// 32 levels: anything deeper is freed by nlohmann's own destructor (with its work stack),
// as a DOM a caller built can be arbitrarily deep.
void dispose_json(json& value);

// A short, never-throwing rendering of untrusted JSON for logs and error messages.
std::string describe_json(const json& value, std::size_t max_chars = 200);

}  // namespace mcprt::detail
