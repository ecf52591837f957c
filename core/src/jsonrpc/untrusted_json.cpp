#include "mcprt/json_object.hpp"
#include "jsonrpc/untrusted_json.hpp"

#include <cstring>
#include <optional>
#include <utility>

#include "framing/utf8.hpp"
#include "jsonrpc/raw_json.hpp"

namespace mcprt::detail {
namespace {

const char* skip_ws(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  return p;
}

// `p` is just past an opening quote; returns the closing quote, or `end` when the string
// does not end. A quote is escaped when an odd number of backslashes precedes it, which
// is exact for valid JSON and harmless for anything else (the parser rejects it later).
// memchr keeps this close to memory speed on the long strings that dominate real messages.
const char* string_end(const char* p, const char* end) {
  const char* from = p;
  while (p < end) {
    const void* hit = std::memchr(p, '"', static_cast<std::size_t>(end - p));
    if (!hit) return end;
    const char* q = static_cast<const char*>(hit);
    std::size_t backslashes = 0;
    for (const char* b = q; b > from && b[-1] == '\\'; --b) ++backslashes;
    if (backslashes % 2 == 0) return q;
    p = q + 1;
  }
  return end;
}

Error parse_failure(const char* reason, std::size_t offset, std::string message) {
  return Error::make(ErrorCode::protocol, std::move(message),
                     json_object({{"reason", reason}, {"byte_offset", offset}}));
}

// The raw token of a scalar value starting at `p` (a number, literal or anything up to
// the next delimiter).
const char* scalar_end(const char* p, const char* end) {
  while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
         *p != '\n' && *p != '\r') {
    ++p;
  }
  return p;
}

// Skips one value of any depth starting at `p` (already at its first byte). Depth is a
// counter, not recursion. Returns `end` when the text stops first.
const char* skip_value(const char* p, const char* end) {
  if (p >= end) return end;
  if (*p == '"') {
    const char* q = string_end(p + 1, end);
    return q == end ? end : q + 1;
  }
  if (*p != '[' && *p != '{') return scalar_end(p, end);
  std::size_t depth = 0;
  for (; p < end; ++p) {
    if (*p == '"') {
      p = string_end(p + 1, end);
      if (p == end) return end;
    } else if (*p == '[' || *p == '{') {
      ++depth;
    } else if (*p == ']' || *p == '}') {
      if (--depth == 0) return p + 1;
    }
  }
  return end;
}

}  // namespace

Result<json> parse_untrusted_json(std::string_view text, const JsonLimits& limits) {
  JsonSyntaxError error;
  json value = limits.raw_tool_schemas
                   ? parse_json_keeping_raw_tool_schemas(text, &error, limits.max_nesting_levels)
                   : parse_json(text, /*allow_comments=*/false, &error, limits.max_nesting_levels);
  if (!value.is_discarded()) return value;
  if (error.too_deep) {
    return parse_failure(kJsonTooDeep, error.position,
                         "JSON nesting deeper than " + std::to_string(limits.max_nesting_levels) +
                             " levels at byte " + std::to_string(error.position));
  }
  const std::size_t offset = error.position > 0 ? error.position - 1 : 0;
  if (error.message.find("ill-formed UTF-8") != std::string::npos) {
    return parse_failure(kJsonInvalidUtf8, offset, "invalid UTF-8 at byte " + std::to_string(offset));
  }
  return parse_failure(kJsonSyntax, offset,
                       "not JSON at byte " + std::to_string(offset) + ": " + error.message);
}

ShallowMessageScan scan_message_envelope(std::string_view text) {
  ShallowMessageScan out;
  const char* p = text.data();
  const char* const end = p + text.size();
  p = skip_ws(p, end);
  if (p >= end || *p != '{') return out;
  ++p;
  bool have_id = false;
  while (true) {
    p = skip_ws(p, end);
    if (p >= end || *p != '"') return out;
    const char* key_begin = p + 1;
    const char* key_end = string_end(key_begin, end);
    if (key_end == end) return out;
    const std::string_view key(key_begin, static_cast<std::size_t>(key_end - key_begin));
    p = skip_ws(key_end + 1, end);
    if (p >= end || *p != ':') return out;
    p = skip_ws(p + 1, end);
    if (p >= end) return out;
    const char* value_begin = p;
    p = skip_value(p, end);
    // The first "id" wins: a later duplicate is as likely to be the wrong one.
    if (key == "id" && !have_id) {
      have_id = true;
      const std::string_view raw(value_begin, static_cast<std::size_t>(p - value_begin));
      if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
        const std::string_view inner = raw.substr(1, raw.size() - 2);
        if (inner.find('\\') == std::string_view::npos && is_valid_utf8(inner)) {
          out.id = std::string(inner);
        }
      } else if (!raw.empty() && raw.size() <= 32 && (raw.front() == '-' || (raw.front() >= '0' && raw.front() <= '9'))) {
        // Only a number we can echo as the server wrote it: an integer past 64 bits, or
        // 1E2, would come back as another number's text (1.28e+20, 100.0), an id the
        // server never sent.
        json number = parse_json(raw);
        if (number.is_number_integer() || (number.is_number_float() && number.dump() == raw)) {
          out.id = std::move(number);
        }
      }
    } else if (key == "method") {
      out.has_method = true;
    }
    p = skip_ws(p, end);
    if (p >= end || *p != ',') return out;
    ++p;
  }
}

void report_unreadable_message(std::string_view text, const Error& parse_error,
                               const std::string& prefix, Logger* logger,
                               const TransportHandlers& handlers, std::size_t shown_bytes) {
  ShallowMessageScan scan = scan_message_envelope(text);
  UnreadableMessage message;
  message.problem = parse_error.message;
  message.id = std::move(scan.id);
  message.has_method = scan.has_method;
  message.size_bytes = text.size();
  if (logger) {
    std::string line = prefix + "unreadable message (" + std::to_string(text.size()) + " bytes";
    if (!message.id.is_null()) {
      line += ", id " + message.id.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    line += "): " + message.problem;
    if (shown_bytes > 0) {
      line += ": " + sanitize_utf8(utf8_prefix(text, shown_bytes));
      if (text.size() > shown_bytes) line += "...";
    }
    logger->warn(line);
  }
  // A copy: the handler may close the transport, which clears `handlers`.
  if (auto on_unreadable = handlers.on_unreadable) on_unreadable(message);
}

}  // namespace mcprt::detail
