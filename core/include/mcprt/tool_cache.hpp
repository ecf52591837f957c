#pragma once
// The tool cache (SPEC §4): one entry per server name in a KeyValueStore, so that a
// restart can offer a slow server's tools (as deferred tools) before it answers.
//
// Entry (JSON text, identical on every platform):
//   {"version": 1, "configHash": "<config_hash(cfg)>", "serverInfo": {...},
//    "tools": [<raw tool definitions>], "savedAt": <ms since the Unix epoch>,
//    "resources": [...], "resourceTemplates": [...], "prompts": [...]}
// The three catalogs (SPEC §15) are written only when not empty; an entry without them has
// none. Every entry of every list must be an object with its string key (`name`, `uri`,
// `uriTemplate`), or the whole entry is a miss: it was not written by us.
// A hit needs the same version, the same configHash and an age under 30 days; anything
// else — missing, unreadable, corrupt, stale — is a miss. Writes are best effort: a failed
// write is a warning in the log, never an error for the caller.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/config.hpp"
#include "mcprt/platform/key_value_store.hpp"
#include "mcprt/platform/logger.hpp"

namespace mcprt {

inline constexpr int kToolCacheVersion = 1;
inline constexpr std::int64_t kToolCacheMaxAgeMs = 30LL * 24 * 60 * 60 * 1000;

// Wall-clock milliseconds since the Unix epoch (the cache's `savedAt` survives restarts,
// so the executor's monotonic clock does not do). Tests pass a fixed or manual value.
using WallClock = std::function<std::int64_t()>;
// std::chrono::system_clock (Date.now() under Emscripten).
WallClock system_wall_clock();

// A server's resources, resource templates and prompts as listed (raw entries).
struct CachedCatalog {
  std::vector<json> resources;
  std::vector<json> resource_templates;
  std::vector<json> prompts;
};

struct CachedTools {
  std::string config_hash;
  json server_info;         // {protocolVersion, serverInfo, capabilities} as initialize said
  std::vector<json> tools;  // raw definitions, unfiltered
  CachedCatalog catalog;
  std::int64_t saved_at_ms = 0;
};

// The entry text for `config`'s current tools; and back (nullopt on any mismatch).
std::string encode_cache_entry(const ServerConfig& config, const json& server_info,
                               const std::vector<json>& tools, std::int64_t now_ms,
                               const CachedCatalog& catalog = {});
std::optional<CachedTools> decode_cache_entry(std::string_view text, const ServerConfig& config,
                                              std::int64_t now_ms);

class ToolCache {
 public:
  // `store` and `logger` (may be null) must outlive the cache; a null `clock` means
  // system_wall_clock(). Completions run on the store's executor and touch nothing of the
  // cache, so the cache may be destroyed while an operation is in flight.
  ToolCache(KeyValueStore& store, WallClock clock, Logger* logger);

  // The store key of a server's entry: "tools." + the name, any byte outside
  // [A-Za-z0-9_.-] written as %XX (so "a:b" → "tools.a%3Ab"); safe as a file name.
  static std::string key_for(const std::string& server_name);

  // `done` (async contract) gets the entry on a hit, nullopt on any kind of miss. A store
  // read error is a miss plus a warning naming the server; other misses log at debug.
  void load(const ServerConfig& config, std::function<void(std::optional<CachedTools>)> done);
  // Best effort; a failed write logs a warning naming the server. `done` (optional)
  // reports whether the write worked.
  void save(const ServerConfig& config, const json& server_info, const std::vector<json>& tools,
            std::function<void(Status)> done = nullptr);
  void save(const ServerConfig& config, const json& server_info, const std::vector<json>& tools,
            const CachedCatalog& catalog, std::function<void(Status)> done = nullptr);
  // Best effort, like save (a failure is a warning).
  void remove(const std::string& server_name);

 private:
  KeyValueStore& store_;
  WallClock clock_;
  Logger* logger_;
};

}  // namespace mcprt
