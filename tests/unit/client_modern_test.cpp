// ClientSession on the 2026-07-28 wire (SPEC §14) and the host input handlers (SPEC §15):
// the era probe and its fallback, the stored verdict, `_meta` on every request, the
// -32022 and -32020 retries, resultType, MRTR rounds, the listen stream, 2025 server
// requests for elicitation/sampling/roots. ManualExecutor + FakeServer.

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcprt/client.hpp"
#include "mcprt/testing/capturing_logger.hpp"
#include "mcprt/testing/fake_server.hpp"
#include "mcprt/testing/manual_executor.hpp"

namespace mcprt {
namespace client_modern_test {  // this file's own names in a unity batch
namespace {

using testing::CapturingLogger;
using testing::FakeServer;
using testing::ManualExecutor;

constexpr const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kCapsKey = "io.modelcontextprotocol/clientCapabilities";
constexpr const char* kInfoKey = "io.modelcontextprotocol/clientInfo";
constexpr const char* kSubscriptionKey = "io.modelcontextprotocol/subscriptionId";

// Records what the session hands the transport beside each message (SendOptions).
class RecordingTransport final : public Transport {
 public:
  RecordingTransport(std::unique_ptr<Transport> inner,
                     std::vector<std::pair<json, SendOptions>>* log)
      : inner_(std::move(inner)), log_(log) {}
  void start(TransportHandlers handlers) override { inner_->start(std::move(handlers)); }
  Status send(const json& message) override { return send_with(message, SendOptions{}); }
  Status send_with(const json& message, const SendOptions& options) override {
    log_->push_back({message, options});
    return inner_->send(message);
  }
  void close() override { inner_->close(); }

 private:
  std::unique_ptr<Transport> inner_;
  std::vector<std::pair<json, SendOptions>>* log_;
};

json discover_result(json capabilities = {{"tools", {{"listChanged", true}}}}) {
  return {{"resultType", "complete"},
          {"supportedVersions", {"2026-07-28"}},
          {"capabilities", std::move(capabilities)},
          {"_meta", {{"io.modelcontextprotocol/serverInfo", {{"name", "modern"}, {"version", "2"}}}}},
          {"ttlMs", 0},
          {"cacheScope", "public"}};
}

json ask_name_schema() {
  return {{"type", "object"},
          {"properties",
           {{"name", {{"type", "string"}, {"default", "World"}}},
            {"excited", {{"type", "boolean"}, {"default", false}}}}},
          {"required", {"name"}}};
}

json input_required(const std::string& state) {
  return {{"resultType", "input_required"},
          {"inputRequests",
           {{"who",
             {{"method", "elicitation/create"},
              {"params", {{"message", "What is your name?"}, {"requestedSchema", ask_name_schema()}}}}}}},
          {"requestState", state}};
}

json text_result(const std::string& text) {
  return {{"resultType", "complete"}, {"content", {{{"type", "text"}, {"text", text}}}}};
}

class ClientModernTest : public ::testing::Test {
 protected:
  ClientOptions make_options() {
    ClientOptions o;
    o.server_name = "srv";
    o.logger = &log;
    o.connect_timeout = Millis(30000);
    o.request_timeout = Millis(30000);
    o.roots = roots_from_directories({"/work"});
    o.on_notification = [this](const std::string& method, const json& params) {
      notes.push_back({method, params});
    };
    return o;
  }

  // A server that speaks the 2026-07-28 wire: server/discover answers.
  void make_modern() {
    server.on("server/discover", [](const json&) -> Result<json> { return discover_result(); });
    server.hold("subscriptions/listen");
  }

  void start(ClientOptions o) {
    session = ClientSession::create(
        ex, std::make_unique<RecordingTransport>(server.take_client_end(), &sent), std::move(o));
    session->connect([this](Status s) { connected = std::move(s); });
    ex.run_until_idle();
  }

  // What the session sent, in order: the method of each request / notification.
  std::vector<std::string> methods() const {
    std::vector<std::string> out;
    for (const auto& m : server.received()) {
      if (m.is_object() && m.contains("method")) out.push_back(m["method"].get<std::string>());
    }
    return out;
  }

  Result<json> call(const std::string& name, json args = json::object(), CallOptions co = {}) {
    std::optional<Result<json>> got;
    session->call_tool(name, std::move(args), std::move(co),
                       [&](Result<json> r) { got = std::move(r); });
    ex.run_until_idle();
    if (!got) return Error::make(ErrorCode::internal, "no answer");
    return std::move(*got);
  }

  Result<std::vector<json>> list() {
    std::optional<Result<std::vector<json>>> got;
    session->list_tools([&](Result<std::vector<json>> r) { got = std::move(r); });
    ex.run_until_idle();
    if (!got) return Error::make(ErrorCode::internal, "no answer");
    return std::move(*got);
  }

