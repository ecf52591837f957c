#pragma once
// A message's JSON text, written by one serializer into one buffer that are both kept
// across messages. `json::dump()` builds a new serializer each time (its output adapter
// and its 512-byte indent string are two allocations) and grows a new string from nothing
// (three or four more for a small request); with this writer a message costs at most the
// one allocation of a copy the caller keeps.
//
// Unless built with MCPRT_SMALL_MESSAGE_WRITER, the writer walks the message itself and appends what needs no escaping (keys
// and strings of printable ASCII without '"' or '\\', integers, literals) straight to the
// buffer; anything else (a string to escape or with UTF-8 to check, a float) is written by
// nlohmann's serializer, value by value, so the text is the same byte for byte. nlohmann's
// writer goes through a virtual call per character and decodes UTF-8 byte by byte: the
// fast path writes a small request in about a third of the instructions. The web module
// is built with MCPRT_SMALL_MESSAGE_WRITER (platform-web/CMakeLists.txt): nlohmann's
// serializer alone, as its size counts there more than this.

#include <cstddef>
#include <string>

#include "mcprt/result.hpp"  // mcprt::json

namespace mcprt::detail {

class MessageWriter {
 public:
  MessageWriter();
  MessageWriter(const MessageWriter&) = delete;
  MessageWriter& operator=(const MessageWriter&) = delete;

  // Writes `message` as message.dump(-1, ' ', false, json::error_handler_t::replace) does
  // (`replace`: a string with invalid UTF-8 must not make the dump throw) and hands the
  // text to `use`, which may append to it; returns what `use` returns. The buffer is kept
  // for the next message unless this one grew it past kKeptCapacity.
  template <class Use>
  decltype(auto) write(const json& message, Use&& use) {
    struct Keep {
      std::string& buf;
      ~Keep() {
        if (buf.capacity() > kKeptCapacity) std::string().swap(buf);
      }
    } keep{buf_};
    dump(message);
    return use(buf_);
  }
  // The text of `message`, copied out of the buffer (kept, or given back, as write() does).
  std::string text(const json& message);

  // What the writer holds between messages.
  std::size_t capacity() const { return buf_.capacity(); }

  static constexpr std::size_t kKeptCapacity = 64 * 1024;

 private:
  void dump(const json& message);  // into buf_, cleared first
  void write_value(const json& value);     // the fast path, see above
  void write_key(const std::string& key);  // an object member's name

  std::string buf_;  // before writer_, which writes into it
  nlohmann::detail::serializer<json> writer_;
};

// The calling thread's writer.
MessageWriter& thread_message_writer();

}  // namespace mcprt::detail
