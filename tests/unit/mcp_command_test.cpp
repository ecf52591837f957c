// The /mcp command controller (SPEC §8): every subcommand's answer, and the user-file
// rewrites of enable/disable/add/remove, over real discovery and a real manager whose
// servers are FakeServers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mcprt/mcp_command.hpp"
#include "session_test_support.hpp"

namespace mcprt {
namespace mcp_command_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class McpCommand : public unit::SessionFixture {
 protected:
  void SetUp() override {
    serve("demo", {"echo", "add"});
    serve("files", {"read"});
    write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}});
    write(kClaudeFile, {{"mcpServers", {{"files", server("files")}}}});
  }
  bool has_tool(const std::string& name) const { return registry.contains(name); }
};

TEST(McpCommandLine, SplitsWordsWithQuotesAndEscapes) {
  EXPECT_EQ(split_command_line("  /mcp add  x -- node 'a b' \"c \\\"d\\\"\" e\\ f  "),
            (std::vector<std::string>{"/mcp", "add", "x", "--", "node", "a b", "c \"d\"", "e f"}));
  EXPECT_TRUE(split_command_line("   ").empty());
  EXPECT_EQ(split_command_line("''"), std::vector<std::string>{""});
}

TEST_F(McpCommand, List_ShowsEveryServerWithStatusToolCountAndSource) {
  start();
  std::string out = run("/mcp list");
  EXPECT_THAT(out, HasSubstr("MCP servers (2):"));
  EXPECT_THAT(out, ::testing::ContainsRegex("demo +connected +2 tools +mcprt \\(native\\) " +
                                            std::string(kUserFile)));
  EXPECT_THAT(out, ::testing::ContainsRegex("files +connected +1 tool +Claude Code \\(user\\) " +
                                            std::string(kClaudeFile)));
}

TEST_F(McpCommand, List_ShowsFailedServersWithTheirErrorAndDisabledOnes) {
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}, {"off", server("off")}}},
                    {"disabledServers", {"off"}}});
  farm.fail_connect("files", Error::make(ErrorCode::transport, "spawn failed: no such file"));
  start();
  std::string out = run("/mcp");  // bare /mcp lists
  EXPECT_THAT(out, ::testing::ContainsRegex("files +failed"));
  EXPECT_THAT(out, HasSubstr("error: "));
  EXPECT_THAT(out, HasSubstr("spawn failed: no such file"));
  EXPECT_THAT(out, ::testing::ContainsRegex("off +disabled"));
}

TEST_F(McpCommand, ShadowedEntries_AreListedAndStatusSaysByWhichEntryInsteadOfUnknown) {
  json other_demo = server("demo");
  other_demo["args"] = {"--other"};  // same name, another endpoint
  write(kClaudeFile, {{"mcpServers", {{"files", server("files")}, {"demo", other_demo}, {"twin", server("demo")}}}});
  start();
  std::string out = run("/mcp list");
  EXPECT_THAT(out, ::testing::ContainsRegex("demo +shadowed +- +Claude Code \\(user\\) " + std::string(kClaudeFile)));
  EXPECT_THAT(out, HasSubstr("shadowed by \"demo\" from mcprt (native) " + std::string(kUserFile) +
                             " (same name); not started"));
  EXPECT_THAT(out, ::testing::ContainsRegex("twin +shadowed"));
  EXPECT_THAT(out, HasSubstr("(same endpoint); not started"));
  std::string twin = run("/mcp status twin");
  EXPECT_THAT(twin, Not(HasSubstr("Unknown server")));
  EXPECT_THAT(twin, HasSubstr("state:    shadowed by \"demo\" from mcprt (native) " + std::string(kUserFile) +
                              " (same endpoint); never started"));
  EXPECT_THAT(twin, HasSubstr("source:   Claude Code (user) " + std::string(kClaudeFile)));
  EXPECT_THAT(run("/mcp status demo"),
              HasSubstr("shadows:  Claude Code (user) " + std::string(kClaudeFile) + " (same name; not used)"));
}

