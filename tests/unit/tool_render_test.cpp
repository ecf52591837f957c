#include <gtest/gtest.h>

#include <string>

#include "mcprt/tools.hpp"

namespace mcprt {
namespace tool_render_test {  // this file's own names in a unity batch
namespace {

json text_block(const std::string& t) { return {{"type", "text"}, {"text", t}}; }

TEST(ToolRender, TextBlocksAreJoinedWithNewlines) {
  json r = {{"content", json::array({text_block("one"), text_block("two")})}};
  ToolResult out = render_tool_result(r);
  EXPECT_EQ(out.text, "one\ntwo");
  EXPECT_EQ(out.content, r["content"]);
  EXPECT_FALSE(out.is_error);
  EXPECT_FALSE(out.truncated);
  EXPECT_TRUE(out.structured_content.is_null());
}

TEST(ToolRender, ImageAndAudioAreNotedAndKeptInContent) {
  json img = {{"type", "image"}, {"data", "iVBORw0KGgo="}, {"mimeType", "image/png"}};
  json aud = {{"type", "audio"}, {"data", "UklGRg=="}, {"mimeType", "audio/wav"}};
  json r = {{"content", json::array({text_block("see:"), img, aud})}};
  ToolResult out = render_tool_result(r);
  EXPECT_EQ(out.text, "see:\n[Image: image/png]\n[Audio: audio/wav]");
  ASSERT_EQ(out.content.size(), 3u);
  EXPECT_EQ(out.content[1], img);  // the data stays for hosts that show images
  EXPECT_EQ(out.content[2], aud);
}

TEST(ToolRender, ImageWithoutMimeTypeSaysSo) {
  json r = {{"content", json::array({{{"type", "image"}, {"data", "x"}}})}};
  EXPECT_EQ(render_tool_result(r).text, "[Image: unknown type]");
}

TEST(ToolRender, EmbeddedTextResourceShowsUriThenText) {
  json res = {{"type", "resource"},
              {"resource", {{"uri", "file:///a.txt"}, {"mimeType", "text/plain"}, {"text", "hello"}}}};
  ToolResult out = render_tool_result({{"content", json::array({res})}});
  EXPECT_EQ(out.text, "[Resource: file:///a.txt]\nhello");
}

TEST(ToolRender, EmbeddedBlobResourceShowsUriOnly) {
  json res = {{"type", "resource"},
              {"resource", {{"uri", "file:///a.bin"}, {"mimeType", "application/zip"}, {"blob", "UEs="}}}};
  ToolResult out = render_tool_result({{"content", json::array({res})}});
  EXPECT_EQ(out.text.rfind("[Resource: file:///a.bin]", 0), 0u);
  EXPECT_EQ(out.text.find("UEs="), std::string::npos);  // never base64 into the text
}

TEST(ToolRender, ResourceLinkShowsUriAndName) {
  json link = {{"type", "resource_link"}, {"uri", "https://x/doc"}, {"name", "Doc"}};
  EXPECT_EQ(render_tool_result({{"content", json::array({link})}}).text,
            "[Resource: https://x/doc] Doc");
  json bare = {{"type", "resource_link"}, {"uri", "https://x/doc"}};
  EXPECT_EQ(render_tool_result({{"content", json::array({bare})}}).text,
            "[Resource: https://x/doc]");
}

TEST(ToolRender, IsErrorIsKept) {
  json r = {{"content", json::array({text_block("boom")})}, {"isError", true}};
  ToolResult out = render_tool_result(r);
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.text, "boom");
}

TEST(ToolRender, NonBooleanIsErrorIsIgnored) {
  json r = {{"content", json::array({text_block("x")})}, {"isError", "yes"}};
  EXPECT_FALSE(render_tool_result(r).is_error);
}

TEST(ToolRender, StructuredContentIsKeptAlongsideText) {
  json sc = {{"temperature", 21.5}};
  json r = {{"content", json::array({text_block("21.5 C")})}, {"structuredContent", sc}};
  ToolResult out = render_tool_result(r);
  EXPECT_EQ(out.structured_content, sc);
  EXPECT_EQ(out.text, "21.5 C");
}

TEST(ToolRender, StructuredContentBecomesTheTextWhenThereIsNoTextBlock) {
  json sc = {{"a", 1}, {"b", {1, 2}}};
  ToolResult out = render_tool_result({{"content", json::array()}, {"structuredContent", sc}});
  EXPECT_EQ(out.text, sc.dump());
  EXPECT_EQ(out.structured_content, sc);
  ToolResult no_content = render_tool_result({{"structuredContent", sc}});
  EXPECT_EQ(no_content.text, sc.dump());
  EXPECT_FALSE(no_content.is_error);
}

TEST(ToolRender, EmptyResultIsEmptyText) {
  ToolResult out = render_tool_result(json::object());
  EXPECT_EQ(out.text, "");
  EXPECT_FALSE(out.is_error);
  EXPECT_TRUE(out.content.is_array());
}

TEST(ToolRender, NonObjectResultIsAnErrorResult) {
  for (const json& bad : {json(nullptr), json(42), json("text"), json::array()}) {
    ToolResult out = render_tool_result(bad);
    EXPECT_TRUE(out.is_error) << bad;
    EXPECT_NE(out.text.find("malformed tool result"), std::string::npos) << bad;
  }
}

TEST(ToolRender, ContentThatIsNotAnArrayIsAnErrorResult) {
  ToolResult out = render_tool_result({{"content", {{"type", "text"}, {"text", "x"}}}});
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(out.text.find("\"content\" is not an array"), std::string::npos);
}

TEST(ToolRender, OddBlocksAreNotedWithoutFailingTheResult) {
  json r = {{"content", json::array({42, {{"text", "no type"}}, {{"type", "video"}},
                                     {{"type", "text"}}, text_block("fine")})}};
  ToolResult out = render_tool_result(r);
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.text,
            "[Invalid content block: not an object]\n[Invalid content block: no type]\n"
            "[Unsupported content block: video]\n\nfine");
}

TEST(ToolRender, TextOverTheCapIsTruncatedWithAMarker) {
  json r = {{"content", json::array({text_block(std::string(1000, 'a'))})}};
  ToolResult out = render_tool_result(r, 100);
  EXPECT_TRUE(out.truncated);
  EXPECT_EQ(out.text, std::string(100, 'a') + "\n\xE2\x80\xA6[truncated 900 bytes]");
  EXPECT_EQ(out.content, r["content"]);  // content blocks are not cut
}

TEST(ToolRender, TextAtTheCapIsNotTruncated) {
  json r = {{"content", json::array({text_block(std::string(100, 'a'))})}};
  ToolResult out = render_tool_result(r, 100);
  EXPECT_FALSE(out.truncated);
  EXPECT_EQ(out.text, std::string(100, 'a'));
}

TEST(ToolRender, TruncationNeverSplitsAUtf8Sequence) {
  // "€" is 3 bytes; a cap of 4 lands inside the second one.
  std::string euros = "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC";
  ToolResult out = render_tool_result({{"content", json::array({text_block(euros)})}}, 4);
  EXPECT_TRUE(out.truncated);
  EXPECT_EQ(out.text, "\xE2\x82\xAC\n\xE2\x80\xA6[truncated 6 bytes]");
}

TEST(ToolRender, DefaultCapIsOneMebibyte) {
  std::string big(kDefaultMaxResultBytes + 10, 'z');
  ToolResult out = render_tool_result({{"content", json::array({text_block(big)})}});
  EXPECT_TRUE(out.truncated);
  EXPECT_NE(out.text.find("[truncated 10 bytes]"), std::string::npos);
}

TEST(ToolRender, ZeroCapMeansNoCap) {
  std::string big(5000, 'z');
  ToolResult out = render_tool_result({{"content", json::array({text_block(big)})}}, 0);
  EXPECT_FALSE(out.truncated);
  EXPECT_EQ(out.text, big);
}

TEST(ToolRender, McpErrorResultHasPrefixAndIsError) {
  ToolResult out = mcp_error_result(Error::make(ErrorCode::timeout, "Server \"a\": timed out"));
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.text, "MCP error: Server \"a\": timed out");
  ASSERT_EQ(out.content.size(), 1u);
  EXPECT_EQ(out.content[0], json({{"type", "text"}, {"text", out.text}}));
}

}  // namespace
}  // namespace tool_render_test
}  // namespace mcprt
