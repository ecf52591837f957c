#include "mcprt/stdio_transport.hpp"

#include <optional>
#include <utility>

#include "framing/utf8.hpp"
#include "jsonrpc/message_writer.hpp"
#include "jsonrpc/untrusted_json.hpp"
#include "mcprt/framing.hpp"

namespace mcprt {

namespace {

// How much of an unreadable line goes to the log, and of the stderr tail into an error
// message (the full tail stays available through diagnostics()).
constexpr std::size_t kLoggedLineBytes = 200;
constexpr std::size_t kStderrInMessageBytes = 4096;

std::string stdio_server_prefix(const std::string& name) {
  if (name.empty()) return {};
  return "Server \"" + name + "\": ";
}

// The last `max` bytes of the stderr tail, trimmed and valid UTF-8, for a message.
std::string tail_for_message(std::string_view tail) {
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r' || tail.back() == ' ' ||
                           tail.back() == '\t')) {
    tail.remove_suffix(1);
  }
  std::string prefix;
  if (tail.size() > kStderrInMessageBytes) {
    tail.remove_prefix(tail.size() - kStderrInMessageBytes);
    // Skip continuation bytes so the kept text starts on a character boundary.
    while (!tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80) {
      tail.remove_prefix(1);
    }
    prefix = "...";
  }
  return prefix + detail::sanitize_utf8(tail);
}

class StdioTransport final : public Transport {
 public:
  StdioTransport(Executor& executor, std::unique_ptr<ByteStream> stream,
                 StdioTransportOptions options)
      : state_(std::make_shared<State>(executor, std::move(stream), std::move(options))) {}

  ~StdioTransport() override {
    state_->destroyed = true;
    state_->handlers = {};
    if (state_->in_callback > 0 && state_->stream) {
      // We are being destroyed from inside one of the stream's own callbacks; destroying
      // the stream now would pull it out from under itself. Let the executor do it.
      auto stream = std::shared_ptr<ByteStream>(std::move(state_->stream));
      state_->executor->post([stream]() mutable { stream.reset(); });
    }
  }

  void start(TransportHandlers handlers) override {
    State& st = *state_;
    if (st.phase != Phase::idle) {
      if (st.phase == Phase::closed && !st.close_fired) {
        // close() came before start(): report it, but later (never inside start()).
        st.handlers = std::move(handlers);
        std::weak_ptr<State> weak = state_;
        st.executor->post([weak] {
          if (auto s = weak.lock()) s->fire_close(s->closed_error());
        });
      }
      return;
    }
    st.handlers = std::move(handlers);
    st.phase = Phase::open;
    std::weak_ptr<State> weak = state_;
    ByteStreamHandlers bh;
    bh.on_data = [weak](std::string_view bytes) {
      if (auto s = weak.lock()) s->on_data(bytes);
    };
    bh.on_closed = [weak](const StreamClosed& closed) {
      if (auto s = weak.lock()) s->on_stream_closed(closed);
    };
    st.stream->start(std::move(bh));
  }

  Status send(const json& message) override {
    State& st = *state_;
    if (st.phase == Phase::closing || st.phase == Phase::closed || !st.stream) {
      return Error::make(ErrorCode::closed, st.prefix + "connection is closed");
    }
    // One line ("...\n"), copied by the stream only if the pipe cannot take it at once.
    Status s = detail::thread_message_writer().write(message, [&](std::string& line) {
      line.push_back('\n');
      return st.stream->write_copy(line);
    });
    if (!s) {
      Error e = s.error();
      e.message = st.prefix + e.message;
      return e;
    }
    return {};
  }

  void close() override {
    State& st = *state_;
    switch (st.phase) {
      case Phase::idle:
        // Never started: nothing can be delivered, so finish at once.
        st.phase = Phase::closed;
        st.local_close = true;
        st.stream.reset();
        return;
      case Phase::open:
        st.phase = Phase::closing;
        st.local_close = true;
        st.stream->close();
        return;
      case Phase::closing:
      case Phase::closed:
        return;  // idempotent
    }
  }

  std::string diagnostics() const override {
    const State& st = *state_;
    if (!st.final_stderr.empty()) return st.final_stderr;
    if (st.stream) return st.stream->diagnostics_tail();
    return {};
  }

