// NativeHttpClient (cpp-httplib on worker threads) against an in-process loopback server
// (loopback_http_server.hpp): the seam's callback sequence, streaming, errors, timeouts,
// redirects, abort, shutdown, the thread bound and TLS verification.
//
// No sleeps and no timed assertions: slow servers are ChunkFeeds the test drives, silent
// servers are parked handlers, and "returns promptly" is shown by the worker letting go of
// a request (in_flight() reaches 0) while the server still says nothing.

#include "mcprt/native/http_client.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "loopback_http_server.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace {

using test::ChunkFeed;
using test::LoopbackHttpServer;
using test::poll_until;
using test::pump_until;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Threads of this process (/proc/self/task entries).
std::size_t thread_count_of_self() {
  std::size_t n = 0;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(dir);
  }
  return n;
}

// Records one request's callbacks and checks the seam's rules as they happen: every
// callback on the loop (test) thread, head before body, nothing after complete. Every
// test that uses one checks these rules (in the destructor).
struct Recorder {
  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder() {
    for (const std::string& v : violations) ADD_FAILURE() << "HttpClient contract: " << v;
  }

  std::thread::id loop_thread = std::this_thread::get_id();
  std::optional<HttpResponseHead> head;
  std::string body;
  int chunks = 0;
  int heads = 0;
  int completes = 0;
  std::optional<Status> done;
  std::vector<std::string> violations;
  std::function<void()> on_chunk;  // optional hook, runs inside on_body_chunk

  int callbacks() const { return heads + chunks + completes; }

  HttpCallbacks make() {
    HttpCallbacks cb;
    cb.on_response_head = [this](const HttpResponseHead& h) {
      check("head");
      if (heads > 0) violations.push_back("second head");
      ++heads;
      head = h;
    };
    cb.on_body_chunk = [this](std::string_view bytes) {
      check("chunk");
      if (heads == 0) violations.push_back("chunk before head");
      ++chunks;
      body.append(bytes);
      if (on_chunk) on_chunk();
    };
    cb.on_complete = [this](Status s) {
      check("complete");
      ++completes;
      done = std::move(s);
    };
    return cb;
  }

  void check(const char* what) {
    if (std::this_thread::get_id() != loop_thread) {
      violations.push_back(std::string(what) + " ran off the loop thread");
    }
    if (completes > 0) violations.push_back(std::string(what) + " after complete");
  }
};

class NativeHttpClientTest : public ::testing::Test {
 protected:
  // Creates the client (after the routes and start(), so thread counts are stable).
  NativeHttpClient& client(NativeHttpClientOptions options = {}) {
    client_ = std::make_unique<NativeHttpClient>(ex_, std::move(options));
    return *client_;
  }

  std::unique_ptr<HttpRequestHandle> send(HttpRequest request, Recorder& rec) {
    auto handle = client_->send(std::move(request), rec.make());
    EXPECT_TRUE(handle.ok()) << handle.error();
    if (!handle.ok()) return nullptr;
    EXPECT_EQ(rec.callbacks(), 0) << "no callback may run inside send()";
    return std::move(handle).value();
  }

  static HttpRequest get(std::string url) {
    HttpRequest r;
    r.method = "GET";
    r.url = std::move(url);
    return r;
  }

  bool wait_done(Recorder& rec) { return pump_until(ex_, [&] { return rec.done.has_value(); }); }
  bool wait_idle() {
    return poll_until(ex_, [&] { return client_->in_flight() == 0; });
  }

  NativeExecutor ex_;
  LoopbackHttpServer server_;
  std::unique_ptr<NativeHttpClient> client_;
};

// ---- answers ---------------------------------------------------------------------------

TEST_F(NativeHttpClientTest, JsonAnswerArrivesAsHeadBodyAndCompleteOnTheLoopThread) {
  server_.get("/json", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Mcp-Session-Id", "abc");
    res.set_content(R"({"hello":"world"})", "application/json");
  });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/json")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  ASSERT_TRUE(rec.head.has_value());
  EXPECT_EQ(rec.head->status, 200);
  EXPECT_EQ(rec.head->headers.get("content-type"), "application/json");
  EXPECT_EQ(rec.head->headers.get("mcp-session-id"), "abc");
  EXPECT_EQ(rec.head->final_url, server_.url("/json"));
  EXPECT_EQ(rec.body, R"({"hello":"world"})");
  EXPECT_EQ(rec.heads, 1);
  EXPECT_EQ(rec.completes, 1);
  EXPECT_TRUE(rec.violations.empty()) << rec.violations.front();
}

