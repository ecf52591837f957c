// Raw tool schemas (core/src/jsonrpc/raw_json.hpp, SPEC §12's tool path): the parser keeps
// each object at `result.tools[*].inputSchema` of a message as a placeholder holding the
// exact text the server sent, checked as parse_json checks it; nowhere else, and never a
// placeholder that restore_raw_tool_schemas would miss. Then the paths it travels: the
// RpcPeer (raw only for a request that asked), the tap (shown restored), ClientSession's
// list_tools / list_tools_raw, x_mcp_header_params and the tool cache's entry text.
// (SharedJson's lazy definitions, the tool set and the token estimate:
// raw_json_shared_test.cpp.)

#include "jsonrpc/raw_json.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/client.hpp"
#include "mcprt/json_text.hpp"
#include "mcprt/jsonrpc.hpp"
#include "mcprt/mcp_headers.hpp"
#include "mcprt/testing/captured.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/fake_server.hpp"
#include "mcprt/testing/json_oracle.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/tool_cache.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {
namespace raw_json_test {  // this file's own names in a unity batch
namespace {

using testing::Captured;
using testing::CapturingLogger;
using testing::FakeServer;
using testing::ManualExecutor;
using namespace std::string_literals;

// --- helpers ---------------------------------------------------------------------------

json parse_keeping_raw(std::string_view text, std::size_t max_depth = kNoJsonDepthLimit) {
  JsonSyntaxError error;
  json value = detail::parse_json_keeping_raw_tool_schemas(text, &error, max_depth);
  EXPECT_FALSE(value.is_discarded()) << "at " << error.position << ": " << error.message;
  return value;
}

json plain(std::string_view text) {
  json value = parse_json(text);
  EXPECT_FALSE(value.is_discarded()) << text;
  return value;
}

// JSON-pointer-like paths of every binary value in `value`, in document order.
void collect_binary(const json& value, const std::string& at, std::vector<std::string>& out) {
  if (value.is_binary()) {
    out.push_back(at);
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it)
      collect_binary(*it, at + "/" + it.key(), out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      collect_binary(value[i], at + "/" + std::to_string(i), out);
  }
}
std::vector<std::string> binary_paths(const json& value) {
  std::vector<std::string> out;
  collect_binary(value, "", out);
  return out;
}

// Where placeholders must stand in the text whose parse_json value is `value`: each object
// at result.tools[i].inputSchema, when result is an object and tools an array.
std::vector<std::string> expected_placeholder_paths(const json& value) {
  std::vector<std::string> out;
  if (!value.is_object()) return out;
  auto result = value.find("result");
  if (result == value.end() || !result->is_object()) return out;
  auto tools = result->find("tools");
  if (tools == result->end() || !tools->is_array()) return out;
  for (std::size_t i = 0; i < tools->size(); ++i) {
    const json& tool = (*tools)[i];
    if (!tool.is_object()) continue;
    auto schema = tool.find("inputSchema");
    if (schema != tool.end() && schema->is_object()) {
      out.push_back("/result/tools/" + std::to_string(i) + "/inputSchema");
    }
  }
  return out;
}

// The keeping-raw parse of `text` has placeholders exactly where they belong, each holding
// a slice of `text` that parses to the value parse_json put there, and restoring them gives
// parse_json's value, number types included.
::testing::AssertionResult agrees_with_parse_json(const std::string& text,
                                                  std::size_t* placeholders = nullptr) {
  JsonSyntaxError theirs_error, ours_error;
  const json theirs = parse_json(text, false, &theirs_error);
  json ours = detail::parse_json_keeping_raw_tool_schemas(text, &ours_error, kNoJsonDepthLimit);
  if (theirs.is_discarded() != ours.is_discarded()) {
    return ::testing::AssertionFailure()
           << "parse_json " << (theirs.is_discarded() ? "refuses" : "accepts") << ", keeping raw "
           << (ours.is_discarded() ? "refuses" : "accepts") << ": " << text;
  }
  if (theirs.is_discarded()) {
    if (theirs_error.position != ours_error.position ||
        theirs_error.message != ours_error.message ||
        theirs_error.too_deep != ours_error.too_deep) {
      return ::testing::AssertionFailure()
             << "parse_json at " << theirs_error.position << " \"" << theirs_error.message
             << "\", keeping raw at " << ours_error.position << " \"" << ours_error.message
             << "\": " << text;
    }
    return ::testing::AssertionSuccess();
  }
  const auto expected = expected_placeholder_paths(theirs);
  const auto found = binary_paths(ours);
  if (placeholders) *placeholders = found.size();
  if (found != expected) {
    ::testing::AssertionResult failure = ::testing::AssertionFailure();
    failure << "placeholders at [";
    for (const auto& p : found) failure << p << " ";
    failure << "], expected at [";
    for (const auto& p : expected) failure << p << " ";
    return failure << "]: " << text;
  }
  for (const auto& path : found) {
    const json& placeholder = ours.at(json::json_pointer(path));
    if (!detail::is_raw_json(placeholder)) {
      return ::testing::AssertionFailure() << "a binary value that is no placeholder at " << path;
    }
    const std::string_view raw = detail::raw_json_text(placeholder);
    if (text.find(raw) == std::string::npos) {
      return ::testing::AssertionFailure() << "placeholder text is not from the input: " << raw;
    }
    if (testing::typed_dump(parse_json(raw)) !=
        testing::typed_dump(theirs.at(json::json_pointer(path)))) {
      return ::testing::AssertionFailure() << "placeholder at " << path << " holds " << raw;
    }
  }
  detail::restore_raw_tool_schemas(ours);
  if (!binary_paths(ours).empty()) {
    return ::testing::AssertionFailure()
           << "a placeholder survived restore_raw_tool_schemas: " << text;
  }
  if (testing::typed_dump(ours) != testing::typed_dump(theirs)) {
    return ::testing::AssertionFailure() << "restored " << testing::typed_dump(ours)
                                         << ", parse_json " << testing::typed_dump(theirs);
  }
  return ::testing::AssertionSuccess();
}

// The same error from both parsers (position, words, too_deep), at `max_depth`.
::testing::AssertionResult refused_alike(const std::string& text,
                                         std::size_t max_depth = kNoJsonDepthLimit) {
  JsonSyntaxError theirs_error, ours_error;
  const json theirs = parse_json(text, false, &theirs_error, max_depth);
  const json ours = detail::parse_json_keeping_raw_tool_schemas(text, &ours_error, max_depth);
  if (!theirs.is_discarded()) return ::testing::AssertionFailure() << "parse_json accepts " << text;
  if (!ours.is_discarded()) return ::testing::AssertionFailure() << "keeping raw accepts " << text;
  if (theirs_error.position != ours_error.position || theirs_error.message != ours_error.message ||
      theirs_error.too_deep != ours_error.too_deep) {
    return ::testing::AssertionFailure()
           << "parse_json at " << theirs_error.position << " \"" << theirs_error.message << "\""
           << (theirs_error.too_deep ? " too deep" : "") << ", keeping raw at "
           << ours_error.position << " \"" << ours_error.message << "\""
           << (ours_error.too_deep ? " too deep" : "") << ": " << text;
  }
  return ::testing::AssertionSuccess();
}

// A tools/list answer listing `tools` (the text of a JSON array).
std::string tools_answer(std::string_view tools, int id = 1) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"result\":{\"tools\":" + std::string(tools) + "}}";
}

// The first tool of a tools/list answer listing the one definition `definition` (text),
// parsed keeping raw: its inputSchema is a placeholder when it is an object.
json listed_tool(std::string_view definition) {
  json message = parse_keeping_raw(tools_answer("[" + std::string(definition) + "]"));
  return message["result"]["tools"][0];
}

// --- the parser: where placeholders stand ----------------------------------------------

TEST(RawJsonParse, ObjectSchemaBecomesAPlaceholderHoldingItsExactSourceText) {
  const std::string schema0 =
      "{ \"type\" : \"object\",\n\t\"properties\": {\"q\": {\"type\":\"string\"}} }";
  const std::string schema1 =
      "{\"type\":\"object\",\"required\":[ \"a\" ,\"b\"],\"x\":[{},[],{\"y\":null}]}";
  const std::string text =
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[{\"name\":\"a\",\"inputSchema\":  " +
      schema0 + "  ,\"description\":\"A\"},{\"inputSchema\":" + schema1 +
      ",\"name\":\"b\"}],\"nextCursor\":\"c\"}}";
  const json message = parse_keeping_raw(text);

  EXPECT_EQ(binary_paths(message), (std::vector<std::string>{"/result/tools/0/inputSchema",
                                                             "/result/tools/1/inputSchema"}));
  const json& tools = message["result"]["tools"];
  ASSERT_TRUE(detail::is_raw_json(tools[0]["inputSchema"]));
  ASSERT_TRUE(detail::is_raw_json(tools[1]["inputSchema"]));
  // The slice from its '{' to its '}': inner whitespace kept, the space around it not.
  EXPECT_EQ(detail::raw_json_text(tools[0]["inputSchema"]), schema0);
  EXPECT_EQ(detail::raw_json_text(tools[1]["inputSchema"]), schema1);
  EXPECT_EQ(tools[0]["inputSchema"].get_binary().subtype(), detail::kRawJsonSubtype);
  // Everything around the placeholders is built as parse_json builds it.
  EXPECT_EQ(tools[0]["name"], "a");
  EXPECT_EQ(tools[0]["description"], "A");
  EXPECT_EQ(tools[1]["name"], "b");
  EXPECT_EQ(message["result"]["nextCursor"], "c");
  EXPECT_EQ(message["id"], 7);
  EXPECT_TRUE(detail::has_raw_tool_schemas(message));
  EXPECT_EQ(detail::parse_raw_json(tools[0]["inputSchema"]), plain(schema0));
}

TEST(RawJsonParse, RestoringGivesExactlyParseJsonsValue) {
  const std::string text = tools_answer(
      R"([{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"integer",)"
      R"("minimum":-3,"maximum":18446744073709551615,"multipleOf":0.5}},)"
      R"("x":"caf\u00e9 \ud83d\ude00 \"q\""}},)"
      R"( {"name":"b","inputSchema":{}}, 5, "s", {"name":"c"}])");
  json message = parse_keeping_raw(text);
  EXPECT_EQ(binary_paths(message), (std::vector<std::string>{"/result/tools/0/inputSchema",
                                                             "/result/tools/1/inputSchema"}));
  detail::restore_raw_tool_schemas(message);
  EXPECT_TRUE(binary_paths(message).empty());
  EXPECT_FALSE(detail::has_raw_tool_schemas(message));
  // Number types too (unsigned, integer, float), as a plain parse gives them.
  EXPECT_EQ(testing::typed_dump(message), testing::typed_dump(plain(text)));
}

