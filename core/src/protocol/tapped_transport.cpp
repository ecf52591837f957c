// make_tapped_transport (transport.hpp): a Transport decorator that shows a tap every
// message, for protocol logs. Only made when a host installs a tap, so an untapped
// connection pays nothing.

#include <utility>

#include "jsonrpc/raw_json.hpp"
#include "mcprt/transport.hpp"

namespace mcprt {

const char* to_string(MessageDirection direction) {
  return direction == MessageDirection::send ? "send" : "receive";
}

namespace {

class TappedTransport final : public Transport {
 public:
  TappedTransport(std::unique_ptr<Transport> inner, MessageTap tap)
      : inner_(std::move(inner)), tap_(std::make_shared<MessageTap>(std::move(tap))) {}

  void start(TransportHandlers handlers) override {
    // The handler holds its own reference to the tap: it may run while this object is
    // being torn down by its owner's close.
    // The tap sees what the server sent: a tool schema kept raw (handlers.raw_tool_schemas,
    // raw_json.hpp) is shown parsed, in a copy; the handler still gets it raw.
    handlers.on_message = [tap = tap_, next = std::move(handlers.on_message)](json message) {
      if (detail::has_raw_tool_schemas(message)) {
        json shown = message;
        detail::restore_raw_tool_schemas(shown);
        (*tap)(MessageDirection::receive, shown);
      } else {
        (*tap)(MessageDirection::receive, message);
      }
      if (next) next(std::move(message));
    };
    inner_->start(std::move(handlers));
  }
  Status send(const json& message) override {
    (*tap_)(MessageDirection::send, message);
    return inner_->send(message);
  }
  Status send_with(const json& message, const SendOptions& options) override {
    (*tap_)(MessageDirection::send, message);
    return inner_->send_with(message, options);
  }
  void close() override { inner_->close(); }
  std::string diagnostics() const override { return inner_->diagnostics(); }

 private:
  std::unique_ptr<Transport> inner_;
  std::shared_ptr<MessageTap> tap_;
};

}  // namespace

std::unique_ptr<Transport> make_tapped_transport(std::unique_ptr<Transport> inner, MessageTap tap) {
  if (!inner || !tap) return inner;
  return std::make_unique<TappedTransport>(std::move(inner), std::move(tap));
}

}  // namespace mcprt
