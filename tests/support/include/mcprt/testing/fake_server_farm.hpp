#pragma once
// FakeServerFarm: a fake "network" of FakeServers keyed by server name, plugged into the
// manager (or connect_to_server) through ManagerServices/ConnectServices::transport_factory.
//
//   FakeServerFarm farm(executor);
//   farm.on_connect("fs", [](FakeServer& s) { s.set_tools({{{"name", "read"}}}); });
//   services.transport_factory = farm.factory();
//   ... farm.latest("fs")->close_with_error(...);   // play a crash
//
// Every connection attempt gets a fresh FakeServer, set up by the name's setup function
// (a default FakeServer when there is none), so a reconnect meets a new "process". The
// farm keeps every server it made, so tests can look at earlier connections; it must
// outlive whatever holds the client ends. Single-threaded, on the executor.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/config.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/testing/fake_server.hpp"
#include "mcprt/transport.hpp"

namespace mcprt::testing {

class FakeServerFarm {
 public:
  using Setup = std::function<void(FakeServer&)>;
  using Factory = std::function<Result<std::unique_ptr<Transport>>(const ServerConfig&)>;

  explicit FakeServerFarm(Executor& executor) : executor_(executor) {}

  // Applied to every new FakeServer for `server` (replaces an earlier setup).
  void on_connect(const std::string& server, Setup setup);
  // From now on the factory fails for `server` with `error` (nullopt = succeed again),
  // as a spawn failure would.
  void fail_connect(const std::string& server, std::optional<Error> error);

  // The transport factory; it refers to this farm.
  Factory factory();

  // The newest FakeServer for `server`, or null.
  FakeServer* latest(const std::string& server);
  // Every FakeServer made for `server`, oldest first.
  std::vector<FakeServer*> all(const std::string& server);
  // How often the factory was called for `server` (failed calls included), and when.
  std::size_t attempts(const std::string& server) const;
  std::vector<TimePoint> attempt_times(const std::string& server) const;
  // The config the factory was last called with for `server` (resolved).
  std::optional<ServerConfig> last_config(const std::string& server) const;

 private:
  Result<std::unique_ptr<Transport>> make(const ServerConfig& config);

  Executor& executor_;
  std::map<std::string, Setup> setups_;
  std::map<std::string, Error> failures_;
  std::map<std::string, std::vector<std::unique_ptr<FakeServer>>> servers_;
  std::map<std::string, std::vector<TimePoint>> attempt_times_;
  std::map<std::string, ServerConfig> last_config_;
};

}  // namespace mcprt::testing
