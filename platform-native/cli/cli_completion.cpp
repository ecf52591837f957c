// `mcprt completion bash|zsh|fish` and the hidden `mcprt __complete servers|tools` the
// scripts call (cli_completion.hpp). Implements:
//  [x] server names: every name discovery claims (enabled, disabled, pending, invalid ones)
//  [x] tool names: from the tool cache of the enabled, trusted servers, named and filtered
//      as the manager names them (include/exclude, collisions) — no server is started
//  [ ] tools of a server the cache has not seen yet (run `mcprt tools` once)
#include "cli_completion.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcprt/native/discovery.hpp"
#include "mcprt/native/host.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/tool_names.hpp"
#include "mcprt/tools.hpp"

namespace mcprt::cli {

int run_completion_script(const std::string& shell) {
  const char* script = shell == "bash"   ? kBashCompletion
                       : shell == "zsh"  ? kZshCompletion
                       : shell == "fish" ? kFishCompletion
                                         : nullptr;
  if (!script) {
    std::fprintf(stderr, "mcprt: no completion for \"%s\" (bash, zsh or fish)\n", shell.c_str());
    return kExitUsage;
  }
  std::fputs(script, stdout);
  return kExitOk;
}

int run_complete_names(const GlobalOptions& global, const std::string& what) {
  if (what != "servers" && what != "tools") {
    std::fprintf(stderr, "mcprt: __complete takes servers or tools\n");
    return kExitUsage;
  }
  native::NativeHostOptions ho;
  ho.cwd = global.cwd;
  ho.config_file = global.config_path;
  ho.use_cache = what == "tools" && !global.no_cache;
  ho.log.level = std::nullopt;  // a completion prints names, never log lines
  ho.log.read_env = false;
  native::NativeHost host(std::move(ho));
  DiscoveryResult d = host.discover();

  std::set<std::string> names;
  if (what == "servers") {
    for (const auto& [name, source] : d.sources) names.insert(name);
    for (const auto& e : d.errors) {
      if (!e.server.empty()) names.insert(e.server);
    }
  } else if (KeyValueStore* store = host.services().cache_store) {
    ToolCache cache(*store, nullptr, nullptr);
    // Shared with the reads: one still in flight when the wait gives up may complete while
    // the host shuts down.
    struct Reads {
      std::vector<RawToolRef> refs;
      std::size_t waiting = 0;
    };
    auto reads = std::make_shared<Reads>();
    reads->waiting = d.configs.size();
    for (const auto& config : d.configs) {
      cache.load(config, [reads, config](std::optional<CachedTools> hit) {
        --reads->waiting;
        if (!hit) return;
        for (const auto& t : hit->tools) {
          if (!t.is_object() || !t.contains("name") || !t["name"].is_string()) continue;
          std::string raw = t["name"].get<std::string>();
          if (tool_passes_filters(config, raw))
            reads->refs.push_back({config.name, std::move(raw)});
        }
      });
    }
    // A cache read is a few small files; the bound only keeps a broken disk from hanging
    // the shell.
    host.run_until([&] { return reads->waiting == 0; }, Millis(2000));
    std::vector<RawToolRef> refs = reads->refs;
    for (auto& n : assign_tool_names(refs)) names.insert(std::move(n));
  }
  for (const auto& n : names) std::printf("%s\n", n.c_str());
  return kExitOk;
}

}  // namespace mcprt::cli