TEST_F(NativeHttpClientTest, PostSendsMethodHeadersBodyAndAUserAgent) {
  server_.post("/mcp", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 202;
  });
  server_.start();
  client();
  HttpRequest r;
  r.method = "POST";
  r.url = server_.url("/mcp?x=1");
  r.headers.add("Content-Type", "application/json");
  r.headers.add("Accept", "application/json, text/event-stream");
  r.headers.add("Mcp-Session-Id", "s-1");
  r.body = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.head->status, 202);
  auto seen = server_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/mcp?x=1");
  EXPECT_EQ(seen[0].header("Content-Type"), "application/json");
  EXPECT_EQ(seen[0].header("Accept"), "application/json, text/event-stream");
  EXPECT_EQ(seen[0].header("Mcp-Session-Id"), "s-1");
  EXPECT_EQ(seen[0].body, r.body);
  EXPECT_TRUE(contains(seen[0].header("User-Agent"), "mcprt/")) << seen[0].header("User-Agent");
}

TEST_F(NativeHttpClientTest, NoContentAnswerStillReportsItsHead) {
  server_.del("/mcp", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/mcp"));
  r.method = "DELETE";
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  ASSERT_EQ(rec.heads, 1);
  EXPECT_EQ(rec.head->status, 204);
  EXPECT_TRUE(rec.body.empty());
}

TEST_F(NativeHttpClientTest, ServerErrorIsAHeadAndBodyNotAnError) {
  server_.post("/mcp", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content("database on fire", "text/plain");
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/mcp"));
  r.method = "POST";
  r.body = "{}";
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  EXPECT_TRUE(rec.done->ok()) << "a 500 is an answer at this level: " << rec.done->error();
  EXPECT_EQ(rec.head->status, 500);
  EXPECT_EQ(rec.body, "database on fire");
}

TEST_F(NativeHttpClientTest, WrongContentTypeIsReportedAsItIs) {
  server_.post("/mcp", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>login page</html>", "text/html");
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/mcp"));
  r.method = "POST";
  r.headers.add("Accept", "application/json, text/event-stream");
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.head->headers.get("Content-Type"), "text/html");
  EXPECT_EQ(rec.body, "<html>login page</html>");
}

// ---- streaming -------------------------------------------------------------------------

TEST_F(NativeHttpClientTest, SseChunksArriveAsTheServerSendsThem) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/sse")), rec);

  const std::string first = "event: message\ndata: {\"n\":1}\n\n";
  const std::string second = "event: message\ndata: {\"n\":2}\n\n";
  feed->push(first);
  // The second piece does not exist yet: the first must reach the callback on its own.
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.body == first; })) << rec.body;
  EXPECT_EQ(rec.head->headers.get("Content-Type"), "text/event-stream");
  EXPECT_FALSE(rec.done.has_value());
  feed->push(second);
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.body == first + second; })) << rec.body;
  EXPECT_FALSE(rec.done.has_value());
  feed->end();
  ASSERT_TRUE(wait_done(rec));
  EXPECT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_GE(rec.chunks, 2);
  EXPECT_TRUE(rec.violations.empty()) << rec.violations.front();
}

TEST_F(NativeHttpClientTest, StreamCutMidBodyCompletesWithATransportErrorNamingTheUrl) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/sse")), rec);
  feed->push("data: partial\n\n");
  feed->cut();
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  const Error& e = rec.done->error();
  EXPECT_EQ(e.code, ErrorCode::transport) << e;
  EXPECT_TRUE(contains(e.message, server_.url("/sse"))) << e;
  EXPECT_TRUE(contains(e.message, "before the response body was complete")) << e;
  EXPECT_EQ(rec.heads, 1);
  EXPECT_EQ(rec.body, "data: partial\n\n");
}

TEST_F(NativeHttpClientTest, BodyShorterThanItsContentLengthIsATransportError) {
  server_.get("/short", [](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(100, "application/json",
                             [](std::size_t offset, std::size_t, httplib::DataSink& sink) {
                               if (offset > 0) return false;  // hang up after 10 of 100 bytes
                               sink.write("{\"partial\"", 10);
                               return true;
                             });
  });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/short")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_EQ(rec.head->status, 200);
}

