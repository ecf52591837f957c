// NativeHttpClient (libcurl multi driven by the executor's loop) against in-process loopback servers:
// cpp-httplib ones (loopback_http_server.hpp) for well-formed HTTP, and raw TCP ones
// (hostile_support.hpp's RawHttpServer) for what an HTTP library would not send and for
// counting connections. Covered: the seam's callback sequence, streaming, errors, timeouts,
// redirects (hop caps, https→http, credentials across origins), abort in every phase,
// shutdown, keep-alive and the connection bounds, the response-head caps (with the memory a
// header flood costs), TLS verification; and the pure response-head reader on its own.
//
// No sleeps and no timed assertions: slow servers are ChunkFeeds the test drives, silent
// servers are parked handlers, and "returns promptly" is shown by the client letting go of
// a request (in_flight() reaches 0) while the server still says nothing.

#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hostile_support.hpp"
#include "loopback_http_server.hpp"
#include "mcprt/native/http_client.hpp"
#include "native_http_headers.hpp"
#include "native_test_support.hpp"

namespace mcprt::native {
namespace native_http_client_test {  // this file's own names in a unity batch
namespace {

using test::ChunkFeed;
using test::LoopbackHttpServer;
using test::poll_until;
using test::pump_until;
using test::RawHttpServer;

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

// A field of /proc/self/status in KiB (VmRSS, VmHWM), or -1.
long proc_status_kib(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// Resets this process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0), so a test can
// measure its own peak regardless of what earlier tests used.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out.flush());
}

// A gate raw-server handlers wait at until open(), or until their server is destroyed.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  // True once opened; false when the server is stopping.
  bool wait(const RawHttpServer::Connection& c) {
    std::unique_lock lock(mutex_);
    while (!open_) {
      if (c.stopping()) return false;
      changed_.wait_for(lock, std::chrono::milliseconds(10));  // re-check stopping()
    }
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

std::string ok_json(const std::string& body = "{}") {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string chunk(const std::string& bytes) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
  return size + bytes + "\r\n";
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
  // A JSON-RPC ping POSTed to `url` with request id `id`.
  static HttpRequest ping(std::string url, int id) {
    HttpRequest r = get(std::move(url));
    r.method = "POST";
    r.headers.add("Content-Type", "application/json");
    r.body = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"ping"})";
    return r;
  }

  bool wait_done(Recorder& rec) {
    return pump_until(ex_, [&] { return rec.done.has_value(); });
  }
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
  server_.post("/mcp",
               [](const httplib::Request& req, httplib::Response& res) { res.status = 202; });
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

// A body far larger than the socket buffers and the 1 MiB the client holds undelivered:
// libcurl is paused whenever 1 MiB waits for the loop and resumed once it was delivered,
// and the sockets that stay readable between turns are drained, so every byte arrives, in
// order, and no delivery is over the hold.
TEST_F(NativeHttpClientTest, ALargeBodyArrivesWholeAndInOrderThroughThePauses) {
  std::string big(24 * 1024 * 1024, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  server_.get("/big", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(big, "application/octet-stream");
  });
  server_.start();
  client();
  Recorder rec;
  std::size_t largest_chunk = 0;
  std::size_t last_size = 0;
  rec.on_chunk = [&] {
    largest_chunk = std::max(largest_chunk, rec.body.size() - last_size);
    last_size = rec.body.size();
  };
  auto handle = send(get(server_.url("/big")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.body.size(), big.size());
  EXPECT_TRUE(rec.body == big) << "the body arrived changed or out of order";
  EXPECT_GT(rec.chunks, 1);
  EXPECT_LE(largest_chunk, 1024u * 1024u + 64u * 1024u);  // the hold plus one libcurl read
  EXPECT_TRUE(wait_idle());
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
  server_.post("/hang",
               [&](const httplib::Request&, httplib::Response& res) { server_.park(res); });
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
  EXPECT_TRUE(wait_idle()) << "the client must give up the request";
}

TEST_F(NativeHttpClientTest, TimeoutMsDoesNotCutAStreamWhoseHeadArrived) {
  auto feed = server_.make_feed();
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/sse"));
  // Short, but long enough for the head to arrive on a loaded 2-core machine (50 ms was
  // not, now and then).
  r.timeout_ms = 250;
  Recorder rec;
  auto handle = send(r, rec);
  feed->push("data: 1\n\n");
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.chunks >= 1 || rec.done.has_value(); }));
  ASSERT_EQ(rec.chunks, 1) << (rec.done ? rec.done->error().message : "");
  // Well past timeout_ms, with the stream idle: still open.
  ex_.run_for(Millis(500));
  EXPECT_FALSE(rec.done.has_value());
  feed->push("data: 2\n\n");
  feed->end();
  ASSERT_TRUE(wait_done(rec));
  EXPECT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.body, "data: 1\n\ndata: 2\n\n");
}

TEST_F(NativeHttpClientTest, AbortWhileTheServerIsSilentDropsTheTransferAndRunsNoCallback) {
  server_.get("/hang", [&](const httplib::Request&, httplib::Response& res) { server_.park(res); });
  server_.start();
  client();
  Recorder rec;
  auto handle = send(get(server_.url("/hang")), rec);
  ASSERT_TRUE(poll_until(ex_, [&] { return server_.parked() == 1; }));
  handle->abort();
  // The transfer was waiting for a head that never comes; it is dropped without the
  // server doing anything.
  EXPECT_TRUE(wait_idle());
  EXPECT_EQ(server_.parked(), 1u) << "the server has still not answered";
  ex_.poll();
  EXPECT_EQ(rec.callbacks(), 0);
  handle->abort();  // idempotent
  handle.reset();
  ex_.poll();
  EXPECT_EQ(rec.callbacks(), 0);
}

TEST_F(NativeHttpClientTest, AbortDuringALongLivedStreamDropsTheTransferAndStopsCallbacks) {
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
  EXPECT_TRUE(wait_idle()) << "the idle stream's transfer must be dropped";
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
  r.headers.add("Authorization", "Bearer same-origin");
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
  EXPECT_EQ(server_.requests().back().header("Authorization"), "Bearer same-origin")
      << "a hop within the origin keeps the credentials";
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
  // One sentence: the request, the cause (the OS's reason), nothing said twice.
  EXPECT_EQ(e.message, "HTTP POST " + url + " failed: could not connect (connection refused)") << e;
  EXPECT_EQ(e.data.value("curl_code", 0), 7) << e;  // CURLE_COULDNT_CONNECT, for a program
  EXPECT_EQ(rec.heads, 0);
}

