#include "auth/oauth_fetch.hpp"

#include <utility>

namespace mcprt::detail::oauth {

struct Fetch::State {
  std::function<void(Result<FetchResponse>)> done;
  std::unique_ptr<HttpRequestHandle> handle;
  FetchResponse response;
  std::size_t max_bytes = 0;
  std::string what;  // "GET https://h/x", for messages
  bool finished = false;

  void finish(Result<FetchResponse> result) {
    if (finished) return;
    finished = true;
    auto cb = std::move(done);
    if (cb) cb(std::move(result));  // may destroy the Fetch (and so the handle): allowed
  }
};

std::unique_ptr<Fetch> Fetch::start(Executor& executor, HttpClient& http, HttpRequest request,
                                    std::size_t max_bytes,
                                    std::function<void(Result<FetchResponse>)> done) {
  auto state = std::make_shared<State>();
  state->done = std::move(done);
  state->max_bytes = max_bytes;
  state->what = request.method + " " + request.url;
  state->response.final_url = request.url;
  std::weak_ptr<State> weak = state;

  HttpCallbacks callbacks;
  callbacks.on_response_head = [weak](const HttpResponseHead& head) {
    auto st = weak.lock();
    if (!st || st->finished) return;
    st->response.status = head.status;
    st->response.headers = head.headers;
    if (!head.final_url.empty()) st->response.final_url = head.final_url;
  };
  callbacks.on_body_chunk = [weak](std::string_view bytes) {
    auto st = weak.lock();
    if (!st || st->finished) return;
    if (st->response.body.size() + bytes.size() > st->max_bytes) {
      st->handle.reset();  // do not download the rest
      st->finish(Error::make(ErrorCode::message_too_large,
                             "the answer to " + st->what + " is larger than " +
                                 std::to_string(st->max_bytes) + " bytes"));
      return;
    }
    st->response.body.append(bytes);
  };
  callbacks.on_complete = [weak](Status status) {
    auto st = weak.lock();
    if (!st || st->finished) return;
    if (!status) {
      Error e = std::move(status).error();
      if (e.message.find(st->what.substr(st->what.find(' ') + 1)) == std::string::npos) {
        e.message = st->what + " failed: " + e.message;
      }
      st->finish(std::move(e));
      return;
    }
    st->finish(std::move(st->response));
  };

  auto handle = http.send(std::move(request), std::move(callbacks));
  if (!handle) {
    Error e = std::move(handle).error();
    e.message = state->what + " failed: " + e.message;
    executor.post([weak, e = std::move(e)]() mutable {
      if (auto st = weak.lock()) st->finish(std::move(e));
    });
  } else {
    state->handle = std::move(handle).value();
  }
  return std::unique_ptr<Fetch>(new Fetch(std::move(state)));
}

Fetch::~Fetch() {
  state_->finished = true;
  state_->handle.reset();
}

}  // namespace mcprt::detail::oauth