 private:
  // idle --start()--> open --close() | over-size line--> closing --stream on_closed--> closed
  // open --stream on_closed (exit, EOF, I/O error)--> closed
  // idle --close()--> closed (start() then posts on_close)
  // on_close fires on entering `closed`, exactly once.
  enum class Phase { idle, open, closing, closed };

  struct State {
    State(Executor& ex, std::unique_ptr<ByteStream> s, StdioTransportOptions o)
        : executor(&ex),
          stream(std::move(s)),
          options(std::move(o)),
          prefix(stdio_server_prefix(options.server_name)),
          framer(options.max_message_bytes) {}

    Executor* executor;
    std::unique_ptr<ByteStream> stream;
    StdioTransportOptions options;
    std::string prefix;
    NewlineFramer framer;
    TransportHandlers handlers;
    Phase phase = Phase::idle;
    bool local_close = false;
    bool close_fired = false;
    bool destroyed = false;
    int in_callback = 0;
    std::optional<Error> pending_error;  // decided locally (over-size) while closing
    std::string final_stderr;

    Error closed_error() const {
      return Error::make(ErrorCode::closed, prefix + "connection closed");
    }

    void on_data(std::string_view bytes) {
      if (phase != Phase::open || destroyed) return;
      ++in_callback;
      Status s = framer.feed(bytes, [this](std::string_view line) { on_line(line); });
      if (!s && phase == Phase::open && !destroyed) {
        pending_error = Error::make(
            ErrorCode::message_too_large,
            prefix + "message exceeds the limit of " + std::to_string(options.max_message_bytes) +
                " bytes (max_message_bytes); closing the connection",
            json{{"max_bytes", options.max_message_bytes}});
        if (options.logger) options.logger->error(pending_error->message);
        phase = Phase::closing;
        if (stream) stream->close();
      }
      --in_callback;
    }

    void on_line(std::string_view line) {
      // A handler may have closed or destroyed the transport while earlier lines of this
      // chunk were being delivered; the rest of the chunk is then dropped.
      if (phase != Phase::open || destroyed) return;
      Result<json> msg =
          detail::parse_untrusted_json(line, {options.max_json_nesting_levels, handlers.raw_tool_schemas});
      if (!msg) {
        detail::report_unreadable_message(line, msg.error(), prefix, options.logger, handlers,
                                          kLoggedLineBytes);
        return;
      }
      if (handlers.on_message) handlers.on_message(std::move(msg).value());
    }

    void on_stream_closed(const StreamClosed& closed) {
      if (phase == Phase::closed || destroyed) return;
      phase = Phase::closed;
      final_stderr = closed.stderr_tail;
      if (final_stderr.empty() && stream) final_stderr = stream->diagnostics_tail();
      ++in_callback;
      if (pending_error) {
        fire_close(*pending_error);
      } else if (local_close) {
        fire_close(closed_error());
      } else {
        fire_close(map_stream_end(closed));
      }
      --in_callback;
    }

    Error map_stream_end(const StreamClosed& closed) const {
      const std::string tail = tail_for_message(final_stderr);
      json data = json::object();
      std::string what;
      ErrorCode code = closed.error.code;
      if (closed.exit_code) {
        code = ErrorCode::exited;
        const int c = *closed.exit_code;
        if (c < 0) {
          what = "server exited (killed by signal " + std::to_string(-c) + ")";
          data["signal"] = -c;
        } else {
          what = "server exited (code " + std::to_string(c) + ")";
          data["exit_code"] = c;
        }
      } else if (!closed.error.message.empty()) {
        what = closed.error.message;
      } else {
        what = code == ErrorCode::exited ? "server exited" : "connection closed by the server";
      }
      if (!tail.empty()) {
        what += "; stderr: " + tail;
        data["stderr"] = tail;
      }
      return Error::make(code, prefix + what, std::move(data));
    }

    void fire_close(const Error& e) {
      if (close_fired || destroyed) return;
      close_fired = true;
      auto on_close = std::move(handlers.on_close);
      handlers = {};  // nothing runs after on_close
      if (on_close) on_close(e);
    }
  };

  std::shared_ptr<State> state_;
};

}  // namespace

std::unique_ptr<Transport> make_stdio_transport(Executor& executor,
                                                std::unique_ptr<ByteStream> stream,
                                                StdioTransportOptions options) {
  return std::make_unique<StdioTransport>(executor, std::move(stream), std::move(options));
}

}  // namespace mcprt
