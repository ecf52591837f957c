// The resource tools (mcprt/session.hpp, SPEC §15): mcp_list_resources and
// mcp_read_resource over the manager's catalogs and resources/read, and the binding that
// keeps them in a ToolRegistry while servers offer resources. The listing and the contents
// are rendered by the same functions as the /mcp controller's (mcp_command.hpp), so the
// model and the user read the same text.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "framing/utf8.hpp"
#include "mcprt/json_object.hpp"
#include "mcprt/mcp_command.hpp"
#include "mcprt/session.hpp"

namespace mcprt {
namespace resource_tools_detail {

const std::string* optional_string(const json& arguments, const char* key, bool& wrong_type) {
  auto it = arguments.find(key);
  if (it == arguments.end() || it->is_null()) return nullptr;
  if (!it->is_string()) {
    wrong_type = true;
    return nullptr;
  }
  return &it->get_ref<const std::string&>();
}

ToolResult text_result(std::string text, json structured, std::size_t max_result_bytes) {
  json call_result = {
      {"content", json::array({json_object({{"type", "text"}, {"text", std::move(text)}})})}};
  ToolResult r = render_tool_result(call_result, max_result_bytes);
  r.structured_content = std::move(structured);
  return r;
}

void post(Executor& executor, ToolDone done, Result<ToolResult> result) {
  executor.post(
      [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
}

ToolResult usage_error(const std::string& tool, const std::string& why) {
  return mcp_error_result(Error::make(ErrorCode::invalid_argument, tool + ": " + why));
}

ToolResult no_manager_error() {
  return mcp_error_result(
      Error::make(ErrorCode::not_connected, "no MCP manager is bound to the session"));
}

// A blob whose type says text (text/*, JSON, XML, YAML, JavaScript) and whose bytes are
// UTF-8 is shown as its text; anything else stays binary.
bool text_like(const std::string& mime) {
  std::string m = mime.substr(0, mime.find(';'));
  for (char& c : m) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  auto ends_with = [&](std::string_view s) {
    return m.size() >= s.size() && m.compare(m.size() - s.size(), s.size(), s) == 0;
  };
  return m.rfind("text/", 0) == 0 || m == "application/json" || m == "application/xml" ||
         m == "application/javascript" || m == "application/yaml" || m == "application/x-yaml" ||
         ends_with("+json") || ends_with("+xml");
}

json with_text_blobs_decoded(const json& result) {
  json out = result;
  auto contents = out.find("contents");
  if (contents == out.end() || !contents->is_array()) return out;
  for (json& c : *contents) {
    if (!c.is_object()) continue;
    auto blob = c.find("blob");
    auto mime = c.find("mimeType");
    if (blob == c.end() || !blob->is_string() || mime == c.end() || !mime->is_string() ||
        !text_like(mime->get_ref<const std::string&>())) {
      continue;
    }
    auto bytes = decode_base64(blob->get_ref<const std::string&>());
    if (!bytes || !detail::is_valid_utf8(*bytes)) continue;
    c.erase("blob");
    c["text"] = std::move(*bytes);
  }
  return out;
}

// What both tools are made of: a name, a description and a schema for the model, and the
// manager they ask.
class ResourceTool : public Tool {
 public:
  ResourceTool(Executor& executor, std::weak_ptr<McpManager> manager, std::size_t max,
               std::string name, std::string description, const char* schema)
      : executor_(executor),
        manager_(std::move(manager)),
        max_result_bytes_(max),
        name_(std::move(name)),
        description_(std::move(description)),
        schema_(json::parse(schema, nullptr, /*allow_exceptions=*/false)) {}
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  const json& input_schema() const override { return schema_; }

 protected:
  // A call whose signal is already aborted ends at once (posted). True when it did.
  bool end_if_aborted(const ToolCallOptions& options, ToolDone& done) {
    if (!options.signal.aborted()) return false;
    post(executor_, std::move(done), Error::make(ErrorCode::aborted, name_ + " aborted"));
    return true;
  }

  Executor& executor_;
  std::weak_ptr<McpManager> manager_;
  std::size_t max_result_bytes_;
  std::string name_;
  std::string description_;
  json schema_;
};

class ListResourcesTool final : public ResourceTool {
 public:
  ListResourcesTool(Executor& executor, std::weak_ptr<McpManager> manager, std::size_t max)
      : ResourceTool(executor, std::move(manager), max, kListResourcesTool,
                     "Lists the resources (documents, files, data) that the connected MCP "
                     "servers offer, with their URIs, and the resource templates whose URIs can "
                     "be filled in. Read one with mcp_read_resource.",
                     R"({"type":"object","properties":{"server":{"type":"string",
      "description":"Only this MCP server's resources"}},"additionalProperties":false})") {}