TEST_F(NativeHttpClientTest, AServerThatClosesTheConnectionUnansweredIsNamedAsSuchOnce) {
  server_.start();
  client();
  RawHttpServer hang_up([](RawHttpServer::Connection&) {});  // reads the head, then closes
  const std::string url = hang_up.url("/mcp?token=s3cret");
  HttpRequest r = get(url);
  r.method = "POST";
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  const Error& e = rec.done->error();
  EXPECT_EQ(e.code, ErrorCode::transport) << e;
  EXPECT_EQ(e.message, "HTTP POST " + hang_up.url("/mcp?token=***") +
                           " failed: the server closed the connection without answering")
      << e;
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
  EXPECT_TRUE(
      contains(rec.done->error().message, "could not resolve host \"mcprt-no-such-host.invalid\""))
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

TEST_F(NativeHttpClientTest, ConnectThatNeverCompletesFailsAfterConnectTimeoutMs) {
  server_.start();
  NativeHttpClientOptions options;
  options.connect_timeout_ms = 200;
  client(options);
  BlackholePort blackhole;
  Recorder rec;
  auto handle = send(get("http://127.0.0.1:" + std::to_string(blackhole.port()) + "/"), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message, "connecting timed out after 200 ms"))
      << rec.done->error();
  EXPECT_TRUE(wait_idle());
}

TEST_F(NativeHttpClientTest, ServerHangingUpMidUploadIsATransportErrorNotASignal) {
  RawHttpServer raw([](RawHttpServer::Connection&) {});  // reads the head, then closes
  client();
  HttpRequest r = get(raw.url("/upload"));
  r.method = "POST";
  r.body.assign(16 * 1024 * 1024, 'x');  // still being written when the peer is gone
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));  // the process is still here: no SIGPIPE
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message, raw.url("/upload"))) << rec.done->error();
}

TEST_F(NativeHttpClientTest, AbortWhileConnectingDropsTheTransfer) {
  server_.start();
  client();
  BlackholePort blackhole;
  Recorder rec;
  auto handle = send(get("http://127.0.0.1:" + std::to_string(blackhole.port()) + "/"), rec);
  // Let the transfer get into its connect (nothing observable marks it; a short pump
  // suffices, and the test is just as valid if the abort lands earlier).
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

// ---- threads, connections and shutdown -------------------------------------------------

TEST_F(NativeHttpClientTest, AStreamAndSequentialRequestsRunOnTheLoopWithoutAThread) {
  auto feed = server_.make_feed();
  server_.get("/json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  server_.get("/sse", [&](const httplib::Request&, httplib::Response& res) {
    feed->attach(res, "text/event-stream");
  });
  server_.start();
  const std::size_t threads_before = thread_count_of_self();
  client();
  Recorder stream;
  auto stream_handle = send(get(server_.url("/sse")), stream);
  feed->push("data: 1\n\n");
  ASSERT_TRUE(pump_until(ex_, [&] { return stream.chunks >= 1; }));
  for (int i = 0; i < 5; ++i) {
    Recorder rec;
    auto handle = send(get(server_.url("/json")), rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  }
  // The server's threads are counted in threads_before (it started first); a stream and
  // five requests added no thread: libcurl runs on the loop that pumped them (IP literals
  // need no DNS resolver thread).
  EXPECT_EQ(thread_count_of_self(), threads_before);
  feed->end();
  ASSERT_TRUE(wait_done(stream));
}

TEST_F(NativeHttpClientTest, RequestsBeyondMaxConnectionsWaitForAFreeConnection) {
  std::vector<std::shared_ptr<ChunkFeed>> feeds{server_.make_feed(), server_.make_feed()};
  server_.get(R"(/sse/(\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    feeds.at(std::stoul(req.matches[1].str()))->attach(res, "text/event-stream");
  });
  server_.get("/json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}", "application/json");
  });
  server_.start();
  NativeHttpClientOptions options;
  options.max_connections = 2;
  client(options);
  Recorder s0, s1, quick;
  auto h0 = send(get(server_.url("/sse/0")), s0);
  auto h1 = send(get(server_.url("/sse/1")), s1);
  ASSERT_TRUE(pump_until(ex_, [&] { return s0.head && s1.head; }));
  auto hq = send(get(server_.url("/json")), quick);
  EXPECT_EQ(client_->in_flight(), 3u);
  ex_.run_for(Millis(50));
  EXPECT_FALSE(quick.done.has_value()) << "both connections are busy with streams";
  EXPECT_EQ(server_.count("GET", "/json"), 0u) << "the third request waits, unsent";
  feeds[0]->end();
  ASSERT_TRUE(wait_done(quick));
  EXPECT_TRUE(quick.done->ok()) << quick.done->error();
  feeds[1]->end();
  ASSERT_TRUE(wait_done(s1));
}

// A keep-alive raw server: every request on a connection is answered, in order; requests
// whose target starts with `held` wait at the gate first.
RawHttpServer::Handler keep_alive_handler(Gate& gate, const std::string& held = "/held") {
  return [&gate, held](RawHttpServer::Connection& c) {
    do {
      if (!c.read_body()) return;
      if (c.request().target.rfind(held, 0) == 0 && !gate.wait(c)) return;
      if (!c.write(ok_json())) return;
    } while (c.next_request());
  };
}

TEST_F(NativeHttpClientTest, SequentialRequestsToAnOriginReuseOneConnection) {
  Gate unused;
  RawHttpServer raw(keep_alive_handler(unused));
  client();
  for (int i = 0; i < 5; ++i) {
    Recorder rec;
    auto handle = send(ping(raw.url("/mcp"), i), rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_TRUE(rec.done->ok()) << rec.done->error();
    EXPECT_EQ(rec.body, "{}");
  }
  EXPECT_EQ(raw.request_count(), 5u);
  EXPECT_EQ(raw.connection_count(), 1u) << "keep-alive: five requests over one connection";
  EXPECT_EQ(raw.requests().back().body, R"({"jsonrpc":"2.0","id":4,"method":"ping"})");
}

// TCP sockets in CLOSE_WAIT (the peer closed, this end did not yet) whose remote port is
// `port`, the test's own server: only the client under test connects to it
// (/proc/net/tcp: "sl local rem st", addresses as HEXIP:HEXPORT, st 08).
std::size_t close_wait_sockets_to(int port) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);
  std::size_t n = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string sl, local, remote, state;
    if (!(fields >> sl >> local >> remote >> state)) continue;
    const auto colon = remote.rfind(':');
    if (state == "08" && colon != std::string::npos &&
        std::stoi(remote.substr(colon + 1), nullptr, 16) == port) {
      ++n;
    }
  }
  return n;
}

