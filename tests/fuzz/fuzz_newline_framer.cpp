// Differential fuzzing of NewlineFramer: the same bytes fed whole and in input-chosen
// chunks must give the same lines and the same verdict, and every line must respect the
// framer's promises (non-empty, no '\n', within the limit).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mcprt/framing.hpp"

namespace {

struct Outcome {
  std::vector<std::string> lines;
  bool ok = true;
};

void check(std::string_view line, std::size_t max) {
  if (line.empty() || line.size() > max || line.find('\n') != std::string_view::npos) {
    __builtin_trap();
  }
}

Outcome run(std::string_view data, std::size_t max, const std::vector<std::size_t>& cuts) {
  mcprt::NewlineFramer f(max);
  Outcome out;
  std::size_t pos = 0;
  auto sink = [&](std::string_view line) {
    check(line, max);
    out.lines.emplace_back(line);
  };
  for (std::size_t cut : cuts) {
    if (!out.ok) break;
    out.ok = f.feed(data.substr(pos, cut - pos), sink).ok();
    pos = cut;
  }
  if (out.ok) out.ok = f.feed(data.substr(pos), sink).ok();
  if (f.buffered() > max + 1) __builtin_trap();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t max = 1 + bytes[0] % 64;
  const std::uint8_t step = bytes[1];
  std::string_view data(reinterpret_cast<const char*>(bytes) + 2, size - 2);

  Outcome whole = run(data, max, {});
  std::vector<std::size_t> cuts;
  for (std::size_t p = 1 + step % 7; p < data.size(); p += 1 + (step + p) % 7) cuts.push_back(p);
  Outcome chunked = run(data, max, cuts);

  // An error stops delivery at the offending line in both runs, so the lines before it
  // must match too.
  if (whole.ok != chunked.ok || whole.lines != chunked.lines) __builtin_trap();
  return 0;
}
