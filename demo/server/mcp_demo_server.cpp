#include "mcp_demo_server.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <memory>
#include <random>
#include <utility>

namespace mcprt::demo {
namespace {

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

// Bounds the issued-but-unused requestStates (a client that never retries).
constexpr std::size_t kMaxIssuedStates = 4096;

constexpr int kSlowTaskDefaultSteps = 5;
constexpr int kSlowTaskDefaultIntervalMs = 100;
constexpr std::size_t kLogPreviewBytes = 200;

std::string preview(std::string_view text) {
  if (text.size() <= kLogPreviewBytes) return std::string(text);
  return std::string(text.substr(0, kLogPreviewBytes)) + "...(" + std::to_string(text.size()) +
         " bytes)";
}

// Serialises without throwing on invalid UTF-8 (which a parsed message cannot hold, but
// a tool could build).
std::string to_text(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool is_valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

json text_content(std::string text) {
  return json::array({json{{"type", "text"}, {"text", std::move(text)}}});
}

json tool_error(std::string message) {
  return json{{"content", text_content(std::move(message))}, {"isError", true}};
}

// Reads an optional integer argument within [lo, hi]; returns an error text when the
// value is present but unusable.
std::string read_int_arg(const json& args, const char* name, int lo, int hi, int fallback,
                         int& out) {
  out = fallback;
  auto it = args.find(name);
  if (it == args.end() || it->is_null()) return {};
  if (!it->is_number_integer()) {
    return std::string("\"") + name + "\" must be an integer";
  }
  const bool too_big_for_int64 =
      it->is_number_unsigned() &&
      it->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const auto v = too_big_for_int64 ? std::numeric_limits<std::int64_t>::max()
                                   : it->get<std::int64_t>();
  if (v < lo || v > hi) {
    return std::string("\"") + name + "\" must be between " + std::to_string(lo) + " and " +
           std::to_string(hi) + " (got " + it->dump() + ")";
  }
  out = static_cast<int>(v);
  return {};
}

std::string utc_now_iso8601() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto secs = time_point_cast<seconds>(now);
  const auto ms = duration_cast<milliseconds>(now - secs).count();
  const std::time_t t = system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];  // room for any int fields, so the compiler can prove no truncation
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms));
  return buf;
}

struct WordCount {
  std::int64_t words = 0;
  std::int64_t lines = 0;
  std::int64_t chars = 0;  // Unicode code points (the text is valid UTF-8)
};

WordCount count_words(std::string_view text) {
  WordCount c;
  bool in_word = false;
  for (unsigned char ch : text) {
    if ((ch & 0xC0) != 0x80) ++c.chars;  // not a UTF-8 continuation byte
    if (ch == '\n') ++c.lines;
    const bool space = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' ||
                       ch == '\f';
    if (space) {
      in_word = false;
    } else if (!in_word) {
      in_word = true;
      ++c.words;
    }
  }
  // A last line without a trailing newline still counts as a line.
  if (!text.empty() && text.back() != '\n') ++c.lines;
  return c;
}

json object_schema(json properties, json required) {
  json s{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) s["required"] = std::move(required);
  return s;
}

json test_tool_definitions(bool modern, bool bonus) {
  const json annotations{{"readOnlyHint", true}, {"openWorldHint", false}};
  json tools = json::array();
  tools.push_back({
      {"name", "ask_name"},
      {"title", "Ask for a name"},
      {"description",
       "Asks the user for their name with a form (elicitation) and greets them. Needs the "
       "client's elicitation capability."},
      {"inputSchema", object_schema(json::object(), json::array())},
      {"annotations", annotations},
  });
  tools.push_back({
      {"name", "ask_model"},
      {"title", "Ask the client's model"},
      {"description",
       "Asks the client's model to \"Say hello\" (sampling) and returns its text. Needs the "
       "client's sampling capability."},
      {"inputSchema", object_schema(json::object(), json::array())},
      {"annotations", annotations},
  });
  tools.push_back({
      {"name", "list_roots"},
      {"title", "List the client's roots"},
      {"description", "Asks the client for its roots and returns them as JSON text."},
      {"inputSchema", object_schema(json::object(), json::array())},
      {"annotations", annotations},
  });
  if (modern) {
    tools.push_back({
        {"name", "two_rounds"},
        {"title", "Two questions"},
        {"description",
         "Asks two questions in two input rounds (a new requestState each round), then "
         "answers with both."},
        {"inputSchema", object_schema(json::object(), json::array())},
        {"annotations", annotations},
    });
  }
  tools.push_back({
      {"name", "toggle_tool"},
      {"title", "Toggle the bonus tool"},
      {"description",
       "Adds the tool `bonus` to the list, or removes it, and tells every listener that the "
       "tool list changed."},
      {"inputSchema", object_schema(json::object(), json::array())},
      {"annotations", {{"readOnlyHint", false}, {"openWorldHint", false}}},
  });
  tools.push_back({
      {"name", "drop_listen"},
      {"title", "Drop every listen stream"},
      {"description",
       "Ends every subscriptions/listen stream abruptly (HTTP: the response closes without a "
       "result; stdio: notifications/cancelled for the listen id)."},
      {"inputSchema", object_schema(json::object(), json::array())},
      {"annotations", {{"readOnlyHint", false}, {"openWorldHint", false}}},
  });
  tools.push_back({
      {"name", "region_echo"},
      {"title", "Region echo"},
      {"description",
       "Returns \"region=<region>\". Over HTTP (2026-07-28) the argument must also arrive "
       "as the Mcp-Param-Region header."},
      {"inputSchema",
       object_schema({{"region",
                       {{"type", "string"},
                        {"x-mcp-header", "Region"},
                        {"description", "Any text; mirrored in the Mcp-Param-Region header."}}}},
                     {"region"})},
      {"annotations", annotations},
  });
  if (bonus) {
    tools.push_back({
        {"name", "bonus"},
        {"title", "Bonus"},
        {"description", "Listed only while toggle_tool has it on. Returns \"bonus\"."},
        {"inputSchema", object_schema(json::object(), json::array())},
        {"annotations", annotations},
    });
  }
  return tools;
}

// The member `key` of a JSON object, or null.
const json& member(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

// True when `capabilities` (ClientCapabilities) declares `name` (any non-null value: an
// empty object declares it).
bool declares(const json& capabilities, const std::string& name) {
  const json& c = member(capabilities, name.c_str());
  return !c.is_null() && !(c.is_boolean() && !c.get<bool>());
}

std::string random_suffix() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 16; ++i) out.push_back(kHex[rd() & 0xFu]);
  return out;
}

// The text of a sampling result's content (an object, or an array of blocks).
std::string sampled_text(const json& result) {
  const json& content = member(result, "content");
  auto text_of = [](const json& block) -> std::string {
    if (member(block, "type") == "text" && member(block, "text").is_string()) {
      return member(block, "text").get<std::string>();
    }
    return {};
  };
  if (content.is_object()) return text_of(content);
  if (content.is_array()) {
    for (const auto& block : content) {
      if (auto t = text_of(block); !t.empty()) return t;
    }
  }
  return {};
}


constexpr const char* kReadmeUri = "demo://readme";
constexpr const char* kLogoUri = "demo://logo.png";
constexpr const char* kNotesTemplate = "demo://notes/{name}";
constexpr const char* kNotesPrefix = "demo://notes/";

