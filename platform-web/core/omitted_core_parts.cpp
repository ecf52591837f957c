// The core as the web module links it has no file-based or process-based parts. A browser
// has no file system (the web runtime's DiscoveryContext has no FileSystem and no home
// folder) and no child processes (its ConnectServices have no ProcessLauncher), so
// platform-web/CMakeLists.txt builds mcprt_core_web without
//   core/src/config/providers.cpp      the built-in file providers (native, Claude, Gemini,
//                                      Codex, Cursor, Windsurf, VS Code, mcp.json),
//   core/src/config/user_file.cpp      the user config file's reader and writer,
//   core/src/protocol/connect_stdio.cpp and stdio_transport.cpp   launching a stdio
//                                      server and its transport.
// Linked, they cost the module code it could never run.
//
// The rest of the core still names four of their functions; these are their browser
// definitions. Each answers what the core's own answers without a file system, a home
// folder or a process launcher, so discovery, the loader and connect_to_server behave
// exactly as they did with those files linked.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/json_schema.hpp"
#include "protocol/connect_stdio.hpp"

namespace mcprt {

// Every built-in provider reads only through DiscoveryContext::fs, so without one they
// contribute nothing. (The web runtime also turns them off: use_builtin_providers=false.)
std::vector<std::shared_ptr<const ConfigProvider>> builtin_providers() { return {}; }

// The native user file lives in $XDG_CONFIG_HOME or under the home folder, neither of which
// a browser has: no path, as the file-based definition answers when both are empty.
std::string native_user_config_path(const DiscoveryContext&) { return {}; }

// Project trust cannot be remembered: there is no user file to write it to. The message is
// the one the file-based definition gives for an empty user file path. (The loader only
// calls this with a FileSystem, which the web runtime never passes.)
Status record_project_trust(FileSystem&, const std::string&, const std::string&,
                            const std::map<std::string, std::string>&, bool) {
  return Error::make(ErrorCode::invalid_argument, "there is no user config file to record trust in");
}

// The JSON Schema validator (core/src/tools/json_schema.cpp) does not fit the module's size
// budget (SPEC §12: 200 KB gzip). Without it an outputSchema is a schema this build cannot
// use, which the tool call path already handles: the result passes unchecked, as it does
// natively for a schema the validator refuses. (The wasm unit tests still run the validator.)
namespace {
SchemaError not_checked() {
  return SchemaError{SchemaErrorKind::bad_schema, "", "",
                     "not checked: the web module has no JSON Schema validator"};
}
}  // namespace

std::string to_string(const SchemaError& error) {
  return (error.instance_path.empty() ? std::string("(root)") : error.instance_path) + ": " +
         error.message;
}
std::optional<SchemaError> validate_json_schema(const json&, const json&, const SchemaLimits&) {
  return not_checked();
}
std::optional<SchemaError> check_json_schema(const json&, const SchemaLimits&) {
  return not_checked();
}
bool json_schema_validation_available() { return false; }

namespace detail {

// No ProcessLauncher in a browser: the core's answer without one. (Discovery rejects stdio
// entries before this, as the web runtime sets stdio_available=false.)
Result<std::unique_ptr<Transport>> make_stdio_connection(const ServerConfig& config, const ConnectServices&,
                                                         const ConnectOptions&) {
  return Error::make(ErrorCode::invalid_config,
                     connect_error_prefix(config.name) + "stdio servers are not available on this platform");
}

}  // namespace detail

}  // namespace mcprt
