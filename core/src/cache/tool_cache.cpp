// The tool cache (SPEC §4) over a KeyValueStore. Every kind of miss (absent, unreadable,
// corrupt, other version, other config, too old) ends in the same nullopt, so callers have
// one path; the log says which kind it was.

#include "mcprt/tool_cache.hpp"

#include <chrono>
#include <utility>

#include "jsonrpc/raw_json.hpp"
#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/url.hpp"

namespace mcprt {

namespace {

// Why an entry was not a hit (for the log), or nothing when it was.
struct Decoded {
  std::optional<CachedTools> tools;
  std::string miss_reason;
};

Decoded decode_entry(std::string_view text, const std::string& expected_hash,
                     std::int64_t now_ms) {
  Decoded out;
  // The file is input like a server's message (anyone who can write the cache dir can
  // write it), so it gets the same nesting limit: an entry we wrote never exceeds it,
  // since every tool in it passed that limit one level deeper, inside a tools/list answer.
  Result<json> parsed = detail::parse_untrusted_json(text);
  if (!parsed) {
    out.miss_reason = "corrupt entry (" + parsed.error().message + ")";
    return out;
  }
  json doc = std::move(parsed).value();
  if (!doc.is_object()) {
    out.miss_reason = "corrupt entry (not a JSON object)";
    return out;
  }
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer()) {
    out.miss_reason = "corrupt entry (no version)";
    return out;
  }
  if (version->get<std::int64_t>() != kToolCacheVersion) {
    out.miss_reason = "entry written by another cache version";
    return out;
  }
  auto hash = doc.find("configHash");
  if (hash == doc.end() || !hash->is_string()) {
    out.miss_reason = "corrupt entry (no configHash)";
    return out;
  }
  if (hash->get_ref<const std::string&>() != expected_hash) {
    out.miss_reason = "config changed since the entry was written";
    return out;
  }
  auto saved = doc.find("savedAt");
  if (saved == doc.end() || !saved->is_number_integer()) {
    out.miss_reason = "corrupt entry (no savedAt)";
    return out;
  }
  const std::int64_t saved_at = saved->get<std::int64_t>();
  // An entry from the future means the wall clock moved back; its age is unknowable.
  if (saved_at > now_ms) {
    out.miss_reason = "entry saved in the future (clock moved back)";
    return out;
  }
  if (now_ms - saved_at >= kToolCacheMaxAgeMs) {
    out.miss_reason = "entry older than 30 days";
    return out;
  }
  auto tools = doc.find("tools");
  if (tools == doc.end() || !tools->is_array()) {
    out.miss_reason = "corrupt entry (tools is not an array)";
    return out;
  }
  CachedTools result;
  // Same shape rule as the listings: an object with its string key. Anything else means
  // the entry was not written by us, so none of it is trusted.
  const auto take = [&](json& list, const char* key, const char* what,
                        std::vector<json>& into) {
    into.reserve(list.size());
    for (auto& item : list) {
      auto k = item.find(key);
      if (!item.is_object() || k == item.end() || !k->is_string()) {
        out.miss_reason = std::string("corrupt entry (") + what + " without a " + key + ")";
        return false;
      }
      into.push_back(std::move(item));
    }
    return true;
  };
  if (!take(*tools, "name", "a tool", result.tools)) return out;
  struct CatalogField {
    const char* member;
    const char* key;
    const char* what;
    std::vector<json>& into;
  };
  for (const CatalogField& f :
       {CatalogField{"resources", "uri", "a resource", result.catalog.resources},
        CatalogField{"resourceTemplates", "uriTemplate", "a resource template",
                     result.catalog.resource_templates},
        CatalogField{"prompts", "name", "a prompt", result.catalog.prompts}}) {
    auto list = doc.find(f.member);
    if (list == doc.end()) continue;
    if (!list->is_array()) {
      out.miss_reason = std::string("corrupt entry (") + f.member + " is not an array)";
      return out;
    }
    if (!take(*list, f.key, f.what, f.into)) return out;
  }
  auto info = doc.find("serverInfo");
  if (info != doc.end()) result.server_info = std::move(*info);
  result.config_hash = expected_hash;
  result.saved_at_ms = saved_at;
  out.tools = std::move(result);
  return out;
}

std::string server_label(const std::string& name) { return "server \"" + name + "\""; }

}  // namespace

