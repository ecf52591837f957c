// parse_untrusted_json and the shallow envelope scan (core/src/jsonrpc/untrusted_json.hpp):
// the nesting limit is enforced before a DOM exists, errors say what and where without
// quoting the input, and an id can be recovered from a message that did not parse.

#include "jsonrpc/untrusted_json.hpp"

#include <gtest/gtest.h>

#include <string>

#include "framing/utf8.hpp"

namespace mcprt {
namespace untrusted_json_test {  // this file's own names in a unity batch
namespace {

using detail::JsonLimits;
using detail::parse_untrusted_json;
using detail::scan_message_envelope;

// `levels` arrays inside each other around `core`: nested(2, "1") == "[[1]]".
std::string nested(std::size_t levels, const std::string& core = "") {
  return std::string(levels, '[') + core + std::string(levels, ']');
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(UntrustedJson, AcceptsNestingExactlyAtTheDefaultLimit) {
  auto r = parse_untrusted_json(nested(128, "7"));
  ASSERT_TRUE(r.ok()) << r.error();
  const json* v = &r.value();
  for (int i = 0; i < 128; ++i) {
    ASSERT_TRUE(v->is_array());
    v = &(*v)[0];
  }
  EXPECT_EQ(*v, 7);
}

TEST(UntrustedJson, RejectsOneLevelPastTheLimitWithTheOffsetOfTheOpeningBracket) {
  auto r = parse_untrusted_json(nested(129));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::protocol);
  EXPECT_EQ(r.error().message, "JSON nesting deeper than 128 levels at byte 128");
  EXPECT_EQ(r.error().data["reason"], detail::kJsonTooDeep);
  EXPECT_EQ(r.error().data["byte_offset"], 128);
}

TEST(UntrustedJson, ObjectsAndArraysCountAlike) {
  // {"a":[{"a":[ ... ]}]} alternating: 128 levels accepted, 129 not.
  auto build = [](std::size_t levels) {
    std::string open, close;
    for (std::size_t i = 0; i < levels; ++i) {
      if (i % 2 == 0) {
        open += "{\"a\":";
        close = "}" + close;
      } else {
        open += "[";
        close = "]" + close;
      }
    }
    return open + "0" + close;
  };
  EXPECT_TRUE(parse_untrusted_json(build(128)).ok());
  auto r = parse_untrusted_json(build(129));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "nesting deeper than 128 levels")) << r.error();
}

TEST(UntrustedJson, BracketsInsideStringsAreNotCounted) {
  // At the limit, with strings full of brackets, escaped quotes and escaped backslashes
  // (a pre-scan that lost track of where a string ends would count them).
  const std::string tricky = R"("[[[[{{{{\"[[[[\\",)" R"("\\\"]]]]{{[[",)" R"("\\")";
  const std::string text = nested(127, "[" + tricky + ",\"" + std::string(500, '[') + "\"]");
  auto r = parse_untrusted_json(text);
  ASSERT_TRUE(r.ok()) << r.error();
  // The same strings one level deeper are rejected: brackets outside strings still count.
  EXPECT_FALSE(parse_untrusted_json("[" + text + "]").ok());
}

TEST(UntrustedJson, AStringEndingInAnEscapedBackslashEndsThere) {
  // "a\\" is a complete string; the brackets after it are structure and count.
  const std::string text = "[\"a\\\\\"," + nested(128) + "]";
  auto r = parse_untrusted_json(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().data["byte_offset"], 7 + 127);
}

TEST(UntrustedJson, A66kDeepLineIsRejectedWithoutBuildingIt) {
  // The measured crash: 130 KB of nested arrays. Rejected at the first bracket past the
  // limit, before nlohmann builds (or destroys, or copies) anything.
  const std::string text = nested(66000);
  auto r = parse_untrusted_json(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().data["byte_offset"], 128);
}

TEST(UntrustedJson, HonoursAnotherLimit) {
  EXPECT_TRUE(parse_untrusted_json("{\"a\":[1]}", JsonLimits{2}).ok());
  auto r = parse_untrusted_json("{\"a\":[[1]]}", JsonLimits{2});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "JSON nesting deeper than 2 levels at byte 6");
  // Scalars are depth 0.
  EXPECT_TRUE(parse_untrusted_json("\"[[[\"", JsonLimits{0}).ok());
}

TEST(UntrustedJson, InvalidUtf8InAStringNamesItsByte) {
  //                        0123456 7 8
  const std::string text = "{\"a\":\"ab\xFF\"}";
  auto r = parse_untrusted_json(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "invalid UTF-8 at byte 8");
  EXPECT_EQ(r.error().data["reason"], detail::kJsonInvalidUtf8);
  EXPECT_EQ(r.error().data["byte_offset"], 8);
}

TEST(UntrustedJson, SyntaxErrorSaysWhereAndWhat) {
  auto r = parse_untrusted_json("{\"a\":1,}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "not JSON at byte 7: syntax error while parsing object key - unexpected '}'; "
            "expected string literal");
  EXPECT_EQ(r.error().data["reason"], detail::kJsonSyntax);
  EXPECT_EQ(r.error().data["byte_offset"], 7);
}

TEST(UntrustedJson, SyntaxErrorNeverQuotesTheInput) {
  // nlohmann's message ends in "last read: '<the token so far>'": server bytes, dropped.
  auto r = parse_untrusted_json("{\"a\":\"secret-token-123\x01\"}");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "control character U+0001")) << r.error();
  EXPECT_FALSE(contains(r.error().message, "secret")) << r.error();

  auto raw = parse_untrusted_json("\x01\x02 binary \xFF\xFE noise");
  ASSERT_FALSE(raw.ok());
  EXPECT_FALSE(contains(raw.error().message, "binary")) << raw.error();
  EXPECT_TRUE(detail::is_valid_utf8(raw.error().message));
}

TEST(UntrustedJson, EmptyAndTruncatedTextAreErrorsNotCrashes) {
  for (const char* text : {"", "   ", "{", "[1,", "{\"a\":\"unterminated", "\"\\"}) {
    auto r = parse_untrusted_json(text);
    EXPECT_FALSE(r.ok()) << text;
  }
}

TEST(ShallowScan, FindsTheIdAfterADeepMember) {
  const std::string text = "{\"jsonrpc\":\"2.0\",\"result\":" + nested(66000) + ",\"id\":42}";
  auto scan = scan_message_envelope(text);
  EXPECT_EQ(scan.id, 42);
  EXPECT_FALSE(scan.has_method);
}

TEST(ShallowScan, FindsAStringIdBeforeInvalidUtf8AndIgnoresNestedIds) {
  auto scan = scan_message_envelope(
      "{\"result\":{\"id\":1,\"x\":[{\"id\":2}]},\"id\":\"req-7\",\"text\":\"\xFF\"}");
  EXPECT_EQ(scan.id, "req-7");
}

TEST(ShallowScan, NoticesAMethodSoAServerRequestIsNotTakenForAnAnswer) {
  auto scan = scan_message_envelope("{\"id\":3,\"method\":\"roots/list\",\"params\":{\"\xFF\":1}}");
  EXPECT_EQ(scan.id, 3);
  EXPECT_TRUE(scan.has_method);
}

TEST(ShallowScan, KeepsTheFirstIdAndOnlyUsableOnes) {
  EXPECT_EQ(scan_message_envelope("{\"id\":1,\"id\":2}").id, 1);
  EXPECT_TRUE(scan_message_envelope("{\"id\":\"a\\\"b\"}").id.is_null());  // escapes: unused
  EXPECT_TRUE(scan_message_envelope("{\"id\":\"\xFF\"}").id.is_null());     // not UTF-8
  EXPECT_TRUE(scan_message_envelope("{\"id\":{\"x\":1}}").id.is_null());
  EXPECT_TRUE(scan_message_envelope("{\"id\":true}").id.is_null());
  EXPECT_EQ(scan_message_envelope("  {  \"id\" : 5 }").id, 5);
  EXPECT_EQ(scan_message_envelope("{\"id\":-7.5}").id, -7.5);
  EXPECT_EQ(scan_message_envelope("{\"id\":18446744073709551615}").id, 18446744073709551615u);
  // Numbers that would be echoed as other text: a 21-digit integer, an exponent.
  EXPECT_TRUE(scan_message_envelope("{\"id\":128446744073709551615}").id.is_null());
  EXPECT_TRUE(scan_message_envelope("{\"id\":1E2}").id.is_null());
}

TEST(ShallowScan, FindsNothingInWhatIsNotAnObject) {
  for (const char* text : {"", "[{\"id\":1}]", "\"id\"", "{\"id\"", "{\"id\":", "{id:1}", "42"}) {
    auto scan = scan_message_envelope(text);
    EXPECT_TRUE(scan.id.is_null()) << text;
    EXPECT_FALSE(scan.has_method) << text;
  }
}

}  // namespace
}  // namespace untrusted_json_test
}  // namespace mcprt