TEST(RawJsonParse, RestoreRawSchemaRestoresOneDefinition) {
  json tool = listed_tool(R"({"name":"a","inputSchema":{ "type": "object" }})");
  ASSERT_TRUE(detail::is_raw_json(tool["inputSchema"]));
  detail::restore_raw_schema(tool);
  EXPECT_EQ(tool, plain(R"({"name":"a","inputSchema":{"type":"object"}})"));
}

TEST(RawJsonParse, EmptySchemaIsAPlaceholderToo) {
  json message = parse_keeping_raw(
      tools_answer(R"([{"name":"a","inputSchema":{}},{"name":"b","inputSchema":{ }}])"));
  const json& tools = message["result"]["tools"];
  ASSERT_TRUE(detail::is_raw_json(tools[0]["inputSchema"]));
  ASSERT_TRUE(detail::is_raw_json(tools[1]["inputSchema"]));
  EXPECT_EQ(detail::raw_json_text(tools[0]["inputSchema"]), "{}");
  EXPECT_EQ(detail::raw_json_text(tools[1]["inputSchema"]), "{ }");
  detail::restore_raw_tool_schemas(message);
  EXPECT_EQ(message["result"]["tools"][0]["inputSchema"], json::object());
}

TEST(RawJsonParse, ANonObjectSchemaIsBuiltAsParseJsonBuildsIt) {
  for (const char* schema : {R"([{"type":"object"}])", R"("object")", "5", "null", "true", "[]"}) {
    const std::string text =
        tools_answer(std::string(R"([{"name":"a","inputSchema":)") + schema + "}]");
    const json message = parse_keeping_raw(text);
    EXPECT_TRUE(binary_paths(message).empty()) << text;
    EXPECT_EQ(message, plain(text)) << text;
  }
}

