#pragma once
// URLs for the HTTP transports, parsed the way browsers and `fetch` parse them (SPEC §17):
// the WHATWG URL Standard's basic URL parser, for the special schemes http and https only.
// Parse an absolute URL, resolve a reference against a base (the legacy SSE `endpoint`
// event and redirect `Location`s are often relative), and compare origins (scheme, host,
// port — the rule behind the legacy endpoint check and `headerPolicy: "origin-locked"`).
//
// What mcprt does NOT do the way a browser does, and so rejects instead of reading
// differently:
//  - hosts that are not ASCII after percent-decoding ("bücher.de", fullwidth digits,
//    U+3002 as a dot) need IDNA/UTS-46 tables: write them in punycode ("xn--bcher-kva.de");
//  - punycode labels are accepted only when they decode to letters of a few scripts that
//    are valid IDNA as they stand (Latin-1, Greek, Cyrillic, kana, CJK, Hangul);
//  - port 0 (a browser accepts it; nothing listens there);
//  - input that is not valid UTF-8 (a browser never sees such a string).
// Pure functions; nothing throws.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "mcprt/result.hpp"

namespace mcprt {

struct Url {
  std::string scheme;    // "http" or "https", lower case
  std::string username;  // percent-encoded as serialized (userinfo percent-encode set)
  std::string password;  // likewise
  std::string userinfo;  // username [":" password], "" when both are empty
  // Serialized host, lower case: a domain ("example.com", "xn--bcher-kva.de"), an IPv4
  // address in dotted decimal ("127.0.0.1", also for "0x7f.1" or "2130706433"), or an IPv6
  // address in brackets, compressed ("[::1]").
  std::string host;
  int port = 0;  // the explicit port, else 80 / 443
  bool explicit_port = false;  // a non-default port was given (a default one is dropped)
  std::string path = "/";      // never empty; dot segments removed; percent-encoded
  std::string query;           // without the '?'; percent-encoded
  bool has_query = false;      // "http://h/?" has an (empty) query
  // The fragment is dropped: it never goes on the wire.

  // "https://example.com" / "http://127.0.0.1:8080" (a default port is omitted).
  std::string origin() const;
  // The URL as sent: the WHATWG href without the fragment.
  std::string to_string() const;
};

// Parses an absolute http:// or https:// URL (WHATWG rules: tabs and newlines removed,
// leading/trailing controls and spaces trimmed, '\' as '/', ...) with a host and a port in
// 1..65535.
std::optional<Url> parse_http_url(std::string_view text);

// The same, resolved against `base` when `base` is given (any reference a browser would
// resolve: "//host/x", "/x", "x", "?q", "", "http:x" ...), and with the reason when it fails
// (an invalid_argument Error: "the host \"bücher.de\" is not ASCII ...").
Result<Url> parse_http_url_checked(std::string_view text, const Url* base = nullptr);

// One application/x-www-form-urlencoded name or value (a query component): '+' is a space,
// %XX its byte; a malformed escape stays as written. Used for OAuth redirects and forms.
std::string form_decode(std::string_view component);

// Resolves `reference` against `base` and returns the absolute http(s) URL string
// (to_string()), or nullopt when `base` does not parse or the result is not http(s).
std::optional<std::string> resolve_url(std::string_view base, std::string_view reference);

// True when both parse and share scheme, host and (effective) port.
bool same_origin(std::string_view a, std::string_view b);
// The same for URLs already parsed.
bool same_origin(const Url& a, const Url& b);

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
