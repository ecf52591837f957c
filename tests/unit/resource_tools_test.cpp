// The resource tools (SPEC §15): mcp_list_resources and mcp_read_resource over a real
// manager and FakeServers, and the binding that keeps them in a ToolRegistry while any
// server offers resources. ManualExecutor; nothing sleeps.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manager_test_fixture.hpp"
#include "mcprt/session.hpp"

namespace mcprt::testing {
namespace resource_tools_test {  // this file's own names in a unity batch
namespace {

// What one server offers; the farm serves it on every connection.
struct Catalog {
  std::vector<json> resources;
  std::vector<json> templates;
  bool capability = true;
};

Catalog offering(std::vector<json> resources, std::vector<json> templates = {}) {
  Catalog c;
  c.resources = std::move(resources);
  c.templates = std::move(templates);
  return c;
}
Catalog without_capability() {
  Catalog c;
  c.capability = false;
  return c;
}
ResourceToolsOptions in_mode(ResourceToolsMode mode) {
  ResourceToolsOptions o;
  o.mode = mode;
  return o;
}

class ResourceTools : public ManagerTest {
 protected:
  void offer(const std::string& name, Catalog c) {
    catalogs[name] = std::move(c);
    farm.on_connect(name, [this, name](FakeServer& s) {
      json caps = {{"tools", json::object()}};
      if (catalogs[name].capability) caps["resources"] = {{"listChanged", true}};
      s.set_initialize_result({{"protocolVersion", "2025-11-25"},
                               {"capabilities", caps},
                               {"serverInfo", {{"name", name}, {"version", "1"}}}});
      s.set_tools({tool("t")});
      s.on("resources/list", [this, name](const json&) -> Result<json> {
        return json{{"resources", catalogs[name].resources}};
      });
      s.on("resources/templates/list", [this, name](const json&) -> Result<json> {
        return json{{"resourceTemplates", catalogs[name].templates}};
      });
      s.on("resources/read", [this, name](const json& p) -> Result<json> {
        reads.push_back(name + " " + p["uri"].get<std::string>());
        auto it = bodies.find(p["uri"].get<std::string>());
        if (it == bodies.end()) return Error::wire(-32002, "Resource not found");
        return it->second;
      });
    });
  }

  // Starts the manager with `servers` and binds a registry to it.
  void start_bound(const std::vector<std::string>& servers,
                   ResourceToolsOptions opts = ResourceToolsOptions{}) {
    make();
    shared = std::shared_ptr<McpManager>(manager.get(), [](McpManager*) {});
    session.bind(shared);  // the manager's tools, as a host has them
    binding.emplace(registry, opts, &log);
    binding->bind(shared);
    std::vector<ServerConfig> configs;
    for (const auto& s : servers) configs.push_back(config(s));
    start(configs);
    ex.run_until_idle();
  }

  ToolResult call(const std::string& name, json arguments) {
    std::optional<Result<ToolResult>> got;
    registry.call(name, std::move(arguments), {},
                  [&](Result<ToolResult> r) { got.emplace(std::move(r)); });
    EXPECT_FALSE(got) << "never completes inside call()";
    ex.run_until_idle();
    EXPECT_TRUE(got && got->ok());
    return got && got->ok() ? got->value() : ToolResult{};
  }

  static json resource(const std::string& uri, const std::string& name, const std::string& mime) {
    return {{"uri", uri}, {"name", name}, {"mimeType", mime}, {"description", "About " + name}};
  }

