// The host input handlers' wire forms (SPEC §15): capabilities, roots, elicitation.

#include "mcprt/input.hpp"

#include "protocol/file_uri.hpp"

namespace mcprt {

std::vector<Root> roots_from_directories(const std::vector<std::string>& directories) {
  std::vector<Root> roots;
  for (std::string path : directories) {
    while (path.size() > 1 && (path.back() == '/' || path.back() == '\\')) path.pop_back();
    if (path.empty()) continue;
    roots.push_back({detail::file_uri_from_path(path), detail::path_basename(path)});
  }
  return roots;
}

json roots_list_result(const std::vector<Root>& roots) {
  json list = json::array();
  for (const Root& root : roots) {
    json entry = json::object();
    entry["uri"] = root.uri;
    if (!root.name.empty()) entry["name"] = root.name;
    list.push_back(std::move(entry));
  }
  json result = json::object();
  result["roots"] = std::move(list);
  return result;
}

json declared_client_capabilities(const InputHandlers& handlers,
                                  const std::optional<std::vector<Root>>& roots) {
  json caps = json::object();
  if (roots) caps["roots"]["listChanged"] = false;
  if (handlers.elicit && (handlers.elicit_form || handlers.elicit_url)) {
    json modes = json::object();
    if (handlers.elicit_form) modes["form"] = json::object();
    if (handlers.elicit_url) modes["url"] = json::object();
    caps["elicitation"] = std::move(modes);
  }
  if (handlers.sample) caps["sampling"] = json::object();
  return caps;
}

json apply_elicitation_defaults(const json& requested_schema, json content) {
  if (!requested_schema.is_object()) return content;
  auto props = requested_schema.find("properties");
  if (props == requested_schema.end() || !props->is_object()) return content;
  if (content.is_null()) content = json::object();
  if (!content.is_object()) return content;
  for (const auto& [name, schema] : props->items()) {
    if (!schema.is_object()) continue;
    auto def = schema.find("default");
    if (def == schema.end()) continue;
    auto have = content.find(name);
    if (have == content.end() || have->is_null()) content[name] = *def;
  }
  return content;
}

Result<Elicitation> parse_elicitation(const std::string& server, const json& params) {
  auto bad = [](std::string what) {
    return Error::make(ErrorCode::protocol, "invalid elicitation/create request: " + std::move(what));
  };
  if (!params.is_object()) return bad("params is not an object");
  Elicitation e;
  e.server = server;
  e.params = params;
  if (auto mode = params.find("mode"); mode != params.end() && !mode->is_null()) {
    if (!mode->is_string()) return bad("\"mode\" is not a string");
    const auto& m = mode->get_ref<const std::string&>();
    if (m == "url") {
      e.mode = Elicitation::Mode::url;
    } else if (m != "form") {
      return bad("unknown mode \"" + m + "\"");
    }
  }
  auto message = params.find("message");
  if (message == params.end() || !message->is_string()) return bad("no string \"message\"");
  e.message = message->get<std::string>();
  if (e.mode == Elicitation::Mode::url) {
    auto url = params.find("url");
    if (url == params.end() || !url->is_string() || url->get_ref<const std::string&>().empty()) {
      return bad("url mode without a \"url\"");
    }
    e.url = url->get<std::string>();
    if (auto id = params.find("elicitationId"); id != params.end() && id->is_string()) {
      e.elicitation_id = id->get<std::string>();
    }
  } else {
    auto schema = params.find("requestedSchema");
    if (schema == params.end() || !schema->is_object()) return bad("form mode without a \"requestedSchema\" object");
    e.requested_schema = *schema;
  }
  return e;
}

json elicit_result_json(const ElicitAnswer& answer, Elicitation::Mode mode) {
  json result = json::object();
  switch (answer.action) {
    case ElicitAnswer::Action::accept:
      result["action"] = "accept";
      if (mode == Elicitation::Mode::form) {
        result["content"] = answer.content.is_object() ? answer.content : json::object();
      }
      break;
    case ElicitAnswer::Action::decline:
      result["action"] = "decline";
      break;
    case ElicitAnswer::Action::cancel:
      result["action"] = "cancel";
      break;
  }
  return result;
}

}  // namespace mcprt
