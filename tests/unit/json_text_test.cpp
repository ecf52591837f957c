// parse_json (core/src/jsonrpc/json_text.cpp), mcprt's own JSON parser: it must build the
// DOM nlohmann's strict parser builds (value types included), accept and refuse the same
// texts, and say what and where as nlohmann does (its words, without the quoted input).
// nlohmann's parser is the oracle here, on fixed cases and on a few thousand mutations of
// a realistic message; tests/fuzz/fuzz_json_text keeps comparing them on anything.

#include "mcprt/json_text.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mcprt/testing/json_oracle.hpp"

namespace mcprt {
namespace json_text_test {  // this file's own names in a unity batch
namespace {

::testing::AssertionResult agrees_with_nlohmann(const std::string& text, bool comments) {
  const std::string difference = testing::json_parse_difference(text, comments);
  if (difference.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << difference;
}

TEST(ParseJson, NumbersHaveNlohmannsTypes) {
  EXPECT_EQ(parse_json("7").type(), json::value_t::number_unsigned);
  EXPECT_EQ(parse_json("-7").type(), json::value_t::number_integer);
  EXPECT_EQ(parse_json("-0").type(), json::value_t::number_integer);
  EXPECT_EQ(parse_json("7.0").type(), json::value_t::number_float);
  EXPECT_EQ(parse_json("7e0").type(), json::value_t::number_float);
  EXPECT_EQ(parse_json("18446744073709551615").get<std::uint64_t>(), UINT64_MAX);
  EXPECT_EQ(parse_json("-9223372036854775808").get<std::int64_t>(), INT64_MIN);
  // Integers that fit neither become doubles, as in nlohmann.
  EXPECT_EQ(parse_json("18446744073709551616").type(), json::value_t::number_float);
  EXPECT_EQ(parse_json("-9223372036854775809").type(), json::value_t::number_float);
  EXPECT_DOUBLE_EQ(parse_json("0.1e1").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(parse_json("-2.5E-3").get<double>(), -0.0025);
}

TEST(ParseJson, StringsDecodeEscapesAndKeepUtf8) {
  EXPECT_EQ(parse_json(R"("a\"b\\c\/d\b\f\n\r\t")").get<std::string>(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(parse_json(R"("caf\u00e9 \ud83d\ude00")").get<std::string>(), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(parse_json("\"caf\xC3\xA9\"").get<std::string>(), "caf\xC3\xA9");
  EXPECT_EQ(parse_json(R"("\u0000")").get<std::string>(), std::string(1, '\0'));
}

TEST(ParseJson, ObjectsKeepTheLastOfDuplicateKeysAndAByteOrderMarkIsSkipped) {
  EXPECT_EQ(parse_json(R"({"a":1,"b":[2],"a":{"c":3}})"), json::parse(R"({"a":{"c":3},"b":[2]})"));
  EXPECT_EQ(parse_json("\xEF\xBB\xBF[1]"), json::array({1}));
}

TEST(ParseJson, CommentsOnlyWhenAllowed) {
  const std::string text = "/* head */ {\"a\": 1 // one\n, \"b\": [2 /* two */]}";
  EXPECT_TRUE(parse_json(text).is_discarded());
  EXPECT_EQ(parse_json(text, /*allow_comments=*/true), json::parse(R"({"a":1,"b":[2]})"));
}

TEST(ParseJson, MaxDepthStopsAtTheBracketThatOpensTheLevelPastIt) {
  // Two levels fit (an empty container counts as its level too).
  EXPECT_EQ(parse_json(R"({"a":[]})", false, nullptr, 2), json::parse(R"({"a":[]})"));
  JsonSyntaxError e;
  // The third level opens at byte 9, and the text breaks later.
  EXPECT_TRUE(parse_json(R"({"a":[1, {"b":1}, oops)", false, &e, 2).is_discarded());
  EXPECT_TRUE(e.too_deep);
  EXPECT_EQ(e.position, 9u);
  EXPECT_TRUE(e.message.empty());
  // A text broken before its too-deep point is a syntax error.
  e = {};
  EXPECT_TRUE(parse_json(R"({"a":[1 2, [[[]]]]})", false, &e, 2).is_discarded());
  EXPECT_FALSE(e.too_deep);
  EXPECT_FALSE(e.message.empty());
  // 0 refuses any container; without a bound nothing is too deep.
  EXPECT_TRUE(parse_json("[]", false, &e, 0).is_discarded());
  EXPECT_TRUE(e.too_deep);
  EXPECT_EQ(parse_json(std::string(300, '[') + std::string(300, ']')).is_array(), true);
}

TEST(ParseJson, ErrorsSayWhatAndWhereWithoutQuotingTheInput) {
  JsonSyntaxError e;
  EXPECT_TRUE(parse_json("{\"a\":1,}", false, &e).is_discarded());
  EXPECT_EQ(e.message, "syntax error while parsing object key - unexpected '}'; expected string literal");
  EXPECT_EQ(e.position, 8u);  // the '}' is the 8th byte read

  EXPECT_TRUE(parse_json("{\"token\":\"secret-123\x01\"}", false, &e).is_discarded());
  EXPECT_EQ(e.message,
            "syntax error while parsing value - invalid string: control character U+0001 (SOH) "
            "must be escaped to \\u0001");
  EXPECT_EQ(e.message.find("secret"), std::string::npos);

  EXPECT_TRUE(parse_json("[1, 2", false, &e).is_discarded());
  EXPECT_EQ(e.message, "syntax error while parsing array - unexpected end of input; expected ']'");
  EXPECT_EQ(e.position, 6u);  // past the end, as nlohmann counts
}

TEST(ParseJson, DeepNestingCostsHeapNotStack) {
  const std::size_t levels = 200000;
  const json v = parse_json(std::string(levels, '[') + std::string(levels, ']'));
  ASSERT_TRUE(v.is_array());
  EXPECT_EQ(v.size(), 1u);
}

// The parser keeps its first 32 open containers without the heap: documents that cross
// that depth, close back below it and open again build the same value nlohmann builds.
TEST(ParseJson, ContainersAcrossTheInlineStackDepthNestAsNlohmannBuildsThem) {
  for (std::size_t depth : {30u, 31u, 32u, 33u, 34u, 40u, 70u}) {
    std::string open, close;
    for (std::size_t i = 0; i < depth; ++i) {
      open += i % 2 == 0 ? "{\"k\":[" : "[{\"a\":";
      close.insert(0, i % 2 == 0 ? "],\"n\":" + std::to_string(i) + "}" : "},\"s" + std::to_string(i) + "\"]");
    }
    // The same deep branch twice in one document, the second after the first closed.
    const std::string text = "[" + open + "0" + close + "," + open + "1" + close + "]";
    const json expected = json::parse(text);
    EXPECT_EQ(parse_json(text), expected) << "depth " << depth;
  }
}

TEST(ParseJson, AgreesWithNlohmannOnEdgeCases) {
  const std::vector<std::string> cases = {
      "", " ", "1", "-", "01", "1.", "1.5", "1e", "1e+", "1E+5", "-1e-5", "1e400", "-1e400",
      "1e-400", "true", "tru", "truex", "false", "nul", "null", "\"a", "\"\\ud83d\"",
      "\"\\ude00\"", "\"\\ud83dx\"", "\"\\ud83d\\u0041\"", "\"\\u00\"", "\"\\u00g0\"", "\"\\x\"",
      "\"\\", "\"a\x1f\"", "\"\t\"", "\"\xC3\"", "\"\xC3\xA9\"", "\"\xE0\x80\x80\"",
      "\"\xE0\xA0\x80\"", "\"\xED\xA0\x80\"", "\"\xED\x9F\xBF\"", "\"\xF0\x8F\xBF\xBF\"",
      "\"\xF4\x90\x80\x80\"", "\"\xF4\x8F\xBF\xBF\"", "\"\xF0\x9F\x98\"", "\"\xFF\"", "\"\x80\"",
      "\"\xC0\xAF\"", "[]", "[1,]", "[,1]", "[1 2]", "[1]]", "[1] x", "[-]", "[\"a\"\"b\"]",
      "{}", "{", "{\"a\"", "{\"a\":", "{\"a\":}", "{\"a\" 1}", "{1:2}", "{\"a\":1", "{\"a\":[}",
      "{\"a\":1 \"b\":2}", "\xEF\xBB[1]", "\xEF[1]", "\xEF\xBB\xBF", "/", "/x", "// c\n1",
      "/* c */ [1]", "[1 /* ", "[1 /* x */]", "1 //", "[1 // x\n]", "{\"\":0}", "[1.0,2.50,-0.0]",
      " \t\r\n[ 1 , { \"a\" : null } ] \n", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\\u0000\""};
  for (const std::string& text : cases) {
    EXPECT_TRUE(agrees_with_nlohmann(text, false));
    EXPECT_TRUE(agrees_with_nlohmann(text, true));
  }
}

TEST(ParseJson, AgreesWithNlohmannOnMutatedMessages) {
  const std::string message =
      "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{\"tools\":[{\"name\":\"caf\\u00e9\","
      "\"description\":\"Reads \xC3\xA9 \\\"quoted\\\" text\\n\",\"inputSchema\":{\"type\":"
      "\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":-1,\"maximum\":1e3},"
      "\"x\":{\"enum\":[true,false,null,0.5,18446744073709551615]}}}}],\"nextCursor\":\"\"}}";
  ASSERT_TRUE(agrees_with_nlohmann(message, false));
  const std::string alphabet = "{}[]\":,\\/*0123456789eE+-.tfnulrsa \n\t\x01\x80\xC3\xA9\xFF\xED\xF0\xEF";
  std::mt19937 random(20261202);
  for (int i = 0; i < 10000; ++i) {
    std::string text = message;
    for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
      const std::size_t at = random() % text.size();
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: text.erase(at, 1); break;
      }
    }
    ASSERT_TRUE(agrees_with_nlohmann(text, random() % 2 == 0));
  }
}

}  // namespace
}  // namespace json_text_test
}  // namespace mcprt
