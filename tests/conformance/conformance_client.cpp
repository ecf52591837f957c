// The mcprt client as driven by the official conformance suite
// (`@modelcontextprotocol/conformance client --command "<this> " --scenario <name>`):
// the server URL is the last argument, the scenario is MCP_CONFORMANCE_SCENARIO, the wire
// is MCP_CONFORMANCE_PROTOCOL_VERSION (0.2.x; unset: 2025-11-25, the suite's default):
// 2026-07-28 pins the stateless wire (ClientOptions::protocol, SPEC §14), a 2025-era version
// the initialize handshake offering that version first. The session is an HTTP one
// (ClientOptions::http: the 2026-07-28 headers), and its elicitation handler accepts every
// form with no values of its own, so the core's schema defaults make the answer (SPEC §15;
// 2025: elicitation/create requests, 2026: MRTR input requests).
//
//   initialize   connect, list tools, close
//   tools_call   connect, list tools, call add_numbers {a, b}, close
//   sse-retry    connect, list tools, call test_reconnection — the server drops the
//                call's SSE stream; the transport resumes it with Last-Event-ID after
//                the stream's retry: delay and the result arrives on the GET stream
//   http-custom-headers  the calls MCP_CONFORMANCE_CONTEXT's toolCalls name, with their
//                arguments (the suite checks the Mcp-Param-* headers mirrored from them)
//   http-standard-headers  every tool called, then resources/list and resources/read of
//                each resource, prompts/list and prompts/get of each prompt (Mcp-Name)
//   json-schema-2020-12-preservation  json_schema_echo {schema: <the inputSchema listed
//                for json_schema_2020_12_tool>}: the schema as the session kept it
//   json-schema-ref-no-deref  list only (the scenario's server has no tools/call)
//   sep-2322-client-request-state  every tool called at once (MRTR rounds of parallel
//                calls must not share input responses or request state)
//   (other)      connect, list tools, call every tool with {} (add_numbers: {a: 5, b: 3})
//
// Every tools/call passes the listed definition (CallOptions::tool_definition).
//
// OAuth (auth/* scenarios): the transports ask the core OAuthClient (mcprt/oauth.hpp) for
// tokens, with a RedirectFollowingAuthorizer (it GETs the authorization URL and takes the
// redirect, as the suite expects of a client), NativeCrypto, and a MemoryCredentialStore
// (each run starts signed out). MCP_CONFORMANCE_CONTEXT (JSON) gives a pre-registered
// client (client_id, client_secret) and, for auth/client-credentials-*, the
// client_credentials grant's secret or private key (private_key_pem, signing_algorithm).
// The client ID metadata document URL is the one the suite's CIMD scenario expects.
//
// Exit status: 0 when every step succeeded, 1 otherwise (the suite judges the wire).
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "mcprt/client.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/memory_store.hpp"
#include "mcprt/native/crypto.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/http_client.hpp"
#include "mcprt/native/logger.hpp"
#include "mcprt/oauth.hpp"
#include "mcprt/version.hpp"

