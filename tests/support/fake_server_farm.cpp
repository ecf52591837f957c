#include "mcprt/testing/fake_server_farm.hpp"

#include <utility>

namespace mcprt::testing {

void FakeServerFarm::on_connect(const std::string& server, Setup setup) {
  setups_[server] = std::move(setup);
}

void FakeServerFarm::fail_connect(const std::string& server, std::optional<Error> error) {
  if (error) {
    failures_[server] = std::move(*error);
  } else {
    failures_.erase(server);
  }
}

FakeServerFarm::Factory FakeServerFarm::factory() {
  return [this](const ServerConfig& config) { return make(config); };
}

Result<std::unique_ptr<Transport>> FakeServerFarm::make(const ServerConfig& config) {
  attempt_times_[config.name].push_back(executor_.now());
  last_config_.insert_or_assign(config.name, config);
  if (auto it = failures_.find(config.name); it != failures_.end()) return it->second;
  auto server = std::make_unique<FakeServer>(executor_);
  if (auto it = setups_.find(config.name); it != setups_.end() && it->second) it->second(*server);
  auto client = server->take_client_end();
  servers_[config.name].push_back(std::move(server));
  return client;
}

FakeServer* FakeServerFarm::latest(const std::string& server) {
  auto it = servers_.find(server);
  if (it == servers_.end() || it->second.empty()) return nullptr;
  return it->second.back().get();
}

std::vector<FakeServer*> FakeServerFarm::all(const std::string& server) {
  std::vector<FakeServer*> out;
  if (auto it = servers_.find(server); it != servers_.end()) {
    for (auto& s : it->second) out.push_back(s.get());
  }
  return out;
}

std::size_t FakeServerFarm::attempts(const std::string& server) const {
  auto it = attempt_times_.find(server);
  return it == attempt_times_.end() ? 0 : it->second.size();
}

std::vector<TimePoint> FakeServerFarm::attempt_times(const std::string& server) const {
  auto it = attempt_times_.find(server);
  return it == attempt_times_.end() ? std::vector<TimePoint>{} : it->second;
}

std::optional<ServerConfig> FakeServerFarm::last_config(const std::string& server) const {
  auto it = last_config_.find(server);
  if (it == last_config_.end()) return std::nullopt;
  return it->second;
}

}  // namespace mcprt::testing
