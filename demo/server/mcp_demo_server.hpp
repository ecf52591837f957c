#pragma once
// The demo MCP server's protocol logic, independent of how bytes arrive. A front end
// (demo_server.cpp: newline JSON-RPC over stdio; later Streamable HTTP) parses or frames
// messages and hands each one to `DemoServer::handle` with a `send` callback for that
// message's answers.
//
// Implements:
//  [x] initialize (version negotiation), notifications/initialized, ping
//  [x] an optional startup delay before the initialize answer (slow-server tests)
//  [x] tools/list (one page), tools/call: echo, add, now, word_count, slow_task, fail,
//      and the front end's DemoServerOptions::extra_tools
//  [x] notifications/progress for slow_task when the call has _meta.progressToken
//  [x] notifications/cancelled (stops a running slow_task; no result is sent)
//  [x] JSON-RPC errors: -32700 parse, -32600 invalid request, -32601 unknown method,
//      -32602 invalid params / unknown tool
//  [ ] resources, prompts, logging, completion (not advertised; answered with -32601)
//  [ ] JSON-RPC batches (answered with -32600; removed from MCP in 2025-06-18)
//
// Threading: single-threaded. `handle` and every timer run on the front end's loop
// thread; `send` is called on that thread, during `handle` or later from a timer (for
// slow_task). The front end keeps each `send` callable until the request it belongs to
// is answered, cancelled, or `cancel_all()` ran.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "timer_queue.hpp"

namespace mcprt::demo {

using json = nlohmann::json;

// A tool a front end adds to the built-in ones (the OAuth fixture's issue tracker).
// `call` gets the call's `arguments` object and returns the CallToolResult; it runs where
// DemoServer::handle runs (see Threading above).
struct ExtraTool {
  json definition;  // as tools/list shows it; its "name" must differ from the built-ins'
  std::function<json(const json& arguments)> call;
};

struct DemoServerOptions {
  std::string server_name = "mcprt-demo-server";
  std::string server_version = "0.0.0";
  // Receives one log line (no trailing newline). Null = no logging.
  std::function<void(std::string_view line)> log;
  // Log every message received and sent, not only lifecycle events and problems.
  bool verbose = false;
  // Answer initialize only after this long (0 = at once): plays a slow-starting server
  // for tests of the startup gate and the tool cache, and for startup benchmarks. Other
  // requests are answered as usual meanwhile.
  std::chrono::milliseconds startup_delay{0};
  // Listed after the built-in tools and called by name.
  std::vector<ExtraTool> extra_tools;
};

// Protocol versions this server speaks, newest first.
inline constexpr const char* kSupportedProtocolVersions[] = {"2025-11-25", "2025-06-18",
                                                             "2025-03-26", "2024-11-05"};
inline constexpr const char* kLatestProtocolVersion = "2025-11-25";

// slow_task limits (also published in its input schema).
inline constexpr int kSlowTaskMaxSteps = 1000;
inline constexpr int kSlowTaskMaxIntervalMs = 60000;

class DemoServer {
 public:
  using Send = std::function<void(const json& message)>;

  explicit DemoServer(Scheduler& scheduler, DemoServerOptions options = {});
  ~DemoServer();  // cancels running tasks (they send nothing more)
  DemoServer(const DemoServer&) = delete;
  DemoServer& operator=(const DemoServer&) = delete;

  // One raw message (a line of stdio, a POST body). Bad JSON → -32700 with id null.
  void handle_text(std::string_view text, const Send& send);
  // One parsed JSON-RPC message: a request (answered through `send`, now or later), a
  // notification (never answered) or a response (ignored: this server sends no requests).
  void handle(const json& message, const Send& send);

  // Stops every running slow_task without answering (stdin EOF, session end).
  void cancel_all();

  std::size_t running_tasks() const { return tasks_.size(); }
  bool initialized() const { return initialized_; }
  // The version agreed in initialize; empty before it.
  const std::string& protocol_version() const { return protocol_version_; }

  // The tool definitions returned by tools/list.
  static json tool_definitions();

 private:
  struct Task {
    json request_id;
    json progress_token;  // null when the caller asked for no progress
    int steps = 0;
    int done = 0;
    int interval_ms = 0;
    Scheduler::TimerId timer = 0;
    Send send;
  };

  void handle_request(const json& id, const std::string& method, const json& params,
                      const Send& send);
  void handle_notification(const std::string& method, const json& params);
  void on_initialize(const json& id, const json& params, const Send& send);
  void on_tools_list(const json& id, const json& params, const Send& send);
  void on_tools_call(const json& id, const json& params, const Send& send);
  void start_slow_task(const json& id, const json& args, const json& progress_token,
                       const Send& send);
  void step_slow_task(std::uint64_t task_id);
  void cancel_request(const json& request_id, const std::string& reason);

  void reply(const Send& send, const json& id, json result);
  void reply_error(const Send& send, const json& id, int code, std::string message);
  void emit(const Send& send, const json& message);
  void log(const std::string& line) const;

  Scheduler& scheduler_;
  DemoServerOptions options_;
  bool initialized_ = false;
  std::string protocol_version_;
  std::string client_name_;
  std::map<std::uint64_t, Task> tasks_;
  std::map<Scheduler::TimerId, Send> delayed_initialize_;  // --startup-delay-ms answers
  std::uint64_t next_task_id_ = 1;
};

}  // namespace mcprt::demo
