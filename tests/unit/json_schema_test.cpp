// The JSON Schema 2020-12 validator (mcprt/json_schema.hpp): each keyword, the paths and
// messages of failures, and hostile schemas and values. The official suite's cases run in
// json_schema_suite_test.cpp.

#include "mcprt/json_schema.hpp"

#include <gtest/gtest.h>

#include <string>

namespace mcprt {
namespace json_schema_test {
namespace {

// "" when valid, else "<kind>|<instance path>|<keyword path>|<message>".
std::string check(const json& schema, const json& value, const SchemaLimits& limits = {}) {
  auto e = validate_json_schema(schema, value, limits);
  if (!e) return "";
  const char* kind = e->kind == SchemaErrorKind::mismatch     ? "mismatch"
                     : e->kind == SchemaErrorKind::bad_schema ? "bad_schema"
                                                              : "limit";
  return std::string(kind) + "|" + e->instance_path + "|" + e->keyword_path + "|" + e->message;
}
bool valid(const json& schema, const json& value) { return !validate_json_schema(schema, value); }

TEST(JsonSchema, TypeNamesTheExpectedAndActualTypeAtThePath) {
  json schema = json::parse(R"({"type":"object","properties":{"count":{"type":"integer"}}})");
  EXPECT_EQ(check(schema, json::parse(R"({"count":"3"})")),
            "mismatch|/count|/properties/count/type|expected integer, got string");
  EXPECT_EQ(to_string(*validate_json_schema(schema, json::parse(R"({"count":"3"})"))),
            "/count: expected integer, got string");
  EXPECT_EQ(to_string(*validate_json_schema(schema, json::array())),
            "(root): expected object, got array");
}

TEST(JsonSchema, IntegerIsANumberWithoutFraction) {
  json schema = {{"type", "integer"}};
  EXPECT_TRUE(valid(schema, 3));
  EXPECT_TRUE(valid(schema, 3.0));
  EXPECT_TRUE(valid(schema, 18446744073709551615ULL));
  EXPECT_FALSE(valid(schema, 3.5));
  EXPECT_EQ(check(schema, 3.5), "mismatch||/type|expected integer, got number");
  EXPECT_TRUE(valid({{"type", "number"}}, 3));
  EXPECT_FALSE(valid({{"type", "number"}}, "3"));
}

TEST(JsonSchema, TypeArrayAcceptsAnyListedType) {
  json schema = {{"type", {"string", "null"}}};
  EXPECT_TRUE(valid(schema, nullptr));
  EXPECT_TRUE(valid(schema, "x"));
  EXPECT_EQ(check(schema, 1), "mismatch||/type|expected string or null, got integer");
}

TEST(JsonSchema, EnumAndConstCompareNumbersByValue) {
  EXPECT_TRUE(valid({{"enum", {1, "a", nullptr}}}, 1.0));
  EXPECT_FALSE(valid({{"enum", {1, "a", nullptr}}}, "b"));
  EXPECT_FALSE(valid({{"enum", {false}}}, 0));
  EXPECT_TRUE(valid({{"const", {{"a", {1, 2}}}}}, json::parse(R"({"a":[1.0,2]})")));
  EXPECT_EQ(check({{"const", "x"}}, "y"), "mismatch||/const|value \"y\" is not the constant \"x\"");
}

TEST(JsonSchema, NumericBoundsAndMultipleOf) {
  EXPECT_TRUE(valid({{"maximum", 3}}, 3));
  EXPECT_FALSE(valid({{"maximum", 3}}, 3.5));
  EXPECT_FALSE(valid({{"exclusiveMaximum", 3}}, 3));
  EXPECT_TRUE(valid({{"minimum", -2}}, -2));
  EXPECT_FALSE(valid({{"exclusiveMinimum", -2}}, -2.0));
  EXPECT_TRUE(valid({{"minimum", 0}}, 18446744073709551615ULL));
  EXPECT_FALSE(valid({{"maximum", -1}}, 18446744073709551615ULL));
  EXPECT_TRUE(valid({{"multipleOf", 0.0001}}, 0.0075));
  EXPECT_FALSE(valid({{"multipleOf", 0.0001}}, 0.00751));
  EXPECT_TRUE(valid({{"multipleOf", 3}}, -9));
  EXPECT_FALSE(valid({{"multipleOf", 3}}, 10));
  EXPECT_TRUE(valid({{"multipleOf", 0.5}}, 1e308));
  EXPECT_TRUE(valid({{"maximum", 3}}, "not a number"));  // numeric keywords ignore other types
  EXPECT_EQ(check({{"maximum", 3}}, 4), "mismatch||/maximum|expected at most 3, got 4");
}

TEST(JsonSchema, StringLengthCountsCodePoints) {
  EXPECT_TRUE(valid({{"maxLength", 2}}, "\xC3\xA9\xF0\x9F\x98\x80"));  // é + an emoji: 2
  EXPECT_FALSE(valid({{"maxLength", 1}}, "\xC3\xA9\xF0\x9F\x98\x80"));
  EXPECT_FALSE(valid({{"minLength", 3}}, "\xC3\xA9\xF0\x9F\x98\x80"));
  EXPECT_TRUE(valid({{"minLength", 2.0}}, "ab"));
  EXPECT_EQ(check({{"minLength", 3}}, "ab"),
            "mismatch||/minLength|expected at least 3 characters, got 2");
}

TEST(JsonSchema, PatternIsAnUnanchoredSearch) {
  EXPECT_TRUE(valid({{"pattern", "b+c"}}, "abbbcd"));
  EXPECT_FALSE(valid({{"pattern", "^b+c"}}, "abbbcd"));
  EXPECT_TRUE(valid({{"pattern", "^[a-z0-9-]{3,8}$"}}, "abc-12"));
  EXPECT_FALSE(valid({{"pattern", "^[a-z0-9-]{3,8}$"}}, "abc_12"));
  EXPECT_FALSE(valid({{"pattern", "^[a-z0-9-]{3,8}$"}}, "ab"));
  EXPECT_TRUE(valid({{"pattern", "^(foo|ba(r|z))+$"}}, "foobazbar"));
  EXPECT_FALSE(valid({{"pattern", "^(foo|ba(r|z))+$"}}, "foobaq"));
  EXPECT_TRUE(valid({{"pattern", "^\\d{4}-\\d{2}-\\d{2}$"}}, "2026-12-03"));
  EXPECT_TRUE(valid({{"pattern", "^\\w+@\\w+\\.com$"}}, "a_b@c.com"));
  EXPECT_FALSE(valid({{"pattern", "^\\S+$"}}, "a b"));
  EXPECT_TRUE(valid({{"pattern", "^[^\\s]+$"}}, "ab"));
  EXPECT_TRUE(valid({{"pattern", "^.$"}}, "\xC3\xA9"));  // one code point, two bytes
  EXPECT_TRUE(valid({{"pattern", "^a.*?b$"}}, "axxbxb"));
  EXPECT_TRUE(valid({{"pattern", "\\bcat\\b"}}, "a cat."));
  EXPECT_FALSE(valid({{"pattern", "\\bcat\\b"}}, "concat"));
  EXPECT_TRUE(valid({{"pattern", "^(?:ab)?c$"}}, "c"));
  EXPECT_TRUE(valid({{"pattern", "a{,2}"}}, "a{,2}"));   // not a quantifier: literal braces
  EXPECT_TRUE(valid({{"pattern", "^(a*)*$"}}, "aaaa"));  // an empty iteration ends the loop
  EXPECT_TRUE(valid({{"pattern", "x"}}, 5));             // only strings are checked
  EXPECT_EQ(check({{"pattern", "^a"}}, "b"),
            "mismatch||/pattern|\"b\" does not match the pattern \"^a\"");
}

TEST(JsonSchema, UnsupportedPatternIsABadSchemaNotAPass) {
  EXPECT_EQ(
      check({{"pattern", "(a)\\1"}}, "aa"),
      "bad_schema||/pattern|unsupported pattern \"(a)\\1\": backreferences are not supported");
  EXPECT_EQ(check({{"pattern", "a(?=b)"}}, "ab").substr(0, 11), "bad_schema|");
  EXPECT_EQ(check({{"pattern", "\\p{L}"}}, "a").substr(0, 11), "bad_schema|");
  EXPECT_EQ(check({{"pattern", "(ab"}}, "a").substr(0, 11), "bad_schema|");
  EXPECT_EQ(check({{"pattern", "*a"}}, "a").substr(0, 11), "bad_schema|");
}

TEST(JsonSchema, CatastrophicPatternStopsAtTheStepLimit) {
  std::string text(40, 'a');
  text += "!";
  std::string r = check({{"pattern", "^(a|a)*$"}}, text);
  EXPECT_EQ(r.substr(0, 6), "limit|") << r;
  EXPECT_NE(r.find("took more than 100000 steps"), std::string::npos) << r;
}

TEST(JsonSchema, LongStringsMatchWithoutDeepRecursion) {
  std::string text(200000, 'a');
  EXPECT_TRUE(valid({{"pattern", "^a*$"}}, text));
  EXPECT_TRUE(valid({{"pattern", "^[a-z]+$"}}, text));
  EXPECT_FALSE(valid({{"pattern", "^a*b$"}}, text + "c"));
}

TEST(JsonSchema, ArraySizeAndUniqueness) {
  EXPECT_FALSE(valid({{"maxItems", 1}}, {1, 2}));
  EXPECT_FALSE(valid({{"minItems", 3}}, {1, 2}));
  EXPECT_EQ(check({{"uniqueItems", true}}, {1, {{"a", 1}}, 2, {{"a", 1.0}}}),
            "mismatch||/uniqueItems|items 1 and 3 are equal");
  EXPECT_TRUE(valid({{"uniqueItems", true}}, {1, "1", true, nullptr, json::array({1})}));
  EXPECT_TRUE(valid({{"uniqueItems", false}}, {1, 1}));
  json big = json::array();
  for (int i = 0; i < 1000; ++i) big.push_back(i);
  EXPECT_TRUE(valid({{"uniqueItems", true}}, big));
  big.push_back(999.0);
  EXPECT_EQ(check({{"uniqueItems", true}}, big),
            "mismatch||/uniqueItems|items 999 and 1000 are equal");
}

TEST(JsonSchema, UniqueItemsBeyondTheStepBudgetIsALimitNotAPass) {
  json big = json::array();
  for (int i = 0; i < 3000; ++i) big.push_back(i);  // 4.5 million pairs
  EXPECT_EQ(check({{"uniqueItems", true}}, big),
            "limit||/uniqueItems|uniqueItems over 3000 items took more than 2000000 steps");
  SchemaLimits roomy;
  roomy.max_steps = 5'000'000;
  EXPECT_EQ(check({{"uniqueItems", true}}, big, roomy), "");
}

TEST(JsonSchema, PrefixItemsThenItemsForTheRest) {
  json schema = json::parse(
      R"({"prefixItems":[{"type":"string"},{"type":"integer"}],"items":{"type":"boolean"}})");
  EXPECT_TRUE(valid(schema, json::parse(R"(["a",1,true,false])")));
  EXPECT_TRUE(valid(schema, json::parse(R"(["a"])")));
  EXPECT_EQ(check(schema, json::parse(R"(["a","b"])")),
            "mismatch|/1|/prefixItems/1/type|expected integer, got string");
  EXPECT_EQ(check(schema, json::parse(R"(["a",1,null])")),
            "mismatch|/2|/items/type|expected boolean, got null");
  EXPECT_FALSE(valid({{"prefixItems", {{{"type", "string"}}}}, {"items", false}}, {"a", 1}));
}

TEST(JsonSchema, ContainsWithMinAndMaxContains) {
  json schema = json::parse(R"({"contains":{"type":"integer"},"minContains":2,"maxContains":3})");
  EXPECT_TRUE(valid(schema, {1, "a", 2}));
  EXPECT_EQ(check(schema, {1, "a"}),
            "mismatch||/contains|expected at least 2 item(s) matching contains, got 1");
  EXPECT_FALSE(valid(schema, {1, 2, 3, 4}));
  EXPECT_TRUE(valid(json::parse(R"({"contains":{"type":"integer"},"minContains":0})"), {"a"}));
  EXPECT_FALSE(valid({{"contains", {{"type", "integer"}}}}, json::array()));
}

TEST(JsonSchema, ObjectKeywords) {
  EXPECT_EQ(check({{"required", {"a", "b"}}}, {{"a", 1}}),
            "mismatch||/required|missing required property \"b\"");
  EXPECT_FALSE(valid({{"maxProperties", 1}}, {{"a", 1}, {"b", 2}}));
  EXPECT_FALSE(valid({{"minProperties", 1}}, json::object()));
  json dep = json::parse(R"({"dependentRequired":{"card":["billing"]}})");
  EXPECT_TRUE(valid(dep, {{"name", 1}}));
  EXPECT_EQ(check(dep, {{"card", 1}}),
            "mismatch||/dependentRequired|property \"card\" requires property \"billing\"");
  json ds = json::parse(R"({"dependentSchemas":{"card":{"required":["billing"]}}})");
  EXPECT_EQ(check(ds, {{"card", 1}}),
            "mismatch||/dependentSchemas/card/required|missing required property \"billing\"");
  json names = json::parse(R"({"propertyNames":{"maxLength":3}})");
  EXPECT_EQ(check(names, {{"abcd", 1}}),
            "mismatch|/abcd|/propertyNames|property name \"abcd\" does not match propertyNames");
}

TEST(JsonSchema, AdditionalPropertiesSeesPropertiesAndPatterns) {
  json schema = json::parse(
      R"({"properties":{"id":{"type":"integer"}},"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false})");
  EXPECT_TRUE(valid(schema, json::parse(R"({"id":1,"x-a":"s"})")));
  EXPECT_EQ(check(schema, json::parse(R"({"id":1,"x-a":2})")),
            "mismatch|/x-a|/patternProperties/^x-/type|expected string, got integer");
  EXPECT_EQ(check(schema, json::parse(R"({"id":1,"other":2})")),
            "mismatch|/other|/additionalProperties|property \"other\" is not allowed");
  json typed = json::parse(R"({"additionalProperties":{"type":"number"}})");
  EXPECT_EQ(check(typed, json::parse(R"({"a/b~":"s"})")),
            "mismatch|/a~1b~0|/additionalProperties/type|expected number, got string");
}

TEST(JsonSchema, Combinators) {
  json all = json::parse(R"({"allOf":[{"type":"integer"},{"minimum":2}]})");
  EXPECT_EQ(check(all, 1), "mismatch||/allOf/1/minimum|expected at least 2, got 1");
  json any = json::parse(R"({"anyOf":[{"type":"string"},{"type":"null"}]})");
  EXPECT_TRUE(valid(any, nullptr));
  EXPECT_EQ(check(any, 1),
            "mismatch||/anyOf|value matches none of the anyOf schemas (schema 0: (root): expected "
            "string, got integer)");
  json one = json::parse(R"({"oneOf":[{"type":"integer"},{"minimum":2}]})");
  EXPECT_TRUE(valid(one, 1));
  EXPECT_TRUE(valid(one, 2.5));
  EXPECT_EQ(check(one, 3),
            "mismatch||/oneOf|value matches oneOf schemas 0 and 1, expected exactly one");
  EXPECT_EQ(check({{"not", {{"type", "string"}}}}, "s"),
            "mismatch||/not|value must not match the schema in not");
  EXPECT_TRUE(valid({{"not", {{"type", "string"}}}}, 1));
}

TEST(JsonSchema, IfThenElse) {
  json schema = json::parse(
      R"({"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]}})");
  EXPECT_TRUE(valid(schema, {{"kind", "a"}, {"a", 1}}));
  EXPECT_EQ(check(schema, {{"kind", "a"}}),
            "mismatch||/then/required|missing required property \"a\"");
  EXPECT_EQ(check(schema, {{"kind", "c"}}),
            "mismatch||/else/required|missing required property \"b\"");
  EXPECT_TRUE(valid({{"then", false}}, 1));  // then without if is ignored
}

