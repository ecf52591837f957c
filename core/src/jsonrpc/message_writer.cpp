#include "jsonrpc/message_writer.hpp"

#include <memory>

namespace mcprt::detail {

MessageWriter::MessageWriter()
    : writer_(std::make_shared<nlohmann::detail::output_string_adapter<char, std::string>>(buf_),
              ' ', json::error_handler_t::replace) {}

void MessageWriter::dump(const json& message) {
  buf_.clear();
  writer_.dump(message, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
}

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
