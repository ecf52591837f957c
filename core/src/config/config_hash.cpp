// The config hash that keys the tool cache (SPEC §4): identical on native and wasm, so
// it is computed here rather than with any platform or library hash.

#include <cstdint>

#include "mcprt/config.hpp"

namespace mcprt {

namespace {

// Written out here (not shared with tool naming's hash) so that nothing else can change
// the cache key by accident.
std::uint64_t fnv1a_64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace

std::string canonical_json(const json& value) {
  // nlohmann's objects are std::maps, so dump() already writes keys sorted by bytes, and
  // its number formatting is its own (not the C library's), hence the same everywhere.
  // `replace` keeps a string with invalid UTF-8 from throwing.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string config_hash(const ServerConfig& config) {
  const std::uint64_t h = fnv1a_64(canonical_json(config.raw));
  static const char* kHex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 0; i < 16; ++i) out[15 - i] = kHex[(h >> (4 * i)) & 0xF];
  return out;
}

}  // namespace mcprt