constexpr const char* kReadmeText =
    "# mcprt demo server\n"
    "\n"
    "A small MCP server for trying mcprt: six tools (echo, add, now, word_count, slow_task,\n"
    "fail), three resources (this readme, a logo and a ticker that changes every few\n"
    "seconds while you are subscribed), notes behind the template demo://notes/{name}, and\n"
    "two prompts (greet, summarize) with argument completion.\n";

// A 16x16 RGB PNG (a blue disc on white), 115 bytes.
constexpr const char* kLogoBase64 =
    "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAOklEQVR42mP4TyJgQONr52xAQ/g0YKrG1MNAUDWaHgZi"
    "VCPrYSBSNVzPiNVAcrCSE3HkJA1yEh8xAACTavIosEeL4QAAAABJRU5ErkJggg==";
constexpr int kLogoBytes = 115;

constexpr const char* kNoteNames[] = {"alpha", "beta", "gamma"};
constexpr const char* kGreetStyles[] = {"formal", "casual", "pirate"};

// The note `name` of demo://notes/<name> when it is one of kNoteNames; empty otherwise.
std::string note_name(const std::string& uri) {
  if (uri.rfind(kNotesPrefix, 0) != 0) return {};
  const std::string name = uri.substr(std::string_view(kNotesPrefix).size());
  for (const char* n : kNoteNames) {
    if (name == n) return name;
  }
  return {};
}

std::string note_text(const std::string& name) {
  return "Note " + name + ": a note of the mcprt demo server, read through the template " +
         kNotesTemplate + ".";
}

bool is_known_resource(const std::string& uri) {
  return uri == kReadmeUri || uri == kLogoUri || uri == kTickerUri || !note_name(uri).empty();
}

// Every URI summarize's completion offers: the listed resources, then the notes.
std::vector<std::string> all_resource_uris() {
  std::vector<std::string> uris{kReadmeUri, kLogoUri, kTickerUri};
  for (const char* n : kNoteNames) uris.push_back(std::string(kNotesPrefix) + n);
  return uris;
}

// The contents of a known resource (resources/read's `contents[0]`, the `resource` of an
// embedded resource block); null for an unknown uri.
json resource_contents(const std::string& uri, std::uint64_t ticks) {
  if (uri == kReadmeUri) {
    return json{{"uri", uri}, {"mimeType", "text/markdown"}, {"text", kReadmeText}};
  }
  if (uri == kLogoUri) {
    return json{{"uri", uri}, {"mimeType", "image/png"}, {"blob", kLogoBase64}};
  }
  if (uri == kTickerUri) {
    return json{{"uri", uri}, {"mimeType", "text/plain"}, {"text", "tick " + std::to_string(ticks)}};
  }
  if (const std::string name = note_name(uri); !name.empty()) {
    return json{{"uri", uri}, {"mimeType", "text/plain"}, {"text", note_text(name)}};
  }
  return nullptr;
}

// The members of `candidates` that start with `prefix`, in order.
json completion_values(const std::vector<std::string>& candidates, const std::string& prefix) {
  json values = json::array();
  for (const auto& c : candidates) {
    if (c.rfind(prefix, 0) == 0) values.push_back(c);
  }
  return values;
}

}  // namespace

DemoServer::DemoServer(Scheduler& scheduler, DemoServerOptions options)
    : scheduler_(scheduler), options_(std::move(options)), shared_(options_.shared) {
  if (!shared_) shared_ = std::make_shared<DemoShared>();
}

DemoServer::~DemoServer() {
  cancel_all();
  remove_listens();
}

json DemoServer::resource_definitions() {
  return json::array({
      {{"uri", kReadmeUri},
       {"name", "readme"},
       {"title", "About the demo server"},
       {"description", "What this server offers, in a few lines of Markdown."},
       {"mimeType", "text/markdown"}},
      {{"uri", kLogoUri},
       {"name", "logo.png"},
       {"title", "Logo"},
       {"description", "A 16x16 PNG image (binary contents, sent as a base64 blob)."},
       {"mimeType", "image/png"},
       {"size", kLogoBytes}},
      {{"uri", kTickerUri},
       {"name", "ticker"},
       {"title", "Ticker"},
       {"description",
        "\"tick N\": advances every 2 s (--ticker-ms) while a client is subscribed to it; each "
        "subscriber is told (notifications/resources/updated)."},
       {"mimeType", "text/plain"}},
  });
}

json DemoServer::resource_template_definitions() {
  return json::array({
      {{"uriTemplate", kNotesTemplate},
       {"name", "note"},
       {"title", "Notes"},
       {"description", "A short note; the names alpha, beta and gamma exist."},
       {"mimeType", "text/plain"}},
  });
}

json DemoServer::prompt_definitions() {
  return json::array({
      {{"name", "greet"},
       {"title", "Greet someone"},
       {"description", "Asks the model to greet a person, in a style of your choice."},
       {"arguments",
        json::array({{{"name", "name"}, {"description", "Who to greet."}, {"required", true}},
                     {{"name", "style"},
                      {"description", "formal, casual or pirate."},
                      {"required", false}}})}},
      {{"name", "summarize"},
       {"title", "Summarize a resource"},
       {"description", "Asks the model to summarize one of this server's resources."},
       {"arguments", json::array({{{"name", "uri"},
                                   {"description", "The resource's URI (completions list them)."},
                                   {"required", true}}})}},
  });
}

json DemoServer::listed_tools(bool modern) const {
  json tools = tool_definitions();
  if (options_.test_tools) {
    for (auto& t : test_tool_definitions(modern, shared_->bonus)) tools.push_back(std::move(t));
  }
  for (const ExtraTool& t : options_.extra_tools) tools.push_back(t.definition);
  return tools;
}

bool DemoServer::is_modern_request(ProtocolMode mode, const json& message) {
  if (mode == ProtocolMode::modern) return true;
  if (mode == ProtocolMode::legacy) return false;
  const json& method = member(message, "method");
  if (method == "server/discover" || method == "subscriptions/listen") return true;
  const json& meta = member(member(message, "params"), "_meta");
  return meta.is_object() && meta.contains(kMetaProtocolVersion);
}

std::optional<DemoServer::Refusal> DemoServer::check_modern(const std::string& method,
                                                            const json& params) {
  static constexpr const char* kModernMethods[] = {
      "server/discover", "tools/list",     "tools/call",  "subscriptions/listen",
      "resources/list",  "resources/read", "prompts/list", "resources/templates/list",
      "prompts/get",     "completion/complete"};
  if (std::find(std::begin(kModernMethods), std::end(kModernMethods), method) ==
      std::end(kModernMethods)) {
    return Refusal{kMethodNotFound, "Method not found: " + method, nullptr};
  }
  const json& meta = member(params, "_meta");
  const json& version = member(meta, kMetaProtocolVersion);
  if (!version.is_string()) {
    return Refusal{kInvalidParams,
                   std::string("Invalid params: params._meta[\"") + kMetaProtocolVersion +
                       "\"] must be a string (every 2026-07-28 request carries it)",
                   nullptr};
  }
  if (!member(meta, kMetaClientCapabilities).is_object()) {
    return Refusal{kInvalidParams,
                   std::string("Invalid params: params._meta[\"") + kMetaClientCapabilities +
                       "\"] must be an object (every 2026-07-28 request carries it)",
                   nullptr};
  }
  if (version != kModernProtocolVersion) {
    return Refusal{kUnsupportedProtocolVersion,
                   "Unsupported protocol version " + version.get<std::string>(),
                   json{{"supported", json::array({kModernProtocolVersion})},
                        {"requested", version}}};
  }
  return std::nullopt;
}

