// The `mcprt` command-line host (SPEC §10).
//   mcprt [--cwd DIR] [--config FILE] [--no-cache] [--elicit=ask|decline|accept-defaults] <command>
//     list [--json]             servers, source, transport, trust, what each would run
//                               (configs only: nothing is spawned or connected)
//     trust [DIR]               trust DIR's project servers as they are now
//     untrust [DIR]             remove DIR's trust
//     tools [--json]            every MCP tool of every server
//     call <tool> [JSON] [--json] [--server NAME]  call one tool (starts only its server)
//     search <query> [--json] [--limit N] [--server S]...  tool search over every tool
//     status [name] [--json]    one server's state, error and stderr tail (or all)
//     resources [server] [--json]           resources and resource templates
//     read <uri> [--server S] [--json] [--out FILE]   read one resource
//     prompts [server] [--json]             prompts and their arguments
//     prompt <server:name> [--arg k=v]... [--json]    a prompt's messages
//     repl                      /mcp commands and tool calls from stdin
//     auth login [server] [--no-browser]   OAuth sign-in (browser + loopback callback)
//     auth logout [server]      delete a server's tokens
//     auth status [server] [--json]        what is stored (never a token)
//     serve-demo [--port N]     the web demo page + demo MCP server (cli_serve_demo.cpp)
//     add [-s user|project] [-t stdio|http|sse] [-e K=V]... [-H 'K: V']... <name> <url> | -- <cmd>
//     [args...] remove [-s user|project] <name>     get <name> [--json]     enable <name> disable
//     <name>
//                               edit config files only (cli_config_verbs.cpp)
//     completion bash|zsh|fish  print a shell completion script (cli_completion.cpp)
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli_commands.hpp"
#include "cli_completion.hpp"
#include "cli_config_verbs.hpp"
#include "mcprt/tool_search.hpp"
#include "mcprt/version.hpp"

