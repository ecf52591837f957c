#include "mcprt/connect.hpp"

#include "mcprt/http_transport.hpp"
#include "protocol/connect_stdio.hpp"

namespace mcprt {

Millis effective_timeout(const ServerConfig& config, const ConnectOptions& options) {
  if (config.timeout_ms) return Millis(*config.timeout_ms);
  return options.default_timeout;
}

namespace {

std::string server_prefix(const std::string& name) { return detail::connect_error_prefix(name); }

// The roots a server is offered: its config's, else the host's, else the session cwd.
std::optional<std::vector<Root>> roots_for(const ServerConfig& config,
                                           const ConnectOptions& options) {
  const std::optional<ServerConfig::Roots>& chosen = config.roots ? config.roots : options.roots;
  if (!chosen) return roots_from_directories({options.cwd});
  if (!chosen->declared) return std::nullopt;
  return roots_from_directories(chosen->directories);
}

Result<std::unique_ptr<Transport>> make_untapped_transport(const ServerConfig& config,
                                                           const ConnectServices& services,
                                                           const ConnectOptions& options) {
  if (services.transport_factory) {
    auto made = services.transport_factory(config);
    if (made.ok() && !made.value()) {
      return Error::make(ErrorCode::internal,
                         server_prefix(config.name) + "the transport factory returned no transport");
    }
    if (!made.ok()) {
      Error e = std::move(made).error();
      if (e.message.rfind(server_prefix(config.name), 0) != 0) {
        e.message = server_prefix(config.name) + e.message;
      }
      return e;
    }
    return made;
  }
  switch (config.type) {
    case TransportType::stdio:
      return detail::make_stdio_connection(config, services, options);
    case TransportType::http:
    case TransportType::sse: {
      if (!services.http_client) {
        return Error::make(ErrorCode::invalid_config,
                           server_prefix(config.name) +
                               "http/sse servers are not available on this platform");
      }
      HttpTransportOptions http;
      http.url = config.url;
      for (const auto& [name, value] : config.headers) http.headers.add(name, value);
      http.server_name = config.name;
      http.origin_locked = config.origin_locked;
      http.auth_storage = services.auth_storage;
      http.credential_id = config.auth.credential_id;
      http.mode = config.type == TransportType::sse ? HttpTransportMode::sse
                  : config.allows_sse_fallback()    ? HttpTransportMode::automatic
                                                    : HttpTransportMode::streamable;
      http.logger = services.logger;
      http.max_message_bytes = options.max_message_bytes;
      http.max_json_nesting_levels = options.max_json_nesting_levels;
      return make_http_transport(*services.executor, *services.http_client, std::move(http));
    }
  }
  return Error::make(ErrorCode::internal, server_prefix(config.name) + "unknown transport");
}

Result<std::unique_ptr<Transport>> make_transport(const ServerConfig& config,
                                                  const ConnectServices& services,
                                                  const ConnectOptions& options) {
  auto made = make_untapped_transport(config, services, options);
  if (made.ok() && options.message_tap) {
    return make_tapped_transport(std::move(made.value()), options.message_tap);
  }
  return made;
}

}  // namespace

Result<std::shared_ptr<ClientSession>> connect_to_server(
    const ServerConfig& config, const ConnectServices& services, ConnectOptions options,
    std::function<void(Result<std::shared_ptr<ClientSession>>)> done) {
  if (!services.executor) {
    return Error::make(ErrorCode::invalid_argument, "connect_to_server: no executor");
  }
  auto transport = make_transport(config, services, options);
  if (!transport.ok()) return std::move(transport).error();

  ClientOptions client;
  client.client_info = options.client_info;
  client.protocol = config.protocol.empty() ? options.protocol : config.protocol;
  client.prior_protocol_version = options.prior_protocol_version;
  client.http = config.type != TransportType::stdio && !services.transport_factory;
  client.input = options.input;
  client.probe_network_failure_means_legacy = options.probe_network_failure_means_legacy;
  client.roots = roots_for(config, options);
  // Made on the executor when the probe ended the first connection (SPEC §14). One shared
  // copy of what make_transport reads: the callback is copied with the options.
  struct Respawn {
    ServerConfig config;
    ConnectServices services;
    ConnectOptions options;
  };
  Respawn what{config, services, {}};
  what.options.cwd = options.cwd;
  what.options.max_message_bytes = options.max_message_bytes;
  what.options.max_json_nesting_levels = options.max_json_nesting_levels;
  what.options.message_tap = options.message_tap;
  auto again = std::make_shared<const Respawn>(std::move(what));
  client.respawn = [again]() -> Result<std::unique_ptr<Transport>> {
    return make_transport(again->config, again->services, again->options);
  };
  client.server_name = config.name;
  client.connect_timeout = effective_timeout(config, options);
  client.request_timeout = client.connect_timeout;
  client.on_notification = std::move(options.on_notification);
  client.on_close = std::move(options.on_close);
  client.on_session_renewed = std::move(options.on_session_renewed);
  client.logger = services.logger;

  auto session = ClientSession::create(*services.executor, std::move(transport.value()),
                                       std::move(client));
  // The session owns this callback, so it must not own the session: a weak reference.
  // A destroyed session never calls back, so `weak` is alive whenever this runs.
  std::weak_ptr<ClientSession> weak = session;
  session->connect([weak, done = std::move(done)](Status status) {
    if (!status.ok()) return done(std::move(status).error());
    done(weak.lock());
  });
  return session;
}

}  // namespace mcprt
