#include "mcprt/memory_store.hpp"

#include <cstdint>
#include <utility>

namespace mcprt {

// Each operation takes effect at once and only the completion is deferred: the posted
// closure captures the outcome, never `this`, so it is safe after the store is gone.

void MemoryKeyValueStore::get(const std::string& key,
                              std::function<void(Result<std::optional<std::string>>)> done) {
  Result<std::optional<std::string>> result = std::optional<std::string>{};
  if (read_error_) {
    result = *read_error_;
  } else if (auto it = entries_.find(key); it != entries_.end()) {
    result = std::optional<std::string>(it->second);
  }
  executor_.post([done = std::move(done), result = std::move(result)]() mutable {
    if (done) done(std::move(result));
  });
}

void MemoryKeyValueStore::put(const std::string& key, std::string value,
                              std::function<void(Status)> done) {
  Status status;
  if (write_error_) {
    status = *write_error_;
  } else {
    entries_[key] = std::move(value);
  }
  executor_.post([done = std::move(done), status = std::move(status)]() mutable {
    if (done) done(std::move(status));
  });
}

void MemoryKeyValueStore::remove(const std::string& key, std::function<void(Status)> done) {
  Status status;
  if (write_error_) {
    status = *write_error_;
  } else {
    entries_.erase(key);
  }
  executor_.post([done = std::move(done), status = std::move(status)]() mutable {
    if (done) done(std::move(status));
  });
}

}  // namespace mcprt

namespace mcprt {

// --- MemoryCredentialStore ------------------------------------------------------------

// The lock state outlives the store through the locks handed out (weak references): a lock
// released after the store died does nothing.
struct MemoryCredentialStore::LockTable {
  struct Waiter {
    std::uint64_t id = 0;
    std::function<void(Result<std::unique_ptr<CredentialLock>>)> done;
    TimerId timer = kNoTimer;
  };
  struct Key {
    bool held = false;
    std::deque<Waiter> waiters;
  };

  explicit LockTable(Executor& ex) : executor(ex) {}
  Executor& executor;
  bool alive = true;
  std::map<std::string, Key> keys;
  std::uint64_t next_id = 1;
  int granted = 0;
};

namespace {

using LockTable = MemoryCredentialStore::LockTable;

class MemoryCredentialLock final : public CredentialLock {
 public:
  MemoryCredentialLock(std::weak_ptr<LockTable> table, std::string key)
      : table_(std::move(table)), key_(std::move(key)) {}
  ~MemoryCredentialLock() override;

 private:
  std::weak_ptr<LockTable> table_;
  std::string key_;
};

// Hands the lock of `key` to `done` on a later executor turn; if the store is gone by then,
// nobody is called and the lock is dropped unused.
void grant(const std::shared_ptr<LockTable>& table, const std::string& key,
           std::function<void(Result<std::unique_ptr<CredentialLock>>)> done) {
  ++table->granted;
  std::weak_ptr<LockTable> weak = table;
  table->executor.post([weak, key, done = std::move(done)]() mutable {
    auto lock = std::make_unique<MemoryCredentialLock>(weak, key);
    auto t = weak.lock();
    if (!t || !t->alive) return;  // the lock's destructor releases nothing: the store is gone
    if (done) done(std::unique_ptr<CredentialLock>(std::move(lock)));
  });
}

MemoryCredentialLock::~MemoryCredentialLock() {
  auto table = table_.lock();
  if (!table || !table->alive) return;
  auto it = table->keys.find(key_);
  if (it == table->keys.end()) return;
  LockTable::Key& k = it->second;
  if (k.waiters.empty()) {
    table->keys.erase(it);
    return;
  }
  LockTable::Waiter next = std::move(k.waiters.front());
  k.waiters.pop_front();
  if (next.timer != kNoTimer) table->executor.cancel_timer(next.timer);
  grant(table, key_, std::move(next.done));  // stays held: handed straight on
}

}  // namespace

MemoryCredentialStore::MemoryCredentialStore(Executor& executor)
    : executor_(executor), values_(executor), locks_(std::make_shared<LockTable>(executor)) {}

MemoryCredentialStore::~MemoryCredentialStore() {
  locks_->alive = false;
  for (auto& [key, k] : locks_->keys) {
    for (auto& w : k.waiters) {
      if (w.timer != kNoTimer) executor_.cancel_timer(w.timer);
    }
  }
  locks_->keys.clear();
}

void MemoryCredentialStore::get(const std::string& key,
                                std::function<void(Result<std::optional<std::string>>)> done) {
  values_.get(key, std::move(done));
}

void MemoryCredentialStore::put(const std::string& key, std::string value,
                                std::function<void(Status)> done) {
  values_.put(key, std::move(value), std::move(done));
}

void MemoryCredentialStore::remove(const std::string& key, std::function<void(Status)> done) {
  values_.remove(key, std::move(done));
}

void MemoryCredentialStore::lock(const std::string& key, Millis wait,
                                 std::function<void(Result<std::unique_ptr<CredentialLock>>)> done) {
  LockTable::Key& k = locks_->keys[key];
  if (!k.held) {
    k.held = true;
    grant(locks_, key, std::move(done));
    return;
  }
  LockTable::Waiter waiter;
  waiter.id = locks_->next_id++;
  waiter.done = std::move(done);
  std::weak_ptr<LockTable> weak = locks_;
  const std::uint64_t id = waiter.id;
  waiter.timer = executor_.post_after(wait, [weak, key, id, wait] {
    auto table = weak.lock();
    if (!table || !table->alive) return;
    auto it = table->keys.find(key);
    if (it == table->keys.end()) return;
    auto& waiters = it->second.waiters;
    for (auto w = waiters.begin(); w != waiters.end(); ++w) {
      if (w->id != id) continue;
      auto cb = std::move(w->done);
      waiters.erase(w);
      if (cb) {
        cb(Error::make(ErrorCode::timeout, "the credential \"" + key + "\" stayed locked for " +
                                               std::to_string(wait.count()) + " ms"));
      }
      return;
    }
  });
  k.waiters.push_back(std::move(waiter));
}

bool MemoryCredentialStore::locked(const std::string& key) const {
  auto it = locks_->keys.find(key);
  return it != locks_->keys.end() && it->second.held;
}

int MemoryCredentialStore::locks_granted() const { return locks_->granted; }

}  // namespace mcprt