TEST_F(McpCommand, Tools_ListsAllToolsOrThoseOfOneServer) {
  start();
  std::string all = run("/mcp tools");
  EXPECT_THAT(all, HasSubstr("MCP tools (3):"));
  EXPECT_THAT(all, HasSubstr("mcp_demo_add"));
  EXPECT_THAT(all, HasSubstr("mcp_files_read"));
  std::string one = run("/mcp tools files");
  EXPECT_THAT(one, HasSubstr("Tools of \"files\" (1):"));
  EXPECT_THAT(one, HasSubstr("mcp_files_read  files/read  tool read"));
  EXPECT_THAT(one, Not(HasSubstr("mcp_demo_add")));
  EXPECT_EQ(run("/mcp tools nosuch"), "Unknown server \"nosuch\".\n");
}

TEST_F(McpCommand, Status_ShowsStateSourceToolsAndTheLastError) {
  farm.fail_connect("files", Error::make(ErrorCode::exited, "Server \"files\": exited (code 3)"));
  start();
  std::string ok = run("/mcp status demo");
  EXPECT_THAT(ok, HasSubstr("Server \"demo\""));
  EXPECT_THAT(ok, HasSubstr("state:    connected"));
  EXPECT_THAT(ok, HasSubstr("source:   mcprt (native) " + std::string(kUserFile)));
  EXPECT_THAT(ok, HasSubstr("tools:    2"));
  std::string bad = run("/mcp status files");
  EXPECT_THAT(bad, HasSubstr("state:    failed"));
  EXPECT_THAT(bad, HasSubstr("error:    "));
  EXPECT_THAT(bad, HasSubstr("exited (code 3)"));
  EXPECT_EQ(run("/mcp status ghost"), "Unknown server \"ghost\".\n");
}

TEST_F(McpCommand, Status_OfAServerTheHostDisconnectedSaysDisconnected) {
  start();
  manager->disconnect_server("demo");
  ex.run_until_idle();
  std::string out = run("/mcp status demo");
  EXPECT_THAT(out, HasSubstr("state:    disconnected\n"));
  EXPECT_THAT(out, HasSubstr("source:   mcprt (native) " + std::string(kUserFile)));
  EXPECT_THAT(out, HasSubstr("tools:    0"));
  EXPECT_THAT(out, Not(HasSubstr("error:")));
  EXPECT_THAT(run("/mcp list"), ::testing::ContainsRegex("demo +disconnected +0 tools"));
}

TEST_F(McpCommand, Reload_PicksUpAnEditedConfigAndRefreshesTheRegistry) {
  start();
  ASSERT_TRUE(has_tool("mcp_demo_echo"));
  serve("extra", {"ping_me"});
  write(kUserFile, {{"mcpServers", {{"extra", server("extra")}}}});
  std::string out = run("/mcp reload");
  EXPECT_THAT(out, HasSubstr("Reloaded: 2 servers, 2 tools."));
  EXPECT_THAT(out, HasSubstr("Connected \"extra\"."));
  EXPECT_TRUE(has_tool("mcp_extra_ping_me"));
  EXPECT_FALSE(has_tool("mcp_demo_echo"));
  EXPECT_TRUE(has_tool("mcp_files_read"));
  // Every server was reconnected: disconnect_all, then connect.
  EXPECT_EQ(farm.attempts("files"), 2u);
}

TEST_F(McpCommand, Reconnect_OpensANewConnectionToOneServer) {
  start();
  std::string out = run("/mcp reconnect demo");
  EXPECT_EQ(out, "Reconnected \"demo\" (2 tools).\n");
  EXPECT_EQ(farm.attempts("demo"), 2u);
  EXPECT_EQ(farm.attempts("files"), 1u);
  EXPECT_EQ(run("/mcp reconnect ghost"), "Unknown server \"ghost\".\n");
}

TEST_F(McpCommand, Disable_WritesTheUserListsAndDisconnects) {
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}, {"enabledServers", {"files"}}});
  start();
  std::string out = run("/mcp disable files");
  EXPECT_THAT(out, HasSubstr("Disabled \"files\" in " + std::string(kUserFile) + "."));
  EXPECT_THAT(out, HasSubstr("Disconnected \"files\"."));
  json doc = fs.read_json(kUserFile);
  EXPECT_EQ(doc["disabledServers"], json::array({"files"}));
  EXPECT_EQ(doc["enabledServers"], json::array());
  EXPECT_EQ(doc["mcpServers"], json({{"demo", server("demo")}}));  // the rest is kept
  EXPECT_FALSE(has_tool("mcp_files_read"));
  EXPECT_TRUE(has_tool("mcp_demo_echo"));
}