TEST_F(NativeHttpClientTest, ALongLivedStreamDoesNotBlockOtherRequests) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.get("/json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  server_.start();
  client();
  Recorder stream;
  auto stream_handle = send(get(server_.url("/sse")), stream);
  ASSERT_TRUE(pump_until(ex_, [&] { return stream.head.has_value(); }));

  std::vector<Recorder> quick(3);
  std::vector<std::unique_ptr<HttpRequestHandle>> handles;
  for (auto& rec : quick) handles.push_back(send(get(server_.url("/json")), rec));
  for (auto& rec : quick) {
    ASSERT_TRUE(wait_done(rec));
    EXPECT_TRUE(rec.done->ok()) << rec.done->error();
  }
  EXPECT_FALSE(stream.done.has_value()) << "the stream is still open";
  feed->end();
  ASSERT_TRUE(wait_done(stream));
  EXPECT_TRUE(stream.done->ok()) << stream.done->error();
}

// ---- timeouts and abort ----------------------------------------------------------------

TEST_F(NativeHttpClientTest, SilentServerFailsWithTimeoutAfterTimeoutMs) {
  server_.post("/hang", [&](const httplib::Request&, httplib::Response& res) { server_.park(res); });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/hang"));
  r.method = "POST";
  r.timeout_ms = 200;
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  const Error& e = rec.done->error();
  EXPECT_EQ(e.code, ErrorCode::timeout) << e;
  EXPECT_TRUE(contains(e.message, server_.url("/hang"))) << e;
  EXPECT_TRUE(contains(e.message, "200 ms")) << e;
  EXPECT_EQ(rec.heads, 0);
  EXPECT_TRUE(wait_idle()) << "the worker must give up the request";
}

TEST_F(NativeHttpClientTest, TimeoutMsDoesNotCutAStreamWhoseHeadArrived) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/sse"));
  r.timeout_ms = 50;
  Recorder rec;
  auto handle = send(r, rec);
  feed->push("data: 1\n\n");
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.chunks >= 1; }));
  // Well past timeout_ms, with the stream idle: still open.
  ex_.run_for(Millis(200));
  EXPECT_FALSE(rec.done.has_value());
  feed->push("data: 2\n\n");
  feed->end();
  ASSERT_TRUE(wait_done(rec));
  EXPECT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.body, "data: 1\n\ndata: 2\n\n");
}

TEST_F(NativeHttpClientTest, AbortWhileTheServerIsSilentFreesTheWorkerAndRunsNoCallback) {
  server_.get("/hang", [&](const httplib::Request&, httplib::Response& res) { server_.park(res); });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/hang")), rec);
  ASSERT_TRUE(poll_until(ex_, [&] { return server_.parked() == 1; }));
  handle->abort();
  // The worker was blocked reading a head that never comes; it lets go without the server
  // doing anything.
  EXPECT_TRUE(wait_idle());
  EXPECT_EQ(server_.parked(), 1u) << "the server has still not answered";
  ex_.poll();
  EXPECT_EQ(rec.callbacks(), 0);
  handle->abort();  // idempotent
  handle.reset();
  ex_.poll();
  EXPECT_EQ(rec.callbacks(), 0);
}

TEST_F(NativeHttpClientTest, AbortDuringALongLivedStreamFreesTheWorkerAndStopsCallbacks) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/sse")), rec);
  feed->push("data: 1\n\n");
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.chunks >= 1; }));
  handle.reset();  // destroying the handle aborts
  EXPECT_TRUE(wait_idle()) << "the idle stream's blocked read must return";
  feed->push("data: 2\n\n");
  ex_.run_for(Millis(50));
  EXPECT_EQ(rec.body, "data: 1\n\n");
  EXPECT_EQ(rec.completes, 0);
}

TEST_F(NativeHttpClientTest, AbortInsideItsOwnChunkCallbackStopsEverythingAfterIt) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.start();
  client();
  Recorder rec;
  std::unique_ptr<HttpRequestHandle> handle;
  rec.on_chunk = [&] { handle.reset(); };  // destroys the handle (and aborts) mid-callback
  handle = send(get(server_.url("/sse")), rec);
  // Two pieces in one go: the second may already be posted when the first aborts.
  feed->push("data: 1\n\n");
  feed->push("data: 2\n\n");
  feed->end();
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.chunks >= 1; }));
  EXPECT_TRUE(wait_idle());
  ex_.run_for(Millis(50));
  EXPECT_EQ(rec.chunks, 1);
  EXPECT_EQ(rec.completes, 0);
}

// ---- redirects -------------------------------------------------------------------------

