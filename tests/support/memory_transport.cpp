#include "mcprt/testing/memory_transport.hpp"

#include <deque>
#include <optional>
#include <utility>

namespace mcprt::testing {

struct MemoryTransport::Link : std::enable_shared_from_this<Link> {
  explicit Link(Executor& ex) : executor(ex) {}

  struct End {
    TransportHandlers handlers;
    bool started = false;
    bool closed_locally = false;  // this end called close(): it receives nothing more
    bool close_fired = false;
    bool destroyed = false;
    std::deque<json> inbox;            // arrived before start()
    std::optional<Error> early_close;  // close arrived before start()
    std::string diagnostics;
    std::size_t sent = 0;
  };

  Executor& executor;
  End ends[2];
  bool link_closed = false;

  void deliver(int to, json message) {
    End& end = ends[to];
    if (end.closed_locally || end.close_fired || end.destroyed) return;
    if (!end.started) {
      end.inbox.push_back(std::move(message));
      return;
    }
    if (end.handlers.on_message) end.handlers.on_message(std::move(message));
  }

  void fire_close(int side, const Error& error) {
    End& end = ends[side];
    if (end.close_fired || end.destroyed) return;
    if (!end.started) {
      if (!end.early_close) end.early_close = error;
      return;
    }
    end.close_fired = true;
    if (end.handlers.on_close) end.handlers.on_close(error);
  }

  void close_from(int side, Error for_self, Error for_peer) {
    if (link_closed) return;
    link_closed = true;
    ends[side].closed_locally = true;
    // Posted after every message already in flight, so the peer drains them first.
    post([side, e = std::move(for_self)](Link& l) { l.fire_close(side, e); });
    post([side, e = std::move(for_peer)](Link& l) { l.fire_close(1 - side, e); });
  }

  void fire_renewed(int side) {
    End& end = ends[side];
    if (!end.started || end.closed_locally || end.close_fired || end.destroyed) return;
    if (end.handlers.on_renewed) end.handlers.on_renewed();
  }

  template <class Fn>
  void post(Fn fn) {
    executor.post([weak = weak_from_this(), fn = std::move(fn)]() mutable {
      if (auto self = weak.lock()) fn(*self);
    });
  }

  // Runs what start() could not: queued messages, then an early close.
  void flush(int side) {
    End& end = ends[side];
    while (!end.inbox.empty() && !end.destroyed && !end.close_fired && !end.closed_locally) {
      json message = std::move(end.inbox.front());
      end.inbox.pop_front();
      if (end.handlers.on_message) end.handlers.on_message(std::move(message));
    }
    end.inbox.clear();
    if (end.early_close) {
      Error e = std::move(*end.early_close);
      end.early_close.reset();
      fire_close(side, e);
    }
  }
};

namespace {

Error closed_error() { return Error::make(ErrorCode::closed, "memory transport closed"); }

}  // namespace

MemoryTransport::MemoryTransport(std::shared_ptr<Link> link, int side)
    : link_(std::move(link)), side_(side) {}

MemoryTransport::~MemoryTransport() {
  link_->close_from(side_, closed_error(), closed_error());
  link_->ends[side_].destroyed = true;
}

void MemoryTransport::start(TransportHandlers handlers) {
  Link::End& end = link_->ends[side_];
  if (end.started) return;
  end.handlers = std::move(handlers);
  end.started = true;
  if (!end.inbox.empty() || end.early_close) {
    link_->post([side = side_](Link& l) { l.flush(side); });
  }
}

Status MemoryTransport::send(const json& message) {
  if (link_->link_closed) return closed_error();
  ++link_->ends[side_].sent;
  link_->post([to = 1 - side_, message](Link& l) { l.deliver(to, message); });
  return {};
}

void MemoryTransport::close() { link_->close_from(side_, closed_error(), closed_error()); }

void MemoryTransport::close_with_error(Error error_for_peer) {
  link_->close_from(side_, closed_error(), std::move(error_for_peer));
}

void MemoryTransport::renew_peer_session() {
  if (link_->link_closed) return;
  link_->post([to = 1 - side_](Link& l) { l.fire_renewed(to); });
}

std::string MemoryTransport::diagnostics() const { return link_->ends[side_].diagnostics; }

void MemoryTransport::set_diagnostics(std::string text) {
  link_->ends[side_].diagnostics = std::move(text);
}

bool MemoryTransport::is_closed() const { return link_->link_closed; }

std::size_t MemoryTransport::sent_count() const { return link_->ends[side_].sent; }

MemoryTransportPair make_memory_transport_pair(Executor& executor) {
  auto link = std::make_shared<MemoryTransport::Link>(executor);
  return MemoryTransportPair{
      std::unique_ptr<MemoryTransport>(new MemoryTransport(link, 0)),
      std::unique_ptr<MemoryTransport>(new MemoryTransport(link, 1)),
  };
}

}  // namespace mcprt::testing
