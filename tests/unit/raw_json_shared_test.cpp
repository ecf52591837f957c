// Lazy shared definitions (SharedJson with a raw inputSchema, core/src/tools/tool_set.hpp):
// a definition listed with its schema as the server's text is shared without parsing it;
// the tool set builds its tools (names, descriptions, annotations) without parsing any
// schema; the schema is parsed once, on first read, by whoever reads it first (threads
// included); dump() and the token estimate use the text as it came.
// (The parser and the paths a raw schema travels: raw_json_test.cpp.)

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef __EMSCRIPTEN__
#include <thread>
#endif

#include "jsonrpc/raw_json.hpp"
#include "mcprt/json_text.hpp"
#include "mcprt/session.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "tools/tool_set.hpp"

namespace mcprt {
namespace raw_json_shared_test {  // this file's own names in a unity batch
namespace {

using detail::SharedJsonAccess;
using testing::ManualExecutor;

json plain(std::string_view text) {
  json value = parse_json(text);
  EXPECT_FALSE(value.is_discarded()) << text;
  return value;
}

// The definitions of a tools/list answer listing `tools` (the text of a JSON array),
// parsed as the transports parse it for list_tools_raw: object schemas stay raw.
std::vector<json> listed(std::string_view tools) {
  const std::string text =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":" + std::string(tools) + "}}";
  JsonSyntaxError error;
  json message = detail::parse_json_keeping_raw_tool_schemas(text, &error, kNoJsonDepthLimit);
  EXPECT_FALSE(message.is_discarded()) << error.message;
  std::vector<json> out;
  for (json& tool : message["result"]["tools"]) out.push_back(std::move(tool));
  return out;
}

const std::string kSchema =
    "{ \"type\": \"object\",\n  \"properties\": { \"path\": {\"type\": \"string\"} } }";
const std::string kDefinition =
    R"({"name":"read","description":"Reads a file","annotations":{"readOnlyHint":true},)"
    R"("_meta":{"k":1},"inputSchema":)" +
    kSchema + "}";

// A lazy shared definition of kDefinition.
SharedJson lazy_definition() {
  std::vector<json> tools = listed("[" + kDefinition + "]");
  EXPECT_TRUE(detail::is_raw_json(tools[0]["inputSchema"]));
  return SharedJsonAccess::share(std::move(tools[0]));
}

// --- SharedJson ---------------------------------------------------------------------------

TEST(RawSharedJson, Lazy_ShareKeepsTheSchemaAsTextAndTheOtherMembersReadable) {
  const SharedJson definition = lazy_definition();
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(definition));
  ASSERT_TRUE(SharedJsonAccess::schema_text(definition).has_value());
  EXPECT_EQ(*SharedJsonAccess::schema_text(definition), kSchema);
  // The members other than the schema, without parsing it.
  const json& unparsed = SharedJsonAccess::unparsed(definition);
  EXPECT_EQ(unparsed["name"], "read");
  EXPECT_EQ(unparsed["annotations"], (json{{"readOnlyHint", true}}));
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(definition));
}

TEST(RawSharedJson, Lazy_TheSchemasDumpIsTheRawTextAndParsesNothing) {
  const SharedJson definition = lazy_definition();
  const std::optional<SharedJson> schema = SharedJsonAccess::lazy_schema(definition);
  ASSERT_TRUE(schema.has_value());
  EXPECT_EQ(schema->dump(), kSchema);
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(*schema));
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(definition));
  EXPECT_EQ(*SharedJsonAccess::schema_text(*schema), kSchema);
}

TEST(RawSharedJson, Lazy_TheDefinitionsDumpIsTheDefinitionWithTheSchemaAsItCame) {
  const SharedJson definition = lazy_definition();
  const std::string text = definition.dump();
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(definition));
  EXPECT_NE(text.find("\"inputSchema\":" + kSchema), std::string::npos) << text;
  const json reparsed = parse_json(text);
  ASSERT_FALSE(reparsed.is_discarded()) << text;
  EXPECT_EQ(reparsed, plain(kDefinition));
  // The same text after the parse: still the server's.
  (void)definition.get();
  EXPECT_EQ(definition.dump(), text);
}

