#include "mcprt/mcp_command.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "mcprt/config_edit.hpp"

namespace mcprt {
namespace {

std::string q(const std::string& s) { return "\"" + s + "\""; }

// "Claude Code (user) /home/u/.claude.json"; a trusted project entry says so:
// "VS Code (project, trusted) /repo/.vscode/mcp.json".
std::string describe_source(const SourceInfo& s, TrustState trust = TrustState::implicit) {
  if (s.provider.empty() && s.path.empty()) return "unknown source";
  std::string out = s.provider_name.empty() ? s.provider : s.provider_name;
  out += " (";
  out += to_string(s.level);
  if (trust == TrustState::trusted) out += ", trusted";
  out += ")";
  if (!s.path.empty()) out += " " + s.path;
  return out;
}

std::string first_line(const std::string& text) {
  auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// Rows as aligned columns, two spaces in front and between; the last column is not
// padded and trailing spaces are dropped. `rows` is not empty and its rows are as long.
std::string table_rows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i + 1 < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line = " ";
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += " " + (i + 1 < r.size() ? pad(r[i], widths[i]) : r[i]);
      if (i + 1 < r.size()) line += " ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string phase_label(const ServerState& st) {
  std::string label = to_string(st.phase);
  if (st.tools_from_cache && st.phase != ServerPhase::connected) label += " (cached tools)";
  if (st.circuit_open) label += " (circuit open)";
  return label;
}

// The tail of a stderr capture, at most `max_lines` lines, each indented.
std::string indent_tail(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  std::size_t start = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string out;
  for (std::size_t i = start; i < lines.size(); ++i) out += "    " + lines[i] + "\n";
  return out;
}

constexpr std::size_t kStderrTailLines = 20;

}  // namespace

std::vector<std::string> split_command_line(std::string_view line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else cur.push_back(c);
      continue;
    }
    if (quote == '"') {
      if (c == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\')) {
        cur.push_back(line[++i]);
      } else if (c == '"') {
        quote = 0;
      } else {
        cur.push_back(c);
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '\\' && i + 1 < line.size()) {
      cur.push_back(line[++i]);
    } else {
      cur.push_back(c);
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

// --- renderings (SPEC §15) ----------------------------------------------------------------

namespace {

// A table cell from server text: its first line, control characters as spaces, at most
// kCellBytes bytes (cut before a UTF-8 sequence, never inside one), then "...".
constexpr std::size_t kCellBytes = 120;
std::string catalog_cell(const json& value) {
  if (!value.is_string()) return {};
  std::string out = first_line(value.get_ref<const std::string&>());
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  if (out.size() > kCellBytes) {
    std::size_t cut = kCellBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

const json& json_member(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string string_member(const json& j, const char* key) {
  const json& v = json_member(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// "<name> [style]": a prompt's arguments, required ones in angle brackets.
std::string prompt_arguments_cell(const json& definition) {
  const json& args = json_member(definition, "arguments");
  if (!args.is_array()) return {};
  std::string out;
  for (const auto& a : args) {
    const std::string name = catalog_cell(json_member(a, "name"));
    if (name.empty()) continue;
    const bool required = json_member(a, "required") == true;
    out += (out.empty() ? "" : " ") + std::string(required ? "<" : "[") + name +
           (required ? ">" : "]");
  }
  return out;
}

// The decoded size of a base64 text, or nullopt when it is not base64.
std::optional<std::size_t> base64_size(const json& blob) {
  if (!blob.is_string()) return std::nullopt;
  auto bytes = decode_base64(blob.get_ref<const std::string&>());
  if (!bytes) return std::nullopt;
  return bytes->size();
}

std::string binary_label(const std::string& kind, const json& item) {
  std::string mime = catalog_cell(json_member(item, "mimeType"));
  const json& data = item.contains("blob") ? json_member(item, "blob") : json_member(item, "data");
  auto size = base64_size(data);
  std::string out = "[" + kind + (mime.empty() ? "" : " " + mime);
  out += size ? ", " + std::to_string(*size) + " bytes]" : ", not valid base64]";
  return out;
}

// `text` with `indent` before each line (a final newline ends the last line, no more).
void append_text_block(std::string& out, const std::string& text, const std::string& indent) {
  std::size_t start = 0;
  do {
    const auto nl = text.find('\n', start);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    out += indent + text.substr(start, end - start) + "\n";
    start = end + 1;
  } while (start < text.size());
}

}  // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t padding = 0;
  std::size_t symbols = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return std::nullopt;  // data after padding
    const int v = value(c);
    if (v < 0) return std::nullopt;
    ++symbols;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFFu));
    }
  }
  if (padding > 2 || symbols % 4 == 1) return std::nullopt;
  if (padding > 0 && (symbols + padding) % 4 != 0) return std::nullopt;
  return out;
}

std::string format_catalog(CatalogKind kind, const std::vector<CatalogEntry>& entries) {
  if (entries.empty()) return {};
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : entries) {
    const json& d = e.definition.get();
    std::vector<std::string> row{e.server};
    if (kind == CatalogKind::prompts) {
      row.push_back(catalog_cell(json_member(d, "name")));
      row.push_back(prompt_arguments_cell(d));
    } else {
      row.push_back(catalog_cell(
          json_member(d, kind == CatalogKind::resources ? "uri" : "uriTemplate")));
      row.push_back(catalog_cell(json_member(d, "name")));
      row.push_back(catalog_cell(json_member(d, "mimeType")));
    }
    std::string description = catalog_cell(json_member(d, "description"));
    if (description.empty()) description = catalog_cell(json_member(d, "title"));
    if (e.from_cache) description += description.empty() ? "(cached)" : " (cached)";
    row.push_back(std::move(description));
    rows.push_back(std::move(row));
  }
  return table_rows(rows);
}

std::string format_resource_contents(const json& result) {
  const json& contents = json_member(result, "contents");
  if (!contents.is_array() || contents.empty()) return "(no contents)\n";
  std::string out;
  for (const auto& item : contents) {
    if (contents.size() > 1) out += "--- " + catalog_cell(json_member(item, "uri")) + "\n";
    const json& text = json_member(item, "text");
    if (text.is_string()) {
      out += text.get<std::string>();
      if (out.empty() || out.back() != '\n') out += "\n";
    } else if (item.contains("blob")) {
      out += binary_label("binary", item) + "\n";
    } else {
      out += "[contents without text or blob]\n";
    }
  }
  return out;
}

std::string format_prompt_messages(const json& result) {
  std::string out;
  const std::string description = string_member(result, "description");
  if (!description.empty()) out += description + "\n\n";
  const json& messages = json_member(result, "messages");
  if (!messages.is_array() || messages.empty()) return out + "(no messages)\n";
  for (const auto& m : messages) {
    std::string role = catalog_cell(json_member(m, "role"));
    out += (role.empty() ? std::string("?") : role) + ":\n";
    const json& c = json_member(m, "content");
    const std::string type = string_member(c, "type");
    if (type == "text") {
      append_text_block(out, string_member(c, "text"), "  ");
    } else if (type == "image" || type == "audio") {
      out += "  " + binary_label(type, c) + "\n";
    } else if (type == "resource") {
      const json& r = json_member(c, "resource");
      out += "  [resource " + catalog_cell(json_member(r, "uri")) + "]\n";
      if (json_member(r, "text").is_string()) {
        append_text_block(out, string_member(r, "text"), "  ");
      } else {
        out += "  " + binary_label("binary", r) + "\n";
      }
    } else if (type == "resource_link") {
      out += "  [resource link " + catalog_cell(json_member(c, "uri")) + "]\n";
    } else {
      out += "  [" + (type.empty() ? std::string("content without a type") : catalog_cell(type)) +
             "]\n";
    }
  }
  return out;
}

Result<PromptTarget> resolve_prompt_name(const std::string& text,
                                         const std::vector<std::string>& servers,
                                         const std::vector<CatalogEntry>& prompts) {
  auto lists = [&](const std::string& server, const std::string& name) {
    return std::any_of(prompts.begin(), prompts.end(), [&](const CatalogEntry& e) {
      return e.server == server && string_member(e.definition.get(), "name") == name;
    });
  };
  std::optional<PromptTarget> fallback;
  for (std::size_t colon = text.find(':'); colon != std::string::npos;
       colon = text.find(':', colon + 1)) {
    PromptTarget t{text.substr(0, colon), text.substr(colon + 1)};
    if (t.name.empty() || std::find(servers.begin(), servers.end(), t.server) == servers.end()) {
      continue;
    }
    if (lists(t.server, t.name)) return t;
    if (!fallback) fallback = std::move(t);
  }
  if (fallback) return *fallback;  // the server will say whether it has the prompt
  std::vector<std::string> owners;
  for (const auto& e : prompts) {
    if (string_member(e.definition.get(), "name") == text) owners.push_back(e.server);
  }
  if (owners.size() == 1) return PromptTarget{owners.front(), text};
  if (owners.empty()) {
    return Error::make(ErrorCode::invalid_argument,
                       "No server has a prompt " + q(text) +
                           " (give it as <server>:<name>; the prompts command lists them)");
  }
  std::string names;
  for (const auto& s : owners) names += (names.empty() ? "" : ", ") + s + ":" + text;
  return Error::make(ErrorCode::invalid_argument,
                     "Several servers have a prompt " + q(text) + "; name one: " + names);
}

Result<json> parse_prompt_arguments(const std::vector<std::string>& words) {
  json args = json::object();
  for (const auto& w : words) {
    const auto eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error::make(ErrorCode::invalid_argument,
                         "A prompt argument is <argument>=<value>; got " + q(w));
    }
    args[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return args;
}

// --- tool search (SPEC §16) ------------------------------------------------------------------

namespace {

// A summary is one line already (summarize_description); server text may still hold other
// control characters (an escape sequence would reach the terminal).
std::string search_cell(std::string text) {
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text;
}

}  // namespace

std::string format_tool_search(std::string_view query, const ToolSearchResult& result,
                               const std::vector<ToolCatalogEntry>& catalog) {
  std::map<std::string, const ToolCatalogEntry*> by_name;
  for (const auto& e : catalog) by_name[e.name] = &e;
  const std::string searched =
      std::to_string(by_name.size()) + (by_name.size() == 1 ? " tool" : " tools");
  std::ostringstream out;
  if (result.hits.empty()) {
    if (result.not_found.empty())
      out << "No tool matches " << q(std::string(query)) << " (searched " << searched << ").\n";
  } else {
    out << "Tools for " << q(std::string(query)) << " (" << result.hits.size() << " of " << searched
        << "):\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& hit : result.hits) {
      auto it = by_name.find(hit.name);
      const ToolCatalogEntry* entry = it == by_name.end() ? nullptr : it->second;
      std::string match = to_string(hit.match);
      std::replace(match.begin(), match.end(), '-', ' ');
      std::string score = "-";
      if (hit.score > 0) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", hit.score);
        score = buf;
      }
      rows.push_back({search_cell(hit.name), entry ? search_cell(entry->server) : std::string(),
                      match, score, entry ? search_cell(entry->summary) : std::string()});
    }
    out << table_rows(rows);
  }
  for (const auto& name : result.not_found) {
    out << "No tool named " << q(search_cell(name))
        << " (select: takes full names, mcp_<server>_<tool>; searched " << searched << ").\n";
  }
  return out.str();
}

struct McpCommandController::Impl : std::enable_shared_from_this<Impl> {
  Impl(McpSession& s, McpCommandOptions o, DiscoveryResult d)
      : session(s), options(std::move(o)), discovery(std::move(d)) {}

