#pragma once
// Just enough URL handling for the HTTP transports: parse an absolute http(s) URL,
// resolve a reference against a base (RFC 3986 §5.2: the legacy SSE `endpoint` event and
// redirect `Location`s are often relative), and compare origins (scheme, host, port — the
// rule behind the legacy endpoint check and `headerPolicy: "origin-locked"`).
// Pure functions; nothing throws.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mcprt {

struct Url {
  std::string scheme;    // "http" or "https", lower case
  std::string userinfo;  // rarely used; kept so that to_string() round-trips
  std::string host;      // lower case; an IPv6 literal keeps its brackets
  int port = 0;          // the explicit port, else 80 / 443
  bool explicit_port = false;
  std::string path = "/";  // never empty; dot segments removed
  std::string query;       // without the '?'
  bool has_query = false;
  // The fragment is dropped: it never goes on the wire.

  // "https://example.com" / "http://127.0.0.1:8080" (a default port is omitted).
  std::string origin() const;
  // The URL as sent: origin + path [+ '?' + query].
  std::string to_string() const;
};

// Parses an absolute http:// or https:// URL with a non-empty host and a port in 1..65535.
std::optional<Url> parse_http_url(std::string_view text);

// Resolves `reference` (absolute, "//host/x", "/x", "x", "?q", "" ...) against `base` and
// returns an absolute http(s) URL string, or nullopt when the result is not one.
std::optional<std::string> resolve_url(std::string_view base, std::string_view reference);

// True when both parse and share scheme, host and (effective) port.
bool same_origin(std::string_view a, std::string_view b);

// Appends `text` to `out`, writing every byte that `keep(byte, index)` rejects as %XX
// (upper-case hex). The one percent-encoder behind URIs, request targets, cache keys and
// cache file names; each caller says which bytes stay as they are.
template <typename Keep>
void append_percent_encoded(std::string& out, std::string_view text, Keep keep) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out.reserve(out.size() + text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (keep(c, i)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
}

}  // namespace mcprt
