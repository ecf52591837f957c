// CallToolResult → ToolResult (SPEC §6 "Results", "Output cap"; SPEC §16 "Output caps").
// The content blocks and structuredContent are kept as sent; `text` is what the model
// reads, cut to the tool's cap keeping its head and its tail (tool_result_cap,
// cut_result_text).

#include <algorithm>
#include <cstdint>
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

// 1234567 → "1,234,567".
std::string with_thousands(std::size_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string cut_marker(std::size_t cut, std::size_t total, std::string_view path) {
  std::string m =
      "\n\xE2\x80\xA6[cut " + with_thousands(cut) + " of " + with_thousands(total) + " bytes";
  if (!path.empty()) {
    m += "; the full result is in ";
    m += path;
  }
  m += "]\n";
  return m;
}

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

ToolResult malformed(const std::string& why) {
  ToolResult r;
  r.is_error = true;
  r.text = "MCP error: malformed tool result: " + why;
  r.content = json::array({json_object({{"type", "text"}, {"text", r.text}})});
  r.error_code = ErrorCode::protocol;
  return r;
}

}  // namespace

std::size_t tool_result_cap(const json& definition, std::size_t configured) {
  if (configured == 0 || !definition.is_object()) return configured;
  auto meta = definition.find("_meta");
  if (meta == definition.end() || !meta->is_object()) return configured;
  auto value = meta->find("anthropic/maxResultSizeChars");
  if (value == meta->end()) return configured;
  // nlohmann keeps a non-negative integer as unsigned, a negative one as signed, and one
  // too large for 64 bits (or with a fraction or an exponent) as a double: only the first
  // two are integers here.
  std::uint64_t asked = 0;
  if (value->is_number_unsigned()) {
    asked = value->get<std::uint64_t>();
  } else if (value->is_number_integer() && value->get<std::int64_t>() > 0) {
    asked = static_cast<std::uint64_t>(value->get<std::int64_t>());
  }
  if (asked == 0) return configured;
  const auto raised =
      static_cast<std::size_t>(std::min<std::uint64_t>(asked, kMaxToolResultCapOverride));
  return std::max(configured, raised);
}

std::string cut_result_text(std::string_view text, std::size_t max_bytes,
                            std::string_view full_text_path) {
  if (max_bytes == 0 || text.size() <= max_bytes) return std::string(text);
  const std::size_t total = text.size();
  // The marker is sized for the largest count it can show (everything cut), so the text
  // the cut keeps never pushes it over the cap.
  std::string widest = cut_marker(total, total, full_text_path);
  if (widest.size() >= max_bytes) return widest;
  const std::size_t budget = max_bytes - widest.size();

  std::size_t head = detail::utf8_prefix(text, budget - budget / 2).size();
  if (const std::size_t window = head / 10; window > 0) {
    const std::size_t nl = text.substr(0, head).rfind('\n');
    if (nl != std::string_view::npos && nl >= head - window) head = nl;
  }
  std::size_t tail = total - budget / 2;
  for (int i = 0; i < 3 && tail < total && is_utf8_continuation(text[tail]); ++i) ++tail;
  if (const std::size_t window = (total - tail) / 10; window > 0) {
    const std::size_t nl = text.find('\n', tail);
    if (nl != std::string_view::npos && nl < tail + window) tail = nl + 1;
  }

  std::string out;
  out.reserve(max_bytes);
  out.append(text.substr(0, head));
  out += cut_marker(tail - head, total, full_text_path);
  out.append(text.substr(tail));
  return out;
}

ToolResult render_tool_result(const json& call_result, std::size_t max_result_bytes) {
  return render_tool_result(call_result, max_result_bytes, nullptr);
}

ToolResult render_tool_result(
    const json& call_result, std::size_t max_result_bytes,
    const std::function<std::optional<std::string>(std::string_view full_text)>& spill) {
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
    r.truncated = true;
    r.full_bytes = text.size();
    if (spill) {
      r.full_text_path = spill(text);
      if (r.full_text_path && r.full_text_path->empty()) r.full_text_path.reset();
    }
    r.text = cut_result_text(
        text, max_result_bytes,
        r.full_text_path ? std::string_view(*r.full_text_path) : std::string_view());
    return r;
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