// The client keeps a cached connection's socket in its epoll set while it is idle; a
// server that closes it then (no "Connection: close": the client thought it reusable) makes
// it stir unwatched. It must leave the set, and the next request must get a fresh
// connection (whose socket may well have the same number) and its answer.
TEST_F(NativeHttpClientTest, AnIdleConnectionTheServerClosesIsReplacedForTheNextRequest) {
  RawHttpServer raw([](RawHttpServer::Connection& c) {
    if (c.read_body()) c.write(ok_json());  // then the server closes the connection
  });
  client();
  for (int i = 0; i < 4; ++i) {
    Recorder rec;
    auto handle = send(ping(raw.url("/mcp"), i), rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_TRUE(rec.done->ok()) << "request " << i << ": " << rec.done->error();
    EXPECT_EQ(rec.body, "{}");
    // Every other time, the next request goes out only once the server's FIN has reached
    // the idle connection (its socket in CLOSE_WAIT): a turn of the loop sees that event
    // before the request is sent. Otherwise the request meets it first.
    if (i % 2 == 0) {
      EXPECT_TRUE(poll_until(ex_, [&] { return close_wait_sockets_to(raw.port()) == 1; }));
    }
  }
  EXPECT_EQ(raw.request_count(), 4u);
  EXPECT_EQ(raw.connection_count(), 4u) << "one connection per request: the server closed each";
}

TEST_F(NativeHttpClientTest, PostsGoThroughOnTheirOwnConnectionWhileAnSseStreamIsOpen) {
  Gate end_stream;
  RawHttpServer raw([&](RawHttpServer::Connection& c) {
    do {
      if (!c.read_body()) return;
      if (c.request().method == "GET") {
        if (!c.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n" +
                     chunk("data: 1\n\n"))) {
          return;
        }
        if (!end_stream.wait(c) || !c.write("0\r\n\r\n")) return;
      } else if (!c.write(ok_json())) {
        return;
      }
    } while (c.next_request());
  });
  client();
  Recorder stream;
  HttpRequest g = get(raw.url("/mcp"));
  g.headers.add("Accept", "text/event-stream");
  auto stream_handle = send(g, stream);
  ASSERT_TRUE(pump_until(ex_, [&] { return stream.body == "data: 1\n\n"; })) << stream.body;

  for (int i = 0; i < 3; ++i) {
    HttpRequest p = get(raw.url("/mcp"));
    p.method = "POST";
    p.body = "{}";
    Recorder rec;
    auto handle = send(p, rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  }
  EXPECT_FALSE(stream.done.has_value()) << "the stream is still open";
  EXPECT_EQ(raw.connection_count(), 2u) << "the stream on one connection, the POSTs on another";
  end_stream.open();
  ASSERT_TRUE(wait_done(stream));
  EXPECT_TRUE(stream.done->ok()) << stream.done->error();
}

TEST_F(NativeHttpClientTest, IdleConnectionsBeyondTheLimitAreClosed) {
  std::vector<Gate> gates(4);
  Gate again;
  RawHttpServer raw([&](RawHttpServer::Connection& c) {
    do {
      if (!c.read_body()) return;
      const std::string& target = c.request().target;
      Gate& at = target.rfind("/held/", 0) == 0 ? gates.at(std::stoul(target.substr(6))) : again;
      if (!at.wait(c) || !c.write(ok_json())) return;
    } while (c.next_request());
  });
  NativeHttpClientOptions options;
  options.max_idle_connections = 1;
  client(options);
  std::vector<Recorder> held(4);
  std::vector<std::unique_ptr<HttpRequestHandle>> handles;
  for (int i = 0; i < 4; ++i) {
    handles.push_back(send(get(raw.url("/held/" + std::to_string(i))), held[i]));
  }
  ASSERT_TRUE(poll_until(ex_, [&] { return raw.request_count() == 4; }));
  EXPECT_EQ(raw.connection_count(), 4u) << "concurrent requests, one connection each";
  for (int i = 0; i < 4; ++i) {
    gates[i].open();
    ASSERT_TRUE(wait_done(held[i]));
    ASSERT_TRUE(held[i].done->ok()) << held[i].done->error();
    // The client let go of it (its connection went back to the cache) before the next.
    ASSERT_TRUE(poll_until(ex_, [&] { return client_->in_flight() == std::size_t(3 - i); }));
  }
  // Two at once (both held until the server has both): one takes the single idle
  // connection kept, the other needs a new one (with a larger pool both would find one).
  Recorder a, b;
  auto ha = send(get(raw.url("/again")), a);
  auto hb = send(get(raw.url("/again")), b);
  ASSERT_TRUE(poll_until(ex_, [&] { return raw.request_count() == 6; }));
  again.open();
  ASSERT_TRUE(wait_done(a));
  ASSERT_TRUE(wait_done(b));
  EXPECT_TRUE(a.done->ok() && b.done->ok());
  EXPECT_EQ(raw.connection_count(), 5u) << "only one of the four idle connections was kept";
}

TEST_F(NativeHttpClientTest, ManyOpenStreamsDoNotCostTheOtherRequestsTheirKeepAlive) {
  constexpr int kStreams = 10;  // more than max_idle_connections
  Gate end_streams;
  RawHttpServer raw([&](RawHttpServer::Connection& c) {
    do {
      if (!c.read_body()) return;
      if (c.request().method == "GET") {
        if (!c.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n" +
                     chunk(": open\n\n")) ||
            !end_streams.wait(c) || !c.write("0\r\n\r\n")) {
          return;
        }
      } else if (!c.write(ok_json())) {
        return;
      }
    } while (c.next_request());
  });
  NativeHttpClientOptions options;
  options.max_idle_connections = 2;
  client(options);
  std::vector<Recorder> streams(kStreams);
  std::vector<std::unique_ptr<HttpRequestHandle>> handles;
  for (auto& s : streams) handles.push_back(send(get(raw.url("/sse")), s));
  ASSERT_TRUE(pump_until(ex_, [&] {
    for (auto& s : streams) {
      if (s.chunks == 0) return false;
    }
    return true;
  }));
  for (int i = 0; i < 5; ++i) {
    HttpRequest p = get(raw.url("/mcp"));
    p.method = "POST";
    p.body = "{}";
    Recorder rec;
    auto handle = send(p, rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  }
  EXPECT_EQ(raw.connection_count(), static_cast<std::size_t>(kStreams + 1))
      << "the five POSTs shared one connection next to the streams";
  end_streams.open();
  for (auto& s : streams) ASSERT_TRUE(wait_done(s));
}

TEST_F(NativeHttpClientTest, NoKeepAliveWhenMaxIdleConnectionsIsZero) {
  Gate unused;
  RawHttpServer raw(keep_alive_handler(unused));
  NativeHttpClientOptions options;
  options.max_idle_connections = 0;
  client(options);
  for (int i = 0; i < 3; ++i) {
    Recorder rec;
    auto handle = send(get(raw.url("/x")), rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  }
  EXPECT_EQ(raw.connection_count(), 3u);
}

TEST_F(NativeHttpClientTest, DestroyingTheClientClosesConnectionsAndReportsAborted) {
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

  EXPECT_EQ(thread_count_of_self(), threads_before);  // the loop runs libcurl

  client_.reset();  // must return at once: nothing waits for the silent server
  EXPECT_EQ(thread_count_of_self(), threads_before);
  // The stream's connection is closed: the server's next write fails.
  feed->push("data: 2\n\n");
  EXPECT_TRUE(poll_until(ex_, [&] { return feed->finished(); }));

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

TEST_F(NativeHttpClientTest, DestroyingTheClientInsideAnAnswerEndsEveryOtherRequestOnce) {
  // Three answers read by one turn reach their callers as the turn ends; the first
  // caller destroys the client in the middle of that delivery.
  std::mutex mutex;
  std::condition_variable changed;
  int arrived = 0, answered = 0;
  bool release = false;
  RawHttpServer raw([&](RawHttpServer::Connection& c) {
    std::unique_lock lock(mutex);
    ++arrived;
    changed.wait_for(lock, std::chrono::seconds(10), [&] { return release; });
    lock.unlock();
    // On loopback the bytes are in the client's socket once write() returned.
    if (c.write(ok_json(R"({"ok":true})"))) {
      lock.lock();
      ++answered;
    }
  });
  client();
  Recorder first, second, third;
  first.on_chunk = [&] { client_.reset(); };
  auto h1 = send(get(raw.url("/a")), first);
  auto h2 = send(get(raw.url("/b")), second);
  auto h3 = send(get(raw.url("/c")), third);
  auto locked = [&](const std::function<bool()>& pred) {
    std::lock_guard lock(mutex);
    return pred();
  };
  ASSERT_TRUE(poll_until(ex_, [&] { return locked([&] { return arrived == 3; }); }));
  // The loop stays still while the server answers all three, so one turn reads them.
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  changed.notify_all();
  for (int i = 0; i < 10000 && !locked([&] { return answered == 3; }); ++i) {
    std::this_thread::sleep_for(Millis(1));
  }
  ASSERT_TRUE(locked([&] { return answered == 3; }));
  ASSERT_TRUE(pump_until(ex_, [&] { return first.done && second.done && third.done; }));
  EXPECT_FALSE(client_);
  // Every request ends once, answered: the other two answers were read in the same turn,
  // and reach their callers although the client is gone by then.
  for (Recorder* r : {&first, &second, &third}) {
    EXPECT_EQ(r->completes, 1);
    ASSERT_TRUE(r->done->ok()) << r->done->error();
    EXPECT_EQ(r->body, R"({"ok":true})");
  }
  ex_.run_for(Millis(20));
  EXPECT_EQ(first.completes + second.completes + third.completes, 3);
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

// ---- what goes on the wire -------------------------------------------------------------

TEST_F(NativeHttpClientTest, RequestTargetGoesOutAsWrittenAndUserinfoIsNeverSent) {
  Gate unused;
  RawHttpServer raw(keep_alive_handler(unused));
  client();
  const std::string url =
      "http://alice:secret@127.0.0.1:" + std::to_string(raw.port()) + "/a%2Fb/%7E/x?y=%41&z=a%20b";
  HttpRequest r = get(url);
  r.headers.add("X-Empty", "");
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  auto seen = raw.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/a%2Fb/%7E/x?y=%41&z=a%20b") << "wire-form targets are not re-encoded";
  EXPECT_FALSE(seen[0].has_header("Authorization")) << "no implicit Basic auth from userinfo";
  EXPECT_TRUE(seen[0].has_header("X-Empty")) << "an empty value is sent, not dropped";
  EXPECT_EQ(seen[0].header("X-Empty"), "");
  EXPECT_EQ(seen[0].header("Host"), "127.0.0.1:" + std::to_string(raw.port()));
  EXPECT_FALSE(seen[0].has_header("Accept-Encoding")) << "no compression is asked for";
}

TEST_F(NativeHttpClientTest, LargePostBodyGoesOutWholeWithoutExpectOrAnInventedContentType) {
  Gate unused;
  RawHttpServer raw(keep_alive_handler(unused));
  client();
  HttpRequest r = get(raw.url("/mcp"));
  r.method = "POST";
  r.body.assign(2 * 1024 * 1024, 'x');
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  auto seen = raw.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].body.size(), r.body.size());
  EXPECT_FALSE(seen[0].has_header("Expect")) << "no 100-continue round trip";
  EXPECT_FALSE(seen[0].has_header("Content-Type")) << "the caller gave no type";
  EXPECT_EQ(seen[0].header("Content-Length"), std::to_string(r.body.size()));
}

// Finished easy handles go back to a pool and serve the next requests: what one request set
// (its method, body, headers) must never reach the next one, of the same kind or another.
TEST_F(NativeHttpClientTest, EachRequestGoesOutAsItsOwnWhateverTheOneBeforeWas) {
  Gate unused;
  RawHttpServer raw(keep_alive_handler(unused));
  client();
  struct Step {
    const char* method;
    std::string body;
    const char* header;  // a header only this request sends
  };
  // Each kind twice in a row, then another kind.
  const std::vector<Step> steps = {
      {"POST", "first body", "X-1"}, {"POST", "2nd", "X-2"},  {"DELETE", "", "X-3"},
      {"DELETE", "", "X-4"},         {"GET", "", "X-5"},      {"GET", "", "X-6"},
      {"POST", "", "X-7"},           {"PUT", "eighth", "X-8"}, {"POST", "ninth", "X-9"},
  };
  for (const Step& step : steps) {
    HttpRequest r = get(raw.url("/mcp"));
    r.method = step.method;
    r.body = step.body;
    r.headers.add(step.header, "yes");
    Recorder rec;
    auto handle = send(r, rec);
    ASSERT_TRUE(wait_done(rec)) << step.method;
    ASSERT_TRUE(rec.done->ok()) << step.method << ": " << rec.done->error();
  }
  auto seen = raw.requests();
  ASSERT_EQ(seen.size(), steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i + 1) + ", " + steps[i].method);
    EXPECT_EQ(seen[i].method, steps[i].method);
    EXPECT_EQ(seen[i].body, steps[i].body);
    for (std::size_t j = 0; j < steps.size(); ++j) {
      EXPECT_EQ(seen[i].has_header(steps[j].header), i == j) << steps[j].header;
    }
    const bool sends_body = std::string(steps[i].method) == "POST" || !steps[i].body.empty();
    if (sends_body) {
      EXPECT_EQ(seen[i].header("Content-Length"), std::to_string(steps[i].body.size()));
    } else {
      EXPECT_FALSE(seen[i].has_header("Content-Length")) << "no body, so no length";
    }
  }
}

