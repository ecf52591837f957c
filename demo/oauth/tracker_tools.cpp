#include "tracker_tools.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace mcprt::demo {
namespace {

constexpr std::size_t kMaxTitleBytes = 256;
constexpr std::size_t kMaxTextBytes = 64 * 1024;
constexpr std::size_t kMaxIssuesPerProject = 1000;
constexpr std::size_t kMaxCommentsPerIssue = 200;
constexpr std::size_t kMaxLabelsPerIssue = 20;

struct Issue {
  std::int64_t number = 0;
  std::string title;
  std::string body;
  bool open = true;
  std::set<std::string> labels;
  std::string assignee;
  std::vector<std::string> comments;
};

struct Project {
  std::string description;
  std::set<std::string> labels;  // the labels issues of this project may carry
  std::map<std::int64_t, Issue> issues;
  std::int64_t next_number = 1;
};

struct TrackerState {
  std::mutex mutex;
  std::map<std::string, Project> projects;
};

json text_content(std::string text) {
  return json::array({json{{"type", "text"}, {"text", std::move(text)}}});
}

json tool_error(const std::string& tool, const std::string& message) {
  return json{{"content", text_content(tool + ": " + message)}, {"isError", true}};
}

json result(std::string text, json structured) {
  return json{{"content", text_content(std::move(text))},
              {"structuredContent", std::move(structured)}};
}

json issue_json(const std::string& project, const Issue& issue) {
  return json{{"project", project},
              {"number", issue.number},
              {"title", issue.title},
              {"body", issue.body},
              {"state", issue.open ? "open" : "closed"},
              {"labels", json(std::vector<std::string>(issue.labels.begin(), issue.labels.end()))},
              {"assignee", issue.assignee.empty() ? json(nullptr) : json(issue.assignee)},
              {"comments", issue.comments.size()}};
}

std::string issue_line(const std::string& project, const Issue& issue) {
  return project + "#" + std::to_string(issue.number) + " [" + (issue.open ? "open" : "closed") +
         "] " + issue.title;
}

std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Reads a call's arguments; the first problem wins and is reported as the tool error.
class Args {
 public:
  explicit Args(const json& args) : args_(args) {}

  std::string text(const char* name, bool required, std::size_t max_bytes) {
    auto it = args_.find(name);
    if (it == args_.end() || it->is_null()) {
      if (required) fail(std::string("\"") + name + "\" is required");
      return {};
    }
    if (!it->is_string()) {
      fail(std::string("\"") + name + "\" must be a string");
      return {};
    }
    const auto& s = it->get_ref<const std::string&>();
    if (required && s.empty()) fail(std::string("\"") + name + "\" must not be empty");
    if (s.size() > max_bytes) {
      fail(std::string("\"") + name + "\" is longer than " + std::to_string(max_bytes) +
           " bytes");
    }
    return s;
  }
  bool has(const char* name) const {
    auto it = args_.find(name);
    return it != args_.end() && !it->is_null();
  }
  std::int64_t number(const char* name) {
    auto it = args_.find(name);
    if (it == args_.end() || !it->is_number_integer()) {
      fail(std::string("\"") + name + "\" must be an integer");
      return 0;
    }
    if (it->is_number_unsigned() &&
        it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      fail(std::string("\"") + name + "\" is out of range");
      return 0;
    }
    return it->get<std::int64_t>();
  }
  void fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
  }
  const std::string& error() const { return error_; }

 private:
  const json& args_;
  std::string error_;
};

json string_prop(const char* description) {
  return json{{"type", "string"}, {"description", description}};
}

