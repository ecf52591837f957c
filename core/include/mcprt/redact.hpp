#pragma once
// Redaction of secrets in text mcprt shows (SPEC §17): URL userinfo, the values of query
// parameters whose names look like secrets, `Bearer <token>` and secret-named key=value
// pairs are replaced by "***". Applied where errors are made (Error::make / Error::wire),
// by the platform loggers, in the `MCP error:` tool-result text, and by the CLI wherever it
// prints a URL. The rules err on the side of masking too much: a masked word in a message
// costs a little clarity, an unmasked token leaks a credential.
// Pure functions; nothing throws; the output is a fresh string (the input is not kept).
// Idempotent: redacting redacted text changes nothing.

#include <string>
#include <string_view>

namespace mcprt {

// The mask that replaces every secret.
inline constexpr std::string_view kRedactedMask = "***";

// True when a parameter/field name looks like it holds a secret: it contains, ignoring
// case and after percent-decoding, one of `key`, `token`, `secret`, `password`, `passwd`,
// `auth`, `sig`, `credential` (so `api_key`, `access_token`, `X-Amz-Signature`,
// `Authorization`, `client_secret` all do).
bool is_secret_name(std::string_view name);

// Masks one URL (or URL-like string; it need not parse):
// "http://alice:PW@h/x?api_key=K&q=1" -> "http://***@h/x?api_key=***&q=1".
// Userinfo is everything between the scheme's slashes and the LAST '@' before the first
// '/', '?' or '#' (a '\' does not end it, so both the browser's and an RFC 3986 reading of
// the authority are covered); parameters are split on '&' and ';' in the query
// and fragment.
std::string redact_url(std::string_view url);

// Every URL (any `scheme://...`, and `http:`/`https:` followed by anything) and every
// secret-looking pair in free text masked the same way: `name=value` and JSON
// `"name": "value"` with a secret name, `Bearer <token>`, and `Authorization: Basic <c>`.
// A URL in free text ends at whitespace, '<', '>', a closing quote (one followed by
// whitespace, punctuation or the end: a browser keeps quotes inside userinfo, paths and
// hosts) or a JSON-escaped quote; trailing sentence punctuation and '`' are not part of it.
std::string redact_secrets(std::string_view text);

// redact_secrets on `text` itself; returns whether anything was masked. Text without
// secrets is scanned once and not copied (the form Error::make uses).
bool redact_secrets_in_place(std::string& text);

}  // namespace mcprt
