#pragma once
// The tool catalog of the tool-search quality benchmark (bench_tool_search.cpp): the real
// servers' tool lists (real_tools.json, captured by capture_tools.mjs) plus the synthetic
// servers of synthetic_servers.json, expanded here, deterministically, into MCP tool
// definitions (name, description, inputSchema) in the styles real servers use.
//
// A synthetic resource [noun, plural, phrase, id, fields, verbs] gives one tool per verb:
// <verb>_<noun> (list and search take the plural), in the server's case (snake_case,
// kebab-case or camelCase), described from the verb's template in the server's style
// (0: short imperative like GitHub's server, 1: verbose third person, 2: terse), whose
// input properties are the server's scope, then the id (get, update, delete, archive),
// then the fields (create, update), then the verb's own (paging, query).
// Hand-written tools keep their description, and their name unless it is snake_case on a
// server of another case; their properties follow the server's case.
//
// Header-only so that the catalog can be listed without the search index (see the
// README of tests/bench/tool_search).

#include <cctype>
#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcprt/tool_names.hpp"

namespace mcprt::tool_search_bench {

using json = nlohmann::json;

struct CatalogServer {
  std::string name;         // the mcpServers key
  std::vector<json> tools;  // definitions as a server would list them
  bool real = false;
};

inline bool read_json_file(const std::string& path, json& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path;
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  out = json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
  if (out.is_discarded()) {
    error = path + ": not valid JSON";
    return false;
  }
  return true;
}

inline std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '_') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// "pull_request" -> "pull request"
inline std::string spaced(std::string_view snake) {
  std::string out(snake);
  for (char& c : out)
    if (c == '_') c = ' ';
  return out;
}

// Words joined in a naming case: "snake" list_pull_requests, "kebab" list-pull-requests,
// "camel" listPullRequests.
inline std::string in_case(const std::vector<std::string>& words, std::string_view name_case) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string word = words[i];
    if (name_case == "camel") {
      if (i > 0 && !word.empty()) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
    } else if (i > 0) {
      out.push_back(name_case == "kebab" ? '-' : '_');
    }
    out += word;
  }
  return out;
}

// Property names: snake_case on snake servers, camelCase otherwise (as kebab- and
// camel-named servers mostly do).
inline std::string property_in_case(std::string_view snake, std::string_view name_case) {
  return in_case(split_words(snake), name_case == "snake" ? "snake" : "camel");
}

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

inline json property_schema(const std::string& snake, const std::string& description) {
  static const std::vector<std::string> integers = {
      "page", "per_page", "limit", "count", "max_results", "top_k", "size", "replicas", "quantity",
      "depth", "tail", "tail_lines", "days", "seconds", "duration", "steps", "offset", "from",
      "amount", "unit_amount", "percent_off", "amount_off", "max_age", "max_uses", "volume_percent",
      "min_replicas", "max_replicas", "target_cpu", "rows", "columns", "index", "start", "stop",
      "end", "ttl", "delay_seconds", "expires_in", "num_nodes", "size_gigabytes", "score",
      "max_count", "context_lines", "take", "dimension", "priority", "allocated_storage",
      "desired_count", "timeout", "threshold", "expiration_days", "trial_period_days",
      "auto_suspend", "page_size", "lines", "width", "height", "scale", "min_duration",
      "sample_size", "pos", "revision", "version", "to_revision", "pid", "brightness",
      "temperature", "radius", "latitude", "longitude"};
  static const std::vector<std::string> booleans = {
      "draft", "prerelease", "private", "public", "is_private", "unique", "force", "detach",
      "recursive", "dry_run", "prune", "submit", "slowly", "squash", "capped", "sensitive",
      "proxied", "active", "checked", "analyze", "with_scores", "previous", "reply_all",
      "at_period_end", "restock", "failed_only", "in_next_release", "overwrite", "auto_init",
      "create_opportunity", "close_source_branch", "should_remove_source_branch", "prod",
      "purge_everything", "match_case", "from_failed", "on", "send_email", "login", "superuser",
      "volumes", "all", "delete", "raw", "rerank", "include_image", "superuser"};
  std::string type = "string";
  for (const auto& name : integers)
    if (snake == name) type = "integer";
  if (ends_with(snake, "_number") || ends_with(snake, "_days") || ends_with(snake, "_seconds") ||
      ends_with(snake, "_minutes"))
    type = "integer";
  for (const auto& name : booleans)
    if (snake == name) type = "boolean";
  json schema = {{"type", type}, {"description", description}};
  const bool list = type == "string" &&
                    (ends_with(snake, "_ids") || ends_with(snake, "_keys") || snake == "labels" ||
                     snake == "assignees" || snake == "files" || snake == "paths" || snake == "tags" ||
                     snake == "attendees" || snake == "users" || snake == "reviewers" ||
                     snake == "items" || snake == "line_items" || snake == "roles" ||
                     snake == "events" || snake == "channels" || snake == "uris" ||
                     snake == "entities" || snake == "names" || snake == "records" ||
                     snake == "ids" || snake == "message_ids" || snake == "values" ||
                     snake == "attachments" || snake == "recipients" || snake == "signers");
  if (list) {
    schema = {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", description}};
  }
  return schema;
}

inline std::string property_description(const std::string& snake, const json& server,
                                        const std::string& noun, const std::string& id) {
  static const std::map<std::string, std::string> known = {
      {"owner", "Repository owner (user or organization)"},
      {"repo", "Repository name"},
      {"page", "Page number of the results to fetch (1-based)"},
      {"per_page", "Results per page (max 100)"},
      {"limit", "Maximum number of results to return"},
      {"cursor", "Pagination cursor returned by a previous call"},
      {"query", "Search query"},
      {"sort", "Field to sort the results by"},
      {"order", "Sort direction: asc or desc"},
      {"filter", "Filter expression to narrow the results"},
      {"state", "Filter by state: open, closed or all"},
      {"format", "Output format: json or csv"},
      {"region", "AWS region, e.g. us-east-1"},
      {"namespace", "Kubernetes namespace (default: default)"},
      {"body", "Body text (Markdown supported)"},
      {"title", "Title"},
      {"description", "Description"},
      {"name", "Name"},
      {"email", "Email address"},
  };
  auto it = known.find(snake);
  if (it != known.end()) return it->second;
  if (!id.empty() && snake == id) return "The " + spaced(id) + " of the " + spaced(noun);
  const std::string scope = server.value("scope", "");
  for (const auto& word : split_words(scope))
    if (word == snake) return "The " + spaced(snake) + " in " + server.value("product", "") + "";
  std::string words = spaced(snake);
  if (!words.empty()) words[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(words[0])));
  return words;
}

