#include "jsonrpc/message_writer.hpp"

#include <charconv>
#include <cstdint>
#include <memory>

namespace mcprt::detail {

MessageWriter::MessageWriter()
    : writer_(std::make_shared<nlohmann::detail::output_string_adapter<char, std::string>>(buf_),
              ' ', json::error_handler_t::replace) {}

#if !defined(MCPRT_SMALL_MESSAGE_WRITER)
namespace {

// Appends `s` quoted when JSON writes it as it is (printable ASCII but the quote and the
// backslash); false, appending nothing, otherwise.
bool append_as_is(std::string& out, const std::string& s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  out += '"';
  out += s;
  out += '"';
  return true;
}

// Out of line: the digits' buffer stays out of write_value's frame, which nests once per
// level of the message.
[[gnu::noinline]] void append_integer(std::string& out, const json& value) {
  char digits[24];
  const char* end = value.is_number_unsigned()
                        ? std::to_chars(digits, digits + sizeof digits, value.get<std::uint64_t>()).ptr
                        : std::to_chars(digits, digits + sizeof digits, value.get<std::int64_t>()).ptr;
  out.append(digits, static_cast<std::size_t>(end - digits));
}

}  // namespace
#endif

void MessageWriter::dump(const json& message) {
  buf_.clear();
#if defined(MCPRT_SMALL_MESSAGE_WRITER)
  writer_.dump(message, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
#else
  write_value(message);
#endif
}

#if !defined(MCPRT_SMALL_MESSAGE_WRITER)
void MessageWriter::write_value(const json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      buf_ += '{';
      bool first = true;
      for (const auto& [key, member] : value.get_ref<const json::object_t&>()) {
        if (!first) buf_ += ',';
        first = false;
        write_key(key);
        buf_ += ':';
        write_value(member);
      }
      buf_ += '}';
      return;
    }
    case json::value_t::array: {
      buf_ += '[';
      bool first = true;
      for (const json& element : value) {
        if (!first) buf_ += ',';
        first = false;
        write_value(element);
      }
      buf_ += ']';
      return;
    }
    case json::value_t::string:
      if (append_as_is(buf_, value.get_ref<const std::string&>())) return;
      break;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      append_integer(buf_, value);
      return;
    case json::value_t::boolean:
      buf_ += value.get<bool>() ? "true" : "false";
      return;
    case json::value_t::null:
      buf_ += "null";
      return;
    default:  // floats, binary, discarded
      break;
  }
  writer_.dump(value, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
}

void MessageWriter::write_key(const std::string& key) {
  if (append_as_is(buf_, key)) return;
  writer_.dump(json(key), /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
}
#endif

std::string MessageWriter::text(const json& message) {
  dump(message);
  std::string copy = buf_;
  if (buf_.capacity() > kKeptCapacity) std::string().swap(buf_);
  return copy;
}

MessageWriter& thread_message_writer() {
  thread_local MessageWriter writer;
  return writer;
}

}  // namespace mcprt::detail
