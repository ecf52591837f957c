#include <gtest/gtest.h>

#include <set>

#include "mcprt/tool_names.hpp"

namespace mcprt {
namespace tool_names_test {  // this file's own names in a unity batch
namespace {

TEST(ToolNames, PlainNameKeepsAllowedCharactersAndDigits) {
  EXPECT_EQ(make_tool_name("github2", "create-issue_v3"), "mcp_github2_create-issue_v3");
}

TEST(ToolNames, DisallowedCharactersBecomeUnderscores) {
  EXPECT_EQ(make_tool_name("my.server", "get/file name"), "mcp_my_server_get_file_name");
}

TEST(ToolNames, UnicodeBytesBecomeUnderscores) {
  // "é" is two UTF-8 bytes; each becomes '_' so names stay ASCII.
  EXPECT_EQ(make_tool_name("s", "caf\xC3\xA9"), "mcp_s_caf__");
}

TEST(ToolNames, LongNameIsCappedWithStableHashSuffix) {
  std::string tool(100, 'a');
  std::string name = make_tool_name("srv", tool);
  ASSERT_EQ(name.size(), 64u);
  EXPECT_EQ(name.substr(0, 8), "mcp_srv_");
  EXPECT_EQ(name[55], '_');
  EXPECT_EQ(name, make_tool_name("srv", tool));  // stable
  EXPECT_NE(name, make_tool_name("srv", tool + "b"));
}

TEST(ToolNames, NameAtExactlyTheCapIsUnchanged) {
  std::string tool(64 - 8, 'x');  // "mcp_srv_" is 8 chars
  EXPECT_EQ(make_tool_name("srv", tool), "mcp_srv_" + tool);
}

TEST(ToolNames, CollisionFirstRawPairKeepsPlainName) {
  // "a.b" and "a_b" both sanitize to mcp_s_a_b; "a.b" sorts first ('.' < '_').
  std::vector<RawToolRef> refs{{"s", "a_b"}, {"s", "a.b"}};
  auto names = assign_tool_names(refs);
  EXPECT_EQ(names[1], "mcp_s_a_b");
  EXPECT_NE(names[0], "mcp_s_a_b");
  EXPECT_EQ(names[0].rfind("mcp_s_a_b_", 0), 0u);
  EXPECT_EQ(names[0].size(), std::string("mcp_s_a_b_").size() + 8);
}

TEST(ToolNames, CollisionAcrossServersIsResolvedIndependentOfInputOrder) {
  // server "x_y" tool "z" and server "x" tool "y_z" both give mcp_x_y_z.
  std::vector<RawToolRef> a{{"x_y", "z"}, {"x", "y_z"}};
  std::vector<RawToolRef> b{{"x", "y_z"}, {"x_y", "z"}};
  auto na = assign_tool_names(a);
  auto nb = assign_tool_names(b);
  EXPECT_EQ(na[0], nb[1]);
  EXPECT_EQ(na[1], nb[0]);
  EXPECT_EQ(na[1], "mcp_x_y_z");  // ("x","y_z") sorts before ("x_y","z")
  EXPECT_NE(na[0], na[1]);
}

TEST(ToolNames, DuplicateRawPairsStillGetDistinctNames) {
  std::vector<RawToolRef> refs{{"s", "t"}, {"s", "t"}, {"s", "t"}};
  auto names = assign_tool_names(refs);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 3u);
  for (auto& n : names) EXPECT_LE(n.size(), 64u);
}

TEST(ToolNames, LongCollidingNamesStayWithinCap) {
  std::string tool(80, 'q');
  std::vector<RawToolRef> refs{{"s", tool + ".x"}, {"s", tool + "_x"}};
  auto names = assign_tool_names(refs, 40);
  EXPECT_NE(names[0], names[1]);
  EXPECT_LE(names[0].size(), 40u);
  EXPECT_LE(names[1].size(), 40u);
}

TEST(ToolNames, HashSuffixIsPinned) {
  // Persisted in agents' transcripts and prompt caches: a change must be deliberate.
  std::string name = make_tool_name("srv", std::string(100, 'a'));
  EXPECT_EQ(name, "mcp_srv_" + std::string(47, 'a') + "_7ce085b5");
  auto names = assign_tool_names({{"s", "a.b"}, {"s", "a_b"}});
  EXPECT_EQ(names[1], "mcp_s_a_b_451de1fa");
}

TEST(ToolNames, EmptyServerAndToolStillGiveAName) {
  EXPECT_EQ(make_tool_name("", ""), "mcp__");
  EXPECT_EQ(make_tool_name("s", ""), "mcp_s_");
  auto names = assign_tool_names({{"", ""}, {"", ""}});
  EXPECT_NE(names[0], names[1]);
}

TEST(ToolNames, DigitsOnlyNamesAreKept) {
  EXPECT_EQ(make_tool_name("123", "456"), "mcp_123_456");
}

TEST(ToolNames, UnicodeServerNameCollidingWithAsciiNameGetsDistinctNames) {
  // "café" and "caf__" both sanitize to mcp_caf___t; bytes compare unsigned, so the ASCII
  // server ('_' = 0x5F < 0xC3) keeps the plain name.
  std::vector<RawToolRef> refs{{"caf\xC3\xA9", "t"}, {"caf__", "t"}};
  auto names = assign_tool_names(refs);
  EXPECT_EQ(names[1], "mcp_caf___t");
  EXPECT_NE(names[0], names[1]);
  EXPECT_EQ(names[0].rfind("mcp_caf___t_", 0), 0u);
}

TEST(ToolNames, UnicodeToolNamesDifferingOnlyInNonAsciiStayDistinct) {
  // "ü" and "ö" both become "__": same plain name, different hash suffixes.
  std::vector<RawToolRef> refs{{"s", "\xC3\xBC"}, {"s", "\xC3\xB6"}};
  auto names = assign_tool_names(refs);
  EXPECT_NE(names[0], names[1]);
  EXPECT_TRUE(names[0] == "mcp_s___" || names[1] == "mcp_s___");
}

TEST(ToolNames, PlainNameEqualToAnotherToolsSuffixedNameStillDistinct) {
  // ("s","a_b") is pushed to mcp_s_a_b_451de1fa by ("s","a.b"); a third tool literally
  // named "a_b_451de1fa" then finds its plain name taken and moves on.
  std::vector<RawToolRef> refs{{"s", "a.b"}, {"s", "a_b"}, {"s", "a_b_451de1fa"}};
  auto names = assign_tool_names(refs);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), 3u);
  EXPECT_EQ(names[0], "mcp_s_a_b");
  EXPECT_EQ(names[1], "mcp_s_a_b_451de1fa");
  EXPECT_NE(names[2], "mcp_s_a_b_451de1fa");
}