TEST(RawJsonParse, NoPlaceholderAnywhereButResultToolsEntriesInputSchema) {
  const std::string schema = R"({"type":"object"})";
  const std::vector<std::string> texts = {
      // Other members of a listed tool.
      R"({"result":{"tools":[{"name":"a","outputSchema":)" + schema +
          R"(,"annotations":{"inputSchema":{}}}]}})",
      // Other lists in the result, and tools elsewhere in the message.
      R"({"result":{"other":[{"inputSchema":)" + schema + R"(}],"prompts":[{"inputSchema":{}}]}})",
      R"({"params":{"tools":[{"inputSchema":)" + schema + R"(}]}})",
      R"({"method":"x","tools":[{"inputSchema":)" + schema + R"(}]})",
      R"({"x":{"result":{"tools":[{"inputSchema":)" + schema + R"(}]}}})",
      R"({"error":{"data":{"result":{"tools":[{"inputSchema":{}}]}}}})",
      // Deeper than a tool: in a nested array, in a tool's member.
      R"({"result":{"tools":[[{"inputSchema":)" + schema + R"(}]]}})",
      R"({"result":{"tools":[{"x":{"inputSchema":)" + schema + R"(}}]}})",
      R"({"result":{"nested":{"tools":[{"inputSchema":{}}]}}})",
      // A result or tools of another type.
      R"({"result":[{"tools":[{"inputSchema":)" + schema + R"(}]}]})",
      R"({"result":"tools","tools":[{"inputSchema":{}}]})",
      R"({"result":{"tools":{"a":{"inputSchema":)" + schema + R"(}}}})",
      R"({"result":{"tools":{"inputSchema":{}}}})",
      // A batch: the messages inside a top-level array are not captured.
      R"([{"jsonrpc":"2.0","id":1,"result":{"tools":[{"inputSchema":)" + schema + R"(}]}}])",
      // Inside a schema, a tools list of its own.
      R"({"result":{"tools":[{"inputSchema":{"result":{"tools":[{"inputSchema":{}}]}}}]}})",
  };
  for (const std::string& text : texts) {
    json message = parse_keeping_raw(text);
    EXPECT_EQ(binary_paths(message), expected_placeholder_paths(plain(text))) << text;
    detail::restore_raw_tool_schemas(message);
    EXPECT_TRUE(binary_paths(message).empty()) << text;
    EXPECT_EQ(message, plain(text)) << text;
  }
  // The schema that holds a tools list is one placeholder, its inside unparsed.
  const json nested = parse_keeping_raw(texts.back());
  EXPECT_EQ(detail::raw_json_text(nested["result"]["tools"][0]["inputSchema"]),
            R"({"result":{"tools":[{"inputSchema":{}}]}})");
}

// The keys are compared as parse_json decodes them: a key written with escapes is the same
// key, as it is for restore_raw_tool_schemas.
TEST(RawJsonParse, KeysWrittenWithEscapesAreTheSameKeys) {
  const std::string text =
      R"({"r\u0065sult":{"t\u006fols":[{"inputSch\u0065ma":{"a":"\u00e9"}}]}})";
  json message = parse_keeping_raw(text);
  ASSERT_EQ(binary_paths(message), std::vector<std::string>{"/result/tools/0/inputSchema"});
  EXPECT_EQ(detail::raw_json_text(message["result"]["tools"][0]["inputSchema"]),
            R"({"a":"\u00e9"})");
  detail::restore_raw_tool_schemas(message);
  EXPECT_EQ(message, plain(text));
}

TEST(RawJsonParse, ADuplicateInputSchemaKeepsTheLastOne) {
  {
    const json tool = listed_tool(R"({"inputSchema":{"a":1},"name":"t","inputSchema":{ "b":2 }})");
    ASSERT_TRUE(detail::is_raw_json(tool["inputSchema"]));
    EXPECT_EQ(detail::raw_json_text(tool["inputSchema"]), R"({ "b":2 })");
  }
  for (const char* last : {"5", "null", R"("s")", "[{}]"}) {
    const std::string definition =
        std::string(R"({"inputSchema":{"a":1},"inputSchema":)") + last + "}";
    const json tool = listed_tool(definition);
    EXPECT_FALSE(tool["inputSchema"].is_binary()) << definition;
    EXPECT_EQ(tool, plain(definition)) << definition;
  }
  {
    const json tool = listed_tool(R"({"inputSchema":[1],"inputSchema":{"c":3}})");
    ASSERT_TRUE(detail::is_raw_json(tool["inputSchema"]));
    EXPECT_EQ(detail::raw_json_text(tool["inputSchema"]), R"({"c":3})");
  }
}

TEST(RawJsonParse, ADuplicateToolsListKeepsTheLastOnesPlaceholdersOnly) {
  const std::string text =
      R"({"result":{"tools":[{"inputSchema":{"a":1}}],"tools":[{"inputSchema":{"b":2}},{"inputSchema":{"c":3}}]}})";
  json message = parse_keeping_raw(text);
  EXPECT_EQ(binary_paths(message), (std::vector<std::string>{"/result/tools/0/inputSchema",
                                                             "/result/tools/1/inputSchema"}));
  EXPECT_EQ(detail::raw_json_text(message["result"]["tools"][0]["inputSchema"]), R"({"b":2})");
  detail::restore_raw_tool_schemas(message);
  EXPECT_EQ(message, plain(text));

  for (
      const std::string& other :
      {std::string(R"({"result":{"tools":[{"inputSchema":{"a":1}}],"tools":5}})"),
       std::string(
           R"({"result":{"tools":[{"inputSchema":{"a":1}}],"tools":null,"x":[[{"inputSchema":{}}]]}})")}) {
    json m = parse_keeping_raw(other);
    EXPECT_TRUE(binary_paths(m).empty()) << other;
    EXPECT_EQ(m, plain(other)) << other;
  }
}

// A "tools" that is a list and then, under the same key, an object: the object's members
// are no listed tools (restore_raw_tool_schemas only walks a tools array), so no placeholder
// may stand in them.
TEST(RawJsonParse, ADuplicateToolsThatBecomesAnObjectHoldsNoPlaceholder) {
  for (const std::string& text :
       {std::string(R"({"result":{"tools":[],"tools":{"t":{"inputSchema":{"type":"object"}}}}})"),
        std::string(
            R"({"result":{"tools":[{"inputSchema":{}}],"tools":{"t":{"inputSchema":{}}}}})"),
        std::string(R"({"result":{"tools":[],"tools":5,"tools":{"t":{"inputSchema":{}}}}})")}) {
    json message = parse_keeping_raw(text);
    EXPECT_TRUE(binary_paths(message).empty()) << text;
    detail::restore_raw_tool_schemas(message);
    EXPECT_TRUE(binary_paths(message).empty()) << text;
    EXPECT_EQ(message, plain(text)) << text;
  }
}

