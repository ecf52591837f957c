#pragma once
// Helpers shared by the fuzz targets: checks that abort the run (so libFuzzer records the
// input), splitting one input into records, and small invariants every target uses.
//
// Record format: the parts of an input are separated by a line holding only "----"
// ("\n----\n"), so a seed reads like the files and messages it stands for. Targets that
// need a few control bits take them from a header line or the first byte, as each says.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "framing/utf8.hpp"
#include "mcprt/result.hpp"

// Aborts with the failed condition named; libFuzzer saves the input as a crash.
#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace mcprt::fuzz {

inline constexpr std::string_view kRecordSeparator = "\n----\n";

inline std::string_view as_text(const std::uint8_t* bytes, std::size_t size) {
  return {reinterpret_cast<const char*>(bytes), size};
}

// The input's records, in order (an input without separators is one record).
inline std::vector<std::string_view> split_records(std::string_view input,
                                                   std::size_t max_records = 64) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < max_records) {
    const std::size_t at = input.find(kRecordSeparator);
    if (at == std::string_view::npos) break;
    out.push_back(input.substr(0, at));
    input.remove_prefix(at + kRecordSeparator.size());
  }
  out.push_back(input);
  return out;
}

// Splits off the first line (without its '\n'); `rest` keeps what follows.
inline std::string_view take_line(std::string_view& rest) {
  const std::size_t nl = rest.find('\n');
  std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  return line;
}

// FNV-1a: a stable small number from text (picks a file or a mode from mutated names).
inline std::uint32_t small_hash(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

inline bool valid_utf8(std::string_view s) { return detail::is_valid_utf8(s); }

// Every message mcprt shows a user or a model is text: valid UTF-8 that a strict dump
// accepts (a strict dump throws on anything else, and the throw aborts the run).
inline void check_text(std::string_view s) {
  FUZZ_CHECK(valid_utf8(s));
  (void)json(std::string(s)).dump();
}

inline void check_error(const Error& e) {
  check_text(e.message);
  (void)e.describe();
}

}  // namespace mcprt::fuzz