// {product}, {in}, {noun}, {plural}, {phrase}
inline std::string fill(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    const std::string marker = "{" + key + "}";
    for (std::size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + value.size()))
      text.replace(at, marker.size(), value);
  }
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

// The description of a generated tool: verb -> style 0, 1, 2.
inline const char* verb_template(const std::string& verb, int style) {
  static const std::map<std::string, std::vector<const char*>> templates = {
      {"list",
       {"List {plural} in {in}. Supports pagination with page and per_page.",
        "Retrieves a paginated list of {plural} from {in}. Use the filter to narrow the results "
        "and the cursor to fetch the next page.",
        "List {plural}"}},
      {"get",
       {"Get details of a specific {noun} in {in}.",
        "Retrieves {phrase} by its ID, including all of its fields and metadata.",
        "Get {phrase}"}},
      {"create",
       {"Create a new {noun} in {in}.",
        "Creates {phrase} in {in} with the given fields and returns the created {noun}.",
        "Create {phrase}"}},
      {"update",
       {"Update an existing {noun} in {in}. Only the fields provided are changed.",
        "Updates the fields of an existing {noun}. Fields that are not given keep their current "
        "values.",
        "Update {phrase}"}},
      {"delete",
       {"Delete {phrase} from {in}. This action cannot be undone.",
        "Permanently deletes {phrase}. Use with caution: deleted {plural} cannot be recovered.",
        "Delete {phrase}"}},
      {"search",
       {"Search for {plural} across {product} using a query string.",
        "Searches {plural} in {product} by keyword and returns the best matches with their IDs.",
        "Search {plural}"}},
      {"archive",
       {"Archive {phrase} in {in}. Archived {plural} are hidden but can be restored.",
        "Archives {phrase}. It is kept read-only and no longer shows in lists.",
        "Archive {phrase}"}},
  };
  auto it = templates.find(verb);
  if (it == templates.end()) return nullptr;
  return it->second[static_cast<std::size_t>(style) % 3];
}

inline json make_tool(const std::string& name, const std::string& description,
                      const std::vector<std::string>& properties, std::size_t required_count,
                      const json& server, const std::string& noun, const std::string& id) {
  const std::string name_case = server.value("case", "snake");
  json props = json::object();
  json required = json::array();
  for (std::size_t i = 0; i < properties.size(); ++i) {
    const std::string& snake = properties[i];
    const std::string key = property_in_case(snake, name_case);
    if (props.contains(key)) continue;
    props[key] = property_schema(snake, property_description(snake, server, noun, id));
    if (i < required_count) required.push_back(key);
  }
  json schema = {{"type", "object"}, {"properties", std::move(props)}};
  if (!required.empty()) schema["required"] = std::move(required);
  return {{"name", name}, {"description", description}, {"inputSchema", std::move(schema)}};
}