  McpSession& session;
  McpCommandOptions options;
  DiscoveryResult discovery;

  using Done = std::function<void(std::string)>;

  Executor& executor() { return session.registry().executor(); }

  void answer(Done done, std::string text) {
    if (!text.empty() && text.back() != '\n') text.push_back('\n');
    std::weak_ptr<Impl> weak = weak_from_this();
    executor().post([weak, done = std::move(done), text = std::move(text)] {
      if (weak.lock()) done(text);
    });
  }

  // Wraps `done` so an answer arriving after the controller died is dropped.
  Done guarded(Done done) {
    std::weak_ptr<Impl> weak = weak_from_this();
    return [weak, done = std::move(done)](std::string text) {
      if (!weak.lock()) return;
      if (!text.empty() && text.back() != '\n') text.push_back('\n');
      done(std::move(text));
    };
  }

  void execute(const std::string& line, Done done) {
    std::vector<std::string> w = split_command_line(line);
    if (!w.empty() && (w[0] == "/mcp" || w[0] == "mcp")) w.erase(w.begin());
    const std::string sub = w.empty() ? "list" : w[0];
    std::vector<std::string> args(w.empty() ? w.end() : w.begin() + 1, w.end());

    if (sub == "help" || sub == "--help" || sub == "-h") return answer(std::move(done), usage());
    if (sub == "list" && args.empty()) return answer(std::move(done), list());
    if (sub == "tools" && args.size() <= 1)
      return answer(std::move(done), tools(args.empty() ? "" : args[0]));
    if (sub == "status" && args.size() == 1) return answer(std::move(done), status(args[0]));
    if ((sub == "resources" || sub == "prompts") && args.size() <= 1)
      return answer(std::move(done), catalogs(sub == "prompts", args.empty() ? "" : args[0]));
    if (sub == "read" && args.size() == 1) return read(args[0], std::move(done));
    if (sub == "prompt" && !args.empty()) return prompt(args, std::move(done));
    if (sub == "reload" && args.empty()) return reload(std::move(done));
    if (sub == "reconnect" && args.size() == 1) return reconnect(args[0], std::move(done));
    if (sub == "auth" && args.size() == 1) return auth(args[0], std::move(done));
    if ((sub == "enable" || sub == "disable") && args.size() == 1)
      return set_enabled(args[0], sub == "enable", std::move(done));
    if (sub == "add" && !args.empty()) return add(args, std::move(done));
    if (sub == "remove" && args.size() == 1) return remove(args[0], std::move(done));
    if (sub == "search" && !args.empty()) return answer(std::move(done), search(args));

    static const std::set<std::string> known{
        "list", "tools",  "status",    "reload",  "reconnect", "auth",   "enable", "disable",
        "add",  "remove", "resources", "prompts", "read",      "prompt", "search"};
    std::string head = known.count(sub) ? "Wrong arguments for /mcp " + sub + ".\n"
                                        : "Unknown subcommand " + q(sub) + ".\n";
    answer(std::move(done), head + usage());
  }

