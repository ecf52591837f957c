// The embind surface of the wasm module. Thin: it converts between JS strings and the
// core's types; every rule lives in core/.
// [x] version, protocolVersions
// [x] parseConfig: the mcpServers JSON format with per-server validation (web rules)
// [ ] runtime (connect, tools, call): comes with the fetch transport
#include <emscripten/bind.h>

#include <string>

#include "mcprt/json_object.hpp"
#include "mcprt/client.hpp"
#include "mcprt/config.hpp"
#include "mcprt/version.hpp"

namespace {

std::string version() { return MCPRT_VERSION; }

std::string protocol_versions() { return mcprt::json(mcprt::supported_protocol_versions()).dump(); }

// Returns {"servers":[{name,type,url}], "errors":[{path,server,message,line,column}]}.
std::string parse_config(const std::string& text, const std::string& path) {
  mcprt::ParseOptions options;
  options.validate = true;
  options.validation.stdio_available = false;  // the browser has no child processes
  auto parsed = mcprt::parse_mcp_servers_json(text, path, options);
  mcprt::json out = mcprt::json_object({{"servers", mcprt::json::array()}, {"errors", mcprt::json::array()}});
  for (const auto& s : parsed.servers) {
    out["servers"].push_back(mcprt::json_object({{"name", s.name},
                              {"type", mcprt::to_string(s.type)},
                              {"url", s.url},
                              {"configHash", mcprt::config_hash(s)}}));
  }
  for (const auto& e : parsed.errors) {
    out["errors"].push_back(mcprt::json_object({{"path", e.path},
                             {"server", e.server},
                             {"message", e.describe()},
                             {"line", e.line},
                             {"column", e.column}}));
  }
  return out.dump();
}

}  // namespace

EMSCRIPTEN_BINDINGS(mcprt) {
  emscripten::function("version", &version);
  emscripten::function("protocolVersionsJson", &protocol_versions);
  emscripten::function("parseConfigJson", &parse_config);
}