json DemoServer::tool_definitions() {
  json tools = json::array();
  tools.push_back({
      {"name", "echo"},
      {"title", "Echo"},
      {"description", "Returns the given message unchanged, as text."},
      {"inputSchema",
       object_schema({{"message", {{"type", "string"}, {"description", "Text to send back."}}}},
                     {"message"})},
      {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}},
  });
  tools.push_back({
      {"name", "add"},
      {"title", "Add two numbers"},
      {"description", "Adds two numbers and returns the sum as text and as structuredContent."},
      {"inputSchema", object_schema({{"a", {{"type", "number"}, {"description", "First addend."}}},
                                     {"b", {{"type", "number"}, {"description", "Second addend."}}}},
                                    {"a", "b"})},
      {"outputSchema", object_schema({{"sum", {{"type", "number"}}}}, {"sum"})},
      {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}},
  });
  tools.push_back({
      {"name", "now"},
      {"title", "Current time"},
      {"description", "Returns the current UTC time in ISO-8601 format."},
      {"inputSchema", object_schema(json::object(), json::array())},
      {"outputSchema", object_schema({{"utc", {{"type", "string"}, {"format", "date-time"}}}},
                                     {"utc"})},
      {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}},
  });
  tools.push_back({
      {"name", "word_count"},
      {"title", "Word count"},
      {"description",
       "Counts the words (whitespace-separated), lines and characters (Unicode code points) "
       "of a text."},
      {"inputSchema",
       object_schema({{"text", {{"type", "string"}, {"description", "The text to count."}}}},
                     {"text"})},
      {"outputSchema", object_schema({{"words", {{"type", "integer"}}},
                                      {"lines", {{"type", "integer"}}},
                                      {"chars", {{"type", "integer"}}}},
                                     {"words", "lines", "chars"})},
      {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}},
  });
  tools.push_back({
      {"name", "slow_task"},
      {"title", "Slow task"},
      {"description",
       "Works for `steps` steps of `interval_ms` each, reporting progress after each step "
       "when the call carries a progress token. Can be cancelled. Returns a summary."},
      {"inputSchema",
       object_schema(
           {{"steps",
             {{"type", "integer"},
              {"minimum", 1},
              {"maximum", kSlowTaskMaxSteps},
              {"default", kSlowTaskDefaultSteps},
              {"description", "Number of steps."}}},
            {"interval_ms",
             {{"type", "integer"},
              {"minimum", 0},
              {"maximum", kSlowTaskMaxIntervalMs},
              {"default", kSlowTaskDefaultIntervalMs},
              {"description", "Milliseconds per step."}}}},
           json::array())},
      {"outputSchema", object_schema({{"steps", {{"type", "integer"}}},
                                      {"interval_ms", {{"type", "integer"}}}},
                                     {"steps", "interval_ms"})},
      {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}},
  });
  tools.push_back({
      {"name", "fail"},
      {"title", "Always fails"},
      {"description",
       "Always returns a tool error (isError: true) with the given message, to show how "
       "failures look."},
      {"inputSchema",
       object_schema({{"message", {{"type", "string"}, {"description", "The error text."}}}},
                     json::array())},
      {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}},
  });
  return tools;
}

void DemoServer::handle_text(std::string_view text, const Send& send) {
  json message = json::parse(text, nullptr, false);
  if (message.is_discarded()) {
    log("parse error, message ignored: " + preview(text));
    reply_error(send, nullptr, kParseError, "Parse error: the message is not valid JSON");
    return;
  }
  handle(message, send);
}

