// The REPL's line editor over libedit's own interface (histedit.h), see cli_line_editor.hpp.
// Implements:
//  [x] emacs editing, ~/.editrc, the terminal restored on a signal (EL_SIGNAL)
//  [x] raw mode before the prompt is printed (keys typed at once are the editor's)
//  [x] the host's event loop runs while waiting for a key (EL_GETCFN: poll + idle)
//  [x] history: bounded, unique, space-prefixed lines skipped, loaded at start, saved at
//      exit (temp file + rename, 0600)
//  [x] Tab: the one match (and a space), else the longest common prefix, else the list
//  [ ] completion inside quoted words (a quote ends nothing here: names need none)
#include "cli_line_editor.hpp"

#include <fcntl.h>
#include <histedit.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <filesystem>
#include <string>

#include "mcprt/mcp_command.hpp"

namespace mcprt::cli {

struct LineEditor::Impl {
  Options options;
  EditLine* el = nullptr;
  History* history = nullptr;
  std::mbstate_t mb{};

  // EL_GETCFN: one character, waiting with the event loop running. 1 = a character,
  // 0 = end of input, -1 = an error.
  static int read_char(EditLine* el, wchar_t* out) {
    Impl* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    while (true) {
      if (self->options.idle) self->options.idle();
      pollfd pfd{STDIN_FILENO, POLLIN, 0};
      int ready = ::poll(&pfd, 1, 20);
      if (ready < 0 && errno != EINTR) return -1;
      if (ready <= 0) continue;
      char byte;
      ssize_t n = ::read(STDIN_FILENO, &byte, 1);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return n == 0 ? 0 : -1;
      std::size_t used = std::mbrtowc(out, &byte, 1, &self->mb);
      if (used == static_cast<std::size_t>(-2)) continue;  // the middle of a UTF-8 sequence
      if (used == static_cast<std::size_t>(-1)) {          // not in this locale: the byte as it is
        self->mb = std::mbstate_t{};
        *out = static_cast<unsigned char>(byte);
      }
      return 1;
    }
  }

  static char* prompt(EditLine* el) {
    Impl* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    return const_cast<char*>(self->options.prompt.c_str());
  }

  // Tab.
  static unsigned char complete(EditLine* el, int) {
    Impl* self = nullptr;
    el_get(el, EL_CLIENTDATA, &self);
    if (!self->options.complete) return CC_ERROR;
    const LineInfo* li = el_line(el);
    const std::string before(li->buffer, static_cast<std::size_t>(li->cursor - li->buffer));
    const std::size_t start =
        before.find_last_of(" \t") == std::string::npos ? 0 : before.find_last_of(" \t") + 1;
    const std::string word = before.substr(start);
    std::vector<std::string> matches;
    for (auto& c : self->options.complete(before)) {
      if (c.size() >= word.size() && c.compare(0, word.size(), word) == 0)
        matches.push_back(std::move(c));
    }
    std::sort(matches.begin(), matches.end());
    matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
    if (matches.empty()) return CC_ERROR;  // a beep
    if (matches.size() == 1) {
      std::string rest = matches[0].substr(word.size()) + " ";
      return el_insertstr(el, rest.c_str()) == 0 ? CC_REFRESH : CC_ERROR;
    }
    std::size_t common = matches[0].size();
    for (const auto& m : matches) {
      std::size_t i = 0;
      while (i < common && i < m.size() && m[i] == matches[0][i]) ++i;
      common = i;
    }
    if (common > word.size()) {
      std::string rest = matches[0].substr(word.size(), common - word.size());
      return el_insertstr(el, rest.c_str()) == 0 ? CC_REFRESH : CC_ERROR;
    }
    // Nothing to add: show the choices under the line, then the line again.
    std::string list = "\n";
    std::size_t column = 0;
    for (const auto& m : matches) {
      if (column > 0 && column + m.size() + 2 > 78) {
        list += "\n";
        column = 0;
      }
      list += m + "  ";
      column += m.size() + 2;
    }
    list += "\n";
    std::fputs(list.c_str(), stdout);
    std::fflush(stdout);
    return CC_REDISPLAY;
  }

  void load_history() {
    if (options.history_file.empty()) return;
    HistEvent ev;
    ::history(history, &ev, H_LOAD, options.history_file.c_str());  // a missing file is no error
  }

