#pragma once
// The host's input handlers (SPEC §15, §3.4): what a server may ask the user or the host
// for while it works. One interface serves both protocol eras:
//  - 2025-11-25: the server sends `elicitation/create`, `sampling/createMessage` or
//    `roots/list` as a JSON-RPC request and the session answers it;
//  - 2026-07-28: a tools/call, prompts/get or resources/read result says
//    `resultType: "input_required"` (MRTR) and the session fulfils each embedded request
//    through the same handlers before it retries the original request.
//
// A capability is declared to a server only when its handler is set (elicitation, sampling)
// or roots are declared (`roots` not nullopt). Handlers run on the session's executor and
// may answer later (a terminal form, a modal dialog, a model call): call `reply` exactly
// once, on the executor. A reply after the session closed is ignored.
//
//   InputHandlers in;
//   in.elicit = [](const Elicitation& e, ElicitReply reply) {
//     reply(ElicitAnswer::accept_with({{"name", "Ada"}}));   // or decline() / cancel()
//   };

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/result.hpp"

namespace mcprt {

// One elicitation request, as the host sees it.
struct Elicitation {
  enum class Mode { form, url };
  std::string server;   // the configured name of the server that asks (show it to the user)
  Mode mode = Mode::form;
  std::string message;  // what the server says it wants, untrusted text
  // form: the requested schema (a flat object schema of primitive properties; `default`
  // values are already applied to the answer when the host leaves a property out).
  json requested_schema = json::object();
  // url: the page the server wants the user to open (never opened without consent).
  std::string url;
  std::string elicitation_id;  // url mode, 2025-11-25 only; empty otherwise
  json params;                 // the request's params exactly as the server sent them
};

struct ElicitAnswer {
  enum class Action { accept, decline, cancel };
  Action action = Action::decline;
  json content = json::object();  // accept (form mode): the values, by property name

  static ElicitAnswer accept_with(json content) { return {Action::accept, std::move(content)}; }
  static ElicitAnswer accept() { return {Action::accept, json::object()}; }
  static ElicitAnswer decline() { return {Action::decline, json::object()}; }
  static ElicitAnswer cancel() { return {Action::cancel, json::object()}; }
};
using ElicitReply = std::function<void(ElicitAnswer)>;

// One sampling request: the server asks the host's model for a message.
struct SamplingRequest {
  std::string server;
  json params;  // CreateMessageRequest params as the server sent them (messages, maxTokens, ...)
};
// A CreateMessageResult ({role, content, model, stopReason?}) or an error (declined by the
// user, model failure: sent to the server as a JSON-RPC error / failed input response).
using SampleReply = std::function<void(Result<json>)>;

struct Root {
  std::string uri;   // file:// URI
  std::string name;  // display name (may be empty)
};

struct InputHandlers {
  std::function<void(const Elicitation&, ElicitReply)> elicit;
  // Elicitation modes offered when `elicit` is set (declared as elicitation.form / .url).
  bool elicit_form = true;
  bool elicit_url = true;
  std::function<void(const SamplingRequest&, SampleReply)> sample;
};

// Roots for directories (absolute paths; trailing separators ignored): file:// URI and the
// last path component as the name. Empty paths are skipped.
std::vector<Root> roots_from_directories(const std::vector<std::string>& directories);

// The answer of a roots/list (2025 request or 2026 input request): {"roots": [...]}.
json roots_list_result(const std::vector<Root>& roots);

// The client capabilities object these handlers and roots declare:
//   {"roots": {"listChanged": false}?, "elicitation": {"form": {}, "url": {}}?, "sampling": {}?}
json declared_client_capabilities(const InputHandlers& handlers,
                                  const std::optional<std::vector<Root>>& roots);

// Applies the requested schema's `default` values to an accepted form answer: every
// property the answer leaves out (or sets to null) and whose schema has a `default` gets it.
// Only for a flat object schema; anything else is returned unchanged.
json apply_elicitation_defaults(const json& requested_schema, json content);

// Parses elicitation/create params into an Elicitation (mode defaults to form). An error
// names what is wrong (no message, url mode without a url, a form without a schema object).
Result<Elicitation> parse_elicitation(const std::string& server, const json& params);

// The ElicitResult for the wire: {"action": "...", "content": {...}?} (content only on accept
// in form mode).
json elicit_result_json(const ElicitAnswer& answer, Elicitation::Mode mode);

}  // namespace mcprt