  ManualExecutor ex;
  CapturingLogger log;
  FakeServer server{ex};
  std::vector<std::pair<json, SendOptions>> sent;
  std::vector<std::pair<std::string, json>> notes;
  std::optional<Status> connected;
  std::shared_ptr<ClientSession> session;  // declared last: destroyed first
};

// --- era detection ---------------------------------------------------------------------

TEST_F(ClientModernTest, Probe_DiscoverAnswers_SpeaksTheModernWireWithoutInitialize) {
  make_modern();
  server.set_tools({{{"name", "echo"}, {"inputSchema", {{"type", "object"}}}}});
  start(make_options());
  ASSERT_TRUE(connected && connected->ok()) << connected->error();
  EXPECT_TRUE(session->server().modern);
  EXPECT_EQ(session->server().protocol_version, "2026-07-28");
  EXPECT_EQ(session->server().era_source, "probe");
  EXPECT_EQ(session->server().server_info["name"], "modern");

  auto tools = list();
  ASSERT_TRUE(tools.ok()) << tools.error();
  EXPECT_EQ(tools.value().size(), 1u);
  auto m = methods();
  EXPECT_EQ(std::count(m.begin(), m.end(), "initialize"), 0);
  EXPECT_EQ(std::count(m.begin(), m.end(), "notifications/initialized"), 0);
  // Every request carries the envelope, and is marked stateless for the transport.
  for (const auto& [message, options] : sent) {
    if (!message.contains("id")) continue;
    const json& meta = message["params"]["_meta"];
    EXPECT_EQ(meta[kVersionKey], "2026-07-28") << message.dump();
    EXPECT_TRUE(meta[kCapsKey].is_object()) << message.dump();
    EXPECT_EQ(meta[kInfoKey]["name"], "mcprt") << message.dump();
    EXPECT_TRUE(options.stateless) << message.dump();
    EXPECT_TRUE(options.headers.empty()) << "not HTTP: no headers";
  }
  EXPECT_EQ(server.last_request("tools/list")["params"]["_meta"][kCapsKey],
            (json{{"roots", {{"listChanged", false}}}}));
}

TEST_F(ClientModernTest, Probe_MethodNotFound_FallsBackToInitializeOnTheSameConnection) {
  start(make_options());  // FakeServer answers server/discover with -32601
  ASSERT_TRUE(connected && connected->ok()) << connected->error();
  EXPECT_FALSE(session->server().modern);
  EXPECT_EQ(session->server().protocol_version, "2025-11-25");
  EXPECT_EQ(session->server().era_source, "fallback");
  EXPECT_EQ(methods(), (std::vector<std::string>{"server/discover", "initialize",
                                                 "notifications/initialized"}));
  // The legacy wire carries no envelope.
  auto tools = list();
  ASSERT_TRUE(tools.ok());
  EXPECT_FALSE(server.last_request("tools/list").contains("params") &&
               server.last_request("tools/list")["params"].contains("_meta"));
}

TEST_F(ClientModernTest, Probe_AnsweredWithSomethingThatIsNoDiscoverResult_MeansLegacy) {
  // Some 2025 servers answer every method they do not know with an empty result.
  server.on("server/discover", [](const json&) -> Result<json> { return json::object(); });
  start(make_options());
  ASSERT_TRUE(connected && connected->ok()) << connected->error();
  EXPECT_FALSE(session->server().modern);
  EXPECT_EQ(session->server().era_source, "fallback");
}

TEST_F(ClientModernTest, Probe_Unanswered_OnStdio_FallsBackAfterTheProbeTimeout) {
  server.hold("server/discover");  // a legacy server that ignores early requests
  ClientOptions o = make_options();
  o.probe_timeout = Millis(2000);
  start(std::move(o));
  EXPECT_FALSE(connected.has_value());
  EXPECT_EQ(methods(), (std::vector<std::string>{"server/discover"}));
  ex.advance(Millis(1999));
  EXPECT_FALSE(connected.has_value());
  ex.advance(Millis(1));
  ex.run_until_idle();
  ASSERT_TRUE(connected && connected->ok()) << connected->error();
  EXPECT_FALSE(session->server().modern);
  auto m = methods();
  EXPECT_NE(std::find(m.begin(), m.end(), "initialize"), m.end());
}

TEST_F(ClientModernTest, Probe_OnHttp_AnOutageIsAnErrorNotAVerdict) {
  // The HTTP transport relays a 503 as a JSON-RPC error with data.transport_error.
  server.on("server/discover", [](const json&) -> Result<json> {
    return Error::wire(-32000, "HTTP 503 from http://h/mcp",
                       {{"transport_error", "http_status"}, {"status", 503}});
  });
  ClientOptions o = make_options();
  o.http = true;
  start(std::move(o));
  ASSERT_TRUE(connected && !connected->ok());
  EXPECT_NE(connected->error().message.find("Server \"srv\": HTTP 503"), std::string::npos)
      << connected->error();
  auto m = methods();
  EXPECT_EQ(std::count(m.begin(), m.end(), "initialize"), 0) << "no fallback on an outage";
}

TEST_F(ClientModernTest, Probe_OnHttp_A4xxWithoutModernBodyMeansLegacy) {
  server.on("server/discover", [](const json&) -> Result<json> {
    return Error::wire(-32000, "HTTP 400 from http://h/mcp: Bad Request",
                       {{"transport_error", "http_status"}, {"status", 400}});
  });
  ClientOptions o = make_options();
  o.http = true;
  start(std::move(o));
  ASSERT_TRUE(connected && connected->ok()) << connected->error();
  EXPECT_FALSE(session->server().modern);
  EXPECT_EQ(session->server().era_source, "fallback");
}

TEST_F(ClientModernTest, Probe_UnsupportedVersionIsModernEvidence_NeverAFallback) {
  server.on("server/discover", [](const json&) -> Result<json> {
    return Error::wire(-32022, "Unsupported protocol version",
                       {{"supported", {"2099-01-01"}}, {"requested", "2026-07-28"}});
  });
  start(make_options());
  ASSERT_TRUE(connected && !connected->ok());
  EXPECT_EQ(connected->error().code, ErrorCode::unsupported_version);
  EXPECT_NE(connected->error().message.find("2099-01-01"), std::string::npos) << connected->error();
  auto m = methods();
  EXPECT_EQ(std::count(m.begin(), m.end(), "initialize"), 0);
}

TEST_F(ClientModernTest, Probe_ServerExitsOnTheEarlyRequest_IsStartedAgainForInitialize) {
  // The first process dies on server/discover; the respawned one is a plain 2025 server.
  server.hold("server/discover");
  FakeServer second{ex};
  int spawned = 0;
  ClientOptions o = make_options();
  o.respawn = [&]() -> Result<std::unique_ptr<Transport>> {
    ++spawned;
    return second.take_client_end();
  };
  session = ClientSession::create(ex, server.take_client_end(), std::move(o));
  session->connect([this](Status s) { connected = std::move(s); });
  ex.run_until_idle();
  server.close_with_error(Error::make(ErrorCode::exited, "server exited (code 1)"));
  ex.run_until_idle();
  ASSERT_TRUE(connected && connected->ok()) << connected->error();
  EXPECT_EQ(spawned, 1);
  EXPECT_FALSE(session->server().modern);
  ASSERT_FALSE(second.requests("initialize").empty());
  EXPECT_TRUE(second.requests("server/discover").empty()) << "the second process is not probed";
}

TEST_F(ClientModernTest, PriorModernVerdict_SendsNoProbe) {
  server.hold("subscriptions/listen");
  server.set_tools({{{"name", "echo"}}});
  ClientOptions o = make_options();
  o.prior_protocol_version = "2026-07-28";
  start(std::move(o));
  ASSERT_TRUE(connected && connected->ok());
  EXPECT_TRUE(session->server().modern);
  EXPECT_EQ(session->server().era_source, "prior");
  ASSERT_TRUE(list().ok());
  auto m = methods();
  EXPECT_EQ(std::count(m.begin(), m.end(), "server/discover"), 0);
  EXPECT_EQ(std::count(m.begin(), m.end(), "initialize"), 0);
  EXPECT_EQ(server.last_request("tools/list")["params"]["_meta"][kVersionKey], "2026-07-28");
}

TEST_F(ClientModernTest, PriorLegacyVerdict_GoesStraightToInitialize) {
  ClientOptions o = make_options();
  o.prior_protocol_version = "2025-11-25";
  start(std::move(o));
  ASSERT_TRUE(connected && connected->ok());
  EXPECT_EQ(methods().front(), "initialize");
  EXPECT_EQ(session->server().era_source, "prior");
}

TEST_F(ClientModernTest, PinnedLegacy_NeverProbes_AndOffersThePinnedVersion) {
  ClientOptions o = make_options();
  o.protocol = "2025-06-18";
  start(std::move(o));
  ASSERT_TRUE(connected && connected->ok());
  EXPECT_EQ(methods().front(), "initialize");
  EXPECT_EQ(server.last_request("initialize")["params"]["protocolVersion"], "2025-06-18");
}

TEST_F(ClientModernTest, UnknownProtocol_FailsNamingTheChoices) {
  ClientOptions o = make_options();
  o.protocol = "2030-01-01";
  start(std::move(o));
  ASSERT_TRUE(connected && !connected->ok());
  EXPECT_EQ(connected->error().code, ErrorCode::invalid_config);
  EXPECT_NE(connected->error().message.find("unknown protocol \"2030-01-01\""), std::string::npos);
}

// --- the modern wire ---------------------------------------------------------------------

TEST_F(ClientModernTest, UnsupportedVersionOnARequest_RetriesOnceWithTheMutualVersion) {
  make_modern();
  int lists = 0;
  server.on("tools/list", [&](const json&) -> Result<json> {
    if (++lists == 1) {
      return Error::wire(-32022, "Unsupported protocol version",
                         {{"supported", {"2026-07-28"}}, {"requested", "2026-07-28"}});
    }
    return json{{"resultType", "complete"}, {"tools", json::array()}};
  });
  start(make_options());
  auto tools = list();
  ASSERT_TRUE(tools.ok()) << tools.error();
  EXPECT_EQ(lists, 2);
  auto reqs = server.requests("tools/list");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(reqs[0]["id"], reqs[1]["id"]) << "a retry is a new request";
}

TEST_F(ClientModernTest, UnsupportedVersionTwice_IsAnError) {
  make_modern();
  server.on("tools/list", [&](const json&) -> Result<json> {
    return Error::wire(-32022, "Unsupported protocol version", {{"supported", {"2026-07-28"}}});
  });
  start(make_options());
  auto tools = list();
  ASSERT_FALSE(tools.ok());
  EXPECT_EQ(tools.error().wire_code, -32022);
  EXPECT_EQ(server.requests("tools/list").size(), 2u);
}

TEST_F(ClientModernTest, ResultType_MissingIsComplete_UnknownIsAProtocolError) {
  make_modern();
  server.on_tool("plain", [](const json&) -> Result<json> {
    return json{{"content", json::array()}};  // no resultType: a legacy-shaped result
  });
  server.on_tool("task", [](const json&) -> Result<json> {
    return json{{"resultType", "task"}, {"taskId", "t1"}};
  });
  start(make_options());
  EXPECT_TRUE(call("plain").ok());
  auto r = call("task");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::protocol);
  EXPECT_NE(r.error().message.find("resultType \"task\""), std::string::npos) << r.error();
}

TEST_F(ClientModernTest, HeaderMismatch_ReListsAndRetriesOnce) {
  make_modern();
  int calls = 0;
  server.on_tool("t", [&](const json&) -> Result<json> {
    if (++calls == 1) return Error::wire(-32020, "Header mismatch");
    return text_result("ok");
  });
  start(make_options());
  auto r = call("t");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(calls, 2);
  auto m = methods();
  const auto first_call = std::find(m.begin(), m.end(), "tools/call");
  EXPECT_NE(std::find(first_call, m.end(), "tools/list"), m.end()) << "re-listed before retrying";
}

TEST_F(ClientModernTest, ToolsList_RecordsTheCacheHint_MissingValuesAreStaleAndPrivate) {
  make_modern();
  int lists = 0;
  server.on("tools/list", [&](const json&) -> Result<json> {
    if (++lists == 1) {
      return json{{"resultType", "complete"}, {"tools", json::array()}, {"ttlMs", 5000},
                  {"cacheScope", "public"}};
    }
    return json{{"resultType", "complete"}, {"tools", json::array()}, {"ttlMs", -3}};
  });
  start(make_options());
  EXPECT_TRUE(session->tools_cache_hint().is_null()) << "nothing listed yet";
  ASSERT_TRUE(list().ok());
  EXPECT_EQ(session->tools_cache_hint(), (json{{"ttlMs", 5000}, {"cacheScope", "public"}}));
  ASSERT_TRUE(list().ok());
  EXPECT_EQ(session->tools_cache_hint(), (json{{"ttlMs", 0}, {"cacheScope", "private"}}));
}

TEST_F(ClientModernTest, OnHttp_ToolsWithBrokenHeaderAnnotationsAreLeftOut_AndValidOnesMirrored) {
  make_modern();
  json good = {{"name", "good"},
               {"inputSchema",
                {{"type", "object"},
                 {"properties", {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}}}}}}};
  json bad = {{"name", "bad"},
              {"inputSchema",
               {{"type", "object"},
                {"properties", {{"region", {{"type", "string"}, {"x-mcp-header", "My Region"}}}}}}}};
  server.set_tools({good, bad});
  ClientOptions o = make_options();
  o.http = true;
  start(std::move(o));
  auto tools = list();
  ASSERT_TRUE(tools.ok()) << tools.error();
  ASSERT_EQ(tools.value().size(), 1u);
  EXPECT_EQ(tools.value()[0]["name"], "good");
  EXPECT_TRUE(log.has(LogLevel::warn, "leaving out tool \"bad\""));
  EXPECT_TRUE(log.has(LogLevel::warn, "My Region"));
  server.on_tool("good", [](const json&) -> Result<json> { return text_result("ok"); });
  ASSERT_TRUE(call("good", {{"region", "Zürich"}}).ok());
  const SendOptions* sent_call = nullptr;
  for (const auto& [m, opts] : sent) {
    if (m.value("method", "") == "tools/call") sent_call = &opts;
  }
  ASSERT_NE(sent_call, nullptr);
  auto header = [&](const std::string& name) -> std::string {
    for (const auto& [k, v] : sent_call->headers) {
      if (k == name) return v;
    }
    return "<absent>";
  };
  EXPECT_EQ(header("MCP-Protocol-Version"), "2026-07-28");
  EXPECT_EQ(header("Mcp-Method"), "tools/call");
  EXPECT_EQ(header("Mcp-Name"), "good");
  EXPECT_EQ(header("Mcp-Param-Region"), "=?base64?WsO8cmljaA==?=");
}

