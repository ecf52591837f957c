// McpTool / DeferredMcpTool (SPEC §6): calls through the manager's McpToolHost.
//
// Completion rules (ToolDone): every outcome is a ToolResult (failures as is_error
// "MCP error: …"), except the caller's abort, which stays ErrorCode::aborted. The tool
// listens to the caller's signal itself, so an abort completes the call even if the host
// is slow to notice; whichever comes second is ignored.
//
// Output schemas (SPEC §15): a tool whose definition has an object `outputSchema` must
// answer (when not isError) with structuredContent that matches it; a result without it,
// or one that does not match, becomes an isError result naming the tool and the failing
// path, with the server's content and structuredContent kept for the host to look at. A
// schema the validator cannot use (a $ref that does not resolve, a keyword of the wrong
// type, an unsupported pattern) does not fail the calls: they pass unchecked, and
// check_json_schema (mcprt/json_schema.hpp) is what the tool's lister can warn with.
//
// Output caps (SPEC §16): the text is cut to the tool's cap (tool_result_cap: the
// configured one, raised by the definition's _meta); over it, the host's ResultSpill is
// handed the full text first, so the marker can name where it went.

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "mcprt/json_schema.hpp"
#include "mcprt/tools.hpp"
#include "tools/tool_set.hpp"

namespace mcprt {

namespace {

std::string quoted_server(const std::string& server) { return "Server \"" + server + "\""; }

Error aborted_error(const std::string& server, const std::string& raw_tool,
                    const AbortSignal& signal) {
  std::string msg = quoted_server(server) + ": call of tool \"" + raw_tool + "\" aborted";
  if (!signal.reason().empty()) msg += " (" + signal.reason() + ")";
  return Error::make(ErrorCode::aborted, std::move(msg));
}

ToolResult not_connected_result(const std::string& server) {
  return mcp_error_result(
      Error::make(ErrorCode::not_connected, quoted_server(server) + " is not connected"));
}

// Exactly-once completion of one call, shared by the host's callback and the abort
// listener. `starting` is true while the host call is on the stack: a host that answers
// synchronously is still completed later, through the executor.
struct CallOnce {
  CallOnce(Executor& ex, ToolDone d, AbortSignal s)
      : executor(ex), done(std::move(d)), signal(std::move(s)) {}

  Executor& executor;
  ToolDone done;
  AbortSignal signal;
  std::uint64_t listener = 0;
  bool finished = false;
  bool starting = true;

  void finish(Result<ToolResult> result, bool post) {
    if (finished) return;
    finished = true;
    signal.remove_listener(listener);
    listener = 0;
    ToolDone d = std::move(done);
    if (!d) return;
    if (post || starting) {
      executor.post([d = std::move(d), result = std::move(result)]() mutable {
        d(std::move(result));
      });
    } else {
      d(std::move(result));
    }
  }