  std::shared_ptr<McpManager> manager() const { return session.manager(); }

  // --- list / tools / status ---------------------------------------------------------------

  std::string list() const {
    auto m = manager();
    if (!m) return "MCP is disabled.";
    auto states = m->server_states();
    auto sources = m->sources();
    std::set<std::string> shown;

    struct Row {
      std::string name, state, tools, source, error;
      std::vector<std::string> details;  // "would run: …" lines of a pending server
    };
    std::vector<Row> rows;
    for (const auto& st : states) {
      Row r;
      r.name = st.name;
      r.state = phase_label(st);
      r.tools = std::to_string(st.tool_count) + (st.tool_count == 1 ? " tool" : " tools");
      SourceInfo src = st.source;
      if (src.path.empty()) {
        if (auto it = sources.find(st.name); it != sources.end()) src = it->second;
      }
      r.source = describe_source(src, trust_state(discovery, st.name));
      if (st.last_error && st.phase != ServerPhase::connected) r.error = st.last_error->message;
      rows.push_back(std::move(r));
      shown.insert(st.name);
    }
    for (const auto& p : discovery.pending) {
      if (shown.count(p.name)) continue;
      Row r;
      r.name = p.name;
      r.state = "not trusted";
      r.tools = "-";
      r.source = describe_source(p.config.source);
      r.details = pending_details(p);
      rows.push_back(std::move(r));
      shown.insert(p.name);
    }
    for (const auto& name : discovery.disabled) {
      if (shown.count(name)) continue;
      Row r;
      r.name = name;
      r.state = "disabled";
      auto it = discovery.sources.find(name);
      r.source = it == discovery.sources.end() ? "" : describe_source(it->second);
      rows.push_back(std::move(r));
      shown.insert(name);
    }
    for (const auto& e : discovery.errors) {
      if (e.server.empty() || shown.count(e.server)) continue;
      Row r;
      r.name = e.server;
      r.state = "invalid";
      auto it = discovery.sources.find(e.server);
      r.source = it == discovery.sources.end() ? e.path : describe_source(it->second);
      r.error = e.message;
      rows.push_back(std::move(r));
      shown.insert(e.server);
    }
    // Entries that lost to another of the same name or endpoint: never started, but shown,
    // after the row of their name, so a definition never vanishes without a word.
    for (const auto& sh : discovery.shadowed) {
      Row r;
      r.name = sh.name;
      r.state = "shadowed";
      r.tools = "-";
      r.source = describe_source(sh.source);
      r.details.push_back(describe_shadowing(sh) + "; not started");
      rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
    if (rows.empty()) return "No MCP servers configured.";

    std::size_t wn = 4, ws = 6, wt = 5;
    for (const auto& r : rows) {
      wn = std::max(wn, r.name.size());
      ws = std::max(ws, r.state.size());
      wt = std::max(wt, r.tools.size());
    }
    std::ostringstream out;
    out << "MCP servers (" << rows.size() << "):\n";
    for (const auto& r : rows) {
      out << "  " << pad(r.name, wn) << "  " << pad(r.state, ws) << "  " << pad(r.tools, wt)
          << "  " << r.source << "\n";
      if (!r.error.empty()) out << "  " << pad("", wn) << "  error: " << first_line(r.error) << "\n";
      for (const auto& d : r.details) out << "  " << pad("", wn) << "  " << d << "\n";
    }
    if (session.tool_search_active()) {
      std::size_t deferred = 0, loaded = 0;
      for (const auto& e : session.catalog()) ++(e.loaded ? loaded : deferred);
      out << "Tool search: on (" << deferred << " deferred, " << loaded
          << " loaded; /mcp search <query> finds tools).\n";
    }
    out << trust_footer();
    return out.str();
  }

  // --- trust ---------------------------------------------------------------------------

  // What a pending server would run, one fact a line.
  static std::vector<std::string> pending_details(const ProjectServer& p) {
    std::vector<std::string> out;
    out.push_back(std::string(p.config.type == TransportType::stdio ? "would run: " : "would connect to: ") +
                  describe_launch(p.config));
    for (const auto& c : connect_time_commands(p.config)) out.push_back("would run at connect: " + c);
    auto vars = referenced_variables(p.config);
    if (!vars.empty()) {
      std::string line = "would read the environment variables:";
      for (const auto& v : vars) line += " " + v;
      out.push_back(line);
    }
    return out;
  }

  std::string trust_advice(const std::string& folder) const {
    return options.trust_command ? options.trust_command(folder) : std::string();
  }

  // "2 servers are not trusted in /repo; to trust them: mcprt trust '/repo'".
  std::string trust_footer() const {
    if (discovery.pending.empty()) return "";
    const std::size_t n = discovery.pending.size();
    std::string out = std::to_string(n) + (n == 1 ? " server is" : " servers are") +
                      " not trusted in " + discovery.project_folder + " (project config: nothing of it runs)";
    std::string fix = trust_advice(discovery.project_folder);
    if (!fix.empty()) out += "; to trust " + std::string(n == 1 ? "it" : "them") + ": " + fix;
    return out + ".\n";
  }

  // "Server "x" is not trusted ..." for commands that need a known, connectable server.
  std::string not_trusted(const ProjectServer& p) const {
    std::string out = "Server " + q(p.name) + " is not trusted (project config " + p.config.source.path + ").";
    std::string fix = trust_advice(p.folder);
    if (!fix.empty()) out += " To trust it: " + fix;
    return out;
  }

  std::string tools(const std::string& server) const {
    auto m = manager();
    if (!m) return "MCP is disabled.";
    if (!server.empty() && !m->server_state(server)) {
      if (const ProjectServer* p = find_pending(discovery, server)) return not_trusted(*p);
      return "Unknown server " + q(server) + ".";
    }
    std::vector<std::shared_ptr<McpTool>> list;
    for (const auto& t : m->tools()) {
      if (t && (server.empty() || t->info().server == server)) list.push_back(t);
    }
    if (list.empty()) {
      return server.empty() ? std::string("No MCP tools.") : "Server " + q(server) + " has no tools.";
    }
    std::size_t w = 0;
    for (const auto& t : list) w = std::max(w, t->name().size());
    std::ostringstream out;
    out << (server.empty() ? std::string("MCP tools") : "Tools of " + q(server)) << " ("
        << list.size() << "):\n";
    for (const auto& t : list) {
      const auto& info = t->info();
      out << "  " << pad(info.name, w) << "  " << info.label;
      if (info.deferred) out << " [deferred]";
      std::string desc = first_line(info.description);
      if (!desc.empty()) out << "  " << desc;
      out << "\n";
    }
    return out.str();
  }

  // `/mcp search [--limit N] <query…>`: the search mcp_tool_search runs (the session keeps
  // its index over every MCP tool, the cached ones of servers still connecting included,
  // whether tool search is active or not), without loading anything.
  std::string search(const std::vector<std::string>& args) const {
    static const std::string kUsage = "Usage: /mcp search [--limit N] <query>";
    auto m = manager();
    if (!m) return "MCP is disabled.";
    std::size_t limit = kToolSearchDefaultLimit;
    std::size_t first = 0;
    if (args[0] == "--limit") {
      const std::string value = args.size() > 1 ? args[1] : std::string();
      const bool digits = !value.empty() && value.size() <= 3 &&
                          value.find_first_not_of("0123456789") == std::string::npos;
      limit = 0;
      for (char c : digits ? value : std::string())
        limit = limit * 10 + static_cast<std::size_t>(c - '0');
      if (limit < 1 || limit > kToolSearchMaxLimit) {
        return "--limit takes a number from 1 to " + std::to_string(kToolSearchMaxLimit) + ". " +
               kUsage;
      }
      first = 2;
    }
    std::string query;
    for (std::size_t i = first; i < args.size(); ++i) query += (query.empty() ? "" : " ") + args[i];
    if (query.find_first_not_of(" \t") == std::string::npos) return "The query is empty. " + kUsage;
    return format_tool_search(query, session.search_tools(query, limit), session.catalog());
  }

  // --- resources / prompts (SPEC §15) ------------------------------------------------------

  // The manager's catalogs: resources and templates, or prompts; all or of one server.
  std::string catalogs(bool prompts, const std::string& server) const {
    auto m = manager();
    if (!m) return "MCP is disabled.";
    if (!server.empty() && !m->server_state(server)) {
      if (const ProjectServer* p = find_pending(discovery, server)) return not_trusted(*p);
      return "Unknown server " + q(server) + ".";
    }
    auto of_server = [&](std::vector<CatalogEntry> entries) {
      if (!server.empty()) {
        entries.erase(std::remove_if(entries.begin(), entries.end(),
                                     [&](const CatalogEntry& e) { return e.server != server; }),
                      entries.end());
      }
      return entries;
    };
    const std::string whose = server.empty() ? std::string() : " of " + q(server);
    std::ostringstream out;
    if (prompts) {
      const auto list = of_server(m->prompts());
      if (list.empty()) {
        return server.empty() ? std::string("No MCP prompts.") : "Server " + q(server) + " has no prompts.";
      }
      out << "Prompts" << whose << " (" << list.size() << "):\n"
          << format_catalog(CatalogKind::prompts, list);
      return out.str();
    }
    const auto resources = of_server(m->resources());
    const auto templates = of_server(m->resource_templates());
    if (resources.empty() && templates.empty()) {
      return server.empty() ? std::string("No MCP resources.")
                            : "Server " + q(server) + " has no resources.";
    }
    if (!resources.empty()) {
      out << "Resources" << whose << " (" << resources.size() << "):\n"
          << format_catalog(CatalogKind::resources, resources);
    }
    if (!templates.empty()) {
      out << "Resource templates" << whose << " (" << templates.size() << "):\n"
          << format_catalog(CatalogKind::resource_templates, templates);
    }
    return out.str();
  }

  // `/mcp read <uri>`: resources/read on the server that lists the uri (or a template that
  // matches it).
  void read(const std::string& uri, Done done) {
    auto m = manager();
    if (!m) return answer(std::move(done), "MCP is disabled.");
    const std::string server = m->server_for_resource(uri);
    if (server.empty()) {
      return answer(std::move(done),
                    "No server offers the resource " + q(uri) + " (/mcp resources lists them).");
    }
    Done reply = guarded(std::move(done));
    m->read_resource(server, uri, CallOptions{}, [reply, server, uri](Result<json> r) {
      if (!r.ok()) {
        return reply("Reading " + q(uri) + " from " + q(server) + " failed: " + r.error().message);
      }
      reply(format_resource_contents(r.value()));
    });
  }

  // `/mcp prompt <server>:<name> k=v …`: prompts/get, rendered.
  void prompt(const std::vector<std::string>& args, Done done) {
    auto m = manager();
    if (!m) return answer(std::move(done), "MCP is disabled.");
    std::vector<std::string> servers;
    for (const auto& st : m->server_states()) servers.push_back(st.name);
    auto target = resolve_prompt_name(args[0], servers, m->prompts());
    if (!target.ok()) return answer(std::move(done), target.error().message);
    auto arguments = parse_prompt_arguments({args.begin() + 1, args.end()});
    if (!arguments.ok()) {
      return answer(std::move(done), arguments.error().message +
                                         ". Usage: /mcp prompt <server>:<name> [key=value…]");
    }
    Done reply = guarded(std::move(done));
    const PromptTarget t = target.value();
    m->get_prompt(t.server, t.name, std::move(arguments.value()), CallOptions{},
                  [reply, t](Result<json> r) {
                    if (!r.ok()) {
                      return reply("Prompt " + q(t.server + ":" + t.name) +
                                   " failed: " + r.error().message);
                    }
                    reply(format_prompt_messages(r.value()));
                  });
  }

  std::string status(const std::string& name) const {
    auto m = manager();
    if (!m) return "MCP is disabled.";
    auto st = m->server_state(name);
    if (!st) {
      if (const ProjectServer* p = find_pending(discovery, name)) {
        std::ostringstream out;
        out << "Server " << q(name) << "\n";
        out << "  state:    not trusted (never started or connected)\n";
        out << "  trust:    pending (project folder " << p->folder << ")\n";
        out << "  source:   " << describe_source(p->config.source) << "\n";
        out << "  type:     " << to_string(p->config.type) << "\n";
        for (const auto& d : pending_details(*p)) out << "  " << d << "\n";
        std::string fix = trust_advice(p->folder);
        if (!fix.empty()) out << "  to trust: " << fix << "\n";
        return out.str();
      }
      auto src = discovery.sources.find(name);
      const bool disabled =
          std::find(discovery.disabled.begin(), discovery.disabled.end(), name) !=
          discovery.disabled.end();
      if (disabled) {
        return "Server " + q(name) + "\n  state:    disabled\n  source:   " +
               (src == discovery.sources.end() ? std::string("unknown")
                                                : describe_source(src->second));
      }
      for (const auto& e : discovery.errors) {
        if (e.server == name) {
          return "Server " + q(name) + "\n  state:    invalid\n  error:    " + e.message +
                 "\n  source:   " + e.path;
        }
      }
      if (auto shadowed = find_shadowed(discovery, name); !shadowed.empty()) {
        std::ostringstream out;
        out << "Server " << q(name) << "\n";
        for (const ShadowedServer* sh : shadowed) {
          out << "  state:    " << describe_shadowing(*sh) << "; never started\n";
          out << "  source:   " << describe_source(sh->source) << "\n";
        }
        return out.str();
      }
      return "Unknown server " + q(name) + ".";
    }
    std::ostringstream out;
    out << "Server " << q(name) << "\n";
    // The connection status only where it says more than the phase ("needs-auth (disconnected)").
    out << "  state:    " << phase_label(*st);
    if (std::string_view(to_string(st->status)) != to_string(st->phase)) out << " (" << to_string(st->status) << ")";
    out << "\n";
    out << "  source:   " << describe_source(st->source) << "\n";
    for (const ShadowedServer* sh : find_shadowed(discovery, name)) {
      out << "  shadows:  " << describe_source(sh->source) << " (" << sh->reason << "; not used)\n";
    }
    out << "  trust:    " << to_string(trust_state(discovery, name)) << "\n";
    out << "  tools:    " << st->tool_count << (st->tools_from_cache ? " (from the cache)" : "")
        << "\n";
    if (st->resource_count + st->resource_template_count + st->prompt_count > 0) {
      auto count = [](std::size_t n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
      };
      out << "  catalog:  " << count(st->resource_count, "resource", "resources") << ", "
          << count(st->resource_template_count, "resource template", "resource templates") << ", "
          << count(st->prompt_count, "prompt", "prompts") << "\n";
    }
    if (st->attempts > 0) out << "  attempts: " << st->attempts << "\n";
    if (st->last_error) out << "  error:    " << st->last_error->message << "\n";
    if (!st->stderr_tail.empty()) {
      out << "  stderr (last lines):\n" << indent_tail(st->stderr_tail, kStderrTailLines);
    }
    return out.str();
  }

  // --- reload / reconnect ------------------------------------------------------------------

  bool can_discover(Done& done) {
    if (options.discover) return true;
    answer(std::move(done), "Rediscovery is not available in this host.");
    return false;
  }

  static std::string gate_summary(const GateResult& gate, const std::set<std::string>& before) {
    std::ostringstream out;
    for (const auto& name : gate.connected) {
      if (!before.count(name)) out << "Connected " << q(name) << ".\n";
    }
    for (const auto& name : gate.deferred) out << "Still connecting " << q(name) << " (cached tools).\n";
    for (const auto& name : gate.pending) out << "Still connecting " << q(name) << ".\n";
    for (const auto& [name, err] : gate.errors) {
      out << (err.code == ErrorCode::needs_auth ? "Needs authorization " : "Failed ") << q(name)
          << ": " << err.message << "\n";
    }
    return out.str();
  }

  std::string discovery_problems() const {
    std::ostringstream out;
    for (const auto& e : discovery.errors) out << "Config error: " << e.describe() << "\n";
    return out.str();
  }

  void reload(Done done) {
    auto m = manager();
    if (!m) return answer(std::move(done), "MCP is disabled.");
    if (!can_discover(done)) return;
    Done reply = guarded(std::move(done));
    std::weak_ptr<Impl> weak = weak_from_this();
    m->disconnect_all([weak, reply] {
      auto self = weak.lock();
      if (!self) return;
      auto mm = self->manager();
      if (!mm) return reply("MCP is disabled.");
      self->discovery = self->options.discover();
      mm->connect_servers(self->discovery.configs, [weak, reply](GateResult gate) {
        auto self2 = weak.lock();
        if (!self2) return;
        self2->session.refresh();
        std::ostringstream out;
        auto m2 = self2->manager();
        out << "Reloaded: " << self2->discovery.configs.size() << " server"
            << (self2->discovery.configs.size() == 1 ? "" : "s") << ", "
            << (m2 ? m2->tools().size() : 0) << " tools.\n";
        out << gate_summary(gate, {}) << self2->discovery_problems();
        reply(out.str());
      });
    });
  }

  void reconnect(const std::string& name, Done done) {
    auto m = manager();
    if (!m) return answer(std::move(done), "MCP is disabled.");
    if (!m->server_state(name)) {
      if (const ProjectServer* p = find_pending(discovery, name)) return answer(std::move(done), not_trusted(*p));
      return answer(std::move(done), "Unknown server " + q(name) + ".");
    }
    Done reply = guarded(std::move(done));
    std::weak_ptr<Impl> weak = weak_from_this();
    m->reconnect_server(name, [weak, reply, name](Status s) {
      auto self = weak.lock();
      if (!self) return;
      self->session.refresh();
      if (!s.ok()) {
        if (s.error().code == ErrorCode::needs_auth) {
          return reply(q(name) + " needs authorization: " + s.error().message);
        }
        return reply("Reconnect of " + q(name) + " failed: " + s.error().message);
      }
      std::size_t n = 0;
      if (auto m2 = self->manager()) {
        if (auto st = m2->server_state(name)) n = st->tool_count;
      }
      reply("Reconnected " + q(name) + " (" + std::to_string(n) + " tools).");
    });
  }

  // "2 tools: mcp_x_a, mcp_x_b" (the names only when there are a few).
  std::string tool_summary(const std::string& name) const {
    auto m = manager();
    std::vector<std::string> names;
    if (m) {
      for (const auto& t : m->tools()) {
        if (t && t->info().server == name) names.push_back(t->name());
      }
    }
    std::string out = std::to_string(names.size()) + (names.size() == 1 ? " tool" : " tools");
    constexpr std::size_t kListedNames = 8;
    if (!names.empty() && names.size() <= kListedNames) {
      out += ":";
      for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : " ") + names[i];
    }
    return out;
  }

