// Session result handling and the tool bridge. A stdio server (StdioTransport over an
// in-memory byte stream, so the bytes take the real framing and parsing path) answers the
// client's requests in order with the input's records: initialize, then tools/list pages
// (nextCursor is followed), then tools/call for up to three of the tools the bridge built
// (build_mcp_tools → McpTool::call → ClientSession::call_tool → render_tool_result).
//
// A record (records are separated by "\n----\n") answers one client request:
//   result\n<JSON>    → {"jsonrpc":"2.0","id":<the request's id>,"result":<JSON>}
//   error\n<JSON>     → the same with "error":<JSON>
//   raw\n<lines>      → written as they are, "$ID" replaced by the request's id (so a
//                       record can send notifications, server requests or broken lines
//                       before, instead of, or after the answer)
//   anything else     → the whole record is the result JSON
// Newlines inside result/error JSON are turned into spaces (the stdio framing is one
// message per line). Requests left without a record are never answered; the deadlines
// (connect 30 s, list pages 30 s, calls 10 s) and the final close end them.
//
// Invariants: every callback (connect, list, each call) fires exactly once; a connected
// session speaks a supported protocol version; listed tools are objects with a string
// name; bridged names are unique, sorted, `mcp_`-prefixed, of [A-Za-z0-9_-], within the
// length limit, and map back to listed tools; tool results are valid UTF-8 text within
// the output cap (head, marker and tail within it); render_tool_result on every record too.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "mcprt/client.hpp"
#include "mcprt/stdio_transport.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/manual_executor.hpp"
#include "mcprt/testing/memory_byte_stream.hpp"
#include "mcprt/tools.hpp"

namespace {

using mcprt::json;
using mcprt::fuzz::as_text;

constexpr std::size_t kMaxResultBytes = 512;

struct Script {
  std::vector<std::string_view> records;
  std::size_t next = 0;

  // The bytes that answer request `id` (its JSON text), or nullopt when the records are
  // used up.
  std::optional<std::string> answer(const std::string& id) {
    if (next >= records.size()) return std::nullopt;
    std::string_view rec = records[next++];
    std::string_view body = rec;
    const std::string_view directive = mcprt::fuzz::take_line(body);
    auto one_line = [](std::string_view text) {
      std::string s(text);
      for (char& c : s) {
        if (c == '\n') c = ' ';
      }
      return s;
    };
    if (directive == "raw") {
      std::string out;
      for (std::size_t i = 0; i < body.size(); ++i) {
        if (body.compare(i, 3, "$ID") == 0) {
          out += id;
          i += 2;
        } else {
          out += body[i];
        }
      }
      if (out.empty() || out.back() != '\n') out += '\n';
      return out;
    }
    const bool is_error = directive == "error";
    const std::string member = is_error ? "error" : "result";
    const std::string value = one_line(is_error || directive == "result" ? body : rec);
    return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"" + member + "\":" + value + "}\n";
  }
};

// The manager's part for the bridged tools: calls go straight to the session.
class SessionHost final : public mcprt::McpToolHost {
 public:
  explicit SessionHost(std::shared_ptr<mcprt::ClientSession> session) : session_(std::move(session)) {}
  void call_tool(const std::string& server, const std::string& raw_tool, json arguments,
                 mcprt::CallOptions options, std::function<void(mcprt::Result<json>)> done) override {
    FUZZ_CHECK(server == "fuzz");
    options.timeout = mcprt::Millis(10000);
    session_->call_tool(raw_tool, std::move(arguments), std::move(options), std::move(done));
  }
  void wait_for_connection(const std::string&, mcprt::AbortSignal,
                           std::function<void(mcprt::Status)> done) override {
    done(mcprt::Status());
  }