TEST(RawJsonParse, ADuplicateResultLeavesNoPlaceholderBehind) {
  const std::vector<std::string> texts = {
      R"({"result":{"tools":[{"inputSchema":{"a":1}}]},"result":5,"x":{"y":[{"inputSchema":{}}]}})",
      R"({"result":{"tools":[{"inputSchema":{"a":1}}]},"result":[[{"inputSchema":{}}],{"tools":[{"inputSchema":{}}]}]})",
      R"({"result":{"tools":[{"inputSchema":{"a":1}}]},"result":{"other":[{"inputSchema":{}}]}})",
      R"({"result":{"tools":[{"inputSchema":{"a":1}}]},"result":{"x":1},"y":{"tools":[{"inputSchema":{}}]}})",
  };
  for (const std::string& text : texts) {
    json message = parse_keeping_raw(text);
    EXPECT_TRUE(binary_paths(message).empty()) << text;
    detail::restore_raw_tool_schemas(message);
    EXPECT_EQ(message, plain(text)) << text;
  }
  // A second result object with tools of its own: its schemas are the placeholders.
  const std::string again =
      R"({"result":{"tools":[{"inputSchema":{"a":1}}]},"result":{"tools":[{"inputSchema":{"b":2}}]}})";
  json message = parse_keeping_raw(again);
  EXPECT_EQ(binary_paths(message), std::vector<std::string>{"/result/tools/0/inputSchema"});
  EXPECT_EQ(detail::raw_json_text(message["result"]["tools"][0]["inputSchema"]), R"({"b":2})");
}

// Messages built from the keys that matter, nested and duplicated at random: placeholders
// stand exactly at result.tools[i].inputSchema of parse_json's value, and restoring them
// gives that value.
TEST(RawJsonParse, RandomMessagesOfTheKeysThatMatterAgreeWithParseJson) {
  std::mt19937 random(20261205);
  const char* const keys[] = {"result", "tools", "x", "inputSchema"};
  std::string text;
  // One value at `depth` (0: the message); each member's key is, half the time, the one
  // that leads on to a schema from there (result, tools, -, inputSchema).
  // Half the time a value takes the type that leads on to a schema (object, object, array,
  // object, object).
  const unsigned leading[] = {3, 3, 7, 3, 3};
  std::function<void(int)> value = [&](int depth) {
    const unsigned kind = depth > 6                        ? random() % 3
                          : depth < 5 && random() % 2 == 0 ? leading[depth]
                                                           : random() % 8;
    switch (kind) {
      case 0:
        text += std::to_string(random() % 100);
        break;
      case 1:
        text += random() % 2 ? "\"s\"" : "null";
        break;
      case 2:
        text += random() % 2 ? "{}" : "[]";
        break;
      case 3:
      case 4:
      case 5: {
        text += '{';
        const unsigned members = random() % 4;
        for (unsigned i = 0; i < members; ++i) {
          if (i > 0) text += random() % 4 == 0 ? " , " : ",";
          text += '"';
          text += keys[random() % 2 == 0 && depth < 4 ? depth : random() % 4];
          text += "\":";
          value(depth + 1);
        }
        text += '}';
        break;
      }
      default: {
        text += '[';
        const unsigned elements = random() % 4;
        for (unsigned i = 0; i < elements; ++i) {
          if (i > 0) text += ',';
          value(depth + 1);
        }
        text += ']';
      }
    }
  };
  int with_placeholders = 0;
  for (int i = 0; i < 5000; ++i) {
    text.clear();
    value(0);
    std::size_t placeholders = 0;
    ASSERT_TRUE(agrees_with_parse_json(text, &placeholders));
    if (placeholders > 0) ++with_placeholders;
  }
  EXPECT_GT(with_placeholders, 100);  // the generator does reach the captured place
}

// A realistic answer, mutated a byte or three at a time: both parsers accept and refuse the
// same texts with the same errors, and agree on the value.
TEST(RawJsonParse, MutatedAnswersAgreeWithParseJson) {
  const std::string message =
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[{\"name\":\"read_file\","
      "\"description\":"
      "\"Reads a file "
      "\\u00e9\\ud83d\\ude00\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"path\":"
      "{\"type\":\"string\",\"maxLength\":4096},\"n\":{\"type\":\"number\",\"minimum\":-1.5e3}},"
      "\"required\":[\"path\"],\"additionalProperties\":false},\"annotations\":{\"readOnlyHint\":"
      "true}},"
      "{\"name\":\"t\",\"inputSchema\":{ \"x\" : [ {}, [], \"caf\xC3\xA9\" ] "
      "}}],\"nextCursor\":null}}";
  ASSERT_TRUE(agrees_with_parse_json(message));
  const std::string alphabet =
      "{}[]\":,\\/0123456789eE+-.tfnulrsa \n\t\x01\x80\xC3\xA9\xFF\xED\xF0";
  std::mt19937 random(20261206);
  for (int i = 0; i < 3000; ++i) {
    std::string text = message;
    for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
      const std::size_t at = random() % text.size();
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          text.erase(at, 1);
          break;
      }
    }
    ASSERT_TRUE(agrees_with_parse_json(text));
  }
}

// --- the parser: what it refuses --------------------------------------------------------

TEST(RawJsonParse, ABrokenSchemaIsRefusedWithParseJsonsError) {
  const std::vector<std::string> schemas = {
      "{\"a\":\"\xC3\x28\"}",     // ill-formed UTF-8 in a string
      "{\"\xED\xA0\x80\":1}",     // an encoded surrogate in a key
      "{\"a\":\"x\xFFy\"}",       // a byte that never starts UTF-8
      "{\"a\":[\"\x01\"]}",       // a control character
      "{\"a\":\"tab\there\"}",    // a raw tab
      R"({"a":"\q"})",            // a bad escape
      R"({"a":"\u12"})",          // a short \u
      R"({"a":"\ud800"})",        // a lone high surrogate
      R"({"a":"\ud800\u0041"})",  // a high surrogate without its low one
      R"({"a":"\udc00"})",        // a lone low surrogate
      R"({"a":1e999})",           // out of double's range
      R"({"a":[1,-1e400]})",
      R"({"a":1,})",  // trailing commas
      R"({"a":[1,]})",
      R"({"a" 1})",    // no colon
      R"({"a":tru})",  // bad literals
      R"({"a":nul})",
      R"({"a":01})",  // a leading zero
      R"({"a":-})",
      R"({"a":1.})",
      R"({"a":/*c*/1})",  // a comment (comments are never allowed here)
      R"({1:2})",         // a key that is no string
      R"({"a":]})",
      R"({"a":{"b":[}})",
      "{\"a\":\"x\0y\"}"s,  // a NUL byte in a string
      "{\"a\":\0}"s,        // a NUL byte between tokens
  };
  for (const std::string& schema : schemas) {
    const std::string text = tools_answer("[{\"name\":\"t\",\"inputSchema\":" + schema + "}]");
    EXPECT_TRUE(refused_alike(text));
  }
  // Unclosed at the end of the text, inside the schema.
  for (const std::string& cut : {std::string(R"({"result":{"tools":[{"inputSchema":{"a":[1)"),
                                 std::string(R"({"result":{"tools":[{"inputSchema":{"a":"x)"),
                                 std::string(R"({"result":{"tools":[{"inputSchema":{)"),
                                 std::string(R"({"result":{"tools":[{"inputSchema":{"a")"),
                                 std::string(R"({"result":{"tools":[{"inputSchema":{"a":1})"),
                                 std::string(R"({"result":{"tools":[{"inputSchema":{"a":1}})")}) {
    EXPECT_TRUE(refused_alike(cut));
  }
  // Text after the message.
  EXPECT_TRUE(refused_alike(tools_answer(R"([{"inputSchema":{}}])") + " x"));
}

