#pragma once
// Editing an MCP config file: the native user file (native_user_config_path), a
// project's `.<app>/mcp.json`, or the file a host was given instead (the CLI's --config).
// One implementation behind `mcprt add|remove|enable|disable` and the `/mcp` controller's
// add|remove|enable|disable, so both build, check and write entries alike.
//
// Every edit reads the whole file (read_user_config), changes one thing and writes it back
// atomically (write_user_config): the keys keep their order, keys the edit does not know
// stay as written. (Comments, which the reader allows, are not written back: JSON has
// none.) A file that is not JSON, or not an object, is never overwritten.
//
// Nothing here throws; every error names the file or the server and what is wrong.
//
//   ServerEntrySpec spec{.name = "fs", .command = "npx", .args = {"-y", "server-fs", "."}};
//   auto entry = make_server_entry(spec);                 // {"command": …, "args": […]}
//   if (entry.ok()) add_server_to_config(files, path, "fs", *entry);

#include <string>
#include <vector>

#include "mcprt/discovery.hpp"
#include "mcprt/platform/file_system.hpp"
#include "mcprt/result.hpp"

namespace mcprt {

// What `add` takes, the way `claude mcp add`, `codex mcp add` and `gemini mcp add` do.
// (Members default to {}, so designated initializers may leave any out.)
struct ServerEntrySpec {
  std::string name{};
  // "stdio", "http" or "sse"; empty = from the target (a URL → a bare `url`: Streamable
  // HTTP with the legacy-SSE fallback; a command → stdio). Written as `type` when given.
  std::string transport{};
  std::string url{};                   // http/sse
  std::string command{};               // stdio
  std::vector<std::string> args{};     // stdio
  std::vector<std::string> env{};      // "KEY=VALUE" each (stdio)
  std::vector<std::string> headers{};  // "Name: value" each (http/sse)
};

// The entry as the file will hold it: {"type"?, "command", "args", "env"?} or
// {"type"?, "url", "headers"?}. Errors (ErrorCode::invalid_argument, `Server "<name>": …`):
// an invalid name; no target or both a URL and a command; an unknown transport; a URL with
// --transport stdio or a command with http/sse; a URL that is not http(s); -e without
// `KEY=` or with a key that is not an environment variable name, -H without `Name: `, a
// header name that is not an HTTP token or a value with a line break, either given twice;
// -e on an http/sse server or -H on a stdio one. The entry also passes
// validate_server_config, as discovery will check it.
Result<ordered_json> make_server_entry(const ServerEntrySpec& spec);

// `/mcp add`'s words after "add":
//   <name> [-t|--transport T] [-e|--env KEY=VALUE]… [-H|--header 'Name: value']…
//          (<url> | --url <url> | -- <command> [args…])
// Options may come before or after the name; everything after `--` is the command line. A
// word that is not an option and not the name is the URL when it has "://", else the
// command (with the words after it as its arguments, as `claude mcp add` reads them).
// ErrorCode::invalid_argument for an unknown option or a missing value.
Result<ServerEntrySpec> parse_add_words(const std::vector<std::string>& words);

// Whether `path`'s "mcpServers" holds `name` (false when the file does not exist).
Result<bool> config_file_defines(FileSystem& fs, const std::string& path, const std::string& name);

// Adds `name` at the end of "mcpServers" (the file and the key are created when missing).
// An existing entry of that name is an error whose data is {"exists": true}: replacing is
// remove + add, on purpose.
Status add_server_to_config(FileSystem& fs, const std::string& path, const std::string& name,
                            const ordered_json& entry);

// Removes `name` from "mcpServers" and from the disabledServers / enabledServers lists.
// false = it was not in "mcpServers" (nothing is written).
Result<bool> remove_server_from_config(FileSystem& fs, const std::string& path,
                                       const std::string& name);

// enable: `name` leaves disabledServers and joins enabledServers (which also overrides an
// entry's `"enabled": false`); disable: the other way round (disabledServers always wins).
// Only the lists change, so this works for a server defined in any file.
Status set_server_enabled_in_config(FileSystem& fs, const std::string& path,
                                    const std::string& name, bool enabled);

}  // namespace mcprt