json schema(json properties, std::vector<std::string> required) {
  json s{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = required;
  return s;
}

// The two arguments that name one issue.
json issue_props(json more = json::object()) {
  json p{{"project", string_prop("Project key, e.g. \"demo\".")},
         {"number", {{"type", "integer"}, {"minimum", 1}, {"description", "Issue number."}}}};
  p.update(more);
  return p;
}

using Handler = json (*)(TrackerState&, const std::string& tool, Args&);

struct ToolSpec {
  const char* name;
  const char* title;
  const char* description;
  bool read_only;
  bool destructive;
  json (*input_schema)();
  Handler handler;
};

// Looks up the project (and the issue) an argument set names, or reports why not.
Project* find_project(TrackerState& st, Args& a) {
  const std::string key = a.text("project", true, kMaxTitleBytes);
  if (!a.error().empty()) return nullptr;
  auto it = st.projects.find(key);
  if (it == st.projects.end()) {
    a.fail("no project \"" + key + "\" (list_projects shows the projects)");
    return nullptr;
  }
  return &it->second;
}

Issue* find_issue(TrackerState& st, Args& a, std::string* project_key = nullptr) {
  Project* p = find_project(st, a);
  const std::int64_t number = a.number("number");
  if (!p || !a.error().empty()) return nullptr;
  auto it = p->issues.find(number);
  if (it == p->issues.end()) {
    a.fail("no issue #" + std::to_string(number) + " in project \"" +
           a.text("project", true, kMaxTitleBytes) + "\"");
    return nullptr;
  }
  if (project_key) *project_key = a.text("project", true, kMaxTitleBytes);
  return &it->second;
}

json list_projects(TrackerState& st, const std::string&, Args&) {
  json out = json::array();
  std::string text;
  for (const auto& [key, p] : st.projects) {
    out.push_back({{"key", key}, {"description", p.description}, {"issues", p.issues.size()}});
    text += key + ": " + p.description + " (" + std::to_string(p.issues.size()) + " issues)\n";
  }
  return result(text, json{{"projects", out}});
}

json get_project(TrackerState& st, const std::string& tool, Args& a) {
  Project* p = find_project(st, a);
  if (!a.error().empty()) return tool_error(tool, a.error());
  std::size_t open = 0;
  for (const auto& [n, i] : p->issues) open += i.open ? 1 : 0;
  const std::string key = a.text("project", true, kMaxTitleBytes);
  return result(key + ": " + p->description + ", " + std::to_string(open) + " open of " +
                    std::to_string(p->issues.size()),
                json{{"key", key},
                     {"description", p->description},
                     {"open_issues", open},
                     {"issues", p->issues.size()}});
}

json list_labels(TrackerState& st, const std::string& tool, Args& a) {
  Project* p = find_project(st, a);
  if (!a.error().empty()) return tool_error(tool, a.error());
  std::string text;
  for (const auto& l : p->labels) text += (text.empty() ? "" : ", ") + l;
  return result(text, json{{"labels", std::vector<std::string>(p->labels.begin(), p->labels.end())}});
}

json list_issues(TrackerState& st, const std::string& tool, Args& a) {
  Project* p = find_project(st, a);
  const std::string state = a.has("state") ? a.text("state", false, 16) : "open";
  if (state != "open" && state != "closed" && state != "all") {
    a.fail("\"state\" must be \"open\", \"closed\" or \"all\"");
  }
  if (!a.error().empty()) return tool_error(tool, a.error());
  const std::string key = a.text("project", true, kMaxTitleBytes);
  json out = json::array();
  std::string text;
  for (const auto& [n, i] : p->issues) {
    if (state == "all" || (state == "open") == i.open) {
      out.push_back(issue_json(key, i));
      text += issue_line(key, i) + "\n";
    }
  }
  if (text.empty()) text = "no " + state + " issues in " + key;
  return result(text, json{{"issues", out}});
}

json get_issue(TrackerState& st, const std::string& tool, Args& a) {
  std::string key;
  Issue* i = find_issue(st, a, &key);
  if (!a.error().empty()) return tool_error(tool, a.error());
  return result(issue_line(key, *i) + "\n" + i->body, issue_json(key, *i));
}

json search_issues(TrackerState& st, const std::string& tool, Args& a) {
  const std::string query = lower_ascii(a.text("query", true, kMaxTitleBytes));
  if (!a.error().empty()) return tool_error(tool, a.error());
  json out = json::array();
  std::string text;
  for (const auto& [key, p] : st.projects) {
    for (const auto& [n, i] : p.issues) {
      if (lower_ascii(i.title).find(query) != std::string::npos ||
          lower_ascii(i.body).find(query) != std::string::npos) {
        out.push_back(issue_json(key, i));
        text += issue_line(key, i) + "\n";
      }
    }
  }
  if (text.empty()) text = "no issue matches \"" + query + "\"";
  return result(text, json{{"issues", out}});
}

json list_comments(TrackerState& st, const std::string& tool, Args& a) {
  Issue* i = find_issue(st, a);
  if (!a.error().empty()) return tool_error(tool, a.error());
  std::string text;
  for (std::size_t k = 0; k < i->comments.size(); ++k) {
    text += std::to_string(k + 1) + ". " + i->comments[k] + "\n";
  }
  if (text.empty()) text = "no comments";
  return result(text, json{{"comments", i->comments}});
}

json create_issue(TrackerState& st, const std::string& tool, Args& a) {
  Project* p = find_project(st, a);
  Issue issue;
  issue.title = a.text("title", true, kMaxTitleBytes);
  issue.body = a.text("body", false, kMaxTextBytes);
  if (p && p->issues.size() >= kMaxIssuesPerProject) {
    a.fail("the project holds " + std::to_string(kMaxIssuesPerProject) +
           " issues already (delete_issue some first)");
  }
  if (!a.error().empty()) return tool_error(tool, a.error());
  issue.number = p->next_number++;
  const std::string key = a.text("project", true, kMaxTitleBytes);
  const Issue& stored = p->issues.emplace(issue.number, std::move(issue)).first->second;
  return result("created " + issue_line(key, stored), issue_json(key, stored));
}

json update_issue(TrackerState& st, const std::string& tool, Args& a) {
  std::string key;
  Issue* i = find_issue(st, a, &key);
  const bool title = a.has("title");
  const bool body = a.has("body");
  const std::string new_title = title ? a.text("title", true, kMaxTitleBytes) : std::string();
  const std::string new_body = body ? a.text("body", false, kMaxTextBytes) : std::string();
  if (!title && !body) a.fail("give \"title\" or \"body\" (or both) to change");
  if (!a.error().empty()) return tool_error(tool, a.error());
  if (title) i->title = new_title;
  if (body) i->body = new_body;
  return result("updated " + issue_line(key, *i), issue_json(key, *i));
}

json set_open(TrackerState& st, const std::string& tool, Args& a, bool open) {
  std::string key;
  Issue* i = find_issue(st, a, &key);
  if (!a.error().empty()) return tool_error(tool, a.error());
  i->open = open;
  return result((open ? "reopened " : "closed ") + issue_line(key, *i), issue_json(key, *i));
}

json close_issue(TrackerState& st, const std::string& tool, Args& a) {
  return set_open(st, tool, a, false);
}

json reopen_issue(TrackerState& st, const std::string& tool, Args& a) {
  return set_open(st, tool, a, true);
}

json delete_issue(TrackerState& st, const std::string& tool, Args& a) {
  std::string key;
  Issue* i = find_issue(st, a, &key);
  if (!a.error().empty()) return tool_error(tool, a.error());
  const std::int64_t number = i->number;
  st.projects[key].issues.erase(number);
  return result("deleted " + key + "#" + std::to_string(number),
                json{{"project", key}, {"number", number}, {"deleted", true}});
}

json add_comment(TrackerState& st, const std::string& tool, Args& a) {
  std::string key;
  Issue* i = find_issue(st, a, &key);
  std::string body = a.text("body", true, kMaxTextBytes);
  if (i && i->comments.size() >= kMaxCommentsPerIssue) {
    a.fail("the issue has " + std::to_string(kMaxCommentsPerIssue) + " comments already");
  }
  if (!a.error().empty()) return tool_error(tool, a.error());
  i->comments.push_back(std::move(body));
  return result("commented on " + issue_line(key, *i), issue_json(key, *i));
}

json change_label(TrackerState& st, const std::string& tool, Args& a, bool add) {
  std::string key;
  Issue* i = find_issue(st, a, &key);
  const std::string label = a.text("label", true, kMaxTitleBytes);
  if (i && a.error().empty()) {
    const auto& known = st.projects[key].labels;
    if (add && known.count(label) == 0) {
      a.fail("no label \"" + label + "\" in project \"" + key + "\" (list_labels shows them)");
    } else if (add && i->labels.size() >= kMaxLabelsPerIssue && i->labels.count(label) == 0) {
      a.fail("an issue carries at most " + std::to_string(kMaxLabelsPerIssue) + " labels");
    } else if (!add && i->labels.count(label) == 0) {
      a.fail("issue #" + std::to_string(i->number) + " has no label \"" + label + "\"");
    }
  }
  if (!a.error().empty()) return tool_error(tool, a.error());
  if (add) {
    i->labels.insert(label);
  } else {
    i->labels.erase(label);
  }
  return result((add ? "labelled " : "unlabelled ") + issue_line(key, *i), issue_json(key, *i));
}

json add_label(TrackerState& st, const std::string& tool, Args& a) {
  return change_label(st, tool, a, true);
}

json remove_label(TrackerState& st, const std::string& tool, Args& a) {
  return change_label(st, tool, a, false);
}

json assign_issue(TrackerState& st, const std::string& tool, Args& a) {
  std::string key;
  Issue* i = find_issue(st, a, &key);
  const std::string assignee = a.text("assignee", false, kMaxTitleBytes);
  if (!a.error().empty()) return tool_error(tool, a.error());
  i->assignee = assignee;
  return result((assignee.empty() ? "unassigned " : "assigned " + assignee + " to ") +
                    issue_line(key, *i),
                issue_json(key, *i));
}

json no_args() { return schema(json::object(), {}); }
json project_only() { return schema({{"project", string_prop("Project key, e.g. \"demo\".")}}, {"project"}); }
json issue_only() { return schema(issue_props(), {"project", "number"}); }

const ToolSpec kTools[] = {
    {"list_projects", "List projects", "Lists the tracker's projects with their issue counts.",
     true, false, no_args, list_projects},
    {"get_project", "Get a project", "Shows one project: description and open issue count.",
     true, false, project_only, get_project},
    {"list_labels", "List labels", "Lists the labels a project's issues may carry.", true, false,
     project_only, list_labels},
    {"list_issues", "List issues",
     "Lists a project's issues (open ones unless \"state\" says \"closed\" or \"all\").", true,
     false,
     [] {
       return schema({{"project", string_prop("Project key.")},
                      {"state", {{"type", "string"}, {"enum", {"open", "closed", "all"}}}}},
                     {"project"});
     },
     list_issues},
    {"get_issue", "Get an issue", "Shows one issue with its body, labels and assignee.", true,
     false, issue_only, get_issue},
    {"search_issues", "Search issues",
     "Finds issues of every project whose title or body contains the query (case-insensitive).",
     true, false, [] { return schema({{"query", string_prop("Text to look for.")}}, {"query"}); },
     search_issues},
    {"list_comments", "List comments", "Lists an issue's comments, oldest first.", true, false,
     issue_only, list_comments},
    {"create_issue", "Create an issue", "Opens a new issue in a project.", false, false,
     [] {
       return schema({{"project", string_prop("Project key.")},
                      {"title", string_prop("One-line summary.")},
                      {"body", string_prop("Details (optional).")}},
                     {"project", "title"});
     },
     create_issue},
    {"update_issue", "Update an issue", "Changes an issue's title and/or body.", false, false,
     [] {
       return schema(issue_props({{"title", string_prop("New title.")},
                                  {"body", string_prop("New body.")}}),
                     {"project", "number"});
     },
     update_issue},
    {"close_issue", "Close an issue", "Marks an issue closed.", false, false, issue_only,
     close_issue},
    {"reopen_issue", "Reopen an issue", "Marks a closed issue open again.", false, false,
     issue_only, reopen_issue},
    {"delete_issue", "Delete an issue", "Removes an issue and its comments for good.", false, true,
     issue_only, delete_issue},
    {"add_comment", "Comment on an issue", "Adds a comment to an issue.", false, false,
     [] { return schema(issue_props({{"body", string_prop("The comment.")}}), {"project", "number", "body"}); },
     add_comment},
    {"add_label", "Label an issue", "Adds one of the project's labels to an issue.", false, false,
     [] { return schema(issue_props({{"label", string_prop("Label name.")}}), {"project", "number", "label"}); },
     add_label},
    {"remove_label", "Unlabel an issue", "Removes a label from an issue.", false, false,
     [] { return schema(issue_props({{"label", string_prop("Label name.")}}), {"project", "number", "label"}); },
     remove_label},
    {"assign_issue", "Assign an issue",
     "Sets an issue's assignee (an empty or missing \"assignee\" unassigns it).", false, false,
     [] { return schema(issue_props({{"assignee", string_prop("User name.")}}), {"project", "number"}); },
     assign_issue},
};

void seed(TrackerState& st) {
  auto add = [](Project& p, std::string title, std::string body, bool open,
                std::set<std::string> labels) {
    Issue i;
    i.number = p.next_number++;
    i.title = std::move(title);
    i.body = std::move(body);
    i.open = open;
    i.labels = std::move(labels);
    p.issues.emplace(i.number, std::move(i));
  };
  Project& demo = st.projects["demo"];
  demo.description = "The demo project";
  demo.labels = {"bug", "docs", "feature"};
  add(demo, "Login expires every day", "The refresh token is lost after rotation.", true, {"bug"});
  add(demo, "Document the auth commands", "mcprt auth login|logout|status.", true, {"docs"});
  add(demo, "Support step-up authorization", "Ask for more scopes on 403.", false, {"feature"});
  Project& web = st.projects["web"];
  web.description = "The web client";
  web.labels = {"bug", "browser"};
  add(web, "Popup blocked in Safari", "Open the popup from the click handler.", true,
      {"browser"});
}

}  // namespace

std::vector<ExtraTool> make_tracker_tools() {
  auto state = std::make_shared<TrackerState>();
  seed(*state);
  std::vector<ExtraTool> tools;
  for (const ToolSpec& spec : kTools) {
    ExtraTool t;
    t.definition = json{{"name", spec.name},
                        {"title", spec.title},
                        {"description", spec.description},
                        {"inputSchema", spec.input_schema()},
                        {"annotations",
                         {{"readOnlyHint", spec.read_only},
                          {"destructiveHint", spec.destructive},
                          {"openWorldHint", false}}}};
    const std::string name = spec.name;
    const Handler handler = spec.handler;
    t.call = [state, name, handler](const json& arguments) {
      std::lock_guard<std::mutex> lock(state->mutex);
      Args args(arguments);
      return handler(*state, name, args);
    };
    tools.push_back(std::move(t));
  }
  return tools;
}

}  // namespace mcprt::demo
