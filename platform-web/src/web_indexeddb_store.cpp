// WebIndexedDbStore: KeyValueStore over one IndexedDB object store (see
// web_indexeddb_store.hpp).
#include "mcprt/web/web_indexeddb_store.hpp"

#include <emscripten/emscripten.h>

#include <map>
#include <utility>

namespace mcprt::web {
namespace {

enum OpKind : int { kGet = 0, kPut = 1, kRemove = 2 };
// mcprt_web_idb_done's `outcome`.
enum Outcome : int { kMissing = 0, kValue = 1, kFailed = 2 };

struct PendingOp {
  const void* owner = nullptr;  // the store that started it
  Executor* executor = nullptr;
  std::weak_ptr<bool> store_alive;
  std::string what;  // "get \"key\"" for messages
  std::function<void(Result<std::optional<std::string>>)> done;
};

std::map<int, PendingOp>& pending_ops() {
  static std::map<int, PendingOp> table;
  return table;
}
int g_next_op = 1;

}  // namespace
}  // namespace mcprt::web

// --- JS glue (one line after preprocessing: semicolons, double quotes) ---------------
// Module.mcprtIdb maps "db\u0000store" to a Promise of an open IDBDatabase. Without
// IndexedDB (Node without fake-indexeddb), Module.mcprtIdbMemory maps
// "db\u0000store\u0000key" to the value instead: the OAuth credentials and a cache the host
// asked for live as long as the module, and nothing fails (or warns) on every connect.
EM_JS(void, mcprt_js_idb_op,
      (int op, int kind, const char* db_name, const char* store_name, const char* key,
       const char* value, int value_len),
      {
        var dbName = UTF8ToString(db_name);
        var storeName = UTF8ToString(store_name);
        var k = UTF8ToString(key);
        var v = kind == 1 ? UTF8ToString(value, value_len) : null;
        function report(outcome, text) {
          var n = lengthBytesUTF8(text) + 1;
          var p = _malloc(n);
          stringToUTF8(text, p, n);
          try { Module["_mcprt_web_idb_done"](op, outcome, p, n - 1); } finally { _free(p); }
        }
        function describe(e) {
          if (!e) return "unknown error";
          return (e.name ? e.name + ": " : "") + (e.message || String(e));
        }
        var idb = globalThis.indexedDB;
        if (!idb) {
          var memory = Module["mcprtIdbMemory"] || (Module["mcprtIdbMemory"] = new Map());
          var memoryKey = dbName + "\u0000" + storeName + "\u0000" + k;
          Promise.resolve().then(function() {
            if (kind == 0) {
              var found = memory.get(memoryKey);
              if (found === undefined) report(0, ""); else report(1, found);
              return;
            }
            if (kind == 1) memory.set(memoryKey, v); else memory.delete(memoryKey);
            report(0, "");
          });
          return;
        }
        var cache = Module["mcprtIdb"] || (Module["mcprtIdb"] = new Map());
        var cacheKey = dbName + "\u0000" + storeName;
        function open(version) {
          return new Promise(function(resolve, reject) {
            var req = version ? idb.open(dbName, version) : idb.open(dbName);
            req.onupgradeneeded = function() {
              var db = req.result;
              if (!db.objectStoreNames.contains(storeName)) db.createObjectStore(storeName);
            };
            req.onsuccess = function() {
              var db = req.result;
              if (!db.objectStoreNames.contains(storeName)) {
                var next = db.version + 1;
                db.close();
                open(next).then(resolve, reject);
                return;
              }
              db.onversionchange = function() {
                db.close();
                if (cache.get(cacheKey) === opened) cache.delete(cacheKey);
              };
              resolve(db);
            };
            req.onerror = function() { reject(req.error); };
            req.onblocked = function() { reject(new Error("opening the database is blocked by another connection")); };
          });
        }
        var opened = cache.get(cacheKey);
        if (!opened) {
          opened = open(0);
          cache.set(cacheKey, opened);
          opened.catch(function() { if (cache.get(cacheKey) === opened) cache.delete(cacheKey); });
        }
        opened.then(function(db) {
          var tx = db.transaction(storeName, kind == 0 ? "readonly" : "readwrite");
          var store = tx.objectStore(storeName);
          var result;
          var req = kind == 0 ? store.get(k) : (kind == 1 ? store.put(v, k) : store.delete(k));
          req.onsuccess = function() { result = req.result; };
          tx.oncomplete = function() {
            if (kind != 0) { report(0, ""); return; }
            if (result === undefined || result === null) { report(0, ""); return; }
            report(1, typeof result == "string" ? result : JSON.stringify(result));
          };
          tx.onabort = function() { report(2, describe(tx.error || req.error)); };
        }).catch(function(e) { report(2, describe(e)); });
      });

