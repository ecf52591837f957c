// URL parsing and redaction: parse_http_url, resolve_url, same_origin, redact_url and
// redact_secrets. The input's first line is a URL, the second a reference resolved against
// it (an SSE `endpoint` or a redirect `Location`), the third another URL to compare
// origins with; missing lines are empty.
//
// Invariants:
//  - a parsed URL is http(s), has a host, a port in 1..65535 and an absolute path, and
//    its to_string() has no space, control byte or '#' (it goes on a request line);
//  - round trip: to_string() re-parses to the same URL, and again to the same text;
//    origin() parses to the same origin; a URL has its own origin;
//  - same_origin is symmetric, and false when either side does not parse;
//  - resolve_url gives a URL that parses to itself; resolving "" against it changes
//    nothing; an absolute http(s) reference with an authority resolves to itself
//    (normalised); a reference
//    with no scheme and no authority keeps the base's origin;
//  - redaction is idempotent; a redacted URL keeps no userinfo and no value of a
//    secret-named query parameter; the same holds for a URL inside free text.

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "mcprt/redact.hpp"
#include "mcprt/url.hpp"

namespace {

using mcprt::fuzz::as_text;

bool same_url(const mcprt::Url& a, const mcprt::Url& b) {
  return a.scheme == b.scheme && a.userinfo == b.userinfo && a.host == b.host && a.port == b.port &&
         a.explicit_port == b.explicit_port && a.path == b.path && a.query == b.query &&
         a.has_query == b.has_query;
}

// The reference as a URL parser sees it: ASCII tab and newlines removed anywhere, C0
// controls and spaces trimmed at both ends (the WHATWG preprocessing; an RFC 3986 parser
// rejects such input instead, so deciding on this form covers both).
std::string preprocessed(std::string_view ref) {
  std::string out;
  for (char c : ref) {
    if (c != '\t' && c != '\n' && c != '\r') out += c;
  }
  auto c0_or_space = [](char c) { return static_cast<unsigned char>(c) <= 0x20; };
  while (!out.empty() && c0_or_space(out.front())) out.erase(out.begin());
  while (!out.empty() && c0_or_space(out.back())) out.pop_back();
  return out;
}

// A reference that can only name a path or query on the base's host: no scheme (no ':'
// before the first '/', '?' or '#') and no authority (does not start with two slashes of
// either kind).
bool is_path_reference(std::string_view ref) {
  const std::string p = preprocessed(ref);
  const std::size_t end = p.find_first_of("/\\?#");
  if (p.substr(0, end).find(':') != std::string::npos) return false;
  auto slash = [](char c) { return c == '/' || c == '\\'; };
  return !(p.size() >= 2 && slash(p[0]) && slash(p[1]));
}

// A reference with a scheme and an authority ("https://h/x", "HTTP:\\h"): absolute
// whatever the base. (Without the slashes, "https:/x" is a path on an https base's host for
// a WHATWG parser, yet parses alone as host "x".)
bool has_authority(std::string_view ref) {
  const std::string p = preprocessed(ref);
  std::size_t i = 0;
  if (p.empty() || !std::isalpha(static_cast<unsigned char>(p[0]))) return false;
  while (i < p.size() && (std::isalnum(static_cast<unsigned char>(p[i])) || p[i] == '+' || p[i] == '-' || p[i] == '.')) ++i;
  auto slash = [](char c) { return c == '/' || c == '\\'; };
  return i + 2 < p.size() && p[i] == ':' && slash(p[i + 1]) && slash(p[i + 2]);
}

// No userinfo left and every secret-named query value masked, in a redacted URL.
// `in_text`: the URL was redacted inside a sentence, where trailing sentence punctuation
// (".,;:!?)]") is not part of the URL and so stays after the mask.
void check_redacted_url(const std::string& redacted, const mcprt::Url& original, bool in_text) {
  if (!original.userinfo.empty()) {
    // The authority's userinfo, not text that happens to look like it further on.
    if (const auto r = mcprt::parse_http_url(redacted)) {
      FUZZ_CHECK(r->userinfo.empty() || r->userinfo == mcprt::kRedactedMask);
    } else {
      const std::size_t at = redacted.find("://");
      FUZZ_CHECK(at == std::string::npos || redacted.compare(at + 3, original.userinfo.size() + 1,
                                                             original.userinfo + "@") != 0 ||
                 original.userinfo == mcprt::kRedactedMask);
    }
  }
  // Every secret-named parameter of the redacted URL's query (split the way redact.hpp
  // splits: on '&', ';', '?' and '#') has its value masked.
  const std::size_t question = redacted.find('?');
  if (question == std::string::npos) return;
  std::string_view q = std::string_view(redacted).substr(question + 1);
  while (!q.empty()) {
    const std::size_t sep = q.find_first_of("&;?#");
    const std::string_view pair = q.substr(0, sep);
    q = sep == std::string_view::npos ? std::string_view() : q.substr(sep + 1);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos || !mcprt::is_secret_name(pair.substr(0, eq))) continue;
    std::string_view value = pair.substr(eq + 1);
    while (in_text && value.size() > mcprt::kRedactedMask.size() &&
           std::string_view(".,;:!?)]").find(value.back()) != std::string_view::npos) {
      value.remove_suffix(1);
    }
    FUZZ_CHECK(value.empty() || value == mcprt::kRedactedMask);
  }
}

