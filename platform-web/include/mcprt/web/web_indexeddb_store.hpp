#pragma once
// WebIndexedDbStore: the KeyValueStore seam (mcprt/platform/key_value_store.hpp) over one
// IndexedDB object store — the browser home of the tool cache (SPEC §4, §11).
// [x] get / put / remove, each one readwrite|readonly transaction, values stored as strings
// [x] the database opens lazily, once per (database, store) pair, shared by every store
//     object; a missing object store is created by a version upgrade; the connection
//     closes itself when another tab upgrades the database
// [x] no `indexedDB` at all (Node without fake-indexeddb): the values live in memory, per
//     module instance, for its life (the OAuth credentials of a Node agent; js/index.js
//     turns the tool cache off there unless the host asks for it)
// [x] an IndexedDB that fails (a locked-down browser, quota): the operation fails with
//     the browser's error, which the tool cache treats as a miss
// [ ] quota handling beyond reporting the error; key listing
//
// Node: `import "fake-indexeddb/auto"` before loading the module gives it an in-process
// IndexedDB instead (the same lifetime, but shared by every module instance).
//
// Async contract: completions are posted to the executor, exactly once each; after the
// store is destroyed, completions still in flight are dropped.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/key_value_store.hpp"

namespace mcprt::web {

inline constexpr const char* kDefaultIndexedDbName = "mcprt";
inline constexpr const char* kDefaultIndexedDbStore = "tools";

class WebIndexedDbStore final : public KeyValueStore {
 public:
  WebIndexedDbStore(Executor& executor, std::string database = kDefaultIndexedDbName,
                    std::string object_store = kDefaultIndexedDbStore);
  ~WebIndexedDbStore() override;
  WebIndexedDbStore(const WebIndexedDbStore&) = delete;
  WebIndexedDbStore& operator=(const WebIndexedDbStore&) = delete;

  void get(const std::string& key,
           std::function<void(Result<std::optional<std::string>>)> done) override;
  void put(const std::string& key, std::string value, std::function<void(Status)> done) override;
  void remove(const std::string& key, std::function<void(Status)> done) override;

  const std::string& database() const { return database_; }
  const std::string& object_store() const { return object_store_; }

 private:
  void start(int kind, const std::string& key, const std::string& value,
             std::function<void(Result<std::optional<std::string>>)> done);

  Executor& executor_;
  std::string database_;
  std::string object_store_;
  std::shared_ptr<bool> alive_;
};

}  // namespace mcprt::web