  std::map<std::string, Catalog> catalogs;
  std::map<std::string, json> bodies;
  std::vector<std::string> reads;
  ToolRegistry registry{ex};
  McpSession session{registry};
  std::shared_ptr<McpManager> shared;
  std::optional<ResourceToolsBinding> binding;
};

TEST_F(ResourceTools, Binding_AddsBothToolsWhenAServerListsResources) {
  offer("docs", offering({resource("file:///a.md", "a", "text/markdown")}));
  start_bound({"docs"});
  EXPECT_TRUE(binding->exposed());
  EXPECT_TRUE(registry.contains("mcp_list_resources"));
  EXPECT_TRUE(registry.contains("mcp_read_resource"));
  EXPECT_TRUE(registry.contains("mcp_docs_t"));  // the binding leaves the MCP tools alone
}

TEST_F(ResourceTools, Binding_NoResourcesAnywhere_NoTools) {
  offer("plain", without_capability());
  start_bound({"plain"});
  EXPECT_FALSE(binding->exposed());
  EXPECT_FALSE(registry.contains("mcp_list_resources"));
  EXPECT_FALSE(registry.contains("mcp_read_resource"));
}

TEST_F(ResourceTools, Binding_ModesAlwaysAndNever) {
  offer("plain", without_capability());
  start_bound({"plain"}, in_mode(ResourceToolsMode::always));
  EXPECT_TRUE(registry.contains("mcp_list_resources"));
  ToolResult r = call("mcp_list_resources", json::object());
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "No server offers resources.");