void DemoServer::handle(const json& message, const Send& send, const Close& close) {
  if (options_.verbose) log("<- " + preview(to_text(message)));
  if (message.is_array()) {
    reply_error(send, nullptr, kInvalidRequest, "Invalid Request: batches are not supported");
    return;
  }
  if (!message.is_object()) {
    reply_error(send, nullptr, kInvalidRequest, "Invalid Request: a message must be an object");
    return;
  }
  const auto version = message.find("jsonrpc");
  const auto id = message.find("id");
  const json reply_id = (id != message.end() && is_valid_id(*id)) ? *id : json(nullptr);
  if (version == message.end() || !version->is_string() || *version != "2.0") {
    reply_error(send, reply_id, kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
    return;
  }
  const auto method = message.find("method");
  if (method == message.end()) {
    if (id != message.end() && (message.contains("result") || message.contains("error"))) {
      handle_response(message);
      return;
    }
    reply_error(send, reply_id, kInvalidRequest, "Invalid Request: no \"method\"");
    return;
  }
  if (!method->is_string()) {
    reply_error(send, reply_id, kInvalidRequest, "Invalid Request: \"method\" must be a string");
    return;
  }
  const auto params_it = message.find("params");
  const json params = params_it == message.end() ? json(nullptr) : *params_it;
  if (!params.is_null() && !params.is_object() && !params.is_array()) {
    if (id == message.end()) return;  // a notification gets no answer, not even an error
    reply_error(send, reply_id, kInvalidRequest,
                "Invalid Request: \"params\" must be an object or an array");
    return;
  }
  const std::string name = method->get<std::string>();
  if (id == message.end()) {
    handle_notification(name, params);
    return;
  }
  if (!is_valid_id(*id)) {
    reply_error(send, nullptr, kInvalidRequest,
                "Invalid Request: \"id\" must be a string or an integer");
    return;
  }
  handle_request(*id, name, params, send, close);
}

void DemoServer::handle_request(const json& id, const std::string& method, const json& params,
                                const Send& send, const Close& close) {
  if (options_.on_request) options_.on_request(method);
  const json request{{"method", method}, {"params", params}};
  if (is_modern_request(options_.protocol, request)) {
    return handle_modern(id, method, params, send, close);
  }
  if (options_.protocol == ProtocolMode::legacy && !session_started_ && method != "initialize") {
    if (options_.early_requests == EarlyRequests::exit) {
      log("exiting: the first request was " + method + ", not initialize (--exit-on-early-request)");
      if (options_.exit_now) options_.exit_now();
      std::_Exit(1);
    }
    if (options_.early_requests == EarlyRequests::ignore) {
      log("not answering " + method + " " + to_text(id) +
          ": it came before initialize (--ignore-early-requests)");
      return;
    }
  }
  if (method == "initialize") return on_initialize(id, params, send);
  if (method == "ping") return reply(send, id, json::object());
  if (method == "tools/list") return on_tools_list(id, params, send, false);
  if (method == "tools/call") return on_tools_call(id, params, send, false);
  if (method == "resources/list" || method == "resources/templates/list" ||
      method == "prompts/list") {
    return on_catalog_list(id, method, params, send, false);
  }
  if (method == "resources/read") return on_resources_read(id, params, send, false);
  if (method == "resources/subscribe" || method == "resources/unsubscribe") {
    return on_subscribe(id, method, params, send);
  }
  if (method == "prompts/get") return on_prompts_get(id, params, send, false);
  if (method == "completion/complete") return on_complete(id, params, send, false);
  reply_error(send, id, kMethodNotFound, "Method not found: " + method);
}

void DemoServer::handle_modern(const json& id, const std::string& method, const json& params,
                               const Send& send, const Close& close) {
  if (auto refusal = check_modern(method, params)) {
    return reply_error(send, id, refusal->code, std::move(refusal->message),
                       std::move(refusal->data));
  }
  if (method == "server/discover") {
    return reply(send, id,
                 json{{"resultType", "complete"},
                      {"supportedVersions", json::array({kModernProtocolVersion})},
                      {"capabilities",
                       {{"tools", {{"listChanged", true}}},
                        {"resources", {{"subscribe", true}, {"listChanged", true}}},
                        {"prompts", {{"listChanged", true}}},
                        {"completions", json::object()}}},
                      {"_meta",
                       {{kMetaServerInfo,
                         {{"name", options_.server_name},
                          {"title", "mcprt demo server"},
                          {"version", options_.server_version}}}}},
                      {"ttlMs", options_.ttl_ms},
                      {"cacheScope", options_.cache_scope}});
  }
  if (method == "tools/list") return on_tools_list(id, params, send, true);
  if (method == "tools/call") return on_tools_call(id, params, send, true);
  if (method == "resources/list" || method == "resources/templates/list" ||
      method == "prompts/list") {
    return on_catalog_list(id, method, params, send, true);
  }
  if (method == "resources/read") return on_resources_read(id, params, send, true);
  if (method == "prompts/get") return on_prompts_get(id, params, send, true);
  if (method == "completion/complete") return on_complete(id, params, send, true);
  on_listen(id, params, send, close);  // check_modern let only subscriptions/listen through
}

void DemoServer::handle_response(const json& message) {
  const json& id = message["id"];
  auto it = id.is_string() ? outgoing_.find(id.get<std::string>()) : outgoing_.end();
  if (it == outgoing_.end()) {
    log("ignoring a response with id " + to_text(id) + ": no request of ours has that id");
    return;
  }
  Outgoing out = std::move(it->second);
  outgoing_.erase(it);
  if (auto error = message.find("error"); error != message.end()) {
    const json& code = member(*error, "code");
    const json& text = member(*error, "message");
    return reply(out.send, out.call_id,
                 tool_error("the client answered " + out.method + " with error " +
                            (code.is_number_integer() ? code.dump() : std::string("?")) +
                            (text.is_string() ? ": " + text.get<std::string>() : std::string())));
  }
  Step step = input_step(out.tool, out.round, out.data, message["result"]);
  if (!step.ask) return reply(out.send, out.call_id, std::move(step.result));
  if (!declares(client_capabilities_, step.ask->capability)) {
    return reply(out.send, out.call_id,
                 tool_error("the client does not support " + step.ask->capability));
  }
  const std::string our_id = "mcprt-demo-" + std::to_string(next_outgoing_id_++);
  emit(out.send, json{{"jsonrpc", "2.0"},
                      {"id", our_id},
                      {"method", step.ask->method},
                      {"params", step.ask->params}});
  out.method = step.ask->method;
  out.round += 1;
  out.data = std::move(step.data);
  outgoing_.emplace(our_id, std::move(out));
}

void DemoServer::handle_notification(const std::string& method, const json& params) {
  if (method == "notifications/initialized") {
    if (!initialized_) log("client sent notifications/initialized");
    initialized_ = true;
    return;
  }
  if (method == "notifications/cancelled") {
    if (!params.is_object()) return;
    auto request_id = params.find("requestId");
    if (request_id == params.end() || !is_valid_id(*request_id)) return;
    auto reason = params.find("reason");
    cancel_request(*request_id, reason != params.end() && reason->is_string()
                                    ? reason->get<std::string>()
                                    : std::string());
    return;
  }
  // Other notifications (progress, roots/list_changed, ...) need nothing from us.
  if (options_.verbose) log("ignoring notification " + method);
}

void DemoServer::on_initialize(const json& id, const json& params, const Send& send) {
  if (!params.is_object()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: initialize needs an object");
  }
  auto requested = params.find("protocolVersion");
  if (requested == params.end() || !requested->is_string()) {
    return reply_error(send, id, kInvalidParams,
                       "Invalid params: \"protocolVersion\" must be a string");
  }
  const std::string wanted = requested->get<std::string>();
  std::string agreed = kLatestProtocolVersion;
  for (const char* v : kSupportedProtocolVersions) {
    if (wanted == v) agreed = v;
  }
  client_name_.clear();
  if (auto info = params.find("clientInfo"); info != params.end() && info->is_object()) {
    if (auto n = info->find("name"); n != info->end() && n->is_string()) {
      client_name_ = n->get<std::string>();
    }
  }
  if (!protocol_version_.empty()) log("initialize received again; starting over");
  protocol_version_ = agreed;
  initialized_ = false;
  session_started_ = true;
  client_capabilities_ = member(params, "capabilities").is_object() ? params["capabilities"]
                                                                      : json::object();
  log("initialize from " + (client_name_.empty() ? std::string("unnamed client") : client_name_) +
      ": asked " + wanted + ", agreed " + agreed);
  json result{{"protocolVersion", agreed},
             {"capabilities",
              {{"tools", {{"listChanged", options_.test_tools}}},
               {"resources", {{"subscribe", true}, {"listChanged", true}}},
               {"prompts", {{"listChanged", true}}},
               {"completions", json::object()}}},
             {"serverInfo",
              {{"name", options_.server_name},
               {"title", "mcprt demo server"},
               {"version", options_.server_version}}},
             {"instructions",
              options_.test_tools
                  ? "A demo server for mcprt. Tools: echo, add, now, word_count, slow_task "
                    "(progress and cancellation), fail (always a tool error), and the test "
                    "tools ask_name, ask_model, list_roots, toggle_tool, drop_listen, "
                    "region_echo. Resources: demo://readme, demo://logo.png, demo://ticker "
                    "(subscribable), demo://notes/{name}. Prompts: greet, summarize."
                  : "A demo server for mcprt. Tools: echo, add, now, word_count, slow_task "
                    "(progress and cancellation), fail (always a tool error). Resources: "
                    "demo://readme, demo://logo.png, demo://ticker (subscribable), "
                    "demo://notes/{name}. Prompts: greet, summarize."}};
  if (options_.startup_delay.count() <= 0) return reply(send, id, std::move(result));
  // The Send must stay callable until the timer runs: cancel_all() drops the timer with
  // the rest of the pending work.
  auto timer = std::make_shared<Scheduler::TimerId>(0);
  *timer = scheduler_.call_after(options_.startup_delay, [this, id, result, timer] {
    auto it = delayed_initialize_.find(*timer);
    if (it == delayed_initialize_.end()) return;
    Send later = std::move(it->second);
    delayed_initialize_.erase(it);
    reply(later, id, result);
  });
  delayed_initialize_.emplace(*timer, send);
}

void DemoServer::on_tools_list(const json& id, const json& params, const Send& send,
                               bool modern) {
  if (!params.is_null() && !params.is_object()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: expected an object");
  }
  if (params.is_object()) {
    auto cursor = params.find("cursor");
    if (cursor != params.end() && !cursor->is_null()) {
      // There is only one page, so no cursor we handed out can exist.
      return reply_error(send, id, kInvalidParams, "Invalid params: unknown cursor");
    }
  }
  json result{{"tools", listed_tools(modern)}};
  if (modern) {
    result["resultType"] = "complete";
    result["ttlMs"] = options_.ttl_ms;
    result["cacheScope"] = options_.cache_scope;
  }
  reply(send, id, std::move(result));
}

void DemoServer::on_tools_call(const json& id, const json& params, const Send& send,
                               bool modern) {
  if (!params.is_object()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: tools/call needs an object");
  }
  auto name_it = params.find("name");
  if (name_it == params.end() || !name_it->is_string()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: \"name\" must be a string");
  }
  const std::string name = name_it->get<std::string>();
  json args = json::object();
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object()) {
      return reply_error(send, id, kInvalidParams,
                         "Invalid params: \"arguments\" must be an object");
    }
    args = *a;
  }
  json progress_token;
  if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
    if (auto t = meta->find("progressToken");
        t != meta->end() && (t->is_string() || t->is_number_integer())) {
      progress_token = *t;
    }
  }

  auto answer = [&](json result) { reply_result(send, id, std::move(result), modern); };
  // Bad arguments are tool execution errors (isError), not protocol errors, so that a
  // model sees what was wrong and can retry (MCP 2025-11-25, "Error Handling").
  auto invalid = [&](const std::string& why) {
    answer(tool_error("Invalid arguments for tool \"" + name + "\": " + why));
  };

  if (name == "echo") {
    auto m = args.find("message");
    if (m == args.end() || !m->is_string()) return invalid("\"message\" must be a string");
    return answer(json{{"content", text_content(m->get<std::string>())}});
  }
  if (name == "add") {
    auto a = args.find("a");
    auto b = args.find("b");
    if (a == args.end() || !a->is_number()) return invalid("\"a\" must be a number");
    if (b == args.end() || !b->is_number()) return invalid("\"b\" must be a number");
    json sum;
    std::int64_t isum = 0;
    // Integers stay exact (nlohmann parses non-negative ones as unsigned); anything else,
    // or an integer sum that overflows, is added as double.
    auto as_int64 = [](const json& v, std::int64_t& out) {
      if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
        out = static_cast<std::int64_t>(u);
        return true;
      }
      if (v.is_number_integer()) {
        out = v.get<std::int64_t>();
        return true;
      }
      return false;
    };
    std::int64_t ia = 0;
    std::int64_t ib = 0;
    if (as_int64(*a, ia) && as_int64(*b, ib) && !__builtin_add_overflow(ia, ib, &isum)) {
      sum = isum;
    } else {
      const double d = a->get<double>() + b->get<double>();
      if (!std::isfinite(d)) return invalid("the sum is too large to represent");
      sum = d;
    }
    return reply(send, id,
                 json{{"content", text_content(to_text(sum))},
                      {"structuredContent", {{"sum", sum}}}});
  }
  if (name == "now") {
    std::string utc = utc_now_iso8601();
    return reply(send, id,
                 json{{"content", text_content(utc)}, {"structuredContent", {{"utc", utc}}}});
  }
  if (name == "word_count") {
    auto t = args.find("text");
    if (t == args.end() || !t->is_string()) return invalid("\"text\" must be a string");
    const WordCount c = count_words(t->get_ref<const std::string&>());
    return reply(send, id,
                 json{{"content", text_content("words: " + std::to_string(c.words) +
                                               ", lines: " + std::to_string(c.lines) +
                                               ", chars: " + std::to_string(c.chars))},
                      {"structuredContent",
                       {{"words", c.words}, {"lines", c.lines}, {"chars", c.chars}}}});
  }
  if (name == "slow_task") return start_slow_task(id, args, progress_token, send, modern);
  if (options_.test_tools) {
    if (is_input_tool(name, modern)) return call_input_tool(id, name, params, send, modern);
    if (name == "toggle_tool") return toggle_bonus(id, send, modern);
    if (name == "drop_listen") return drop_listens(id, send, modern);
    if (name == "region_echo") {
      auto r = args.find("region");
      if (r == args.end() || !r->is_string()) return invalid("\"region\" must be a string");
      return answer(json{{"content", text_content("region=" + r->get<std::string>())}});
    }
    if (name == "bonus" && shared_->bonus) return answer(json{{"content", text_content("bonus")}});
  }
  if (name == "fail") {
    std::string message = "The fail tool always fails.";
    if (auto m = args.find("message"); m != args.end() && !m->is_null()) {
      if (!m->is_string()) return invalid("\"message\" must be a string");
      message = m->get<std::string>();
    }
    return answer(tool_error(std::move(message)));
  }
  for (const ExtraTool& t : options_.extra_tools) {
    if (t.call && t.definition.value("name", std::string()) == name) {
      return answer(t.call(args));
    }
  }
  reply_error(send, id, kInvalidParams, "Unknown tool: " + name);
}

