// WebCredentialStore: OAuth credentials in IndexedDB, locks through navigator.locks or an
// in-realm FIFO (see web_credential_store.hpp).
#include "mcprt/web/web_credential_store.hpp"

#include <emscripten/emscripten.h>

#include <utility>

#include "web_js_calls.hpp"

namespace {
// mcprt_js_lock_request's outcome for a one-try request that found the lock taken.
constexpr int kLockBusy = 2;
}  // namespace

// clang-format off
// --- JS glue (one line after preprocessing: semicolons, double quotes) ---------------
// Module.mcprtLocks: request id → {release, withdraw}: release() gives a held lock back,
// withdraw() takes back a request still waiting. A navigator.locks lock is held while the
// Promise its callback returned is pending.
EM_JS(void, mcprt_js_lock_request, (int id, const char* name, int try_once), {
  var lockName = UTF8ToString(name);
  var entries = Module["mcprtLocks"] || (Module["mcprtLocks"] = new Map());
  var entry = { release : null, withdraw : null };
  entries.set(id, entry);
  var live = function() { return entries.get(id) === entry; };
  var locks = globalThis.navigator && globalThis.navigator.locks;
  if (locks && typeof locks.request == "function") {
    var controller = new AbortController();
    entry.withdraw = function() { controller.abort(); };
    var options = try_once ? { ifAvailable : true } : { signal : controller.signal };
    locks.request(lockName, options, function(lock) {
      if (!live()) return undefined;
      if (!lock) {
        entries.delete(id);
        Module["mcprtSettle"](id, 2, "");
        return undefined;
      }
      return new Promise(function(resolve) {
        entry.release = resolve;
        Module["mcprtSettle"](id, 1, "");
      });
    }).catch(function(e) {
      if (!live()) return;
      entries.delete(id);
      Module["mcprtSettle"](id, 0, Module["mcprtDescribe"](e));
    });
    return;
  }
  // No Web Locks: a FIFO per name, on the global object so that every mcprt module in this
  // realm shares it. The head of a queue holds the lock.
  var queues = globalThis["__mcprtCredentialLocks"] || (globalThis["__mcprtCredentialLocks"] = new Map());
  var queue = queues.get(lockName);
  if (!queue) {
    queue = [];
    queues.set(lockName, queue);
  }
  if (try_once && queue.length > 0) {
    entries.delete(id);
    Promise.resolve().then(function() { Module["mcprtSettle"](id, 2, ""); });
    return;
  }
  var waiter = {};
  var leave = function() {
    var at = queue.indexOf(waiter);
    if (at < 0) return;
    queue.splice(at, 1);
    if (queue.length == 0) {
      if (queues.get(lockName) === queue) queues.delete(lockName);
      return;
    }
    if (at == 0) Promise.resolve().then(queue[0].grant);
  };
  waiter.grant = function() {
    if (!live()) { leave(); return; }
    entry.release = leave;
    Module["mcprtSettle"](id, 1, "");
  };
  entry.withdraw = leave;
  queue.push(waiter);
  if (queue.length == 1) Promise.resolve().then(waiter.grant);
});

EM_JS(void, mcprt_js_lock_release, (int id), {
  var entries = Module["mcprtLocks"];
  var entry = entries && entries.get(id);
  if (!entry) return;
  entries.delete(id);
  if (entry.release) entry.release();
  else if (entry.withdraw) entry.withdraw();
});
// clang-format on

namespace mcprt::web {
namespace {

class WebCredentialLock final : public CredentialLock {
 public:
  explicit WebCredentialLock(int id) : id_(id) {}
  ~WebCredentialLock() override { mcprt_js_lock_release(id_); }
  WebCredentialLock(const WebCredentialLock&) = delete;
  WebCredentialLock& operator=(const WebCredentialLock&) = delete;

 private:
  int id_;
};

using LockDone = std::function<void(Result<std::unique_ptr<CredentialLock>>)>;

// Shared by the JS answer and the timeout, whichever comes first.
struct PendingLock {
  int id = 0;
  ScopedTimer timer;
  LockDone done;
};

}  // namespace

WebCredentialStore::WebCredentialStore(Executor& executor, std::string database,
                                       std::string object_store)
    : executor_(executor), values_(executor, std::move(database), std::move(object_store)) {}

WebCredentialStore::~WebCredentialStore() {
  // Pending lock requests: no callback, and the JS side withdraws them (or gives back a
  // lock granted meanwhile).
  detail::cancel_js_calls_of(this, [](int id) { mcprt_js_lock_release(id); });
}

void WebCredentialStore::get(const std::string& key,
                             std::function<void(Result<std::optional<std::string>>)> done) {
  values_.get(key, std::move(done));
}

void WebCredentialStore::put(const std::string& key, std::string value,
                             std::function<void(Status)> done) {
  values_.put(key, std::move(value), std::move(done));
}

void WebCredentialStore::remove(const std::string& key, std::function<void(Status)> done) {
  values_.remove(key, std::move(done));
}

void WebCredentialStore::lock(const std::string& key, Millis wait, LockDone done) {
  auto pending = std::make_shared<PendingLock>();
  pending->done = std::move(done);
  const std::string what = "the credential lock on \"" + key + "\"";
  pending->id =
      detail::begin_js_call(this, executor_, [pending, what](int outcome, std::string value) {
        pending->timer.reset();
        LockDone done = std::move(pending->done);
        if (outcome == detail::kJsOk) {
          auto lock = std::make_unique<WebCredentialLock>(pending->id);
          if (done) done(std::unique_ptr<CredentialLock>(std::move(lock)));
          return;  // without a callback the lock is released right here
        }
        if (!done) return;
        if (outcome == kLockBusy) {
          done(Error::make(ErrorCode::timeout, what +
                                                   " is held elsewhere (another tab or runtime is "
                                                   "refreshing this credential)"));
        } else {
          done(Error::make(ErrorCode::internal, "requesting " + what + " failed: " + value));
        }
      });
  const std::string lock_name = "mcprt-credential:" + database() + "/" + object_store() + "/" + key;
  const bool try_once = wait.count() <= 0;
  mcprt_js_lock_request(pending->id, lock_name.c_str(), try_once ? 1 : 0);
  if (try_once) return;
  std::weak_ptr<PendingLock> weak = pending;
  pending->timer = ScopedTimer(executor_, executor_.post_after(wait, [weak, what, wait] {
    auto self = weak.lock();
    if (!self) return;
    self->timer.release();
    if (!detail::cancel_js_call(self->id)) return;  // answered already
    mcprt_js_lock_release(self->id);                // withdraw the request
    LockDone done = std::move(self->done);
    if (done) {
      done(Error::make(ErrorCode::timeout, what + " was not free within " +
                                               std::to_string(wait.count()) +
                                               " ms (another tab or runtime is refreshing this "
                                               "credential)"));
    }
  }));
}

}  // namespace mcprt::web