  void call(json arguments, ToolCallOptions options, ToolDone done) override {
    if (end_if_aborted(options, done)) return;
    bool wrong = !arguments.is_null() && !arguments.is_object();
    const std::string* server =
        arguments.is_object() ? optional_string(arguments, "server", wrong) : nullptr;
    if (wrong) {
      return post(executor_, std::move(done), usage_error(name_, "\"server\" must be a string"));
    }
    auto manager = manager_.lock();
    if (!manager) return post(executor_, std::move(done), no_manager_error());
    if (server && !manager->server_state(*server)) {
      return post(executor_, std::move(done),
                  usage_error(name_, "unknown server \"" + *server + "\""));
    }
    auto only = [&](std::vector<CatalogEntry> entries) {
      if (server) {
        std::erase_if(entries, [&](const CatalogEntry& e) { return e.server != *server; });
      }
      return entries;
    };
    const auto resources = only(manager->resources());
    const auto templates = only(manager->resource_templates());
    std::string text;
    if (resources.empty() && templates.empty()) {
      text = server ? "Server \"" + *server + "\" offers no resources."
                    : "No server offers resources.";
    } else {
      text = "Resources (server, uri, name, mimeType, description); read one with " +
             std::string(kReadResourceTool) + " {\"uri\": ...}:\n" +
             (resources.empty() ? std::string("(none)\n")
                                : format_catalog(CatalogKind::resources, resources));
      if (!templates.empty()) {
        text +=
            "\nResource templates (server, uriTemplate, name, mimeType, description); fill "
            "in the {variables} to read one:\n" +
            format_catalog(CatalogKind::resource_templates, templates);
      }
    }
    auto entries = [](const std::vector<CatalogEntry>& list) {
      json out = json::array();
      for (const auto& e : list) {
        json item = e.definition.get().is_object() ? e.definition.get() : json::object();
        item["server"] = e.server;
        out.push_back(std::move(item));
      }
      return out;
    };
    post(executor_, std::move(done),
         text_result(std::move(text),
                     json_object({{"resources", entries(resources)},
                                  {"resourceTemplates", entries(templates)}}),
                     max_result_bytes_));
  }
};

class ReadResourceTool final : public ResourceTool {
 public:
  ReadResourceTool(Executor& executor, std::weak_ptr<McpManager> manager, std::size_t max)
      : ResourceTool(
            executor, std::move(manager), max, kReadResourceTool,
            "Reads a resource of a connected MCP server by its URI (from mcp_list_resources, a "
            "filled-in resource template, or a link in a tool result) and returns its contents.",
            R"j({"type":"object","properties":{
      "uri":{"type":"string","description":"The resource's URI"},
      "server":{"type":"string","description":"The MCP server to ask (default: the one that lists the URI)"}},
      "required":["uri"],"additionalProperties":false})j") {}

  void call(json arguments, ToolCallOptions options, ToolDone done) override {
    if (end_if_aborted(options, done)) return;
    bool wrong = !arguments.is_object();
    const std::string* uri = wrong ? nullptr : optional_string(arguments, "uri", wrong);
    const std::string* server = wrong ? nullptr : optional_string(arguments, "server", wrong);
    if (wrong || !uri || uri->empty()) {
      return post(
          executor_, std::move(done),
          usage_error(name_, "\"uri\" (a string) is required; \"server\" is an optional string"));
    }
    auto manager = manager_.lock();
    if (!manager) return post(executor_, std::move(done), no_manager_error());
    std::string target = server ? *server : manager->server_for_resource(*uri);
    if (target.empty()) {
      return post(
          executor_, std::move(done),
          mcp_error_result(Error::make(
              ErrorCode::invalid_argument,
              "no server lists resource \"" + *uri + "\" or has a template that matches it (" +
                  kListResourcesTool + " shows what there is; \"server\" names one)")));
    }
    CallOptions call;
    call.signal = options.signal;
    call.on_progress = std::move(options.on_progress);
    AbortSignal signal = options.signal;
    manager->read_resource(
        target, *uri, std::move(call),
        [signal, max = max_result_bytes_, tool = name_, done = std::move(done)](Result<json> r) {
          if (signal.aborted()) {
            return done(Error::make(ErrorCode::aborted, tool + " aborted"));
          }
          if (!r) return done(mcp_error_result(r.error()));
          json result = with_text_blobs_decoded(*r);
          ToolResult out = text_result(format_resource_contents(result), json(), max);
          // The contents themselves, for a host: each as an embedded resource block.
          json blocks = json::array();
          const json& raw = *r;
          if (auto c = raw.find("contents"); c != raw.end() && c->is_array()) {
            for (const json& item : *c) {
              blocks.push_back(json_object({{"type", "resource"}, {"resource", item}}));
            }
          }
          out.content = std::move(blocks);
          done(std::move(out));
        });
  }
};

}  // namespace resource_tools_detail