// ---- response-head caps ----------------------------------------------------------------

TEST_F(NativeHttpClientTest, HeaderFloodFailsAtTheFieldCapQuicklyAndWithBoundedMemory) {
  constexpr long kFloodLines = 2'000'000;
  std::atomic<long> lines_written{0};
  std::atomic<bool> server_done{false};
  RawHttpServer raw([&](RawHttpServer::Connection& c) {
    c.read_body();
    if (c.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")) {
      std::string batch;
      for (long line = 0; line < kFloodLines;) {
        batch.clear();
        for (int i = 0; i < 1000; ++i, ++line)
          batch += "X-Flood-" + std::to_string(line) + ": 1\r\n";
        if (!c.write(batch)) break;
        lines_written = line;
      }
    }
    server_done = true;
  });
  client();
  ASSERT_TRUE(reset_peak_rss());
  const long rss_before = proc_status_kib("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  HttpRequest r = get(raw.url("/mcp"));
  r.method = "POST";
  r.body = "{}";
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const long peak_growth_kib = proc_status_kib("VmHWM") - rss_before;

  ASSERT_FALSE(rec.done->ok());
  const Error& e = rec.done->error();
  EXPECT_EQ(e.code, ErrorCode::transport) << e;
  EXPECT_TRUE(contains(e.message, raw.url("/mcp"))) << e;
  EXPECT_TRUE(contains(e.message, "more than 256 header fields")) << e;
  EXPECT_TRUE(contains(e.message, "max_response_header_fields")) << e;
  EXPECT_EQ(e.data.value("limit", ""), "max_response_header_fields") << e;
  EXPECT_EQ(rec.heads, 0);
  // The client closed the connection: the flood stops long before its 2M lines.
  ASSERT_TRUE(poll_until(ex_, [&] { return server_done.load(); }));
  EXPECT_LT(lines_written.load(), kFloodLines);
  EXPECT_LT(peak_growth_kib, 16 * 1024) << "peak RSS grew by " << peak_growth_kib << " KiB";
  std::printf(
      "[ figures  ] header flood: failed after %.1f ms, peak RSS growth %ld KiB, server "
      "wrote %ld of %ld lines before the connection closed\n",
      ms, peak_growth_kib, lines_written.load(), kFloodLines);
  RecordProperty("peak_rss_growth_kib", static_cast<int>(peak_growth_kib));
}

TEST_F(NativeHttpClientTest, OversizedHeadFailsAtTheByteCap) {
  RawHttpServer raw([](RawHttpServer::Connection& c) {
    c.read_body();
    std::string head = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i < 3; ++i)
      head += "X-Big-" + std::to_string(i) + ": " + std::string(30000, 'a') + "\r\n";
    c.write(head + "Content-Length: 0\r\n\r\n");
  });
  client();
  Recorder rec;
  auto handle = send(get(raw.url("/big")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  const Error& e = rec.done->error();
  EXPECT_EQ(e.code, ErrorCode::transport) << e;
  EXPECT_TRUE(contains(e.message, raw.url("/big"))) << e;
  EXPECT_TRUE(contains(e.message, "more than 65536 bytes")) << e;
  EXPECT_TRUE(contains(e.message, "max_response_header_bytes")) << e;
  EXPECT_EQ(rec.heads, 0);
}

TEST_F(NativeHttpClientTest, HeaderCapsComeFromTheOptions) {
  RawHttpServer raw([](RawHttpServer::Connection& c) {
    do {
      const int fields = c.request().target == "/three" ? 3 : 4;
      std::string head = "HTTP/1.1 200 OK\r\n";
      for (int i = 1; i < fields; ++i) head += "X-F" + std::to_string(i) + ": v\r\n";
      if (!c.write(head + "Content-Length: 0\r\n\r\n")) return;  // the last field
    } while (c.next_request());
  });
  NativeHttpClientOptions options;
  options.max_response_header_fields = 3;
  client(options);
  Recorder three, four;
  auto h3 = send(get(raw.url("/three")), three);
  ASSERT_TRUE(wait_done(three));
  EXPECT_TRUE(three.done->ok()) << three.done->error();
  EXPECT_EQ(three.head->headers.size(), 3u);
  auto h4 = send(get(raw.url("/four")), four);
  ASSERT_TRUE(wait_done(four));
  ASSERT_FALSE(four.done->ok());
  EXPECT_TRUE(contains(four.done->error().message, "more than 3 header fields"))
      << four.done->error();
}

TEST_F(NativeHttpClientTest, EndlessInterimHeadsHitTheByteCap) {
  RawHttpServer raw([](RawHttpServer::Connection& c) {
    c.read_body();
    const std::string interim = "HTTP/1.1 102 Processing\r\n\r\n";
    std::string batch;
    for (int i = 0; i < 100; ++i) batch += interim;
    for (int i = 0; i < 100'000 && c.write(batch); ++i) {
    }
  });
  client();
  Recorder rec;
  auto handle = send(get(raw.url("/slow")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_TRUE(contains(rec.done->error().message, "more than 65536 bytes")) << rec.done->error();
  EXPECT_EQ(rec.heads, 0);
}

TEST_F(NativeHttpClientTest, TrailerFloodAfterAChunkedBodyFailsAtTheCap) {
  RawHttpServer raw([](RawHttpServer::Connection& c) {
    c.read_body();
    if (!c.write(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n" +
            chunk("hello") + "0\r\n")) {
      return;
    }
    std::string batch;
    for (int i = 0; i < 1000; ++i) batch += "X-Trailer: 1\r\n";
    for (int i = 0; i < 2000 && c.write(batch); ++i) {
    }
  });
  client();
  Recorder rec;
  auto handle = send(get(raw.url("/t")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_TRUE(contains(rec.done->error().message, "the response trailers have more than 256"))
      << rec.done->error();
  EXPECT_EQ(rec.heads, 1);
}

TEST_F(NativeHttpClientTest, AHeaderLineLongerThanLibcurlTakesFailsTheRequest) {
  RawHttpServer raw([](RawHttpServer::Connection& c) {
    c.read_body();
    c.write("HTTP/1.1 200 OK\r\nX-Huge: " + std::string(300 * 1024, 'a') + "\r\n\r\n");
  });
  client();
  Recorder rec;
  auto handle = send(get(raw.url("/huge")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message, raw.url("/huge"))) << rec.done->error();
  EXPECT_EQ(rec.heads, 0);
}

// ---- abort in each phase, stalls -------------------------------------------------------

TEST_F(NativeHttpClientTest, AbortWhileTheHeadArrivesClosesTheConnectionAndRunsNoCallback) {
  std::atomic<bool> wrote{false};
  std::atomic<bool> saw_close{false};
  RawHttpServer raw([&](RawHttpServer::Connection& c) {
    c.read_body();
    if (!c.write("HTTP/1.1 200 OK\r\nX-Part: 1\r\n")) return;  // and no blank line
    wrote = true;
    saw_close = !c.next_request();  // returns at EOF: the client hung up
  });
  client();
  Recorder rec;
  auto handle = send(get(raw.url("/partial")), rec);
  ASSERT_TRUE(poll_until(ex_, [&] { return wrote.load(); }));
  handle->abort();
  EXPECT_TRUE(wait_idle());
  EXPECT_TRUE(poll_until(ex_, [&] { return saw_close.load(); })) << "the connection is closed";
  ex_.poll();
  EXPECT_EQ(rec.callbacks(), 0);
}

TEST_F(NativeHttpClientTest, UploadTheServerStopsReadingFailsAfterWriteTimeoutMs) {
  Gate never;
  RawHttpServer raw([&](RawHttpServer::Connection& c) { never.wait(c); });  // reads no body
  NativeHttpClientOptions options;
  options.write_timeout_ms = 200;
  client(options);
  HttpRequest r = get(raw.url("/upload"));
  r.method = "POST";
  r.body.assign(64 * 1024 * 1024, 'x');  // far more than the socket buffers hold
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.done->error().code, ErrorCode::transport) << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message, "sending the request stalled"))
      << rec.done->error();
  EXPECT_TRUE(contains(rec.done->error().message, "write_timeout_ms")) << rec.done->error();
  EXPECT_TRUE(wait_idle());
}

TEST_F(NativeHttpClientTest, SilenceAfterTheHeadFailsAfterReadIdleTimeoutMs) {
  Gate never;
  RawHttpServer raw([&](RawHttpServer::Connection& c) {
    c.read_body();
    if (!c.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n" +
                 chunk("data: 1\n\n"))) {
      return;
    }
    never.wait(c);
  });
  NativeHttpClientOptions options;
  options.read_idle_timeout_ms = 200;
  client(options);
  Recorder rec;
  auto handle = send(get(raw.url("/sse")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_FALSE(rec.done->ok());
  EXPECT_EQ(rec.heads, 1);
  EXPECT_EQ(rec.body, "data: 1\n\n");
  EXPECT_TRUE(contains(rec.done->error().message, "sent nothing for 200 ms")) << rec.done->error();
}

// ---- redirects across origins ----------------------------------------------------------

TEST_F(NativeHttpClientTest, FollowedRedirectToAnotherOriginDropsCredentialHeaders) {
  LoopbackHttpServer other;
  other.get("/land", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("landed", "text/plain");
  });
  other.start();
  server_.get("/go", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 302;
    res.set_header("Location", other.url("/land"));
  });
  server_.start();
  client();
  HttpRequest r = get(server_.url("/go"));
  r.follow_redirects = true;
  r.headers.add("Authorization", "Bearer secret-token");
  r.headers.add("Cookie", "sid=1");
  r.headers.add("Mcp-Session-Id", "s-1");
  r.headers.add("MCP-Protocol-Version", "2025-11-25");
  r.headers.add("X-Trace", "t-1");
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.head->final_url, other.url("/land"));
  EXPECT_EQ(rec.body, "landed");
  auto first = server_.requests();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].header("Authorization"), "Bearer secret-token") << "its own origin has it";
  auto seen = other.requests();
  ASSERT_EQ(seen.size(), 1u);
  for (const char* name : {"Authorization", "Cookie", "Mcp-Session-Id", "MCP-Protocol-Version"}) {
    EXPECT_EQ(seen[0].headers.count(name), 0u) << name << " went to another origin";
  }
  EXPECT_EQ(seen[0].header("X-Trace"), "t-1");
}