TEST(JsonSchema, BooleanSchemas) {
  EXPECT_TRUE(valid(true, {{"anything", 1}}));
  EXPECT_EQ(check(false, 1), "mismatch|||no value is allowed here (the schema is false)");
  EXPECT_EQ(check({{"properties", {{"gone", false}}}}, {{"gone", 1}}),
            "mismatch|/gone|/properties/gone|no value is allowed here (the schema is false)");
}

TEST(JsonSchema, RefToDefsPointerRootAndAnchor) {
  json schema = json::parse(R"({
    "$defs": {"item": {"type": "object", "properties": {"name": {"type": "string"}}},
              "tagged": {"$anchor": "tag", "type": "string"}},
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
                   "tag": {"$ref": "#tag"},
                   "child": {"$ref": "#"}}})");
  EXPECT_TRUE(
      valid(schema, json::parse(R"({"items":[{"name":"a"}],"tag":"t","child":{"child":{}}})")));
  EXPECT_EQ(check(schema, json::parse(R"({"items":[{"name":"a"},{"name":2}]})")),
            "mismatch|/items/1/name|/properties/items/items/$ref/properties/name/type|expected "
            "string, got integer");
  EXPECT_EQ(check(schema, json::parse(R"({"tag":1})")),
            "mismatch|/tag|/properties/tag/$ref/type|expected string, got integer");
  EXPECT_FALSE(valid(schema, json::parse(R"({"child":{"child":{"tag":1}}})")));
}