TEST(RawSharedJson, Lazy_GetParsesTheSchemaIntoTheDefinition) {
  const SharedJson definition = lazy_definition();
  const json& value = definition.get();
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(definition));
  EXPECT_EQ(value, plain(kDefinition));
  EXPECT_FALSE(value["inputSchema"].is_binary());
  // The same object every time (parsed once, in place).
  EXPECT_EQ(&definition.get(), &value);
  EXPECT_EQ(&*definition, &value);
  EXPECT_EQ(definition->at("name"), "read");
  EXPECT_EQ(definition.shared().get(), &value);
}

TEST(RawSharedJson, Lazy_TheSchemaAliasParsesToTheSchemaInsideTheDefinition) {
  const SharedJson definition = lazy_definition();
  const std::optional<SharedJson> schema = SharedJsonAccess::lazy_schema(definition);
  ASSERT_TRUE(schema.has_value());
  const json& value = schema->get();
  EXPECT_EQ(value, plain(kSchema));
  // One parse for both: the definition sees it done, and holds that very value.
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(definition));
  EXPECT_EQ(&definition.get().at("inputSchema"), &value);
}

TEST(RawSharedJson, Lazy_CopiesShareTheParse) {
  const SharedJson definition = lazy_definition();
  const SharedJson copy = definition;  // NOLINT(performance-unnecessary-copy-initialization)
  SharedJson assigned;
  assigned = definition;
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(copy));
  const json& value = copy.get();
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(definition));
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(assigned));
  EXPECT_EQ(&definition.get(), &value);
  EXPECT_EQ(&assigned.get(), &value);
  EXPECT_TRUE(copy == definition);
}

TEST(RawSharedJson, Lazy_AMovedFromValueIsNull) {
  SharedJson definition = lazy_definition();
  SharedJson moved(std::move(definition));
  // NOLINTBEGIN(bugprone-use-after-move): what a moved-from value does is the point.
  EXPECT_TRUE(definition.get().is_null());
  EXPECT_EQ(definition.shared(), nullptr);
  EXPECT_EQ(definition.dump(), "null");
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(definition));
  EXPECT_FALSE(SharedJsonAccess::schema_text(definition).has_value());
  EXPECT_FALSE(SharedJsonAccess::lazy_schema(definition).has_value());
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(moved));
  EXPECT_EQ(moved.get(), plain(kDefinition));

  SharedJson assigned;
  assigned = std::move(moved);
  EXPECT_TRUE(moved.get().is_null());
  EXPECT_EQ(moved.dump(), "null");
  EXPECT_EQ(assigned.get(), plain(kDefinition));
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(assigned));
  // A moved-from value can be given a value again.
  moved = lazy_definition();
  EXPECT_EQ(moved.dump().find("\"inputSchema\":" + kSchema) != std::string::npos, true);
  // NOLINTEND(bugprone-use-after-move)
}

TEST(RawSharedJson, Lazy_AValueOutlivesTheOthersSharingIt) {
  std::optional<SharedJson> schema;
  {
    const SharedJson definition = lazy_definition();
    schema = SharedJsonAccess::lazy_schema(definition);
  }
  ASSERT_TRUE(schema.has_value());
  EXPECT_EQ(schema->dump(), kSchema);
  EXPECT_EQ(schema->get(), plain(kSchema));
}

TEST(RawSharedJson, ADefinitionWithoutARawSchemaIsSharedAsBefore) {
  const json definition = {{"name", "t"}, {"inputSchema", {{"type", "object"}}}};
  const SharedJson shared = SharedJsonAccess::share(definition);
  EXPECT_EQ(shared.get(), definition);
  EXPECT_FALSE(SharedJsonAccess::lazy_schema(shared).has_value());
  EXPECT_FALSE(SharedJsonAccess::schema_text(shared).has_value());
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(shared));
  EXPECT_EQ(shared.dump(), definition.dump());
  // Not an object, or a schema that is no placeholder: the same.
  EXPECT_EQ(SharedJsonAccess::share(json::array({1})).get(), json::array({1}));
  const std::vector<json> tools = listed(R"([{"name":"a","inputSchema":[1]}])");
  const SharedJson not_raw = SharedJsonAccess::share(tools[0]);
  EXPECT_FALSE(SharedJsonAccess::lazy_schema(not_raw).has_value());
  EXPECT_EQ(not_raw.get(), plain(R"({"name":"a","inputSchema":[1]})"));
}

