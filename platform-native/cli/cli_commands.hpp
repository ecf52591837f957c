#pragma once
// The CLI's commands. Exit codes: 0 success, 1 a server or tool failed, 2 usage/config.

#include <string>

namespace mcprt::cli {

struct ToolsCommandOptions {
  std::string config_path;
  std::string cwd;
  bool json = false;
};

int run_tools_command(const ToolsCommandOptions& options);

}  // namespace mcprt::cli