TEST(JsonSchema, RefSiblingsApplyToo) {  // 2020-12: $ref is one keyword among others
  json schema = json::parse(R"({"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n","minimum":5})");
  EXPECT_TRUE(valid(schema, 6));
  EXPECT_FALSE(valid(schema, 4));
}

TEST(JsonSchema, RefToEmbeddedIdResolvesAgainstItsBase) {
  json schema = json::parse(R"({
    "$id": "https://example.com/root.json",
    "$defs": {"a": {"$id": "things/a.json", "type": "integer"},
              "b": {"$id": "https://other.example/b", "$defs": {"c": {"$anchor": "c", "type": "string"}}}},
    "properties": {"x": {"$ref": "things/a.json"},
                   "y": {"$ref": "https://example.com/things/a.json"},
                   "z": {"$ref": "https://other.example/b#c"},
                   "w": {"$ref": "root.json#/$defs/a"}}})");
  EXPECT_TRUE(valid(schema, json::parse(R"({"x":1,"y":2,"z":"s","w":3})")));
  EXPECT_FALSE(valid(schema, json::parse(R"({"x":"1"})")));
  EXPECT_FALSE(valid(schema, json::parse(R"({"y":"1"})")));
  EXPECT_FALSE(valid(schema, json::parse(R"({"z":1})")));
  EXPECT_FALSE(valid(schema, json::parse(R"({"w":"1"})")));
}

