// The `mcprt` command-line host.
//   mcprt tools [--config FILE] [--json]   connect to every server in parallel, list tools
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "cli_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"mcprt — the MCP runtime for AI agents"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mcprt ") + MCPRT_VERSION);

  mcprt::cli::ToolsCommandOptions tools;
  auto* tools_cmd = app.add_subcommand(
      "tools", "Connect to every configured MCP server in parallel and list their tools");
  tools_cmd->add_option("--config", tools.config_path,
                        "Config file with an mcpServers object (default: ./.mcprt/mcp.json, "
                        "then ./.mcp.json)");
  tools_cmd->add_flag("--json", tools.json, "Print one JSON object instead of text");
  tools_cmd->add_option("--cwd", tools.cwd, "Working directory for servers and config lookup");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // usage errors exit 2
  }

  if (tools_cmd->parsed()) return mcprt::cli::run_tools_command(tools);
  return 2;
}
