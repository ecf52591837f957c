// NativeCredentialStore (see mcprt/native/credential_store.hpp): a private NativeFileStore
// for the values and flock(2) on "<name>.lock" files for the per-key lock.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "mcprt/native/credential_store.hpp"

namespace mcprt::native {

namespace {

constexpr const char kLabel[] = "Credential store";

NativeFileStoreOptions credential_file_options() {
  NativeFileStoreOptions o;
  o.label = kLabel;
  o.file_suffix = ".json";
  o.private_dir = true;
  o.durable = true;
  return o;
}

Error lock_io_error(const std::string& what, const std::string& path, int err) {
  return Error::make(ErrorCode::transport, std::string(kLabel) + ": cannot " + what + " " + path +
                                               ": " + std::strerror(err));
}

// Closing the descriptor releases the flock (so does the process ending).
class FileLock final : public CredentialLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {}
  ~FileLock() override { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// 0 = locked, EWOULDBLOCK = another holder, anything else = an error.
int try_flock(int fd) {
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    if (errno != EINTR) return errno == EAGAIN ? EWOULDBLOCK : errno;
  }
}

// The holder leaves its pid in the lock file, so a waiter that gives up can say who held it.
void record_holder(int fd) {
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t n = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
}

std::string recorded_holder(int fd) {
  char buf[16];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  std::string pid;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) pid += buf[i];
  return pid;
}

}  // namespace

struct NativeCredentialStore::Waiter {
  int fd = -1;
  std::string path;
  Millis wait{0};
  TimePoint deadline;
  LockDone done;
  ScopedTimer timer;
};

NativeCredentialStore::NativeCredentialStore(std::string dir, Executor& executor)
    : files_(std::move(dir), executor, credential_file_options()), executor_(executor) {}

NativeCredentialStore::~NativeCredentialStore() {
  *alive_ = false;
  for (auto& [id, w] : waiters_) ::close(w->fd);
}

std::string NativeCredentialStore::lock_path_for(const std::string& key) const {
  return dir() + "/" + NativeFileStore::file_name_for(key) + ".lock";
}

void NativeCredentialStore::get(const std::string& key,
                                std::function<void(Result<std::optional<std::string>>)> done) {
  files_.get(key, [path = path_for(key),
                   done = std::move(done)](Result<std::optional<std::string>> r) {
    // Values are JSON; anything else is a damaged or foreign file. Its bytes stay out of
    // the message (a JSON parser's own message would quote them).
    if (r.ok() && r->has_value() && !nlohmann::json::accept(**r)) {
      r = Error::make(
          ErrorCode::transport,
          std::string(kLabel) + ": " + path +
              " is not valid JSON (damaged, or not written by mcprt); remove it to sign in again");
    }
    if (done) done(std::move(r));
  });
}

void NativeCredentialStore::put(const std::string& key, std::string value,
                                std::function<void(Status)> done) {
  files_.put(key, std::move(value), std::move(done));
}

void NativeCredentialStore::remove(const std::string& key, std::function<void(Status)> done) {
  files_.remove(key, std::move(done));
}

void NativeCredentialStore::deliver(LockDone done, LockResult result) {
  // std::function needs a copyable closure; the lock inside the result is move-only.
  auto shared = std::make_shared<LockResult>(std::move(result));
  executor_.post([alive = alive_, done = std::move(done), shared]() mutable {
    if (*alive && done) done(std::move(*shared));
  });
}

void NativeCredentialStore::lock(const std::string& key, Millis wait, LockDone done) {
  if (key.empty()) {
    deliver(std::move(done),
            Error::make(ErrorCode::invalid_argument, std::string(kLabel) + ": empty key"));
    return;
  }
  if (Status s = files_.ensure_dir(); !s) {
    deliver(std::move(done), std::move(s).error());
    return;
  }
  const std::string path = lock_path_for(key);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    deliver(std::move(done), lock_io_error("open lock file", path, errno));
    return;
  }
  auto w = std::make_unique<Waiter>();
  w->fd = fd;
  w->path = path;
  w->wait = std::max(wait, Millis(0));
  w->deadline = executor_.now() + w->wait;
  w->done = std::move(done);
  const std::uint64_t id = next_waiter_++;
  waiters_.emplace(id, std::move(w));
  retry(id);
}

void NativeCredentialStore::retry(std::uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  Waiter& w = *it->second;
  w.timer.release();
  const int rc = try_flock(w.fd);
  if (rc == EWOULDBLOCK) {
    const TimePoint now = executor_.now();
    if (now < w.deadline) {
      const Millis delay = std::min<Millis>(kLockPollInterval, w.deadline - now);
      w.timer = ScopedTimer(executor_, executor_.post_after(delay, [this, id] { retry(id); }));
      return;
    }
  }
  std::unique_ptr<Waiter> done_waiter = std::move(it->second);
  waiters_.erase(it);
  if (rc == 0) {
    record_holder(done_waiter->fd);
    deliver(std::move(done_waiter->done), LockResult(std::make_unique<FileLock>(done_waiter->fd)));
    return;
  }
  if (rc == EWOULDBLOCK) {
    const std::string holder = recorded_holder(done_waiter->fd);
    ::close(done_waiter->fd);
    deliver(std::move(done_waiter->done),
            Error::make(ErrorCode::timeout,
                        std::string(kLabel) + ": " + done_waiter->path + " is locked" +
                            (holder.empty() ? std::string() : " by process " + holder) +
                            " (another mcprt is refreshing or signing in); gave up after " +
                            std::to_string(done_waiter->wait.count()) + " ms"));
    return;
  }
  ::close(done_waiter->fd);
  deliver(std::move(done_waiter->done), lock_io_error("lock", done_waiter->path, rc));
}

std::string default_credentials_dir(const EnvLookup& env) {
  std::string base = xdg_base_dir("XDG_DATA_HOME", ".local/share", env);
  return base.empty() ? base : base + "/mcprt/credentials";
}

}  // namespace mcprt::native
