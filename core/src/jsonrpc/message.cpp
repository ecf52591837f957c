#include "mcprt/json_object.hpp"
#include "jsonrpc/message.hpp"

#include <cmath>
#include <limits>
#include <utility>

namespace mcprt::detail {
namespace {

Message invalid(std::string problem, LooksLike looks_like, json id = nullptr) {
  Message m;
  m.kind = MessageKind::invalid;
  m.problem = std::move(problem);
  m.looks_like = looks_like;
  m.id = std::move(id);
  return m;
}

// The `error` member of a response. Code and message are required by the spec; a
// server that leaves them out still meant "this failed", so we keep what it said.
Error wire_error_from(const json& err) {
  int code = rpc_code::kInternalError;
  std::string message = "(no message)";
  json data = nullptr;
  if (auto it = err.find("code"); it != err.end() && it->is_number_integer()) {
    const auto v = it->get<std::int64_t>();
    if (v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max()) {
      code = static_cast<int>(v);
    }
  }
  if (auto it = err.find("message"); it != err.end() && it->is_string()) {
    message = it->get<std::string>();
  }
  if (auto it = err.find("data"); it != err.end()) data = *it;
  return Error::wire(code, std::move(message), std::move(data));
}

// The recursion of dispose_json: empties `value`'s containers, deepest first, for
// `levels` levels.
void empty_containers(json& value, int levels) {
  if (levels == 0) return;  // left for nlohmann's destructor
  if (value.is_object()) {
    auto& members = value.get_ref<json::object_t&>();
    for (auto& member : members) empty_containers(member.second, levels - 1);
    members.clear();
  } else if (value.is_array()) {
    auto& elements = value.get_ref<json::array_t&>();
    for (auto& element : elements) empty_containers(element, levels - 1);
    elements.clear();
  }
}

constexpr int kDisposeRecursionLevels = 32;

}  // namespace

void dispose_json(json& value) {
  empty_containers(value, kDisposeRecursionLevels);
  value = nullptr;
}

bool is_valid_id(const json& id) { return id.is_string() || id.is_number(); }

std::optional<std::int64_t> id_as_integer(const json& id) {
  if (id.is_number_unsigned()) {
    const auto v = id.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(v);
  }
  if (id.is_number_integer()) return id.get<std::int64_t>();
  if (id.is_number_float()) {
    const double d = id.get<double>();
    // 2^53: beyond it doubles no longer hold every integer, so equality means nothing.
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) <= 9007199254740992.0) {
      return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
  }
  if (id.is_string()) {
    const auto& s = id.get_ref<const std::string&>();
    if (s.empty() || s.size() > 18) return std::nullopt;  // 18 digits always fit in int64
    std::int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  }
  return std::nullopt;
}

Message classify_message(json&& raw) {
  if (!raw.is_object()) {
    return invalid("a message must be a JSON object, got " + describe_json(raw, 60),
                   LooksLike::nothing);
  }
  const auto method_it = raw.find("method");
  const auto id_it = raw.find("id");
  const bool has_id = id_it != raw.end();
  const bool has_result = raw.contains("result");
  const bool has_error = raw.contains("error");
  const LooksLike looks_like = method_it != raw.end()      ? LooksLike::request
                               : (has_result || has_error) ? LooksLike::response
                                                           : LooksLike::nothing;
  json id = has_id ? *id_it : json(nullptr);

  const auto version_it = raw.find("jsonrpc");
  if (version_it == raw.end() || !version_it->is_string() ||
      version_it->get_ref<const std::string&>() != "2.0") {
    return invalid("missing or wrong \"jsonrpc\": \"2.0\" member", looks_like, std::move(id));
  }

  if (method_it != raw.end()) {
    if (!method_it->is_string()) {
      return invalid("\"method\" is not a string", LooksLike::request, std::move(id));
    }
    if (has_id && !is_valid_id(id)) {
      return invalid("request id must be a string or a number", LooksLike::request);
    }
    Message m;
    m.kind = has_id ? MessageKind::request : MessageKind::notification;
    m.id = std::move(id);
    m.method = method_it->get<std::string>();
    if (auto p = raw.find("params"); p != raw.end()) m.params = std::move(*p);
    return m;
  }

  if (has_result || has_error) {
    if (has_result && has_error) {
      return invalid("a response has both \"result\" and \"error\"", LooksLike::response,
                     std::move(id));
    }
    // An error response may carry a null id (the peer could not read ours).
    if (!has_id || !(is_valid_id(id) || (has_error && id.is_null()))) {
      return invalid("response id is missing or not a string or number", LooksLike::response,
                     std::move(id));
    }
    Message m;
    m.kind = MessageKind::response;
    m.id = std::move(id);
    if (has_result) {
      m.result = std::move(raw["result"]);
    } else {
      const json& err = raw["error"];
      if (!err.is_object()) {
        return invalid("\"error\" is not an object: " + describe_json(err, 100),
                       LooksLike::response, std::move(m.id));
      }
      m.error = wire_error_from(err);
    }
    return m;
  }

  if (has_id) {
    return invalid("a response has neither \"result\" nor \"error\"", LooksLike::response,
                   std::move(id));
  }
  return invalid("neither a request, a notification nor a response", LooksLike::nothing);
}

json make_request(const json& id, const std::string& method, json params) {
  json m = json_object({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}});
  // JSON-RPC lets a request without parameters omit the member.
  if (!params.is_null()) m["params"] = std::move(params);
  return m;
}

json make_notification(const std::string& method, json params) {
  json m = json_object({{"jsonrpc", "2.0"}, {"method", method}});
  if (!params.is_null()) m["params"] = std::move(params);
  return m;
}

json make_result_response(const json& id, json result) {
  json m = json_object({{"jsonrpc", "2.0"}, {"id", id}});
  m["result"] = std::move(result);  // moved, never copied (json_object copies its values)
  return m;
}

json make_error_response(const json& id, int code, const std::string& message, const json& data) {
  json err = json_object({{"code", code}, {"message", message}});
  if (!data.is_null()) err["data"] = data;
  json m = json_object({{"jsonrpc", "2.0"}, {"id", id}});
  m["error"] = std::move(err);
  return m;
}

std::string describe_json(const json& value, std::size_t max_chars) {
  // `replace` keeps dump() from throwing on strings that are not valid UTF-8 (they can
  // come from callers; parsed input is already validated by the parser).
  std::string s = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > max_chars) {
    s.resize(max_chars);
    s += "...";
  }
  return s;
}

}  // namespace mcprt::detail