TEST(RawJsonParse, ParseUntrustedJsonRefusesABrokenSchemaAsItDoesWithoutTheFlag) {
  for (const std::string& text : {tools_answer("[{\"inputSchema\":{\"a\":\"\xC3\x28\"}}]"),
                                  tools_answer(R"([{"inputSchema":{"a":1e999}}])"),
                                  tools_answer(R"([{"inputSchema":{"a":[1,]}}])")}) {
    const auto plain_result = detail::parse_untrusted_json(text, {});
    const auto raw_result = detail::parse_untrusted_json(text, {.raw_tool_schemas = true});
    ASSERT_FALSE(plain_result.ok()) << text;
    ASSERT_FALSE(raw_result.ok()) << text;
    EXPECT_EQ(raw_result.error().code, plain_result.error().code);
    EXPECT_EQ(raw_result.error().message, plain_result.error().message);
    EXPECT_EQ(raw_result.error().data, plain_result.error().data);
  }
}

TEST(RawJsonParse, ParseUntrustedJsonKeepsSchemasRawOnlyWhenAsked) {
  const std::string text = tools_answer(R"([{"name":"a","inputSchema":{ "type":"object" }}])");
  const auto raw = detail::parse_untrusted_json(text, {.raw_tool_schemas = true});
  ASSERT_TRUE(raw.ok()) << raw.error();
  EXPECT_EQ(detail::raw_json_text(raw.value()["result"]["tools"][0]["inputSchema"]),
            R"({ "type":"object" })");
  const auto built = detail::parse_untrusted_json(text, {});
  ASSERT_TRUE(built.ok()) << built.error();
  EXPECT_TRUE(binary_paths(built.value()).empty());
  EXPECT_EQ(built.value(), plain(text));
}

// Depth counts from the message: message 1, result 2, tools 3, tool 4, schema 5, ...
TEST(RawJsonParse, DepthCountsFromTheMessageNotFromTheSchema) {
  const auto answer_with_schema = [](const std::string& schema) {
    return tools_answer("[{\"name\":\"t\",\"inputSchema\":" + schema + "}]");
  };
  // A schema two levels deep makes the message six deep.
  const std::string six = answer_with_schema(R"({"a":{"b":1}})");
  {
    const json message = parse_keeping_raw(six, 6);
    EXPECT_EQ(detail::raw_json_text(message["result"]["tools"][0]["inputSchema"]),
              R"({"a":{"b":1}})");
  }
  EXPECT_TRUE(refused_alike(six, 5));
  JsonSyntaxError error;
  EXPECT_TRUE(detail::parse_json_keeping_raw_tool_schemas(six, &error, 5).is_discarded());
  EXPECT_TRUE(error.too_deep);
  EXPECT_EQ(error.position, six.find(R"({"b")"));  // the bracket that opened level 6
  // The schema's own bracket at the limit, empty containers and arrays included.
  EXPECT_TRUE(refused_alike(answer_with_schema("{}"), 4));
  EXPECT_TRUE(refused_alike(answer_with_schema(R"({"a":[]})"), 5));
  EXPECT_TRUE(refused_alike(answer_with_schema(R"({"a":[[1]],"b":{}})"), 6));
  EXPECT_FALSE(parse_keeping_raw(answer_with_schema(R"({"a":[[1]],"b":{}})"), 7).is_discarded());

  // Deep schemas (past the parser's 32 inline levels): accepted to the limit, refused past it.
  std::string deep = "{\"a\":";
  for (int i = 0; i < 60; ++i) deep += "[";
  for (int i = 0; i < 60; ++i) deep += "]";
  deep += "}";
  const std::string text = answer_with_schema(deep);  // 4 + 1 + 60 = 65 levels
  const json message = parse_keeping_raw(text, 65);
  EXPECT_EQ(detail::raw_json_text(message["result"]["tools"][0]["inputSchema"]), deep);
  EXPECT_TRUE(refused_alike(text, 64));
  EXPECT_TRUE(refused_alike(text, 40));
  EXPECT_TRUE(refused_alike(text, 33));
  // Through parse_untrusted_json: the same too_deep answer as without the flag.
  const auto raw_result =
      detail::parse_untrusted_json(text, {.max_nesting_levels = 64, .raw_tool_schemas = true});
  const auto plain_result = detail::parse_untrusted_json(text, {.max_nesting_levels = 64});
  ASSERT_FALSE(raw_result.ok());
  ASSERT_FALSE(plain_result.ok());
  EXPECT_EQ(raw_result.error().message, plain_result.error().message);
  EXPECT_EQ(raw_result.error().data, plain_result.error().data);
  EXPECT_EQ(raw_result.error().data["reason"], detail::kJsonTooDeep);
}

// --- helpers of raw_json.hpp -----------------------------------------------------------