TEST_F(ClientModernTest, AdoptedTools_FollowTheListingRules_AndTheirHeadersAreMirrored) {
  server.hold("subscriptions/listen");
  ClientOptions o = make_options();
  o.http = true;
  o.prior_protocol_version = "2026-07-28";
  start(std::move(o));
  json good = {{"name", "good"},
               {"inputSchema",
                {{"type", "object"},
                 {"properties", {{"n", {{"type", "integer"}, {"x-mcp-header", "N"}}}}}}}};
  json bad = {{"name", "bad"},
              {"inputSchema",
               {{"type", "object"},
                {"properties", {{"n", {{"type", "number"}, {"x-mcp-header", "N"}}}}}}}};
  auto kept = session->adopt_tools({good, bad});
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0]["name"], "good");
  server.on_tool("good", [](const json&) -> Result<json> { return text_result("ok"); });
  ASSERT_TRUE(call("good", {{"n", 42}}).ok());
  bool mirrored = false;
  for (const auto& [m, opts] : sent) {
    if (m.value("method", "") != "tools/call") continue;
    for (const auto& [k, v] : opts.headers) mirrored |= k == "Mcp-Param-N" && v == "42";
  }
  EXPECT_TRUE(mirrored);
  EXPECT_TRUE(server.requests("tools/list").empty());
}