TEST_F(McpCommand, Enable_WritesTheUserListsAndConnects) {
  write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}}, {"disabledServers", {"files"}}});
  start();
  ASSERT_FALSE(has_tool("mcp_files_read"));
  std::string out = run("/mcp enable files");
  EXPECT_THAT(out, HasSubstr("Enabled \"files\" in " + std::string(kUserFile) + "."));
  EXPECT_THAT(out, HasSubstr("Connected \"files\"."));
  json doc = fs.read_json(kUserFile);
  EXPECT_EQ(doc["disabledServers"], json::array());
  EXPECT_EQ(doc["enabledServers"], json::array({"files"}));
  EXPECT_TRUE(has_tool("mcp_files_read"));
}

TEST_F(McpCommand, AddCommand_WritesAStdioEntryAndConnectsIt) {
  start();
  serve("notes", {"take"});
  std::string out = run("/mcp add notes -- node server.js --port '8 1'");
  EXPECT_THAT(out, HasSubstr("Added \"notes\" to " + std::string(kUserFile) + "."));
  EXPECT_THAT(out, HasSubstr("Connected \"notes\"."));
  json doc = fs.read_json(kUserFile);
  EXPECT_EQ(doc["mcpServers"]["notes"],
            json({{"command", "node"}, {"args", {"server.js", "--port", "8 1"}}}));
  EXPECT_TRUE(has_tool("mcp_notes_take"));
  EXPECT_EQ(farm.attempts("demo"), 1u);  // the others were left alone
}

TEST_F(McpCommand, Add_TakesTheFlagsOfMcprtAdd) {
  start();
  serve("web", {"search"});
  std::string out = run("/mcp add -t http web https://example.com/mcp -H 'X-Key: ${KEY}'");
  EXPECT_THAT(out, HasSubstr("Added \"web\""));
  EXPECT_EQ(fs.read_json(kUserFile)["mcpServers"]["web"],
            json({{"type", "http"},
                  {"url", "https://example.com/mcp"},
                  {"headers", {{"X-Key", "${KEY}"}}}}));
  serve("notes", {"take"});
  run("/mcp add -e A=1 notes -- node s.js");
  EXPECT_EQ(fs.read_json(kUserFile)["mcpServers"]["notes"],
            json({{"command", "node"}, {"args", {"s.js"}}, {"env", {{"A", "1"}}}}));
  EXPECT_TRUE(has_tool("mcp_notes_take"));
}

TEST_F(McpCommand, AddUrl_WritesAnHttpEntryAndCreatesTheFile) {
  fs.files.erase(kUserFile);
  start();
  serve("web", {"search"});
  std::string out = run("/mcp add web --url https://example.com/mcp");
  EXPECT_THAT(out, HasSubstr("Added \"web\""));
  json doc = fs.read_json(kUserFile);
  EXPECT_EQ(doc["mcpServers"]["web"], json({{"url", "https://example.com/mcp"}}));
  EXPECT_TRUE(has_tool("mcp_web_search"));
}

TEST_F(McpCommand, Add_RefusesBadNamesUrlsAndExistingEntries) {
  start();
  int writes = fs.writes;
  EXPECT_THAT(run("/mcp add 'bad name' --url https://x.dev"), HasSubstr("Server \"bad name\""));
  EXPECT_THAT(run("/mcp add web --url ftp://x.dev"), HasSubstr("is not an http:// or https:// URL"));
  EXPECT_THAT(run("/mcp add demo -- other"), HasSubstr("already defined in"));
  EXPECT_THAT(run("/mcp add web"),
              HasSubstr("Wrong arguments for /mcp add: give a URL or -- <command>"));
  EXPECT_THAT(run("/mcp add web https://x.dev -e A=1"),
              HasSubstr("-e sets the environment of a stdio server"));
  EXPECT_THAT(run("/mcp add web node --port 8"), HasSubstr("unknown option \"--port\""));
  EXPECT_EQ(fs.writes, writes);
}