TEST(JsonSchema, UnresolvableRefIsABadSchema) {
  EXPECT_EQ(check({{"$ref", "#/$defs/missing"}}, 1),
            "bad_schema||/$ref|$ref \"#/$defs/missing\" does not resolve to a schema");
  EXPECT_EQ(check({{"$ref", "https://example.com/remote.json"}}, 1),
            "bad_schema||/$ref|$ref \"https://example.com/remote.json\" does not resolve (remote "
            "references are not fetched)");
}

TEST(JsonSchema, RefCycleIsReportedNotFollowed) {
  EXPECT_EQ(check({{"$ref", "#"}}, 1),
            "bad_schema||/$ref/$ref|$ref \"#\" is a cycle that never reaches the value");
  json mutual = json::parse(
      R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})");
  EXPECT_EQ(check(mutual, 1).substr(0, 11), "bad_schema|");
  // A recursive schema that descends into the value is not a cycle.
  json tree = json::parse(
      R"({"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}}})");
  EXPECT_TRUE(valid(tree, json::parse(R"({"kids":[{"kids":[{}]},{}]})")));
}

TEST(JsonSchema, DeepValueStopsAtTheDepthLimit) {
  json tree = json::parse(R"({"type":"array","items":{"$ref":"#"}})");
  json value = json::array();
  for (int i = 0; i < 200; ++i) value = json::array({value});
  std::string r = check(tree, value);
  EXPECT_EQ(r.substr(0, 6), "limit|") << r;
  EXPECT_NE(r.find("nested deeper than 128 levels"), std::string::npos);
  SchemaLimits roomy;
  roomy.max_depth = 1000;
  EXPECT_TRUE(valid(tree, json::array({json::array({json::array()})})));
  EXPECT_EQ(check(tree, value, roomy), "");
}

TEST(JsonSchema, DeepSchemaStopsAtTheDepthLimit) {
  json schema = true;
  for (int i = 0; i < 200; ++i) schema = json{{"allOf", json::array({schema})}};
  EXPECT_EQ(check(schema, 1).substr(0, 6), "limit|");
  EXPECT_EQ(check_json_schema(schema)->kind, SchemaErrorKind::limit);
}

TEST(JsonSchema, ExponentialSchemaStopsAtTheStepLimit) {
  // Each level doubles the work: 2^40 evaluations without the step limit.
  json schema = json::parse(R"({"$defs":{"l0":{"type":"integer"}}})");
  for (int i = 1; i <= 40; ++i) {
    std::string prev = "#/$defs/l" + std::to_string(i - 1);
    schema["$defs"]["l" + std::to_string(i)] =
        json{{"anyOf", {{{"$ref", prev}, {"minimum", 100}}, {{"$ref", prev}}}}};
  }
  schema["$ref"] = "#/$defs/l40";
  SchemaLimits limits;
  limits.max_steps = 100000;
  std::string r = check(schema, 1, limits);
  EXPECT_EQ(r.substr(0, 6), "limit|") << r;
  EXPECT_EQ(r.substr(r.rfind('|')), "|validation took more than 100000 steps") << r;
}

TEST(JsonSchema, HugeArrayValidatesItemByItem) {
  json schema = json::parse(
      R"({"type":"array","items":{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}})");
  json value = json::array();
  for (int i = 0; i < 20000; ++i) value.push_back({{"id", i}});
  EXPECT_TRUE(valid(schema, value));
  value[19999]["id"] = "x";
  EXPECT_EQ(check(schema, value),
            "mismatch|/19999/id|/items/properties/id/type|expected integer, got string");
}

TEST(JsonSchema, KeywordOfTheWrongTypeIsABadSchema) {
  EXPECT_EQ(check({{"type", "int"}}, 1), "bad_schema||/type|type unknown type name");
  EXPECT_EQ(check({{"minLength", -1}}, "a"),
            "bad_schema||/minLength|minLength must be a non-negative integer");
  EXPECT_EQ(check({{"required", "a"}}, json::object()),
            "bad_schema||/required|required must be an array of strings");
  EXPECT_EQ(check({{"properties", {{"a", 3}}}}, json::object()),
            "bad_schema||/properties|properties must be an object of schemas");
  EXPECT_EQ(check({{"multipleOf", 0}}, 1),
            "bad_schema||/multipleOf|multipleOf must be a number greater than 0");
  EXPECT_EQ(check(json::array(), 1),
            "bad_schema|||a schema must be an object or a boolean, got array");
}

TEST(JsonSchema, UnknownKeywordsAndFormatAreIgnored) {
  EXPECT_TRUE(
      valid(json::parse(R"({"format":"email","x-custom":{"a":1},"title":"t"})"), "not an email"));
}

TEST(JsonSchema, UnevaluatedPropertiesSeesThroughApplicators) {
  json schema = json::parse(R"({
    "properties": {"a": true},
    "allOf": [{"properties": {"b": true}}],
    "anyOf": [{"properties": {"c": {"type": "integer"}}, "required": ["c"]}, {"properties": {"d": true}}],
    "if": {"properties": {"kind": {"const": "x"}}, "required": ["kind"]},
    "then": {"properties": {"x": true}},
    "dependentSchemas": {"a": {"properties": {"e": true}}},
    "$defs": {"f": {"properties": {"f": true}}},
    "$ref": "#/$defs/f",
    "unevaluatedProperties": false})");
  EXPECT_TRUE(
      valid(schema, json::parse(R"({"a":1,"b":1,"c":1,"d":1,"kind":"x","x":1,"e":1,"f":1})")));
  EXPECT_EQ(check(schema, json::parse(R"({"a":1,"z":1})")),
            "mismatch|/z|/unevaluatedProperties|property \"z\" is not allowed (unevaluated)");
  // c failed its anyOf branch: that branch's annotations do not count.
  EXPECT_FALSE(valid(schema, json::parse(R"({"c":"s","d":1})")));
  // x is evaluated only when the if passed; e only when a is present.
  EXPECT_FALSE(valid(schema, json::parse(R"({"kind":"y","x":1})")));
  EXPECT_FALSE(valid(schema, json::parse(R"({"e":1})")));
  // not's annotations never count.
  EXPECT_FALSE(valid(
      json::parse(R"({"not":{"not":{"properties":{"a":true}}},"unevaluatedProperties":false})"),
      {{"a", 1}}));
  // additionalProperties evaluates everything it sees.
  EXPECT_TRUE(valid(json::parse(R"({"additionalProperties":true,"unevaluatedProperties":false})"),
                    {{"q", 1}}));
  json typed =
      json::parse(R"({"properties":{"a":true},"unevaluatedProperties":{"type":"string"}})");
  EXPECT_TRUE(valid(typed, {{"a", 1}, {"b", "s"}}));
  EXPECT_EQ(check(typed, {{"b", 1}}),
            "mismatch|/b|/unevaluatedProperties/type|expected string, got integer");
}

