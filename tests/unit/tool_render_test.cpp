#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "framing/utf8.hpp"
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

// ---- output caps (SPEC §16): head and tail around one marker -------------------------------

const std::string kEllipsis = "\xE2\x80\xA6";

std::string lines(int first, int last) {  // "L<nn>:abcde\n" for each, 10 bytes a line
  std::string out;
  for (int i = first; i <= last; ++i) {
    out += "L" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ":abcde\n";
  }
  return out;
}

TEST(ToolRender, TextOverTheCapKeepsHeadAndTailAroundAMarker) {
  json r = {{"content", json::array({text_block(std::string(500, 'h') + std::string(500, 't'))})}};
  ToolResult out = render_tool_result(r, 100);
  EXPECT_TRUE(out.truncated);
  EXPECT_EQ(out.full_bytes, 1000u);
  EXPECT_FALSE(out.full_text_path.has_value());
  // The marker sized for "cut 1,000 of 1,000" is 31 bytes: 69 are left, 35 for the head
  // and 34 for the tail.
  EXPECT_EQ(out.text, std::string(35, 'h') + "\n" + kEllipsis + "[cut 931 of 1,000 bytes]\n" +
                          std::string(34, 't'));
  EXPECT_LE(out.text.size(), 100u);
  EXPECT_EQ(out.content, r["content"]);  // content blocks are not cut
}

TEST(ToolRender, TextAtTheCapIsNotTruncated) {
  json r = {{"content", json::array({text_block(std::string(100, 'a'))})}};
  ToolResult out = render_tool_result(r, 100);
  EXPECT_FALSE(out.truncated);
  EXPECT_EQ(out.full_bytes, 0u);
  EXPECT_EQ(out.text, std::string(100, 'a'));
}

TEST(ToolRender, CutNeverSplitsAUtf8SequenceInTheHeadOrTheTail) {
  std::string euros;
  for (int i = 0; i < 100; ++i) euros += "\xE2\x82\xAC";  // "€", 3 bytes each
  // 60 - 27 (marker) = 33: the head's 17 bytes end inside the 6th "€" (15 kept), the tail's
  // 16 start inside one (the next whole one starts at byte 285).
  const std::string out = cut_result_text(euros, 60);
  EXPECT_EQ(
      out, euros.substr(0, 15) + "\n" + kEllipsis + "[cut 270 of 300 bytes]\n" + euros.substr(285));
  EXPECT_TRUE(detail::is_valid_utf8(out));
}

TEST(ToolRender, CutPrefersLineBoundariesNearTheCut) {
  const std::string text = lines(0, 99);  // 1,000 bytes
  // Budget 200 - 31 = 169: the head's 85 bytes back up to the newline at 79 (the last
  // tenth), the tail's 84 start after the newline at 919 (its first tenth).
  const std::string out = cut_result_text(text, 200);
  EXPECT_EQ(out, lines(0, 7).substr(0, 79) + "\n" + kEllipsis + "[cut 841 of 1,000 bytes]\n" +
                     lines(92, 99));
}

TEST(ToolRender, CutIgnoresALineBoundaryFarFromTheCut) {
  const std::string text = "short\n" + std::string(994, 'x');
  // The head's 35 bytes have a newline at 5, far outside their last tenth: no backing up.
  const std::string out = cut_result_text(text, 100);
  EXPECT_EQ(out.substr(0, 36 + kEllipsis.size()),
            "short\n" + std::string(29, 'x') + "\n" + kEllipsis);
}

TEST(ToolRender, CutStaysWithinTheCapAndKeepsAPrefixAndASuffixAtEverySize) {
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "line " + std::to_string(i) + " \xC3\xA9t\xC3\xA9 \xF0\x9F\x99\x82 \n";
  ASSERT_EQ(text.size(), 790u);  // every cut count below stays under 1,000: no separator
  for (std::size_t cap = 80; cap < text.size(); cap += 7) {
    const std::string out = cut_result_text(text, cap, "/cache/results/f.txt");
    ASSERT_LE(out.size(), cap) << "cap " << cap;
    ASSERT_TRUE(detail::is_valid_utf8(out)) << "cap " << cap;
    const std::size_t at = out.find("\n" + kEllipsis + "[cut ");
    ASSERT_NE(at, std::string::npos) << "cap " << cap;
    const std::size_t end = out.find("]\n", at);
    ASSERT_NE(end, std::string::npos);
    const std::string head = out.substr(0, at);
    const std::string tail = out.substr(end + 2);
    EXPECT_EQ(text.compare(0, head.size(), head), 0) << "cap " << cap;
    EXPECT_EQ(text.compare(text.size() - tail.size(), tail.size(), tail), 0) << "cap " << cap;
    // The marker counts exactly what is missing, of the whole.
    EXPECT_EQ(out.substr(at, end + 2 - at),
              "\n" + kEllipsis + "[cut " + std::to_string(text.size() - head.size() - tail.size()) +
                  " of 790 bytes; the full result is in /cache/results/f.txt]\n")
        << "cap " << cap;
  }
}

TEST(ToolRender, ACapSmallerThanTheMarkerGivesTheMarkerOnly) {
  EXPECT_EQ(cut_result_text(std::string(100, 'x'), 10),
            "\n" + kEllipsis + "[cut 100 of 100 bytes]\n");
}

