#pragma once
// Just enough URL handling for the HTTP transports: parse an absolute http(s) URL,
// resolve a reference against a base (RFC 3986 §5.2: the legacy SSE `endpoint` event and
// redirect `Location`s are often relative), and compare origins (scheme, host, port — the
// rule behind the legacy endpoint check and `headerPolicy: "origin-locked"`).
// Pure functions; nothing throws.

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

}  // namespace mcprt
