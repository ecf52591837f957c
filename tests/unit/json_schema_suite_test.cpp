// The validator against the official JSON-Schema-Test-Suite (Debian's json-schema-test-suite,
// installed by scripts/bootstrap; it ships draft3 to draft7, no draft2020-12): the draft-7
// files whose keywords mean the same in 2020-12, every case, except the groups listed below
// with their reason. Each file is one test that prints its pass rate
// ("[suite] draft7/type.json: 59/59") and fails if a single case regresses. The 2020-12-only
// keywords get cases of our own in the suite's format at the end.

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "mcprt/json_schema.hpp"

namespace mcprt {
namespace json_schema_suite_test {
namespace {

constexpr const char* kSuiteDir = "/usr/share/json-schema-test-suite/tests/draft7/";

struct SuiteFile {
  const char* file;  // under kSuiteDir
  // Groups (by description) not run, and why: what differs in 2020-12 or is not supported.
  std::vector<const char*> excluded_groups;
  const char* reason = "";
};

// Not run at all (whole files):
//   additionalItems.json  draft-7's array-form items + additionalItems; 2020-12 has prefixItems
//                         + items instead (own cases below)
//   dependencies.json     split into dependentRequired / dependentSchemas in 2019-09 (own cases)
//   definitions.json      validates against the remote draft-07 meta-schema (no fetching)
//   refRemote.json        remote $refs to http://localhost:1234 (no fetching)
//   optional/content.json, optional/ecmascript-regex.json (a `format: regex` case),
//   optional/format/*     annotations only in 2020-12 (the default), so not asserted
const std::vector<SuiteFile>& suite_files() {
  static const std::vector<SuiteFile> files = {
      {"additionalProperties.json", {}},
      {"allOf.json", {}},
      {"anyOf.json", {}},
      {"boolean_schema.json", {}},
      {"const.json", {}},
      {"contains.json", {}},
      {"default.json", {}},
      {"enum.json", {}},
      {"exclusiveMaximum.json", {}},
      {"exclusiveMinimum.json", {}},
      {"if-then-else.json", {}},
      {"items.json",
       {"an array of schemas for items", "items with boolean schemas"},
       "draft-7's array form of items (2020-12: prefixItems)"},
      {"maxItems.json", {}},
      {"maxLength.json", {}},
      {"maxProperties.json", {}},
      {"maximum.json", {}},
      {"minItems.json", {}},
      {"minLength.json", {}},
      {"minProperties.json", {}},
      {"minimum.json", {}},
      {"multipleOf.json", {}},
      {"not.json", {}},
      {"oneOf.json", {}},
      {"pattern.json", {}},
      {"patternProperties.json", {}},
      {"properties.json", {}},
      {"propertyNames.json", {}},
      {"ref.json",
       {"relative pointer ref to array", "ref overrides any sibling keywords",
        "remote ref, containing refs itself"},
       "array-form items; draft-7 ignores $ref's siblings (2020-12 applies them); the remote "
       "draft-07 meta-schema"},
      {"required.json", {}},
      {"type.json", {}},
      {"uniqueItems.json", {}},
      {"optional/bignum.json", {}},
      {"optional/zeroTerminatedFloats.json", {}},
  };
  return files;
}

struct Tally {
  int passed = 0;
  int total = 0;
  int excluded = 0;
  std::vector<std::string> failures;
};

void run_groups(const json& groups, const std::vector<const char*>& excluded, Tally& t) {
  for (const json& g : groups) {
    const std::string& description = g.at("description").get_ref<const std::string&>();
    bool skip = false;
    for (const char* x : excluded) skip = skip || description == x;
    for (const json& c : g.at("tests")) {
      if (skip) {
        ++t.excluded;
        continue;
      }
      ++t.total;
      auto e = validate_json_schema(g.at("schema"), c.at("data"));
      bool expected = c.at("valid").get<bool>();
      // A case passes only with the right answer for the right reason: a schema error or a
      // limit is never a pass, even where "invalid" was expected.
      if ((!e && expected) || (e && !expected && e->kind == SchemaErrorKind::mismatch)) {
        ++t.passed;
      } else {
        t.failures.push_back(description + " / " + c.at("description").get<std::string>() + ": " +
                             (e ? to_string(*e) : std::string("valid")));
      }
    }
  }
}

class JsonSchemaSuite : public ::testing::TestWithParam<SuiteFile> {};

TEST_P(JsonSchemaSuite, EveryCaseOfTheFilePasses) {
  const SuiteFile& f = GetParam();
  std::string path = std::string(kSuiteDir) + f.file;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path
                  << " (scripts/bootstrap installs json-schema-test-suite)";
  std::stringstream text;
  text << in.rdbuf();
  json groups = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(groups.is_array()) << path;
  Tally t;
  run_groups(groups, f.excluded_groups, t);
  std::cout << "[suite] draft7/" << f.file << ": " << t.passed << "/" << t.total;
  if (t.excluded > 0) std::cout << " (" << t.excluded << " excluded: " << f.reason << ")";
  std::cout << "\n";
  EXPECT_GT(t.total, 0);
  EXPECT_EQ(t.passed, t.total);
  for (const std::string& failure : t.failures) ADD_FAILURE() << f.file << ": " << failure;
}

std::string suite_test_name(const ::testing::TestParamInfo<SuiteFile>& info) {
  std::string name;
  for (const char* p = info.param.file; *p && *p != '.'; ++p) {
    name += (std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_');
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Draft7, JsonSchemaSuite, ::testing::ValuesIn(suite_files()),
                         suite_test_name);

// 2020-12 keywords draft 7 does not have, in the suite's format.
constexpr const char* kOwnCases = R"json([
  {"description": "prefixItems with items for the rest",
   "schema": {"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "boolean"}},
   "tests": [
     {"description": "matching prefix and rest", "data": [1, "a", true, false], "valid": true},
     {"description": "shorter than the prefix", "data": [1], "valid": true},
     {"description": "wrong prefix item", "data": ["a", "a"], "valid": false},
     {"description": "wrong rest item", "data": [1, "a", 3], "valid": false},
     {"description": "not an array", "data": {"0": "x"}, "valid": true}]},
  {"description": "prefixItems with items false",
   "schema": {"prefixItems": [{}, {}], "items": false},
   "tests": [
     {"description": "two items", "data": [1, 2], "valid": true},
     {"description": "three items", "data": [1, 2, 3], "valid": false}]},
  {"description": "$defs and $ref siblings",
   "schema": {"$defs": {"positive": {"type": "number", "exclusiveMinimum": 0}},
              "$ref": "#/$defs/positive", "maximum": 10},
   "tests": [
     {"description": "in range", "data": 5, "valid": true},
     {"description": "not positive", "data": 0, "valid": false},
     {"description": "sibling maximum applies", "data": 11, "valid": false}]},
  {"description": "$anchor",
   "schema": {"$defs": {"a": {"$anchor": "name", "type": "string"}}, "$ref": "#name"},
   "tests": [
     {"description": "string", "data": "x", "valid": true},
     {"description": "number", "data": 1, "valid": false}]},
  {"description": "dependentRequired",
   "schema": {"dependentRequired": {"bar": ["foo"], "quux": ["foo", "bar"]}},
   "tests": [
     {"description": "neither", "data": {}, "valid": true},
     {"description": "with dependency", "data": {"foo": 1, "bar": 2}, "valid": true},
     {"description": "missing dependency", "data": {"bar": 2}, "valid": false},
     {"description": "missing one of two", "data": {"foo": 1, "quux": 2}, "valid": false},
     {"description": "not an object", "data": ["bar"], "valid": true}]},
  {"description": "dependentSchemas",
   "schema": {"dependentSchemas": {"bar": {"properties": {"foo": {"type": "integer"}, "bar": {"type": "integer"}}},
                                   "baz": false}},
   "tests": [
     {"description": "valid", "data": {"foo": 1, "bar": 2}, "valid": true},
     {"description": "no dependency", "data": {"foo": "quux"}, "valid": true},
     {"description": "wrong type", "data": {"foo": "quux", "bar": 2}, "valid": false},
     {"description": "false dependent schema", "data": {"baz": 1}, "valid": false}]},
  {"description": "minContains and maxContains",
   "schema": {"contains": {"const": 1}, "minContains": 2, "maxContains": 3},
   "tests": [
     {"description": "two", "data": [1, 1, 2], "valid": true},
     {"description": "one", "data": [1, 2], "valid": false},
     {"description": "four", "data": [1, 1, 1, 1], "valid": false}]},
  {"description": "minContains 0",
   "schema": {"contains": {"const": 1}, "minContains": 0},
   "tests": [{"description": "none", "data": [2], "valid": true}]},
  {"description": "unevaluatedProperties with allOf, anyOf and if/then/else",
   "schema": {"type": "object", "properties": {"foo": {"type": "string"}},
              "allOf": [{"properties": {"bar": {"type": "string"}}}],
              "anyOf": [{"properties": {"baz": {"const": "baz"}}, "required": ["baz"]},
                        {"properties": {"qux": {"const": "qux"}}, "required": ["qux"]}],
              "if": {"properties": {"foo": {"const": "then"}}, "required": ["foo"]},
              "then": {"properties": {"t": true}}, "else": {"properties": {"e": true}},
              "unevaluatedProperties": false},
   "tests": [
     {"description": "all evaluated", "data": {"foo": "then", "bar": "b", "baz": "baz", "t": 1}, "valid": true},
     {"description": "else branch", "data": {"foo": "x", "qux": "qux", "e": 1}, "valid": true},
     {"description": "then property in else", "data": {"foo": "x", "qux": "qux", "t": 1}, "valid": false},
     {"description": "failed anyOf branch does not evaluate", "data": {"baz": "no", "qux": "qux"}, "valid": false},
     {"description": "extra", "data": {"qux": "qux", "extra": 1}, "valid": false}]},
  {"description": "unevaluatedProperties through $ref and dependentSchemas",
   "schema": {"$defs": {"r": {"properties": {"r": true}}}, "$ref": "#/$defs/r",
              "dependentSchemas": {"d": {"properties": {"dd": true}}},
              "properties": {"d": true}, "unevaluatedProperties": false},
   "tests": [
     {"description": "ref and dependent", "data": {"r": 1, "d": 1, "dd": 1}, "valid": true},
     {"description": "dependent without its trigger", "data": {"dd": 1}, "valid": false}]},
  {"description": "unevaluatedProperties is not fooled by not",
   "schema": {"not": {"not": {"properties": {"a": true}}}, "unevaluatedProperties": false},
   "tests": [{"description": "a", "data": {"a": 1}, "valid": false}]},
  {"description": "nested unevaluatedProperties sees the outer properties only from inside",
   "schema": {"properties": {"a": true}, "allOf": [{"unevaluatedProperties": false}]},
   "tests": [{"description": "a is unevaluated inside allOf", "data": {"a": 1}, "valid": false}]},
  {"description": "unevaluatedItems with prefixItems, items and contains",
   "schema": {"prefixItems": [{"type": "string"}], "allOf": [{"prefixItems": [true, {"type": "number"}]}],
              "contains": {"type": "boolean"}, "minContains": 0, "unevaluatedItems": false},
   "tests": [
     {"description": "all evaluated", "data": ["a", 1, true, false], "valid": true},
     {"description": "unevaluated item", "data": ["a", 1, null], "valid": false}]},
  {"description": "unevaluatedItems schema",
   "schema": {"prefixItems": [true], "unevaluatedItems": {"type": "integer"}},
   "tests": [
     {"description": "integers after the prefix", "data": ["x", 1, 2], "valid": true},
     {"description": "a string after the prefix", "data": ["x", "y"], "valid": false}]},
  {"description": "unevaluatedItems sees items in anyOf",
   "schema": {"anyOf": [{"items": {"type": "integer"}}, {"prefixItems": [true]}], "unevaluatedItems": false},
   "tests": [
     {"description": "integers", "data": [1, 2, 3], "valid": true},
     {"description": "one string", "data": ["a"], "valid": true},
     {"description": "two strings", "data": ["a", "b"], "valid": false}]}
])json";

TEST(JsonSchemaSuiteOwn, Every2020Case) {
  json groups = json::parse(kOwnCases, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(groups.is_array());
  Tally t;
  run_groups(groups, {}, t);
  std::cout << "[suite] own 2020-12 cases: " << t.passed << "/" << t.total << "\n";
  EXPECT_EQ(t.total, 41);
  EXPECT_EQ(t.passed, t.total);
  for (const std::string& failure : t.failures) ADD_FAILURE() << failure;
}

}  // namespace
}  // namespace json_schema_suite_test
}  // namespace mcprt
