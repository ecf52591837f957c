// The full native HTTP stack — make_http_transport → ClientSession over NativeHttpClient —
// against (a) a Streamable HTTP MCP server scripted in-process with cpp-httplib
// (loopback_http_server.hpp), well-behaved and misbehaving, and (b) the real npm
// @modelcontextprotocol/server-everything in its streamableHttp and sse modes, kept on
// 127.0.0.1 by tests/fixtures/loopback.mjs.
//
// Waits are bounded only so that a broken build fails instead of hanging; no assertion
// depends on how long anything takes.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loopback_http_server.hpp"
#include "mcprt/client.hpp"
#include "mcprt/http_transport.hpp"
#include "mcprt/native/executor.hpp"
#include "mcprt/native/http_client.hpp"
#include "mcprt/native/process_launcher.hpp"
#include "blocking_session_test.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace native_http_transport_test {  // this file's own names in a unity batch
namespace {

using test::BlockingSessionTest;
using test::CapturingLogger;
using test::LoopbackHttpServer;
using test::poll_until;
using test::pump_until;
using test::free_loopback_port;
using test::loopback_port_accepts;
using test::RecordedRequest;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::set<std::string> tool_names(const std::vector<json>& tools) {
  std::set<std::string> names;
  for (const json& t : tools) names.insert(t.value("name", ""));
  return names;
}

std::string first_text(const json& result) {
  if (!result.contains("content") || !result["content"].is_array() || result["content"].empty()) {
    return {};
  }
  return result["content"][0].value("text", "");
}

// ---- the session harness ---------------------------------------------------------------

class HttpSessionTest : public BlockingSessionTest {
 protected:
  struct Setup {
    std::string name = "loopback";
    HttpTransportMode mode = HttpTransportMode::streamable;
    Millis connect_timeout{15000};
  };

  Status connect(const std::string& url, Setup setup) {
    HttpTransportOptions to;
    to.url = url;
    to.server_name = setup.name;
    to.mode = setup.mode;
    to.logger = &log_;
    auto transport = make_http_transport(ex_, http_, to);
    if (!transport.ok()) return std::move(transport).error();
    return connect_session(std::move(transport).value(), setup.name, setup.connect_timeout);
  }