#ifndef __EMSCRIPTEN__
// Readers on several threads at once (the web runtime's and a host's): each gets the one
// parsed value, parsed once; what reads the definition without parsing it (dump(), the
// members other than the schema) reads it while the schema is being parsed, unharmed.
// (Run under TSan: build/native-tsan.)
TEST(RawSharedJson, Lazy_ThreadsReadingAtOnceGetTheOneParsedValue) {
  const SharedJson definition = lazy_definition();
  const SharedJson schema = *SharedJsonAccess::lazy_schema(definition);
  const std::string dumped = definition.dump();
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<const json*> seen(kThreads, nullptr);
  std::vector<std::string> texts(kThreads);
  std::vector<json> annotations(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      // Each through a copy of its own: the definition, its schema, the definition again
      // (dump() and a member other than the schema, then the whole).
      const SharedJson mine = i % 4 == 1 ? schema : definition;
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      if (i % 4 == 2) {
        texts[i] = mine.dump();
        annotations[i] = SharedJsonAccess::unparsed(mine).at("annotations");
      }
      const json& value = mine.get();
      seen[i] = i % 4 == 1 ? &value : &value.at("inputSchema");
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  go.store(true);
  for (auto& t : threads) t.join();
  const json* expected = &definition.get().at("inputSchema");
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(seen[i], expected) << i;
    if (i % 4 == 2) {
      EXPECT_EQ(texts[i], dumped) << i;
      EXPECT_EQ(annotations[i], (json{{"readOnlyHint", true}})) << i;
    }
  }
  EXPECT_EQ(*expected, plain(kSchema));
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(definition));
}
#endif

// --- the tool set -----------------------------------------------------------------------

class NullHost final : public McpToolHost {
 public:
  void call_tool(const std::string&, const std::string&, json, CallOptions,
                 std::function<void(Result<json>)>) override {}
  void wait_for_connection(const std::string&, AbortSignal, std::function<void(Status)>) override {}
};

const std::string kTools =
    R"([{"name":"read","description":"Reads","annotations":{"readOnlyHint":true},"inputSchema":{ "type":"object", "properties":{"p":{"type":"string"}} }},)"
    R"( {"name":"write","description":"Writes","inputSchema":{"type":"object","required":[ "p" ]},"_meta":{"anthropic/maxResultSizeChars":5}},)"
    R"( {"name":"drop","inputSchema":{}},)"
    R"( {"name":"hidden","inputSchema":{"type":"object"}}])";

struct RawToolSetTest : ::testing::Test {
  RawToolSetTest() { config.exclude_tools = {"hidden"}; }
  ManualExecutor ex;
  std::shared_ptr<NullHost> host = std::make_shared<NullHost>();
  detail::ToolSet set{ex, host, ToolBuildOptions{}};
  ServerConfig config;
};

TEST_F(RawToolSetTest, Replace_BuildsToolsFromLazyDefinitionsWithoutParsingASchema) {
  const std::vector<SharedJson> definitions = detail::share_definitions(listed(kTools));
  ASSERT_EQ(definitions.size(), 4u);
  for (const SharedJson& d : definitions) ASSERT_TRUE(SharedJsonAccess::schema_text(d).has_value());

  set.replace("fs", &config, {}, definitions, false);
  set.replace("later", &config, {}, detail::share_definitions(listed(kTools)), /*deferred=*/true);

  const auto& tools = set.tools();
  ASSERT_EQ(tools.size(), 6u);  // "hidden" excluded from both
  std::vector<std::string> names;
  for (const auto& t : tools) names.push_back(t->name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"mcp_fs_drop", "mcp_fs_read", "mcp_fs_write",
                                      "mcp_later_drop", "mcp_later_read", "mcp_later_write"}));
  const auto read = set.find("mcp_fs_read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->info().raw_name, "read");
  EXPECT_EQ(read->description(), "Reads");
  EXPECT_EQ(read->annotations(), (json{{"readOnlyHint", true}}));
  EXPECT_EQ(set.find("mcp_fs_write")->annotations(), json::object());
  EXPECT_TRUE(set.find("mcp_later_read")->info().deferred);

  for (const auto& t : tools) {
    EXPECT_FALSE(SharedJsonAccess::schema_parsed(t->info().definition)) << t->name();
    EXPECT_FALSE(SharedJsonAccess::schema_parsed(t->info().input_schema)) << t->name();
  }
  for (const SharedJson& d : definitions) EXPECT_FALSE(SharedJsonAccess::schema_parsed(d));
}

