#pragma once
// connect_to_server (SPEC §3.1): from a resolved ServerConfig to an initialized
// ClientSession — create the transport for the config's type through the platform's
// services, run the handshake under the server's timeout, and on any failure close the
// transport so nothing leaks.

#include <functional>
#include <memory>
#include <string>

#include "mcprt/auth.hpp"
#include "mcprt/client.hpp"
#include "mcprt/config.hpp"
#include "mcprt/platform/byte_stream.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

// What a platform supplies to open connections. Null members are capabilities the
// platform lacks (the web build has no ProcessLauncher).
struct ConnectServices {
  Executor* executor = nullptr;
  ProcessLauncher* process_launcher = nullptr;
  HttpClient* http_client = nullptr;
  AuthStorage* auth_storage = nullptr;  // bearer tokens for http/sse servers; may be null
  Logger* logger = nullptr;
  // When set, used instead of the built-in stdio/http transports for every config (tests
  // hand out MemoryTransports to FakeServers; hosts can run in-process servers). Called on
  // the executor; an Error is reported like a failed spawn (the server name is prefixed
  // when the message does not already carry it).
  std::function<Result<std::unique_ptr<Transport>>(const ServerConfig&)> transport_factory;
};

struct ConnectOptions {
  ClientInfo client_info;
  // Session cwd: the default child cwd and the default root.
  std::string cwd;
  // The host's roots for configs without `roots` (nullopt = `cwd` as the one root).
  std::optional<ServerConfig::Roots> roots;
  // The host's input handlers (elicitation, sampling; SPEC §15).
  InputHandlers input;
  // The wire for configs without `protocol` (SPEC §14).
  std::string protocol = "auto";
  // ClientOptions::probe_network_failure_means_legacy (the browser).
  bool probe_network_failure_means_legacy = false;
  // The stored era verdict for this server (its cache entry's protocolVersion); empty = none.
  std::string prior_protocol_version;
  // Used when the config has no `timeout`. 0 = none.
  Millis default_timeout{30000};
  std::size_t max_message_bytes = 64u * 1024 * 1024;
  // Deepest JSON nesting accepted in a server's message (stdio and HTTP alike).
  std::size_t max_json_nesting_levels = kDefaultMaxJsonNestingLevels;
  // Called for server notifications (list_changed, message, ...) and on a later close.
  std::function<void(const std::string& method, const json& params)> on_notification;
  std::function<void(const Error&)> on_close;
  // ClientOptions::on_session_renewed.
  std::function<void()> on_session_renewed;
  // Optional: every message of the connection (and of a respawned one), through
  // make_tapped_transport. Null = the transport is not wrapped.
  MessageTap message_tap;
};

// The handshake deadline for `config` (its `timeout`, else the default; 0 = none).
Millis effective_timeout(const ServerConfig& config, const ConnectOptions& options);

// Starts connecting. If the transport cannot be created (a type this platform lacks, a
// spawn failure) the error is returned and `done` never fires. Otherwise `done` fires
// exactly once, on the executor, with the ready session or an error naming the server;
// closing the returned session cancels the attempt (done then gets ErrorCode::closed).
Result<std::shared_ptr<ClientSession>> connect_to_server(
    const ServerConfig& config, const ConnectServices& services, ConnectOptions options,
    std::function<void(Result<std::shared_ptr<ClientSession>>)> done);

}  // namespace mcprt
