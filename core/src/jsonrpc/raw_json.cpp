#include "jsonrpc/raw_json.hpp"

#include <utility>
#include <vector>

namespace mcprt::detail {

json make_raw_json(std::string_view text) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  return json::binary(std::vector<std::uint8_t>(bytes, bytes + text.size()), kRawJsonSubtype);
}

bool is_raw_json(const json& value) {
  if (!value.is_binary()) return false;
  const json::binary_t& binary = value.get_binary();
  return binary.has_subtype() && binary.subtype() == kRawJsonSubtype;
}

std::string_view raw_json_text(const json& value) {
  if (!is_raw_json(value)) return {};
  const json::binary_t& binary = value.get_binary();
  return {reinterpret_cast<const char*>(binary.data()), binary.size()};
}

json parse_raw_json(const json& placeholder) {
  // The text was checked when it was kept, depth included: it parses.
  json value = parse_json(raw_json_text(placeholder));
  return value.is_discarded() ? json() : value;
}

void restore_raw_schema(json& definition) {
  if (!definition.is_object()) return;
  auto schema = definition.find("inputSchema");
  if (schema != definition.end() && is_raw_json(*schema)) *schema = parse_raw_json(*schema);
}

namespace {

// message.result.tools, when it is an array.
template <class Json>
Json* listed_tools(Json& message) {
  if (!message.is_object()) return nullptr;
  auto result = message.find("result");
  if (result == message.end() || !result->is_object()) return nullptr;
  auto tools = result->find("tools");
  return tools != result->end() && tools->is_array() ? &*tools : nullptr;
}

void dump_value(const json& value, std::string& out) {
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// An object's members as dump() writes them, each value by `write(key, value)`.
template <class Write>
void dump_members(const json& object, std::string& out, const Write& write) {
  out += '{';
  bool first = true;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!first) out += ',';
    first = false;
    dump_value(json(it.key()), out);
    out += ':';
    write(it.key(), it.value());
  }
  out += '}';
}

void dump_levels(const json& value, std::string& out, int levels) {
  if (is_raw_json(value)) {
    out += raw_json_text(value);
    return;
  }
  if (levels == 0 || !value.is_structured()) return dump_value(value, out);
  bool first = true;
  if (value.is_array()) {
    out += '[';
    for (const json& element : value) {
      if (!first) out += ',';
      first = false;
      dump_levels(element, out, levels - 1);
    }
    out += ']';
    return;
  }
  dump_members(value, out, [&](const std::string&, const json& member) {
    dump_levels(member, out, levels - 1);
  });
}

}  // namespace

void dump_with_raw_member(const json& object, std::string_view key, std::string_view raw,
                          std::string& out) {
  dump_members(object, out, [&](const std::string& name, const json& member) {
    if (name == key) {
      out += raw;
    } else {
      dump_value(member, out);
    }
  });
}

void restore_raw_tool_schemas(json& message) {
  if (json* tools = listed_tools(message)) {
    for (json& tool : *tools) restore_raw_schema(tool);
  }
}

bool has_raw_tool_schemas(const json& message) {
  const json* tools = listed_tools(message);
  if (!tools) return false;
  for (const json& tool : *tools) {
    if (!tool.is_object()) continue;
    auto schema = tool.find("inputSchema");
    if (schema != tool.end() && is_raw_json(*schema)) return true;
  }
  return false;
}

void dump_keeping_raw(const json& value, std::string& out) { dump_levels(value, out, 3); }

}  // namespace mcprt::detail
