#pragma once
// The one stable hash mcprt persists or shows (tool-name suffixes, the tool cache's
// config hash): 64-bit FNV-1a, byte-for-byte the same on every target. Tests pin values
// of both uses, so a change here cannot go unnoticed.

#include <cstdint>
#include <string_view>

namespace mcprt {

constexpr std::uint64_t fnv1a64(std::string_view bytes,
                                std::uint64_t seed = 0xcbf29ce484222325ull) {
  std::uint64_t h = seed;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace mcprt