TEST_F(NativeHttpClientTest, GetRedirectIsFollowedAndReportsTheFinalUrl) {
  server_.get("/old", [](const httplib::Request&, httplib::Response& res) {
    res.status = 307;
    res.set_header("Location", "/new?from=old");
    res.set_content("moved", "text/plain");
  });
  server_.get("/new", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("here", "text/plain");
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/old"));
  r.follow_redirects = true;
  r.headers.add("Accept", "text/event-stream");
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.heads, 1) << "only the final head is reported";
  EXPECT_EQ(rec.head->status, 200);
  EXPECT_EQ(rec.head->final_url, server_.url("/new?from=old"));
  EXPECT_EQ(rec.body, "here");
  ASSERT_EQ(server_.count("GET", "/new"), 1u);
  EXPECT_EQ(server_.requests().back().header("Accept"), "text/event-stream")
      << "the request headers go to the next hop";
}

TEST_F(NativeHttpClientTest, RedirectIsReportedAsItIsWhenNotFollowing) {
  server_.get("/old", [](const httplib::Request&, httplib::Response& res) {
    res.status = 307;
    res.set_header("Location", "/new");
  });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/old")), rec);  // follow_redirects = false
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.head->status, 307);
  EXPECT_EQ(rec.head->headers.get("Location"), "/new");
  EXPECT_EQ(rec.head->final_url, server_.url("/old"));
  EXPECT_EQ(server_.count("GET", "/new"), 0u);
}

TEST_F(NativeHttpClientTest, PostIsNeverRedirected) {
  server_.post("/old", [](const httplib::Request&, httplib::Response& res) {
    res.status = 307;
    res.set_header("Location", "/new");
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/old"));
  r.method = "POST";
  r.follow_redirects = true;
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.head->status, 307);
  EXPECT_EQ(server_.count("POST", "/new"), 0u);
}

TEST_F(NativeHttpClientTest, RedirectLoopFailsAfterMaxRedirects) {
  server_.get("/loop", [](const httplib::Request&, httplib::Response& res) {
    res.status = 302;
    res.set_header("Location", "/loop");
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/loop"));
  r.follow_redirects = true;
  r.max_redirects = 3;
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message, "too many redirects")) << rec.done->error();
  EXPECT_EQ(server_.count("GET", "/loop"), 4u) << "the first request and 3 hops";
  EXPECT_EQ(rec.heads, 0);
}

// ---- connection failures and bad requests ----------------------------------------------

// A loopback port that refuses connections: bound (so nobody else takes it), not listening.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A loopback port whose connects never complete: a listener with a full accept queue that
// never accepts (the kernel drops further SYNs).
class BlackholePort {
 public:
  BlackholePort() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    addr_.sin_family = AF_INET;
    addr_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr_), sizeof addr_);
    ::listen(listener_, 0);
    socklen_t len = sizeof addr_;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr_), &len);
    for (int i = 0; i < 4; ++i) {  // fill the accept queue
      int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      ::connect(s, reinterpret_cast<sockaddr*>(&addr_), sizeof addr_);
      fillers_.push_back(s);
    }
  }
  ~BlackholePort() {
    for (int s : fillers_) ::close(s);
    ::close(listener_);
  }
  int port() const { return ntohs(addr_.sin_port); }

 private:
  int listener_ = -1;
  sockaddr_in addr_{};
  std::vector<int> fillers_;
};

TEST_F(NativeHttpClientTest, ConnectionRefusedIsATransportErrorNamingTheUrl) {
  server_.start();
  client();
  RefusingPort refusing;
  const std::string url = "http://127.0.0.1:" + std::to_string(refusing.port()) + "/mcp";
  HttpRequest r = get(url);
  r.method = "POST";
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  const Error& e = rec.done->error();
  EXPECT_EQ(e.code, ErrorCode::transport) << e;
  EXPECT_TRUE(contains(e.message, "POST " + url)) << e;
  EXPECT_TRUE(contains(e.message, "could not connect")) << e;
  EXPECT_TRUE(contains(e.message, "httplib: Connection")) << e;
  EXPECT_EQ(rec.heads, 0);
}

TEST_F(NativeHttpClientTest, UnresolvableHostIsATransportErrorNamingTheHost) {
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get("http://mcprt-no-such-host.invalid/mcp"), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message,
                       "could not resolve host \"mcprt-no-such-host.invalid\""))
      << rec.done->error();
}

