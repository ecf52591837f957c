// The wasm side of the tool path benchmark (tool_path.hpp; bench_compare.mjs --only
// toolpath times it against JSON.parse in the same Node process), built as the shipped
// module is (-Oz, LTO, emmalloc, no exceptions).
//
//   const m = await createToolPathBench();
//   const at = m._malloc(bytes.length); m.HEAPU8.set(bytes, at);   // as a fetch body arrives
//   m.toolPathRun(at, bytes.length);   // → how many tools are registered (-1: not a listing)
//   m._free(at); m.toolPathClear();    // frees the set, outside the timed part
//   m.toolPathParse(at, bytes.length); // the parse alone (parse_listing): tools listed
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

// The parse alone, the message freed before it returns (as the native benchmark's
// parse_ms): how many tools the answer lists (-1: not a listing).
int tool_path_parse(std::uintptr_t bytes, int size) {
  auto message = mcprt::bench::parse_listing(
      std::string_view(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(size)));
  if (!message.ok()) return -1;
  auto result = message->find("result");
  if (result == message->end() || !result->is_object()) return -1;
  auto tools = result->find("tools");
  return tools != result->end() && tools->is_array() ? static_cast<int>(tools->size()) : -1;
}

}  // namespace

EMSCRIPTEN_BINDINGS(mcprt_bench_tool_path) {
  emscripten::function("toolPathRun", &tool_path_run);
  emscripten::function("toolPathClear", &tool_path_clear);
  emscripten::function("toolPathParse", &tool_path_parse);
}