void DemoServer::on_listen(const json& id, const json& params, const Send& send,
                           const Close& close) {
  const json& wanted = member(params, "notifications");
  if (!wanted.is_null() && !wanted.is_object()) {
    return reply_error(send, id, kInvalidParams,
                       "Invalid params: \"notifications\" must be an object");
  }
  // Tool list changes and subscriptions to known resources; everything else asked for is
  // left out of the acknowledged subset (the resource and prompt lists never change here).
  const bool tools = member(wanted, "toolsListChanged") == true;
  json honoured = json::object();
  if (tools) honoured["toolsListChanged"] = true;
  json subscribed = json::array();
  if (const json& uris = member(wanted, "resourceSubscriptions"); uris.is_array()) {
    for (const auto& uri : uris) {
      if (!uri.is_string() || !is_known_resource(uri.get<std::string>())) continue;
      if (std::find(subscribed.begin(), subscribed.end(), uri) != subscribed.end()) continue;
      subscribed.push_back(uri);
    }
  }
  if (!subscribed.empty()) honoured["resourceSubscriptions"] = subscribed;
  DemoShared::Listener listener;
  listener.owner = this;
  listener.id = id;
  listener.tools = tools;
  listener.send = send;
  listener.close = close;
  shared_->listeners.emplace(shared_->next_listener++, std::move(listener));
  for (const auto& uri : subscribed) add_resource_subscriber(uri.get<std::string>(), send, id);
  log("listen " + to_text(id) + " open: " + to_text(honoured));
  emit(send, json{{"jsonrpc", "2.0"},
                  {"method", "notifications/subscriptions/acknowledged"},
                  {"params", {{"notifications", honoured}, {"_meta", {{kMetaSubscriptionId, id}}}}}});
}

void DemoServer::on_catalog_list(const json& id, const std::string& method, const json& params,
                                 const Send& send, bool modern) {
  if (!params.is_null() && !params.is_object()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: expected an object");
  }
  if (const json& cursor = member(params, "cursor"); !cursor.is_null()) {
    // One page, as tools/list: no cursor we handed out can exist.
    return reply_error(send, id, kInvalidParams, "Invalid params: unknown cursor");
  }
  json result;
  if (method == "resources/list") {
    result["resources"] = resource_definitions();
  } else if (method == "resources/templates/list") {
    result["resourceTemplates"] = resource_template_definitions();
  } else {
    result["prompts"] = prompt_definitions();
  }
  if (modern) {
    result["ttlMs"] = options_.ttl_ms;
    result["cacheScope"] = options_.cache_scope;
  }
  reply_result(send, id, std::move(result), modern);
}

void DemoServer::on_resources_read(const json& id, const json& params, const Send& send,
                                   bool modern) {
  const json& uri = member(params, "uri");
  if (!uri.is_string()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: \"uri\" must be a string");
  }
  json contents = resource_contents(uri.get<std::string>(), shared_->ticks);
  if (contents.is_null()) {
    return reply_error(send, id, kResourceNotFound, "Resource not found: " + uri.get<std::string>(),
                       json{{"uri", uri}});
  }
  reply_result(send, id, json{{"contents", json::array({std::move(contents)})}}, modern);
}