// One synthetic server of synthetic_servers.json, expanded. Returns false (with `error`)
// when the entry is malformed.
inline bool expand_synthetic_server(const json& server, CatalogServer& out, std::string& error) {
  const std::string name = server.value("name", "");
  const std::string name_case = server.value("case", "snake");
  const int style = server.value("style", 0);
  const std::vector<std::string> scope = split_words(server.value("scope", ""));
  out = CatalogServer{name, {}, false};
  const json* resources = server.contains("resources") ? &server["resources"] : nullptr;
  for (const json& r : resources ? *resources : json::array()) {
    if (!r.is_array() || r.size() != 6) {
      error = name + ": a resource is not [noun, plural, phrase, id, fields, verbs]";
      return false;
    }
    const std::string noun = r[0].get<std::string>(), plural = r[1].get<std::string>();
    const std::string phrase = r[2].get<std::string>(), id = r[3].get<std::string>();
    const std::vector<std::string> fields = split_words(r[4].get<std::string>());
    const std::map<std::string, std::string> values = {
        {"product", server.value("product", name)}, {"in", server.value("in", name)},
        {"noun", spaced(noun)}, {"plural", spaced(plural)}, {"phrase", phrase}};
    for (const std::string& verb : split_words(r[5].get<std::string>())) {
      const char* text = verb_template(verb, style);
      if (!text) {
        error = name + ": unknown verb " + verb;
        return false;
      }
      std::vector<std::string> words = {verb};
      for (const auto& w : split_words(verb == "list" || verb == "search" ? plural : noun)) words.push_back(w);
      std::vector<std::string> properties = scope;
      std::size_t required = scope.size();
      if (verb == "get" || verb == "update" || verb == "delete" || verb == "archive") {
        properties.push_back(id);
        required = properties.size();
      }
      if (verb == "create" || verb == "update") {
        for (const auto& field : fields) properties.push_back(field);
        if (verb == "create" && !fields.empty()) required = scope.size() + 1;
      }
      if (verb == "list") {
        if (style == 0) properties.insert(properties.end(), {"page", "per_page"});
        if (style == 1) properties.insert(properties.end(), {"filter", "cursor", "limit"});
        if (style == 2) properties.push_back("limit");
      }
      if (verb == "search") {
        properties.insert(properties.begin(), "query");
        required = 1;
        properties.push_back("limit");
      }
      out.tools.push_back(make_tool(in_case(words, name_case), fill(text, values), properties,
                                    required, server, noun, id));
    }
  }
  const json* tools = server.contains("tools") ? &server["tools"] : nullptr;
  for (const json& t : tools ? *tools : json::array()) {
    if (!t.is_array() || t.size() != 3) {
      error = name + ": a tool is not [name, description, properties]";
      return false;
    }
    const std::vector<std::string> properties = split_words(t[2].get<std::string>());
    // A snake_case name on a camel- or kebab-case server follows the server's case.
    const std::string tool_name = name_case == "snake" ? t[0].get<std::string>()
                                                       : in_case(split_words(t[0].get<std::string>()), name_case);
    out.tools.push_back(make_tool(tool_name, t[1].get<std::string>(), properties,
                                  properties.empty() ? 0 : 1, server, "", ""));
  }
  return true;
}

struct Catalog {
  std::vector<CatalogServer> servers;  // real first, then synthetic, in file order
  std::size_t size() const {
    std::size_t n = 0;
    for (const auto& s : servers) n += s.tools.size();
    return n;
  }
};

inline bool load_catalog(const std::string& real_path, const std::string& synthetic_path,
                         Catalog& catalog, std::string& error) {
  json real, synthetic;
  if (!read_json_file(real_path, real, error) || !read_json_file(synthetic_path, synthetic, error)) return false;
  if (!real.is_object() || !synthetic.is_object() || !synthetic.contains("servers") ||
      !synthetic["servers"].is_array()) {
    error = "real_tools.json must be {server: [tools]}, synthetic_servers.json {servers: [...]}";
    return false;
  }
  for (auto& [server, tools] : real.items()) {
    if (!tools.is_array()) {
      error = "real_tools.json: " + server + " is not an array";
      return false;
    }
    catalog.servers.push_back(CatalogServer{server, tools.get<std::vector<json>>(), true});
  }
  for (const json& server : synthetic["servers"]) {
    CatalogServer expanded;
    if (!expand_synthetic_server(server, expanded, error)) return false;
    catalog.servers.push_back(std::move(expanded));
  }
  return true;
}

// A catalog of exactly `size` tools for the growth measurements: the first `size` tools of
// `full` (servers in order, the last one cut), and past its end copies of the synthetic
// servers as second accounts ("<server>_2", then "_3", ...), as a user with work and
// personal accounts has.
inline Catalog sized_catalog(const Catalog& full, std::size_t size) {
  Catalog out;
  std::size_t left = size;
  for (int copy = 1; left > 0; ++copy) {
    bool any = false;
    for (const auto& server : full.servers) {
      if (left == 0) break;
      if (copy > 1 && server.real) continue;
      CatalogServer s{copy == 1 ? server.name : server.name + "_" + std::to_string(copy), {}, server.real};
      for (const auto& tool : server.tools) {
        if (left == 0) break;
        s.tools.push_back(tool);
        --left;
        any = true;
      }
      out.servers.push_back(std::move(s));
    }
    if (!any) break;
  }
  return out;
}

// The full name mcprt gives each tool (mcp_<server>_<tool>, tool_names.hpp), in catalog order.
inline std::vector<std::string> catalog_tool_names(const Catalog& catalog) {
  std::vector<RawToolRef> refs;
  for (const auto& server : catalog.servers)
    for (const auto& tool : server.tools) refs.push_back({server.name, tool.value("name", "")});
  return assign_tool_names(refs);
}

}  // namespace mcprt::tool_search_bench
