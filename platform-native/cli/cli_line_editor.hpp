#pragma once
// The REPL's line editor on a terminal (libedit; cli_line_editor.cpp), and the REPL's Tab
// completion candidates. Only for a terminal: `mcprt repl` reads plain lines when stdin or
// stdout is not one (scripts pipe commands into it).
//
//   LineEditor editor({.prompt = "mcprt> ", .history_file = default_history_file(),
//                      .complete = [&](const std::string& before) { return candidates(before); },
//                      .idle = [&] { host.executor().poll(); }});
//   while (auto line = editor.read_line()) handle(*line);
//
// Keys are libedit's emacs set (~/.editrc is read): Left/Right, Ctrl-A/E, Ctrl-W, Up/Down
// and Ctrl-P/N through the history, Ctrl-R to search it, Tab to complete, Ctrl-D on an
// empty line to end. History: at most `history_size` lines, consecutive duplicates once,
// lines that start with a space are not kept (for arguments you do not want on disk),
// saved on exit to `history_file` (mode 0600, replaced atomically).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mcprt::cli {

class LineEditor {
 public:
  struct Options {
    std::string prompt = "mcprt> ";
    std::string history_file;  // empty = the history is not kept across runs
    int history_size = 1000;
    // The words that may complete the word ending at the cursor, given the line up to the
    // cursor. The editor keeps those that start with that word.
    std::function<std::vector<std::string>(const std::string& before_cursor)> complete;
    // Runs while the editor waits for a key (every 20 ms at most): the host's event loop.
    std::function<void()> idle;
  };

  explicit LineEditor(Options options);
  ~LineEditor();  // saves the history
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // The next line, without its newline; nullopt at the end of input (Ctrl-D on an empty
  // line, or the terminal went away).
  std::optional<std::string> read_line();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// $XDG_STATE_HOME/mcprt/history, else ~/.local/state/mcprt/history; empty without either.
std::string default_history_file();

// What the REPL completes (`before_cursor` = the line up to the cursor):
//   the first word: /mcp /tools /quit /exit and every tool name;
//   after /mcp: its subcommands;
//   after /mcp tools|status|reconnect|auth|enable|disable|remove: a server name;
//   after /mcp search: --limit and select:<tool> for every tool name.
std::vector<std::string> repl_candidates(const std::string& before_cursor,
                                         const std::vector<std::string>& servers,
                                         const std::vector<std::string>& tools);

}  // namespace mcprt::cli
