#pragma once
// What the OAuth client reads from the wire and keeps in the CredentialStore
// (mcprt/oauth.hpp, KEYS AND STORAGE): protected resource metadata, authorization server
// metadata, a client identity, a token set, and the two stored records, each with its
// validation (hostile input: every field checked, unknown fields ignored) and its JSON form.
// Internal to core/src/auth.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/result.hpp"
#include "mcprt/url.hpp"

namespace mcprt::detail::oauth {

inline constexpr std::size_t kMaxTokenBytes = 64 * 1024;
inline constexpr std::size_t kMaxListItems = 256;

// RFC 9728 Protected Resource Metadata (the fields the client uses).
struct ResourceMetadata {
  std::string resource;  // exactly as published
  std::vector<std::string> authorization_servers;
  std::vector<std::string> scopes_supported;
};
// `doc` as PRM, or ErrorCode::protocol naming what is wrong (`where` names the document).
Result<ResourceMetadata> read_resource_metadata(const json& doc, const std::string& where);

// RFC 8414 authorization server metadata, validated; or the 2025-03-26 default endpoints.
struct AuthServer {
  std::string issuer;  // as the metadata wrote it (RFC 9207 compares `iss` with this)
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string registration_endpoint;  // "" = no DCR
  bool challenge_methods_listed = false;
  std::vector<std::string> code_challenge_methods;
  bool auth_methods_listed = false;
  std::vector<std::string> token_auth_methods;
  std::vector<std::string> scopes_supported;
  bool cimd_supported = false;  // client_id_metadata_document_supported
  bool iss_supported = false;   // authorization_response_iss_parameter_supported
  bool from_metadata = true;    // false: the 2025-03-26 default endpoints

  json to_json() const;
  static std::optional<AuthServer> from_json(const json& j);
};
// `doc` fetched for `issuer` from `where`: its issuer must be the same (same_issuer), every
// endpoint a checked URL (check_wire_url). ErrorCode::protocol otherwise.
Result<AuthServer> read_auth_server_metadata(const json& doc, const std::string& issuer,
                                             const std::string& where);
// The 2025-03-26 defaults for an MCP server's origin: /authorize, /token, /register.
AuthServer default_endpoints(const Url& origin);

// The client identity at one authorization server.
struct ClientIdentity {
  std::string client_id;
  std::string client_secret;  // never stored for source "config" (the config keeps it)
  std::string auth_method;    // client_secret_basic | client_secret_post | none | private_key_jwt
  std::string source;         // "config" | "metadata-document" | "registration"
  std::string redirect_uri;   // the one registered (DCR)

  json to_json() const;
  static ClientIdentity from_json(const json& j);
};

struct TokenSet {
  std::string access_token;
  std::string refresh_token;
  std::string scope;            // as granted ("" = the AS did not say)
  std::int64_t expires_at_ms = 0;  // Unix ms; 0 = unknown

  json to_json() const;
  static TokenSet from_json(const json& j);
};
// A token endpoint's 2xx answer; `now_ms` turns expires_in into expires_at_ms.
Result<TokenSet> read_token_response(const json& doc, std::int64_t now_ms,
                                     const std::string& where);

// "oauth-cred-<h>": one (issuer, resource).
struct CredentialRecord {
  std::string issuer;
  std::string resource;
  std::optional<AuthServer> server;
  ClientIdentity client;
  TokenSet tokens;
  std::vector<std::string> requested_scopes;  // what the last authorization asked for

  std::string to_text() const;
  // nullopt when the text is not a record of this (issuer, resource) (a hash collision, an
  // older or damaged value): the caller treats it as absent.
  static std::optional<CredentialRecord> from_text(std::string_view text, const std::string& issuer,
                                                   const std::string& resource);
};

// "oauth-server-<h>": where discovery led for one server URL.
struct ServerRecord {
  std::string url;
  std::string resource;
  std::string issuer;

  std::string to_text() const;
  static std::optional<ServerRecord> from_text(std::string_view text, const std::string& url);
};

std::string server_key(const std::string& url);
std::string credential_key(const std::string& issuer, const std::string& resource);

// A JSON object from an untrusted body, or ErrorCode::protocol naming `where`.
Result<json> parse_object(std::string_view body, const std::string& where);

}  // namespace mcprt::detail::oauth
