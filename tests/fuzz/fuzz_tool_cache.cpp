// Cache-entry decoding (SPEC §4). The input is the text of one tool-cache entry as a
// KeyValueStore holds it (a file under ~/.cache/mcprt natively, IndexedDB in the browser):
// anything may be there — a truncated write, another version, someone else's file.
// decode_cache_entry reads it against a fixed server config (the seeds carry that
// config's hash, so the fuzzer starts from hits), and ToolCache::load reads it through a
// MemoryKeyValueStore; a hit then feeds the deferred tools build_mcp_tools makes from it.
//
// Invariants:
//  - a hit carries the config's hash, a savedAt within the last 30 days, and tools that
//    are objects with a string name;
//  - encode_cache_entry of a hit decodes to the same entry (the round trip a restart
//    makes), and ToolCache::save + load give it back too;
//  - ToolCache::load agrees with decode_cache_entry (hit or miss, same tools);
//  - an entry never hits for another config, nor once it is 30 days old;
//  - deferred tools built from a hit have unique names;
//  - key_for gives "tools." + [A-Za-z0-9_.%-] for any server name, and decodes back.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "fuzz_support.hpp"
#include "mcprt/memory_store.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/tools.hpp"

namespace {

using mcprt::json;

// 2026-01-01T00:00:00Z.
constexpr std::int64_t kNow = 1767225600000;

// The config the seeds were written for: their configHash is 744f94eb23a1300b.
mcprt::ServerConfig fuzz_config() {
  mcprt::ServerConfig c;
  c.name = "everything";
  c.type = mcprt::TransportType::stdio;
  c.command = "npx";
  c.args = {"-y", "@modelcontextprotocol/server-everything"};
  c.raw = json{{"command", "npx"}, {"args", {"-y", "@modelcontextprotocol/server-everything"}}};
  return c;
}

bool same_entry(const mcprt::CachedTools& a, const mcprt::CachedTools& b) {
  return a.config_hash == b.config_hash && a.server_info == b.server_info && a.tools == b.tools &&
         a.saved_at_ms == b.saved_at_ms;
}

class NoHost final : public mcprt::McpToolHost {
 public:
  void call_tool(const std::string&, const std::string&, json, mcprt::CallOptions,
                 std::function<void(mcprt::Result<json>)>) override {}
  void wait_for_connection(const std::string&, mcprt::AbortSignal,
                           std::function<void(mcprt::Status)>) override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text = mcprt::fuzz::as_text(bytes, size);
  static const mcprt::ServerConfig config = fuzz_config();
  static const std::string hash = mcprt::config_hash(config);

  const std::optional<mcprt::CachedTools> hit = mcprt::decode_cache_entry(text, config, kNow);
  if (hit) {
    FUZZ_CHECK(hit->config_hash == hash);
    FUZZ_CHECK(hit->saved_at_ms <= kNow && kNow - hit->saved_at_ms < mcprt::kToolCacheMaxAgeMs);
    for (const json& t : hit->tools) FUZZ_CHECK(t.is_object() && t.at("name").is_string());
    const std::string again = mcprt::encode_cache_entry(config, hit->server_info, hit->tools, hit->saved_at_ms);
    const auto round = mcprt::decode_cache_entry(again, config, kNow);
    FUZZ_CHECK(round.has_value() && same_entry(*round, *hit));
    // Stale 30 days after it was saved; never a hit for another config.
    FUZZ_CHECK(!mcprt::decode_cache_entry(text, config, hit->saved_at_ms + mcprt::kToolCacheMaxAgeMs));
    mcprt::ServerConfig other = config;
    other.raw["args"].push_back("--other");
    FUZZ_CHECK(!mcprt::decode_cache_entry(text, other, kNow));
  }

  mcprt::testing::ManualExecutor ex;
  mcprt::testing::CapturingLogger log;
  mcprt::MemoryKeyValueStore store(ex);
  mcprt::ToolCache cache(store, [] { return kNow; }, &log);
  const std::string key = mcprt::ToolCache::key_for(config.name);
  store.entries()[key] = std::string(text);
  int loads = 0;
  std::optional<mcprt::CachedTools> loaded;
  cache.load(config, [&](std::optional<mcprt::CachedTools> r) {
    ++loads;
    loaded = std::move(r);
  });
  ex.run_until_idle();
  FUZZ_CHECK(loads == 1);
  FUZZ_CHECK(loaded.has_value() == hit.has_value());
  if (hit) {
    FUZZ_CHECK(same_entry(*loaded, *hit));
    auto host = std::make_shared<NoHost>();
    auto tools = mcprt::build_mcp_tools(ex, {{config.name, &config, {}, hit->tools, true}}, host);
    std::set<std::string> names;
    for (const auto& t : tools) FUZZ_CHECK(t->info().deferred && names.insert(t->name()).second);

    // save + load: what a restart would read back.
    store.entries().clear();
    int saves = 0;
    cache.save(config, hit->server_info, hit->tools, [&](mcprt::Status s) {
      FUZZ_CHECK(s.ok());
      ++saves;
    });
    ex.run_until_idle();
    FUZZ_CHECK(saves == 1);
    std::optional<mcprt::CachedTools> reloaded;
    cache.load(config, [&](std::optional<mcprt::CachedTools> r) { reloaded = std::move(r); });
    ex.run_until_idle();
    FUZZ_CHECK(reloaded.has_value() && reloaded->tools == hit->tools &&
               reloaded->server_info == hit->server_info);
  }

  // Keys for arbitrary names (the input's first line stands for one).
  std::string_view rest = text;
  const std::string name(mcprt::fuzz::take_line(rest));
  const std::string k = mcprt::ToolCache::key_for(name);
  FUZZ_CHECK(k.rfind("tools.", 0) == 0);
  for (unsigned char c : k) {
    FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '.' || c == '-' || c == '%');
  }
  // Injective: %XX-decoding the key gives the name back.
  std::string decoded;
  for (std::size_t i = 6; i < k.size(); ++i) {
    if (k[i] == '%') {
      FUZZ_CHECK(i + 2 < k.size());
      decoded += static_cast<char>(std::stoi(k.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      decoded += k[i];
    }
  }
  FUZZ_CHECK(decoded == name);
  return 0;
}