  // `/mcp auth <name>`: the host's login, then a reconnect of that server.
  void auth(const std::string& name, Done done) {
    auto m = manager();
    if (!m) return answer(std::move(done), "MCP is disabled.");
    if (!m->server_state(name)) {
      if (const ProjectServer* p = find_pending(discovery, name))
        return answer(std::move(done), not_trusted(*p));
      return answer(std::move(done), "Unknown server " + q(name) + ".");
    }
    if (!options.login) return answer(std::move(done), "Logging in is not available in this host.");
    Done reply = guarded(std::move(done));
    std::weak_ptr<Impl> weak = weak_from_this();
    options.login(name, [weak, reply, name](Status logged_in) {
      auto self = weak.lock();
      if (!self) return;
      if (!logged_in.ok())
        return reply("Login to " + q(name) + " failed: " + logged_in.error().message);
      auto m2 = self->manager();
      if (!m2 || !m2->server_state(name)) {
        return reply("Logged in to " + q(name) + "; the server is no longer configured.");
      }
      m2->reconnect_server(name, [weak, reply, name](Status s) {
        auto self2 = weak.lock();
        if (!self2) return;
        self2->session.refresh();
        if (!s.ok()) {
          return reply("Logged in to " + q(name) + ", but connecting failed: " + s.error().message);
        }
        reply("Logged in to " + q(name) + " and connected (" + self2->tool_summary(name) + ").");
      });
    });
  }