std::string encode_cache_entry(const ServerConfig& config, const json& server_info,
                               const std::vector<json>& tools, std::int64_t now_ms,
                               const CachedCatalog& catalog) {
  // The text of {"version", "configHash", "serverInfo", "tools", "savedAt", and the
  // catalogs that are not empty} as json::dump writes it (keys sorted, no spaces), written
  // piece by piece: the lists are dumped where they are, never copied into an entry first.
  // Server text may hold invalid UTF-8; replacing it keeps dump() from throwing.
  const auto dump = [](const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  std::string out = "{\"configHash\":" + dump(json(config_hash(config)));
  const auto list = [&](const char* member, const std::vector<json>& items, bool always) {
    if (items.empty() && !always) return;
    out += std::string(",\"") + member + "\":[";
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out.push_back(',');
      detail::dump_keeping_raw(items[i], out);  // a tool schema kept raw is written as it came
    }
    out.push_back(']');
  };
  list("prompts", catalog.prompts, false);
  list("resourceTemplates", catalog.resource_templates, false);
  list("resources", catalog.resources, false);
  out += ",\"savedAt\":" + std::to_string(now_ms) + ",\"serverInfo\":" + dump(server_info);
  list("tools", tools, true);
  out += ",\"version\":" + std::to_string(kToolCacheVersion) + "}";
  return out;
}

std::optional<CachedTools> decode_cache_entry(std::string_view text, const ServerConfig& config,
                                              std::int64_t now_ms) {
  return decode_entry(text, config_hash(config), now_ms).tools;
}

ToolCache::ToolCache(KeyValueStore& store, WallClock clock, Logger* logger)
    : store_(store), clock_(std::move(clock)), logger_(logger) {
  if (!clock_) clock_ = system_wall_clock();
}

WallClock system_wall_clock() {
  return [] {
    using namespace std::chrono;
    return static_cast<std::int64_t>(
        duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
  };
}

std::string ToolCache::key_for(const std::string& server_name) {
  // Valid server names are already [A-Za-z0-9_.:-]; anything else (and ':', which some
  // file systems reject) is %XX-encoded so every key is safe as a file name on its own.
  std::string key = "tools.";
  append_percent_encoded(key, server_name, [](unsigned char c, std::size_t) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
  });
  return key;
}

void ToolCache::load(const ServerConfig& config,
                     std::function<void(std::optional<CachedTools>)> done) {
  // The completion captures copies only: the cache may be destroyed before the store
  // answers (the store and the logger outlive it, by contract).
  store_.get(key_for(config.name),
             [done = std::move(done), clock = clock_, logger = logger_, name = config.name,
              hash = config_hash(config)](Result<std::optional<std::string>> r) {
               if (!r) {
                 if (logger) {
                   logger->warn("Tool cache: cannot read the entry of " + server_label(name) +
                                ": " + r.error().describe());
                 }
                 if (done) done(std::nullopt);
                 return;
               }
               if (!r->has_value()) {
                 if (done) done(std::nullopt);
                 return;
               }
               Decoded d = decode_entry(**r, hash, clock());
               if (!d.tools && logger) {
                 logger->debug("Tool cache: miss for " + server_label(name) + ": " +
                               d.miss_reason);
               }
               if (done) done(std::move(d.tools));
             });
}

void ToolCache::save(const ServerConfig& config, const json& server_info,
                     const std::vector<json>& tools, std::function<void(Status)> done) {
  save(config, server_info, tools, CachedCatalog{}, std::move(done));
}

void ToolCache::save(const ServerConfig& config, const json& server_info,
                     const std::vector<json>& tools, const CachedCatalog& catalog,
                     std::function<void(Status)> done) {
  store_.put(key_for(config.name),
             encode_cache_entry(config, server_info, tools, clock_(), catalog),
             [done = std::move(done), logger = logger_, name = config.name](Status s) {
               if (!s && logger) {
                 logger->warn("Tool cache: could not save the tools of " + server_label(name) +
                              ": " + s.error().describe());
               }
               if (done) done(std::move(s));
             });
}

void ToolCache::remove(const std::string& server_name) {
  store_.remove(key_for(server_name), [logger = logger_, name = server_name](Status s) {
    if (!s && logger) {
      logger->warn("Tool cache: could not remove the entry of " + server_label(name) + ": " +
                   s.error().describe());
    }
  });
}

}  // namespace mcprt