void check_parsed(std::string_view text) {
  const std::optional<mcprt::Url> u = mcprt::parse_http_url(text);
  if (!u) {
    FUZZ_CHECK(!mcprt::same_origin(text, text));
    return;
  }
  FUZZ_CHECK(u->scheme == "http" || u->scheme == "https");
  FUZZ_CHECK(!u->host.empty() && u->port >= 1 && u->port <= 65535);
  FUZZ_CHECK(!u->path.empty() && u->path.front() == '/');
  const std::string s = u->to_string();
  for (unsigned char c : s) FUZZ_CHECK(c > 0x20 && c != 0x7F && c != '#');

  const std::optional<mcprt::Url> again = mcprt::parse_http_url(s);
  FUZZ_CHECK(again.has_value() && same_url(*u, *again));
  FUZZ_CHECK(again->to_string() == s);
  FUZZ_CHECK(mcprt::same_origin(text, text) && mcprt::same_origin(text, s));
  const std::optional<mcprt::Url> origin = mcprt::parse_http_url(u->origin());
  FUZZ_CHECK(origin.has_value() && origin->origin() == u->origin());
  FUZZ_CHECK(mcprt::same_origin(u->origin(), s));

  const std::string redacted = mcprt::redact_url(s);
  FUZZ_CHECK(mcprt::redact_url(redacted) == redacted);
  check_redacted_url(redacted, *u, false);
  const std::string head = "Server \"x\": HTTP 500 from ", tail = " (upstream failed)";
  const std::string in_text = mcprt::redact_secrets(head + s + tail);
  FUZZ_CHECK(mcprt::redact_secrets(in_text) == in_text);
  FUZZ_CHECK(in_text.rfind(head, 0) == 0 && in_text.size() >= head.size() + tail.size() &&
             in_text.compare(in_text.size() - tail.size(), tail.size(), tail) == 0);
  // (A quote, '<', '>' or '`' would end the URL in free text before its end here.)
  if (s.find_first_of("\"'<>`") == std::string::npos) {
    check_redacted_url(in_text.substr(head.size(), in_text.size() - head.size() - tail.size()), *u, true);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  std::string_view rest = as_text(bytes, size);
  const std::string_view base = mcprt::fuzz::take_line(rest);
  const std::string_view ref = mcprt::fuzz::take_line(rest);
  const std::string_view other = mcprt::fuzz::take_line(rest);

  check_parsed(base);
  check_parsed(other);
  FUZZ_CHECK(mcprt::same_origin(base, other) == mcprt::same_origin(other, base));

  if (const std::optional<std::string> resolved = mcprt::resolve_url(base, ref)) {
    FUZZ_CHECK(mcprt::parse_http_url(base).has_value());
    const std::optional<mcprt::Url> r = mcprt::parse_http_url(*resolved);
    FUZZ_CHECK(r.has_value() && r->to_string() == *resolved);
    FUZZ_CHECK(mcprt::resolve_url(*resolved, "") == resolved);
    if (is_path_reference(ref)) FUZZ_CHECK(mcprt::same_origin(*resolved, base));
    check_parsed(*resolved);
  }
  if (const std::optional<mcprt::Url> absolute = mcprt::parse_http_url(ref)) {
    if (mcprt::parse_http_url(base) && has_authority(ref)) {
      FUZZ_CHECK(mcprt::resolve_url(base, ref) == absolute->to_string());
    }
  }

  // Redaction of arbitrary text: idempotent; the in-place form agrees with the copy.
  const std::string text(as_text(bytes, size));
  const std::string once = mcprt::redact_secrets(text);
  FUZZ_CHECK(mcprt::redact_secrets(once) == once);
  std::string in_place = text;
  const bool masked = mcprt::redact_secrets_in_place(in_place);
  FUZZ_CHECK(in_place == once && (once == text || masked));
  const std::string url_once = mcprt::redact_url(base);
  FUZZ_CHECK(mcprt::redact_url(url_once) == url_once);
  return 0;
}
