#pragma once
// An in-memory KeyValueStore: the tests' store, and a host's choice when nothing should
// persist. Completions are posted to the executor (async contract).
//
// Lifetime: a completion already posted still runs after the store is destroyed (it holds
// only its result), so a store may die before its executor drains.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "mcprt/platform/credential_store.hpp"
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

// An in-memory CredentialStore (OAuth credentials: mcprt/oauth.hpp) for tests and hosts
// without persistence: the MemoryKeyValueStore's get/put/remove, and lock() as a FIFO per
// key within this process. A waiter that gets no lock within `wait` gets ErrorCode::timeout
// (and leaves the queue). Completions are posted to the executor; destroying the store
// cancels pending lock() calls (no callback) and makes outstanding locks inert.
class MemoryCredentialStore final : public CredentialStore {
 public:
  explicit MemoryCredentialStore(Executor& executor);
  ~MemoryCredentialStore() override;

  void get(const std::string& key,
           std::function<void(Result<std::optional<std::string>>)> done) override;
  void put(const std::string& key, std::string value, std::function<void(Status)> done) override;
  void remove(const std::string& key, std::function<void(Status)> done) override;
  void lock(const std::string& key, Millis wait,
            std::function<void(Result<std::unique_ptr<CredentialLock>>)> done) override;

  // Direct access for tests and hosts (synchronous).
  std::map<std::string, std::string>& entries() { return values_.entries(); }
  void fail_reads(std::optional<Error> error) { values_.fail_reads(std::move(error)); }
  void fail_writes(std::optional<Error> error) { values_.fail_writes(std::move(error)); }
  // Whether `key` is locked now (tests of lock discipline).
  bool locked(const std::string& key) const;
  // How many lock() calls were granted so far, over all keys.
  int locks_granted() const;

  struct LockTable;

 private:
  Executor& executor_;
  MemoryKeyValueStore values_;
  std::shared_ptr<LockTable> locks_;
};

}  // namespace mcprt
