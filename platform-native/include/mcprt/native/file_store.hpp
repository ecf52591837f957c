#pragma once
// NativeFileStore: the native KeyValueStore (SPEC §4), one file per key in a directory,
// by default $XDG_CACHE_HOME/mcprt/ (else ~/.cache/mcprt/).
//
// Implements:
//  [x] get / put / remove with the async contract: the file I/O runs synchronously inside
//      the call (entries are small), the completion is posted to the executor
//  [x] atomic replace: write a temp file in the same directory, then rename(2) over the
//      entry, so a reader sees the old or the new value, never a mix; the temp file is
//      removed when anything fails
//  [x] keys encoded into safe file names (see file_name_for); the directory is created
//      on the first put
//  [x] a missing entry (or a missing directory) is nullopt; any other failure (the
//      directory is not a directory, not readable, ...) is an ErrorCode::transport error
//      with the path and the system's reason
//  [ ] no fsync: a crash may lose the newest entry (the cache is best effort), never
//      leave a torn one
//  [ ] no locking between processes: the last writer wins, which is fine for a cache
//
// Threading: call from the executor's thread (as every core object); completions run
// there too and capture no pointer to the store, so the store may be destroyed first.

#include <string>

#include "mcprt/discovery.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/key_value_store.hpp"

namespace mcprt::native {

class NativeFileStore final : public KeyValueStore {
 public:
  // `dir` need not exist yet. The executor must outlive every pending completion.
  NativeFileStore(std::string dir, Executor& executor);

  void get(const std::string& key,
           std::function<void(Result<std::optional<std::string>>)> done) override;
  void put(const std::string& key, std::string value, std::function<void(Status)> done) override;
  void remove(const std::string& key, std::function<void(Status)> done) override;

  const std::string& dir() const { return dir_; }
  // The file holding `key`: dir() + "/" + file_name_for(key).
  std::string path_for(const std::string& key) const;

  // Bytes of [A-Za-z0-9_.-] are kept, every other byte (and a leading '.') becomes %XX,
  // so names never start with '.' (temp files do) and "." / ".." cannot occur. Names over
  // 200 bytes keep a prefix and end with "~" + 16 hex digits of the key's hash. An empty
  // key has no file name (the operations fail with invalid_argument).
  static std::string file_name_for(const std::string& key);

 private:
  std::string dir_;
  Executor& executor_;
};

// $XDG_CACHE_HOME/mcprt when XDG_CACHE_HOME is set to an absolute path, else
// $HOME/.cache/mcprt (HOME from the environment, else the password database); empty when
// no home is known (a host then runs without a tool cache). `env` null = the process
// environment.
std::string default_cache_dir(const EnvLookup& env = {});

}  // namespace mcprt::native
