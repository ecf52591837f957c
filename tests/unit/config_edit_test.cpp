// Editing a config file (config_edit.hpp): the entries `add` builds and the errors it
// gives, the `/mcp add` word parser, and the rewrites, which keep the file's key order and
// every key they do not know.

#include "mcprt/config_edit.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mcprt/testing/memory_file_system.hpp"

namespace mcprt {
namespace config_edit_test {  // this file's own names in a unity batch
namespace {

using ::testing::HasSubstr;
using testing::MemoryFileSystem;

constexpr const char* kFile = "/home/u/.config/mcprt/mcp.json";

// The user's file, its keys in an order no sort gives.
constexpr const char* kUnsorted = R"({
  "zeta": {"keep": [3, 1, 2]},
  "mcpServers": {
    "web": {"url": "https://x.example/mcp"},
    "fs": {"command": "npx", "args": ["-y", "fs"]}
  },
  "alpha": true
})";

std::string error_of(const ServerEntrySpec& spec) {
  auto r = make_server_entry(spec);
  return r.ok() ? "(ok) " + r->dump() : r.error().message;
}

TEST(ConfigEdit, Disable_KeepsTheFilesKeyOrderAndAppendsTheList) {
  MemoryFileSystem fs;
  fs.add(kFile, kUnsorted);
  ASSERT_TRUE(set_server_enabled_in_config(fs, kFile, "fs", false).ok());
  EXPECT_EQ(*fs.content(kFile), R"({
  "zeta": {
    "keep": [
      3,
      1,
      2
    ]
  },
  "mcpServers": {
    "web": {
      "url": "https://x.example/mcp"
    },
    "fs": {
      "command": "npx",
      "args": [
        "-y",
        "fs"
      ]
    }
  },
  "alpha": true,
  "disabledServers": [
    "fs"
  ]
}
)");
}

TEST(ConfigEdit, EnableAndDisable_MoveTheNameBetweenTheLists) {
  MemoryFileSystem fs;
  fs.add(kFile, R"({"disabledServers": ["a", 7, "fs"], "enabledServers": ["b"]})");
  ASSERT_TRUE(set_server_enabled_in_config(fs, kFile, "fs", true).ok());
  json doc = json::parse(*fs.content(kFile));
  EXPECT_EQ(doc["disabledServers"], json::array({"a", 7}));  // what is not the name stays
  EXPECT_EQ(doc["enabledServers"], json::array({"b", "fs"}));
  ASSERT_TRUE(set_server_enabled_in_config(fs, kFile, "fs", true).ok());  // idempotent
  EXPECT_EQ(json::parse(*fs.content(kFile))["enabledServers"], json::array({"b", "fs"}));
}

TEST(ConfigEdit, Disable_RefusesAListThatIsNotAList) {
  MemoryFileSystem fs;
  fs.add(kFile, R"({"disabledServers": "fs"})");
  Status s = set_server_enabled_in_config(fs, kFile, "fs", false);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message,
              HasSubstr("\"disabledServers\" in " + std::string(kFile) + " is not a list"));
  EXPECT_EQ(fs.writes(), 0u);
}

TEST(ConfigEdit, Add_AppendsTheEntryAfterTheOthersAndCreatesAMissingFile) {
  MemoryFileSystem fs;
  fs.add(kFile, kUnsorted);
  ordered_json entry =
      make_server_entry({.name = "a", .command = "node", .args = {"s.js"}, .env = {"K=v"}}).value();
  ASSERT_TRUE(add_server_to_config(fs, kFile, "a", entry).ok());
  const std::string text = *fs.content(kFile);
  EXPECT_LT(text.find("\"zeta\""), text.find("\"mcpServers\""));
  EXPECT_LT(text.find("\"fs\""), text.find("\"a\""));
  EXPECT_LT(text.find("\"a\""), text.find("\"alpha\""));
  EXPECT_THAT(text, HasSubstr(R"("a": {
      "command": "node",
      "args": [
        "s.js"
      ],
      "env": {
        "K": "v"
      }
    })"));

  MemoryFileSystem empty;
  ASSERT_TRUE(add_server_to_config(empty, kFile, "a", entry).ok());
  EXPECT_EQ(
      json::parse(*empty.content(kFile)),
      json::parse(
          R"({"mcpServers": {"a": {"command": "node", "args": ["s.js"], "env": {"K": "v"}}}})"));
}