  // The listener holds the state weakly: the host's pending callback owns it, so a host
  // that drops the callback cannot leak it through the signal.
  void listen(const std::string& server, const std::string& raw_tool,
              const std::shared_ptr<CallOnce>& self) {
    listener = signal.add_listener(
        [weak = std::weak_ptr<CallOnce>(self), server, raw_tool] {
          if (auto s = weak.lock()) {
            // Inside abort(): never complete synchronously there.
            s->finish(aborted_error(server, raw_tool, s->signal), /*post=*/true);
          }
        });
  }
};

// The rendered result, or the isError result that replaces it when its structuredContent
// does not match the definition's outputSchema.
ToolResult check_output_schema(ToolResult result, const std::string& server,
                               const std::string& raw_tool, const SharedJson& definition) {
  if (result.is_error) return result;
  auto schema = definition.find("outputSchema");
  if (schema == definition.end() || !schema->is_object()) return result;
  std::string why;
  if (result.structured_content.is_null()) {
    why = "returned no structuredContent, but it declares an outputSchema";
  } else {
    std::optional<SchemaError> e = validate_json_schema(*schema, result.structured_content);
    if (!e || e->kind == SchemaErrorKind::bad_schema) return result;
    why = e->kind == SchemaErrorKind::limit
              ? "returned structuredContent that could not be checked against its outputSchema: "
              : "returned structuredContent that does not match its outputSchema: ";
    why += to_string(*e);
  }
  ToolResult failed = mcp_error_result(Error::make(
      ErrorCode::protocol, quoted_server(server) + ": tool \"" + raw_tool + "\" " + why));
  failed.content = std::move(result.content);
  failed.structured_content = std::move(result.structured_content);
  // A result over its cap was already kept whole: the host can still find it.
  failed.full_bytes = result.full_bytes;
  failed.full_text_path = std::move(result.full_text_path);
  return failed;
}

// The result's rendering under the tool's cap, the full text offered to `spill` (may be
// null) when it is over.
ToolResult render_capped(const json& call_result, std::size_t max_result_bytes,
                         const std::shared_ptr<const ResultSpill>& spill, const std::string& server,
                         const std::string& raw_tool, const std::string& name) {
  if (!spill || !*spill) return render_tool_result(call_result, max_result_bytes);
  return render_tool_result(call_result, max_result_bytes,
                            [&](std::string_view text) -> std::optional<std::string> {
                              return (*spill)(ResultSpillRequest{server, raw_tool, name, text});
                            });
}

void post_result(Executor& executor, ToolDone done, Result<ToolResult> result) {
  executor.post([done = std::move(done), result = std::move(result)]() mutable {
    if (done) done(std::move(result));
  });
}

// The live call; shared by McpTool::call and the second stage of DeferredMcpTool::call.
// Captures values only, so the tool object may be destroyed while the call runs.
void start_call(Executor& executor, const std::string& server, const std::string& raw_tool,
                const std::string& name, const SharedJson& definition,
                const std::weak_ptr<McpToolHost>& weak_host, std::size_t max_result_bytes,
                const std::shared_ptr<const ResultSpill>& spill, json arguments,
                ToolCallOptions options, ToolDone done) {
  if (options.signal.aborted()) {
    post_result(executor, std::move(done), aborted_error(server, raw_tool, options.signal));
    return;
  }
  auto host = weak_host.lock();
  if (!host) {
    post_result(executor, std::move(done), not_connected_result(server));
    return;
  }
  auto once = std::make_shared<CallOnce>(executor, std::move(done), options.signal);
  once->listen(server, raw_tool, once);

  CallOptions call;
  call.signal = options.signal;
  call.on_progress = std::move(options.on_progress);
  host->call_tool(
      server, raw_tool, std::move(arguments), std::move(call),
      [once, server, raw_tool, name, definition, max_result_bytes, spill](Result<json> r) {
        if (once->finished) return;
        if (once->signal.aborted()) {
          once->finish(aborted_error(server, raw_tool, once->signal), false);
        } else if (!r) {
          once->finish(mcp_error_result(r.error()), false);
        } else {
          once->finish(check_output_schema(
                           render_capped(*r, max_result_bytes, spill, server, raw_tool, name),
                           server, raw_tool, definition),
                       false);
        }
      });
  once->starting = false;
}

}  // namespace

McpTool::McpTool(Executor& executor, McpToolInfo info, std::weak_ptr<McpToolHost> host,
                 std::size_t max_result_bytes, ResultSpill spill)
    : executor_(executor),
      info_(std::move(info)),
      host_(std::move(host)),
      // (_meta only: a schema kept raw stays unparsed)
      max_result_bytes_(tool_result_cap(detail::SharedJsonAccess::unparsed(info_.definition),
                                        max_result_bytes)),
      spill_(spill ? std::make_shared<const ResultSpill>(std::move(spill)) : nullptr) {}

void McpTool::call(json arguments, ToolCallOptions options, ToolDone done) {
  call_now(std::move(arguments), std::move(options), std::move(done));
}

void McpTool::call_now(json arguments, ToolCallOptions options, ToolDone done) {
  start_call(executor_, info_.server, info_.raw_name, info_.name, info_.definition, host_,
             max_result_bytes_, spill_, std::move(arguments), std::move(options), std::move(done));
}

void DeferredMcpTool::call(json arguments, ToolCallOptions options, ToolDone done) {
  const std::string& server = info_.server;
  const std::string& raw_tool = info_.raw_name;
  if (options.signal.aborted()) {
    post_result(executor_, std::move(done), aborted_error(server, raw_tool, options.signal));
    return;
  }
  auto host = host_.lock();
  if (!host) {
    post_result(executor_, std::move(done), not_connected_result(server));
    return;
  }
  AbortSignal signal = options.signal;
  auto once = std::make_shared<CallOnce>(executor_, std::move(done), signal);
  once->listen(server, raw_tool, once);

  // Stage 2 needs the call's inputs after the wait; they travel in the continuation.
  host->wait_for_connection(
      server, signal,
      [once, &executor = executor_, server, raw_tool, name = info_.name,
       definition = info_.definition, weak_host = host_, max = max_result_bytes_, spill = spill_,
       arguments = std::move(arguments), options = std::move(options)](Status s) mutable {
        if (once->finished) return;
        if (once->signal.aborted()) {
          once->finish(aborted_error(server, raw_tool, once->signal), false);
          return;
        }
        if (!s) {
          Error e = s.error();
          // The manager's messages usually name the server already; make sure they do.
          if (e.message.find(quoted_server(server)) == std::string::npos) {
            e.message = quoted_server(server) + ": " + e.message;
          }
          once->finish(mcp_error_result(e), false);
          return;
        }
        // Hand over to the live call: its own once-state takes the caller's callback.
        once->finished = true;
        once->signal.remove_listener(once->listener);
        once->listener = 0;
        ToolDone d = std::move(once->done);
        if (once->starting) {
          // A host that reported "connected" synchronously: still start the call later,
          // so the caller's callback can never run inside call().
          executor.post([&executor, server, raw_tool, name, definition, weak_host, max, spill,
                         arguments = std::move(arguments), options = std::move(options),
                         d = std::move(d)]() mutable {
            start_call(executor, server, raw_tool, name, definition, weak_host, max, spill,
                       std::move(arguments), std::move(options), std::move(d));
          });
          return;
        }
        start_call(executor, server, raw_tool, name, definition, weak_host, max, spill,
                   std::move(arguments), std::move(options), std::move(d));
      });
  once->starting = false;
}

}  // namespace mcprt