namespace {

using namespace mcprt;

constexpr Millis kStepLimit{30000};

struct Step {
  bool done = false;
  bool ok = false;
};

bool wait(native::NativeExecutor& ex, Step& step) {
  ex.run_until([&] { return step.done; }, kStepLimit);
  return step.done && step.ok;
}

constexpr const char* kClientMetadataUrl = "https://conformance-test.local/client-metadata.json";

// MCP_CONFORMANCE_CONTEXT as an object (empty when unset or not an object).
json context_from_env() {
  const char* text = std::getenv("MCP_CONFORMANCE_CONTEXT");
  if (!text) return json::object();
  json context = json::parse(text, nullptr, false);
  return context.is_object() ? context : json::object();
}

// The scenario's context: a pre-registered client or the client_credentials settings.
OAuthConfig oauth_from_context(const std::string& scenario, const json& context) {
  OAuthConfig o;
  if (scenario.rfind("auth/client-credentials", 0) == 0) {
    o.grant = OAuthConfig::Grant::client_credentials;
  }
  if (context.empty()) return o;
  o.client_id = context.value("client_id", "");
  o.client_secret = context.value("client_secret", "");
  o.private_key = context.value("private_key_pem", "");
  o.signing_alg = context.value("signing_algorithm", "");
  if (!o.private_key.empty()) o.client_secret.clear();  // the assertion authenticates
  return o;
}

json arguments_for(const json& tool) {
  if (tool.value("name", "") == "add_numbers") return {{"a", 5}, {"b", 3}};
  return json::object();
}

struct ToolCall {
  std::string name;
  json arguments;
};

// The tools/call requests the scenario expects, from the listed tools (and the context).
// An error says why the scenario cannot be played.
Result<std::vector<ToolCall>> planned_calls(const std::string& scenario, const std::vector<json>& tools,
                                            const json& context) {
  std::vector<ToolCall> calls;
  if (scenario == "initialize" || scenario == "json-schema-ref-no-deref") return calls;
  if (scenario == "http-custom-headers") {
    const json* wanted = context.contains("toolCalls") ? &context["toolCalls"] : nullptr;
    if (!wanted || !wanted->is_array() || wanted->empty()) {
      return Error::make(ErrorCode::invalid_argument, "MCP_CONFORMANCE_CONTEXT names no toolCalls");
    }
    for (const auto& call : *wanted) {
      if (!call.is_object() || !call.contains("name") || !call["name"].is_string()) {
        return Error::make(ErrorCode::invalid_argument, "a toolCalls entry has no name: " + call.dump());
      }
      calls.push_back({call["name"].get<std::string>(), call.value("arguments", json::object())});
    }
    return calls;
  }
  if (scenario == "json-schema-2020-12-preservation") {
    for (const auto& tool : tools) {
      if (tool.value("name", "") == "json_schema_2020_12_tool" && tool.contains("inputSchema")) {
        calls.push_back({"json_schema_echo", {{"schema", tool["inputSchema"]}}});
        return calls;
      }
    }
    return Error::make(ErrorCode::protocol, "tools/list has no json_schema_2020_12_tool with an inputSchema");
  }
  for (const auto& tool : tools) calls.push_back({tool.value("name", ""), arguments_for(tool)});
  return calls;
}

// MCP_CONFORMANCE_PROTOCOL_VERSION → ClientOptions::protocol, or an error for anything that
// is not a dated version.
Result<std::string> protocol_from_env() {
  const char* text = std::getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
  std::string version = text && *text ? text : "2025-11-25";
  if (!std::regex_match(version, std::regex("[0-9]{4}-[0-9]{2}-[0-9]{2}"))) {
    return Error::make(ErrorCode::invalid_argument,
                       "MCP_CONFORMANCE_PROTOCOL_VERSION must be a dated protocol version (got \"" + version + "\")");
  }
  // "2026-07-28" pins the stateless wire; a 2025-era version is the initialize handshake
  // offering that version first (both are what ClientOptions::protocol takes as is).
  return version;
}

// One request through ClientSession::request, waited for; its result (null on failure).
json request_and_wait(native::NativeExecutor& ex, ClientSession& session, const std::string& method,
                      json params, bool& ok) {
  Step step;
  json result;
  RequestOptions options;
  options.timeout = kStepLimit;
  auto sent = session.request(method, std::move(params), options, [&](Result<json> r) {
    step = {true, r.ok()};
    if (r.ok()) result = std::move(r.value());
    else std::fprintf(stderr, "%s failed: %s\n", method.c_str(), r.error().message.c_str());
  });
  if (!sent.ok()) {
    std::fprintf(stderr, "%s failed: %s\n", method.c_str(), sent.error().message.c_str());
    ok = false;
    return nullptr;
  }
  ok = wait(ex, step);
  return result;
}

// `list_method`, then `get_method` {key: <each entry's key>} for every entry of the list.
bool list_and_get(native::NativeExecutor& ex, ClientSession& session, const std::string& list_method,
                  const std::string& field, const std::string& key, const std::string& get_method) {
  bool ok = false;
  json listed = request_and_wait(ex, session, list_method, json::object(), ok);
  if (!ok) return false;
  if (!listed.contains(field) || !listed[field].is_array()) {
    std::fprintf(stderr, "%s: no %s array\n", list_method.c_str(), field.c_str());
    return false;
  }
  bool all_ok = true;
  for (const auto& entry : listed[field]) {
    if (!entry.is_object() || !entry.contains(key) || !entry[key].is_string()) continue;
    bool got = false;
    json result = request_and_wait(ex, session, get_method, {{key, entry[key]}}, got);
    std::printf("%s %s → %s\n", get_method.c_str(), entry[key].get<std::string>().c_str(),
                got ? result.dump().c_str() : "failed");
    all_ok = got && all_ok;
  }
  return all_ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <server-url>\n", argv[0]);
    return 2;
  }
  const std::string url = argv[argc - 1];
  // Line by line: the suite kills a client that hangs, and what it printed must survive.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const char* scenario_env = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = scenario_env ? scenario_env : "";
  const json context = context_from_env();
  auto protocol = protocol_from_env();
  if (!protocol.ok()) {
    std::fprintf(stderr, "mcprt-conformance: %s\n", protocol.error().message.c_str());
    return 2;
  }

