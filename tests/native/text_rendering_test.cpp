// The renderings `/mcp` and the CLI share for resources and prompts (mcp_command.hpp,
// SPEC §15): the catalog table, resource contents, prompt messages, base64, and which
// prompt "server:name" means. Pure functions over server JSON, which is untrusted.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcprt/mcp_command.hpp"

namespace text_rendering_test {
namespace {

using json = nlohmann::json;
using mcprt::CatalogEntry;
using mcprt::CatalogKind;
using ::testing::HasSubstr;

CatalogEntry entry(const std::string& server, json definition, bool cached = false) {
  return CatalogEntry{server, mcprt::SharedJson(std::move(definition)), cached};
}

TEST(CatalogTable, ResourcesAlignInColumnsAndCachedEntriesSaySo) {
  const std::string out = mcprt::format_catalog(
      CatalogKind::resources,
      {entry("demo", {{"uri", "demo://a"}, {"name", "a"}, {"mimeType", "text/plain"}, {"description", "First"}}),
       entry("longer", {{"uri", "x://bb"}, {"name", "bb"}, {"description", "Second"}}, true)});
  EXPECT_EQ(out,
            "  demo    demo://a  a   text/plain  First\n"
            "  longer  x://bb    bb              Second (cached)\n");
}

TEST(CatalogTable, ServerTextKeepsItsFirstLineWithoutControlCharacters) {
  const std::string out = mcprt::format_catalog(
      CatalogKind::resources,
      {entry("s", {{"uri", "u"}, {"name", "n\x1b[31mred"}, {"description", "line one\nline two"}})});
  EXPECT_EQ(out, "  s  u  n [31mred    line one\n");
}

TEST(CatalogTable, PromptsShowRequiredAndOptionalArguments) {
  const std::string out = mcprt::format_catalog(
      CatalogKind::prompts,
      {entry("demo", {{"name", "greet"},
                      {"arguments", json::array({{{"name", "name"}, {"required", true}}, {{"name", "style"}}})},
                      {"description", "Greets"}})});
  EXPECT_EQ(out, "  demo  greet  <name> [style]  Greets\n");
}

TEST(CatalogTable, AnOverlongCellIsCutOnACharacterBoundary) {
  std::string description(118, 'x');
  description += "\xc3\xa9\xc3\xa9";  // two 2-byte characters across the 120-byte limit
  const std::string out = mcprt::format_catalog(
      CatalogKind::resources, {entry("s", {{"uri", "u"}, {"name", "n"}, {"description", description}})});
  EXPECT_THAT(out, HasSubstr(std::string(118, 'x') + "\xc3\xa9...\n"));
}

TEST(ResourceContents, TextAsIsAndBlobsAsTheirDecodedSize) {
  EXPECT_EQ(mcprt::format_resource_contents(json{{"contents", {{{"uri", "a"}, {"text", "hello"}}}}}), "hello\n");
  EXPECT_EQ(mcprt::format_resource_contents(
                json{{"contents", {{{"uri", "b"}, {"mimeType", "image/png"}, {"blob", "AAEC"}}}}}),
            "[binary image/png, 3 bytes]\n");
  EXPECT_EQ(mcprt::format_resource_contents(
                json{{"contents", {{{"uri", "a"}, {"text", "x\n"}}, {{"uri", "b"}, {"blob", "!!"}}}}}),
            "--- a\nx\n--- b\n[binary, not valid base64]\n");
  EXPECT_EQ(mcprt::format_resource_contents(json{{"contents", 3}}), "(no contents)\n");
}

TEST(PromptMessages, RoleThenIndentedTextImagesAndEmbeddedResources) {
  const json result{
      {"description", "D"},
      {"messages",
       {{{"role", "user"}, {"content", {{"type", "text"}, {"text", "a\nb"}}}},
        {{"role", "assistant"}, {"content", {{"type", "image"}, {"mimeType", "image/png"}, {"data", "AAAA"}}}},
        {{"role", "user"},
         {"content", {{"type", "resource"}, {"resource", {{"uri", "demo://x"}, {"text", "body\n"}}}}}},
        {{"role", "user"}, {"content", {{"type", "resource_link"}, {"uri", "demo://y"}}}},
        {{"role", "user"}, {"content", {{"type", "video"}}}}}}};
  EXPECT_EQ(mcprt::format_prompt_messages(result),
            "D\n\n"
            "user:\n  a\n  b\n"
            "assistant:\n  [image image/png, 3 bytes]\n"
            "user:\n  [resource demo://x]\n  body\n"
            "user:\n  [resource link demo://y]\n"
            "user:\n  [video]\n");
  EXPECT_EQ(mcprt::format_prompt_messages(json::object()), "(no messages)\n");
}

TEST(Base64, DecodesPaddedUnpaddedAndSpacedTextAndRefusesTheRest) {
  EXPECT_EQ(mcprt::decode_base64("aGk="), "hi");
  EXPECT_EQ(mcprt::decode_base64("aGk"), "hi");
  EXPECT_EQ(mcprt::decode_base64("aG\nk="), "hi");
  EXPECT_EQ(mcprt::decode_base64(""), "");
  EXPECT_FALSE(mcprt::decode_base64("a").has_value());
  EXPECT_FALSE(mcprt::decode_base64("aGk=x").has_value());
  EXPECT_FALSE(mcprt::decode_base64("a$==").has_value());
  EXPECT_FALSE(mcprt::decode_base64("aG===").has_value());
}

TEST(PromptName, ServerColonNameAndServerNamesThatHoldAColon) {
  const std::vector<CatalogEntry> prompts{entry("a", {{"name", "b:c"}}), entry("a:b", {{"name", "c"}}),
                                          entry("x", {{"name", "greet"}})};
  const std::vector<std::string> servers{"a", "a:b", "x"};
  auto both = mcprt::resolve_prompt_name("a:b:c", servers, prompts);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->server, "a");  // the first split that lists the prompt
  EXPECT_EQ(both->name, "b:c");
  auto listed = mcprt::resolve_prompt_name("a:b:c", servers, {entry("a:b", {{"name", "c"}})});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->server, "a:b");
  EXPECT_EQ(listed->name, "c");
  // A known server that does not list it yet: its server decides.
  auto unlisted = mcprt::resolve_prompt_name("x:other", servers, prompts);
  ASSERT_TRUE(unlisted.ok());
  EXPECT_EQ(unlisted->server, "x");
}

TEST(PromptName, ABareNameMustBelongToExactlyOneServer) {
  const std::vector<CatalogEntry> prompts{entry("one", {{"name", "p"}}), entry("two", {{"name", "p"}}),
                                          entry("two", {{"name", "q"}})};
  auto q = mcprt::resolve_prompt_name("q", {"one", "two"}, prompts);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->server, "two");
  auto p = mcprt::resolve_prompt_name("p", {"one", "two"}, prompts);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().message, HasSubstr("name one: one:p, two:p"));
  auto none = mcprt::resolve_prompt_name("zz", {"one", "two"}, prompts);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, HasSubstr("No server has a prompt \"zz\""));
}

TEST(PromptArguments, WordsBecomeAnObjectOfStrings) {
  auto args = mcprt::parse_prompt_arguments({"city=Paris", "note=a=b", "empty="});
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(*args, (json{{"city", "Paris"}, {"note", "a=b"}, {"empty", ""}}));
  EXPECT_FALSE(mcprt::parse_prompt_arguments({"city"}).ok());
  EXPECT_FALSE(mcprt::parse_prompt_arguments({"=x"}).ok());
}

}  // namespace
}  // namespace text_rendering_test