void DemoServer::on_subscribe(const json& id, const std::string& method, const json& params,
                              const Send& send) {
  const json& uri = member(params, "uri");
  if (!uri.is_string()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: \"uri\" must be a string");
  }
  const std::string target = uri.get<std::string>();
  if (!is_known_resource(target)) {
    return reply_error(send, id, kResourceNotFound, "Resource not found: " + target,
                       json{{"uri", uri}});
  }
  if (method == "resources/subscribe") {
    const bool already = std::any_of(
        shared_->resource_subscribers.begin(), shared_->resource_subscribers.end(),
        [&](const auto& entry) {
          return entry.second.owner == this && entry.second.uri == target &&
                 entry.second.listen_id.is_null();
        });
    // A repeated subscribe is one subscription: one notification per change.
    if (!already) add_resource_subscriber(target, notify_ ? notify_ : send, nullptr);
  } else {
    remove_resource_subscribers(target, json(nullptr));
  }
  log(method + " " + target);
  reply(send, id, json::object());
}

void DemoServer::on_prompts_get(const json& id, const json& params, const Send& send,
                                bool modern) {
  const json& name = member(params, "name");
  if (!name.is_string()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: \"name\" must be a string");
  }
  const json& args = member(params, "arguments");
  if (!args.is_null() && !args.is_object()) {
    return reply_error(send, id, kInvalidParams, "Invalid params: \"arguments\" must be an object");
  }
  // Prompt arguments are strings (MCP: `arguments: { [key: string]: string }`).
  auto text_arg = [&](const char* key, std::string& out) -> std::string {
    const json& v = member(args, key);
    if (v.is_null()) return {};
    if (!v.is_string()) return std::string("argument \"") + key + "\" must be a string";
    out = v.get<std::string>();
    return {};
  };
  auto invalid = [&](const std::string& why) {
    reply_error(send, id, kInvalidParams,
                "Invalid params for prompt \"" + name.get<std::string>() + "\": " + why);
  };
  auto user_message = [](json content) {
    return json{{"role", "user"}, {"content", std::move(content)}};
  };
  if (name == "greet") {
    std::string who;
    std::string style;
    if (auto e = text_arg("name", who); !e.empty()) return invalid(e);
    if (auto e = text_arg("style", style); !e.empty()) return invalid(e);
    if (who.empty()) return invalid("the argument \"name\" is required");
    std::string text;
    if (style.empty()) {
      text = "Please greet " + who + ".";
    } else if (style == "formal") {
      text = "Please write a formal greeting for " + who + ".";
    } else if (style == "casual") {
      text = "Please greet " + who + " casually, like an old friend.";
    } else if (style == "pirate") {
      text = "Please greet " + who + " the way a pirate would.";
    } else {
      return invalid("unknown style \"" + style + "\" (formal, casual or pirate)");
    }
    return reply_result(send, id,
                        json{{"description", "A greeting for " + who},
                             {"messages",
                              json::array({user_message({{"type", "text"}, {"text", text}})})}},
                        modern);
  }
  if (name == "summarize") {
    std::string uri;
    if (auto e = text_arg("uri", uri); !e.empty()) return invalid(e);
    if (uri.empty()) return invalid("the argument \"uri\" is required");
    json contents = resource_contents(uri, shared_->ticks);
    if (contents.is_null()) return invalid("no resource has the URI \"" + uri + "\"");
    return reply_result(
        send, id,
        json{{"description", "A summary of " + uri},
             {"messages",
              json::array({user_message({{"type", "text"},
                                         {"text", "Please summarize the resource " + uri + "."}}),
                           user_message({{"type", "resource"}, {"resource", std::move(contents)}})})}},
        modern);
  }
  reply_error(send, id, kInvalidParams, "Unknown prompt: " + name.get<std::string>());
}

void DemoServer::on_complete(const json& id, const json& params, const Send& send, bool modern) {
  const json& ref = member(params, "ref");
  const json& type = member(ref, "type");
  const json& argument = member(params, "argument");
  const json& arg_name = member(argument, "name");
  const json& arg_value = member(argument, "value");
  if (!type.is_string() || !arg_name.is_string() || !arg_value.is_string()) {
    return reply_error(send, id, kInvalidParams,
                       "Invalid params: completion/complete needs ref.type and argument "
                       "{name, value} strings");
  }
  std::vector<std::string> candidates;
  if (type == "ref/prompt") {
    const json& prompt = member(ref, "name");
    if (prompt == "greet") {
      if (arg_name == "style") candidates.assign(std::begin(kGreetStyles), std::end(kGreetStyles));
    } else if (prompt == "summarize") {
      if (arg_name == "uri") candidates = all_resource_uris();
    } else {
      return reply_error(send, id, kInvalidParams,
                         "Unknown prompt: " + (prompt.is_string() ? prompt.get<std::string>()
                                                                  : to_text(prompt)));
    }
  } else if (type == "ref/resource") {
    const json& uri = member(ref, "uri");
    if (uri != kNotesTemplate) {
      return reply_error(send, id, kInvalidParams,
                         "Unknown resource template: " +
                             (uri.is_string() ? uri.get<std::string>() : to_text(uri)));
    }
    if (arg_name == "name") candidates.assign(std::begin(kNoteNames), std::end(kNoteNames));
  } else {
    return reply_error(send, id, kInvalidParams,
                       "Invalid params: ref.type must be ref/prompt or ref/resource");
  }
  json values = completion_values(candidates, arg_value.get<std::string>());
  const std::size_t total = values.size();
  reply_result(send, id,
               json{{"completion", {{"values", std::move(values)}, {"total", total}, {"hasMore", false}}}},
               modern);
}

void DemoServer::add_resource_subscriber(const std::string& uri, const Send& send,
                                         const json& listen_id) {
  shared_->resource_subscribers.emplace(
      shared_->next_resource_subscriber++,
      DemoShared::ResourceSubscriber{this, uri, listen_id, send});
  if (uri != kTickerUri || shared_->ticker_timer != 0) return;
  DemoShared* shared = shared_.get();
  Scheduler* scheduler = &scheduler_;
  const auto interval = options_.ticker_interval;
  shared->ticker_timer = scheduler_.call_after(
      interval, [shared, scheduler, interval] { advance_ticker(*shared, *scheduler, interval); });
  log("ticker started");
}

void DemoServer::remove_resource_subscribers(const std::string& uri,
                                             const std::optional<json>& listen) {
  auto& subs = shared_->resource_subscribers;
  for (auto it = subs.begin(); it != subs.end();) {
    const auto& s = it->second;
    const bool match = s.owner == this && (uri.empty() || s.uri == uri) &&
                       (!listen || s.listen_id == *listen);
    it = match ? subs.erase(it) : std::next(it);
  }
  const bool ticker_wanted = std::any_of(subs.begin(), subs.end(), [](const auto& entry) {
    return entry.second.uri == kTickerUri;
  });
  if (!ticker_wanted && shared_->ticker_timer != 0) {
    scheduler_.cancel(shared_->ticker_timer);
    shared_->ticker_timer = 0;
    log("ticker stopped: nobody is subscribed");
  }
}

void DemoServer::advance_ticker(DemoShared& shared, Scheduler& scheduler,
                                std::chrono::milliseconds interval) {
  ++shared.ticks;
  // Copied first: a Send may end a subscription (a closed stream) while we notify.
  std::vector<DemoShared::ResourceSubscriber> told;
  for (const auto& [n, sub] : shared.resource_subscribers) {
    if (sub.uri == kTickerUri) told.push_back(sub);
  }
  for (const auto& sub : told) {
    json params{{"uri", kTickerUri}, {"title", "Ticker"}};
    if (!sub.listen_id.is_null()) params["_meta"] = {{kMetaSubscriptionId, sub.listen_id}};
    sub.owner->emit(sub.send, json{{"jsonrpc", "2.0"},
                                   {"method", "notifications/resources/updated"},
                                   {"params", std::move(params)}});
  }
  shared.ticker_timer = told.empty()
                            ? 0
                            : scheduler.call_after(interval, [&shared, &scheduler, interval] {
                                advance_ticker(shared, scheduler, interval);
                              });
}

