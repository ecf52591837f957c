// The mcprt client as driven by the official conformance suite
// (`@modelcontextprotocol/conformance client --command "<this> " --scenario <name>`):
// the server URL is the last argument, the scenario is MCP_CONFORMANCE_SCENARIO.
//
//   initialize   connect (initialize → initialized), list tools, close
//   tools_call   connect, list tools, call add_numbers {a, b}, close
//   sse-retry    connect, list tools, call test_reconnection — the server drops the
//                call's SSE stream; the transport resumes it with Last-Event-ID after
//                the stream's retry: delay and the result arrives on the GET stream
//   (other)      connect, list tools, call every tool with {}
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

// The scenario's context: a pre-registered client or the client_credentials settings.
OAuthConfig oauth_from_context(const std::string& scenario) {
  OAuthConfig o;
  if (scenario.rfind("auth/client-credentials", 0) == 0) {
    o.grant = OAuthConfig::Grant::client_credentials;
  }
  const char* text = std::getenv("MCP_CONFORMANCE_CONTEXT");
  if (!text) return o;
  json context = json::parse(text, nullptr, false);
  if (!context.is_object()) return o;
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <server-url>\n", argv[0]);
    return 2;
  }
  const std::string url = argv[argc - 1];
  const char* scenario_env = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = scenario_env ? scenario_env : "";

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
  oauth.set_server({"conformance", url, AuthType::oauth, oauth_from_context(scenario)});

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
  std::printf("connected: %s (%s)\n", session->server().server_info.dump().c_str(),
              session->server().protocol_version.c_str());

  std::vector<json> tools;
  Step listed;
  session->list_tools([&](Result<std::vector<json>> r) {
    listed = {true, r.ok()};
    if (r.ok()) tools = std::move(r.value());
    else std::fprintf(stderr, "tools/list failed: %s\n", r.error().message.c_str());
  });
  all_ok = wait(executor, listed) && all_ok;
  std::printf("tools: %zu\n", tools.size());

  if (scenario != "initialize") {
    for (const auto& tool : tools) {
      std::string name = tool.value("name", "");
      Step called;
      CallOptions call;
      call.timeout = kStepLimit;
      session->call_tool(name, arguments_for(tool), call, [&](Result<json> r) {
        called = {true, r.ok()};
        if (r.ok()) std::printf("%s → %s\n", name.c_str(), r->dump().c_str());
        else std::fprintf(stderr, "%s failed: %s\n", name.c_str(), r.error().message.c_str());
      });
      all_ok = wait(executor, called) && all_ok;
    }
  }

  session->close();
  executor.run_until([&] { return ended; }, Millis(5000));
  session.reset();
  std::fflush(stdout);
  return all_ok ? 0 : 1;
}