  // Through a temp file and a rename, so two REPLs ending at once leave one whole file.
  void save_history() {
    if (options.history_file.empty()) return;
    std::error_code ec;
    std::filesystem::path file(options.history_file);
    std::filesystem::create_directories(file.parent_path(), ec);
    ::chmod(file.parent_path().c_str(), 0700);
    std::string temp = options.history_file + ".tmp." + std::to_string(::getpid());
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    FILE* fp = ::fdopen(fd, "w");
    if (!fp) {
      ::close(fd);
      ::unlink(temp.c_str());
      return;
    }
    HistEvent ev;
    const bool ok = ::history(history, &ev, H_SAVE_FP, fp) >= 0;
    if (std::fclose(fp) != 0 || !ok ||
        std::rename(temp.c_str(), options.history_file.c_str()) != 0) {
      ::unlink(temp.c_str());
    }
  }
};

LineEditor::LineEditor(Options options) : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  d.options = std::move(options);
  // libedit decodes and displays UTF-8 by the locale's LC_CTYPE.
  std::setlocale(LC_CTYPE, "");
  d.history = history_init();
  HistEvent ev;
  ::history(d.history, &ev, H_SETSIZE, std::max(1, d.options.history_size));
  ::history(d.history, &ev, H_SETUNIQUE, 1);
  d.load_history();

  d.el = el_init("mcprt", stdin, stdout, stderr);
  el_set(d.el, EL_CLIENTDATA, &d);
  el_set(d.el, EL_EDITOR, "emacs");
  el_set(d.el, EL_SIGNAL, 1);
  el_set(d.el, EL_PROMPT, &Impl::prompt);
  el_set(d.el, EL_HIST, ::history, d.history);
  el_set(d.el, EL_GETCFN, &Impl::read_char);
  el_set(d.el, EL_ADDFN, "mcprt-complete", "Complete a command, server or tool name",
         &Impl::complete);
  el_set(d.el, EL_BIND, "^I", "mcprt-complete", nullptr);
  el_source(d.el, nullptr);  // ~/.editrc
}

LineEditor::~LineEditor() {
  impl_->save_history();
  el_end(impl_->el);
  history_end(impl_->history);
}

std::optional<std::string> LineEditor::read_line() {
  // The terminal goes raw before the prompt is shown, not at the first key as el_gets
  // would: keys typed as soon as the prompt appears (a paste, a quick ^D) reach the editor
  // instead of the terminal's line discipline, which would take ^D and ^U for itself. The
  // terminal is cooked again when el_gets returns.
  el_set(impl_->el, EL_PREP_TERM, 1);
  int count = 0;
  const char* text = el_gets(impl_->el, &count);
  if (text == nullptr || count <= 0) return std::nullopt;
  std::string line(text, static_cast<std::size_t>(count));
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (!line.empty() && line[0] != ' ' && line[0] != '\t') {
    HistEvent ev;
    ::history(impl_->history, &ev, H_ENTER, line.c_str());
  }
  return line;
}

std::string default_history_file() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && *state == '/') return std::string(state) + "/mcprt/history";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.local/state/mcprt/history";
  return {};
}

std::vector<std::string> repl_candidates(const std::string& before_cursor,
                                         const std::vector<std::string>& servers,
                                         const std::vector<std::string>& tools) {
  std::vector<std::string> words = split_command_line(before_cursor);
  const bool new_word =
      before_cursor.empty() || before_cursor.back() == ' ' || before_cursor.back() == '\t';
  const std::size_t at = new_word ? words.size() : words.size() - 1;  // the word being completed
  if (at == 0) {
    std::vector<std::string> out = {"/mcp", "/tools", "/quit", "/exit"};
    out.insert(out.end(), tools.begin(), tools.end());
    return out;
  }
  if (words[0] != "/mcp") return {};
  if (at == 1) {
    return {"list",      "tools", "resources", "prompts", "read", "prompt", "status", "reload",
            "reconnect", "auth",  "enable",    "disable", "add",  "remove", "search", "help"};
  }
  if (at == 2 && words[1] == "search") {
    // A query is free text; what completes is the exact form, select:<tool>.
    std::vector<std::string> out = {"--limit"};
    for (const auto& t : tools) out.push_back("select:" + t);
    return out;
  }
  static const std::vector<std::string> kTakesServer = {
      "tools", "resources", "prompts", "status", "reconnect", "auth", "enable", "disable", "remove"};
  if (at == 2 &&
      std::find(kTakesServer.begin(), kTakesServer.end(), words[1]) != kTakesServer.end())
    return servers;
  return {};
}

}  // namespace mcprt::cli