TEST_F(McpCommand, Remove_DeletesTheEntryAndDisconnects) {
  start();
  std::string out = run("/mcp remove demo");
  EXPECT_THAT(out, HasSubstr("Removed \"demo\" from " + std::string(kUserFile) + "."));
  EXPECT_THAT(out, HasSubstr("Disconnected \"demo\"."));
  EXPECT_EQ(fs.read_json(kUserFile)["mcpServers"], json::object());
  EXPECT_FALSE(has_tool("mcp_demo_echo"));
  EXPECT_TRUE(has_tool("mcp_files_read"));
  // Removed from the config, so forgotten too (not left as a disconnected row).
  EXPECT_EQ(run("/mcp status demo"), "Unknown server \"demo\".\n");
}

TEST_F(McpCommand, Remove_OfAServerFromAnotherFileSaysWhereItComesFrom) {
  start();
  std::string out = run("/mcp remove files");
  EXPECT_THAT(out, HasSubstr("Server \"files\" is not in " + std::string(kUserFile) + "."));
  EXPECT_THAT(out, HasSubstr("Claude Code (user) " + std::string(kClaudeFile)));
  EXPECT_TRUE(has_tool("mcp_files_read"));
}

TEST_F(McpCommand, Edit_RefusesToOverwriteAUserFileThatIsNotJson) {
  start();
  fs.files[kUserFile] = "{ not json";
  EXPECT_THAT(run("/mcp disable demo"), HasSubstr("is not valid JSON"));
  EXPECT_EQ(fs.files[kUserFile], "{ not json");
}

TEST_F(McpCommand, Edit_ReportsAFailedWrite) {
  start();
  fs.fail_writes = true;
  EXPECT_THAT(run("/mcp disable demo"),
              HasSubstr("Cannot disable \"demo\": cannot write " + std::string(kUserFile)));
  EXPECT_TRUE(has_tool("mcp_demo_echo"));
}

TEST_F(McpCommand, UnknownSubcommandOrMissingArgumentAnswersUsage) {
  start();
  std::string out = run("/mcp frobnicate");
  EXPECT_THAT(out, HasSubstr("Unknown subcommand \"frobnicate\"."));
  EXPECT_THAT(out, HasSubstr("Usage: /mcp <command>"));
  EXPECT_THAT(run("/mcp status"), HasSubstr("Wrong arguments for /mcp status."));
  EXPECT_EQ(run("/mcp help"), McpCommandController::usage());
}

TEST_F(McpCommand, WithoutAManagerEveryCommandSaysMcpIsDisabled) {
  McpSession bare(registry);
  McpCommandController c(bare, {});
  std::optional<std::string> out;
  c.execute("/mcp list", [&](std::string s) { out = s; });
  ex.run_until_idle();
  EXPECT_EQ(out, "MCP is disabled.\n");
}

TEST_F(McpCommand, AnAnswerPendingWhenTheControllerDiesIsDropped) {
  serve("slow", {"x"}, {"tools/list"});
  start();
  write(kUserFile, {{"mcpServers", {{"slow", server("slow")}}}});
  bool answered = false;
  mcp->execute("/mcp reload", [&](std::string) { answered = true; });
  ex.run_until_idle();
  ASSERT_FALSE(answered);  // the gate waits for the uncached slow server
  mcp.reset();
  auto* s = farm.latest("slow");
  ASSERT_NE(s, nullptr);
  s->reply(s->last_request("tools/list")["id"], {{"tools", json::array({unit::tool_def("x")})}});
  ex.run_until_idle();
  EXPECT_FALSE(answered);
}


// --- project trust (SPEC §17) ----------------------------------------------------------

