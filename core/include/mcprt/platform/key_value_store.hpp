#pragma once
// The KeyValueStore seam (SPEC §4): where the tool cache lives. Native: one file per key
// under $XDG_CACHE_HOME/mcprt/ (atomic temp file + rename). Web: one IndexedDB object
// store. Tests and hosts without persistence: MemoryKeyValueStore (mcprt/memory_store.hpp).
//
// Asynchronous and under the async contract (executor.hpp): callbacks run later, on the
// store's executor, exactly once. Keys are short ASCII strings chosen by the core (the
// store may encode them into file names); values are opaque text (JSON).

#include <functional>
#include <optional>
#include <string>

#include "mcprt/result.hpp"

namespace mcprt {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;

  // nullopt = no such key. An Error = the store could not be read (the cache treats both
  // as a miss; the error is logged as a warning).
  virtual void get(const std::string& key,
                   std::function<void(Result<std::optional<std::string>>)> done) = 0;
  // Replaces the value atomically: a reader sees the old or the new value, never a mix.
  virtual void put(const std::string& key, std::string value,
                   std::function<void(Status)> done) = 0;
  // Removing a missing key succeeds.
  virtual void remove(const std::string& key, std::function<void(Status)> done) = 0;
};

}  // namespace mcprt