TEST_F(NativeHttpClientTest, ConnectThatNeverCompletesTimesOut) {
  server_.start();
  client();
  BlackholePort blackhole;
  HttpRequest r = get("http://127.0.0.1:" + std::to_string(blackhole.port()) + "/");
  r.timeout_ms = 200;
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::timeout) << rec.done->error();
  EXPECT_TRUE(wait_idle());
}

TEST_F(NativeHttpClientTest, AbortWhileConnectingFreesTheWorker) {
  server_.start();
  client();
  BlackholePort blackhole;
  Recorder rec;
  auto handle = send(get("http://127.0.0.1:" + std::to_string(blackhole.port()) + "/"), rec);
  // Let the worker get into connect() (nothing observable marks it; a short pump suffices,
  // and the test is just as valid if the abort lands earlier).
  ex_.run_for(Millis(50));
  handle->abort();
  EXPECT_TRUE(wait_idle()) << "a pending connect must be interrupted (connect timeout is 30 s)";
  ex_.poll();
  EXPECT_EQ(rec.callbacks(), 0);
}

TEST_F(NativeHttpClientTest, InvalidRequestsFailInSendAndRunNoCallback) {
  server_.start();
  client();
  for (const std::string url : {"ftp://example.com/x", "not a url", "/relative/path", ""}) {
    Recorder rec;
    auto r = client_->send(get(url), rec.make());
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << r.error();
    ex_.poll();
    EXPECT_EQ(rec.callbacks(), 0);
  }
  HttpRequest injected = get(server_.url("/x"));
  injected.headers.add("X-Evil", "a\r\nX-Injected: 1");
  Recorder rec;
  auto r = client_->send(injected, rec.make());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_argument) << r.error();
  ex_.poll();
  EXPECT_EQ(rec.callbacks(), 0);
  EXPECT_TRUE(server_.requests().empty());
}

// ---- threads and shutdown --------------------------------------------------------------

TEST_F(NativeHttpClientTest, SequentialRequestsReuseOneWorker) {
  server_.get("/json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  server_.start();
  client();
  for (int i = 0; i < 5; ++i) {
    Recorder rec;
    auto handle = send(get(server_.url("/json")), rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_TRUE(rec.done->ok()) << rec.done->error();
    ASSERT_TRUE(wait_idle());
  }
  EXPECT_EQ(client_->thread_count(), 1u);
}

TEST_F(NativeHttpClientTest, RequestsBeyondMaxThreadsWaitForAFreeWorker) {
  std::vector<std::shared_ptr<ChunkFeed>> feeds{server_.make_feed(), server_.make_feed()};
  server_.get(R"(/sse/(\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    feeds.at(std::stoul(req.matches[1].str()))->attach(res, "text/event-stream");
  });
  server_.get("/json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  server_.start();
  NativeHttpClientOptions options;
  options.max_threads = 2;
  client(options);
  Recorder s0, s1, quick;
  auto h0 = send(get(server_.url("/sse/0")), s0);
  auto h1 = send(get(server_.url("/sse/1")), s1);
  ASSERT_TRUE(pump_until(ex_, [&] { return s0.head && s1.head; }));
  auto hq = send(get(server_.url("/json")), quick);
  EXPECT_EQ(client_->thread_count(), 2u);
  EXPECT_EQ(client_->in_flight(), 3u);
  ex_.run_for(Millis(50));
  EXPECT_FALSE(quick.done.has_value()) << "both workers are busy with streams";
  feeds[0]->end();
  ASSERT_TRUE(wait_done(quick));
  EXPECT_TRUE(quick.done->ok()) << quick.done->error();
  EXPECT_LE(client_->thread_count(), 2u);
  feeds[1]->end();
  ASSERT_TRUE(wait_done(s1));
}

TEST_F(NativeHttpClientTest, IdleWorkersBeyondTheLimitExit) {
  std::vector<std::shared_ptr<ChunkFeed>> feeds;
  for (int i = 0; i < 4; ++i) feeds.push_back(server_.make_feed());
  server_.get(R"(/sse/(\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    feeds.at(std::stoul(req.matches[1].str()))->attach(res, "text/event-stream");
  });
  server_.start();
  NativeHttpClientOptions options;
  options.max_idle_threads = 1;
  client(options);
  std::vector<Recorder> recs(4);
  std::vector<std::unique_ptr<HttpRequestHandle>> handles;
  for (int i = 0; i < 4; ++i) {
    handles.push_back(send(get(server_.url("/sse/" + std::to_string(i))), recs[i]));
  }
  ASSERT_TRUE(pump_until(ex_, [&] {
    for (auto& r : recs) {
      if (!r.head) return false;
    }
    return true;
  }));
  EXPECT_EQ(client_->thread_count(), 4u) << "one worker per open stream";
  for (auto& f : feeds) f->end();
  for (auto& r : recs) ASSERT_TRUE(wait_done(r));
  EXPECT_TRUE(poll_until(ex_, [&] { return client_->thread_count() == 1; }))
      << client_->thread_count() << " workers alive";
}

TEST_F(NativeHttpClientTest, DestroyingTheClientJoinsEveryWorkerAndReportsAborted) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.get("/hang", [&](const httplib::Request&, httplib::Response& res) { server_.park(res); });
  server_.start();
  const std::size_t threads_before = thread_count_of_self();
  client();
  Recorder stream, silent;
  auto h1 = send(get(server_.url("/sse")), stream);
  auto h2 = send(get(server_.url("/hang")), silent);
  feed->push("data: 1\n\n");
  ASSERT_TRUE(pump_until(ex_, [&] { return stream.chunks >= 1; }));
  ASSERT_TRUE(poll_until(ex_, [&] { return server_.parked() == 1; }));
  EXPECT_GT(thread_count_of_self(), threads_before);

  client_.reset();  // must return: both workers are blocked in reads
  // join() returns once a worker has finished, but the kernel may list its task in
  // /proc/self/task for a moment longer; wait for the listing to catch up.
  EXPECT_TRUE(poll_until(ex_, [&] { return thread_count_of_self() == threads_before; }))
      << "no worker outlives the client: " << thread_count_of_self() << " threads, "
      << threads_before << " before";

  // Handles still alive: their requests end with ErrorCode::aborted, once.
  ASSERT_TRUE(pump_until(ex_, [&] { return stream.done && silent.done; }));
  ASSERT_FALSE(stream.done->ok());
  EXPECT_EQ(stream.done->error().code, ErrorCode::aborted) << stream.done->error();
  ASSERT_FALSE(silent.done->ok());
  EXPECT_EQ(silent.done->error().code, ErrorCode::aborted) << silent.done->error();
  EXPECT_TRUE(stream.violations.empty()) << stream.violations.front();
  h1->abort();  // harmless after the client is gone
  h1.reset();
  h2.reset();
}