TEST(ConfigEdit, Add_OfANameTheFileHas_IsRefusedAndWritesNothing) {
  MemoryFileSystem fs;
  fs.add(kFile, kUnsorted);
  Status s = add_server_to_config(fs, kFile, "fs", ordered_json{{"command", "other"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "Server \"fs\" is already defined in " + std::string(kFile));
  EXPECT_EQ(s.error().data, json({{"exists", true}}));
  EXPECT_EQ(fs.writes(), 0u);
}

TEST(ConfigEdit, Edits_RefuseAFileThatIsNotJsonOrWhoseServersAreNotAnObject) {
  MemoryFileSystem fs;
  fs.add(kFile, "{ not json");
  EXPECT_THAT(add_server_to_config(fs, kFile, "a", ordered_json{{"command", "x"}}).error().message,
              HasSubstr(std::string(kFile) + " is not valid JSON"));
  EXPECT_THAT(set_server_enabled_in_config(fs, kFile, "a", false).error().message,
              HasSubstr("is not valid JSON"));
  fs.add(kFile, R"({"mcpServers": []})");
  EXPECT_THAT(remove_server_from_config(fs, kFile, "a").error().message,
              HasSubstr("\"mcpServers\" in " + std::string(kFile) + " is not an object"));
  EXPECT_EQ(fs.writes(), 0u);
}

TEST(ConfigEdit, Remove_DeletesTheEntryAndItsListEntries_FalseWhenAbsent) {
  MemoryFileSystem fs;
  fs.add(kFile, R"({"mcpServers": {"fs": {"command": "x"}, "b": {"command": "y"}},
                    "disabledServers": ["fs"], "enabledServers": ["fs", "b"]})");
  ASSERT_EQ(remove_server_from_config(fs, kFile, "fs").value(), true);
  EXPECT_EQ(json::parse(*fs.content(kFile)),
            json::parse(R"({"mcpServers": {"b": {"command": "y"}}, "disabledServers": [],
                            "enabledServers": ["b"]})"));
  const std::size_t writes = fs.writes();
  EXPECT_EQ(remove_server_from_config(fs, kFile, "fs").value(), false);
  EXPECT_EQ(fs.writes(), writes);
  EXPECT_EQ(config_file_defines(fs, kFile, "b").value(), true);
  EXPECT_EQ(config_file_defines(fs, "/nowhere.json", "b").value(), false);
}

TEST(ConfigEdit, MakeEntry_WritesTheTypeOnlyWhenGiven) {
  EXPECT_EQ(make_server_entry({.name = "w", .url = "https://x.example/mcp"})->dump(),
            R"({"url":"https://x.example/mcp"})");
  EXPECT_EQ(
      make_server_entry({.name = "w",
                         .transport = "sse",
                         .url = "http://127.0.0.1:9/sse",
                         .headers = {"Authorization: Bearer ${TOKEN}", "X-A:b  "}})
          ->dump(),
      R"({"type":"sse","url":"http://127.0.0.1:9/sse","headers":{"Authorization":"Bearer ${TOKEN}","X-A":"b"}})");
  EXPECT_EQ(
      make_server_entry({.name = "s",
                         .transport = "stdio",
                         .command = "npx",
                         .args = {"-y", "p"},
                         .env = {"A=1", "B=x=y", "C="}})
          ->dump(),
      R"({"type":"stdio","command":"npx","args":["-y","p"],"env":{"A":"1","B":"x=y","C":""}})");
}

TEST(ConfigEdit, MakeEntry_SaysWhatIsWrong) {
  EXPECT_THAT(error_of({.name = "bad name", .url = "https://x.dev"}),
              HasSubstr("Server \"bad name\""));
  EXPECT_THAT(error_of({.name = "w"}), HasSubstr("give a URL (http/sse) or -- <command>"));
  EXPECT_THAT(error_of({.name = "w", .url = "https://x.dev", .command = "x"}),
              HasSubstr("not both"));
  EXPECT_THAT(error_of({.name = "w", .transport = "tcp", .url = "https://x.dev"}),
              HasSubstr("unknown transport \"tcp\" (stdio, http or sse)"));
  EXPECT_THAT(error_of({.name = "w", .transport = "stdio", .url = "https://x.dev"}),
              HasSubstr("--transport stdio runs a command"));
  EXPECT_THAT(error_of({.name = "w", .transport = "http", .command = "npx"}),
              HasSubstr("--transport http needs a URL, not a command"));
  EXPECT_THAT(error_of({.name = "w", .url = "ftp://x.dev"}),
              HasSubstr("is not an http:// or https:// URL"));
  EXPECT_THAT(error_of({.name = "w", .command = "https://x.dev/mcp"}),
              HasSubstr("looks like a URL"));
  EXPECT_THAT(error_of({.name = "w", .url = "https://x.dev", .env = {"A=1"}}),
              HasSubstr("-e sets the environment of a stdio server"));
  EXPECT_THAT(error_of({.name = "w", .command = "x", .headers = {"A: 1"}}),
              HasSubstr("-H sets a header of an http/sse server"));
  EXPECT_THAT(error_of({.name = "w", .command = "x", .env = {"NOEQUALS"}}),
              HasSubstr("-e \"NOEQUALS\" is not NAME=VALUE"));
  EXPECT_THAT(error_of({.name = "w", .command = "x", .env = {"1X=2"}}),
              HasSubstr("\"1X\" is not an environment variable name"));
  EXPECT_THAT(error_of({.name = "w", .command = "x", .env = {"A=1", "A=2"}}),
              HasSubstr("-e A is given twice"));
  EXPECT_THAT(error_of({.name = "w", .url = "https://x.dev", .headers = {"Bearer abc"}}),
              HasSubstr("-H needs 'Name: value'"));
  EXPECT_THAT(error_of({.name = "w", .url = "https://x.dev", .headers = {"Bad Name: 1"}}),
              HasSubstr("-H \"Bad Name\" is not an HTTP header name"));
  EXPECT_THAT(error_of({.name = "w", .url = "https://x.dev", .headers = {"A: 1\r\nB: 2"}}),
              HasSubstr("the value holds a line break"));
  EXPECT_THAT(error_of({.name = "w", .url = "https://x.dev", .headers = {"A: 1", "a: 2"}}),
              HasSubstr("-H a is given twice"));
}

TEST(ConfigEdit, ParseAddWords_ReadsTheOptionsOfMcprtAdd) {
  auto stdio =
      parse_add_words({"-e", "A=1", "fs", "--env=B=2", "--", "npx", "-y", "srv", "--port", "8"});
  ASSERT_TRUE(stdio.ok()) << stdio.error().message;
  EXPECT_EQ(stdio->name, "fs");
  EXPECT_EQ(stdio->command, "npx");
  EXPECT_EQ(stdio->args, (std::vector<std::string>{"-y", "srv", "--port", "8"}));
  EXPECT_EQ(stdio->env, (std::vector<std::string>{"A=1", "B=2"}));

  auto web =
      parse_add_words({"web", "https://x.dev/mcp", "-t", "sse", "-H", "A: 1", "--header", "B: 2"});
  ASSERT_TRUE(web.ok()) << web.error().message;
  EXPECT_EQ(web->url, "https://x.dev/mcp");
  EXPECT_EQ(web->transport, "sse");
  EXPECT_EQ(web->headers, (std::vector<std::string>{"A: 1", "B: 2"}));

  auto codex = parse_add_words({"web", "--url", "https://x.dev/mcp"});
  ASSERT_TRUE(codex.ok());
  EXPECT_EQ(codex->url, "https://x.dev/mcp");

  auto bare = parse_add_words({"fs", "node", "server.js"});  // as `claude mcp add` reads it
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->command, "node");
  EXPECT_EQ(bare->args, std::vector<std::string>{"server.js"});
}

TEST(ConfigEdit, ParseAddWords_SaysWhatIsWrong) {
  EXPECT_THAT(parse_add_words({}).error().message, HasSubstr("name is missing"));
  EXPECT_THAT(parse_add_words({"fs", "-e"}).error().message, HasSubstr("-e needs a value"));
  EXPECT_THAT(parse_add_words({"fs", "node", "--port", "8"}).error().message,
              HasSubstr("unknown option \"--port\" (a command's own options go after --"));
  EXPECT_THAT(parse_add_words({"fs", "--"}).error().message, HasSubstr("no command after --"));
  EXPECT_THAT(parse_add_words({"fs", "node", "--", "x"}).error().message,
              HasSubstr("give one target"));
}

}  // namespace
}  // namespace config_edit_test
}  // namespace mcprt
