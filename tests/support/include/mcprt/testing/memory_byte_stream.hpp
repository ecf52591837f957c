#pragma once
// An in-memory ByteStream for tests: the client end is a real ByteStream (hand it to
// make_stdio_transport or anything else that takes one); the other end is a Remote the
// test drives: push bytes in any chunking, read what the client wrote, end the stream as
// a process exit (code or signal, with a stderr tail) or an I/O error, and observe close().
//
//   ManualExecutor ex;
//   auto stream = std::make_unique<MemoryByteStream>(ex);
//   MemoryByteStream::Remote remote = stream->remote();
//   auto transport = make_stdio_transport(ex, std::move(stream), {});
//   transport->start(handlers);
//   remote.push("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
//   ex.run_until_idle();                 // on_data runs here, never inside push()
//   remote.exit(1, "boom");              // on_closed(exited, code 1, stderr "boom")
//
// Delivery follows the ByteStream contract: every handler runs later through the
// executor (push/exit/close only queue work), in the order the test caused it; nothing
// is delivered after on_closed, and nothing at all once the stream object is destroyed.
// By default close() completes on the next executor turn with ErrorCode::closed;
// `remote.hold_close(true)` keeps it pending until `remote.finish_close()` (a slow child).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/platform/byte_stream.hpp"
#include "mcprt/platform/executor.hpp"

namespace mcprt::testing {

class MemoryByteStream final : public ByteStream {
  struct State;

 public:
  // The far end of the stream. Copyable; stays usable after the stream was destroyed
  // (then pushes are dropped and `destroyed()` is true).
  class Remote {
   public:
    // Queues `bytes` as one on_data chunk (an empty string queues nothing).
    void push(std::string_view bytes) const;
    // Queues `bytes` split into chunks of `chunk_size` bytes (the last may be shorter).
    void push_in_chunks(std::string_view bytes, std::size_t chunk_size) const;
    // Queues `bytes` split at pseudo-random points (deterministic for a given seed), each
    // chunk 1..max_chunk bytes long. Returns the number of chunks.
    std::size_t push_random_chunks(std::string_view bytes, std::uint32_t seed,
                                   std::size_t max_chunk = 16) const;

    // What the client wrote so far, and the same with the buffer cleared.
    std::string written() const;
    std::string take_written() const;
    // Complete "\n"-terminated lines written so far, removed from the buffer (a partial
    // last line stays).
    std::vector<std::string> take_lines() const;

    // Sets what diagnostics_tail() reports (the child's stderr so far).
    void set_stderr(std::string tail) const;
    // Ends the stream as a process exit: on_closed{exited, exit_code = code, stderr}.
    // A negative code means killed by signal -code.
    void exit(int code, std::string stderr_tail = {}) const;
    void kill(int signal, std::string stderr_tail = {}) const { exit(-signal, std::move(stderr_tail)); }
    // Ends the stream with an arbitrary reason (EOF without exit status, I/O error...).
    void end(StreamClosed reason) const;

    // Makes the next write() fail with `error` (until cleared with std::nullopt).
    void fail_writes(std::optional<Error> error) const;

    // close() handling: while held, close() only records the request.
    void hold_close(bool hold) const;
    // Completes a held close: on_closed{closed}.
    void finish_close() const;

    bool started() const;
    int close_calls() const;       // how many times the client called close()
    bool close_requested() const { return close_calls() > 0; }
    bool finished() const;         // on_closed was queued (the stream is over)
    bool closed_delivered() const; // on_closed actually ran
    bool destroyed() const;        // the client destroyed the stream object

   private:
    friend class MemoryByteStream;
    explicit Remote(std::shared_ptr<State> s) : state_(std::move(s)) {}
    std::shared_ptr<State> state_;
  };

  explicit MemoryByteStream(Executor& executor);
  ~MemoryByteStream() override;
  MemoryByteStream(const MemoryByteStream&) = delete;
  MemoryByteStream& operator=(const MemoryByteStream&) = delete;

  Remote remote() const { return Remote(state_); }

  void start(ByteStreamHandlers handlers) override;
  Status write(std::string bytes) override;
  void close() override;
  std::string diagnostics_tail() const override;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace mcprt::testing