// ---- proxies from the environment --------------------------------------------------------
// libcurl reads them as curl(1) does: http_proxy (lowercase only: a CGI program's
// HTTP_PROXY may come from a request's "Proxy:" header), https_proxy / HTTPS_PROXY,
// all_proxy / ALL_PROXY, no_proxy / NO_PROXY. The proxy is a raw loopback server that
// records what reaches it; origins under .invalid cannot be resolved, so a request to one
// can only have gone through the proxy.

// Clears every proxy variable for its lifetime (then restores them), so the tests do not
// depend on the environment they run in; set() adds one for this test.
class ProxyEnv {
 public:
  ProxyEnv() {
    for (const char* name : kNames) {
      if (const char* v = std::getenv(name)) saved_.emplace_back(name, v);
      ::unsetenv(name);
    }
  }
  ~ProxyEnv() {
    for (const char* name : kNames) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ProxyEnv(const ProxyEnv&) = delete;
  ProxyEnv& operator=(const ProxyEnv&) = delete;

  void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }
  void clear() {
    for (const char* name : kNames) ::unsetenv(name);
  }

 private:
  static constexpr const char* kNames[] = {"http_proxy", "HTTP_PROXY", "https_proxy",
                                           "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                                           "no_proxy", "NO_PROXY"};
  std::vector<std::pair<std::string, std::string>> saved_;
};

// "http://127.0.0.1:<port>" with optional userinfo.
std::string proxy_url(const RawHttpServer& proxy, const std::string& userinfo = "") {
  return "http://" + (userinfo.empty() ? "" : userinfo + "@") + "127.0.0.1:" +
         std::to_string(proxy.port());
}

TEST_F(NativeHttpClientTest, HttpProxyCarriesPlainHttpRequestsInAbsoluteFormWithItsOwnCredentials) {
  ProxyEnv env;
  RawHttpServer proxy([](RawHttpServer::Connection& c) {
    do {
      if (!c.read_body()) return;
      if (!c.write(ok_json(R"({"via":"proxy"})"))) return;
    } while (c.next_request());
  });
  env.set("http_proxy", proxy_url(proxy, "alice:pw"));
  client();
  HttpRequest r = get("http://origin.invalid:8080/mcp?x=1");
  r.method = "POST";
  r.headers.add("Content-Type", "application/json");
  r.headers.add("Authorization", "Bearer origin-token");
  r.body = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.body, R"({"via":"proxy"})");
  const auto seen = proxy.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "http://origin.invalid:8080/mcp?x=1");
  EXPECT_EQ(seen[0].header("Host"), "origin.invalid:8080");
  EXPECT_EQ(seen[0].header("Proxy-Authorization"), "Basic YWxpY2U6cHc=") << "alice:pw";
  EXPECT_EQ(seen[0].header("Authorization"), "Bearer origin-token")
      << "a plain-http request carries its origin's headers through the proxy";
  EXPECT_EQ(seen[0].body, r.body);
}