TEST(RawJsonHelpers, OnlyAPlaceholderIsRawJson) {
  const json placeholder = detail::make_raw_json(R"({"a": 1})");
  EXPECT_TRUE(detail::is_raw_json(placeholder));
  EXPECT_EQ(detail::raw_json_text(placeholder), R"({"a": 1})");
  EXPECT_EQ(detail::parse_raw_json(placeholder), (json{{"a", 1}}));
  // A binary value of another subtype (or none), and anything else, is no placeholder.
  const json other = json::binary({'{', '}'}, 7);
  const json untyped = json::binary({'{', '}'});
  for (const json& v : {other, untyped, json("{}"), json::object(), json()}) {
    EXPECT_FALSE(detail::is_raw_json(v)) << v;
    EXPECT_EQ(detail::raw_json_text(v), "");
  }
  // Restoring leaves such values alone.
  json tool = {{"name", "t"}, {"inputSchema", other}};
  detail::restore_raw_schema(tool);
  EXPECT_EQ(tool["inputSchema"], other);
  json message = {{"result", {{"tools", json::array({tool})}}}};
  EXPECT_FALSE(detail::has_raw_tool_schemas(message));
}

TEST(RawJsonHelpers, DumpKeepingRawWritesThePlaceholdersTextAndEverythingElseAsDump) {
  json definition = listed_tool(R"({"name":"t","z":[1,2.5,"caf\u00e9"],)"
                                R"("inputSchema":{ "type" : "object" },"a":{"b":{"c":null}}})");
  ASSERT_TRUE(detail::is_raw_json(definition["inputSchema"]));
  std::string out;
  detail::dump_keeping_raw(definition, out);
  json restored = definition;
  detail::restore_raw_schema(restored);
  std::string expected = restored.dump();
  expected.replace(expected.find(R"({"type":"object"})"), 17, R"({ "type" : "object" })");
  EXPECT_EQ(out, expected);

  // An array of definitions, as the cache writes its lists.
  std::string list_out;
  detail::dump_keeping_raw(json::array({definition, {{"name", "u"}}}), list_out);
  EXPECT_NE(list_out.find(R"("inputSchema":{ "type" : "object" })"), std::string::npos);
  EXPECT_EQ(json::parse(list_out), json::array({restored, {{"name", "u"}}}));
}

TEST(RawJsonHelpers, DumpWithRawMemberWritesThatMemberAsGiven) {
  const json object = {{"b", 1}, {"inputSchema", nullptr}, {"a", {{"x", "y"}}}};
  std::string out;
  detail::dump_with_raw_member(object, "inputSchema", "{ \"k\" : 2 }", out);
  EXPECT_EQ(out, R"({"a":{"x":"y"},"b":1,"inputSchema":{ "k" : 2 }})");
}

// --- the RpcPeer and the tap ----------------------------------------------------------------

// The far end of a transport that speaks text: what a test delivers is parsed as the core's
// transports parse a message (parse_untrusted_json, honouring raw_tool_schemas).
struct TextWire {
  TransportHandlers handlers;
  int starts = 0;
  std::vector<json> sent;
};

class TextWireTransport final : public Transport {
 public:
  TextWireTransport(Executor& executor, std::shared_ptr<TextWire> wire)
      : executor_(executor), wire_(std::move(wire)) {}
  void start(TransportHandlers handlers) override {
    wire_->handlers = std::move(handlers);
    ++wire_->starts;
  }
  Status send(const json& message) override {
    wire_->sent.push_back(message);
    return {};
  }
  void close() override {
    if (closed_) return;
    closed_ = true;
    executor_.post([wire = wire_] {
      if (wire->handlers.on_close)
        wire->handlers.on_close(Error::make(ErrorCode::closed, "closed"));
    });
  }

 private:
  Executor& executor_;
  std::shared_ptr<TextWire> wire_;
  bool closed_ = false;
};

// The server writes `text`; it arrives through the executor.
void deliver(Executor& executor, const std::shared_ptr<TextWire>& wire, std::string text) {
  executor.post([wire, text = std::move(text)] {
    auto message =
        detail::parse_untrusted_json(text, {.max_nesting_levels = kDefaultMaxJsonNestingLevels,
                                            .raw_tool_schemas = wire->handlers.raw_tool_schemas});
    if (!message.ok()) {
      ADD_FAILURE() << "unreadable: " << message.error() << ": " << text;
      return;
    }
    if (wire->handlers.on_message) wire->handlers.on_message(std::move(message.value()));
  });
}

const std::string kSchemaText =
    "{ \"type\": \"object\",\n  \"properties\": { \"q\": {\"type\": \"string\"} } }";

std::string answer_with_schema(int id) {
  return tools_answer("[{\"name\":\"search\",\"inputSchema\":" + kSchemaText + "}]", id);
}

struct RawPeerTest : ::testing::Test {
  void SetUp() override { peer->start({}); }

  json request(Captured<Result<json>>& done, bool raw_tool_schemas) {
    RequestOptions options;
    options.raw_tool_schemas = raw_tool_schemas;
    auto id = peer->request("tools/list", json::object(), std::move(options), done.fn());
    EXPECT_TRUE(id.ok()) << id;
    return id.ok() ? id.value() : json();
  }

  ManualExecutor ex;
  CapturingLogger log;
  std::shared_ptr<TextWire> wire = std::make_shared<TextWire>();
  std::unique_ptr<RpcPeer> peer =
      std::make_unique<RpcPeer>(ex, std::make_unique<TextWireTransport>(ex, wire), &log);
};

TEST_F(RawPeerTest, Peer_StartsItsTransportAskingForRawToolSchemas) {
  ASSERT_EQ(wire->starts, 1);
  EXPECT_TRUE(wire->handlers.raw_tool_schemas);
}

TEST_F(RawPeerTest, Peer_ARequestThatAskedGetsTheSchemaAsAPlaceholder) {
  Captured<Result<json>> done;
  const json id = request(done, /*raw_tool_schemas=*/true);
  deliver(ex, wire, answer_with_schema(id.get<int>()));
  ex.run_until_idle();
  ASSERT_EQ(done.calls, 1);
  ASSERT_TRUE(done.ok()) << done.error();
  const json& schema = done.last->value()["tools"][0]["inputSchema"];
  ASSERT_TRUE(detail::is_raw_json(schema));
  EXPECT_EQ(detail::raw_json_text(schema), kSchemaText);
}

TEST_F(RawPeerTest, Peer_ARequestThatDidNotAskGetsPlainJson) {
  Captured<Result<json>> done;
  const json id = request(done, /*raw_tool_schemas=*/false);
  const std::string text = answer_with_schema(id.get<int>());
  deliver(ex, wire, text);
  ex.run_until_idle();
  ASSERT_EQ(done.calls, 1);
  ASSERT_TRUE(done.ok()) << done.error();
  EXPECT_TRUE(binary_paths(done.last->value()).empty());
  EXPECT_EQ(done.last->value(), plain(text)["result"]);
}