TEST_F(RawToolSetTest, InputSchema_ParsesThatToolsSchemaOnly) {
  const std::vector<SharedJson> definitions = detail::share_definitions(listed(kTools));
  set.replace("fs", &config, {}, definitions, false);
  const auto read = set.find("mcp_fs_read");
  const auto write = set.find("mcp_fs_write");
  const auto drop = set.find("mcp_fs_drop");
  ASSERT_TRUE(read && write && drop);

  EXPECT_EQ(write->input_schema(), plain(R"({"type":"object","required":["p"]})"));
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(write->info().input_schema));
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(write->info().definition));
  EXPECT_TRUE(SharedJsonAccess::schema_parsed(definitions[1]));  // the listed one, shared
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(read->info().input_schema));
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(drop->info().input_schema));
  // Each tool's schema is its own definition's member, as listed.
  EXPECT_EQ(&write->input_schema(), &write->info().definition.get().at("inputSchema"));
  EXPECT_EQ(read->input_schema(),
            plain(R"({"type":"object","properties":{"p":{"type":"string"}}})"));
  EXPECT_EQ(drop->input_schema(), json::object());
}

TEST_F(RawToolSetTest, Replace_DefinitionsWithoutRawSchemasBuildAsBefore) {
  std::vector<json> defs = {json{{"name", "read"},
                                 {"description", "Reads"},
                                 {"inputSchema", {{"type", "object"}, {"x", 1}}}},
                            json{{"name", "bare"}},
                            json{{"name", "odd"}, {"inputSchema", "not an object"}}};
  const std::vector<SharedJson> definitions = detail::share_definitions(defs);
  set.replace("fs", &config, {}, definitions, false);
  ASSERT_EQ(set.tools().size(), 3u);
  const auto read = set.find("mcp_fs_read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->input_schema(), defs[0]["inputSchema"]);
  // The schema points into the shared definition, as before (no copy).
  EXPECT_EQ(&read->input_schema(), &definitions[0].get().at("inputSchema"));
  EXPECT_EQ(read->info().definition.get(), defs[0]);
  EXPECT_FALSE(SharedJsonAccess::schema_text(read->info().input_schema).has_value());
  // No schema, or one that is not an object: {"type":"object"}.
  EXPECT_EQ(set.find("mcp_fs_bare")->input_schema(), (json{{"type", "object"}}));
  EXPECT_EQ(set.find("mcp_fs_odd")->input_schema(), (json{{"type", "object"}}));
}

// --- the token estimate -----------------------------------------------------------------

TEST_F(RawToolSetTest, EstimateToolTokens_CountsARawSchemaByItsTextWithoutParsingIt) {
  set.replace("fs", &config, {}, detail::share_definitions(listed(kTools)), false);
  const auto read = set.find("mcp_fs_read");
  ASSERT_NE(read, nullptr);
  const std::string raw = R"({ "type":"object", "properties":{"p":{"type":"string"}} })";
  // The text, spaces included: more than the parsed schema's dump() would count.
  ASSERT_NE(raw.size(), plain(raw).dump().size());
  const McpToolInfo& info = read->info();
  EXPECT_EQ(estimate_tool_tokens(info),
            (info.name.size() + info.description.size() + raw.size() + 3) / 4);
  EXPECT_FALSE(SharedJsonAccess::schema_parsed(info.input_schema));
}

TEST_F(RawToolSetTest, EstimateToolTokens_CountsAParsedSchemaByItsDump) {
  set.replace("fs", &config, {},
              detail::share_definitions({json{{"name", "read"},
                                              {"description", "Reads"},
                                              {"inputSchema", {{"type", "object"}, {"x", "y"}}}}}),
              false);
  const McpToolInfo& info = set.find("mcp_fs_read")->info();
  EXPECT_EQ(estimate_tool_tokens(info), (info.name.size() + info.description.size() +
                                         std::string(R"({"type":"object","x":"y"})").size() + 3) /
                                            4);
}

}  // namespace
}  // namespace raw_json_shared_test
}  // namespace mcprt