class McpCommandTrust : public McpCommand {
 protected:
  void SetUp() override {
    McpCommand::SetUp();
    serve("proj", {"build"});
    serve("vetted", {"check"});
    write("/work/.mcp.json",
          {{"mcpServers",
            {{"proj", {{"command", "node"}, {"args", {"evil.js", "${SECRET}"}}, {"env", {{"T", "!pass show x"}}}}},
             {"vetted", server("vetted")}}}});
    // vetted is trusted as written; proj is not.
    ServerConfig c;
    c.raw = server("vetted");
    write(kUserFile, {{"mcpServers", {{"demo", server("demo")}}},
                      {"trustedProjects", {{"/work", {{"servers", {{"vetted", config_hash(c)}}}}}}}});
  }
  void start_with_advice() {
    start();
    McpCommandOptions o;
    o.discover = [this] { return discover(); };
    o.fs = &fs;
    o.user_config_path = kUserFile;
    o.trust_command = [](const std::string& folder) { return "mcprt trust '" + folder + "'"; };
    mcp = std::make_unique<McpCommandController>(session, std::move(o), discover());
  }
};

TEST_F(McpCommandTrust, List_ShowsAServerThatIsNotTrustedWithWhatItWouldRunAndHowToTrustIt) {
  start_with_advice();
  EXPECT_EQ(farm.attempts("proj"), 0u);
  std::string out = run("/mcp list");
  EXPECT_THAT(out, HasSubstr("MCP servers (4):"));
  EXPECT_THAT(out, ::testing::ContainsRegex("proj +not trusted +- +Claude Code \\(project\\) /work/.mcp.json"));
  EXPECT_THAT(out, HasSubstr("would run: node evil.js '${SECRET}'"));
  EXPECT_THAT(out, HasSubstr("would run at connect: env T: !pass show x"));
  EXPECT_THAT(out, HasSubstr("would read the environment variables: SECRET"));
  EXPECT_THAT(out, ::testing::ContainsRegex("vetted +connected +1 tool +Claude Code \\(project, trusted\\)"));
  EXPECT_THAT(out, HasSubstr("1 server is not trusted in /work"));
  EXPECT_THAT(out, HasSubstr("to trust it: mcprt trust '/work'"));
}

TEST_F(McpCommandTrust, Status_OfAServerThatIsNotTrustedSaysSoAndWhatItWouldRun) {
  start_with_advice();
  std::string out = run("/mcp status proj");
  EXPECT_THAT(out, HasSubstr("state:    not trusted"));
  EXPECT_THAT(out, HasSubstr("trust:    pending (project folder /work)"));
  EXPECT_THAT(out, HasSubstr("would run: node evil.js '${SECRET}'"));
  EXPECT_THAT(out, HasSubstr("to trust: mcprt trust '/work'"));
  EXPECT_THAT(run("/mcp status vetted"), HasSubstr("trust:    trusted"));
  EXPECT_THAT(run("/mcp status demo"), HasSubstr("trust:    implicit"));
}

TEST_F(McpCommandTrust, ToolsAndReconnectOfAServerThatIsNotTrustedSaySoAndConnectNothing) {
  start_with_advice();
  EXPECT_THAT(run("/mcp tools proj"), HasSubstr("Server \"proj\" is not trusted (project config /work/.mcp.json)."));
  EXPECT_THAT(run("/mcp reconnect proj"), HasSubstr("is not trusted"));
  EXPECT_EQ(farm.attempts("proj"), 0u);
}

TEST_F(McpCommandTrust, ReloadKeepsAServerThatIsNotTrustedPendingAndAnEditKeepsTheTrustRecords) {
  start_with_advice();
  EXPECT_THAT(run("/mcp reload"), HasSubstr("Reloaded: 3 servers"));
  EXPECT_EQ(farm.attempts("proj"), 0u);
  json before = fs.read_json(kUserFile)["trustedProjects"];
  run("/mcp disable files");  // the shared user-file rewriter keeps keys it does not edit
  EXPECT_EQ(fs.read_json(kUserFile)["trustedProjects"], before);
  EXPECT_TRUE(has_tool("mcp_vetted_check"));
}

// --- needs-auth (SPEC §13) ---------------------------------------------------------------

Error files_needs_login() {
  return Error::make(
      ErrorCode::needs_auth,
      "Server \"files\": the server needs an authorization; run `mcprt auth login files`");
}

