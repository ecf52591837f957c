#include <string>

#include "mcprt/json_object.hpp"
#include "mcprt/framing.hpp"

namespace mcprt {

namespace {

// Buffer capacity kept between lines; larger buffers are released once their line is out.
constexpr std::size_t kKeptCapacity = 4096;

// A line without its terminator: drop one trailing '\r' (CRLF line ends).
std::string_view strip_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

Status NewlineFramer::too_large(std::size_t seen) {
  failed_ = true;
  buf_.clear();
  buf_.shrink_to_fit();
  std::string msg = "line exceeds the limit of " + std::to_string(max_) + " bytes";
  if (seen > 0) msg += " (at least " + std::to_string(seen) + " bytes)";
  return Error::make(ErrorCode::message_too_large, std::move(msg),
                     json_object({{"max_bytes", max_}}));
}

Status NewlineFramer::feed(std::string_view bytes,
                           const std::function<void(std::string_view line)>& on_line) {
  if (failed_) return too_large(0);
  std::size_t pos = 0;

  if (!buf_.empty()) {
    const std::size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) {
      // Still incomplete. The only byte allowed past the limit is a '\r' whose '\n' is
      // still to come; anything more is over the limit whatever follows.
      const std::size_t total = buf_.size() + bytes.size();
      if (total > max_ + 1 || (total == max_ + 1 && bytes.back() != '\r')) return too_large(total);
      buf_.append(bytes);
      return {};
    }
    std::size_t len = buf_.size() + nl;
    const char last = nl > 0 ? bytes[nl - 1] : buf_.back();
    if (last == '\r') --len;
    if (len > max_) return too_large(len);
    buf_.append(bytes.data(), nl);
    const std::string_view line = strip_cr(buf_);
    if (!line.empty()) on_line(line);
    buf_.clear();
    // A long line (a tools/list) left a large buffer behind: give it back, so an idle
    // connection keeps no more than a small partial line's worth.
    if (buf_.capacity() > kKeptCapacity) std::string().swap(buf_);
    pos = nl + 1;
  }

  // Fast path: lines entirely inside this chunk are handed out without copying.
  while (pos < bytes.size()) {
    const std::size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) break;
    const std::string_view line = strip_cr(bytes.substr(pos, nl - pos));
    if (line.size() > max_) return too_large(line.size());
    if (!line.empty()) on_line(line);
    pos = nl + 1;
  }

  const std::string_view rest = bytes.substr(pos);
  if (rest.size() > max_ + 1 || (rest.size() == max_ + 1 && rest.back() != '\r')) {
    return too_large(rest.size());
  }
  buf_.assign(rest);
  return {};
}

}  // namespace mcprt
