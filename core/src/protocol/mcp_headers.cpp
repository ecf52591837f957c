// The 2026-07-28 request headers and their value encoding (mcprt/mcp_headers.hpp has the
// rules). The schema walk visits every subschema once, so a hostile schema costs time
// linear in its size; its depth is already bounded by the JSON parser's nesting limit.

#include "mcprt/json_object.hpp"
#include "mcprt/mcp_headers.hpp"

#include <cmath>
#include <cstdint>
#include <string_view>

#include "auth/oauth_wire.hpp"
#include "jsonrpc/raw_json.hpp"

namespace mcprt {

namespace {

constexpr std::string_view kAnnotation = "x-mcp-header";
constexpr std::string_view kSentinelPrefix = "=?base64?";
constexpr std::string_view kSentinelSuffix = "?=";
// 2^53 − 1: the integers a JavaScript peer reads exactly (the spec's allowed range).
constexpr std::int64_t kMaxSafeInteger = 9007199254740991;

bool looks_like_sentinel(std::string_view text) {
  return text.size() >= kSentinelPrefix.size() + kSentinelSuffix.size() &&
         text.substr(0, kSentinelPrefix.size()) == kSentinelPrefix &&
         text.substr(text.size() - kSentinelSuffix.size()) == kSentinelSuffix;
}

// Visible ASCII and inner spaces only: what an HTTP field value carries unchanged and
// every intermediary reads back the same (no tab, whose handling varies, no CR/LF).
bool is_safe_ascii(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E) return false;
  }
  return text.empty() || (text.front() != ' ' && text.back() != ' ');
}

std::string encode_text(std::string text) {
  if (is_safe_ascii(text) && !looks_like_sentinel(text)) return text;
  return std::string(kSentinelPrefix) + detail::oauth::base64(text) + std::string(kSentinelSuffix);
}

// RFC 9110 §5.6.2 tchar.
bool is_tchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return kSymbols.find(c) != std::string_view::npos;
}

bool is_token(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

std::string lower_ascii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// A name from a hostile schema, shown in a message: JSON-quoted (escapes control
// characters and quotes) and cut to a readable length.
std::string shown_name(const std::string& text) {
  constexpr std::size_t kShown = 80;
  std::string shown = text.size() > kShown ? text.substr(0, kShown) + "..." : text;
  return json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string path_text(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& key : path) {
    if (!out.empty()) out += '.';
    out += key;
  }
  return out;
}

// Keywords whose values are instance data, not subschemas: an "x-mcp-header" member
// inside them is not an annotation.
bool holds_data(std::string_view keyword) {
  return keyword == "const" || keyword == "default" || keyword == "enum" || keyword == "examples";
}

// The primitive type a property's `type` names, or "" when it names none (missing,
// number, object, array, null, several types).
std::string primitive_type(const json& schema) {
  const auto type = schema.find("type");
  if (type == schema.end()) return {};
  auto primitive = [](const json& t) {
    return t.is_string() && (t == "string" || t == "integer" || t == "boolean");
  };
  if (primitive(*type)) return type->get<std::string>();
  if (!type->is_array()) return {};
  // ["string", "null"]: a nullable primitive (null is simply not mirrored).
  std::string found;
  for (const json& t : *type) {
    if (t == "null") continue;
    if (!primitive(t) || !found.empty()) return {};
    found = t.get<std::string>();
  }
  return found;
}

std::string type_text(const json& schema) {
  const auto type = schema.find("type");
  if (type == schema.end()) return "no type";
  return "type " + type->dump(-1, ' ', false, json::error_handler_t::replace);
}

class AnnotationWalk {
 public:
  explicit AnnotationWalk(std::string tool) : prefix_("tool " + shown_name(tool) + ": ") {}

  // `node` is a subschema; `reachable`: it is the root or reached from it through
  // `properties` keys only; `path`: those keys; `trail`: every key from inputSchema down
  // (for messages about an annotation that is not reachable).
  void visit(const json& node, bool reachable, std::vector<std::string>& path,
             std::vector<std::string>& trail) {
    if (error_) return;
    if (node.is_array()) {
      for (std::size_t i = 0; i < node.size() && !error_; ++i) {
        trail.push_back(std::to_string(i));
        visit(node[i], false, path, trail);
        trail.pop_back();
      }
      return;
    }
    if (!node.is_object()) return;
    if (const auto a = node.find(kAnnotation); a != node.end()) {
      check(node, *a, reachable && !path.empty(), path, trail);
      if (error_) return;
    }
    for (const auto& [keyword, value] : node.items()) {
      if (error_) return;
      if (keyword == kAnnotation || holds_data(keyword)) continue;
      trail.push_back(keyword);
      if (keyword == "properties" && value.is_object()) {
        // Its keys are property names (a property may even be called "x-mcp-header").
        for (const auto& [name, subschema] : value.items()) {
          path.push_back(name);
          trail.push_back(name);
          visit(subschema, reachable, path, trail);
          trail.pop_back();
          path.pop_back();
          if (error_) break;
        }
      } else {
        visit(value, false, path, trail);
      }
      trail.pop_back();
    }
  }

  std::optional<Error> error_;
  std::vector<McpHeaderParam> params_;

 private:
  void fail(const std::vector<std::string>& path, const std::string& why) {
    error_ = Error::make(ErrorCode::protocol,
                         prefix_ + "property " + shown_name(path_text(path)) + ": " + why,
                         json_object({{"path", path}}));
  }

  void check(const json& schema, const json& annotation, bool reachable,
             const std::vector<std::string>& path, const std::vector<std::string>& trail) {
    if (!annotation.is_string()) {
      fail(path, "x-mcp-header must be a string, not " +
                     annotation.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 80));
      return;
    }
    const std::string& header = annotation.get_ref<const std::string&>();
    if (header.empty()) {
      fail(path, "x-mcp-header is empty");
      return;
    }
    if (!is_token(header)) {
      fail(path, "x-mcp-header " + shown_name(header) + " is not an RFC 9110 token");
      return;
    }
    if (!reachable) {
      // Named by where it sits: inputSchema/properties/a/items, inputSchema/anyOf/0, ...
      std::string where = "inputSchema";
      for (const std::string& key : trail) where += "/" + key;
      error_ =
          Error::make(ErrorCode::protocol,
                      prefix_ + "x-mcp-header " + shown_name(header) + " at " + shown_name(where) +
                          " is not on a property reachable from the schema root through properties "
                          "alone (not under items, composition, conditional or reference keywords, "
                          "nor on the root itself)",
                      json_object({{"at", where}}));
      return;
    }
    if (primitive_type(schema).empty()) {
      fail(path, "x-mcp-header " + shown_name(header) + " is on a property of " +
                     type_text(schema) + " (only string, integer and boolean may be mirrored)");
      return;
    }
    const std::string key = lower_ascii(header);
    for (const McpHeaderParam& earlier : params_) {
      if (lower_ascii(earlier.header) == key) {
        fail(path, "x-mcp-header " + shown_name(header) + " duplicates " +
                       shown_name(earlier.header) + " of property " +
                       shown_name(path_text(earlier.path)) +
                       " (header names are case-insensitive)");
        return;
      }
    }
    params_.push_back({path.back(), header, path});
  }

  std::string prefix_;
};

}  // namespace