// --- MRTR --------------------------------------------------------------------------------

TEST_F(ClientModernTest, Mrtr_FulfilsTheElicitation_AndRetriesWithResponsesAndState) {
  make_modern();
  server.on_tool("ask_name", [](const json&) -> Result<json> { return input_required("s-1"); });
  server.on("tools/call", [](const json& params) -> Result<json> {
    if (!params.contains("inputResponses")) return input_required("s-1");
    const json& answer = params["inputResponses"]["who"];
    return text_result("Hello, " + answer["content"]["name"].get<std::string>() + "!" +
                       (answer["content"]["excited"] == true ? "!" : ""));
  });
  std::vector<Elicitation> asked;
  ClientOptions o = make_options();
  o.input.elicit = [&](const Elicitation& e, ElicitReply reply) {
    asked.push_back(e);
    reply(ElicitAnswer::accept_with({{"excited", true}}));  // name left out: its default applies
  };
  start(std::move(o));
  auto r = call("ask_name", {{"x", 1}});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value()["content"][0]["text"], "Hello, World!!");
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].server, "srv");
  EXPECT_EQ(asked[0].message, "What is your name?");
  auto reqs = server.requests("tools/call");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(reqs[0]["id"], reqs[1]["id"]);
  const json& retry = reqs[1]["params"];
  EXPECT_EQ(retry["requestState"], "s-1");
  EXPECT_EQ(retry["inputResponses"]["who"],
            (json{{"action", "accept"}, {"content", {{"name", "World"}, {"excited", true}}}}));
  EXPECT_EQ(retry["arguments"], (json{{"x", 1}}));
  EXPECT_EQ(retry["_meta"][kVersionKey], "2026-07-28");
  // The capability was declared on every request.
  EXPECT_TRUE(reqs[0]["params"]["_meta"][kCapsKey].contains("elicitation"));
}

