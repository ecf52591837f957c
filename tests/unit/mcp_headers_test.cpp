// The 2026-07-28 header codec (mcprt/mcp_headers.hpp): value encoding with the base64
// sentinel, x-mcp-header annotation rules, Mcp-Param-* mirroring and the standard
// request headers.

#include "mcprt/mcp_headers.hpp"

#include <gtest/gtest.h>

#include <string>

namespace mcprt {
namespace mcp_headers_test {  // this file's own names in a unity batch
namespace {

std::string value_of(const json& v) { return mcp_header_value(v).value_or("<none>"); }

json tool_with(json properties, std::string name = "t") {
  return {{"name", std::move(name)},
          {"inputSchema", {{"type", "object"}, {"properties", std::move(properties)}}}};
}

json annotated(const std::string& type, const std::string& header) {
  return {{"type", type}, {"x-mcp-header", header}};
}

// The error message for a tool that must be rejected ("" when it was accepted).
std::string rejection(const json& tool) {
  auto r = x_mcp_header_params(tool);
  if (r.ok()) return "";
  EXPECT_EQ(r.error().code, ErrorCode::protocol);
  return r.error().message;
}

// --- value encoding -------------------------------------------------------------------

TEST(McpHeaderValue, PlainAsciiStringsAreSentAsTheyAre) {
  EXPECT_EQ(value_of("us-west1"), "us-west1");
  EXPECT_EQ(value_of("us west 1"), "us west 1");  // inner spaces are safe
  EXPECT_EQ(value_of("SELECT * FROM users;"), "SELECT * FROM users;");
  EXPECT_EQ(value_of("~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./"), "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./");
}

TEST(McpHeaderValue, EmptyStringIsAnEmptyValue) { EXPECT_EQ(value_of(""), ""); }

TEST(McpHeaderValue, NonAsciiIsBase64OfTheUtf8Bytes) {
  EXPECT_EQ(value_of("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
  EXPECT_EQ(value_of("Région"), "=?base64?UsOpZ2lvbg==?=");
}

TEST(McpHeaderValue, LeadingOrTrailingSpaceIsEncoded) {
  EXPECT_EQ(value_of(" padded "), "=?base64?IHBhZGRlZCA=?=");
  EXPECT_EQ(value_of(" us-west1"), "=?base64?IHVzLXdlc3Qx?=");
  EXPECT_EQ(value_of("us-west1 "), "=?base64?dXMtd2VzdDEg?=");
  EXPECT_EQ(value_of(" "), "=?base64?IA==?=");
}

TEST(McpHeaderValue, ControlCharactersAndTabsAreEncoded) {
  EXPECT_EQ(value_of("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
  EXPECT_EQ(value_of("line1\r\nline2"), "=?base64?bGluZTENCmxpbmUy?=");
  EXPECT_EQ(value_of("\tindented"), "=?base64?CWluZGVudGVk?=");
  EXPECT_EQ(value_of("a\tb"), "=?base64?YQli?=");  // an inner tab too
  EXPECT_EQ(value_of(std::string("a\x7f", 2)), "=?base64?YX8=?=");
  EXPECT_EQ(value_of(std::string("a\0b", 3)), "=?base64?YQBi?=");
}

TEST(McpHeaderValue, AValueThatLooksLikeTheSentinelIsEncodedToo) {
  EXPECT_EQ(value_of("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
  EXPECT_EQ(value_of("=?base64?"
                     "?="),
            "=?base64?PT9iYXNlNjQ/Pz0=?=");  // split: no trigraph
  // Only the full pattern counts: half a sentinel, or other case, is plain text.
  EXPECT_EQ(value_of("=?base64?SGVsbG8="), "=?base64?SGVsbG8=");
  EXPECT_EQ(value_of("SGVsbG8=?="), "SGVsbG8=?=");
  EXPECT_EQ(value_of("=?BASE64?x?="), "=?BASE64?x?=");
  // The markers overlap in "=?base64?=": not the pattern (prefix and suffix need 11 bytes).
  EXPECT_EQ(value_of("=?base64?="), "=?base64?=");
}

TEST(McpHeaderValue, IntegersInDecimalWithinTheSafeRange) {
  EXPECT_EQ(value_of(42), "42");
  EXPECT_EQ(value_of(-7), "-7");
  EXPECT_EQ(value_of(0), "0");
  EXPECT_EQ(value_of(9007199254740991LL), "9007199254740991");
  EXPECT_EQ(value_of(-9007199254740991LL), "-9007199254740991");
  EXPECT_EQ(value_of(json::parse("42.0")), "42");  // JSON Schema's integer
  EXPECT_FALSE(mcp_header_value(9007199254740992LL));
  EXPECT_FALSE(mcp_header_value(-9007199254740992LL));
  EXPECT_FALSE(mcp_header_value(json::parse("18446744073709551615")));
  EXPECT_FALSE(mcp_header_value(json::parse("1e300")));
}

TEST(McpHeaderValue, BooleansAreLowercaseWords) {
  EXPECT_EQ(value_of(true), "true");
  EXPECT_EQ(value_of(false), "false");
}

TEST(McpHeaderValue, NullFractionsObjectsAndArraysHaveNoHeaderValue) {
  EXPECT_FALSE(mcp_header_value(nullptr));
  EXPECT_FALSE(mcp_header_value(json()));
  EXPECT_FALSE(mcp_header_value(3.14159));
  EXPECT_FALSE(mcp_header_value(json::object()));
  EXPECT_FALSE(mcp_header_value(json::array({"a"})));
}

// --- annotations ----------------------------------------------------------------------

TEST(XMcpHeaderParams, AToolWithoutAnnotationsHasNone) {
  auto r = x_mcp_header_params(tool_with({{"q", {{"type", "string"}}}}));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty());
  auto no_schema = x_mcp_header_params(json{{"name", "bare"}});
  ASSERT_TRUE(no_schema.ok());
  EXPECT_TRUE(no_schema->empty());
}

TEST(XMcpHeaderParams, ReadsEachAnnotatedPrimitiveProperty) {
  auto r = x_mcp_header_params(tool_with({{"region", annotated("string", "Region")},
                                          {"priority", annotated("integer", "Priority")},
                                          {"verbose", annotated("boolean", "Verbose")},
                                          {"query", {{"type", "string"}}}}));
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 3u);
  // Sorted by property name (json objects keep their keys sorted).
  EXPECT_EQ((*r)[0].property, "priority");
  EXPECT_EQ((*r)[0].header, "Priority");
  EXPECT_EQ((*r)[1].property, "region");
  EXPECT_EQ((*r)[1].header, "Region");
  EXPECT_EQ((*r)[1].path, std::vector<std::string>{"region"});
  EXPECT_EQ((*r)[2].property, "verbose");
}

TEST(XMcpHeaderParams, NestedObjectPropertiesReachedThroughPropertiesAreFine) {
  json tool = tool_with(
      {{"target",
        {{"type", "object"},
         {"properties", {{"zone", annotated("string", "Zone")}, {"n", {{"type", "integer"}}}}}}}});
  auto r = x_mcp_header_params(tool);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].property, "zone");
  EXPECT_EQ((*r)[0].path, (std::vector<std::string>{"target", "zone"}));
}

TEST(XMcpHeaderParams, ANullablePrimitiveIsAccepted) {
  json prop = {{"type", json::array({"string", "null"})}, {"x-mcp-header", "Region"}};
  auto r = x_mcp_header_params(tool_with({{"region", prop}}));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->size(), 1u);
}

TEST(XMcpHeaderParams, APropertyNamedLikeTheAnnotationIsJustAProperty) {
  auto r = x_mcp_header_params(tool_with({{"x-mcp-header", {{"type", "string"}}}}));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty());
}

TEST(XMcpHeaderParams, DataKeywordsAreNotSearched) {
  json prop = {{"type", "string"},
               {"default", {{"x-mcp-header", "NotOne"}}},
               {"examples", json::array({{{"x-mcp-header", "Nor"}}})},
               {"const", {{"x-mcp-header", "This"}}}};
  auto r = x_mcp_header_params(tool_with({{"v", prop}}));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty());
}

TEST(XMcpHeaderParams, RejectsAnEmptyName) {
  EXPECT_EQ(rejection(tool_with({{"value", annotated("string", "")}}, "invalid_empty_header")),
            "tool \"invalid_empty_header\": property \"value\": x-mcp-header is empty");
}

TEST(XMcpHeaderParams, RejectsANameThatIsNotAToken) {
  EXPECT_EQ(rejection(tool_with({{"region", annotated("string", "Bad Name")}})),
            "tool \"t\": property \"region\": x-mcp-header \"Bad Name\" is not an RFC 9110 token");
  EXPECT_NE(rejection(tool_with({{"v", annotated("string", "Region:Primary")}})), "");
  EXPECT_NE(rejection(tool_with({{"v", annotated("string", "Région")}})), "");
  EXPECT_NE(rejection(tool_with({{"v", annotated("string", "Region\t1")}})), "");
  EXPECT_NE(rejection(tool_with({{"v", annotated("string", "Region\r\nX-Evil: 1")}})), "");
  EXPECT_NE(rejection(tool_with({{"v", annotated("string", "(paren)")}})), "");
  // Every tchar is allowed.
  EXPECT_EQ(rejection(tool_with({{"v", annotated("string", "A-z_0.9!#$%&'*+^`|~")}})), "");
}

TEST(XMcpHeaderParams, RejectsANameThatIsNotAString) {
  json prop = {{"type", "string"}, {"x-mcp-header", 7}};
  EXPECT_EQ(rejection(tool_with({{"v", prop}})),
            "tool \"t\": property \"v\": x-mcp-header must be a string, not 7");
}

TEST(XMcpHeaderParams, RejectsDuplicatesWhateverTheirCase) {
  std::string same = rejection(tool_with(
      {{"field1", annotated("string", "Region")}, {"field2", annotated("string", "Region")}}));
  EXPECT_EQ(same,
            "tool \"t\": property \"field2\": x-mcp-header \"Region\" duplicates \"Region\" of "
            "property \"field1\" (header names are case-insensitive)");
  EXPECT_NE(rejection(tool_with({{"field1", annotated("string", "MyField")},
                                 {"field2", annotated("string", "myfield")}})),
            "");
}

TEST(XMcpHeaderParams, RejectsNonPrimitiveAndNumberTypes) {
  for (const char* type : {"object", "array", "null", "number"}) {
    std::string message = rejection(tool_with({{"p", annotated(type, "P")}}));
    EXPECT_EQ(message, std::string("tool \"t\": property \"p\": x-mcp-header \"P\" is on a "
                                   "property of type \"") +
                           type + "\" (only string, integer and boolean may be mirrored)");
  }
  EXPECT_NE(rejection(tool_with({{"p", {{"x-mcp-header", "P"}}}})), "");  // no type at all
  EXPECT_NE(rejection(tool_with(
                {{"p", {{"type", json::array({"string", "integer"})}, {"x-mcp-header", "P"}}}})),
            "");
}

TEST(XMcpHeaderParams, RejectsAnnotationsThatAreNotReachableThroughPropertiesAlone) {
  const json inner = annotated("string", "Inner");
  struct Case {
    const char* what;
    json schema;
    const char* at;
  };
  const Case cases[] = {
      {"items", {{"type", "array"}, {"items", inner}}, "inputSchema/properties/p/items"},
      {"prefixItems",
       {{"type", "array"}, {"prefixItems", json::array({inner})}},
       "inputSchema/properties/p/prefixItems/0"},
      {"additionalProperties",
       {{"type", "object"}, {"additionalProperties", inner}},
       "inputSchema/properties/p/additionalProperties"},
      {"allOf", {{"allOf", json::array({inner})}}, "inputSchema/properties/p/allOf/0"},
      {"anyOf",
       {{"anyOf", json::array({{{"type", "null"}}, inner})}},
       "inputSchema/properties/p/anyOf/1"},
      {"oneOf", {{"oneOf", json::array({inner})}}, "inputSchema/properties/p/oneOf/0"},
      {"not", {{"not", inner}}, "inputSchema/properties/p/not"},
      {"if", {{"if", inner}}, "inputSchema/properties/p/if"},
      {"then", {{"then", inner}}, "inputSchema/properties/p/then"},
      {"else", {{"else", inner}}, "inputSchema/properties/p/else"},
      {"$defs", {{"$defs", {{"d", inner}}}}, "inputSchema/properties/p/$defs/d"},
      {"properties under items",
       {{"type", "array"}, {"items", {{"type", "object"}, {"properties", {{"q", inner}}}}}},
       "inputSchema/properties/p/items/properties/q"},
  };
  for (const Case& c : cases) {
    std::string message = rejection(tool_with({{"p", c.schema}}));
    EXPECT_EQ(message, std::string("tool \"t\": x-mcp-header \"Inner\" at \"") + c.at +
                           "\" is not on a property reachable from the schema root through "
                           "properties alone (not under items, composition, conditional or "
                           "reference keywords, nor on the root itself)")
        << c.what;
  }
}

TEST(XMcpHeaderParams, RejectsAnnotationsUnderRootKeywordsAndOnTheRootItself) {
  json defs = {{"name", "t"},
               {"inputSchema",
                {{"type", "object"},
                 {"$defs", {{"r", annotated("string", "R")}}},
                 {"properties", {{"r", {{"$ref", "#/$defs/r"}}}}}}}};
  EXPECT_NE(rejection(defs).find("at \"inputSchema/$defs/r\""), std::string::npos);
  json root = {{"name", "t"}, {"inputSchema", {{"type", "object"}, {"x-mcp-header", "Root"}}}};
  EXPECT_NE(rejection(root).find("at \"inputSchema\""), std::string::npos);
  json any_of = {{"name", "t"},
                 {"inputSchema",
                  {{"type", "object"},
                   {"anyOf", json::array({{{"properties", {{"a", annotated("string", "A")}}}}})}}}};
  EXPECT_NE(rejection(any_of).find("at \"inputSchema/anyOf/0/properties/a\""), std::string::npos);
}

TEST(XMcpHeaderParams, AHostileNameIsQuotedAndCutInTheMessage) {
  std::string long_name(500, 'x');
  std::string message =
      rejection(tool_with({{"v", annotated("string", long_name + "\n")}}, "evil\ntool"));
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_LT(message.size(), 300u);
  EXPECT_NE(message.find("tool \"evil\\ntool\""), std::string::npos) << message;
}

// --- Mcp-Param-* ----------------------------------------------------------------------

TEST(McpParamHeaders, MirrorsEachPresentValueEncoded) {
  auto params = x_mcp_header_params(tool_with({{"region", annotated("string", "Region")},
                                               {"priority", annotated("integer", "Priority")},
                                               {"debug", annotated("boolean", "Debug")},
                                               {"greet", annotated("string", "Greeting")},
                                               {"empty", annotated("string", "EmptyVal")},
                                               {"method", annotated("string", "Method")}}));
  ASSERT_TRUE(params.ok()) << params.error();
  json args = {{"region", "us-west1"},   {"priority", 42}, {"debug", true},
               {"greet", "Hello, 世界"}, {"empty", ""},    {"method", "test-method"},
               {"query", "SELECT 1"}};
  HeaderList expected = {{"Mcp-Param-Debug", "true"},
                         {"Mcp-Param-EmptyVal", ""},
                         {"Mcp-Param-Greeting", "=?base64?SGVsbG8sIOS4lueVjA==?="},
                         {"Mcp-Param-Method", "test-method"},
                         {"Mcp-Param-Priority", "42"},
                         {"Mcp-Param-Region", "us-west1"}};
  EXPECT_EQ(mcp_param_headers(*params, args), expected);
}

TEST(McpParamHeaders, OmitsAbsentNullAndUnencodableValues) {
  auto params = x_mcp_header_params(tool_with({{"region", annotated("string", "Region")},
                                               {"priority", annotated("integer", "Priority")},
                                               {"verbose", annotated("boolean", "Verbose")}}));
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(mcp_param_headers(*params, {{"verbose", nullptr}, {"priority", 9007199254740992LL}}),
            HeaderList{});
  EXPECT_EQ(mcp_param_headers(*params, {{"region", json::object()}}), HeaderList{});
  EXPECT_EQ(mcp_param_headers(*params, json::object()), HeaderList{});
  EXPECT_EQ(mcp_param_headers(*params, nullptr), HeaderList{});  // no arguments at all
  EXPECT_EQ(mcp_param_headers(*params, {{"region", "eu"}, {"verbose", nullptr}}),
            (HeaderList{{"Mcp-Param-Region", "eu"}}));
}

TEST(McpParamHeaders, ReadsTheValueAtTheNestedPath) {
  auto params = x_mcp_header_params(tool_with(
      {{"target", {{"type", "object"}, {"properties", {{"zone", annotated("string", "Zone")}}}}}}));
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(mcp_param_headers(*params, {{"target", {{"zone", "z1"}}}}),
            (HeaderList{{"Mcp-Param-Zone", "z1"}}));
  EXPECT_EQ(mcp_param_headers(*params, {{"zone", "top-level is not the path"}}), HeaderList{});
  EXPECT_EQ(mcp_param_headers(*params, {{"target", "not an object"}}), HeaderList{});
}

// --- standard headers -----------------------------------------------------------------

TEST(ModernRequestHeaders, VersionAndMethodOnEveryRequest) {
  EXPECT_EQ(modern_request_headers("2026-07-28", "tools/list", json::object()),
            (HeaderList{{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/list"}}));
  EXPECT_EQ(
      modern_request_headers("2026-07-28", "server/discover", nullptr),
      (HeaderList{{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "server/discover"}}));
}

TEST(ModernRequestHeaders, NameForToolsCallAndPromptsGetUriForResourcesRead) {
  EXPECT_EQ(modern_request_headers("2026-07-28", "tools/call", {{"name", "get_weather"}}),
            (HeaderList{{"MCP-Protocol-Version", "2026-07-28"},
                        {"Mcp-Method", "tools/call"},
                        {"Mcp-Name", "get_weather"}}));
  EXPECT_EQ(modern_request_headers("2026-07-28", "prompts/get", {{"name", "p"}}).back(),
            (std::pair<std::string, std::string>{"Mcp-Name", "p"}));
  EXPECT_EQ(
      modern_request_headers("2026-07-28", "resources/read",
                             {{"uri", "file:///projects/myapp/config.json"}, {"name", "x"}})
          .back(),
      (std::pair<std::string, std::string>{"Mcp-Name", "file:///projects/myapp/config.json"}));
  // Other methods never carry Mcp-Name, even with a name in params.
  EXPECT_EQ(modern_request_headers("2026-07-28", "subscriptions/listen", {{"name", "x"}}).size(),
            2u);
}

TEST(ModernRequestHeaders, NameIsEncodedLikeAParameterValue) {
  EXPECT_EQ(modern_request_headers("2026-07-28", "tools/call", {{"name", "天気"}}).back().second,
            "=?base64?5aSp5rCX?=");
  EXPECT_EQ(modern_request_headers("2026-07-28", "resources/read", {{"uri", "file:///a b "}})
                .back()
                .second,
            "=?base64?ZmlsZTovLy9hIGIg?=");
  EXPECT_EQ(
      modern_request_headers("2026-07-28", "tools/call", {{"name", "=?base64?x?="}}).back().second,
      "=?base64?PT9iYXNlNjQ/eD89?=");
  // A missing or non-string name: no Mcp-Name.
  EXPECT_EQ(modern_request_headers("2026-07-28", "tools/call", json::object()).size(), 2u);
  EXPECT_EQ(modern_request_headers("2026-07-28", "tools/call", {{"name", 5}}).size(), 2u);
}

}  // namespace
}  // namespace mcp_headers_test
}  // namespace mcprt
