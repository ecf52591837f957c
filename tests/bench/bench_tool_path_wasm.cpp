// The wasm side of the tool path benchmark (tool_path.hpp; bench_compare.mjs --only
// toolpath times it against JSON.parse in the same Node process), built as the shipped
// module is (-Oz, LTO, emmalloc, no exceptions).
//
//   const m = await createToolPathBench();
//   const at = m._malloc(bytes.length); m.HEAPU8.set(bytes, at);   // as a fetch body arrives
//   m.toolPathRun(at, bytes.length);   // → how many tools are registered (-1: not a listing)
//   m._free(at); m.toolPathClear();    // frees the set, outside the timed part
#include <emscripten/bind.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "mcprt/web/web_executor.hpp"
#include "tool_path.hpp"

namespace {

struct Bench {
  mcprt::web::WebExecutor executor;
  std::unique_ptr<mcprt::detail::ToolSet> set;  // the last registered set
};

Bench& bench() {
  static auto* b = new Bench();  // lives as long as the module
  return *b;
}

int tool_path_run(std::uintptr_t bytes, int size) {
  bench().set = mcprt::bench::parse_and_register(
      std::string_view(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(size)),
      bench().executor);
  return bench().set ? static_cast<int>(bench().set->tools().size()) : -1;
}

void tool_path_clear() { bench().set.reset(); }

}  // namespace

EMSCRIPTEN_BINDINGS(mcprt_bench_tool_path) {
  emscripten::function("toolPathRun", &tool_path_run);
  emscripten::function("toolPathClear", &tool_path_clear);
}
