// A minimal agent: loads the MCP servers of the user's configs (or of one config file),
// lists their tools and calls one.   agent [config.json] [tool] [json-arguments]
#include <iostream>

#include "mcprt/native/host.hpp"

int main(int argc, char** argv) {
  mcprt::native::NativeHost host({.config_file = argc > 1 ? argv[1] : ""});
  mcprt::LoadResult loaded = host.load();  // discovery, parallel connects, the startup gate
  for (const auto& e : loaded.errors) std::cerr << e.path << ": " << e.error << "\n";
  for (const auto& tool : host.registry().tools()) std::cout << tool->name() << "\n";

  const std::string tool = argc > 2 ? argv[2] : "mcp_demo_add";
  auto args = mcprt::json::parse(argc > 3 ? argv[3] : R"({"a": 2, "b": 3})", nullptr, false);
  mcprt::Result<mcprt::ToolResult> result = host.call(tool, args);  // blocks; bounded
  if (!result.ok()) {
    std::cerr << tool << ": " << result.error().message << "\n";
    return 1;
  }
  std::cout << tool << " -> " << result.value().text << "\n";
  return result.value().is_error ? 1 : 0;
}