TEST(ToolRender, DefaultCapIsOneMebibyte) {
  std::string big(kDefaultMaxResultBytes + 10, 'z');
  ToolResult out = render_tool_result({{"content", json::array({text_block(big)})}});
  EXPECT_TRUE(out.truncated);
  EXPECT_EQ(out.full_bytes, big.size());
  EXPECT_LE(out.text.size(), kDefaultMaxResultBytes);
  EXPECT_NE(out.text.find(" of 1,048,586 bytes]"), std::string::npos);
}

TEST(ToolRender, ZeroCapMeansNoCap) {
  std::string big(5000, 'z');
  ToolResult out = render_tool_result({{"content", json::array({text_block(big)})}}, 0);
  EXPECT_FALSE(out.truncated);
  EXPECT_EQ(out.text, big);
  EXPECT_EQ(cut_result_text(big, 0), big);
}

TEST(ToolRender, SpillGetsTheFullTextAndTheMarkerNamesWhereItWent) {
  const std::string full = std::string(3000, 'a') + "MIDDLE" + std::string(3000, 'b');
  std::string spilled;
  int spills = 0;
  ToolResult out = render_tool_result({{"content", json::array({text_block(full)})}}, 300,
                                      [&](std::string_view text) -> std::optional<std::string> {
                                        ++spills;
                                        spilled = std::string(text);
                                        return "/cache/results/one.txt";
                                      });
  EXPECT_EQ(spills, 1);
  EXPECT_EQ(spilled, full);
  EXPECT_TRUE(out.truncated);
  EXPECT_EQ(out.full_bytes, full.size());
  EXPECT_EQ(out.full_text_path, std::optional<std::string>("/cache/results/one.txt"));
  EXPECT_NE(out.text.find("[cut 5,7"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find(" of 6,006 bytes; the full result is in /cache/results/one.txt]\n"),
            std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.find("MIDDLE"), std::string::npos);
  EXPECT_LE(out.text.size(), 300u);
}

TEST(ToolRender, SpillIsNotAskedForTextWithinTheCap) {
  int spills = 0;
  auto spill = [&](std::string_view) -> std::optional<std::string> {
    ++spills;
    return "/never";
  };
  ToolResult at_cap = render_tool_result(
      {{"content", json::array({text_block(std::string(300, 'a'))})}}, 300, spill);
  ToolResult no_cap =
      render_tool_result({{"content", json::array({text_block(std::string(900, 'a'))})}}, 0, spill);
  EXPECT_EQ(spills, 0);
  EXPECT_FALSE(at_cap.truncated);
  EXPECT_FALSE(at_cap.full_text_path.has_value());
  EXPECT_FALSE(no_cap.truncated);
}

TEST(ToolRender, ASpillThatKeptNothingLeavesThePathOut) {
  for (std::optional<std::string> answer :
       {std::optional<std::string>(), std::optional<std::string>("")}) {
    ToolResult out =
        render_tool_result({{"content", json::array({text_block(std::string(1000, 'a'))})}}, 100,
                           [&](std::string_view) { return answer; });
    EXPECT_TRUE(out.truncated);
    EXPECT_FALSE(out.full_text_path.has_value());
    EXPECT_NE(out.text.find("[cut 931 of 1,000 bytes]\n"), std::string::npos) << out.text;
  }
}

// ---- the per-tool override: _meta["anthropic/maxResultSizeChars"] --------------------------

json with_meta(json value) {
  return {{"name", "t"}, {"_meta", {{"anthropic/maxResultSizeChars", std::move(value)}}}};
}

TEST(ToolResultCap, AMetaValueRaisesTheCapUpTo500000) {
  EXPECT_EQ(tool_result_cap(with_meta(200000), 100000), 200000u);
  EXPECT_EQ(tool_result_cap(with_meta(500000), 100000), 500000u);
  EXPECT_EQ(tool_result_cap(with_meta(500001), 100000), 500000u);
  EXPECT_EQ(tool_result_cap(
                json::parse(R"({"_meta":{"anthropic/maxResultSizeChars":18446744073709551615}})"),
                100000),
            500000u);
  // A signed integer (as a host builds it, not as the wire parses it) counts too.
  EXPECT_EQ(tool_result_cap(with_meta(static_cast<std::int64_t>(300000)), 1000), 300000u);
}

TEST(ToolResultCap, AMetaValueNeverLowersTheCap) {
  EXPECT_EQ(tool_result_cap(with_meta(50), 100000), 100000u);
  // The default cap (1 MiB) is already above what the override can reach.
  EXPECT_EQ(tool_result_cap(with_meta(500000), kDefaultMaxResultBytes), kDefaultMaxResultBytes);
  // No cap stays no cap.
  EXPECT_EQ(tool_result_cap(with_meta(500000), 0), 0u);
}

TEST(ToolResultCap, HostileMetaValuesAreIgnored) {
  const char* hostile[] = {
      R"({"_meta":{"anthropic/maxResultSizeChars":"400000"}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":-400000}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":0}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":250000.5}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":4e5}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":1e300}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":123456789012345678901234567890}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":true}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":null}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":[400000]}})",
      R"({"_meta":{"anthropic/maxResultSizeChars":{"value":400000}}})",
      R"({"_meta":{"maxResultSizeChars":400000}})",
      R"({"_meta":[400000]})",
      R"({"_meta":"anthropic/maxResultSizeChars"})",
      R"([{"_meta":{"anthropic/maxResultSizeChars":400000}}])",
      R"({})",
  };
  for (const char* text : hostile) {
    json def = json::parse(text, nullptr, false);
    ASSERT_FALSE(def.is_discarded()) << text;
    EXPECT_EQ(tool_result_cap(def, 1000), 1000u) << text;
  }
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