TEST_F(ClientModernTest, Mrtr_NoRequestStateWhenTheServerSentNone) {
  make_modern();
  server.on("tools/call", [](const json& params) -> Result<json> {
    if (!params.contains("inputResponses")) {
      json r = input_required("x");
      r.erase("requestState");
      return r;
    }
    return text_result("done");
  });
  ClientOptions o = make_options();
  o.input.elicit = [](const Elicitation&, ElicitReply reply) { reply(ElicitAnswer::decline()); };
  start(std::move(o));
  ASSERT_TRUE(call("t").ok());
  auto reqs = server.requests("tools/call");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_FALSE(reqs[1]["params"].contains("requestState"));
  EXPECT_EQ(reqs[1]["params"]["inputResponses"]["who"], (json{{"action", "decline"}}));
}

TEST_F(ClientModernTest, Mrtr_ParallelCallsNeverShareStateOrResponses) {
  make_modern();
  server.hold("tools/call");
  std::vector<ElicitReply> replies;
  ClientOptions o = make_options();
  o.input.elicit = [&](const Elicitation&, ElicitReply reply) { replies.push_back(reply); };
  start(std::move(o));
  std::optional<Result<json>> a, b;
  session->call_tool("t", {{"who", "a"}}, {}, [&](Result<json> r) { a = std::move(r); });
  session->call_tool("t", {{"who", "b"}}, {}, [&](Result<json> r) { b = std::move(r); });
  ex.run_until_idle();
  auto first = server.requests("tools/call");
  ASSERT_EQ(first.size(), 2u);
  server.reply(first[0]["id"], input_required("state-a"));
  server.reply(first[1]["id"], input_required("state-b"));
  ex.run_until_idle();
  ASSERT_EQ(replies.size(), 2u);
  replies[1](ElicitAnswer::accept_with({{"name", "Bee"}}));
  replies[0](ElicitAnswer::accept_with({{"name", "Ay"}}));
  ex.run_until_idle();
  auto all = server.requests("tools/call");
  ASSERT_EQ(all.size(), 4u);
  for (std::size_t i = 2; i < 4; ++i) {
    const json& p = all[i]["params"];
    const std::string who = p["arguments"]["who"];
    EXPECT_EQ(p["requestState"], "state-" + who);
    EXPECT_EQ(p["inputResponses"]["who"]["content"]["name"], who == "a" ? "Ay" : "Bee");
  }
  server.reply(all[2]["id"], text_result("one"));
  server.reply(all[3]["id"], text_result("two"));
  ex.run_until_idle();
  EXPECT_TRUE(a && a->ok());
  EXPECT_TRUE(b && b->ok());
}