bool DemoServer::is_input_tool(const std::string& name, bool modern) const {
  return name == "ask_name" || name == "ask_model" || name == "list_roots" ||
         (modern && name == "two_rounds");
}

void DemoServer::call_input_tool(const json& id, const std::string& name, const json& params,
                                 const Send& send, bool modern) {
  auto fail = [&](std::string why) { reply_result(send, id, tool_error(std::move(why)), modern); };
  if (!modern) {
    Step step = input_step(name, 0, nullptr, nullptr);
    if (!step.ask) return reply(send, id, std::move(step.result));
    if (!declares(client_capabilities_, step.ask->capability)) {
      return fail("the client does not support " + step.ask->capability);
    }
    const std::string our_id = "mcprt-demo-" + std::to_string(next_outgoing_id_++);
    log(name + " " + to_text(id) + ": asking the client " + step.ask->method + " (" + our_id + ")");
    emit(send, json{{"jsonrpc", "2.0"},
                    {"id", our_id},
                    {"method", step.ask->method},
                    {"params", step.ask->params}});
    outgoing_.emplace(our_id, Outgoing{id, name, step.ask->method, 1, std::move(step.data), send});
    return;
  }
  const json& capabilities = member(member(params, "_meta"), kMetaClientCapabilities);
  const json& state = member(params, "requestState");
  const json& responses = member(params, "inputResponses");
  Step step;
  int round = 0;
  if (!state.is_null()) {
    if (!state.is_string()) return fail("\"requestState\" must be a string");
    auto it = shared_->states.find(state.get<std::string>());
    if (it == shared_->states.end()) {
      return fail("requestState \"" + state.get<std::string>() +
                  "\" was not issued by this server, or was already used");
    }
    DemoShared::IssuedState issued = std::move(it->second);
    shared_->states.erase(it);  // single use: a replay of the same state is refused
    auto& order = shared_->state_order;
    order.erase(std::remove(order.begin(), order.end(), state.get<std::string>()), order.end());
    if (issued.tool != name) {
      return fail("requestState \"" + state.get<std::string>() + "\" belongs to tool " +
                  issued.tool + ", not " + name);
    }
    const json& answer = member(responses, issued.key.c_str());
    if (!answer.is_object()) {
      return fail("the retry has no inputResponses[\"" + issued.key + "\"] object");
    }
    round = issued.round;
    step = input_step(name, issued.round, issued.data, answer);
  } else {
    if (!responses.is_null()) {
      return fail("inputResponses came without the requestState this server issued");
    }
    step = input_step(name, 0, nullptr, nullptr);
  }
  if (!step.ask) return reply_result(send, id, std::move(step.result), true);
  if (!declares(capabilities, step.ask->capability)) {
    return fail("the client does not support " + step.ask->capability);
  }
  const std::string token =
      "demo-rs-" + std::to_string(shared_->next_state++) + "-" + random_suffix();
  shared_->states.emplace(token, DemoShared::IssuedState{name, step.ask->key, round + 1,
                                                         std::move(step.data)});
  shared_->state_order.push_back(token);
  while (shared_->state_order.size() > kMaxIssuedStates) {
    shared_->states.erase(shared_->state_order.front());
    shared_->state_order.erase(shared_->state_order.begin());
  }
  log(name + " " + to_text(id) + ": input_required " + step.ask->method + " (round " +
      std::to_string(round + 1) + ")");
  reply(send, id,
        json{{"resultType", "input_required"},
             {"inputRequests",
              {{step.ask->key, {{"method", step.ask->method}, {"params", step.ask->params}}}}},
             {"requestState", token}});
}

DemoServer::Step DemoServer::input_step(const std::string& tool, int round, const json& data,
                                        const json& answer) const {
  Step step;
  auto ask = [&](std::string key, std::string method, json params, std::string capability) {
    step.ask = Ask{std::move(key), std::move(method), std::move(params), std::move(capability)};
    return step;
  };
  auto done = [&](json result) {
    step.result = std::move(result);
    return step;
  };
  auto form = [](std::string message, json schema) {
    return json{{"message", std::move(message)}, {"requestedSchema", std::move(schema)}};
  };
  const std::string action = member(answer, "action").is_string()
                                 ? member(answer, "action").get<std::string>()
                                 : std::string();
  const json& content = member(answer, "content");
  auto not_accepted = [&](const std::string& what) -> std::optional<json> {
    if (action == "accept") return std::nullopt;
    if (action == "decline") return json{{"content", text_content(what + " (declined).")}};
    if (action == "cancel") return json{{"content", text_content(what + " (cancelled).")}};
    return tool_error("the elicitation answer has no valid \"action\" (accept, decline or "
                      "cancel): " + to_text(answer));
  };
  if (tool == "ask_name") {
    if (round == 0) {
      return ask("name", "elicitation/create",
                 form("What is your name?",
                      {{"type", "object"},
                       {"properties",
                        {{"name", {{"type", "string"}, {"title", "Name"}, {"default", "World"}}},
                         {"excited", {{"type", "boolean"}, {"default", false}}}}},
                       {"required", json::array({"name"})}}),
                 "elicitation");
    }
    if (auto other = not_accepted("No name given")) return done(std::move(*other));
    const json& name = member(content, "name");
    if (!name.is_string()) {
      return done(tool_error("the accepted elicitation answer has no string \"name\": " +
                             to_text(answer)));
    }
    const bool excited = member(content, "excited") == true;
    return done(json{{"content", text_content("Hello, " + name.get<std::string>() + "!" +
                                              (excited ? "!" : ""))}});
  }
  if (tool == "ask_model") {
    if (round == 0) {
      return ask("model", "sampling/createMessage",
                 json{{"messages",
                       json::array({{{"role", "user"},
                                     {"content", {{"type", "text"}, {"text", "Say hello"}}}}})},
                      {"maxTokens", 50}},
                 "sampling");
    }
    const std::string text = sampled_text(answer);
    if (text.empty()) {
      return done(tool_error("the sampling answer has no text content: " + to_text(answer)));
    }
    return done(json{{"content", text_content(text)}});
  }
  if (tool == "list_roots") {
    if (round == 0) return ask("roots", "roots/list", json::object(), "roots");
    const json& roots = member(answer, "roots");
    if (!roots.is_array()) {
      return done(tool_error("the roots/list answer has no \"roots\" array: " + to_text(answer)));
    }
    return done(json{{"content", text_content(to_text(roots))}});
  }
  // two_rounds
  const json word_schema{{"type", "object"},
                         {"properties", {{"answer", {{"type", "string"}, {"title", "Answer"}}}}},
                         {"required", json::array({"answer"})}};
  if (round == 0) {
    return ask("first", "elicitation/create", form("First question: say a word.", word_schema),
               "elicitation");
  }
  if (auto other = not_accepted("two_rounds: no answer at round " + std::to_string(round))) {
    return done(std::move(*other));
  }
  const json& word = member(content, "answer");
  if (!word.is_string()) {
    return done(tool_error("the accepted elicitation answer has no string \"answer\": " +
                           to_text(answer)));
  }
  if (round == 1) {
    step.data = json{{"first", word}};
    return ask("second", "elicitation/create", form("Second question: say another word.", word_schema),
               "elicitation");
  }
  const json& first = member(data, "first");
  return done(json{{"content", text_content("first=" + (first.is_string() ? first.get<std::string>()
                                                                          : std::string()) +
                                            ", second=" + word.get<std::string>())}});
}

