#pragma once
// An in-memory KeyValueStore: the tests' store, and a host's choice when nothing should
// persist. Completions are posted to the executor (async contract).
//
// Lifetime: a completion already posted still runs after the store is destroyed (it holds
// only its result), so a store may die before its executor drains.

#include <map>
#include <optional>
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

  // Fault injection for tests of callers: while set, every get (resp. put / remove) fails
  // with this error and leaves the entries unchanged. nullopt restores normal behaviour.
  void fail_reads(std::optional<Error> error) { read_error_ = std::move(error); }
  void fail_writes(std::optional<Error> error) { write_error_ = std::move(error); }

 private:
  Executor& executor_;
  std::map<std::string, std::string> entries_;
  std::optional<Error> read_error_;
  std::optional<Error> write_error_;
};

}  // namespace mcprt