namespace {

// The first word of the command line that is neither an option (nor an option's value) nor
// a command: CLI11 alone says only "A subcommand is required" for `mcprt bogus`.
std::optional<std::string> unknown_command(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") return std::nullopt;
    if (arg.rfind('-', 0) == 0) {
      const CLI::Option* option = app.get_option_no_throw(arg);
      if (option && option->get_items_expected_min() > 0 && arg.find('=') == std::string::npos) ++i;
      continue;
    }
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (command->check_name(arg)) return std::nullopt;
    }
    return arg;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mcprt::cli;
  CLI::App app{"mcprt: the MCP runtime for AI agents"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the command (`mcprt tools --config f`)
  app.set_version_flag("--version", std::string("mcprt ") + MCPRT_VERSION);

  // help2man turns each "Heading:" into a man page section and each "  term  text" (or a
  // term with its text indented below it) into an entry: keep that shape.
  app.footer(
      "Exit status:\n"
      "  0    success\n"
      "  1    a server failed (tools, status, resources, prompts, search); a config file or\n"
      "       entry is invalid (list); the tool's result is an error (call); the server\n"
      "       refused a read or a prompt (read, prompt); a file could not be written\n"
      "  2    usage or config error (unknown command, tool, server, resource or prompt; bad\n"
      "       flag; a name that exists; an invalid config file; an empty search query; a\n"
      "       search's select: name that is no tool)\n"
      "  3    a project server is not trusted and nothing failed: run the `mcprt trust '<dir>'`\n"
      "       it prints\n"
      "  4    a server needs authorization and nothing failed: run `mcprt auth login <name>`\n"
      "  130  call interrupted by Ctrl-C (143: SIGTERM); the call is cancelled on the server\n"
      "  When several apply, 1 wins over 4, and 4 over 3.\n"
      "\n"
      "Examples:\n"
      "  mcprt list\n"
      "                      the servers mcprt finds, and where (starts nothing)\n"
      "  mcprt tools\n"
      "                      connect to every server, list their tools\n"
      "  mcprt call mcp_demo_echo '{\"message\": \"hi\"}'\n"
      "                      call one tool\n"
      "  mcprt search create a directory\n"
      "                      the tools that fit a task, best first (as an agent's tool search)\n"
      "  mcprt resources\n"
      "                      every server's resources and resource templates\n"
      "  mcprt read demo://readme\n"
      "                      read one resource\n"
      "  mcprt prompt demo:greet --arg name=Ada\n"
      "                      a prompt's messages, with its arguments\n"
      "  mcprt add --transport http sentry https://mcp.sentry.dev/mcp\n"
      "                      add an HTTP server to the user config\n"
      "  mcprt add -e API_KEY=xyz airtable -- npx -y airtable-mcp-server\n"
      "                      add a stdio server (everything after -- is its command line)\n"
      "  mcprt disable sentry\n"
      "                      off in every project until `mcprt enable sentry`\n"
      "  mcprt repl\n"
      "                      /mcp commands and tool calls, with history and Tab completion\n"
      "\n"
      "Files:\n"
      "  $XDG_CONFIG_HOME/mcprt/mcp.json\n"
      "                      the user config (add, remove, enable, disable; project trust)\n"
      "  <cwd>/.mcprt/mcp.json\n"
      "                      the project config (add --scope project); mcprt also reads the "
      "configs of\n"
      "                      Claude Code, Gemini CLI, Codex, Cursor, Windsurf and VS Code\n"
      "  $XDG_CACHE_HOME/mcprt/\n"
      "                      the tool cache\n"
      "  $XDG_DATA_HOME/mcprt/credentials/\n"
      "                      OAuth tokens (mode 0600)\n"
      "  $XDG_STATE_HOME/mcprt/history\n"
      "                      the REPL history\n"
      "\n"
      "Environment:\n"
      "  MCPRT_TIMEOUT_MS\n"
      "                      default server timeout in ms (30000; 0 = none)\n"
      "  MCPRT_LOG_LEVEL\n"
      "                      debug, info, warn, error (default), off; logs go to stderr\n"
      "  NO_COLOR\n"
      "                      when set and not empty: no colour\n"
      "  XDG_CONFIG_HOME, XDG_CACHE_HOME, XDG_DATA_HOME, XDG_STATE_HOME\n"
      "                      the folders above (defaults ~/.config, ~/.cache,\n"
      "                      ~/.local/share, ~/.local/state)\n"
      "  HOME\n"
      "                      where the other tools' configs are (~/.claude.json, ~/.cursor/ ...)\n"
      "  BROWSER\n"
      "                      what `auth login` opens the sign-in page with (else xdg-open when "
      "DISPLAY or\n"
      "                      WAYLAND_DISPLAY is set; else the URL is only printed)\n"
      "  MCPRT_DEMO_WEB_DIR, MCPRT_JS_DIR, MCPRT_DEMO_SERVER\n"
      "                      serve-demo's files");

  GlobalOptions global;
  app.add_option("--cwd", global.cwd, "Project directory (config lookup and server cwd)");
  app.add_option("--config", global.config_path,
                 "Use only this config file ({\"mcpServers\": ...}) instead of discovering the "
                 "user's configs");
  app.add_flag("--no-cache", global.no_cache, "Do not read or write the tool cache");
  app.add_option("--elicit", global.elicit,
                 "When a server asks for input: ask (a form on a terminal; declined when not "
                 "interactive), decline, or accept-defaults (forms with only their defaults; "
                 "URL requests declined). Default: ask")
      ->check(CLI::IsMember({"ask", "decline", "accept-defaults"}));

  bool list_json = false;
  auto* list_cmd = app.add_subcommand(
      "list",
      "List the configured MCP servers: source, transport, trust, what each would run "
      "(reads configs only; starts nothing)");
  list_cmd->add_flag("--json", list_json, "Print one JSON object instead of text");

  std::string trust_dir;
  auto* trust_cmd = app.add_subcommand(
      "trust",
      "Trust a project folder's MCP servers as they are now (default: the current directory)");
  trust_cmd->add_option("dir", trust_dir, "Project folder");
  std::string untrust_dir;
  auto* untrust_cmd = app.add_subcommand("untrust", "Remove the trust of a project folder");
  untrust_cmd->add_option("dir", untrust_dir, "Project folder");

  bool tools_json = false;
  auto* tools_cmd = app.add_subcommand(
      "tools", "Connect to every configured MCP server in parallel and list their tools");
  tools_cmd->add_flag("--json", tools_json, "Print one JSON object instead of text");

  std::string call_tool;
  std::string call_args = "{}";
  bool call_json = false;
  auto* call_cmd = app.add_subcommand("call", "Call one tool: mcprt call <tool> '<json-args>'");
  call_cmd->add_option("tool", call_tool, "Tool name (mcp_<server>_<tool>)")->required();
  call_cmd->add_option("arguments", call_args, "Arguments as a JSON object (default {})");
  call_cmd->add_flag("--json", call_json, "Print the result as JSON");
  std::string call_server;
  call_cmd->add_option("--server", call_server,
                       "The tool's server (default: the configured server the tool's name starts "
                       "with); the tool may then be given by the server's own name for it. Only "
                       "this server is started");
  call_cmd->footer(
      "Ctrl-C (or SIGTERM) cancels the call on the server and exits 130 (143). Examples:\n"
      "  mcprt call mcp_demo_add '{\"a\": 2, \"b\": 3}'\n"
      "  mcprt call --server demo add '{\"a\": 2, \"b\": 3}'");

  std::vector<std::string> search_words;
  bool search_json = false;
  std::size_t search_limit = mcprt::kToolSearchDefaultLimit;
  std::vector<std::string> search_servers;
  auto* search_cmd = app.add_subcommand(
      "search",
      "Find tools as an agent's tool search does: exact and substring name matches first, then "
      "keywords (BM25 over name, title, server, description, parameter names)");
  search_cmd->add_option("query", search_words,
                         "Words (\"create a directory\"), a name, or select:<tool>[,<tool>...] "
                         "for full names; +word: the name must hold the word");
  search_cmd->add_flag("--json", search_json,
                       "Print one JSON object (the hits with their definitions)");
  search_cmd
      ->add_option("--limit", search_limit,
                   "At most N hits (default " + std::to_string(mcprt::kToolSearchDefaultLimit) +
                       ", at most " + std::to_string(mcprt::kToolSearchMaxLimit) + ")")
      ->check(CLI::Range(std::size_t{1}, mcprt::kToolSearchMaxLimit));
  search_cmd
      ->add_option("--server", search_servers,
                   "Search only this server's tools (only it starts; repeat for more)")
      ->allow_extra_args(false);
  search_cmd->footer(
      "Examples:\n"
      "  mcprt search create a directory\n"
      "  mcprt search --json --limit 3 store an entity\n"
      "  mcprt search select:mcp_demo_echo,mcp_demo_add");

  std::string resources_server;
  bool resources_json = false;
  auto* resources_cmd = app.add_subcommand(
      "resources",
      "List the resources and resource templates of every server (or of one: only it starts)");
  resources_cmd->add_option("server", resources_server, "Server name");
  resources_cmd->add_flag("--json", resources_json,
                          "Print one JSON object ({\"resources\", \"resourceTemplates\", ...})");

  std::string read_uri, read_server, read_out;
  bool read_json = false;
  auto* read_cmd = app.add_subcommand(
      "read", "Read one resource: its text, or [binary <type>, N bytes] (--out saves the bytes)");
  read_cmd->add_option("uri", read_uri, "The resource's URI (mcprt resources lists them)")->required();
  read_cmd->add_option("--server", read_server,
                       "Read it from this server (only it starts); default: the server that lists "
                       "the URI or a template matching it");
  read_cmd->add_flag("--json", read_json, "Print the raw resources/read result");
  read_cmd->add_option("--out", read_out, "Write the contents' bytes (a blob decoded) to this file");
  read_cmd->footer(
      "Examples:\n"
      "  mcprt read demo://readme\n"
      "  mcprt read --server demo demo://logo.png --out logo.png");

  std::string prompts_server;
  bool prompts_json = false;
  auto* prompts_cmd = app.add_subcommand(
      "prompts", "List the prompts of every server (or of one: only it starts), with their arguments");
  prompts_cmd->add_option("server", prompts_server, "Server name");
  prompts_cmd->add_flag("--json", prompts_json, "Print one JSON object ({\"prompts\", ...})");

  std::string prompt_name;
  std::vector<std::string> prompt_args;
  bool prompt_json = false;
  auto* prompt_cmd = app.add_subcommand(
      "prompt", "Get a prompt with arguments and print its messages: mcprt prompt server:name --arg k=v");
  prompt_cmd
      ->add_option("name", prompt_name,
                   "server:name (only that server starts), or a name exactly one server has")
      ->required();
  prompt_cmd->add_option("--arg", prompt_args, "key=value (repeat for more)")->allow_extra_args(false);
  prompt_cmd->add_flag("--json", prompt_json, "Print the raw prompts/get result");
  prompt_cmd->footer("Example:\n  mcprt prompt demo:greet --arg name=Ada --arg style=pirate");

  std::string status_name;
  auto* status_cmd = app.add_subcommand("status", "Show a server's state, error and stderr tail");
  status_cmd->add_option("name", status_name, "Server name (default: every server)");
  bool status_json = false;
  status_cmd->add_flag("--json", status_json,
                       "Print one JSON object ({\"servers\": [...]}) instead of text");

  auto* repl_cmd = app.add_subcommand(
      "repl", "Read lines from stdin: /mcp commands, '<tool> <json>' calls, /quit");
  repl_cmd->footer(
      "On a terminal: emacs-style line editing (libedit; ~/.editrc is read), Up/Down and Ctrl-R\n"
      "through the history ($XDG_STATE_HOME/mcprt/history, the last 1000 lines; a line that\n"
      "starts with a space is not kept), Tab completes /mcp commands, server names and tool\n"
      "names, Ctrl-D ends. Not on a terminal, lines are read as they come (scripts):\n"
      "  printf '/mcp list\\nmcp_demo_echo {\"message\": \"hi\"}\\n' | mcprt repl\n"
      "Commands: /mcp help, /tools, /quit.");

  auto* auth_cmd = app.add_subcommand(
      "auth",
      "OAuth sign-in for http/sse servers: login, logout, status (credentials under "
      "$XDG_DATA_HOME/mcprt/credentials)");
  auth_cmd->require_subcommand(1);
  std::string login_name;
  bool login_no_browser = false;
  auto* login_cmd = auth_cmd->add_subcommand(
      "login",
      "Sign in to a server (default: every server that needs it): prints the URL, opens "
      "the browser, waits for the redirect, then connects and lists the server's tools");
  login_cmd->add_option("server", login_name, "Server name");
  login_cmd->add_flag("--no-browser", login_no_browser,
                      "Only print the URL; do not open a browser");
  std::string logout_name;
  auto* logout_cmd = auth_cmd->add_subcommand(
      "logout", "Delete the tokens of a server (default: of every http/sse server)");
  logout_cmd->add_option("server", logout_name, "Server name");
  std::string auth_status_name;
  bool auth_status_json = false;
  auto* auth_status_cmd = auth_cmd->add_subcommand(
      "status",
      "What is stored for each http/sse server: signed in, expiry, issuer, scopes "
      "(never a token)");
  auth_status_cmd->add_option("server", auth_status_name, "Server name");
  auth_status_cmd->add_flag("--json", auth_status_json, "Print one JSON object instead of text");

  // The config verbs (SPEC §18): `claude mcp` / `codex mcp` / `gemini mcp` flags.
  const std::string scope_help =
      "user (default): the mcprt user file ($XDG_CONFIG_HOME/mcprt/mcp.json); project: "
      "<cwd>/.mcprt/mcp.json. With --config FILE the verbs edit FILE";
  AddOptions add;
  auto* add_cmd = app.add_subcommand(
      "add",
      "Add an MCP server to a config file (nothing is started): <name> <url>, or "
      "<name> -- <command> [args...]");
  add_cmd->add_option("name", add.name, "Server name: letters, digits, _ . : - (at most 100)")
      ->required();
  add_cmd->add_option(
      "target", add.target,
      "The server's URL (http/sse), or -- then the command and its arguments (stdio)");
  add_cmd->add_option("-s,--scope", add.scope, scope_help)
      ->check(CLI::IsMember({"user", "project"}));
  add_cmd
      ->add_option("-t,--transport", add.transport,
                   "stdio, http or sse (default: stdio for a command; for a URL, Streamable HTTP "
                   "falling back to legacy SSE)")
      ->check(CLI::IsMember({"stdio", "http", "sse"}));
  add_cmd
      ->add_option("-e,--env", add.env,
                   "KEY=VALUE in the server's environment (stdio; repeat for more)")
      ->allow_extra_args(false);
  add_cmd
      ->add_option("-H,--header", add.headers,
                   "'Name: value' sent with every request (http/sse; repeat for more)")
      ->allow_extra_args(false);
  add_cmd->add_option("--url", add.url, "The server's URL (as `codex mcp add --url`)");
  add_cmd->footer(
      "Examples:\n"
      "  mcprt add --transport http sentry https://mcp.sentry.dev/mcp\n"
      "  mcprt add -H 'Authorization: Bearer ${GITHUB_TOKEN}' github "
      "https://api.githubcopilot.com/mcp/\n"
      "  mcprt add -e API_KEY=xyz airtable -- npx -y airtable-mcp-server\n"
      "  mcprt add --scope project fs -- npx -y @modelcontextprotocol/server-filesystem .\n"
      "\n"
      "Options go before `--`; everything after it is the server's command line. A server\n"
      "added with --scope project is trusted for that folder (that server only). Values may\n"
      "be ${VAR} references, resolved when the server starts. An existing name is an error:\n"
      "to replace a server, `mcprt remove` it first.");

  std::string remove_name, remove_scope;
  auto* remove_cmd = app.add_subcommand("remove", "Remove an MCP server from an mcprt config file");
  remove_cmd->add_option("name", remove_name, "Server name")->required();
  remove_cmd
      ->add_option("-s,--scope", remove_scope, scope_help + " (default: the one that defines it)")
      ->check(CLI::IsMember({"user", "project"}));
  remove_cmd->footer("Example:\n  mcprt remove sentry\n  mcprt remove --scope project fs");

  std::string get_name;
  bool get_json = false;
  auto* get_cmd = app.add_subcommand(
      "get",
      "Show one server as configured: state, trust, source file, what it runs (starts nothing)");
  get_cmd->add_option("name", get_name, "Server name")->required();
  get_cmd->add_flag("--json", get_json, "Print one JSON object instead of text");
  get_cmd->footer(
      "Literal values of secret-looking env/header keys (key, token, secret, auth, ...) are\n"
      "shown as ***; ${VAR} references and !commands are shown as written.");

  std::string enable_name, disable_name;
  auto* enable_cmd = app.add_subcommand(
      "enable",
      "Enable a server (the user file's enabledServers; also overrides \"enabled\": false)");
  enable_cmd->add_option("name", enable_name, "Server name")->required();
  auto* disable_cmd = app.add_subcommand(
      "disable", "Disable a server, wherever it is defined (the user file's disabledServers)");
  disable_cmd->add_option("name", disable_name, "Server name")->required();
  disable_cmd->footer(
      "Example:\n  mcprt disable github      # off in every project until `mcprt enable github`");

  std::string completion_shell;
  auto* completion_cmd =
      app.add_subcommand("completion", "Print the shell completion script for bash, zsh or fish");
  completion_cmd->add_option("shell", completion_shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  completion_cmd->footer(
      "Examples:\n"
      "  source <(mcprt completion bash)                        # in ~/.bashrc\n"
      "  mcprt completion zsh > ~/.zfunc/_mcprt                 # ~/.zfunc in $fpath before "
      "compinit\n"
      "  mcprt completion fish > ~/.config/fish/completions/mcprt.fish\n"
      "Installed copies: share/bash-completion/completions/mcprt, "
      "share/zsh/vendor-completions/_mcprt,\n"
      "share/fish/vendor_completions.d/mcprt.fish. Server and tool names come from the configs\n"
      "and the tool cache: completing never starts a server.");
  // What the scripts call for names (not in --help: the group is empty).
  std::string complete_what;
  auto* complete_cmd = app.add_subcommand("__complete", "Names for the shell completion scripts");
  complete_cmd->group("");
  complete_cmd->add_option("what", complete_what, "servers or tools")->required();

  ServeDemoOptions serve_demo;
  auto* serve_demo_cmd = app.add_subcommand(
      "serve-demo", "Serve the web demo page and the demo MCP server on 127.0.0.1 (Ctrl-C stops)");
  serve_demo_cmd->add_option("--port", serve_demo.port, "Port of the page (default 8080, 0 = any)");
  serve_demo_cmd->add_option("--web-dir", serve_demo.web_dir,
                             "The demo page (env MCPRT_DEMO_WEB_DIR)");
  serve_demo_cmd->add_option("--js-dir", serve_demo.js_dir,
                             "The wasm build's mcprt-js directory (env MCPRT_JS_DIR)");
  serve_demo_cmd->add_option("--demo-server", serve_demo.demo_server,
                             "mcprt-demo-server binary (env MCPRT_DEMO_SERVER)");
  serve_demo_cmd
      ->add_option("--demo-startup-delay-ms", serve_demo.demo_startup_delay_ms,
                   "Delay the demo server's initialize answers (to watch cached tools on reload)")
      ->check(CLI::Range(0, 600000));

  if (auto word = unknown_command(app, argc, argv)) {
    std::string commands;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_group().empty()) continue;  // hidden (__complete)
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
    }
    std::fprintf(stderr, "mcprt: unknown command \"%s\" (commands: %s; see mcprt --help)\n",
                 word->c_str(), commands.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    // `mcprt add x npx -y srv`: CLI11 reads -y as an option of add; `mcprt add x npx -- srv`:
    // it takes no words after -- once words came before it.
    if (add_cmd->parsed() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      bool dashes = false;
      for (int i = 1; i < argc; ++i) dashes = dashes || std::strcmp(argv[i], "--") == 0;
      std::fputs(dashes
                     ? "mcprt: everything after -- is the command line; nothing goes between the "
                       "name and --: mcprt add <name> -- <command> [args...]\n"
                     : "mcprt: the server's own options go after --: mcprt add <name> -- <command> "
                       "[args...]\n",
                 stderr);
    }
    return rc == 0 ? kExitOk : kExitUsage;
  }

  if (list_cmd->parsed()) return run_list(global, list_json);
  if (trust_cmd->parsed()) return run_trust(global, trust_dir, true);
  if (untrust_cmd->parsed()) return run_trust(global, untrust_dir, false);
  if (tools_cmd->parsed()) return run_tools(global, tools_json);
  if (call_cmd->parsed()) return run_call(global, call_tool, call_args, call_json, call_server);
  if (search_cmd->parsed()) {
    std::string query;
    for (const auto& w : search_words) query += (query.empty() ? "" : " ") + w;
    return run_search(global, query, search_limit, search_servers, search_json);
  }
  if (status_cmd->parsed()) return run_status(global, status_name, status_json);
  if (resources_cmd->parsed()) return run_resources(global, resources_server, resources_json);
  if (prompts_cmd->parsed()) return run_prompts(global, prompts_server, prompts_json);
  if (read_cmd->parsed()) return run_read(global, read_uri, read_server, read_json, read_out);
  if (prompt_cmd->parsed()) return run_prompt(global, prompt_name, prompt_args, prompt_json);
  if (repl_cmd->parsed()) return run_repl(global);
  if (login_cmd->parsed()) return run_auth_login(global, login_name, !login_no_browser);
  if (logout_cmd->parsed()) return run_auth_logout(global, logout_name);
  if (auth_status_cmd->parsed()) return run_auth_status(global, auth_status_name, auth_status_json);
  if (serve_demo_cmd->parsed()) return run_serve_demo(serve_demo);
  if (add_cmd->parsed()) {
    // The words after the first `--` are a command line (CLI11 puts them last in `target`).
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--") == 0) {
        add.after_dashes = argc - i - 1;
        break;
      }
    }
    return run_add(global, add);
  }
  if (completion_cmd->parsed()) return run_completion_script(completion_shell);
  if (complete_cmd->parsed()) return run_complete_names(global, complete_what);
  if (remove_cmd->parsed()) return run_remove(global, remove_name, remove_scope);
  if (get_cmd->parsed()) return run_get(global, get_name, get_json);
  if (enable_cmd->parsed()) return run_set_enabled(global, enable_name, true);
  if (disable_cmd->parsed()) return run_set_enabled(global, disable_name, false);
  return kExitUsage;
}
