#pragma once
// The response-head reader behind NativeHttpClient: raw header lines in (as libcurl's
// header callback hands them over: the status line, each field line, the blank line that
// ends a head, and after a chunked body the trailer lines), status and fields out, with
// caps on the field count and the byte size so a hostile server cannot make the client
// hold more than a bounded amount (SPEC §17 "Bounded input").
//
// Pure code: no I/O, no libcurl, no threads; it depends on the standard library and
// mcprt::HttpHeaders only, so a fuzz target can drive it on its own (feed_block()).
//
// What counts against the caps: every line of the exchange's heads — interim 1xx heads and
// the final head together, so an endless run of "100 Continue" heads hits the byte cap as
// well. A line's bytes count with its line ending. The trailer block after a chunked body
// has caps of its own (the same numbers); its fields are read and dropped.
//
// Lenient where servers are sloppy and it costs nothing: a bare LF ends a line like CRLF,
// obsolete line folding (a line starting with SP/HT) continues the previous value, a field
// line without a colon or with a name that is not a token is skipped (but counted). Strict
// where it matters: the first line must be an HTTP status line with a 3-digit status.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "mcprt/platform/http_client.hpp"

namespace mcprt::native::detail {

// An RFC 9110 token (a method or a field name): one or more visible ASCII characters, none
// of them a delimiter.
bool is_http_token(std::string_view s);

// Header text without CR, LF or NUL: what may go on the wire verbatim (they would split or
// cut a line there).
bool is_safe_header_text(std::string_view s);

struct ResponseHeadLimits {
  // Header fields (field lines, folded continuations excluded) per block.
  std::size_t max_fields = 256;
  // Bytes of all lines of a block, line endings included.
  std::size_t max_bytes = 64 * 1024;
};

class ResponseHeadReader {
 public:
  // What the line just fed completed.
  enum class Event {
    more,          // keep feeding
    interim_head,  // a 1xx head ended (not 101); the next line starts another head
    final_head,    // the response head ended: status(), headers() are the answer
    trailers_end,  // the trailer block after a chunked body ended
    failed,        // a cap was exceeded or the head is not HTTP: see error(); stop reading
  };
  // Why it failed.
  enum class Failure { none, too_many_fields, too_many_bytes, bad_status_line };

  explicit ResponseHeadReader(ResponseHeadLimits limits = {}) : limits_(limits) {}
  // Not copied: a copy's pointer into the fields it continues would be the original's.
  // Moved, the fields' storage (and that pointer into it) goes along.
  ResponseHeadReader(const ResponseHeadReader&) = delete;
  ResponseHeadReader& operator=(const ResponseHeadReader&) = delete;
  ResponseHeadReader(ResponseHeadReader&&) = default;
  ResponseHeadReader& operator=(ResponseHeadReader&&) = default;

  // Feeds one line (with or without its CRLF / LF). After `failed` every further call
  // returns `failed` again.
  Event feed_line(std::string_view line);
  // Splits `bytes` into lines (after each LF; a last piece without one is a line too) and
  // feeds them until one fails. Returns the last event. For fuzzing and tests.
  Event feed_block(std::string_view bytes);

  // Starts over for a new response (the next redirect hop).
  void reset();

  bool head_complete() const { return state_ == State::trailers || state_ == State::done; }
  // The final head's status code (0 until it arrived) and its fields, in wire order.
  int status() const { return status_; }
  const HttpHeaders& headers() const { return headers_; }
  // The final head's fields, moved out to the caller (headers() is empty afterwards).
  HttpHeaders take_headers() {
    last_value_ = nullptr;
    return std::move(headers_);
  }

  Failure failure() const { return failure_; }
  // A sentence for the error message: "the response head has more than 256 header
  // fields" / "... has more than 65536 bytes" / "the response does not start with an HTTP
  // status line". Empty unless failed.
  std::string error() const;
  const ResponseHeadLimits& limits() const { return limits_; }

  // Counters of the block being read (the heads, then the trailers).
  std::size_t field_count() const { return fields_; }
  std::size_t byte_count() const { return bytes_; }

 private:
  // status_line → fields → (1xx: status_line | final: trailers) → done
  enum class State { status_line, fields, trailers, done, failed };

  Event fail(Failure why);
  bool parse_status_line(std::string_view line);
  // A field line of the head: added to headers_ (a skipped line adds nothing).
  void begin_field(std::string_view line);

  ResponseHeadLimits limits_;
  State state_ = State::status_line;
  Failure failure_ = Failure::none;
  int status_ = 0;
  int pending_status_ = 0;  // the status of the head being read
  HttpHeaders headers_;
  // The value of the field the last line added, which a folded line continues (obsolete
  // folding); null after any other line. Points into headers_, which grows only by the
  // next field line, and that line resets it first.
  std::string* last_value_ = nullptr;
  bool failed_in_trailers_ = false;
  std::size_t fields_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace mcprt::native::detail
