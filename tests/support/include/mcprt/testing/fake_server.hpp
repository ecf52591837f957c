#pragma once
// FakeServer: a scriptable MCP server on the far end of a MemoryTransport, for tests of
// anything that talks to a server (the client session, the manager, tools).
//
//   ManualExecutor ex;
//   FakeServer server(ex);
//   server.set_tools({{{"name", "echo"}}});
//   server.on_tool("echo", [](const json& args) -> Result<json> { return ...; });
//   auto session = ClientSession::create(ex, server.take_client_end(), options);
//
// Out of the box it answers like a small, correct server:
//   initialize → the client's protocolVersion (or set_protocol_version), capabilities
//                {tools:{listChanged:true}}, serverInfo {name:"fake-server",
//                version:"1.0.0"}; ping → {};
//   tools/list → set_tools() in one page, or set_tool_pages() with cursors "page-1", ...;
//   tools/call → the on_tool() handler for the name, else -32602 "Unknown tool: <name>";
//   anything else → -32601.
// on(method, ...) replaces any of these; hold(method) records such requests and leaves
// them unanswered until the test calls reply()/reply_error() (or never does).
// Everything the client sends is recorded, in order. Single-threaded, on the executor.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcprt/platform/executor.hpp"
#include "mcprt/result.hpp"
#include "mcprt/testing/memory_transport.hpp"

namespace mcprt::testing {

class FakeServer {
 public:
  // A value becomes the response's `result`; an Error::wire(...) becomes its `error`
  // (any other Error becomes -32603 with its message).
  using Handler = std::function<Result<json>(const json& params)>;
  using ToolHandler = std::function<Result<json>(const json& arguments)>;

  explicit FakeServer(Executor& executor);
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  // The client's end of the link, to hand to the code under test. Call once.
  std::unique_ptr<Transport> take_client_end();
  // The client's end while its new owner keeps it alive (for diagnostics, is_closed()).
  MemoryTransport& client_end() { return *client_raw_; }

  // --- scripting -----------------------------------------------------------------------
  void on(const std::string& method, Handler handler);
  void hold(const std::string& method);
  void set_protocol_version(std::string version);
  void set_initialize_result(json result);  // answered verbatim to initialize
  void set_instructions(std::string instructions);
  void set_tools(std::vector<json> tools);
  void set_tool_pages(std::vector<std::vector<json>> pages);
  void on_tool(const std::string& name, ToolHandler handler);

  // --- acting as the server ------------------------------------------------------------
  void reply(const json& id, json result);
  void reply_error(const json& id, int code, const std::string& message);
  void send(json message);  // raw: anything, valid JSON-RPC or not
  void notify(const std::string& method, json params = json::object());
  void request(json id, const std::string& method, json params = nullptr);
  void close();
  void close_with_error(Error error_for_client);  // e.g. ErrorCode::exited
  // The client's transport goes on with a new session of this server (an HTTP session
  // that expired and was initialized again): its on_renewed fires.
  void renew_session();

  // --- what the client did -------------------------------------------------------------
  const std::vector<json>& received() const { return received_; }
  std::vector<json> requests(const std::string& method) const;       // in order
  std::vector<json> notifications(const std::string& method) const;  // in order
  // The last request for `method`, or null.
  json last_request(const std::string& method) const;
  // The client's response to our request `id`, or null.
  json response_to(const json& id) const;
  // Set once the server end saw the link close (whoever closed it).
  const std::optional<Error>& close_error() const { return close_error_; }
  bool closed() const { return close_error_.has_value(); }

 private:
  void on_message(json message);
  Result<json> answer(const std::string& method, const json& params);
  Result<json> answer_initialize(const json& params) const;
  Result<json> answer_tools_list(const json& params) const;
  Result<json> answer_tools_call(const json& params) const;

  std::unique_ptr<MemoryTransport> server_end_;
  std::unique_ptr<MemoryTransport> client_end_;
  MemoryTransport* client_raw_ = nullptr;
  std::map<std::string, Handler> handlers_;
  std::set<std::string> held_;
  std::optional<std::string> protocol_version_;
  std::optional<json> initialize_result_;
  std::string instructions_;
  std::vector<std::vector<json>> tool_pages_{{}};
  std::map<std::string, ToolHandler> tools_;
  std::vector<json> received_;
  std::optional<Error> close_error_;
};

}  // namespace mcprt::testing