std::vector<ToolPtr> make_resource_tools(Executor& executor, std::weak_ptr<McpManager> manager,
                                         const ResourceToolsOptions& options) {
  return {std::make_shared<resource_tools_detail::ListResourcesTool>(executor, manager,
                                                                     options.max_result_bytes),
          std::make_shared<resource_tools_detail::ReadResourceTool>(executor, manager,
                                                                    options.max_result_bytes)};
}

ResourceToolsBinding::ResourceToolsBinding(ToolRegistry& registry, ResourceToolsOptions options,
                                           Logger* logger)
    : registry_(registry), options_(options), logger_(logger) {}

ResourceToolsBinding::~ResourceToolsBinding() {
  *alive_ = false;
  unbind();
}

void ResourceToolsBinding::bind(std::shared_ptr<McpManager> manager) {
  unbind();
  manager_ = std::move(manager);
  if (!manager_) return;
  std::weak_ptr<bool> alive = alive_;
  listener_ = manager_->on_catalog_changed([this, alive](const std::string&, CatalogKind kind) {
    if (kind == CatalogKind::prompts) return;
    if (auto a = alive.lock(); a && *a) update();
  });
  update();
}

void ResourceToolsBinding::unbind() {
  if (manager_ && listener_ != 0) manager_->remove_listener(listener_);
  listener_ = 0;
  remove_tools();
  manager_.reset();
}

void ResourceToolsBinding::update() {
  bool want = false;
  if (manager_) {
    switch (options_.mode) {
      case ResourceToolsMode::always:
        want = true;
        break;
      case ResourceToolsMode::never:
        want = false;
        break;
      case ResourceToolsMode::when_offered:
        want = !manager_->catalog(CatalogKind::resources).empty() ||
               !manager_->catalog(CatalogKind::resource_templates).empty();
        break;
    }
  }
  if (!want) return remove_tools();
  if (!tools_.empty()) return;
  for (ToolPtr& tool : make_resource_tools(registry_.executor(), manager_, options_)) {
    Status added = registry_.add_tool(tool);
    if (!added) {
      if (logger_) {
        logger_->warn("The " + tool->name() +
                      " tool is not offered: the host has a tool of that name");
      }
      continue;
    }
    tools_.push_back(std::move(tool));
  }
}

void ResourceToolsBinding::remove_tools() {
  for (const ToolPtr& tool : tools_) {
    // Only what this binding added (the registry's host tool of that name is ours).
    if (registry_.find(tool->name()) == tool) registry_.remove_tool(tool->name());
  }
  tools_.clear();
}

}  // namespace mcprt
