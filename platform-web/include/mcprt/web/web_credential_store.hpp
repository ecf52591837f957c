#pragma once
// WebCredentialStore: the CredentialStore seam (mcprt/platform/credential_store.hpp) in the
// browser — OAuth credentials in an IndexedDB object store of their own, beside the tool
// cache (SPEC §13 "Storage").
// [x] get / put / remove: a WebIndexedDbStore on (database, object_store), default
//     "mcprt" / "credentials": same database, separate store, so clearing the tool cache
//     never signs anyone out
// [x] lock(key, wait): navigator.locks (Web Locks API) when the platform has it — one
//     holder per origin across every tab, window and worker, so two tabs never refresh
//     the same credential at once; else a FIFO per lock name within this JavaScript realm
//     (Node 20, old browsers), shared by every mcprt module loaded in it
// [x] wait <= 0: one try (navigator.locks ifAvailable); else an ErrorCode::timeout error
//     after `wait`, whose message names the key
// [ ] locks across browser profiles or origins (each has its own storage anyway)
//
// Lock names are "mcprt-credential:<database>/<object_store>/<key>". A CredentialLock
// releases when destroyed, also after the store is gone; destroying the store with lock()
// calls pending runs none of their callbacks and withdraws their requests.
//
// Async contract: as WebIndexedDbStore — completions on the executor, exactly once, none
// after the store is destroyed. Values are never logged.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "mcprt/platform/credential_store.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/web/web_indexeddb_store.hpp"

namespace mcprt::web {

inline constexpr const char* kDefaultCredentialStore = "credentials";

class WebCredentialStore final : public CredentialStore {
 public:
  WebCredentialStore(Executor& executor, std::string database = kDefaultIndexedDbName,
                     std::string object_store = kDefaultCredentialStore);
  ~WebCredentialStore() override;
  WebCredentialStore(const WebCredentialStore&) = delete;
  WebCredentialStore& operator=(const WebCredentialStore&) = delete;

  void get(const std::string& key,
           std::function<void(Result<std::optional<std::string>>)> done) override;
  void put(const std::string& key, std::string value, std::function<void(Status)> done) override;
  void remove(const std::string& key, std::function<void(Status)> done) override;
  void lock(const std::string& key, Millis wait,
            std::function<void(Result<std::unique_ptr<CredentialLock>>)> done) override;

  const std::string& database() const { return values_.database(); }
  const std::string& object_store() const { return values_.object_store(); }

 private:
  Executor& executor_;
  WebIndexedDbStore values_;
};

}  // namespace mcprt::web
