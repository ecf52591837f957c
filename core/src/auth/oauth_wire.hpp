#pragma once
// The OAuth client's pure helpers (mcprt/oauth.hpp): encodings, the WWW-Authenticate
// parser, scope lists, the URL rules for what the wire names, and short safe text for
// messages. No I/O, nothing throws. Internal to core/src/auth.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcprt/result.hpp"
#include "mcprt/url.hpp"

namespace mcprt::detail::oauth {

using Params = std::vector<std::pair<std::string, std::string>>;

// RFC 4648 §5 without padding (PKCE, state, JWS).
std::string base64url(std::string_view bytes);
// RFC 4648 §4 with padding (HTTP Basic).
std::string base64(std::string_view bytes);
// One application/x-www-form-urlencoded value or name: unreserved bytes as they are,
// everything else %XX (space too, which every form decoder reads back as a space).
std::string form_encode(std::string_view text);
// "a=1&b=2" from the pairs, in order.
std::string form_body(const Params& params);
// The pairs of a query string (without '?'), '+' read as a space and %XX decoded; a
// malformed escape stays as written.
Params parse_query(std::string_view query);
// Every value of `name` in `params`.
std::vector<std::string> values_of(const Params& params, std::string_view name);
// `url` with `params` appended to its query (after any it already has).
std::string append_query(const Url& url, const Params& params);

// The Bearer challenge of a WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1): its
// auth-params, unquoted. A value with several challenges ("Basic realm=x, Bearer ...")
// yields the Bearer one; none = bearer false.
struct BearerChallenge {
  bool bearer = false;
  std::string error;
  std::string error_description;
  std::string scope;
  std::string resource_metadata;
};
BearerChallenge parse_bearer_challenge(std::string_view header);

// Scope lists: split on spaces (empty parts dropped), joined with one space, union
// keeping the first list's order and then the second's new entries.
std::vector<std::string> split_scopes(std::string_view text);
std::string join_scopes(const std::vector<std::string>& scopes);
std::vector<std::string> scope_union(const std::vector<std::string>& a,
                                     const std::vector<std::string>& b);
bool contains(const std::vector<std::string>& list, std::string_view item);

// localhost (and *.localhost), 127.0.0.0/8, [::1].
bool is_loopback_host(std::string_view host);
// A URL the wire named for `what` ("the authorization endpoint"): http(s), https unless
// the host is loopback, no userinfo. Errors (ErrorCode::protocol) name `what` and the
// URL's origin only.
Result<Url> check_wire_url(std::string_view url, std::string_view what);
// The RFC 9728 well-known URLs for the resource `server`: the path form (when the path is
// not "/") and the root form, in the spec's order.
std::vector<std::string> prm_well_known_urls(const Url& server);
// The RFC 8414 / OIDC metadata URLs for `issuer`, in the spec's order (three with a path,
// two without).
std::vector<std::string> as_metadata_urls(const Url& issuer);
// The PRM `resource` names the server: same origin, and its path is the server's path or
// a parent of it at a '/' boundary (the origin itself covers every path).
bool resource_covers(const Url& resource, const Url& server);
// The issuer a metadata document claims equals the one it was fetched for: identical, or
// differing only in one trailing '/' (both spell the same well-known URLs).
bool same_issuer(std::string_view claimed, std::string_view expected);

// Text from a server, made fit for a message: valid UTF-8, control characters as spaces,
// at most `max_bytes`, secrets masked (mcprt/redact.hpp).
std::string safe_text(std::string_view text, std::size_t max_bytes = 200);

}  // namespace mcprt::detail::oauth
