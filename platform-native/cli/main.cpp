// The `mcprt` command-line host (SPEC §10).
//   mcprt [--cwd DIR] [--config FILE] [--no-cache] [--elicit=ask|decline|accept-defaults] <command>
//     list [--json]             servers, source, transport, trust, what each would run
//                               (configs only: nothing is spawned or connected)
//     trust [DIR]               trust DIR's project servers as they are now
//     untrust [DIR]             remove DIR's trust
//     tools [--json]            every MCP tool of every server
//     call <tool> [JSON] [--json] [--server NAME]  call one tool (starts only its server)
//     status [name] [--json]    one server's state, error and stderr tail (or all)
//     repl                      /mcp commands and tool calls from stdin
//     auth login [server] [--no-browser]   OAuth sign-in (browser + loopback callback)
//     auth logout [server]      delete a server's tokens
//     auth status [server] [--json]        what is stored (never a token)
//     serve-demo [--port N]     the web demo page + demo MCP server (cli_serve_demo.cpp)
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>
#include <string>

#include "cli_commands.hpp"

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
  CLI::App app{"mcprt — the MCP runtime for AI agents"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the command (`mcprt tools --config f`)
  app.set_version_flag("--version", std::string("mcprt ") + MCPRT_VERSION);

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
      "list", "List the configured MCP servers: source, transport, trust, what each would run "
              "(reads configs only; starts nothing)");
  list_cmd->add_flag("--json", list_json, "Print one JSON object instead of text");

  std::string trust_dir;
  auto* trust_cmd = app.add_subcommand(
      "trust", "Trust a project folder's MCP servers as they are now (default: the current directory)");
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

  std::string status_name;
  auto* status_cmd = app.add_subcommand("status", "Show a server's state, error and stderr tail");
  status_cmd->add_option("name", status_name, "Server name (default: every server)");
  bool status_json = false;
  status_cmd->add_flag("--json", status_json, "Print one JSON object ({\"servers\": [...]}) instead of text");

  auto* repl_cmd = app.add_subcommand(
      "repl", "Read lines from stdin: /mcp commands, '<tool> <json>' calls, /quit");

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

  ServeDemoOptions serve_demo;
  auto* serve_demo_cmd = app.add_subcommand(
      "serve-demo", "Serve the web demo page and the demo MCP server on 127.0.0.1 (Ctrl-C stops)");
  serve_demo_cmd->add_option("--port", serve_demo.port, "Port of the page (default 8080, 0 = any)");
  serve_demo_cmd->add_option("--web-dir", serve_demo.web_dir, "The demo page (env MCPRT_DEMO_WEB_DIR)");
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
    return rc == 0 ? kExitOk : kExitUsage;
  }

  if (list_cmd->parsed()) return run_list(global, list_json);
  if (trust_cmd->parsed()) return run_trust(global, trust_dir, true);
  if (untrust_cmd->parsed()) return run_trust(global, untrust_dir, false);
  if (tools_cmd->parsed()) return run_tools(global, tools_json);
  if (call_cmd->parsed()) return run_call(global, call_tool, call_args, call_json, call_server);
  if (status_cmd->parsed()) return run_status(global, status_name, status_json);
  if (repl_cmd->parsed()) return run_repl(global);
  if (login_cmd->parsed()) return run_auth_login(global, login_name, !login_no_browser);
  if (logout_cmd->parsed()) return run_auth_logout(global, logout_name);
  if (auth_status_cmd->parsed()) return run_auth_status(global, auth_status_name, auth_status_json);
  if (serve_demo_cmd->parsed()) return run_serve_demo(serve_demo);
  return kExitUsage;
}
