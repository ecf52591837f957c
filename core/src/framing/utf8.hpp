#pragma once
// UTF-8 validation with U+FFFD replacement (the WHATWG "UTF-8 decode" error handling:
// each maximal invalid subpart becomes one U+FFFD). Used by the SSE parser, whose spec
// decodes the stream as UTF-8, and for text copied from untrusted input into messages.

#include <string>
#include <string_view>

namespace mcprt::detail {

// The length of the well-formed UTF-8 sequence starting at s[i] (Unicode table 3-7: no
// surrogates, no overlongs, <= U+10FFFF; 1 for ASCII), or 0 when it is ill-formed; then
// `*at` is the offset from i of the byte at fault (0: the lead byte; past the end of `s`
// when the sequence is cut short).
std::size_t utf8_sequence_at(std::string_view s, std::size_t i, std::size_t* at);

// True when `s` is well-formed UTF-8 (no surrogates, no overlongs, <= U+10FFFF).
bool is_valid_utf8(std::string_view s);

// `s` with every invalid sequence replaced by U+FFFD.
std::string sanitize_utf8(std::string_view s);

// The longest prefix of `s` of at most `max_bytes` that does not end inside a UTF-8
// sequence (for truncating text for logs and messages).
std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes);

}  // namespace mcprt::detail
