#pragma once
// The CredentialStore seam (SPEC §13 "Storage", DESIGN "The seams"): where OAuth
// credentials (client registrations, access and refresh tokens) persist, and the lock that
// makes a token refresh one transaction.
//   native: one file per key under $XDG_DATA_HOME/mcprt/credentials/ (else
//           ~/.local/share/mcprt/credentials/), mode 0600 in a 0700 directory, written
//           atomically (temp file + rename); lock() is an flock on "<key>.lock" beside it,
//           so two mcprt processes never refresh the same credential at once;
//   web:    an IndexedDB object store of its own; lock() is navigator.locks when the
//           browser has it, else a lock within the page;
//   tests:  an in-memory store whose lock is a FIFO within the process.
//
// Keys are chosen by the core (short ASCII; the OAuth client derives them from the
// authorization server's issuer and the resource); values are opaque JSON text. The store
// never logs a value. The KeyValueStore contract applies to get/put/remove.

#include <functional>
#include <memory>
#include <string>

#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/key_value_store.hpp"
#include "mcprt/result.hpp"

namespace mcprt {

// Held while it lives: destroying it releases the lock (and, natively, the flock).
class CredentialLock {
 public:
  virtual ~CredentialLock() = default;
};

class CredentialStore : public KeyValueStore {
 public:
  // Exclusive access to `key` across every holder the platform can see (natively: every
  // process of this user). `done` runs once: with the lock when it is held, or with an
  // ErrorCode::timeout error after `wait` passed without it. Destroying the store with a
  // lock() pending runs no callback.
  virtual void lock(const std::string& key, Millis wait,
                    std::function<void(Result<std::unique_ptr<CredentialLock>>)> done) = 0;
};

}  // namespace mcprt
