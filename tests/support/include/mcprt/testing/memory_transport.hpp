#pragma once
// MemoryTransport: a linked pair of message transports for tests (the in-memory fake of
// the Transport seam).
//
//   auto [client_end, server_end] = make_memory_transport_pair(executor);
//
// Behaves like a real connection, only without bytes:
//  - a message sent on one end arrives at the other end's on_message through the
//    executor, never inside send(); messages sent before the receiver started wait for it;
//  - close() on either end (or destroying it) closes both: each end's on_close fires once,
//    with ErrorCode::closed; messages already sent to the *other* end are still delivered
//    before its on_close (as bytes in a pipe would be), none after;
//  - close_with_error(e) lets a test play a dying server: the other end sees `e`
//    (e.g. ErrorCode::exited) instead of closed;
//  - send() fails at once with ErrorCode::closed once either end closed;
//  - renew_peer_session() plays an HTTP transport that replaced its server session: the
//    other end's on_renewed fires, after the messages already in flight.
// Single-threaded: use both ends on the executor's thread. The executor must outlive both.

#include <memory>
#include <string>

#include "mcprt/platform/executor.hpp"
#include "mcprt/transport.hpp"

namespace mcprt::testing {

struct MemoryTransportPair;
MemoryTransportPair make_memory_transport_pair(Executor& executor);

class MemoryTransport final : public Transport {
 public:
  ~MemoryTransport() override;  // closes the link; this end's handlers never run again

  void start(TransportHandlers handlers) override;
  Status send(const json& message) override;
  void close() override;
  std::string diagnostics() const override;

  // Closes the link; the other end's on_close receives `error_for_peer`, this end's gets
  // ErrorCode::closed.
  void close_with_error(Error error_for_peer);
  // The other end's TransportHandlers::on_renewed fires (through the executor).
  void renew_peer_session();
  // What this end's diagnostics() returns (stands in for a stderr tail).
  void set_diagnostics(std::string text);
  // True once either end closed (sends fail from then on).
  bool is_closed() const;
  // Messages this end has sent so far.
  std::size_t sent_count() const;

  struct Link;  // shared by the two ends (defined in memory_transport.cpp)

 private:
  friend MemoryTransportPair make_memory_transport_pair(Executor& executor);
  MemoryTransport(std::shared_ptr<Link> link, int side);
  std::shared_ptr<Link> link_;
  int side_;
};

struct MemoryTransportPair {
  std::unique_ptr<MemoryTransport> client;
  std::unique_ptr<MemoryTransport> server;
};

}  // namespace mcprt::testing