void DemoServer::toggle_bonus(const json& id, const Send& send, bool modern) {
  shared_->bonus = !shared_->bonus;
  std::size_t told = 0;
  for (auto& [n, listener] : shared_->listeners) {
    if (!listener.tools) continue;
    emit(listener.send, json{{"jsonrpc", "2.0"},
                             {"method", "notifications/tools/list_changed"},
                             {"params", {{"_meta", {{kMetaSubscriptionId, listener.id}}}}}});
    ++told;
  }
  // A 2025 connection learns it on its own channel (before the result, so a client has it
  // by the time the call returns).
  if (!modern || session_started_) {
    emit(send, json{{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  }
  log(std::string("toggle_tool: bonus ") + (shared_->bonus ? "added" : "removed") + ", " +
      std::to_string(told) + " listen stream(s) told");
  reply_result(send, id,
               json{{"content",
                     text_content(shared_->bonus ? "bonus tool added" : "bonus tool removed")}},
               modern);
}

void DemoServer::drop_listens(const json& id, const Send& send, bool modern) {
  std::map<std::uint64_t, DemoShared::Listener> dropped;
  dropped.swap(shared_->listeners);
  for (auto& [n, listener] : dropped) {
    if (listener.owner != nullptr) listener.owner->remove_resource_subscribers({}, listener.id);
    if (listener.close) {
      listener.close();
    } else {
      emit(listener.send, json{{"jsonrpc", "2.0"},
                               {"method", "notifications/cancelled"},
                               {"params",
                                {{"requestId", listener.id},
                                 {"reason", "drop_listen: the server ended this stream"}}}});
    }
  }
  log("drop_listen: ended " + std::to_string(dropped.size()) + " listen stream(s)");
  reply_result(send, id,
               json{{"content", text_content("dropped " + std::to_string(dropped.size()) +
                                             " listen stream(s)")}},
               modern);
}

void DemoServer::start_slow_task(const json& id, const json& args, const json& progress_token,
                                 const Send& send, bool modern) {
  Task task;
  if (auto err = read_int_arg(args, "steps", 1, kSlowTaskMaxSteps, kSlowTaskDefaultSteps,
                              task.steps);
      !err.empty()) {
    return reply_result(send, id,
                        tool_error("Invalid arguments for tool \"slow_task\": " + err), modern);
  }
  if (auto err = read_int_arg(args, "interval_ms", 0, kSlowTaskMaxIntervalMs,
                              kSlowTaskDefaultIntervalMs, task.interval_ms);
      !err.empty()) {
    return reply_result(send, id,
                        tool_error("Invalid arguments for tool \"slow_task\": " + err), modern);
  }
  task.modern = modern;
  task.request_id = id;
  task.progress_token = progress_token;
  task.send = send;
  const std::uint64_t task_id = next_task_id_++;
  task.timer = scheduler_.call_after(std::chrono::milliseconds(task.interval_ms),
                                     [this, task_id] { step_slow_task(task_id); });
  log("slow_task " + to_text(id) + " started: " + std::to_string(task.steps) + " steps of " +
      std::to_string(task.interval_ms) + " ms" +
      (progress_token.is_null() ? std::string(", no progress token") : std::string()));
  tasks_.emplace(task_id, std::move(task));
}

void DemoServer::step_slow_task(std::uint64_t task_id) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return;
  Task& task = it->second;
  ++task.done;
  if (!task.progress_token.is_null()) {
    emit(task.send, json{{"jsonrpc", "2.0"},
                         {"method", "notifications/progress"},
                         {"params",
                          {{"progressToken", task.progress_token},
                           {"progress", task.done},
                           {"total", task.steps},
                           {"message", "step " + std::to_string(task.done) + " of " +
                                           std::to_string(task.steps)}}}});
  }
  if (task.done < task.steps) {
    task.timer = scheduler_.call_after(std::chrono::milliseconds(task.interval_ms),
                                       [this, task_id] { step_slow_task(task_id); });
    return;
  }
  // Move out before replying: the entry must be gone whatever `send` does.
  Task finished = std::move(task);
  tasks_.erase(it);
  log("slow_task " + to_text(finished.request_id) + " finished");
  reply_result(finished.send, finished.request_id,
               json{{"content", text_content("slow_task completed " +
                                             std::to_string(finished.steps) + " steps of " +
                                             std::to_string(finished.interval_ms) + " ms")},
                    {"structuredContent",
                     {{"steps", finished.steps}, {"interval_ms", finished.interval_ms}}}},
               finished.modern);
}

void DemoServer::cancel_request(const json& request_id, const std::string& reason) {
  bool found = false;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    if (it->second.request_id == request_id) {
      scheduler_.cancel(it->second.timer);
      log("slow_task " + to_text(request_id) + " cancelled after " +
          std::to_string(it->second.done) + " of " + std::to_string(it->second.steps) +
          " steps" + (reason.empty() ? std::string() : ": " + reason));
      it = tasks_.erase(it);
      found = true;
    } else {
      ++it;
    }
  }
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    if (it->second.call_id == request_id) {
      log(it->second.tool + " " + to_text(request_id) + " cancelled while waiting for " +
          it->second.method);
      it = outgoing_.erase(it);
      found = true;
    } else {
      ++it;
    }
  }
  for (auto it = shared_->listeners.begin(); it != shared_->listeners.end();) {
    if (it->second.owner == this && it->second.id == request_id) {
      log("listen " + to_text(request_id) + " closed by the client");
      it = shared_->listeners.erase(it);
      remove_resource_subscribers({}, request_id);
      found = true;
    } else {
      ++it;
    }
  }
  // Requests that already finished (or never ran long) cannot be cancelled; the spec
  // says to ignore such notifications.
  if (!found && options_.verbose) {
    log("cancel for request " + to_text(request_id) + " ignored: not running");
  }
}

void DemoServer::cancel_all() {
  for (auto& [timer, send] : delayed_initialize_) scheduler_.cancel(timer);
  delayed_initialize_.clear();
  for (auto& [task_id, task] : tasks_) {
    scheduler_.cancel(task.timer);
  }
  if (!tasks_.empty()) log("stopped " + std::to_string(tasks_.size()) + " running task(s)");
  tasks_.clear();
  outgoing_.clear();
  remove_resource_subscribers({}, std::nullopt);
}

void DemoServer::remove_listens() {
  for (auto it = shared_->listeners.begin(); it != shared_->listeners.end();) {
    if (it->second.owner == this) remove_resource_subscribers({}, it->second.id);
    it = it->second.owner == this ? shared_->listeners.erase(it) : std::next(it);
  }
}

void DemoServer::reply(const Send& send, const json& id, json result) {
  emit(send, json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void DemoServer::reply_result(const Send& send, const json& id, json result, bool modern) {
  if (modern && result.is_object() && !result.contains("resultType")) {
    result["resultType"] = "complete";
  }
  reply(send, id, std::move(result));
}

void DemoServer::reply_error(const Send& send, const json& id, int code, std::string message,
                             json data) {
  if (!options_.verbose) log("error " + std::to_string(code) + ": " + message);
  json error{{"code", code}, {"message", std::move(message)}};
  if (!data.is_null()) error["data"] = std::move(data);
  emit(send, json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}});
}

void DemoServer::emit(const Send& send, const json& message) {
  if (options_.verbose) log("-> " + preview(to_text(message)));
  if (send) send(message);
}

void DemoServer::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

}  // namespace mcprt::demo