extern "C" EMSCRIPTEN_KEEPALIVE void mcprt_web_idb_done(int op, int outcome, const char* text,
                                                         int size) {
  using namespace mcprt;
  auto& table = web::pending_ops();
  auto it = table.find(op);
  if (it == table.end()) return;
  web::PendingOp pending = std::move(it->second);
  table.erase(it);
  if (pending.store_alive.expired()) return;  // the store is gone: drop the completion
  std::string payload(text ? text : "", text ? static_cast<std::size_t>(size) : 0);
  Result<std::optional<std::string>> result = std::optional<std::string>();
  if (outcome == web::kValue) {
    result = std::optional<std::string>(std::move(payload));
  } else if (outcome == web::kFailed) {
    result = Error::make(ErrorCode::transport, "IndexedDB " + pending.what + " failed: " + payload);
  }
  // Through the executor, and only if the store still exists when it runs.
  pending.executor->post([alive = pending.store_alive, done = std::move(pending.done),
                          result = std::move(result)]() mutable {
    if (!alive.expired() && done) done(std::move(result));
  });
}

namespace mcprt::web {

WebIndexedDbStore::WebIndexedDbStore(Executor& executor, std::string database,
                                     std::string object_store)
    : executor_(executor),
      database_(std::move(database)),
      object_store_(std::move(object_store)),
      alive_(std::make_shared<bool>(true)) {}

WebIndexedDbStore::~WebIndexedDbStore() {
  // Late completions find nothing; the callbacks (which may own core objects) are
  // released now, while the executor they may touch still exists.
  alive_.reset();
  auto& table = pending_ops();
  for (auto it = table.begin(); it != table.end();) {
    if (it->second.owner == this) {
      auto done = std::move(it->second.done);
      it = table.erase(it);
      done = nullptr;  // may re-enter pending_ops(); the iterator is already past it
    } else {
      ++it;
    }
  }
}

void WebIndexedDbStore::start(int kind, const std::string& key, const std::string& value,
                              std::function<void(Result<std::optional<std::string>>)> done) {
  const int op = g_next_op++;
  static const char* const kNames[] = {"get", "put", "remove"};
  pending_ops()[op] = PendingOp{this, &executor_, alive_,
                                std::string(kNames[kind]) + " \"" + key + "\" in " + database_ +
                                    "/" + object_store_,
                                std::move(done)};
  mcprt_js_idb_op(op, kind, database_.c_str(), object_store_.c_str(), key.c_str(), value.data(),
                  static_cast<int>(value.size()));
}

void WebIndexedDbStore::get(const std::string& key,
                            std::function<void(Result<std::optional<std::string>>)> done) {
  start(kGet, key, std::string(), std::move(done));
}

void WebIndexedDbStore::put(const std::string& key, std::string value,
                            std::function<void(Status)> done) {
  start(kPut, key, value, [done = std::move(done)](Result<std::optional<std::string>> r) {
    if (!done) return;
    if (r) done(Status());
    else done(Status(std::move(r).error()));
  });
}

void WebIndexedDbStore::remove(const std::string& key, std::function<void(Status)> done) {
  start(kRemove, key, std::string(), [done = std::move(done)](Result<std::optional<std::string>> r) {
    if (!done) return;
    if (r) done(Status());
    else done(Status(std::move(r).error()));
  });
}

}  // namespace mcprt::web
