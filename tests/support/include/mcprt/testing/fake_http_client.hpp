#pragma once
// FakeHttpClient: the HttpClient seam for tests, push model. The code under test sends;
// the test sees each request (method, url, headers, body) and answers it at its own pace:
// the head, body chunks in any split, then completion — or a failure — or never.
//
//   ManualExecutor ex;
//   FakeHttpClient http(ex);
//   auto t = make_http_transport(ex, http, {.url = "http://h/mcp"});
//   ... (*t)->send(request) ...
//   auto req = http.take();                 // the oldest request not taken yet
//   ASSERT_TRUE(req);
//   EXPECT_EQ(req->method(), "POST");
//   req->respond_sse_head({{"Mcp-Session-Id", "s1"}});
//   req->chunk(sse_event(response));         // split anywhere: req->chunks(bytes, 3)
//   req->complete();
//   ex.run_until_idle();                    // callbacks run here, never inside the calls
//
// Delivery follows the seam's contract (http_client.hpp): every answer the test gives is
// queued on the executor and delivered in order; nothing is delivered after the client
// aborted the request (abort() or destroying the handle), and `aborted()` tells the test
// it happened. Answers after completion or abort are ignored.

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/result.hpp"

namespace mcprt::testing {

// One request the client under test made. Copyable; all copies share the request.
class FakeHttpExchange {
  struct State;

 public:
  const HttpRequest& request() const;
  const std::string& method() const { return request().method; }
  const std::string& url() const { return request().url; }
  const std::string& body() const { return request().body; }
  // The header's value, or "" when absent (case-insensitive name).
  std::string header(std::string_view name) const { return request().headers.get(name); }
  bool has_header(std::string_view name) const { return request().headers.has(name); }
  // The body parsed as JSON (discarded when it is not JSON).
  json json_body() const;

  // --- answering (each call queues one delivery on the executor) ---
  void head(int status, HttpHeaders headers = {}, std::string final_url = {}) const;
  void chunk(std::string_view bytes) const;
  // `bytes` split into chunks of `chunk_size` bytes (the last may be shorter).
  void chunks(std::string_view bytes, std::size_t chunk_size) const;
  void complete(Status status = {}) const;
  void fail(Error error) const { complete(Status(std::move(error))); }

  // Shorthands: head + body (if any) + complete.
  void respond(int status, std::string_view body = {}, HttpHeaders headers = {}) const;
  // 200 (or `status`) with Content-Type: application/json and `body` serialized.
  void respond_json(const json& body, HttpHeaders extra = {}, int status = 200) const;
  // Only the head of an SSE answer (Content-Type: text/event-stream); send events with
  // chunk(sse_event(...)) and end it with complete().
  void respond_sse_head(HttpHeaders extra = {}, int status = 200) const;

  // --- observing ---
  bool aborted() const;    // the client aborted (abort() or destroyed the handle)
  bool completed() const;  // the test completed or failed it
  bool finished() const { return aborted() || completed(); }

 private:
  friend class FakeHttpClient;
  explicit FakeHttpExchange(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

// One SSE event carrying `data` (a JSON message, serialized), with optional id and type.
std::string sse_event(const json& data, std::string_view id = {}, std::string_view event = {});
// An SSE event with raw fields: e.g. sse_raw("id: 7\nretry: 10\ndata:") (adds the blank line).
std::string sse_raw(std::string_view fields);

class FakeHttpClient final : public HttpClient {
 public:
  explicit FakeHttpClient(Executor& executor) : executor_(&executor) {}

  Result<std::unique_ptr<HttpRequestHandle>> send(HttpRequest request,
                                                  HttpCallbacks callbacks) override;

  // The oldest request the test has not taken yet, or nullopt.
  std::optional<FakeHttpExchange> take();
  // Requests not taken yet.
  std::size_t pending() const { return untaken_.size(); }
  // Every request ever sent, in order.
  const std::vector<FakeHttpExchange>& all() const { return all_; }
  // Makes the next send() fail at once with `error` (no request is recorded).
  void fail_next_send(Error error) { fail_next_ = std::move(error); }

 private:
  Executor* executor_;
  std::vector<FakeHttpExchange> all_;
  std::deque<FakeHttpExchange> untaken_;
  std::optional<Error> fail_next_;
};

}  // namespace mcprt::testing
