#include "mcprt/testing/fake_server.hpp"

#include <utility>

namespace mcprt::testing {
namespace {

const std::string kCursorPrefix = "page-";

json response_message(const json& id, Result<json> result) {
  if (result.ok()) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result).value()}};
  }
  const Error& e = result.error();
  json err = {{"code", e.is_wire() ? e.wire_code : rpc_code::kInternalError},
              {"message", e.message}};
  if (e.is_wire() && !e.data.is_null()) err["data"] = e.data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
}

}  // namespace

FakeServer::FakeServer(Executor& executor) {
  auto pair = make_memory_transport_pair(executor);
  server_end_ = std::move(pair.server);
  client_end_ = std::move(pair.client);
  client_raw_ = client_end_.get();
  TransportHandlers h;
  h.on_message = [this](json message) { on_message(std::move(message)); };
  h.on_close = [this](const Error& error) {
    if (!close_error_) close_error_ = error;
  };
  server_end_->start(std::move(h));
}

// Destroying the server end closes the link; its handlers (which point at us) never run
// again.
FakeServer::~FakeServer() = default;

std::unique_ptr<Transport> FakeServer::take_client_end() { return std::move(client_end_); }

void FakeServer::on(const std::string& method, Handler handler) {
  held_.erase(method);
  handlers_[method] = std::move(handler);
}

void FakeServer::hold(const std::string& method) { held_.insert(method); }

void FakeServer::set_protocol_version(std::string version) {
  protocol_version_ = std::move(version);
}

void FakeServer::set_initialize_result(json result) { initialize_result_ = std::move(result); }

void FakeServer::set_instructions(std::string instructions) {
  instructions_ = std::move(instructions);
}

void FakeServer::set_tools(std::vector<json> tools) { tool_pages_ = {std::move(tools)}; }

void FakeServer::set_tool_pages(std::vector<std::vector<json>> pages) {
  tool_pages_ = std::move(pages);
  if (tool_pages_.empty()) tool_pages_.emplace_back();
}

void FakeServer::on_tool(const std::string& name, ToolHandler handler) {
  tools_[name] = std::move(handler);
}

void FakeServer::reply(const json& id, json result) {
  send(response_message(id, std::move(result)));
}

void FakeServer::reply_error(const json& id, int code, const std::string& message) {
  send(response_message(id, Error::wire(code, message)));
}

void FakeServer::send(json message) { (void)server_end_->send(message); }

void FakeServer::notify(const std::string& method, json params) {
  json m = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  send(std::move(m));
}

void FakeServer::request(json id, const std::string& method, json params) {
  json m = {{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  send(std::move(m));
}

void FakeServer::close() { server_end_->close(); }

void FakeServer::renew_session() { server_end_->renew_peer_session(); }

void FakeServer::close_with_error(Error error_for_client) {
  server_end_->close_with_error(std::move(error_for_client));
}

std::vector<json> FakeServer::requests(const std::string& method) const {
  std::vector<json> out;
  for (const auto& m : received_) {
    if (m.is_object() && m.contains("id") && m.value("method", "") == method) out.push_back(m);
  }
  return out;
}

std::vector<json> FakeServer::notifications(const std::string& method) const {
  std::vector<json> out;
  for (const auto& m : received_) {
    if (m.is_object() && !m.contains("id") && m.value("method", "") == method) out.push_back(m);
  }
  return out;
}

json FakeServer::last_request(const std::string& method) const {
  auto all = requests(method);
  return all.empty() ? json(nullptr) : all.back();
}

json FakeServer::response_to(const json& id) const {
  for (const auto& m : received_) {
    if (m.is_object() && !m.contains("method") && m.contains("id") && m["id"] == id) return m;
  }
  return nullptr;
}

void FakeServer::on_message(json message) {
  received_.push_back(message);
  if (!message.is_object()) return;
  auto method = message.find("method");
  auto id = message.find("id");
  if (method == message.end() || !method->is_string() || id == message.end()) return;
  const std::string name = method->get<std::string>();
  if (held_.count(name)) return;
  const json params = message.value("params", json(nullptr));
  send(response_message(*id, answer(name, params)));
}

Result<json> FakeServer::answer(const std::string& method, const json& params) {
  if (auto it = handlers_.find(method); it != handlers_.end()) return it->second(params);
  if (method == "initialize") return answer_initialize(params);
  if (method == "ping") return json::object();
  if (method == "tools/list") return answer_tools_list(params);
  if (method == "tools/call") return answer_tools_call(params);
  return Error::wire(rpc_code::kMethodNotFound, "Method not found: " + method);
}

Result<json> FakeServer::answer_initialize(const json& params) const {
  if (initialize_result_) return *initialize_result_;
  std::string version = "2025-11-25";
  if (protocol_version_) {
    version = *protocol_version_;
  } else if (params.is_object() && params.contains("protocolVersion") &&
             params["protocolVersion"].is_string()) {
    version = params["protocolVersion"].get<std::string>();
  }
  json result = {{"protocolVersion", version},
                 {"capabilities", {{"tools", {{"listChanged", true}}}}},
                 {"serverInfo", {{"name", "fake-server"}, {"version", "1.0.0"}}}};
  if (!instructions_.empty()) result["instructions"] = instructions_;
  return result;
}

Result<json> FakeServer::answer_tools_list(const json& params) const {
  std::size_t page = 0;
  if (params.is_object() && params.contains("cursor")) {
    const json& cursor = params["cursor"];
    const std::string c = cursor.is_string() ? cursor.get<std::string>() : std::string();
    bool ok = c.rfind(kCursorPrefix, 0) == 0 && c.size() > kCursorPrefix.size();
    if (ok) {
      for (std::size_t i = kCursorPrefix.size(); i < c.size(); ++i) {
        if (c[i] < '0' || c[i] > '9') ok = false;
      }
    }
    if (ok) page = std::stoul(c.substr(kCursorPrefix.size()));
    if (!ok || page == 0 || page >= tool_pages_.size()) {
      return Error::wire(rpc_code::kInvalidParams, "Invalid cursor");
    }
  }
  json result = {{"tools", tool_pages_[page]}};
  if (page + 1 < tool_pages_.size())
    result["nextCursor"] = kCursorPrefix + std::to_string(page + 1);
  return result;
}

Result<json> FakeServer::answer_tools_call(const json& params) const {
  const std::string name =
      params.is_object() && params.contains("name") && params["name"].is_string()
          ? params["name"].get<std::string>()
          : std::string();
  auto it = tools_.find(name);
  if (it == tools_.end()) return Error::wire(rpc_code::kInvalidParams, "Unknown tool: " + name);
  const json arguments =
      params.is_object() && params.contains("arguments") ? params["arguments"] : json::object();
  return it->second(arguments);
}

}  // namespace mcprt::testing
