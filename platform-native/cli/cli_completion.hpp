#pragma once
// Shell completion (SPEC §18): `mcprt completion bash|zsh|fish` prints the script that is
// also installed under share/ (the files in completions/, embedded at build time by
// completions/embed.cmake); `mcprt __complete servers|tools` (hidden) prints the names the
// scripts offer, one a line: every configured server name (discovery: configs only), and
// the tool names the tool cache holds for the enabled, trusted servers. Neither ever
// spawns or connects anything.

#include <string>

#include "cli_commands.hpp"

namespace mcprt::cli {

extern const char* const kBashCompletion;
extern const char* const kZshCompletion;
extern const char* const kFishCompletion;

// 0, or 2 for a shell other than bash, zsh and fish.
int run_completion_script(const std::string& shell);
// `what` is "servers" or "tools". Always 0 (a completion prints nothing rather than an
// error), except 2 for another `what`.
int run_complete_names(const GlobalOptions& global, const std::string& what);

}  // namespace mcprt::cli
