#pragma once
// Framing shared by both platforms: the newline framer (stdio) and the SSE event parser
// (HTTP). Both are push parsers: feed bytes in any chunking, get whole frames out.
// Both are synchronous (callbacks run inside feed()) and single-threaded; they do no I/O.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "mcprt/result.hpp"

namespace mcprt {

// Splits a byte stream into lines ("\n", with an optional preceding "\r" stripped).
// Empty lines are skipped. A line longer than max_line_bytes (not counting its "\r\n" or
// "\n") is an error: feed() returns ErrorCode::message_too_large and the framer stops
// (it keeps no more than max_line_bytes + 1 bytes of a pending line in memory, the +1
// being a possible "\r" whose "\n" has not arrived yet). After an error every feed()
// returns the error again without calling on_line.
//
// The `line` view passed to on_line is valid only during that call.
class NewlineFramer {
 public:
  explicit NewlineFramer(std::size_t max_line_bytes = 64u * 1024 * 1024)
      : max_(max_line_bytes) {}
  // Calls on_line for each complete line in order. Stops at the first error.
  Status feed(std::string_view bytes, const std::function<void(std::string_view line)>& on_line);
  // Bytes of an incomplete line held back until its "\n" arrives.
  std::size_t buffered() const { return buf_.size(); }
  bool failed() const { return failed_; }
  std::size_t max_line_bytes() const { return max_; }

 private:
  Status too_large(std::size_t seen);
  std::size_t max_;
  std::string buf_;
  bool failed_ = false;
};

// One Server-Sent Event (WHATWG HTML "event stream" interpretation).
struct SseEvent {
  std::string event = "message";  // the `event:` field, "message" when absent or empty
  std::string data;               // `data:` lines joined with "\n" (no trailing "\n")
  std::string id;                 // the last event id seen (sticky, per the spec)
  bool has_id = false;            // this event's block carried a (non-ignored) `id:` field
};

// Push parser for text/event-stream, following the WHATWG "event stream interpretation":
//  - any chunk boundaries (inside a field name, inside a UTF-8 sequence, between \r and \n);
//  - CR, LF and CRLF line ends; one leading UTF-8 BOM is skipped;
//  - lines starting with ':' are comments; a line without ':' is a field with an empty
//    value; one space after the colon is stripped;
//  - `data` lines are joined with "\n"; an event whose data buffer is empty (no `data`
//    field at all) is not dispatched, but a bare `data` line dispatches an empty string;
//  - `event` sets the type (default "message"); `id` is sticky across events and an id
//    containing NUL is ignored; `retry` is applied only when its value is all ASCII digits;
//    unknown fields are ignored;
//  - invalid UTF-8 is replaced by U+FFFD, as the spec's decoder does;
//  - an incomplete event at end of stream is never dispatched (the spec discards it).
// A line (field name, colon and value) or an event's data longer than max_event_bytes is
// an error, whatever the chunking: feed() returns ErrorCode::message_too_large and the
// parser stops (every later feed() returns it again). Memory stays within about twice
// max_event_bytes.
class SseParser {
 public:
  explicit SseParser(std::size_t max_event_bytes = 64u * 1024 * 1024) : max_(max_event_bytes) {}
  Status feed(std::string_view bytes, const std::function<void(const SseEvent&)>& on_event);
  // The last `retry:` value in ms, if any.
  std::optional<long long> retry_ms() const { return retry_ms_; }
  // The last event id (the spec's "last event ID string", updated on each dispatch);
  // what a reconnect sends as Last-Event-ID.
  const std::string& last_event_id() const { return last_id_; }
  bool failed() const { return failed_; }

 private:
  Status consume(std::string_view bytes, const std::function<void(const SseEvent&)>& on_event);
  Status process_line(std::string_view line, const std::function<void(const SseEvent&)>& on_event);
  void dispatch(const std::function<void(const SseEvent&)>& on_event);
  Status too_large();

  std::size_t max_;
  std::string line_;         // an incomplete line carried over between feeds
  bool saw_cr_ = false;      // the previous byte ended a line with '\r' (skip a following '\n')
  bool bom_checked_ = false;  // the first bytes were checked for a BOM
  std::size_t bom_matched_ = 0;  // BOM bytes seen so far while still checking
  bool failed_ = false;
  std::string event_type_;   // the spec's "event type buffer"
  std::string data_;         // the spec's "data buffer" (each line followed by '\n')
  std::string id_buffer_;    // the spec's "last event ID buffer"
  bool event_has_id_ = false;
  std::string last_id_;      // the spec's "last event ID string"
  std::optional<long long> retry_ms_;
};

}  // namespace mcprt