  // --- the user file -----------------------------------------------------------------------

  bool can_edit(Done& done) {
    if (options.fs && !options.user_config_path.empty()) return true;
    answer(std::move(done), "Editing the MCP config is not available in this host.");
    return false;
  }

  // The file edits are config_edit.hpp's, shared with `mcprt add|remove|enable|disable`.
  const std::string& file() const { return options.user_config_path; }

  void set_enabled(const std::string& name, bool enable, Done done) {
    if (!manager()) return answer(std::move(done), "MCP is disabled.");
    if (!can_edit(done)) return;
    if (Status s = set_server_enabled_in_config(*options.fs, file(), name, enable); !s.ok()) {
      return answer(std::move(done), std::string(enable ? "Cannot enable " : "Cannot disable ") +
                                         q(name) + ": " + s.error().message);
    }
    std::string head =
        std::string(enable ? "Enabled " : "Disabled ") + q(name) + " in " + file() + ".\n";
    apply_change(std::move(head), std::move(done));
  }

  void add(const std::vector<std::string>& args, Done done) {
    if (!manager()) return answer(std::move(done), "MCP is disabled.");
    auto spec = parse_add_words(args);
    if (!spec.ok()) {
      return answer(std::move(done),
                    "Wrong arguments for /mcp add: " + spec.error().message + ".\n" + usage());
    }
    if (spec->url.empty() && spec->command.empty()) {
      return answer(
          std::move(done),
          "Wrong arguments for /mcp add: give a URL or -- <command> [args…].\n" + usage());
    }
    auto entry = make_server_entry(*spec);
    if (!entry.ok()) return answer(std::move(done), entry.error().message);
    if (!can_edit(done)) return;
    const std::string& name = spec->name;
    if (Status s = add_server_to_config(*options.fs, file(), name, *entry); !s.ok()) {
      std::string text = "Cannot add " + q(name) + ": " + s.error().message;
      if (s.error().data.is_object() && s.error().data.value("exists", false)) {
        text += "; to replace it: /mcp remove " + name + ", then /mcp add it again";
      }
      return answer(std::move(done), text + ".");
    }
    apply_change("Added " + q(name) + " to " + file() + ".\n", std::move(done));
  }