TEST_F(RawPeerTest, Peer_EachAnswerFollowsItsOwnRequestsFlag) {
  Captured<Result<json>> raw, built;
  const json raw_id = request(raw, true);
  const json built_id = request(built, false);
  // Answered in the other order, with the same text.
  deliver(ex, wire, answer_with_schema(built_id.get<int>()));
  deliver(ex, wire, answer_with_schema(raw_id.get<int>()));
  ex.run_until_idle();
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(built.ok());
  EXPECT_TRUE(detail::is_raw_json(raw.last->value()["tools"][0]["inputSchema"]));
  EXPECT_EQ(built.last->value()["tools"][0]["inputSchema"], plain(kSchemaText));
}

TEST(RawTappedTransport, TheTapSeesTheMessageRestoredAndTheHandlerTheSchemaRaw) {
  ManualExecutor ex;
  auto wire = std::make_shared<TextWire>();
  std::vector<std::pair<MessageDirection, json>> tapped;
  auto transport = make_tapped_transport(std::make_unique<TextWireTransport>(ex, wire),
                                         [&](MessageDirection direction, const json& message) {
                                           tapped.emplace_back(direction, message);
                                         });
  std::vector<json> received;
  TransportHandlers handlers;
  handlers.raw_tool_schemas = true;
  handlers.on_message = [&](json message) { received.push_back(std::move(message)); };
  transport->start(std::move(handlers));
  EXPECT_TRUE(wire->handlers.raw_tool_schemas);  // the tap passes the flag on

  const std::string text = answer_with_schema(4);
  deliver(ex, wire, text);
  deliver(ex, wire, R"({"jsonrpc":"2.0","method":"notifications/x","params":{"a":1}})");
  ex.run_until_idle();

  ASSERT_EQ(tapped.size(), 2u);
  EXPECT_EQ(tapped[0].first, MessageDirection::receive);
  EXPECT_TRUE(binary_paths(tapped[0].second).empty());
  EXPECT_EQ(tapped[0].second, plain(text));
  EXPECT_EQ(tapped[1].second,
            (json{{"jsonrpc", "2.0"}, {"method", "notifications/x"}, {"params", {{"a", 1}}}}));
  ASSERT_EQ(received.size(), 2u);
  const json& schema = received[0]["result"]["tools"][0]["inputSchema"];
  ASSERT_TRUE(detail::is_raw_json(schema));
  EXPECT_EQ(detail::raw_json_text(schema), kSchemaText);
}

// --- ClientSession -------------------------------------------------------------------------

// The client's end of a FakeServer, made a text wire: each message the server sends is
// written as text (with `substitutions` applied: a string standing for a schema becomes the
// schema's text as the test wrote it) and parsed as the core's transports parse one.
class ReparsingTransport final : public Transport {
 public:
  ReparsingTransport(std::unique_ptr<Transport> inner,
                     std::vector<std::pair<std::string, std::string>> substitutions,
                     bool* raw_asked)
      : inner_(std::move(inner)), substitutions_(std::move(substitutions)), raw_asked_(raw_asked) {}
  void start(TransportHandlers handlers) override {
    *raw_asked_ = handlers.raw_tool_schemas;
    handlers.on_message = [subs = substitutions_, raw = handlers.raw_tool_schemas,
                           next = std::move(handlers.on_message)](json message) {
      std::string text = message.dump();
      for (const auto& [from, to] : subs) {
        for (auto at = text.find(from); at != std::string::npos;
             at = text.find(from, at + to.size())) {
          text.replace(at, from.size(), to);
        }
      }
      auto parsed = detail::parse_untrusted_json(text, {.raw_tool_schemas = raw});
      ASSERT_TRUE(parsed.ok()) << parsed.error() << ": " << text;
      if (next) next(std::move(parsed.value()));
    };
    inner_->start(std::move(handlers));
  }
  Status send(const json& message) override { return inner_->send(message); }
  Status send_with(const json& message, const SendOptions& options) override {
    return inner_->send_with(message, options);
  }
  void close() override { inner_->close(); }

 private:
  std::unique_ptr<Transport> inner_;
  std::vector<std::pair<std::string, std::string>> substitutions_;
  bool* raw_asked_;
};

struct RawClientTest : ::testing::Test {
  void SetUp() override {
    server.set_tools(
        {{{"name", "search"}, {"description", "Finds"}, {"inputSchema", "@schema-search"}},
         {{"name", "empty"}, {"inputSchema", "@schema-empty"}},
         {{"name", "bare"}}});
    ClientOptions options;
    options.server_name = "demo";
    options.protocol = "legacy";
    options.logger = &log;
    session = ClientSession::create(
        ex,
        std::make_unique<ReparsingTransport>(
            server.take_client_end(),
            std::vector<std::pair<std::string, std::string>>{{"\"@schema-search\"", kSchemaText},
                                                             {"\"@schema-empty\"", "{ }"}},
            &raw_asked),
        options);
    Captured<Status> connected;
    session->connect(connected.fn());
    ex.run_until_idle();
    ASSERT_TRUE(connected.ok()) << connected.error();
  }

  ManualExecutor ex;
  CapturingLogger log;
  FakeServer server{ex};
  bool raw_asked = false;
  std::shared_ptr<ClientSession> session;  // declared last: destroyed first
};

TEST_F(RawClientTest, ListTools_GivesPlainDefinitionsEqualToWhatTheServerSent) {
  EXPECT_TRUE(raw_asked);  // the session's peer asked its transport for raw schemas
  Captured<Result<std::vector<json>>> listed;
  session->list_tools(listed.fn());
  ex.run_until_idle();
  ASSERT_TRUE(listed.ok()) << listed.error();
  const auto& tools = listed.last->value();
  ASSERT_EQ(tools.size(), 3u);
  for (const json& tool : tools) EXPECT_TRUE(binary_paths(tool).empty()) << tool;
  EXPECT_EQ(
      tools[0],
      (json{{"name", "search"}, {"description", "Finds"}, {"inputSchema", plain(kSchemaText)}}));
  EXPECT_EQ(tools[1], (json{{"name", "empty"}, {"inputSchema", json::object()}}));
  EXPECT_EQ(tools[2], (json{{"name", "bare"}}));
}