 private:
  std::shared_ptr<mcprt::ClientSession> session_;
};

bool is_tool_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

void check_tool_result(const mcprt::ToolResult& r, std::size_t cap) {
  mcprt::fuzz::check_text(r.text);
  FUZZ_CHECK(r.content.is_array());
  // Head, marker and tail together stay within the cap (SPEC §16).
  if (cap > 0) FUZZ_CHECK(r.text.size() <= cap);
  if (r.truncated) FUZZ_CHECK(r.full_bytes > cap);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  Script script{mcprt::fuzz::split_records(as_text(bytes, size), 24)};

  // The renderer alone, on every record that is JSON.
  for (std::string_view rec : script.records) {
    std::string_view body = rec;
    const std::string_view directive = mcprt::fuzz::take_line(body);
    const std::string_view text = directive == "result" ? body : rec;
    json value = json::parse(text.begin(), text.end(), nullptr, false);
    if (value.is_discarded()) continue;
    check_tool_result(mcprt::render_tool_result(value, kMaxResultBytes), kMaxResultBytes);
    check_tool_result(mcprt::render_tool_result(value, 0), 0);
  }

  mcprt::testing::ManualExecutor ex;
  mcprt::testing::CapturingLogger log;
  auto stream = std::make_unique<mcprt::testing::MemoryByteStream>(ex);
  mcprt::testing::MemoryByteStream::Remote remote = stream->remote();
  mcprt::StdioTransportOptions topts;
  topts.server_name = "fuzz";
  topts.logger = &log;
  topts.max_message_bytes = 1u << 20;
  mcprt::ClientOptions options;
  options.server_name = "fuzz";
  options.roots = mcprt::roots_from_directories({"/repo"});
  options.logger = &log;
  options.max_list_pages = 8;
  options.on_notification = [](const std::string&, const json&) {};
  int closes = 0;
  options.on_close = [&](const mcprt::Error& e) {
    ++closes;
    (void)e.describe();
  };
  auto session = mcprt::ClientSession::create(
      ex, mcprt::make_stdio_transport(ex, std::move(stream), topts), std::move(options));
  auto host = std::make_shared<SessionHost>(session);

  // Answers every request the client wrote since the last pump; true when it wrote any.
  auto pump = [&]() {
    bool any = false;
    for (int round = 0; round < 64; ++round) {
      ex.run_until_idle();
      bool wrote = false;
      for (const std::string& line : remote.take_lines()) {
        json msg = json::parse(line, nullptr, false);
        FUZZ_CHECK(!msg.is_discarded() && msg.is_object());  // the client writes JSON-RPC
        FUZZ_CHECK(msg.value("jsonrpc", "") == "2.0");
        if (!msg.contains("method") || !msg.contains("id")) continue;
        if (auto answer = script.answer(msg.at("id").dump())) {
          remote.push(*answer);
          wrote = any = true;
        }
      }
      if (!wrote) break;
    }
    ex.run_until_idle();
    return any;
  };

  int connects = 0, lists = 0, calls_done = 0, calls_started = 0;
  mcprt::ServerConfig config;
  config.name = "fuzz";
  config.exclude_tools = {"*_internal"};
  std::vector<std::shared_ptr<mcprt::McpTool>> tools;

  session->connect([&](mcprt::Status s) {
    ++connects;
    if (!s.ok()) {
      (void)s.error().describe();
      return;
    }
    // Either wire: the era probe (request 0, server/discover) may have found a modern one.
    const auto& versions = mcprt::supported_protocol_versions();
    FUZZ_CHECK(mcprt::is_modern_protocol_version(session->server().protocol_version) ||
               std::find(versions.begin(), versions.end(), session->server().protocol_version) !=
                   versions.end());
    FUZZ_CHECK(session->server().modern ==
               mcprt::is_modern_protocol_version(session->server().protocol_version));
    session->list_tools([&](mcprt::Result<std::vector<json>> listed) {
      ++lists;
      if (!listed.ok()) return;
      std::set<std::string> raw_names;
      for (const json& def : *listed) {
        FUZZ_CHECK(def.is_object() && def.contains("name") && def.at("name").is_string());
        raw_names.insert(def.at("name").get<std::string>());
      }
      mcprt::SourceInfo source;
      source.provider_name = "Fuzz";
      tools = mcprt::build_mcp_tools(ex, {{"fuzz", &config, source, *listed, false}}, host,
                                     {mcprt::kDefaultMaxToolNameLength, kMaxResultBytes});
      std::set<std::string> names;
      std::string previous;
      for (const auto& tool : tools) {
        const std::string& name = tool->name();
        FUZZ_CHECK(name.rfind("mcp_", 0) == 0 && name.size() <= mcprt::kDefaultMaxToolNameLength);
        FUZZ_CHECK(std::all_of(name.begin(), name.end(), is_tool_name_char));
        FUZZ_CHECK(names.insert(name).second && name > previous);
        previous = name;
        FUZZ_CHECK(raw_names.count(tool->info().raw_name) == 1);
        FUZZ_CHECK(mcprt::tool_passes_filters(config, tool->info().raw_name));
        FUZZ_CHECK(tool->input_schema().is_object());
      }
      for (std::size_t i = 0; i < tools.size() && i < 3; ++i) {
        ++calls_started;
        tools[i]->call(json{{"message", "hi"}}, {}, [&](mcprt::Result<mcprt::ToolResult> r) {
          ++calls_done;
          FUZZ_CHECK(r.ok());  // without an abort every outcome is a ToolResult
          check_tool_result(*r, kMaxResultBytes);
        });
      }
    });
  });

  for (int i = 0; i < 32 && pump(); ++i) {
  }
  // What is still waiting runs into its deadline.
  for (int i = 0; i < 8; ++i) {
    ex.advance(mcprt::Millis(10001));
    if (!pump() && ex.pending_timers() == 0) break;
  }
  session->close();
  ex.run_until_idle();
  for (int i = 0; i < 8 && ex.advance_to_next_timer(); ++i) {
  }

  FUZZ_CHECK(connects == 1);
  FUZZ_CHECK(lists <= 1);
  FUZZ_CHECK(calls_done == calls_started);
  FUZZ_CHECK(closes == 1);
  FUZZ_CHECK(session->state() == mcprt::ClientSession::State::closed);
  tools.clear();
  return 0;
}
