#pragma once
// NativeFileStore: the native KeyValueStore (SPEC §4), one file per key in a directory,
// by default $XDG_CACHE_HOME/mcprt/ (else ~/.cache/mcprt/). The credential store
// (credential_store.hpp) keeps its files with one too, through NativeFileStoreOptions.
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
//  [x] files are created 0600 (O_CREAT|O_EXCL with mode 0600, so the umask cannot widen
//      them); options.private_dir: the directory is created 0700 (and tightened to 0700,
//      or refused when another user owns it)
//  [x] options.durable: fsync of the temp file before the rename and of the directory
//      after it; without it (the cache) a crash may lose the newest entry, never leave a
//      torn one
//  [ ] no locking between processes: the last writer wins, which is fine for a cache
//
// Threading: call from the executor's thread (as every core object); completions run
// there too and capture no pointer to the store, so the store may be destroyed first.

#include <string>

#include "mcprt/discovery.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/key_value_store.hpp"

namespace mcprt::native {

struct NativeFileStoreOptions {
  // Names the store in errors: "<label>: cannot read <path>: <reason>".
  std::string label = "Cache store";
  // Appended to every entry's file name, so other files kept in the same directory (the
  // credential store's "<name>.lock") can never share an entry's name.
  std::string file_suffix;
  // Create the directory 0700; an existing one is tightened to 0700, and one that belongs
  // to another user is an error.
  bool private_dir = false;
  // fsync the entry before and the directory after the rename: a put that reported
  // success survives a crash.
  bool durable = false;
};

class NativeFileStore final : public KeyValueStore {
 public:
  // `dir` need not exist yet. The executor must outlive every pending completion.
  NativeFileStore(std::string dir, Executor& executor, NativeFileStoreOptions options = {});

  void get(const std::string& key,
           std::function<void(Result<std::optional<std::string>>)> done) override;
  void put(const std::string& key, std::string value, std::function<void(Status)> done) override;
  void remove(const std::string& key, std::function<void(Status)> done) override;

  const std::string& dir() const { return dir_; }
  // The file holding `key`: dir() + "/" + file_name_for(key) + options.file_suffix.
  std::string path_for(const std::string& key) const;
  // Creates the directory (and its parents) as put() does, synchronously. An error names
  // the directory.
  Status ensure_dir() const;

  // Bytes of [A-Za-z0-9_.-] are kept, every other byte (and a leading '.') becomes %XX,
  // so names never start with '.' (temp files do) and "." / ".." cannot occur. Names over
  // 200 bytes keep a prefix and end with "~" + 16 hex digits of the key's hash. An empty
  // key has no file name (the operations fail with invalid_argument).
  static std::string file_name_for(const std::string& key);

 private:
  std::string dir_;
  Executor& executor_;
  NativeFileStoreOptions options_;
};

// An XDG base directory: $<xdg_var> when it is set to an absolute path, else
// $HOME/<home_relative> (HOME from the environment, else the password database); empty
// when no home is known. `env` null = the process environment.
std::string xdg_base_dir(const char* xdg_var, const char* home_relative, const EnvLookup& env = {});

// xdg_base_dir("XDG_CACHE_HOME", ".cache") + "/mcprt" ($XDG_CACHE_HOME/mcprt, else
// ~/.cache/mcprt); empty when no home is known (a host then runs without a tool cache).
std::string default_cache_dir(const EnvLookup& env = {});

}  // namespace mcprt::native
