#include "mcp_demo_server.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <memory>
#include <utility>

namespace mcprt::demo {
namespace {

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

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

}  // namespace

DemoServer::DemoServer(Scheduler& scheduler, DemoServerOptions options)
    : scheduler_(scheduler), options_(std::move(options)) {}

DemoServer::~DemoServer() { cancel_all(); }

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

void DemoServer::handle(const json& message, const Send& send) {
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
      // This server never sends requests, so no response can be expected.
      log("ignoring a response with id " + to_text(*id) + ": no request of ours has that id");
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
  handle_request(*id, name, params, send);
}

void DemoServer::handle_request(const json& id, const std::string& method, const json& params,
                                const Send& send) {
  if (method == "initialize") return on_initialize(id, params, send);
  if (method == "ping") return reply(send, id, json::object());
  if (method == "tools/list") return on_tools_list(id, params, send);
  if (method == "tools/call") return on_tools_call(id, params, send);
  reply_error(send, id, kMethodNotFound, "Method not found: " + method);
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
  log("initialize from " + (client_name_.empty() ? std::string("unnamed client") : client_name_) +
      ": asked " + wanted + ", agreed " + agreed);
  json result{{"protocolVersion", agreed},
             {"capabilities", {{"tools", {{"listChanged", false}}}}},
             {"serverInfo",
              {{"name", options_.server_name},
               {"title", "mcprt demo server"},
               {"version", options_.server_version}}},
             {"instructions",
              "A demo server for mcprt. Tools: echo, add, now, word_count, slow_task "
              "(progress and cancellation), fail (always a tool error)."}};
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

void DemoServer::on_tools_list(const json& id, const json& params, const Send& send) {
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
  json tools = tool_definitions();
  for (const ExtraTool& t : options_.extra_tools) tools.push_back(t.definition);
  reply(send, id, json{{"tools", std::move(tools)}});
}

void DemoServer::on_tools_call(const json& id, const json& params, const Send& send) {
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

  // Bad arguments are tool execution errors (isError), not protocol errors, so that a
  // model sees what was wrong and can retry (MCP 2025-11-25, "Error Handling").
  auto invalid = [&](const std::string& why) {
    reply(send, id, tool_error("Invalid arguments for tool \"" + name + "\": " + why));
  };

  if (name == "echo") {
    auto m = args.find("message");
    if (m == args.end() || !m->is_string()) return invalid("\"message\" must be a string");
    return reply(send, id, json{{"content", text_content(m->get<std::string>())}});
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
  if (name == "slow_task") return start_slow_task(id, args, progress_token, send);
  if (name == "fail") {
    std::string message = "The fail tool always fails.";
    if (auto m = args.find("message"); m != args.end() && !m->is_null()) {
      if (!m->is_string()) return invalid("\"message\" must be a string");
      message = m->get<std::string>();
    }
    return reply(send, id, tool_error(std::move(message)));
  }
  for (const ExtraTool& t : options_.extra_tools) {
    if (t.call && t.definition.value("name", std::string()) == name) {
      return reply(send, id, t.call(args));
    }
  }
  reply_error(send, id, kInvalidParams, "Unknown tool: " + name);
}

void DemoServer::start_slow_task(const json& id, const json& args, const json& progress_token,
                                 const Send& send) {
  Task task;
  if (auto err = read_int_arg(args, "steps", 1, kSlowTaskMaxSteps, kSlowTaskDefaultSteps,
                              task.steps);
      !err.empty()) {
    return reply(send, id, tool_error("Invalid arguments for tool \"slow_task\": " + err));
  }
  if (auto err = read_int_arg(args, "interval_ms", 0, kSlowTaskMaxIntervalMs,
                              kSlowTaskDefaultIntervalMs, task.interval_ms);
      !err.empty()) {
    return reply(send, id, tool_error("Invalid arguments for tool \"slow_task\": " + err));
  }
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
  reply(finished.send, finished.request_id,
        json{{"content", text_content("slow_task completed " + std::to_string(finished.steps) +
                                      " steps of " + std::to_string(finished.interval_ms) +
                                      " ms")},
             {"structuredContent",
              {{"steps", finished.steps}, {"interval_ms", finished.interval_ms}}}});
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
}

void DemoServer::reply(const Send& send, const json& id, json result) {
  emit(send, json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void DemoServer::reply_error(const Send& send, const json& id, int code, std::string message) {
  if (!options_.verbose) log("error " + std::to_string(code) + ": " + message);
  emit(send, json{{"jsonrpc", "2.0"},
                  {"id", id},
                  {"error", {{"code", code}, {"message", std::move(message)}}}});
}

void DemoServer::emit(const Send& send, const json& message) {
  if (options_.verbose) log("-> " + preview(to_text(message)));
  if (send) send(message);
}

void DemoServer::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

}  // namespace mcprt::demo