  native::NativeExecutor executor;
  native::SpdlogLogger logger;
  native::NativeHttpClient http(executor);
  native::NativeCrypto crypto(executor);
  MemoryCredentialStore credentials(executor);
  RedirectFollowingAuthorizer authorizer(executor, http, "http://localhost:3000/callback");
  OAuthClientOptions oauth_options;
  oauth_options.executor = &executor;
  oauth_options.http = &http;
  oauth_options.crypto = &crypto;
  oauth_options.store = &credentials;
  oauth_options.authorizer = &authorizer;
  oauth_options.logger = &logger;
  oauth_options.client_metadata_url = kClientMetadataUrl;
  oauth_options.client_name = "mcprt-conformance-client";
  OAuthClient oauth(oauth_options);
  oauth.set_server({"conformance", url, AuthType::oauth, oauth_from_context(scenario, context)});

  HttpTransportOptions options;
  options.url = url;
  options.server_name = "conformance";
  options.logger = &logger;
  options.auth_storage = &oauth;
  // The sse-retry scenario server takes ANY GET as the resume of the tools/call stream it
  // cut; a standalone GET stream opened concurrently would race with the real resume.
  // The scenario tests POST-stream resumption, so run it with POST streams only.
  options.open_get_stream = scenario != "sse-retry";
  auto transport = make_http_transport(executor, http, options);
  if (!transport.ok()) {
    std::fprintf(stderr, "mcprt-conformance: %s\n", transport.error().message.c_str());
    return 1;
  }
  ClientOptions client;
  client.client_info = {"mcprt-conformance-client", MCPRT_VERSION};
  client.server_name = "conformance";
  client.logger = &logger;
  client.protocol = protocol.value();
  client.http = true;
  // Accept every form, leaving its properties out: the core applies the schema's defaults.
  client.input.elicit = [](const Elicitation& e, ElicitReply reply) {
    std::printf("elicitation (%s): %s → accept\n", e.mode == Elicitation::Mode::url ? "url" : "form",
                e.message.c_str());
    reply(ElicitAnswer::accept());
  };
  bool ended = false;  // the transport finished closing (DELETE sent)
  client.on_close = [&](const Error&) { ended = true; };
  auto session = ClientSession::create(executor, std::move(transport.value()), client);

  bool all_ok = true;
  Step connected;
  session->connect([&](Status s) {
    connected = {true, s.ok()};
    if (!s.ok()) std::fprintf(stderr, "connect failed: %s\n", s.error().message.c_str());
  });
  if (!wait(executor, connected)) return 1;
  std::printf("connected: %s (%s, %s)\n", session->server().server_info.dump().c_str(),
              session->server().protocol_version.c_str(), session->server().era_source.c_str());

  std::vector<json> tools;
  Step listed;
  session->list_tools([&](Result<std::vector<json>> r) {
    listed = {true, r.ok()};
    if (r.ok()) tools = std::move(r.value());
    else std::fprintf(stderr, "tools/list failed: %s\n", r.error().message.c_str());
  });
  all_ok = wait(executor, listed) && all_ok;
  std::printf("tools: %zu\n", tools.size());

  auto calls = planned_calls(scenario, tools, context);
  if (!calls.ok()) {
    std::fprintf(stderr, "mcprt-conformance: %s: %s\n", scenario.c_str(), calls.error().message.c_str());
    all_ok = false;
    calls = std::vector<ToolCall>{};
  }
  // Parallel calls: each has its own MRTR rounds (sep-2322). Otherwise one after another.
  const bool parallel = scenario == "sep-2322-client-request-state";
  std::vector<Step> called(calls->size());
  for (std::size_t i = 0; i < calls->size(); ++i) {
    const ToolCall& c = (*calls)[i];
    CallOptions call;
    call.timeout = kStepLimit;
    for (const auto& tool : tools) {
      if (tool.value("name", "") == c.name) call.tool_definition = tool;
    }
    session->call_tool(c.name, c.arguments, call, [&, i, name = c.name](Result<json> r) {
      called[i] = {true, r.ok()};
      if (r.ok()) std::printf("%s → %s\n", name.c_str(), r->dump().c_str());
      else std::fprintf(stderr, "%s failed: %s\n", name.c_str(), r.error().message.c_str());
    });
    if (!parallel) all_ok = wait(executor, called[i]) && all_ok;
  }
  if (parallel) {
    executor.run_until([&] {
      for (const auto& step : called) {
        if (!step.done) return false;
      }
      return true;
    }, kStepLimit);
    for (const auto& step : called) all_ok = step.done && step.ok && all_ok;
  }

  if (scenario == "http-standard-headers") {
    // resources/read and prompts/get carry Mcp-Name (the URI verbatim, the prompt's name).
    all_ok = list_and_get(executor, *session, "resources/list", "resources", "uri", "resources/read") && all_ok;
    all_ok = list_and_get(executor, *session, "prompts/list", "prompts", "name", "prompts/get") && all_ok;
  }

  session->close();
  executor.run_until([&] { return ended; }, Millis(5000));
  session.reset();
  std::fflush(stdout);
  return all_ok ? 0 : 1;
}
