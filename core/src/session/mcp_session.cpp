#include <utility>

#include "mcprt/session.hpp"

namespace mcprt {
namespace {

void post_error_result(Executor& executor, Error error, ToolDone done) {
  executor.post([error = std::move(error), done = std::move(done)] {
    done(mcp_error_result(error));
  });
}

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

// --- ProxyMcpTool -------------------------------------------------------------------------

ProxyMcpTool::ProxyMcpTool(Executor& executor, McpToolInfo info, std::weak_ptr<McpManager> parent)
    : executor_(executor), info_(std::move(info)), parent_(std::move(parent)) {}

void ProxyMcpTool::call(json arguments, ToolCallOptions options, ToolDone done) {
  auto parent = parent_.lock();
  if (!parent) {
    return post_error_result(
        executor_,
        Error::make(ErrorCode::not_connected,
                    "Server " + in_quotes(info_.server) +
                        ": the parent session has shut down its MCP connections"),
        std::move(done));
  }
  // Unknown, or a row left by disconnect_server (disconnected without an error).
  const auto state = parent->server_state(info_.server);
  if (!state || (state->phase == ServerPhase::disconnected && !state->last_error)) {
    return post_error_result(
        executor_,
        Error::make(ErrorCode::not_connected, "Server " + in_quotes(info_.server) +
                                                  " was disconnected by the parent session"),
        std::move(done));
  }
  // The parent's current tool object for the same (server, raw tool): it holds the live
  // connection, or waits for it when the parent is reconnecting.
  for (const auto& tool : parent->tools()) {
    if (tool && tool->info().server == info_.server && tool->info().raw_name == info_.raw_name) {
      return tool->call(std::move(arguments), std::move(options), std::move(done));
    }
  }
  post_error_result(executor_,
                    Error::make(ErrorCode::not_connected,
                                "Server " + in_quotes(info_.server) + " no longer offers tool " +
                                    in_quotes(info_.raw_name) + " in the parent session"),
                    std::move(done));
}

// --- McpSession ---------------------------------------------------------------------------

McpSession::McpSession(ToolRegistry& registry, Logger* logger)
    : registry_(registry), logger_(logger) {}

McpSession::~McpSession() {
  *alive_ = false;
  unbind();
}

void McpSession::bind(std::shared_ptr<McpManager> manager) {
  unbind();
  manager_ = std::move(manager);
  if (!manager_) {
    registry_.clear_mcp_tools();
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  listener_ = manager_->on_tools_changed([this, alive] {
    if (auto a = alive.lock(); a && *a) refresh();
  });
  refresh();
}

void McpSession::unbind() {
  std::shared_ptr<McpManager> m = child_ ? parent_manager_.lock() : manager_;
  if (m && listener_ != 0) m->remove_listener(listener_);
  listener_ = 0;
  manager_.reset();
  parent_manager_.reset();
}

void McpSession::refresh() {
  if (!child_) {
    if (manager_) registry_.refresh_mcp_tools(manager_->tools());
    return;
  }
  auto parent = parent_manager_.lock();
  std::vector<ToolPtr> proxies;
  if (parent) {
    for (const auto& tool : parent->tools()) {
      if (!tool) continue;
      proxies.push_back(
          std::make_shared<ProxyMcpTool>(registry_.executor(), tool->info(), parent_manager_));
    }
  }
  registry_.refresh_mcp_tools(proxies);
}

void McpSession::wait_for_server(const std::string& server, AbortSignal signal,
                                 std::function<void(Status)> done) {
  std::shared_ptr<McpManager> m = child_ ? parent_manager_.lock() : manager_;
  if (!m) {
    registry_.executor().post([server, done = std::move(done)] {
      done(Error::make(ErrorCode::not_connected,
                       "Server " + in_quotes(server) + ": no MCP manager is bound to the session"));
    });
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  std::weak_ptr<McpManager> weak_m = m;
  m->wait_for_connection(server, std::move(signal),
                         [this, alive, weak_m, server, done = std::move(done)](Status s) {
                           auto a = alive.lock();
                           auto mm = weak_m.lock();
                           if (s.ok() && a && *a && mm &&
                               mm->connection_status(server) == ConnectionStatus::connected) {
                             refresh();
                           }
                           done(std::move(s));
                         });
}

std::unique_ptr<McpSession> McpSession::make_child(ToolRegistry& child_registry) const {
  auto child = std::make_unique<McpSession>(child_registry, logger_);
  child->child_ = true;
  // A grandchild proxies straight to the one manager that owns the connections.
  child->parent_manager_ = child_ ? parent_manager_ : std::weak_ptr<McpManager>(manager_);
  if (auto parent = child->parent_manager_.lock()) {
    std::weak_ptr<bool> alive = child->alive_;
    McpSession* raw = child.get();
    child->listener_ = parent->on_tools_changed([raw, alive] {
      if (auto a = alive.lock(); a && *a) raw->refresh();
    });
  }
  child->refresh();
  return child;
}

}  // namespace mcprt