TEST(JsonSchema, UnevaluatedItemsSeesPrefixItemsItemsAndContains) {
  json schema = json::parse(
      R"({"prefixItems":[true],"allOf":[{"prefixItems":[true,true]}],"unevaluatedItems":false})");
  EXPECT_TRUE(valid(schema, {1, 2}));
  EXPECT_EQ(check(schema, {1, 2, 3}),
            "mismatch|/2|/unevaluatedItems|item 2 is not allowed (unevaluated)");
  json contains =
      json::parse(R"({"contains":{"type":"string"},"unevaluatedItems":{"type":"integer"}})");
  EXPECT_TRUE(valid(contains, {"a", 1, "b"}));
  EXPECT_FALSE(valid(contains, {"a", 1.5}));
  EXPECT_TRUE(valid(json::parse(R"({"anyOf":[{"items":true}],"unevaluatedItems":false})"), {1, 2}));
}

TEST(JsonSchema, CheckFindsBrokenPartsThatAValueNeverReaches) {
  json schema =
      json::parse(R"({"type":"object","properties":{"rare":{"anyOf":[{"$ref":"#/$defs/nope"}]}}})");
  EXPECT_TRUE(valid(schema, json::object()));  // the broken branch is never evaluated
  auto e = check_json_schema(schema);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, SchemaErrorKind::bad_schema);
  EXPECT_EQ(e->keyword_path, "/properties/rare/anyOf/0/$ref");
  EXPECT_EQ(e->message, "$ref \"#/$defs/nope\" does not resolve to a schema");
  EXPECT_EQ(check_json_schema(json::parse(R"j({"patternProperties":{"(?<n>a)":true}})j"))->kind,
            SchemaErrorKind::bad_schema);
  EXPECT_EQ(check_json_schema(json::parse(R"({"$defs":{"x":{"minimum":"1"}}})"))->keyword_path,
            "/$defs/x/minimum");
  EXPECT_FALSE(check_json_schema(json::parse(R"({
    "$id":"https://e.com/s","$defs":{"a":{"$id":"a","$ref":"#/$defs/b","$defs":{"b":{"type":"string"}}}},
    "properties":{"x":{"$ref":"a"},"p":{"pattern":"^[a-z]+$"}}})")));
  EXPECT_FALSE(check_json_schema(true));
}

}  // namespace
}  // namespace json_schema_test
}  // namespace mcprt
