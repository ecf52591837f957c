#include "mcprt/testing/fake_http_client.hpp"

#include <functional>
#include <utility>

namespace mcprt::testing {

struct FakeHttpExchange::State {
  Executor* executor = nullptr;
  HttpRequest request;
  HttpCallbacks callbacks;
  bool aborted = false;
  bool completed = false;

  // Queues `deliver` unless the exchange is over; delivery checks again (the client may
  // abort between queueing and delivery).
  void queue(std::shared_ptr<State> self, std::function<void(State&)> deliver) {
    if (aborted || completed) return;
    executor->post([self = std::move(self), deliver = std::move(deliver)] {
      if (!self->aborted) deliver(*self);
    });
  }
};

namespace {

class FakeHandle final : public HttpRequestHandle {
 public:
  explicit FakeHandle(std::function<void()> on_abort) : on_abort_(std::move(on_abort)) {}
  ~FakeHandle() override { abort(); }
  void abort() override {
    if (on_abort_) {
      auto fn = std::move(on_abort_);
      on_abort_ = nullptr;
      fn();
    }
  }

 private:
  std::function<void()> on_abort_;
};

}  // namespace

const HttpRequest& FakeHttpExchange::request() const { return state_->request; }

json FakeHttpExchange::json_body() const { return json::parse(state_->request.body, nullptr, false); }

void FakeHttpExchange::head(int status, HttpHeaders headers, std::string final_url) const {
  HttpResponseHead h{status, std::move(headers), std::move(final_url)};
  state_->queue(state_, [h = std::move(h)](State& s) {
    if (h.final_url.empty()) {
      HttpResponseHead copy = h;
      copy.final_url = s.request.url;
      auto fn = s.callbacks.on_response_head;  // a copy: the callback may abort
      if (fn) fn(copy);
      return;
    }
    auto fn = s.callbacks.on_response_head;
    if (fn) fn(h);
  });
}

void FakeHttpExchange::chunk(std::string_view bytes) const {
  state_->queue(state_, [data = std::string(bytes)](State& s) {
    auto fn = s.callbacks.on_body_chunk;
    if (fn) fn(data);
  });
}

void FakeHttpExchange::chunks(std::string_view bytes, std::size_t chunk_size) const {
  if (chunk_size == 0) chunk_size = 1;
  for (std::size_t pos = 0; pos < bytes.size(); pos += chunk_size) chunk(bytes.substr(pos, chunk_size));
}

void FakeHttpExchange::complete(Status status) const {
  state_->queue(state_, [status = std::move(status)](State& s) {
    auto fn = std::move(s.callbacks.on_complete);
    s.callbacks = {};  // released after completion, as the seam promises
    if (fn) fn(status);
  });
  state_->completed = true;
}

void FakeHttpExchange::respond(int status, std::string_view body, HttpHeaders headers) const {
  head(status, std::move(headers));
  if (!body.empty()) chunk(body);
  complete();
}

void FakeHttpExchange::respond_json(const json& body, HttpHeaders extra, int status) const {
  extra.set("Content-Type", "application/json");
  respond(status, body.dump(), std::move(extra));
}

void FakeHttpExchange::respond_sse_head(HttpHeaders extra, int status) const {
  extra.set("Content-Type", "text/event-stream");
  head(status, std::move(extra));
}

bool FakeHttpExchange::aborted() const { return state_->aborted; }
bool FakeHttpExchange::completed() const { return state_->completed; }

std::string sse_event(const json& data, std::string_view id, std::string_view event) {
  std::string out;
  if (!event.empty()) out += "event: " + std::string(event) + "\n";
  if (!id.empty()) out += "id: " + std::string(id) + "\n";
  out += "data: " + data.dump() + "\n\n";
  return out;
}

std::string sse_raw(std::string_view fields) { return std::string(fields) + "\n\n"; }

Result<std::unique_ptr<HttpRequestHandle>> FakeHttpClient::send(HttpRequest request,
                                                                HttpCallbacks callbacks) {
  if (fail_next_) {
    Error e = std::move(*fail_next_);
    fail_next_.reset();
    return e;
  }
  auto state = std::make_shared<FakeHttpExchange::State>();
  state->executor = executor_;
  state->request = std::move(request);
  state->callbacks = std::move(callbacks);
  FakeHttpExchange exchange(state);
  all_.push_back(exchange);
  untaken_.push_back(exchange);
  std::weak_ptr<FakeHttpExchange::State> weak = state;
  return std::unique_ptr<HttpRequestHandle>(std::make_unique<FakeHandle>([weak] {
    auto s = weak.lock();
    if (!s || s->aborted) return;
    // A request already completed (its completion delivered) is not "aborted".
    if (s->completed && !s->callbacks.on_complete) return;
    s->aborted = true;
    s->callbacks = {};
  }));
}

std::optional<FakeHttpExchange> FakeHttpClient::take() {
  if (untaken_.empty()) return std::nullopt;
  FakeHttpExchange e = untaken_.front();
  untaken_.pop_front();
  return e;
}

}  // namespace mcprt::testing