TEST_F(ClientModernTest, Mrtr_StopsAfterTenRounds) {
  make_modern();
  server.on("tools/call", [](const json&) -> Result<json> { return input_required("again"); });
  ClientOptions o = make_options();
  o.input.elicit = [](const Elicitation&, ElicitReply reply) { reply(ElicitAnswer::cancel()); };
  start(std::move(o));
  auto r = call("t");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("after 10 rounds"), std::string::npos) << r.error();
  EXPECT_EQ(server.requests("tools/call").size(), 11u);
}

TEST_F(ClientModernTest, Mrtr_WithoutAHandler_FailsTheCallSayingWhat) {
  make_modern();
  server.on("tools/call", [](const json&) -> Result<json> { return input_required("s"); });
  start(make_options());
  auto r = call("t");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("does not declare elicitation"), std::string::npos) << r.error();
  EXPECT_EQ(server.requests("tools/call").size(), 1u);
}

TEST_F(ClientModernTest, Mrtr_AbortWhileTheUserAnswers_EndsTheCall_TheLateAnswerIsIgnored) {
  make_modern();
  server.on("tools/call", [](const json&) -> Result<json> { return input_required("s"); });
  ElicitReply pending;
  ClientOptions o = make_options();
  o.input.elicit = [&](const Elicitation&, ElicitReply reply) { pending = reply; };
  start(std::move(o));
  AbortController abort;
  CallOptions co;
  co.signal = abort.signal();
  std::optional<Result<json>> got;
  session->call_tool("t", json::object(), co, [&](Result<json> r) { got = std::move(r); });
  ex.run_until_idle();
  ASSERT_TRUE(pending);
  abort.abort("user pressed Esc");
  ex.run_until_idle();
  ASSERT_TRUE(got && !got->ok());
  EXPECT_EQ(got->error().code, ErrorCode::aborted);
  pending(ElicitAnswer::accept());
  ex.run_until_idle();
  EXPECT_EQ(server.requests("tools/call").size(), 1u) << "no retry after the abort";
}

TEST_F(ClientModernTest, Mrtr_RootsAndSampling_AreAnsweredThroughTheirHandlers) {
  make_modern();
  server.on("tools/call", [](const json& params) -> Result<json> {
    if (!params.contains("inputResponses")) {
      return json{{"resultType", "input_required"},
                  {"inputRequests",
                   {{"r", {{"method", "roots/list"}, {"params", json::object()}}},
                    {"s", {{"method", "sampling/createMessage"},
                           {"params", {{"messages", json::array()}, {"maxTokens", 5}}}}}}}};
    }
    return json{{"resultType", "complete"}, {"content", json::array()},
                {"echo", params["inputResponses"]}};
  });
  ClientOptions o = make_options();
  o.input.sample = [](const SamplingRequest& r, SampleReply reply) {
    EXPECT_EQ(r.params["maxTokens"], 5);
    reply(json{{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "hi"}}}, {"model", "m"}});
  };
  start(std::move(o));
  auto r = call("t");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value()["echo"]["r"], (json{{"roots", {{{"uri", "file:///work"}, {"name", "work"}}}}}));
  EXPECT_EQ(r.value()["echo"]["s"]["content"]["text"], "hi");
}

// --- listen ------------------------------------------------------------------------------

TEST_F(ClientModernTest, Listen_OpensAfterConnect_AndDeliversListChanges) {
  make_modern();
  start(make_options());
  ASSERT_TRUE(connected && connected->ok());
  json listen = server.last_request("subscriptions/listen");
  ASSERT_TRUE(listen.is_object());
  EXPECT_EQ(listen["params"]["notifications"], (json{{"toolsListChanged", true}}));
  EXPECT_EQ(listen["params"]["_meta"][kVersionKey], "2026-07-28");
  const json id = listen["id"];
  server.notify("notifications/subscriptions/acknowledged",
                {{"notifications", {{"toolsListChanged", true}}}, {"_meta", {{kSubscriptionKey, id}}}});
  server.notify("notifications/tools/list_changed", {{"_meta", {{kSubscriptionKey, id}}}});
  ex.run_until_idle();
  ASSERT_EQ(notes.size(), 1u) << "the acknowledgement is the session's own business";
  EXPECT_EQ(notes[0].first, "notifications/tools/list_changed");
}