  void remove(const std::string& name, Done done) {
    if (!manager()) return answer(std::move(done), "MCP is disabled.");
    if (!can_edit(done)) return;
    auto removed = remove_server_from_config(*options.fs, file(), name);
    if (!removed.ok())
      return answer(std::move(done), "Cannot remove " + q(name) + ": " + removed.error().message);
    if (!*removed) {
      std::string where;
      if (auto it = discovery.sources.find(name); it != discovery.sources.end()) {
        where = " It comes from " + describe_source(it->second) +
                "; edit that file, or use /mcp disable " + name + ".";
      }
      return answer(std::move(done), "Server " + q(name) + " is not in " + file() + "." + where);
    }
    apply_change("Removed " + q(name) + " from " + file() + ".\n", std::move(done));
  }

  // Rediscover; servers that are gone are disconnected, the rest connected (connected ones
  // are skipped by the manager).
  void apply_change(std::string head, Done done) {
    auto m = manager();
    if (!options.discover) {
      return answer(std::move(done), head + "Run /mcp reload to apply it.");
    }
    discovery = options.discover();
    std::set<std::string> wanted;
    for (const auto& c : discovery.configs) wanted.insert(c.name);
    std::set<std::string> before;
    std::ostringstream out;
    out << head;
    for (const auto& st : m->server_states()) {
      if (st.status == ConnectionStatus::connected) before.insert(st.name);
      if (!wanted.count(st.name)) {
        // Gone from the config: forgotten, not left as a disconnected row.
        const bool was_row = st.phase == ServerPhase::disconnected && !st.last_error;
        m->remove_server(st.name);
        if (!was_row) out << "Disconnected " << q(st.name) << ".\n";
      }
    }
    Done reply = guarded(std::move(done));
    std::weak_ptr<Impl> weak = weak_from_this();
    std::string text = out.str();
    m->connect_servers(discovery.configs, [weak, reply, text, before](GateResult gate) {
      auto self = weak.lock();
      if (!self) return;
      self->session.refresh();
      reply(text + gate_summary(gate, before) + self->discovery_problems());
    });
  }
};

McpCommandController::McpCommandController(McpSession& session, McpCommandOptions options,
                                           DiscoveryResult initial)
    : impl_(std::make_shared<Impl>(session, std::move(options), std::move(initial))) {}

McpCommandController::~McpCommandController() = default;

void McpCommandController::execute(const std::string& line,
                                   std::function<void(std::string output)> done) {
  impl_->execute(line, std::move(done));
}

const DiscoveryResult& McpCommandController::last_discovery() const { return impl_->discovery; }

std::string McpCommandController::usage() {
  return "Usage: /mcp <command>\n"
         "  /mcp list                      servers, status, source and tool count\n"
         "  /mcp tools [server]            MCP tools (of one server)\n"
         "  /mcp resources [server]        resources and resource templates (of one server)\n"
         "  /mcp prompts [server]          prompts and their arguments (of one server)\n"
         "  /mcp read <uri>                read a resource (text, or the size of binary data)\n"
         "  /mcp prompt <server>:<name> [key=value…]\n"
         "                                 get a prompt with arguments and show its messages\n"
         "  /mcp status <name>             state, trust, error, attempts, source, stderr tail\n"
         "  /mcp search [--limit N] <query>\n"
         "                                 find tools (exact names first, then keywords);\n"
         "                                 select:a,b looks up full names\n"
         "  /mcp reload                    disconnect all, rediscover, reconnect\n"
         "  /mcp reconnect <name>          reconnect one server\n"
         "  /mcp auth <name>               log in to a server that needs authorization\n"
         "  /mcp enable <name>             enable a server (user config file)\n"
         "  /mcp disable <name>            disable a server (user config file)\n"
         "  /mcp add <name> URL            add an HTTP server (-t sse; -H 'K: V')\n"
         "  /mcp add <name> -- CMD [ARG…]  add a stdio server (-e K=V before --)\n"
         "  /mcp remove <name>             remove a server from the user config file\n"
         "  /mcp help                      this text\n";
}

}  // namespace mcprt
