#include "mcprt/testing/memory_byte_stream.hpp"

#include <algorithm>
#include <utility>

namespace mcprt::testing {

struct MemoryByteStream::State {
  explicit State(Executor& ex) : executor(&ex) {}
  Executor* executor;
  ByteStreamHandlers handlers;
  bool started = false;
  bool finished = false;          // on_closed queued; nothing more is queued after it
  bool closed_delivered = false;  // on_closed ran
  bool destroyed = false;
  bool hold_close = false;
  int close_calls = 0;
  std::string written;
  std::string stderr_tail;
  std::optional<Error> write_error;

  // One delivery: a data chunk or the end of the stream.
  struct Item {
    bool is_close = false;
    std::string data;
    StreamClosed reason;
  };
  // Items whose turn came before start(): kept like a pipe buffer, delivered after it.
  std::vector<Item> before_start;

  void queue(Item item, const std::shared_ptr<State>& self) {
    if (finished || destroyed) return;
    if (item.is_close) {
      finished = true;
    } else if (item.data.empty()) {
      return;
    }
    executor->post([self, item = std::move(item)]() mutable { self->deliver(std::move(item)); });
  }

  void deliver(Item item) {
    if (destroyed || closed_delivered) return;
    if (!started || !before_start.empty()) {
      // Keep order: anything whose turn comes while early items wait goes behind them.
      before_start.push_back(std::move(item));
      return;
    }
    dispatch(std::move(item));
  }

  // Runs (on the executor) after start(): delivers the early items in order.
  void drain() {
    while (!before_start.empty() && !destroyed && !closed_delivered) {
      Item item = std::move(before_start.front());
      before_start.erase(before_start.begin());
      dispatch(std::move(item));
    }
    before_start.clear();
  }

  void dispatch(Item item) {
    if (!item.is_close) {
      // A copy: the handler may destroy the stream (and so `handlers`) while it runs.
      auto on_data = handlers.on_data;
      if (on_data) on_data(item.data);
      return;
    }
    closed_delivered = true;
    auto on_closed = std::move(handlers.on_closed);
    handlers = {};
    if (on_closed) on_closed(item.reason);
  }

  StreamClosed local_close_reason() const {
    return StreamClosed{Error::make(ErrorCode::closed, "stream closed"), std::nullopt, stderr_tail};
  }
};

namespace {

// A tiny deterministic generator, identical on every platform (std distributions are not).
std::uint32_t next_random(std::uint32_t& s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

}  // namespace

MemoryByteStream::MemoryByteStream(Executor& executor)
    : state_(std::make_shared<State>(executor)) {}

MemoryByteStream::~MemoryByteStream() {
  state_->destroyed = true;
  state_->handlers = {};
}

void MemoryByteStream::start(ByteStreamHandlers handlers) {
  if (state_->started) return;
  state_->started = true;
  state_->handlers = std::move(handlers);
  if (!state_->before_start.empty()) {
    auto self = state_;
    state_->executor->post([self] { self->drain(); });
  }
}

Status MemoryByteStream::write(std::string bytes) {
  if (state_->finished || state_->close_calls > 0) {
    return Error::make(ErrorCode::closed, "stream is closed");
  }
  if (state_->write_error) return *state_->write_error;
  state_->written += bytes;
  return {};
}

void MemoryByteStream::close() {
  ++state_->close_calls;
  if (state_->close_calls > 1 || state_->hold_close) return;
  state_->queue({true, {}, state_->local_close_reason()}, state_);
}

std::string MemoryByteStream::diagnostics_tail() const { return state_->stderr_tail; }

void MemoryByteStream::Remote::push(std::string_view bytes) const {
  state_->queue({false, std::string(bytes), {}}, state_);
}

void MemoryByteStream::Remote::push_in_chunks(std::string_view bytes,
                                              std::size_t chunk_size) const {
  if (chunk_size == 0) chunk_size = 1;
  for (std::size_t i = 0; i < bytes.size(); i += chunk_size) push(bytes.substr(i, chunk_size));
}

std::size_t MemoryByteStream::Remote::push_random_chunks(std::string_view bytes,
                                                         std::uint32_t seed,
                                                         std::size_t max_chunk) const {
  std::uint32_t s = seed == 0 ? 0x9E3779B9u : seed;
  if (max_chunk == 0) max_chunk = 1;
  std::size_t n = 0;
  std::size_t i = 0;
  while (i < bytes.size()) {
    const std::size_t len = std::min<std::size_t>(1 + next_random(s) % max_chunk, bytes.size() - i);
    push(bytes.substr(i, len));
    i += len;
    ++n;
  }
  return n;
}

std::string MemoryByteStream::Remote::written() const { return state_->written; }

std::string MemoryByteStream::Remote::take_written() const {
  std::string out = std::move(state_->written);
  state_->written.clear();
  return out;
}

std::vector<std::string> MemoryByteStream::Remote::take_lines() const {
  std::vector<std::string> lines;
  std::string& w = state_->written;
  std::size_t pos = 0;
  for (std::size_t nl = w.find('\n'); nl != std::string::npos; nl = w.find('\n', pos)) {
    lines.push_back(w.substr(pos, nl - pos));
    pos = nl + 1;
  }
  w.erase(0, pos);
  return lines;
}

void MemoryByteStream::Remote::set_stderr(std::string tail) const {
  state_->stderr_tail = std::move(tail);
}

void MemoryByteStream::Remote::exit(int code, std::string stderr_tail) const {
  if (!stderr_tail.empty()) state_->stderr_tail = stderr_tail;
  const std::string msg = code < 0 ? "killed by signal " + std::to_string(-code)
                                   : "exited with code " + std::to_string(code);
  state_->queue({true, {}, StreamClosed{Error::make(ErrorCode::exited, msg), code, state_->stderr_tail}},
                state_);
}

void MemoryByteStream::Remote::end(StreamClosed reason) const {
  state_->queue({true, {}, std::move(reason)}, state_);
}

void MemoryByteStream::Remote::fail_writes(std::optional<Error> error) const {
  state_->write_error = std::move(error);
}

void MemoryByteStream::Remote::hold_close(bool hold) const { state_->hold_close = hold; }

void MemoryByteStream::Remote::finish_close() const {
  state_->queue({true, {}, state_->local_close_reason()}, state_);
}

bool MemoryByteStream::Remote::started() const { return state_->started; }
int MemoryByteStream::Remote::close_calls() const { return state_->close_calls; }
bool MemoryByteStream::Remote::finished() const { return state_->finished; }
bool MemoryByteStream::Remote::closed_delivered() const { return state_->closed_delivered; }
bool MemoryByteStream::Remote::destroyed() const { return state_->destroyed; }

}  // namespace mcprt::testing
