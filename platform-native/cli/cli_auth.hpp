#pragma once
// The CLI's OAuth (SPEC §13), internal to platform-native/cli: the core OAuthClient over
// NativeCrypto, NativeCredentialStore ($XDG_DATA_HOME/mcprt/credentials) and
// LoopbackAuthorizer, built on a NativeHost's executor and HTTP client and owned by that
// host (NativeHostOptions::make_auth_storage), so it outlives the manager and goes before
// the HTTP client.
//
//   CliOAuth oauth;                      // declared before the host: it outlives it
//   oauth.attach(host_options);          // the host builds the client in its constructor
//   native::NativeHost host(std::move(host_options));
//   oauth.set_servers(host.discover().configs);
//
// Non-interactive (OAuthClientOptions::interactive = false): a server whose 401 needs the
// user ends in needs-auth with "run `mcprt auth login <name>`"; only login() (`mcprt auth
// login`, `/mcp auth <name>`) opens the browser. Without a home directory the credentials
// live in memory for this run only (persistent() is false).

#include <string>
#include <vector>

#include "mcprt/config.hpp"
#include "mcprt/native/host.hpp"
#include "mcprt/oauth.hpp"

namespace mcprt::cli {

struct OAuthStack;

class CliOAuth {
 public:
  struct Settings {
    bool repl = false;         // the needs-auth hint also names `/mcp auth <name>`
    bool open_browser = true;  // false: only print the URL (`--no-browser`)
  };
  CliOAuth() = default;
  explicit CliOAuth(Settings settings) : settings_(settings) {}
  CliOAuth(const CliOAuth&) = delete;
  CliOAuth& operator=(const CliOAuth&) = delete;

  // Sets options.make_auth_storage and options.login; this object must outlive the host.
  void attach(native::NativeHostOptions& options);
  // The host's client (null before the host was built, or without attach()).
  OAuthClient* client() const;
  // Where credentials are stored; empty = nowhere (memory only, for this run).
  const std::string& credentials_dir() const { return credentials_dir_; }
  // Tells the client every http/sse server's URL and `oauth` settings (others are skipped).
  void set_servers(const std::vector<ServerConfig>& configs) const;

 private:
  Settings settings_;
  OAuthStack* stack_ = nullptr;  // owned by the host
  std::string credentials_dir_;
};

// The needs-auth hint: "run `mcprt auth login <name>`" (REPL: also `/mcp auth <name>`).
std::string login_hint(const std::string& server, bool repl);

struct GlobalOptions;
// The host options every connecting command starts from: the global flags, errors-only
// logging (the CLI reports server failures itself; MCPRT_LOG_LEVEL asks for more), the
// trust hint, the elicitation handler of --elicit (cli_elicit.hpp; no sampling handler)
// and `oauth` attached (it must outlive the host).
native::NativeHostOptions cli_host_options(const GlobalOptions& options, CliOAuth& oauth);

}  // namespace mcprt::cli
