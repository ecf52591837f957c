#include "native_http_headers.hpp"

#include <utility>

namespace mcprt::native::detail {

namespace {

// RFC 9110 tchar: visible ASCII but the delimiters.
struct TokenChars {
  bool table[256] = {};
  constexpr TokenChars() {
    for (int c = 0x21; c < 0x7f; ++c) table[c] = true;
    for (char c : std::string_view("()<>@,;:\\\"/[]?={}")) {
      table[static_cast<unsigned char>(c)] = false;
    }
  }
};
constexpr TokenChars kTokenChars;

bool is_ows(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// RFC 9110 §5.5: CR, LF and NUL inside a value are replaced by SP (the value may go back
// on the wire, e.g. Mcp-Session-Id, where they would split lines). Values almost never
// hold one: the per-character pass runs only when one is there.
void append_value(std::string& out, std::string_view value) {
  const std::size_t from = out.size();
  out.append(value);
  if (is_safe_header_text(value)) return;
  for (std::size_t i = from; i < out.size(); ++i) {
    char& c = out[i];
    if (c == '\r' || c == '\n' || c == '\0') c = ' ';
  }
}

}  // namespace

bool is_safe_header_text(std::string_view s) {
  // Three memchr scans (find_first_of with a three-character set calls memchr per character).
  return s.find('\r') == std::string_view::npos && s.find('\n') == std::string_view::npos &&
         s.find('\0') == std::string_view::npos;
}

bool is_http_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!kTokenChars.table[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

ResponseHeadReader::Event ResponseHeadReader::fail(Failure why) {
  failure_ = why;
  failed_in_trailers_ = state_ == State::trailers;
  state_ = State::failed;
  last_value_ = nullptr;
  return Event::failed;
}

bool ResponseHeadReader::parse_status_line(std::string_view line) {
  // HTTP-version SP 3DIGIT [SP reason-phrase]; the version as "HTTP/" then digits and dots.
  constexpr std::string_view kPrefix = "HTTP/";
  if (line.substr(0, kPrefix.size()) != kPrefix) return false;
  std::size_t i = kPrefix.size();
  const std::size_t version_start = i;
  while (i < line.size() && (is_digit(line[i]) || line[i] == '.')) ++i;
  if (i == version_start || i >= line.size() || line[i] != ' ') return false;
  ++i;
  if (line.size() < i + 3 || !is_digit(line[i]) || !is_digit(line[i + 1]) ||
      !is_digit(line[i + 2])) {
    return false;
  }
  if (line.size() > i + 3 && line[i + 3] != ' ') return false;
  const int status = (line[i] - '0') * 100 + (line[i + 1] - '0') * 10 + (line[i + 2] - '0');
  if (status < 100 || status > 599) return false;
  pending_status_ = status;
  return true;
}

void ResponseHeadReader::begin_field(std::string_view line) {
  last_value_ = nullptr;
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;  // not a field: skipped
  const std::string_view name = line.substr(0, colon);
  if (!is_http_token(name)) return;  // "Name : v" or binary junk: skipped (RFC 9112 §5.1)
  // A head has about a dozen fields: one allocation for the list instead of five.
  if (headers_.empty()) headers_.reserve(16);
  HttpHeader& field = headers_.add(std::string(name), std::string());
  append_value(field.value, trim_ows(line.substr(colon + 1)));
  last_value_ = &field.value;
}

ResponseHeadReader::Event ResponseHeadReader::feed_line(std::string_view line) {
  if (state_ == State::failed) return Event::failed;

  bytes_ += line.size();
  if (bytes_ > limits_.max_bytes) return fail(Failure::too_many_bytes);

  std::string_view content = line;
  if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
  if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
  const bool blank = content.empty();
  const bool folded = !blank && is_ows(content.front());

  switch (state_) {
    case State::status_line:
      if (!parse_status_line(content)) return fail(Failure::bad_status_line);
      state_ = State::fields;
      return Event::more;

    case State::fields:
      if (blank) {
        last_value_ = nullptr;
        if (pending_status_ / 100 == 1 && pending_status_ != 101) {
          // An interim head: its fields are not the answer; the counters go on.
          headers_ = {};
          state_ = State::status_line;
          return Event::interim_head;
        }
        status_ = pending_status_;
        state_ = State::trailers;
        fields_ = 0;
        bytes_ = 0;
        return Event::final_head;
      }
      if (folded) {
        if (last_value_ != nullptr) {
          *last_value_ += ' ';
          append_value(*last_value_, trim_ows(content));
        }
        return Event::more;  // a continuation of a skipped line (or of none) is dropped
      }
      if (++fields_ > limits_.max_fields) return fail(Failure::too_many_fields);
      begin_field(content);
      return Event::more;

    case State::trailers:
      if (blank) {
        state_ = State::done;
        return Event::trailers_end;
      }
      if (!folded && ++fields_ > limits_.max_fields) return fail(Failure::too_many_fields);
      return Event::more;  // trailers are counted, never kept

    case State::done:
      return Event::more;

    case State::failed:
      break;
  }
  return Event::failed;
}

ResponseHeadReader::Event ResponseHeadReader::feed_block(std::string_view bytes) {
  Event last = state_ == State::failed ? Event::failed : Event::more;
  while (!bytes.empty()) {
    const std::size_t lf = bytes.find('\n');
    const std::size_t n = lf == std::string_view::npos ? bytes.size() : lf + 1;
    last = feed_line(bytes.substr(0, n));
    if (last == Event::failed) break;
    bytes.remove_prefix(n);
  }
  return last;
}

void ResponseHeadReader::reset() { *this = ResponseHeadReader(limits_); }

std::string ResponseHeadReader::error() const {
  const std::string block =
      failed_in_trailers_ ? "the response trailers have" : "the response head has";
  switch (failure_) {
    case Failure::none:
      return {};
    case Failure::too_many_fields:
      return block + " more than " + std::to_string(limits_.max_fields) + " header fields";
    case Failure::too_many_bytes:
      return block + " more than " + std::to_string(limits_.max_bytes) + " bytes";
    case Failure::bad_status_line:
      return "the response does not start with an HTTP status line";
  }
  return {};
}

}  // namespace mcprt::native::detail
