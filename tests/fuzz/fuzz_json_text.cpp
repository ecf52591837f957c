// mcprt::parse_json against nlohmann's strict parser, the oracle (tests/support/include/
// mcprt/testing/json_oracle.hpp). Input: the first byte's low bit allows comments; the
// rest is the text.
//
// Invariants: both accept or both refuse; an accepted text gives the same DOM with the same
// number types (unsigned, integer, float); a refused one the same position and nlohmann's
// words without the input it quotes.

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "mcprt/testing/json_oracle.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size == 0) return 0;
  const bool comments = (bytes[0] & 1) != 0;
  const std::string difference =
      mcprt::testing::json_parse_difference(mcprt::fuzz::as_text(bytes + 1, size - 1), comments);
  if (!difference.empty()) std::fprintf(stderr, "%s\n", difference.c_str());
  FUZZ_CHECK(difference.empty());
  return 0;
}
