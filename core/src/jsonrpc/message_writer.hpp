#pragma once
// A message's JSON text, written by one serializer into one buffer that are both kept
// across messages. `json::dump()` builds a new serializer each time (its output adapter
// and its 512-byte indent string are two allocations) and grows a new string from nothing
// (three or four more for a small request); with this writer a message costs at most the
// one allocation of the caller's copy.

#include <cstddef>
#include <string>

#include "mcprt/result.hpp"  // mcprt::json

namespace mcprt::detail {

class MessageWriter {
 public:
  MessageWriter();
  MessageWriter(const MessageWriter&) = delete;
  MessageWriter& operator=(const MessageWriter&) = delete;

  // `message` as message.dump(-1, ' ', false, json::error_handler_t::replace) writes it
  // (`replace`: a string with invalid UTF-8 must not make the dump throw). The text is in
  // the writer's buffer: valid, and free to append to, until the next write(). A buffer
  // that a large message grew past kKeptCapacity is given back at the next write().
  std::string& write(const json& message);

  static constexpr std::size_t kKeptCapacity = 64 * 1024;

 private:
  std::string buf_;  // before writer_, which writes into it
  nlohmann::detail::serializer<json> writer_;
};

// The calling thread's writer.
MessageWriter& thread_message_writer();

}  // namespace mcprt::detail