TEST_F(NativeHttpClientTest, DestroyingTheClientAfterAbortsReportsNothing) {
  server_.get("/hang", [&](const httplib::Request&, httplib::Response& res) { server_.park(res); });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/hang")), rec);
  ASSERT_TRUE(poll_until(ex_, [&] { return server_.parked() == 1; }));
  handle.reset();
  client_.reset();
  ex_.run_for(Millis(20));
  EXPECT_EQ(rec.callbacks(), 0);
}

// ---- TLS -------------------------------------------------------------------------------

std::string tls_fixture(const std::string& name) {
  return std::string(MCPRT_SOURCE_DIR) + "/tests/fixtures/tls/" + name;
}

class NativeHttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<LoopbackHttpServer>(
        LoopbackHttpServer::Tls{tls_fixture("server.pem"), tls_fixture("server.key")});
    server_->get("/json", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"secure":true})", "application/json");
    });
    server_->start();
  }

  void fetch(NativeHttpClientOptions options, Recorder& rec) {
    NativeHttpClient client(ex_, std::move(options));
    HttpRequest r;
    r.url = server_->url("/json");
    auto handle = client.send(r, rec.make());
    EXPECT_TRUE(handle.ok()) << handle.error();
    EXPECT_TRUE(pump_until(ex_, [&] { return rec.done.has_value(); }));
  }

  NativeExecutor ex_;
  std::unique_ptr<LoopbackHttpServer> server_;
};

TEST_F(NativeHttpsTest, CertificateFromAnUnknownCaIsRejected) {
  Recorder rec;
  fetch({}, rec);  // the system store does not know the test CA
  ASSERT_TRUE(rec.done.has_value());
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message, "certificate could not be verified"))
      << rec.done->error();
  EXPECT_EQ(rec.heads, 0);
}

TEST_F(NativeHttpsTest, CertificateFromATrustedCaIsAccepted) {
  NativeHttpClientOptions options;
  options.ca_cert_file = tls_fixture("ca.pem");
  Recorder rec;
  fetch(options, rec);
  ASSERT_TRUE(rec.done.has_value());
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.head->status, 200);
  EXPECT_EQ(rec.body, R"({"secure":true})");
}

}  // namespace
}  // namespace mcprt::native
