// Differential fuzzing of SseParser: whole input vs input-chosen chunking must give the
// same events, retry and last id; event data must be valid UTF-8.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mcprt/framing.hpp"

namespace {

struct Outcome {
  std::vector<std::string> events;  // event \x1f data \x1f id \x1f has_id
  bool ok = true;
  std::optional<long long> retry;
  std::string last_id;
};

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

Outcome run(std::string_view data, std::size_t max, const std::vector<std::size_t>& cuts) {
  mcprt::SseParser p(max);
  Outcome out;
  auto sink = [&](const mcprt::SseEvent& e) {
    if (!valid_utf8(e.data) || !valid_utf8(e.event) || e.data.size() > max) __builtin_trap();
    out.events.push_back(e.event + '\x1f' + e.data + '\x1f' + e.id + '\x1f' + (e.has_id ? '1' : '0'));
  };
  std::size_t pos = 0;
  for (std::size_t cut : cuts) {
    if (!out.ok) break;
    out.ok = p.feed(data.substr(pos, cut - pos), sink).ok();
    pos = cut;
  }
  if (out.ok) out.ok = p.feed(data.substr(pos), sink).ok();
  out.retry = p.retry_ms();
  out.last_id = p.last_event_id();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t max = 1 + bytes[0] * 4;
  const std::uint8_t step = bytes[1];
  std::string_view data(reinterpret_cast<const char*>(bytes) + 2, size - 2);

  Outcome whole = run(data, max, {});
  std::vector<std::size_t> cuts;
  for (std::size_t p = 1 + step % 5; p < data.size(); p += 1 + (step ^ p) % 5) cuts.push_back(p);
  Outcome chunked = run(data, max, cuts);

  if (whole.ok != chunked.ok || whole.events != chunked.events) __builtin_trap();
  if (whole.ok && (whole.retry != chunked.retry || whole.last_id != chunked.last_id)) __builtin_trap();
  return 0;
}