TEST_F(ClientModernTest, Listen_AsksForEveryListChangeTheServerOffers) {
  server.on("server/discover", [](const json&) -> Result<json> {
    return discover_result({{"tools", {{"listChanged", true}}},
                            {"prompts", {{"listChanged", true}}},
                            {"resources", {{"listChanged", true}, {"subscribe", true}}}});
  });
  server.hold("subscriptions/listen");
  start(make_options());
  EXPECT_EQ(server.last_request("subscriptions/listen")["params"]["notifications"],
            (json{{"toolsListChanged", true}, {"promptsListChanged", true},
                  {"resourcesListChanged", true}}));
}

TEST_F(ClientModernTest, ResourceSubscription_ReopensTheListenStreamCarryingIt) {
  server.on("server/discover", [](const json&) -> Result<json> {
    return discover_result({{"tools", {{"listChanged", true}}},
                            {"resources", {{"subscribe", true}}}});
  });
  server.hold("subscriptions/listen");
  start(make_options());
  const json first = server.last_request("subscriptions/listen");
  std::optional<Status> subscribed;
  session->subscribe_resource("file:///log", [&](Status st) { subscribed = std::move(st); });
  ex.run_until_idle();
  ASSERT_EQ(server.requests("subscriptions/listen").size(), 2u);
  // The old stream is given up (stdio: cancelled), the new one carries the subscription.
  ASSERT_EQ(server.notifications("notifications/cancelled").size(), 1u);
  EXPECT_EQ(server.notifications("notifications/cancelled")[0]["params"]["requestId"], first["id"]);
  const json second = server.last_request("subscriptions/listen");
  EXPECT_EQ(second["params"]["notifications"]["resourceSubscriptions"], (json{"file:///log"}));
  EXPECT_TRUE(server.requests("resources/subscribe").empty()) << "no such request on this wire";
  EXPECT_FALSE(subscribed) << "waits for the acknowledgement";
  // The old stream's end is not a drop: no re-open is scheduled for it.
  server.reply(first["id"], {{"resultType", "complete"}});
  server.notify("notifications/subscriptions/acknowledged",
                {{"notifications", {{"toolsListChanged", true},
                                    {"resourceSubscriptions", {"file:///log"}}}},
                 {"_meta", {{kSubscriptionKey, second["id"]}}}});
  ex.run_until_idle();
  ASSERT_TRUE(subscribed && subscribed->ok());
  ex.advance(Millis(5000));
  EXPECT_EQ(server.requests("subscriptions/listen").size(), 2u);

  // A subscription the server does not honour fails.
  std::optional<Status> refused;
  session->subscribe_resource("file:///secret", [&](Status st) { refused = std::move(st); });
  ex.run_until_idle();
  const json third = server.last_request("subscriptions/listen");
  EXPECT_EQ(third["params"]["notifications"]["resourceSubscriptions"],
            (json{"file:///log", "file:///secret"}));
  server.notify("notifications/subscriptions/acknowledged",
                {{"notifications", {{"resourceSubscriptions", {"file:///log"}}}},
                 {"_meta", {{kSubscriptionKey, third["id"]}}}});
  ex.run_until_idle();
  ASSERT_TRUE(refused && !refused->ok());
  EXPECT_EQ(refused->error().code, ErrorCode::invalid_argument);
  EXPECT_NE(refused->error().message.find("file:///secret"), std::string::npos);

  // Unsubscribing opens a stream without it.
  std::optional<Status> gone;
  session->unsubscribe_resource("file:///secret", [&](Status st) { gone = std::move(st); });
  ex.run_until_idle();
  ASSERT_TRUE(gone && gone->ok());
  EXPECT_EQ(server.last_request("subscriptions/listen")["params"]["notifications"]["resourceSubscriptions"],
            (json{"file:///log"}));
}

TEST_F(ClientModernTest, Listen_DroppedStream_IsReopenedWithBackoff) {
  make_modern();
  start(make_options());
  json first = server.last_request("subscriptions/listen");
  server.reply_error(first["id"], -32603, "stream broke");
  ex.run_until_idle();
  EXPECT_EQ(server.requests("subscriptions/listen").size(), 1u);
  ex.advance(Millis(999));
  EXPECT_EQ(server.requests("subscriptions/listen").size(), 1u);
  ex.advance(Millis(1));
  ex.run_until_idle();
  ASSERT_EQ(server.requests("subscriptions/listen").size(), 2u);
  // The second drop waits twice as long.
  server.reply_error(server.last_request("subscriptions/listen")["id"], -32603, "again");
  ex.run_until_idle();
  ex.advance(Millis(1999));
  EXPECT_EQ(server.requests("subscriptions/listen").size(), 2u);
  ex.advance(Millis(1));
  ex.run_until_idle();
  EXPECT_EQ(server.requests("subscriptions/listen").size(), 3u);
}