std::optional<std::string> mcp_header_value(const json& value) {
  if (value.is_string()) return encode_text(value.get<std::string>());
  if (value.is_boolean()) return std::string(value.get<bool>() ? "true" : "false");
  if (value.is_number_unsigned()) {
    const std::uint64_t n = value.get<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(kMaxSafeInteger)) return std::nullopt;
    return std::to_string(n);
  }
  if (value.is_number_integer()) {
    const std::int64_t n = value.get<std::int64_t>();
    if (n > kMaxSafeInteger || n < -kMaxSafeInteger) return std::nullopt;
    return std::to_string(n);
  }
  if (value.is_number_float()) {
    // JSON Schema's integer is any number without a fractional part (42.0 is one).
    const double d = value.get<double>();
    if (!std::isfinite(d) || d != std::trunc(d)) return std::nullopt;
    if (d > static_cast<double>(kMaxSafeInteger) || d < -static_cast<double>(kMaxSafeInteger)) {
      return std::nullopt;
    }
    return std::to_string(static_cast<std::int64_t>(d));
  }
  return std::nullopt;
}

Result<std::vector<McpHeaderParam>> x_mcp_header_params(const json& tool) {
  if (!tool.is_object()) return std::vector<McpHeaderParam>{};
  const auto schema = tool.find("inputSchema");
  if (schema == tool.end()) return std::vector<McpHeaderParam>{};
  // A schema kept raw (raw_json.hpp) is parsed only when its text can hold the key: as it
  // is, or with a character written as a backslash-u escape (the only escape that can
  // stand for one of its characters).
  json parsed;
  const json* walked = &*schema;
  if (detail::is_raw_json(*schema)) {
    const std::string_view text = detail::raw_json_text(*schema);
    if (text.find("x-mcp-header") == std::string_view::npos &&
        text.find("\\u") == std::string_view::npos) {
      return std::vector<McpHeaderParam>{};
    }
    parsed = detail::parse_raw_json(*schema);
    walked = &parsed;
  }
  const auto name = tool.find("name");
  AnnotationWalk walk(name != tool.end() && name->is_string() ? name->get<std::string>()
                                                              : std::string("(unnamed)"));
  std::vector<std::string> path;
  std::vector<std::string> trail;
  walk.visit(*walked, /*reachable=*/true, path, trail);
  if (walk.error_) return std::move(*walk.error_);
  return std::move(walk.params_);
}

HeaderList mcp_param_headers(const std::vector<McpHeaderParam>& params, const json& arguments) {
  HeaderList out;
  for (const McpHeaderParam& p : params) {
    const json* at = &arguments;
    for (const std::string& key : p.path) {
      if (!at->is_object()) {
        at = nullptr;
        break;
      }
      const auto next = at->find(key);
      if (next == at->end()) {
        at = nullptr;
        break;
      }
      at = &*next;
    }
    if (at == nullptr || p.path.empty()) continue;
    if (std::optional<std::string> v = mcp_header_value(*at)) {
      out.emplace_back("Mcp-Param-" + p.header, std::move(*v));
    }
  }
  return out;
}

HeaderList modern_request_headers(const std::string& version, const std::string& method,
                                  const json& params) {
  HeaderList out;
  out.emplace_back("MCP-Protocol-Version", version);
  out.emplace_back("Mcp-Method", method);
  const char* field = nullptr;
  if (method == "tools/call" || method == "prompts/get") {
    field = "name";
  } else if (method == "resources/read") {
    field = "uri";
  }
  if (field != nullptr && params.is_object()) {
    if (const auto v = params.find(field); v != params.end() && v->is_string()) {
      out.emplace_back("Mcp-Name", encode_text(v->get<std::string>()));
    }
  }
  return out;
}

}  // namespace mcprt