TEST_F(NativeHttpClientTest, UppercaseHttpProxyIsIgnoredForHttpAsCurlDoes) {
  ProxyEnv env;
  Gate unused;
  RawHttpServer origin(keep_alive_handler(unused));
  RawHttpServer proxy([](RawHttpServer::Connection& c) { c.write(ok_json()); });
  env.set("HTTP_PROXY", proxy_url(proxy));
  client();
  Recorder rec;
  auto handle = send(get(origin.url("/mcp")), rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(origin.request_count(), 1u);
  EXPECT_EQ(proxy.connection_count(), 0u);
}

TEST_F(NativeHttpClientTest, HttpsProxyGetsAConnectWithoutAnyOfTheOriginsHeaders) {
  for (const char* variable : {"https_proxy", "HTTPS_PROXY"}) {
    SCOPED_TRACE(variable);
    ProxyEnv env;
    RawHttpServer proxy([](RawHttpServer::Connection& c) {
      c.write("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    });
    env.set(variable, proxy_url(proxy));
    client();
    HttpRequest r = get("https://origin.invalid:8443/mcp");
    r.headers.add("Authorization", "Bearer origin-token");
    r.headers.add("Cookie", "sid=1");
    r.headers.add("Mcp-Session-Id", "s-1");
    r.headers.add("X-Trace", "t-1");
    Recorder rec;
    auto handle = send(r, rec);
    ASSERT_TRUE(wait_done(rec));
    ASSERT_FALSE(rec.done->ok());
    EXPECT_EQ(rec.heads, 0) << "the proxy's answer to CONNECT is not the origin's head";
    EXPECT_EQ(rec.done->error().code, ErrorCode::transport);
    EXPECT_TRUE(contains(rec.done->error().message, "https://origin.invalid:8443/mcp"))
        << rec.done->error().message;
    EXPECT_TRUE(contains(rec.done->error().message,
                         "the proxy refused to open a tunnel to origin.invalid:8443"))
        << rec.done->error().message;
    const auto seen = proxy.requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].method, "CONNECT");
    EXPECT_EQ(seen[0].target, "origin.invalid:8443");
    for (const auto& [name, value] : seen[0].headers) {
      EXPECT_FALSE(contains(value, "origin-token") || contains(value, "sid=1") ||
                   contains(value, "s-1") || contains(value, "t-1"))
          << name << ": " << value << " reached the proxy";
    }
    client_.reset();
  }
}

TEST_F(NativeHttpClientTest, NoProxyNamesTheHostsReachedDirectly) {
  Gate unused;
  RawHttpServer origin(keep_alive_handler(unused));
  RawHttpServer proxy([](RawHttpServer::Connection& c) {
    do {
      if (!c.read_body()) return;
      if (!c.write(ok_json(R"({"via":"proxy"})"))) return;
    } while (c.next_request());
  });
  ProxyEnv env;
  client();
  auto fetch = [&]() -> std::string {
    Recorder rec;
    auto handle = send(get(origin.url("/mcp")), rec);
    EXPECT_TRUE(wait_done(rec));
    EXPECT_TRUE(rec.done && rec.done->ok());
    return rec.body;
  };
  for (const char* variable : {"no_proxy", "NO_PROXY"}) {
    SCOPED_TRACE(variable);
    env.clear();
    env.set("http_proxy", proxy_url(proxy));
    env.set(variable, "localhost,127.0.0.1");
    EXPECT_EQ(fetch(), "{}");
  }
  EXPECT_EQ(proxy.connection_count(), 0u);
  EXPECT_EQ(origin.request_count(), 2u);
  // A list without this host: through the proxy again.
  env.clear();
  env.set("http_proxy", proxy_url(proxy));
  env.set("no_proxy", "example.com");
  EXPECT_EQ(fetch(), R"({"via":"proxy"})");
  EXPECT_EQ(origin.request_count(), 2u);
  ASSERT_EQ(proxy.request_count(), 1u);
  EXPECT_EQ(proxy.requests()[0].target, origin.url("/mcp"));
}

TEST_F(NativeHttpClientTest, AProxiedRedirectToAnotherOriginCarriesNoneOfTheFirstOriginsCredentials) {
  ProxyEnv env;
  RawHttpServer proxy([](RawHttpServer::Connection& c) {
    do {
      if (c.request().target == "http://a.invalid/start") {
        if (!c.write("HTTP/1.1 302 Found\r\nLocation: http://b.invalid/land\r\n"
                     "Content-Length: 0\r\n\r\n")) {
          return;
        }
      } else if (!c.write(ok_json(R"({"landed":true})"))) {
        return;
      }
    } while (c.next_request());
  });
  env.set("http_proxy", proxy_url(proxy, "alice:pw"));
  client();
  HttpRequest r = get("http://a.invalid/start");
  r.follow_redirects = true;
  r.headers.add("Authorization", "Bearer a-token");
  r.headers.add("Cookie", "sid=1");
  r.headers.add("Mcp-Session-Id", "s-1");
  r.headers.add("X-Trace", "t-1");
  Recorder rec;
  auto handle = send(r, rec);
  ASSERT_TRUE(wait_done(rec));
  ASSERT_TRUE(rec.done->ok()) << rec.done->error();
  EXPECT_EQ(rec.head->final_url, "http://b.invalid/land");
  const auto seen = proxy.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].target, "http://a.invalid/start");
  EXPECT_EQ(seen[0].header("Authorization"), "Bearer a-token");
  EXPECT_EQ(seen[1].target, "http://b.invalid/land");
  for (const char* name : {"Authorization", "Cookie", "Mcp-Session-Id"}) {
    EXPECT_FALSE(seen[1].has_header(name)) << name << " went on to another origin via the proxy";
  }
  EXPECT_EQ(seen[1].header("X-Trace"), "t-1");
  for (const auto& request : seen) {
    EXPECT_EQ(request.header("Proxy-Authorization"), "Basic YWxpY2U6cHc=")
        << "the proxy's own credentials go to the proxy on every hop";
  }
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

TEST_F(NativeHttpsTest, RedirectFromHttpsToHttpIsRefused) {
  LoopbackHttpServer plain;
  plain.get("/target", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("plaintext", "text/plain");
  });
  plain.start();
  server_ = std::make_unique<LoopbackHttpServer>(
      LoopbackHttpServer::Tls{tls_fixture("server.pem"), tls_fixture("server.key")});
  server_->get("/json", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 302;
    res.set_header("Location", plain.url("/target"));
  });
  server_->start();
  NativeHttpClientOptions options;
  options.ca_cert_file = tls_fixture("ca.pem");
  NativeHttpClient client(ex_, options);
  HttpRequest r;
  r.url = server_->url("/json");
  r.follow_redirects = true;
  r.headers.add("Authorization", "Bearer secret-token");
  Recorder rec;
  auto handle = client.send(r, rec.make());
  ASSERT_TRUE(handle.ok()) << handle.error();
  ASSERT_TRUE(pump_until(ex_, [&] { return rec.done.has_value(); }));
  ASSERT_FALSE(rec.done->ok());
  const Error& e = rec.done->error();
  EXPECT_EQ(e.code, ErrorCode::transport) << e;
  EXPECT_TRUE(contains(e.message, "refused to follow a redirect from https to http")) << e;
  EXPECT_TRUE(contains(e.message, plain.url("/target"))) << e;
  EXPECT_EQ(rec.heads, 0);
  EXPECT_TRUE(plain.requests().empty()) << "nothing went out unencrypted";
}

