#pragma once
// An in-memory KeyValueStore: the tests' store, and a host's choice when nothing should
// persist. Completions are posted to the executor (async contract).

#include <map>
#include <string>

#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/key_value_store.hpp"

namespace mcprt {

class MemoryKeyValueStore final : public KeyValueStore {
 public:
  explicit MemoryKeyValueStore(Executor& executor) : executor_(executor) {}

  void get(const std::string& key,
           std::function<void(Result<std::optional<std::string>>)> done) override;
  void put(const std::string& key, std::string value, std::function<void(Status)> done) override;
  void remove(const std::string& key, std::function<void(Status)> done) override;

  // Direct access for tests and hosts (synchronous).
  std::map<std::string, std::string>& entries() { return entries_; }

 private:
  Executor& executor_;
  std::map<std::string, std::string> entries_;
};

}  // namespace mcprt