TEST_F(McpCommand, NeedsAuth_ListStatusAndReloadShowThePhaseAndTheLoginHint) {
  farm.fail_connect("files", files_needs_login());
  start();
  std::string list = run("/mcp list");
  EXPECT_THAT(list, ::testing::ContainsRegex("files +needs-auth +0 tools"));
  EXPECT_THAT(list, HasSubstr("run `mcprt auth login files`"));
  EXPECT_THAT(list, Not(HasSubstr("failed")));
  std::string status = run("/mcp status files");
  EXPECT_THAT(status, HasSubstr("state:    needs-auth (disconnected)"));
  EXPECT_THAT(status, HasSubstr("error:    Server \"files\": the server needs an authorization; "
                                "run `mcprt auth login files`"));
  std::string reload = run("/mcp reload");
  EXPECT_THAT(reload, HasSubstr("Needs authorization \"files\": Server \"files\""));
  EXPECT_THAT(reload, Not(HasSubstr("Failed \"files\"")));
  std::string reconnect = run("/mcp reconnect files");
  EXPECT_THAT(reconnect, HasSubstr("\"files\" needs authorization: "));
  EXPECT_THAT(reconnect, HasSubstr("mcprt auth login files"));
}

TEST_F(McpCommand, Auth_LogsInThroughTheHostThenReconnectsAndNamesTheTools) {
  farm.fail_connect("files", files_needs_login());
  std::vector<std::string> asked;
  login = [&](const std::string& server, std::function<void(Status)> done) {
    asked.push_back(server);
    farm.fail_connect("files", std::nullopt);  // the credential the login stored now works
    ex.post([done] { done(Status()); });
  };
  start();
  ASSERT_FALSE(has_tool("mcp_files_read"));
  EXPECT_EQ(run("/mcp auth files"),
            "Logged in to \"files\" and connected (1 tool: mcp_files_read).\n");
  EXPECT_EQ(asked, std::vector<std::string>{"files"});
  EXPECT_EQ(manager->server_state("files")->phase, ServerPhase::connected);
  EXPECT_TRUE(has_tool("mcp_files_read"));  // the registry was refreshed
  EXPECT_EQ(farm.attempts("files"), 2u);
  EXPECT_EQ(farm.attempts("demo"), 1u);  // other servers untouched
}

TEST_F(McpCommand, Auth_AFailedLoginSaysWhyAndTriesNoConnection) {
  farm.fail_connect("files", files_needs_login());
  login = [&](const std::string&, std::function<void(Status)> done) {
    ex.post([done] {
      done(Error::make(ErrorCode::timeout, "no answer from the browser within 300000 ms"));
    });
  };
  start();
  EXPECT_EQ(run("/mcp auth files"),
            "Login to \"files\" failed: no answer from the browser within 300000 ms\n");
  EXPECT_EQ(manager->server_state("files")->phase, ServerPhase::needs_auth);
  EXPECT_EQ(farm.attempts("files"), 1u);
}

TEST_F(McpCommand, Auth_LoggedInButTheServerStillRefuses) {
  farm.fail_connect("files", files_needs_login());
  login = [&](const std::string&, std::function<void(Status)> done) {
    ex.post([done] { done(Status()); });
  };
  start();
  std::string out = run("/mcp auth files");
  EXPECT_THAT(out, HasSubstr("Logged in to \"files\", but connecting failed: "));
  EXPECT_THAT(out, HasSubstr("mcprt auth login files"));
  EXPECT_EQ(manager->server_state("files")->phase, ServerPhase::needs_auth);
}

TEST_F(McpCommand, Auth_UnknownServerNoLoginHookAndUsage) {
  start();
  EXPECT_EQ(run("/mcp auth files"), "Logging in is not available in this host.\n");
  EXPECT_EQ(run("/mcp auth ghost"), "Unknown server \"ghost\".\n");
  EXPECT_THAT(run("/mcp auth"), HasSubstr("Wrong arguments for /mcp auth."));
  EXPECT_THAT(run("/mcp help"), HasSubstr("/mcp auth <name>"));
}

}  // namespace
}  // namespace mcp_command_test
}  // namespace mcprt