TEST(ToolNames, ManyCollisionsInOneServerAllDistinctAndCapped) {
  // Every punctuation variant of "a?b" sanitizes to mcp_s_a_b.
  std::vector<RawToolRef> refs;
  for (char c : std::string(".:/ @#$%^&*()+=!~")) refs.push_back({"s", std::string("a") + c + "b"});
  auto names = assign_tool_names(refs);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), refs.size());
  for (auto& n : names) EXPECT_LE(n.size(), 64u);
}

TEST(ToolNames, LongServerNameIsCappedToo) {
  std::string server(100, 's');
  std::string name = make_tool_name(server, "t");
  EXPECT_EQ(name.size(), 64u);
  EXPECT_NE(name, make_tool_name(server, "u"));  // the suffix tells the tools apart
}

TEST(Fnv1a64, KnownVectors) {
  EXPECT_EQ(fnv1a64(""), 14695981039346656037ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}

TEST(ToolNames, ServersForToolNameMatchesSanitizedPrefixesLongestFirst) {
  const std::vector<std::string> servers{"a", "a_b", "my.server", "other", "ab"};
  // "a" (tool b_c) and "a_b" (tool c) both fit; the longer prefix comes first.
  EXPECT_EQ(servers_for_tool_name("mcp_a_b_c", servers), (std::vector<std::string>{"a_b", "a"}));
  EXPECT_EQ(servers_for_tool_name("mcp_my_server_read", servers), (std::vector<std::string>{"my.server"}));
  EXPECT_EQ(servers_for_tool_name("mcp_ab_x", servers), (std::vector<std::string>{"ab"}));
  // A prefix alone names no tool; nothing fits a foreign name.
  EXPECT_TRUE(servers_for_tool_name("mcp_other_", servers).empty());
  EXPECT_TRUE(servers_for_tool_name("mcp_nobody_x", servers).empty());
  EXPECT_TRUE(servers_for_tool_name("echo", servers).empty());
}

TEST(ToolNames, ServersForToolNameFindsTheServerOfANameCutWithAHash) {
  const std::string server(70, 's');  // its prefix alone is longer than the cap
  const std::string name = make_tool_name(server, "read");
  ASSERT_EQ(name.size(), 64u);
  EXPECT_EQ(servers_for_tool_name(name, {"s", server, "t"}), (std::vector<std::string>{server}));
  const std::string long_tool = make_tool_name("srv", std::string(100, 'a'));
  EXPECT_EQ(servers_for_tool_name(long_tool, {"srv", "sr"}), (std::vector<std::string>{"srv"}));
}

}  // namespace
}  // namespace tool_names_test
}  // namespace mcprt