TEST_F(RawClientTest, ListToolsRaw_KeepsEachObjectSchemaAsTheServersText) {
  Captured<Result<std::vector<json>>> listed;
  session->list_tools_raw(listed.fn());
  ex.run_until_idle();
  ASSERT_TRUE(listed.ok()) << listed.error();
  const auto& tools = listed.last->value();
  ASSERT_EQ(tools.size(), 3u);
  ASSERT_TRUE(detail::is_raw_json(tools[0]["inputSchema"]));
  EXPECT_EQ(detail::raw_json_text(tools[0]["inputSchema"]), kSchemaText);
  ASSERT_TRUE(detail::is_raw_json(tools[1]["inputSchema"]));
  EXPECT_EQ(detail::raw_json_text(tools[1]["inputSchema"]), "{ }");
  EXPECT_EQ(tools[0]["name"], "search");
  EXPECT_EQ(tools[0]["description"], "Finds");
  EXPECT_EQ(tools[2], (json{{"name", "bare"}}));
  // And a plain listing after it is plain again.
  Captured<Result<std::vector<json>>> again;
  session->list_tools(again.fn());
  ex.run_until_idle();
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again.last->value()[0]["inputSchema"], plain(kSchemaText));
}

TEST_F(RawClientTest, ListToolsRaw_AnEntryItIgnoresIsLoggedWithItsSchemaParsed) {
  server.set_tools({{{"description", "no name"}, {"inputSchema", "@schema-search"}},
                    {{"name", "search"}, {"inputSchema", "@schema-empty"}}});
  Captured<Result<std::vector<json>>> listed;
  session->list_tools_raw(listed.fn());
  ex.run_until_idle();
  ASSERT_TRUE(listed.ok()) << listed.error();
  ASSERT_EQ(listed.last->value().size(), 1u);
  std::string warning;
  for (const auto& [level, line] : log.lines) {
    if (level == LogLevel::warn && line.find("ignoring tool 0") != std::string::npos)
      warning = line;
  }
  ASSERT_FALSE(warning.empty());
  EXPECT_NE(warning.find(R"("inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"})"),
            std::string::npos)
      << warning;
  EXPECT_EQ(warning.find("subtype"), std::string::npos) << warning;
}

// --- x_mcp_header_params ----------------------------------------------------------------

TEST(RawJsonHeaders, AnAnnotatedRawSchemaGivesTheParamsOfItsParsedDefinition) {
  const std::string definition =
      R"({"name":"t","inputSchema":{ "type":"object", "properties":{ )"
      R"("region":{"type":"string","x-mcp-header":"Region"}, )"
      R"("target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}, )"
      R"("q":{"type":"string"} } }})";
  const json tool = listed_tool(definition);
  ASSERT_TRUE(detail::is_raw_json(tool["inputSchema"]));
  const auto raw = x_mcp_header_params(tool);
  const auto parsed = x_mcp_header_params(plain(definition));
  ASSERT_TRUE(raw.ok()) << raw.error();
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  ASSERT_EQ(raw->size(), 2u);
  ASSERT_EQ(raw->size(), parsed->size());
  for (std::size_t i = 0; i < raw->size(); ++i) {
    EXPECT_EQ((*raw)[i].property, (*parsed)[i].property);
    EXPECT_EQ((*raw)[i].header, (*parsed)[i].header);
    EXPECT_EQ((*raw)[i].path, (*parsed)[i].path);
  }
  EXPECT_EQ((*raw)[0].header, "Region");
  EXPECT_EQ((*raw)[1].path, (std::vector<std::string>{"target", "zone"}));
}

TEST(RawJsonHeaders, ARawSchemaWithoutTheKeyHasNone) {
  const json tool = listed_tool(
      R"({"name":"t","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}})");
  ASSERT_TRUE(detail::is_raw_json(tool["inputSchema"]));
  const auto r = x_mcp_header_params(tool);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty());
}

TEST(RawJsonHeaders, AKeyWrittenWithAUnicodeEscapeIsStillFound) {
  const json tool =
      listed_tool(R"({"name":"t","inputSchema":{"type":"object","properties":{"region":)"
                  R"({"type":"string","x-mcp-head\u0065r":"Region"}}}})");
  ASSERT_TRUE(detail::is_raw_json(tool["inputSchema"]));
  const auto r = x_mcp_header_params(tool);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].property, "region");
  EXPECT_EQ((*r)[0].header, "Region");
}

TEST(RawJsonHeaders, ABrokenAnnotationInARawSchemaIsRejectedAsInAParsedOne) {
  const std::string definition =
      R"({"name":"t","inputSchema":{"type":"object","properties":{"region":)"
      R"({"type":"string","x-mcp-header":"Bad Name"}}}})";
  const json tool = listed_tool(definition);
  ASSERT_TRUE(detail::is_raw_json(tool["inputSchema"]));
  const auto raw = x_mcp_header_params(tool);
  const auto parsed = x_mcp_header_params(plain(definition));
  ASSERT_FALSE(parsed.ok());
  ASSERT_FALSE(raw.ok());
  EXPECT_EQ(raw.error().message, parsed.error().message);
}

// --- the tool cache -------------------------------------------------------------------------

ServerConfig cache_config() {
  ServerConfig c;
  c.name = "fs";
  c.command = "srv";
  c.raw = json{{"command", "srv"}};
  return c;
}

TEST(RawJsonCache, AnEntryHoldsARawSchemasTextAsItCame) {
  constexpr std::int64_t kNow = 1'800'000'000'000LL;
  const std::string schema =
      "{ \"type\" : \"object\" ,  \"properties\" : { \"p\" : { \"type\" : \"string\" } } }";
  const std::string definition =
      R"({"name":"read","description":"Reads","inputSchema":)" + schema + R"(,"zz":[1, 2]})";
  const std::vector<json> raw_tools = {
      listed_tool(definition), json{{"name", "plain"}, {"inputSchema", {{"type", "object"}}}}};
  ASSERT_TRUE(detail::is_raw_json(raw_tools[0]["inputSchema"]));
  const json server_info = {{"protocolVersion", "2025-11-25"}};
  const ServerConfig config = cache_config();

  const std::string entry = encode_cache_entry(config, server_info, raw_tools, kNow);
  EXPECT_NE(entry.find("\"inputSchema\":" + schema), std::string::npos) << entry;
  EXPECT_EQ(entry.find("bytes"), std::string::npos) << entry;  // no binary value dumped

  const std::vector<json> parsed_tools = {plain(definition), raw_tools[1]};
  const auto back = decode_cache_entry(entry, config, kNow);
  ASSERT_TRUE(back.has_value()) << entry;
  EXPECT_EQ(back->tools, parsed_tools);
  // The same entry, after parsing, as the one written from the parsed definitions.
  EXPECT_EQ(plain(entry), plain(encode_cache_entry(config, server_info, parsed_tools, kNow)));
}

}  // namespace
}  // namespace raw_json_test
}  // namespace mcprt
