#pragma once
// A JSON Schema 2020-12 validator (SPEC §15): tool results are checked against the tool's
// `outputSchema`. The schema is interpreted as it is (no compile step), both schema and
// instance are untrusted: evaluation depth and work are bounded, a $ref cycle is reported,
// never followed forever, and nothing throws.
//
//   if (auto e = validate_json_schema(schema, value)) log(to_string(*e));
//       // "/items/0/count: expected integer, got string"
//
// Supported: boolean schemas; type (integer = a number with no fraction), enum, const;
// multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum; maxLength, minLength
// (in Unicode code points), pattern; maxItems, minItems, uniqueItems, contains,
// maxContains, minContains, prefixItems, items, unevaluatedItems; maxProperties,
// minProperties, required, dependentRequired, properties, patternProperties,
// additionalProperties, propertyNames, dependentSchemas, unevaluatedProperties; allOf,
// anyOf, oneOf, not, if/then/else; $ref to "#", "#/json/pointer", "#anchor" ($anchor, or a
// draft-7 style "$id": "#anchor") and to the URIs of embedded "$id"s (resolved against
// their parents' $id). Not supported: remote $refs (no fetching: a schema error),
// $dynamicRef/$dynamicAnchor (ignored), `format` and the content* keywords (annotations
// only in 2020-12, as the spec's default says). Unknown keywords are ignored.
//
// `pattern` and `patternProperties` use a small ECMA-262 subset matched by a bounded
// backtracker (no std::regex, which is large in wasm and recurses per character): literals
// and escapes, `.`, classes `[...]` with ranges and \d \w \s \D \W \S, anchors ^ $ and \b
// \B, groups ( ) (?: ), alternation, and the quantifiers * + ? {n} {n,} {n,m} (greedy or
// lazy). Backreferences, lookaround, named groups and \p{...} are refused: a pattern using
// them is a schema error (kind bad_schema), never a silent pass.

#include <cstddef>
#include <optional>
#include <string>

#include "mcprt/result.hpp"

namespace mcprt {

struct SchemaLimits {
  // Nested subschema evaluations (a subschema of a property of an item ... each counts
  // one; a $ref counts one more). A deeper schema/instance pair fails with kind limit.
  std::size_t max_depth = 128;
  // Subschema evaluations in one validation: bounds what a hostile schema can cost
  // (nested anyOf over a large array) whatever its shape.
  std::size_t max_steps = 2'000'000;
  // Backtracking steps of one pattern match; beyond it the match fails with kind limit.
  std::size_t max_pattern_steps = 100'000;
};

enum class SchemaErrorKind {
  mismatch,    // the instance does not match the schema
  bad_schema,  // the schema cannot be used: an unresolvable or cyclic $ref, a keyword with
               // a value of the wrong type, an unsupported pattern
  limit,       // a SchemaLimits bound was reached before validation finished
};

struct SchemaError {
  SchemaErrorKind kind = SchemaErrorKind::mismatch;
  std::string instance_path;  // a JSON Pointer into the instance ("" = the root): /items/0/name
  std::string keyword_path;   // a JSON Pointer into the schema's evaluation: /properties/items/type
  std::string message;        // what is wrong there: "expected integer, got string"
};

// "<instance_path or (root)>: <message>", e.g. "/count: expected integer, got string".
std::string to_string(const SchemaError& error);

// The first failure, or nullopt when `instance` matches `schema`.
std::optional<SchemaError> validate_json_schema(const json& schema, const json& instance,
                                                const SchemaLimits& limits = {});

// Whether `schema` can be used at all: a boolean or an object whose keywords have values of
// the right types, whose $refs all resolve and whose patterns are all supported. Checks the
// whole schema (every subschema, used or not), so a tool's outputSchema can be judged once
// when it is listed rather than on the call that reaches the broken part.
std::optional<SchemaError> check_json_schema(const json& schema, const SchemaLimits& limits = {});

// False where the validator is not linked (the web module leaves it out for size: there
// validate_json_schema and check_json_schema answer bad_schema "not checked").
bool json_schema_validation_available();

}  // namespace mcprt
