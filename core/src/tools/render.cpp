// CallToolResult → ToolResult (SPEC §6 "Results", "Output cap"). The content blocks and
// structuredContent are kept as sent; `text` is what the model reads.

#include <string>
#include <utility>
#include <vector>

#include "framing/utf8.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/redact.hpp"
#include "mcprt/tools.hpp"
#include "util/local_error.hpp"

namespace mcprt {

namespace {

const std::string* string_field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

std::string mime_or_unknown(const json& block) {
  const std::string* mime = string_field(block, "mimeType");
  return mime && !mime->empty() ? *mime : std::string("unknown type");
}

std::string resource_line(const std::string* uri) {
  return "[Resource: " + (uri ? *uri : std::string("(no uri)")) + "]";
}

// The model-facing text of one block; sets `had_text` for text blocks.
std::string render_block(const json& block, bool& had_text) {
  if (!block.is_object()) return "[Invalid content block: not an object]";
  const std::string* type = string_field(block, "type");
  if (!type) return "[Invalid content block: no type]";
  if (*type == "text") {
    had_text = true;
    const std::string* text = string_field(block, "text");
    return text ? *text : std::string();
  }
  if (*type == "image") return "[Image: " + mime_or_unknown(block) + "]";
  if (*type == "audio") return "[Audio: " + mime_or_unknown(block) + "]";
  if (*type == "resource") {
    auto res = block.find("resource");
    if (res == block.end() || !res->is_object()) return "[Invalid resource block: no resource]";
    std::string out = resource_line(string_field(*res, "uri"));
    if (const std::string* text = string_field(*res, "text")) {
      out += "\n";
      out += *text;
    } else if (res->contains("blob")) {
      out += " (binary, " + mime_or_unknown(*res) + ")";
    }
    return out;
  }
  if (*type == "resource_link") {
    std::string out = resource_line(string_field(block, "uri"));
    if (const std::string* name = string_field(block, "name"); name && !name->empty()) {
      out += " " + *name;
    }
    return out;
  }
  return "[Unsupported content block: " + *type + "]";
}

ToolResult malformed(const std::string& why) {
  ToolResult r;
  r.is_error = true;
  r.text = "MCP error: malformed tool result: " + why;
  r.content = json::array({json_object({{"type", "text"}, {"text", r.text}})});
  r.error_code = ErrorCode::protocol;
  return r;
}

}  // namespace

ToolResult render_tool_result(const json& call_result, std::size_t max_result_bytes) {
  if (!call_result.is_object()) return malformed("expected an object");
  ToolResult r;
  if (auto it = call_result.find("content"); it != call_result.end()) {
    if (!it->is_array()) return malformed("\"content\" is not an array");
    r.content = *it;
  }
  if (auto it = call_result.find("isError"); it != call_result.end() && it->is_boolean()) {
    r.is_error = it->get<bool>();
  }
  if (auto it = call_result.find("structuredContent");
      it != call_result.end() && !it->is_null()) {
    r.structured_content = *it;
  }

  bool had_text = false;
  std::string text;
  bool first = true;
  for (const auto& block : r.content) {
    std::string part = render_block(block, had_text);
    if (!first) text += '\n';
    text += part;
    first = false;
  }
  // Servers that answer only with structured data still give the model something to read.
  if (!had_text && !r.structured_content.is_null()) {
    if (!first) text += '\n';
    text += r.structured_content.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  if (max_result_bytes > 0 && text.size() > max_result_bytes) {
    std::string_view kept = detail::utf8_prefix(text, max_result_bytes);
    const std::size_t dropped = text.size() - kept.size();
    text.resize(kept.size());
    text += "\n\xE2\x80\xA6[truncated " + std::to_string(dropped) + " bytes]";
    r.truncated = true;
  }
  r.text = std::move(text);
  return r;
}

ToolResult mcp_error_result(const Error& error) {
  ToolResult r;
  r.is_error = true;
  // Error::make already masks its message, but a message can be rewritten after it was made
  // (prefixed with a server name, joined with another): this is the text the model reads,
  // so it is masked again here (SPEC §17).
  r.text = "MCP error: " + redact_secrets(error.message.empty() ? error.describe() : error.message);
  r.content = json::array({json_object({{"type", "text"}, {"text", r.text}})});
  r.error_code = detail::local_code(error);
  return r;
}

}  // namespace mcprt
