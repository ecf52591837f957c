// Native header handling: the response-head reader behind NativeHttpClient
// (platform-native/src/native_http_headers.*), which takes the raw lines libcurl's
// header callback hands over — status line, fields, the blank line, interim 1xx heads,
// trailers after a chunked body — and caps what a server can make it hold (SPEC §17).
//
// Input: one control byte (bits 0-4: field cap 1..32, or 256 when 0; bits 5-7: byte cap
// 64 << n, or 64 KiB when 7), then the bytes of the response head(s).
//
// Invariants:
//  - feeding line by line gives the same events, status, fields and failure as
//    feed_block (libcurl hands over lines; the block form is what tests use);
//  - the kept fields never exceed the caps: at most max_fields, and their names and
//    values at most max_bytes in all; once failed, every later line is `failed` and
//    error() names the cap or the bad status line;
//  - a final head has a status in 100..599 other than an interim 1xx; field names are
//    non-empty tokens, values hold no CR, LF or NUL (they may go back on the wire);
//  - reset() starts a fresh response.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "native_http_headers.hpp"

namespace {

using Reader = mcprt::native::detail::ResponseHeadReader;

bool is_token_char(unsigned char c) {
  return c > 0x20 && c < 0x7f && std::string_view("()<>@,;:\\\"/[]?={}").find(static_cast<char>(c)) ==
                                     std::string_view::npos;
}

void check_state(const Reader& r, Reader::Event last) {
  const auto& limits = r.limits();
  FUZZ_CHECK(r.headers().size() <= limits.max_fields);
  std::size_t kept = 0;
  for (const auto& h : r.headers()) {
    FUZZ_CHECK(!h.name.empty());
    for (unsigned char c : h.name) FUZZ_CHECK(is_token_char(c));
    FUZZ_CHECK(h.value.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
    kept += h.name.size() + h.value.size();
  }
  FUZZ_CHECK(kept <= limits.max_bytes);
  if (last == Reader::Event::failed) {
    FUZZ_CHECK(r.failure() != Reader::Failure::none && !r.error().empty());
  } else {
    FUZZ_CHECK(r.failure() == Reader::Failure::none && r.error().empty());
  }
  if (r.head_complete()) {
    FUZZ_CHECK(r.status() >= 100 && r.status() <= 599);
    FUZZ_CHECK(r.status() / 100 != 1 || r.status() == 101);
  } else if (last != Reader::Event::failed) {
    FUZZ_CHECK(r.status() == 0);  // (a head whose trailers then failed keeps its status)
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 1) return 0;
  mcprt::native::detail::ResponseHeadLimits limits;
  if (bytes[0] & 0x1F) limits.max_fields = bytes[0] & 0x1F;
  if ((bytes[0] >> 5) != 7) limits.max_bytes = std::size_t{64} << (bytes[0] >> 5);
  const std::string_view data = mcprt::fuzz::as_text(bytes + 1, size - 1);

  Reader block(limits);
  const Reader::Event block_last = block.feed_block(data);
  check_state(block, block_last);

  Reader lines(limits);
  Reader::Event last = Reader::Event::more;
  bool seen_failed = false;
  std::string_view rest = data;
  while (!rest.empty()) {
    const std::size_t lf = rest.find('\n');
    const std::size_t n = lf == std::string_view::npos ? rest.size() : lf + 1;
    last = lines.feed_line(rest.substr(0, n));
    rest.remove_prefix(n);
    if (seen_failed) FUZZ_CHECK(last == Reader::Event::failed);
    if (last == Reader::Event::failed) {
      seen_failed = true;
      if (rest.empty()) break;
      // feed_block stops here; the reader must keep saying failed.
      FUZZ_CHECK(lines.feed_line("X-After: failure\r\n") == Reader::Event::failed);
      break;
    }
    check_state(lines, last);
  }
  FUZZ_CHECK(last == block_last || (data.empty() && block_last == Reader::Event::more));
  FUZZ_CHECK(lines.status() == block.status() && lines.headers() == block.headers());
  FUZZ_CHECK(lines.failure() == block.failure() && lines.head_complete() == block.head_complete());
  FUZZ_CHECK(lines.error() == block.error());

  lines.reset();
  FUZZ_CHECK(lines.status() == 0 && lines.headers().empty() && !lines.head_complete() &&
             lines.failure() == Reader::Failure::none && lines.field_count() == 0 &&
             lines.byte_count() == 0);
  return 0;
}
