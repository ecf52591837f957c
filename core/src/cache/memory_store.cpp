#include "mcprt/memory_store.hpp"

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
