#include <climits>
#include <string>

#include "framing/utf8.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/framing.hpp"

namespace mcprt {

namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool has_non_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return true;
  }
  return false;
}

// The spec applies `retry` only when the value is ASCII digits; a value too large for
// a long long saturates rather than wrapping.
std::optional<long long> parse_retry(std::string_view v) {
  if (v.empty()) return std::nullopt;
  long long n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    const int d = c - '0';
    if (n > (LLONG_MAX - d) / 10) {
      n = LLONG_MAX;
    } else {
      n = n * 10 + d;
    }
  }
  return n;
}

}  // namespace

Status SseParser::too_large() {
  if (!failed_) {
    failed_ = true;
    line_.clear();
    line_.shrink_to_fit();
    data_.clear();
    data_.shrink_to_fit();
  }
  return Error::make(ErrorCode::message_too_large,
                     "event stream line or event exceeds the limit of " + std::to_string(max_) +
                         " bytes",
                     json_object({{"max_bytes", max_}}));
}

Status SseParser::feed(std::string_view bytes,
                       const std::function<void(const SseEvent&)>& on_event) {
  if (failed_) return too_large();
  if (!bom_checked_) {
    // The BOM may itself arrive split across chunks: match it byte by byte, and if the
    // stream turns out not to start with one, replay the bytes matched so far as data.
    std::size_t i = 0;
    while (i < bytes.size() && bom_matched_ < kBom.size() && bytes[i] == kBom[bom_matched_]) {
      ++bom_matched_;
      ++i;
    }
    if (bom_matched_ == kBom.size()) {
      bom_checked_ = true;
      bytes.remove_prefix(i);
    } else if (i == bytes.size()) {
      return {};  // everything so far is a BOM prefix; wait for more
    } else {
      bom_checked_ = true;
      bytes.remove_prefix(i);
      if (bom_matched_ > 0) {
        Status s = consume(kBom.substr(0, bom_matched_), on_event);
        if (!s) return s;
      }
    }
  }
  return consume(bytes, on_event);
}

Status SseParser::consume(std::string_view bytes,
                          const std::function<void(const SseEvent&)>& on_event) {
  std::size_t pos = 0;
  if (saw_cr_ && !bytes.empty()) {
    // The previous chunk ended with '\r': a '\n' right here belongs to that CRLF.
    saw_cr_ = false;
    if (bytes[0] == '\n') pos = 1;
  }
  while (pos < bytes.size()) {
    const std::size_t end = bytes.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      if (line_.size() + (bytes.size() - pos) > max_) return too_large();
      line_.append(bytes.data() + pos, bytes.size() - pos);
      break;
    }
    const std::string_view seg = bytes.substr(pos, end - pos);
    Status s;
    if (line_.empty()) {
      if (seg.size() > max_) return too_large();
      s = process_line(seg, on_event);
    } else {
      if (line_.size() + seg.size() > max_) return too_large();
      line_.append(seg);
      std::string line = std::move(line_);
      line_.clear();
      s = process_line(line, on_event);
    }
    if (!s) return s;
    if (bytes[end] == '\r') {
      if (end + 1 < bytes.size()) {
        pos = bytes[end + 1] == '\n' ? end + 2 : end + 1;
      } else {
        saw_cr_ = true;
        pos = end + 1;
      }
    } else {
      pos = end + 1;
    }
  }
  return {};
}

Status SseParser::process_line(std::string_view line,
                               const std::function<void(const SseEvent&)>& on_event) {
  std::string sanitized;
  if (has_non_ascii(line) && !detail::is_valid_utf8(line)) {
    sanitized = detail::sanitize_utf8(line);
    line = sanitized;
  }
  if (line.empty()) {
    dispatch(on_event);
    return {};
  }
  if (line.front() == ':') return {};  // comment

  std::string_view field = line;
  std::string_view value;
  const std::size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }

  if (field == "data") {
    if (data_.size() + value.size() > max_) return too_large();
    data_.append(value);
    data_.push_back('\n');
  } else if (field == "event") {
    event_type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      id_buffer_.assign(value);
      event_has_id_ = true;
    }
  } else if (field == "retry") {
    if (auto ms = parse_retry(value)) retry_ms_ = ms;
  }
  // Any other field is ignored.
  return {};
}

void SseParser::dispatch(const std::function<void(const SseEvent&)>& on_event) {
  last_id_ = id_buffer_;
  if (data_.empty()) {
    event_type_.clear();
    event_has_id_ = false;
    return;
  }
  SseEvent ev;
  if (!event_type_.empty()) ev.event = event_type_;
  ev.data = std::move(data_);
  data_.clear();
  ev.data.pop_back();  // the '\n' after the last data line
  ev.id = last_id_;
  ev.has_id = event_has_id_;
  event_type_.clear();
  event_has_id_ = false;
  if (on_event) on_event(ev);
}

}  // namespace mcprt
