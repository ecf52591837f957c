#pragma once
// Framing shared by both platforms: the newline framer (stdio) and the SSE event parser
// (HTTP). Both are push parsers: feed bytes in any chunking, get whole frames out.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "mcprt/result.hpp"

namespace mcprt {

// Splits a byte stream into lines ("\n", with an optional preceding "\r" stripped).
// Empty lines are skipped. A line longer than max_line_bytes is an error: feed() returns
// ErrorCode::message_too_large and the framer stops (it keeps no more than
// max_line_bytes of a pending line in memory).
class NewlineFramer {
 public:
  explicit NewlineFramer(std::size_t max_line_bytes = 64u * 1024 * 1024)
      : max_(max_line_bytes) {}
  // Calls on_line for each complete line in order. Stops at the first error.
  Status feed(std::string_view bytes, const std::function<void(std::string_view line)>& on_line);
  std::size_t buffered() const { return buf_.size(); }

 private:
  std::size_t max_;
  std::string buf_;
  bool failed_ = false;
};

// One Server-Sent Event (WHATWG HTML "event stream" interpretation).
struct SseEvent {
  std::string event = "message";  // the `event:` field, "message" when absent
  std::string data;               // `data:` lines joined with "\n"
  std::string id;                 // the last event id seen (sticky, per the spec)
  bool has_id = false;            // this event carried an `id:` field
};

// Push parser for text/event-stream: handles any chunk boundaries (inside a field name,
// between \r and \n), CR/LF/CRLF line ends, a UTF-8 BOM, comments, `retry:`, and
// `id:` with NUL (ignored). An event over max_event_bytes is an error.
class SseParser {
 public:
  explicit SseParser(std::size_t max_event_bytes = 64u * 1024 * 1024) : max_(max_event_bytes) {}
  Status feed(std::string_view bytes, const std::function<void(const SseEvent&)>& on_event);
  // The last `retry:` value in ms, if any.
  std::optional<long long> retry_ms() const { return retry_ms_; }
  const std::string& last_event_id() const { return last_id_; }

 private:
  void process_line(std::string_view line, const std::function<void(const SseEvent&)>& on_event);
  std::size_t max_;
  std::string line_;
  bool saw_cr_ = false;
  bool bom_checked_ = false;
  bool failed_ = false;
  std::string event_type_;
  std::string data_;
  bool has_data_ = false;
  bool event_has_id_ = false;
  std::string last_id_;
  std::optional<long long> retry_ms_;
};

}  // namespace mcprt
