#pragma once
// One bounded HTTP exchange for the OAuth client: the whole answer (head + body up to a
// byte limit) or the reason there is none. Internal to core/src/auth.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "mcprt/platform/executor.hpp"
#include "mcprt/platform/http_client.hpp"
#include "mcprt/result.hpp"

namespace mcprt::detail::oauth {

struct FetchResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;
  std::string final_url;  // where the platform's redirects ended (the request URL if none)
};

// Destroying the Fetch aborts the request; `done` then never runs.
class Fetch {
 public:
  // `done` runs exactly once, on the executor, never inside start(): with the answer (any
  // status), or ErrorCode::message_too_large when the body passed `max_bytes`, or the
  // platform's error (transport, timeout) — the request's URL is in its message.
  static std::unique_ptr<Fetch> start(Executor& executor, HttpClient& http, HttpRequest request,
                                      std::size_t max_bytes,
                                      std::function<void(Result<FetchResponse>)> done);
  ~Fetch();
  Fetch(const Fetch&) = delete;
  Fetch& operator=(const Fetch&) = delete;

  struct State;

 private:
  explicit Fetch(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace mcprt::detail::oauth
