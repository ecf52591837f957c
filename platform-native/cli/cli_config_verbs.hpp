#pragma once
// `mcprt add|remove|get|enable|disable` (SPEC §18 "CLI conventions": the flags of `claude
// mcp`, `codex mcp` and `gemini mcp`). They read and edit config files only: nothing is
// spawned or connected. The edits are the core's (config_edit.hpp), the same the REPL's
// `/mcp add|remove|enable|disable` make.
//
// Which file: --config FILE when given (then --scope is a usage error); else --scope user
// (the default) = the mcprt user file ($XDG_CONFIG_HOME/mcprt/mcp.json), --scope project =
// <cwd>/.mcprt/mcp.json (the project file discovery reads for mcprt).
//
// Exit codes (cli_commands.hpp): 0 done; 1 the file could not be written; 2 usage or
// config error (invalid name, bad -e/-H, a URL with --transport stdio, a name already
// defined, an unknown server, a file that is not JSON), each message naming the file.

#include <string>
#include <vector>

#include "cli_commands.hpp"

namespace mcprt::cli {

struct AddOptions {
  std::string name;
  std::string scope;                 // "", "user" or "project"
  std::string transport;             // -t/--transport: "", "stdio", "http", "sse"
  std::string url;                   // --url (codex's form)
  std::vector<std::string> env;      // -e/--env KEY=VALUE
  std::vector<std::string> headers;  // -H/--header 'Name: value'
  // The positional words after the name: a URL, or a command and its arguments.
  std::vector<std::string> target;
  // How many of `target` came after `--` (they are a command line, whatever they look
  // like); -1 = there was no `--`.
  int after_dashes = -1;
};

// A server added to the project file by `mcprt add --scope project` is trusted for that
// folder at once (its own definition hash only): the user just typed it. Other project
// servers keep their state.
int run_add(const GlobalOptions& global, const AddOptions& options);
// Without --scope: the file (user or project) that defines `name`; in both = usage error.
int run_remove(const GlobalOptions& global, const std::string& name, const std::string& scope);
// One server as configured (wherever it comes from): state, trust, source, what it runs;
// literal values of secret-named env/header/oauth keys are masked. --json: one object.
int run_get(const GlobalOptions& global, const std::string& name, bool json);
// Writes the user file's (or --config file's) enabledServers / disabledServers.
int run_set_enabled(const GlobalOptions& global, const std::string& name, bool enable);

}  // namespace mcprt::cli