  ToolRegistry other(ex);
  ResourceToolsBinding never(other, in_mode(ResourceToolsMode::never));
  offer("docs", offering({resource("file:///a", "a", "text/plain")}));
  never.bind(shared);
  EXPECT_FALSE(other.contains("mcp_list_resources"));
}

TEST_F(ResourceTools, Binding_FollowsCatalogChanges) {
  offer("docs", Catalog{});
  start_bound({"docs"});
  EXPECT_FALSE(binding->exposed());

  catalogs["docs"].templates = {{{"uriTemplate", "notes://{id}"}, {"name", "note"}}};
  farm.latest("docs")->notify("notifications/resources/list_changed");
  ex.advance(options.list_changed_debounce);
  EXPECT_TRUE(registry.contains("mcp_read_resource")) << "a template is enough";

  manager->disconnect_server("docs");
  ex.run_until_idle();
  EXPECT_FALSE(binding->exposed());
  EXPECT_FALSE(registry.contains("mcp_read_resource")) << "gone with the server's catalog";
}

TEST_F(ResourceTools, Binding_UnbindAndDestructionRemoveOnlyItsOwnTools) {
  offer("docs", offering({resource("file:///a", "a", "text/plain")}));
  start_bound({"docs"});
  ASSERT_TRUE(registry.contains("mcp_list_resources"));
  binding->unbind();
  EXPECT_FALSE(registry.contains("mcp_list_resources"));
  binding->bind(shared);
  EXPECT_TRUE(registry.contains("mcp_list_resources"));
  binding.reset();
  EXPECT_FALSE(registry.contains("mcp_list_resources"));
  EXPECT_TRUE(registry.contains("mcp_docs_t"));
}

TEST_F(ResourceTools, Binding_LeavesTheHostsOwnToolOfTheSameNameAndWarns) {
  offer("docs", offering({resource("file:///a", "a", "text/plain")}));
  auto own = make_resource_tools(ex, {})[1];  // any tool named mcp_read_resource
  ASSERT_TRUE(registry.add_tool(own).ok());
  start_bound({"docs"});
  EXPECT_EQ(registry.find("mcp_read_resource"), own);
  EXPECT_TRUE(registry.contains("mcp_list_resources"));
  EXPECT_TRUE(
      log.has(LogLevel::warn,
              "The mcp_read_resource tool is not offered: the host has a tool of that name"));
  binding.reset();
  EXPECT_EQ(registry.find("mcp_read_resource"), own) << "not the binding's to remove";
}

TEST_F(ResourceTools, List_ShowsEveryServersResourcesAndTemplates) {
  offer("docs", offering({resource("file:///b.md", "b", "text/markdown"),
                          resource("file:///a.md", "a", "text/markdown")},
                         {{{"uriTemplate", "notes://{id}"}, {"name", "note"}}}));
  offer("img", offering({resource("img://logo", "logo", "image/png")}));
  start_bound({"docs", "img"});
  ToolResult r = call("mcp_list_resources", json::object());
  EXPECT_FALSE(r.is_error);
  EXPECT_NE(r.text.find("  docs  file:///a.md  a     text/markdown  About a\n"), std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("  img   img://logo    logo  image/png      About logo\n"),
            std::string::npos)
      << r.text;
  EXPECT_NE(r.text.find("Resource templates"), std::string::npos);
  EXPECT_NE(r.text.find("notes://{id}"), std::string::npos);
  ASSERT_EQ(r.structured_content["resources"].size(), 3u);
  EXPECT_EQ(r.structured_content["resources"][0]["uri"], "file:///a.md");
  EXPECT_EQ(r.structured_content["resources"][0]["server"], "docs");
  EXPECT_EQ(r.structured_content["resources"][2]["server"], "img");
  EXPECT_EQ(r.structured_content["resourceTemplates"][0]["uriTemplate"], "notes://{id}");
}

TEST_F(ResourceTools, List_OneServer_AndAnUnknownServerIsAnError) {
  offer("docs", offering({resource("file:///a.md", "a", "text/markdown")}));
  offer("img", offering({resource("img://logo", "logo", "image/png")}));
  start_bound({"docs", "img"});
  ToolResult r = call("mcp_list_resources", {{"server", "img"}});
  EXPECT_EQ(r.structured_content["resources"].size(), 1u);
  EXPECT_EQ(r.text.find("file:///a.md"), std::string::npos);
  ToolResult unknown = call("mcp_list_resources", {{"server", "nope"}});
  EXPECT_TRUE(unknown.is_error);
  EXPECT_EQ(unknown.text, "MCP error: mcp_list_resources: unknown server \"nope\"");
  ToolResult bad = call("mcp_list_resources", {{"server", 3}});
  EXPECT_TRUE(bad.is_error);
}

TEST_F(ResourceTools, Read_TextGoesToTheServerThatListsTheUri) {
  offer("docs", offering({resource("file:///a.md", "a", "text/markdown")}));
  offer("other", offering({resource("file:///z", "z", "text/plain")}));
  bodies["file:///a.md"] = {
      {"contents", {{{"uri", "file:///a.md"}, {"mimeType", "text/markdown"}, {"text", "# A\n"}}}}};
  start_bound({"docs", "other"});
  ToolResult r = call("mcp_read_resource", {{"uri", "file:///a.md"}});
  EXPECT_FALSE(r.is_error);
  EXPECT_EQ(r.text, "# A\n");
  EXPECT_EQ(reads, std::vector<std::string>{"docs file:///a.md"});
  ASSERT_EQ(r.content.size(), 1u);
  EXPECT_EQ(r.content[0]["type"], "resource");
  EXPECT_EQ(r.content[0]["resource"]["text"], "# A\n");
}

TEST_F(ResourceTools, Read_ATemplateMatchOrAnExplicitServer) {
  offer("notes", offering({}, {{{"uriTemplate", "notes://{id}"}, {"name", "note"}}}));
  offer("docs", offering({resource("file:///a", "a", "text/plain")}));
  bodies["notes://7"] = {{"contents", {{{"uri", "notes://7"}, {"text", "seven"}}}}};
  start_bound({"notes", "docs"});
  // A text without a final newline gets one, as in /mcp read.
  EXPECT_EQ(call("mcp_read_resource", {{"uri", "notes://7"}}).text, "seven\n");
  call("mcp_read_resource", {{"uri", "notes://7"}, {"server", "docs"}});
  EXPECT_EQ(reads, (std::vector<std::string>{"notes notes://7", "docs notes://7"}));
}

TEST_F(ResourceTools, Read_BlobsAreLabelledUnlessTextLike) {
  offer("docs", offering({resource("img://logo", "logo", "image/png")}));
  bodies["img://logo"] = {
      {"contents", {{{"uri", "img://logo"}, {"mimeType", "image/png"}, {"blob", "iVBORw0KGgo="}}}}};
  // {"a":1} in base64, typed as JSON: shown as its text.
  bodies["data://cfg"] = {
      {"contents",
       {{{"uri", "data://cfg"}, {"mimeType", "application/json"}, {"blob", "eyJhIjoxfQ=="}}}}};
  // Typed as text but not UTF-8: stays binary.
  bodies["data://bad"] = {
      {"contents", {{{"uri", "data://bad"}, {"mimeType", "text/plain"}, {"blob", "/w=="}}}}};
  start_bound({"docs"});
  ToolResult png = call("mcp_read_resource", {{"uri", "img://logo"}, {"server", "docs"}});
  EXPECT_EQ(png.text, "[binary image/png, 8 bytes]\n");
  EXPECT_EQ(png.content[0]["resource"]["blob"], "iVBORw0KGgo=") << "the contents stay for the host";
  EXPECT_EQ(call("mcp_read_resource", {{"uri", "data://cfg"}, {"server", "docs"}}).text,
            "{\"a\":1}\n");
  EXPECT_EQ(call("mcp_read_resource", {{"uri", "data://bad"}, {"server", "docs"}}).text,
            "[binary text/plain, 1 bytes]\n");
}

TEST_F(ResourceTools, Read_ErrorsAreToolErrorsNamingTheProblem) {
  offer("docs", offering({resource("file:///a", "a", "text/plain")}));
  start_bound({"docs"});
  ToolResult missing = call("mcp_read_resource", json::object());
  EXPECT_TRUE(missing.is_error);
  EXPECT_EQ(missing.text,
            "MCP error: mcp_read_resource: \"uri\" (a string) is required; \"server\" is an "
            "optional string");
  ToolResult nobody = call("mcp_read_resource", {{"uri", "ftp://elsewhere"}});
  EXPECT_TRUE(nobody.is_error);
  EXPECT_NE(nobody.text.find("no server lists resource \"ftp://elsewhere\""), std::string::npos)
      << nobody.text;
  EXPECT_TRUE(reads.empty());
  ToolResult failed = call("mcp_read_resource", {{"uri", "file:///a"}});  // listed, but no body
  EXPECT_TRUE(failed.is_error);
  EXPECT_NE(failed.text.find("Resource not found"), std::string::npos) << failed.text;
}

TEST_F(ResourceTools, Read_AbortedBeforeTheAnswerIsAnAbort) {
  offer("docs", offering({resource("file:///a", "a", "text/plain")}));
  bodies["file:///a"] = {{"contents", {{{"uri", "file:///a"}, {"text", "x"}}}}};
  start_bound({"docs"});
  farm.latest("docs")->hold("resources/read");
  AbortController abort;
  std::optional<Result<ToolResult>> got;
  ToolCallOptions opts;
  opts.signal = abort.signal();
  registry.call("mcp_read_resource", {{"uri", "file:///a"}}, opts,
                [&](Result<ToolResult> r) { got.emplace(std::move(r)); });
  ex.run_until_idle();
  EXPECT_FALSE(got);
  abort.abort("user");
  ex.run_until_idle();
  ASSERT_TRUE(got);
  ASSERT_FALSE(got->ok());
  EXPECT_EQ(got->error().code, ErrorCode::aborted);
}

TEST_F(ResourceTools, ToolsOutlivingTheManagerSaySo) {
  auto tools = make_resource_tools(ex, std::weak_ptr<McpManager>());
  std::optional<Result<ToolResult>> got;
  tools[0]->call(json::object(), {}, [&](Result<ToolResult> r) { got.emplace(std::move(r)); });
  ex.run_until_idle();
  ASSERT_TRUE(got && got->ok());
  EXPECT_TRUE(got->value().is_error);
  EXPECT_EQ(got->value().text, "MCP error: no MCP manager is bound to the session");
}

}  // namespace
}  // namespace resource_tools_test
}  // namespace mcprt::testing
