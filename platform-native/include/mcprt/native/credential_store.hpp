#pragma once
// NativeCredentialStore: the native CredentialStore seam (SPEC §13 "Storage",
// mcprt/platform/credential_store.hpp): one file per key, by default under
// $XDG_DATA_HOME/mcprt/credentials/ (else ~/.local/share/mcprt/credentials/).
//
//   mcprt::native::NativeCredentialStore store(mcprt::native::default_credentials_dir(), executor);
//   store.lock(key, Millis(30000), [&](Result<std::unique_ptr<CredentialLock>> lock) { ... });
//
// Implements:
//  [x] get / put / remove through a NativeFileStore (file_store.hpp): keys encoded into
//      file names as the tool cache does, "<name>.json"; files created 0600 (umask-safe),
//      the directory 0700 (an existing one is tightened; one owned by another user is
//      refused); writes atomic and durable (temp file, fsync, rename, fsync of the
//      directory), so a rotated refresh token reported written survives a crash
//  [x] a value that cannot be read, or is not JSON (a damaged or foreign file), is an
//      ErrorCode::transport error naming the file, never quoting its content
//  [x] lock(key, wait, done): an flock(LOCK_EX) on "<name>.lock" beside the entry, held by
//      the CredentialLock (closing its descriptor releases it, also when the process
//      dies). flock locks belong to an open file, so every lock() waits for every other
//      holder: another process, another store, or an earlier lock() of this one (the lock
//      is not re-entrant). Waiting polls LOCK_NB every kLockPollInterval on the executor
//      (post_after), never blocking its thread; `wait` 0 = one attempt. The holder writes
//      its pid into the lock file, so a timeout names the process that held it
//  [ ] lock files are never deleted (deleting one while another process waits on it
//      would let two holders lock different files); remove() leaves "<name>.lock" behind
//  [ ] no locking on NFS beyond what flock gives there
//
// Threading: call from the executor's thread; completions run there. get/put/remove
// complete even after the store is destroyed (as NativeFileStore's do); a lock() still
// pending or not yet delivered when the store is destroyed runs no callback (a lock it had
// taken is released). A CredentialLock may outlive the store. The executor must outlive
// every pending completion.

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "mcprt/discovery.hpp"
#include "mcprt/native/file_store.hpp"
#include "mcprt/platform/credential_store.hpp"
#include "mcprt/platform/executor.hpp"

namespace mcprt::native {

class NativeCredentialStore final : public CredentialStore {
 public:
  // How often a lock() that waits tries again.
  static constexpr Millis kLockPollInterval{25};

  // `dir` need not exist yet (it is created 0700 on the first put or lock).
  NativeCredentialStore(std::string dir, Executor& executor);
  ~NativeCredentialStore() override;
  NativeCredentialStore(const NativeCredentialStore&) = delete;
  NativeCredentialStore& operator=(const NativeCredentialStore&) = delete;

  void get(const std::string& key,
           std::function<void(Result<std::optional<std::string>>)> done) override;
  void put(const std::string& key, std::string value, std::function<void(Status)> done) override;
  void remove(const std::string& key, std::function<void(Status)> done) override;
  void lock(const std::string& key, Millis wait,
            std::function<void(Result<std::unique_ptr<CredentialLock>>)> done) override;

  const std::string& dir() const { return files_.dir(); }
  // dir() + "/" + NativeFileStore::file_name_for(key) + ".json".
  std::string path_for(const std::string& key) const { return files_.path_for(key); }
  // dir() + "/" + NativeFileStore::file_name_for(key) + ".lock".
  std::string lock_path_for(const std::string& key) const;

 private:
  struct Waiter;
  using LockResult = Result<std::unique_ptr<CredentialLock>>;
  using LockDone = std::function<void(LockResult)>;

  void retry(std::uint64_t id);
  void deliver(LockDone done, LockResult result);

  NativeFileStore files_;
  Executor& executor_;
  std::map<std::uint64_t, std::unique_ptr<Waiter>> waiters_;
  std::uint64_t next_waiter_ = 1;
  // Checked by posted lock completions (executor thread only): false once destroyed.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// xdg_base_dir("XDG_DATA_HOME", ".local/share") + "/mcprt/credentials"; empty when no home
// is known (a host then has no place for credentials and must say so). `env` null = the
// process environment.
std::string default_credentials_dir(const EnvLookup& env = {});

}  // namespace mcprt::native