TEST_F(ClientModernTest, Listen_ServerCancelsTheStream_ItIsReopened) {
  make_modern();
  start(make_options());
  json first = server.last_request("subscriptions/listen");
  server.notify("notifications/cancelled", {{"requestId", first["id"]}});
  ex.run_until_idle();
  ex.advance(Millis(1000));
  ex.run_until_idle();
  EXPECT_EQ(server.requests("subscriptions/listen").size(), 2u);
}

TEST_F(ClientModernTest, Listen_NotAcknowledged_IsAbandonedAndRetried) {
  make_modern();
  ClientOptions o = make_options();
  o.request_timeout = Millis(5000);
  start(std::move(o));
  ex.advance(Millis(5000));
  ex.run_until_idle();
  // The session cancelled it (stdio: notifications/cancelled) and will try again.
  ASSERT_EQ(server.notifications("notifications/cancelled").size(), 1u);
  ex.advance(Millis(1000));
  ex.run_until_idle();
  EXPECT_EQ(server.requests("subscriptions/listen").size(), 2u);
}

TEST_F(ClientModernTest, Listen_NotOfferedWithoutListChangedCapability) {
  server.on("server/discover",
            [](const json&) -> Result<json> { return discover_result({{"tools", json::object()}}); });
  start(make_options());
  ASSERT_TRUE(connected && connected->ok());
  EXPECT_TRUE(server.requests("subscriptions/listen").empty());
}

// --- 2025 server requests through the same handlers ------------------------------------

TEST_F(ClientModernTest, Legacy_ElicitationRequest_AnsweredByTheHandlerWithDefaults) {
  ClientOptions o = make_options();
  o.protocol = "legacy";
  o.input.elicit = [](const Elicitation& e, ElicitReply reply) {
    EXPECT_EQ(e.mode, Elicitation::Mode::form);
    reply(ElicitAnswer::accept());
  };
  start(std::move(o));
  ASSERT_TRUE(connected && connected->ok());
  EXPECT_EQ(server.last_request("initialize")["params"]["capabilities"],
            (json{{"roots", {{"listChanged", false}}}, {"elicitation", {{"form", json::object()}, {"url", json::object()}}}}));
  server.request(7, "elicitation/create",
                 {{"message", "Name?"}, {"requestedSchema", ask_name_schema()}});
  ex.run_until_idle();
  EXPECT_EQ(server.response_to(7)["result"],
            (json{{"action", "accept"}, {"content", {{"name", "World"}, {"excited", false}}}}));
}

TEST_F(ClientModernTest, Legacy_NoHandlers_ElicitationAndSamplingAreMethodNotFound) {
  ClientOptions o = make_options();
  o.protocol = "legacy";
  o.roots.reset();
  start(std::move(o));
  EXPECT_EQ(server.last_request("initialize")["params"]["capabilities"], json::object());
  server.request(1, "elicitation/create", {{"message", "?"}, {"requestedSchema", ask_name_schema()}});
  server.request(2, "sampling/createMessage", {{"messages", json::array()}});
  server.request(3, "roots/list");
  ex.run_until_idle();
  for (int id : {1, 2, 3}) {
    EXPECT_EQ(server.response_to(id)["error"]["code"], rpc_code::kMethodNotFound) << id;
  }
}

TEST_F(ClientModernTest, Legacy_UrlElicitation_ReachesTheHostWithTheUrl) {
  ClientOptions o = make_options();
  o.protocol = "legacy";
  std::string seen;
  o.input.elicit = [&](const Elicitation& e, ElicitReply reply) {
    seen = e.url;
    EXPECT_EQ(e.mode, Elicitation::Mode::url);
    reply(ElicitAnswer::decline());
  };
  start(std::move(o));
  server.request(4, "elicitation/create",
                 {{"mode", "url"}, {"message", "Sign in"}, {"url", "https://example.test/x"},
                  {"elicitationId", "e1"}});
  ex.run_until_idle();
  EXPECT_EQ(seen, "https://example.test/x");
  EXPECT_EQ(server.response_to(4)["result"], (json{{"action", "decline"}}));
}

TEST_F(ClientModernTest, Legacy_MalformedElicitation_IsInvalidParams) {
  ClientOptions o = make_options();
  o.protocol = "legacy";
  bool called = false;
  o.input.elicit = [&](const Elicitation&, ElicitReply reply) {
    called = true;
    reply(ElicitAnswer::accept());
  };
  start(std::move(o));
  server.request(5, "elicitation/create", {{"mode", "url"}, {"message", "no url"}});
  ex.run_until_idle();
  EXPECT_FALSE(called);
  EXPECT_EQ(server.response_to(5)["error"]["code"], rpc_code::kInvalidParams);
}

}  // namespace
}  // namespace client_modern_test
}  // namespace mcprt