TEST_F(NativeHttpsTest, SequentialRequestsOverTlsAllSucceedOnOneClient) {
  NativeHttpClientOptions options;
  options.ca_cert_file = tls_fixture("ca.pem");
  NativeHttpClient client(ex_, options);
  for (int i = 0; i < 3; ++i) {
    HttpRequest r;
    r.url = server_->url("/json");
    Recorder rec;
    auto handle = client.send(r, rec.make());
    ASSERT_TRUE(handle.ok()) << handle.error();
    ASSERT_TRUE(pump_until(ex_, [&] { return rec.done.has_value(); }));
    ASSERT_TRUE(rec.done->ok()) << rec.done->error();
    EXPECT_EQ(rec.body, R"({"secure":true})");
  }
}

// ---- the response-head reader (pure) ---------------------------------------------------

using detail::ResponseHeadReader;
using Event = ResponseHeadReader::Event;

TEST(ResponseHeadReader, ReadsStatusAndFieldsInOrderWithFoldingAndBareLf) {
  ResponseHeadReader reader;
  EXPECT_EQ(reader.feed_line("HTTP/1.1 200 OK\r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("Content-Type:  application/json \r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("X-Long: part one\r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("\t part two\n"), Event::more);
  EXPECT_EQ(reader.feed_line("not a field line\r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("Bad Name: skipped\r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("Mcp-Session-Id: a\r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("\r\n"), Event::final_head);
  EXPECT_TRUE(reader.head_complete());
  EXPECT_EQ(reader.status(), 200);
  ASSERT_EQ(reader.headers().size(), 3u);
  EXPECT_EQ(reader.headers().get("content-type"), "application/json");
  EXPECT_EQ(reader.headers().get("X-Long"), "part one part two");
  EXPECT_EQ(reader.headers().entries()[2].name, "Mcp-Session-Id");
}

TEST(ResponseHeadReader, FoldingContinuesOnlyTheFieldJustAddedHoweverManyFieldsCame) {
  ResponseHeadReader reader;
  EXPECT_EQ(reader.feed_line("HTTP/1.1 200 OK\r\n"), Event::more);
  for (int i = 0; i < 40; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_EQ(reader.feed_line("F" + n + ": v" + n + "\r\n"), Event::more);
    if (i == 16) {
      EXPECT_EQ(reader.feed_line(" more\r\n"), Event::more);  // past the first 16
    }
    if (i == 20) {
      EXPECT_EQ(reader.feed_line("junk without a colon\r\n"), Event::more);
      EXPECT_EQ(reader.feed_line("\tlost\r\n"), Event::more);  // continues the skipped line
    }
  }
  EXPECT_EQ(reader.feed_line(" end\r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("\r\n"), Event::final_head);
  ASSERT_EQ(reader.headers().size(), 40u);
  EXPECT_EQ(reader.headers().get("F16"), "v16 more");
  EXPECT_EQ(reader.headers().get("F15"), "v15");
  EXPECT_EQ(reader.headers().get("F20"), "v20") << "a line after a skipped one is dropped";
  EXPECT_EQ(reader.headers().get("F21"), "v21");
  EXPECT_EQ(reader.headers().get("F39"), "v39 end");
  EXPECT_EQ(reader.headers().entries()[39].name, "F39");
}

TEST(ResponseHeadReader, NulCrAndLfInsideAValueBecomeSpaces) {
  ResponseHeadReader reader;
  const std::string line("X-V: a\0b\rc\r\n", 12);
  EXPECT_EQ(reader.feed_block("HTTP/1.1 200 OK\r\n" + line + "\r\n"), Event::final_head);
  EXPECT_EQ(reader.headers().get("X-V"), "a b c");
}

TEST(ResponseHeadReader, InterimHeadsAreSkippedButCounted) {
  ResponseHeadReader reader(detail::ResponseHeadLimits{3, 4096});
  EXPECT_EQ(reader.feed_block("HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\n"), Event::interim_head);
  EXPECT_EQ(reader.feed_block("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"),
            Event::interim_head);
  EXPECT_EQ(reader.feed_block("HTTP/1.1 204 No Content\r\nX-B: 1\r\n\r\n"), Event::final_head);
  EXPECT_EQ(reader.status(), 204);
  ASSERT_EQ(reader.headers().size(), 1u) << "only the final head's fields";
  EXPECT_EQ(reader.headers().get("X-B"), "1");

  ResponseHeadReader capped(detail::ResponseHeadLimits{2, 4096});
  EXPECT_EQ(capped.feed_block(
                "HTTP/1.1 100 Continue\r\nX-A: 1\r\n\r\nHTTP/1.1 200 OK\r\nX-B: 1\r\nX-C: 1\r\n"),
            Event::failed);
  EXPECT_EQ(capped.failure(), ResponseHeadReader::Failure::too_many_fields);
}

TEST(ResponseHeadReader, FieldCapFailsOnTheFirstFieldBeyondIt) {
  ResponseHeadReader reader(detail::ResponseHeadLimits{2, 1 << 20});
  EXPECT_EQ(reader.feed_block("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n"), Event::more);
  EXPECT_EQ(reader.feed_line("C: 3\r\n"), Event::failed);
  EXPECT_EQ(reader.error(), "the response head has more than 2 header fields");
  EXPECT_EQ(reader.feed_line("\r\n"), Event::failed) << "stays failed";
  EXPECT_FALSE(reader.head_complete());
}

TEST(ResponseHeadReader, ByteCapCountsLineEndingsAndFolding) {
  ResponseHeadReader reader(detail::ResponseHeadLimits{100, 40});
  EXPECT_EQ(reader.feed_line("HTTP/1.1 200 OK\r\n"), Event::more);  // 17
  EXPECT_EQ(reader.feed_line("A: 0123456789\r\n"), Event::more);    // 32
  EXPECT_EQ(reader.feed_line(" 012345\r\n"), Event::failed);        // 41
  EXPECT_EQ(reader.failure(), ResponseHeadReader::Failure::too_many_bytes);
  EXPECT_EQ(reader.error(), "the response head has more than 40 bytes");
}

TEST(ResponseHeadReader, TrailersHaveTheirOwnCapsAndAreNotKept) {
  ResponseHeadReader reader(detail::ResponseHeadLimits{2, 4096});
  EXPECT_EQ(reader.feed_block("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n"), Event::final_head);
  EXPECT_EQ(reader.feed_block("T1: 1\r\nT2: 2\r\n\r\n"), Event::trailers_end);
  EXPECT_EQ(reader.headers().size(), 2u);
  ResponseHeadReader flooded(detail::ResponseHeadLimits{2, 4096});
  EXPECT_EQ(flooded.feed_block("HTTP/1.1 200 OK\r\n\r\n"), Event::final_head);
  EXPECT_EQ(flooded.feed_block("T1: 1\r\nT2: 2\r\nT3: 3\r\n"), Event::failed);
  EXPECT_EQ(flooded.error(), "the response trailers have more than 2 header fields");
}

TEST(ResponseHeadReader, RejectsWhatIsNotAStatusLine) {
  for (const char* line :
       {"HTTP/1.1 20 OK\r\n", "HTTP/1.1 2000 OK\r\n", "HTTP/1.1 099 x\r\n", "HTTP/1.1 600 x\r\n",
        "ICY 200 OK\r\n", "HTTP/ 200 OK\r\n", "HTTP/1.1  200 OK\r\n", "\r\n", "<html>\r\n"}) {
    ResponseHeadReader reader;
    EXPECT_EQ(reader.feed_line(line), Event::failed) << line;
    EXPECT_EQ(reader.failure(), ResponseHeadReader::Failure::bad_status_line) << line;
  }
  ResponseHeadReader ok;
  EXPECT_EQ(ok.feed_block("HTTP/2 404\r\n\r\n"), Event::final_head);
  EXPECT_EQ(ok.status(), 404);
}

TEST(ResponseHeadReader, ResetStartsANewResponse) {
  ResponseHeadReader reader(detail::ResponseHeadLimits{1, 4096});
  EXPECT_EQ(reader.feed_block("HTTP/1.1 302 Found\r\nLocation: /x\r\n\r\n"), Event::final_head);
  reader.reset();
  EXPECT_EQ(reader.status(), 0);
  EXPECT_EQ(reader.feed_block("HTTP/1.1 200 OK\r\nA: 1\r\n\r\n"), Event::final_head);
  EXPECT_EQ(reader.headers().get("A"), "1");
}

}  // namespace
}  // namespace native_http_client_test
}  // namespace mcprt::native