  NativeHttpClient http_{ex_};
};

// ---- (a) a scripted Streamable HTTP server ---------------------------------------------

constexpr const char kSessionId[] = "loopback-session-1";

std::string sse_event(const json& message) {
  return "event: message\ndata: " + message.dump() + "\n\n";
}

json rpc_result(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json progress_notification(const json& token, int progress, int total) {
  return json{{"jsonrpc", "2.0"},
              {"method", "notifications/progress"},
              {"params", {{"progressToken", token}, {"progress", progress}, {"total", total}}}};
}

json text_result(const std::string& text) {
  return json{{"content", json::array({json{{"type", "text"}, {"text", text}}})}};
}

// A Streamable HTTP MCP server on /mcp. initialize answers JSON with a session id; later
// requests must carry it (else 400); notifications and responses get 202; tools/list
// answers JSON; tools/call answers by tool name:
//   echo    SSE: a progress notification (when a progressToken came), then the result
//   stall   SSE: a progress notification, then silence (a slow server)
//   cut     SSE: a progress notification, then the connection drops (no event ids, so
//           the stream cannot be resumed)
//   html    200 text/html (wrong content type)
//   boom    500 with a body
//   silent  never answers
// GET /mcp is 405 (no standalone stream); DELETE /mcp answers 200.
class ScriptedMcpServer {
 public:
  explicit ScriptedMcpServer(bool initialize_never_answers = false)
      : initialize_never_answers_(initialize_never_answers) {
    server_.post("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      handle_post(req, res);
    });
    server_.get("/mcp", [](const httplib::Request&, httplib::Response& res) { res.status = 405; });
    server_.del("/mcp", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
    server_.start();
  }

  std::string url() const { return server_.url("/mcp"); }
  LoopbackHttpServer& http() { return server_; }

  // JSON-RPC messages POSTed so far, in order.
  std::vector<json> messages() const {
    std::vector<json> out;
    for (const RecordedRequest& r : server_.requests()) {
      if (r.method != "POST") continue;
      json m = json::parse(r.body, nullptr, false);
      if (!m.is_discarded()) out.push_back(std::move(m));
    }
    return out;
  }
  std::size_t count_method(const std::string& method) const {
    std::size_t n = 0;
    for (const json& m : messages()) {
      if (m.is_object() && m.value("method", "") == method) ++n;
    }
    return n;
  }
  std::vector<RecordedRequest> requests(const std::string& method) const {
    std::vector<RecordedRequest> out;
    for (auto& r : server_.requests()) {
      if (r.method == method) out.push_back(r);
    }
    return out;
  }

 private:
  void handle_post(const httplib::Request& req, httplib::Response& res) {
    const json msg = json::parse(req.body, nullptr, false);
    if (!msg.is_object()) {
      res.status = 400;
      res.set_content("not a JSON-RPC message", "text/plain");
      return;
    }
    const std::string method = msg.value("method", "");
    if (method == "initialize") {
      if (initialize_never_answers_) {
        server_.park(res);
        return;
      }
      res.set_header("Mcp-Session-Id", kSessionId);
      json result = {{"protocolVersion", "2025-11-25"},
                     {"capabilities", {{"tools", json::object()}}},
                     {"serverInfo", {{"name", "scripted-http"}, {"version", "1.0.0"}}}};
      res.set_content(rpc_result(msg["id"], std::move(result)).dump(), "application/json");
      return;
    }
    if (req.get_header_value("Mcp-Session-Id") != kSessionId) {
      res.status = 400;
      res.set_content("Bad Request: no valid session id", "text/plain");
      return;
    }
    if (!msg.contains("id") || !msg.contains("method")) {  // notification or response
      res.status = 202;
      return;
    }
    const json& id = msg["id"];
    if (method == "tools/list") {
      json tools = json::array();
      for (const char* name : {"echo", "stall", "cut", "html", "boom", "silent"}) {
        tools.push_back({{"name", name}, {"inputSchema", {{"type", "object"}}}});
      }
      res.set_content(rpc_result(id, {{"tools", tools}}).dump(), "application/json");
      return;
    }
    if (method == "ping") {
      res.set_content(rpc_result(id, json::object()).dump(), "application/json");
      return;
    }
    if (method != "tools/call") {
      json error = {{"jsonrpc", "2.0"},
                    {"id", id},
                    {"error", {{"code", -32601}, {"message", "Method not found"}}}};
      res.set_content(error.dump(), "application/json");
      return;
    }
    const json params = msg.value("params", json::object());
    const std::string tool = params.value("name", "");
    const json token = params.contains("_meta") && params["_meta"].is_object()
                           ? params["_meta"].value("progressToken", json())
                           : json();
    if (tool == "echo") {
      std::vector<std::string> events;
      if (!token.is_null()) events.push_back(sse_event(progress_notification(token, 1, 2)));
      const std::string text = params.value("arguments", json::object()).value("message", "");
      events.push_back(sse_event(rpc_result(id, text_result(text))));
      res.set_chunked_content_provider(
          "text/event-stream", [events, next = std::size_t(0)](std::size_t,
                                                               httplib::DataSink& sink) mutable {
            if (next < events.size()) {
              const std::string& e = events[next++];
              return sink.write(e.data(), e.size());
            }
            sink.done();
            return true;
          });
    } else if (tool == "stall" || tool == "cut") {
      auto feed = server_.make_feed();
      feed->push(sse_event(progress_notification(token.is_null() ? json(0) : token, 1, 2)));
      if (tool == "cut") feed->cut();
      feed->attach(res, "text/event-stream");
    } else if (tool == "html") {
      res.set_content("<html><body>Please log in</body></html>", "text/html");
    } else if (tool == "boom") {
      res.status = 500;
      res.set_content("internal meltdown in tool boom", "text/plain");
    } else if (tool == "silent") {
      server_.park(res);
    } else {
      res.set_content(rpc_result(id, {{"content", json::array()}, {"isError", true}}).dump(),
                      "application/json");
    }
  }

  LoopbackHttpServer server_;
  bool initialize_never_answers_;
};

class ScriptedHttpSession : public HttpSessionTest {
 protected:
  Status connect_scripted(const std::string& name = "scripted") {
    return connect(mcp_.url(), {.name = name});
  }
  ScriptedMcpServer mcp_;
};

TEST_F(ScriptedHttpSession, ConnectsListsCallsWithProgressAndDeletesTheSessionOnClose) {
  ASSERT_TRUE(connect_scripted().ok());
  EXPECT_EQ(session_->server().server_info.value("name", ""), "scripted-http");
  // connect() completes once initialized is sent; its POST may still be on the way.
  EXPECT_TRUE(
      poll_until(ex_, [&] { return mcp_.count_method("notifications/initialized") == 1; }));

  auto tools = list_tools();
  ASSERT_TRUE(tools.ok()) << tools.error();
  EXPECT_EQ(tool_names(tools.value()),
            (std::set<std::string>{"echo", "stall", "cut", "html", "boom", "silent"}));

  int progress = 0;
  CallOptions options;
  options.on_progress = [&](const json& params) {
    EXPECT_EQ(params.value("progress", 0), 1) << params.dump();
    ++progress;
  };
  std::optional<int> progress_at_result;
  std::optional<Result<json>> result;
  session_->call_tool("echo", {{"message", "over loopback http"}}, std::move(options),
                      [&](Result<json> r) {
                        progress_at_result = progress;
                        result = std::move(r);
                      });
  ASSERT_TRUE(pump_until(ex_, [&] { return result.has_value(); }));
  ASSERT_TRUE(result->ok()) << result->error();
  EXPECT_EQ(first_text(result->value()), "over loopback http");
  EXPECT_EQ(progress_at_result, 1) << "the progress event precedes the result on the stream";

  // Every request after initialize carried the session and the negotiated version.
  auto posts = mcp_.requests("POST");
  ASSERT_GE(posts.size(), 4u);
  for (std::size_t i = 1; i < posts.size(); ++i) {
    EXPECT_EQ(posts[i].header("Mcp-Session-Id"), kSessionId) << posts[i].body;
    EXPECT_EQ(posts[i].header("MCP-Protocol-Version"), "2025-11-25") << posts[i].body;
  }

  ASSERT_TRUE(close_session());
  EXPECT_EQ(closed_with_->code, ErrorCode::closed) << *closed_with_;
  auto deletes = mcp_.requests("DELETE");
  ASSERT_EQ(deletes.size(), 1u) << "close() ends the session with DELETE";
  EXPECT_EQ(deletes[0].header("Mcp-Session-Id"), kSessionId);
}

TEST_F(ScriptedHttpSession, SlowServerTimesOutTheCallNamingTheServerAndStaysUsable) {
  ASSERT_TRUE(connect_scripted("slowpoke").ok());
  CallOptions options;
  options.timeout = Millis(300);
  auto r = call("stall", json::object(), std::move(options));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::timeout) << r.error();
  EXPECT_TRUE(contains(r.error().message, "Server \"slowpoke\"")) << r.error();
  // The client told the server it gave up.
  EXPECT_TRUE(poll_until(ex_, [&] { return mcp_.count_method("notifications/cancelled") == 1; }));
  auto echoed = call("echo", {{"message", "still here"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
  EXPECT_EQ(first_text(echoed.value()), "still here");
}

TEST_F(ScriptedHttpSession, StreamCutBeforeTheResultFailsTheCallNamingTheServer) {
  ASSERT_TRUE(connect_scripted("cutter").ok());
  auto r = call("cut", json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Server \"cutter\"")) << r.error();
  EXPECT_NE(r.error().code, ErrorCode::timeout) << r.error();
  auto echoed = call("echo", {{"message", "after the cut"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
}

TEST_F(ScriptedHttpSession, WrongContentTypeFailsTheCallNamingTheServerAndTheUrl) {
  ASSERT_TRUE(connect_scripted("htmlish").ok());
  auto r = call("html", json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message, "Server \"htmlish\"")) << r.error();
  EXPECT_TRUE(contains(r.error().message, mcp_.url())) << r.error();
  EXPECT_TRUE(contains(r.error().message, "neither JSON nor an event stream")) << r.error();
  auto echoed = call("echo", {{"message", "after the html"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
}

TEST_F(ScriptedHttpSession, Http500FailsTheCallWithTheStatusAndTheBody) {
  ASSERT_TRUE(connect_scripted("crashy").ok());
  auto r = call("boom", json::object());
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message;
  EXPECT_TRUE(contains(m, "Server \"crashy\"")) << r.error();
  EXPECT_TRUE(contains(m, "HTTP 500")) << r.error();
  EXPECT_TRUE(contains(m, "internal meltdown in tool boom")) << r.error();
  auto echoed = call("echo", {{"message", "after the 500"}});
  ASSERT_TRUE(echoed.ok()) << echoed.error();
}

TEST_F(ScriptedHttpSession, ServerThatNeverAnswersACallTimesOutAndCloseDoesNotHang) {
  ASSERT_TRUE(connect_scripted("mute").ok());
  CallOptions options;
  options.timeout = Millis(300);
  auto r = call("silent", json::object(), std::move(options));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::timeout) << r.error();
  EXPECT_TRUE(contains(r.error().message, "Server \"mute\"")) << r.error();
  ASSERT_TRUE(close_session());
  EXPECT_EQ(closed_with_->code, ErrorCode::closed) << *closed_with_;
  EXPECT_EQ(mcp_.requests("DELETE").size(), 1u);
}

class SilentInitializeSession : public HttpSessionTest {
 protected:
  ScriptedMcpServer mcp_{/*initialize_never_answers=*/true};
};

TEST_F(SilentInitializeSession, ConnectTimesOutNamingTheServer) {
  Status s = connect(mcp_.url(), {.name = "sleepy", .connect_timeout = Millis(300)});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::timeout) << s.error();
  EXPECT_TRUE(contains(s.error().message, "Server \"sleepy\"")) << s.error();
  ASSERT_TRUE(pump_until(ex_, [&] { return closed_with_.has_value(); }));
  // The abandoned initialize POST let go of its worker.
  EXPECT_TRUE(poll_until(ex_, [&] { return http_.in_flight() == 0; }));
}

class RefusedSession : public HttpSessionTest {};

TEST_F(RefusedSession, ConnectFailsWithATransportErrorNamingTheServerAndTheUrl) {
  // A bound, non-listening loopback port refuses connections.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/mcp";
  Status s = connect(url, {.name = "nobody-home"});
  ::close(fd);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::transport) << s.error();
  EXPECT_TRUE(contains(s.error().message, "Server \"nobody-home\"")) << s.error();
  EXPECT_TRUE(contains(s.error().message, url)) << s.error();
}

// The server process goes away after the handshake: the next request finds no server, so
// the transport closes (the owner's reconnect takes over) and the call fails once, naming
// the server; nothing waits for a timeout.
class VanishingServerSession : public HttpSessionTest {
 protected:
  std::unique_ptr<ScriptedMcpServer> mcp_ = std::make_unique<ScriptedMcpServer>();
};

TEST_F(VanishingServerSession, ARequestThatFindsNoServerClosesTheSessionAndFailsTheCallOnce) {
  ASSERT_TRUE(connect(mcp_->url(), {.name = "vanishing"}).ok());
  const std::string url = mcp_->url();
  ASSERT_TRUE(
      poll_until(ex_, [&] { return mcp_->count_method("notifications/initialized") == 1; }));
  mcp_.reset();  // the port now refuses connections
  int results = 0;
  std::optional<Result<json>> result;
  session_->call_tool("echo", {{"message", "anyone?"}}, CallOptions{}, [&](Result<json> r) {
    ++results;
    result = std::move(r);
  });
  ASSERT_TRUE(pump_until(ex_, [&] { return result.has_value() && closed_with_.has_value(); }));
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->error().code, ErrorCode::transport) << result->error();
  // The request is named once, not once by the platform and again by the transport. Which
  // request finds the port closed first is a race: the call's POST, or the reconnect of the
  // session's GET stream (it then closes the transport, which fails the call with its cause).
  const std::string& m = result->error().message;
  EXPECT_EQ(m.find(url), m.rfind(url)) << m;
  const std::string cause = " " + url + " failed: could not connect (connection refused)";
  EXPECT_THAT(m, ::testing::AnyOf("Server \"vanishing\": HTTP POST" + cause,
                                  "Server \"vanishing\": HTTP GET" + cause));
  EXPECT_EQ(closed_with_->code, ErrorCode::transport) << *closed_with_;
  EXPECT_TRUE(contains(closed_with_->message, "Server \"vanishing\"")) << *closed_with_;
  pump_until(
      ex_, [] { return false; }, Millis(200));  // nothing more arrives
  EXPECT_EQ(results, 1);
}

// ---- (b) @modelcontextprotocol/server-everything (npm) over HTTP ------------------------

class ServerEverythingHttp : public HttpSessionTest {
 protected:
  // Starts `node --import loopback.mjs .../server-everything/dist/index.js <mode>` on a
  // free loopback port and waits until the port accepts.
  void start_everything(const std::string& mode) {
    const std::string root = MCPRT_SOURCE_DIR;
    const std::string script =
        root + "/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    struct stat st {};
    ASSERT_EQ(::stat(script.c_str(), &st), 0)
        << script << " is missing: install the npm dev dependencies first (scripts/bootstrap, "
        << "or `npm install` in " << root << ")";
    port_ = free_loopback_port();
    ProcessSpec spec;
    spec.command = "node";
    spec.args = {"--import", root + "/tests/fixtures/loopback.mjs", script, mode};
    spec.env["PORT"] = std::to_string(port_);
    spec.label = "everything-" + mode;
    auto stream = launcher_.launch(spec);
    ASSERT_TRUE(stream.ok()) << stream.error();
    node_ = std::move(stream).value();
    ByteStreamHandlers handlers;
    handlers.on_data = [](std::string_view) {};  // its stdout log; drained, not needed
    handlers.on_closed = [this](const StreamClosed& c) { node_ended_ = c; };
    node_->start(std::move(handlers));
    ASSERT_TRUE(poll_until(
        ex_, [&] { return node_ended_.has_value() || loopback_port_accepts(port_); },
        Millis(30000)))
        << "server-everything (" << mode << ") did not open 127.0.0.1:" << port_;
    ASSERT_FALSE(node_ended_.has_value())
        << "server-everything (" << mode << ") ended: " << node_ended_->error
        << "; stderr: " << node_ended_->stderr_tail;
  }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  // Lists, echoes, runs a progress-reporting tool and closes: the same script for both
  // transports.
  void exercise(const std::string& name) {
    auto tools = list_tools();
    ASSERT_TRUE(tools.ok()) << tools.error();
    const auto names = tool_names(tools.value());
    EXPECT_TRUE(names.count("echo")) << "tools: " << tools.value().size();
    EXPECT_TRUE(names.count("trigger-long-running-operation"));

    auto echoed = call("echo", {{"message", "hi from mcprt over " + name}});
    ASSERT_TRUE(echoed.ok()) << echoed.error();
    EXPECT_EQ(first_text(echoed.value()), "Echo: hi from mcprt over " + name);

    int progress = 0;
    CallOptions options;
    options.on_progress = [&](const json& params) {
      EXPECT_TRUE(params.contains("progress")) << params.dump();
      ++progress;
    };
    auto done = call("trigger-long-running-operation", {{"duration", 0.2}, {"steps", 2}},
                     std::move(options));
    ASSERT_TRUE(done.ok()) << done.error();
    EXPECT_TRUE(contains(first_text(done.value()), "Long running operation completed"))
        << done.value().dump();
    EXPECT_EQ(progress, 2) << "one progress notification per step";

    ASSERT_TRUE(close_session()) << "close() must complete";
    EXPECT_EQ(closed_with_->code, ErrorCode::closed) << *closed_with_;
    EXPECT_FALSE(log_.contains("Server \"" + name + "\"", LogLevel::error))
        << "no error was logged for the server";
  }

  void TearDown() override {
    HttpSessionTest::TearDown();
    if (node_) {
      node_->close();  // stdin close → SIGTERM → SIGKILL; the child is reaped
      pump_until(ex_, [&] { return node_ended_.has_value(); });
      node_.reset();
    }
  }

  NativeProcessLauncher launcher_{ex_, &log_, test::fast_options()};
  std::unique_ptr<ByteStream> node_;
  std::optional<StreamClosed> node_ended_;
  int port_ = 0;
};

TEST_F(ServerEverythingHttp, StreamableHttpConnectsListsEchoesReportsProgressAndCloses) {
  start_everything("streamableHttp");
  if (HasFatalFailure()) return;
  Status s = connect(url("/mcp"), {.name = "everything-http",
                                   .mode = HttpTransportMode::streamable,
                                   .connect_timeout = Millis(20000)});
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(session_->server().protocol_version, "2025-11-25");
  exercise("everything-http");
}

TEST_F(ServerEverythingHttp, LegacySseConnectsListsEchoesReportsProgressAndCloses) {
  start_everything("sse");
  if (HasFatalFailure()) return;
  Status s = connect(url("/sse"), {.name = "everything-sse",
                                   .mode = HttpTransportMode::sse,
                                   .connect_timeout = Millis(20000)});
  ASSERT_TRUE(s.ok()) << s.error();
  exercise("everything-sse");
}

}  // namespace
}  // namespace native_http_transport_test
}  // namespace mcprt::native
