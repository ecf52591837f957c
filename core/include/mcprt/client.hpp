#pragma once
// The MCP client session (SPEC §3.1, §3.4): one initialized connection to one server.
//
//   auto session = ClientSession::create(executor, std::move(transport), options);
//   session->connect([&](Status s) { ... });     // initialize → check version → initialized
//   session->list_tools([&](Result<std::vector<json>> tools) { ... });  // follows nextCursor
//   session->call_tool("echo", {{"message","hi"}}, CallOptions{...}, [&](Result<json> r) {...});
//
// Server requests are answered: ping → {}, roots/list → the session cwd as a file:// root,
// anything else → -32601. Notifications are handed to `ClientOptions::on_notification`
// (list_changed, message, ...) after the session consumed what it needs (progress).
//
// Threading and lifetime: single-threaded on `executor`. Every callback runs on the
// executor, never inside the call that started it, and never after the session is
// destroyed. Create through `create` (shared ownership lets in-flight callbacks check
// liveness).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/abort.hpp"
#include "mcprt/jsonrpc.hpp"
#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/logger.hpp"
#include "mcprt/result.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

// Newest first. initialize offers the first; the server's answer must be one of these.
inline const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> v{"2025-11-25", "2025-06-18", "2025-03-26",
                                          "2024-11-05"};
  return v;
}

struct ClientInfo {
  std::string name = "mcprt";
  std::string version = MCPRT_VERSION;
};

struct ClientOptions {
  ClientInfo client_info;
  // Label used in error messages and logs: `Server "<name>": ...`.
  std::string server_name;
  // Whole handshake (initialize + initialized) deadline; 0 = none. Default 30 s.
  Millis connect_timeout{30000};
  // Deadline of each tools/list page; 0 = none.
  Millis request_timeout{30000};
  // Root answered to roots/list (an absolute path; empty = no roots).
  std::string roots_cwd;
  // Notifications other than progress (and also list_changed etc.).
  std::function<void(const std::string& method, const json& params)> on_notification;
  // The connection closed after connect succeeded (or during it). Fires once.
  std::function<void(const Error&)> on_close;
  Logger* logger = nullptr;
  // tools/list guards.
  std::size_t max_list_pages = 1000;
};

struct ServerInfo {
  std::string protocol_version;
  json server_info;    // {name, version, ...}
  json capabilities;   // the server's capabilities object
  std::string instructions;
};

struct CallOptions {
  Millis timeout{0};             // per-call deadline; 0 = none
  Millis max_total_timeout{0};   // cap when progress keeps resetting the deadline
  AbortSignal signal;
  std::function<void(const json& progress_params)> on_progress;
};

class ClientSession : public std::enable_shared_from_this<ClientSession> {
 public:
  enum class State {
    idle,        // → connecting (connect)
    connecting,  // → ready (handshake ok) | closed (failure, close)
    ready,       // → closed (transport closed or close())
    closed,      // final
  };

  static std::shared_ptr<ClientSession> create(Executor& executor,
                                               std::unique_ptr<Transport> transport,
                                               ClientOptions options);
  ~ClientSession();

  // Runs the handshake. On failure the transport is closed and the error names the
  // server (e.g. `Server "x": unsupported protocol version "1999-01-01" (client supports
  // 2025-11-25, ...)`). `done` fires once.
  void connect(std::function<void(Status)> done);

  // tools/list, following nextCursor until absent. Fails after max_list_pages pages or on
  // a repeated cursor. Returns the raw tool definitions.
  void list_tools(std::function<void(Result<std::vector<json>>)> done,
                  AbortSignal signal = {});

  // tools/call. The result is the raw CallToolResult object (content, isError, ...).
  // A JSON-RPC error answer is an Error (wire); isError results are successes here.
  void call_tool(const std::string& name, json arguments, CallOptions options,
                 std::function<void(Result<json>)> done);

  void ping(std::function<void(Status)> done, Millis timeout = Millis(0));

  // Generic request for methods the session does not wrap yet (resources, prompts).
  Result<json> request(const std::string& method, json params, RequestOptions options,
                       ResponseCallback done);

  // Closes the connection; pending requests fail once with ErrorCode::closed.
  void close();

  State state() const;
  const ServerInfo& server() const;
  const std::string& name() const;
  RpcPeer& peer();

 private:
  ClientSession(Executor& executor, std::unique_ptr<Transport> transport, ClientOptions options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mcprt
