// The config hash that keys the tool cache (SPEC §4): identical on native and wasm, so
// it is computed here rather than with any platform or library hash.

#include <cstdint>

#include "mcprt/config.hpp"
#include "mcprt/hash.hpp"

namespace mcprt {

std::string canonical_json(const json& value) {
  // nlohmann's objects are std::maps, so dump() already writes keys sorted by bytes, and
  // its number formatting is its own (not the C library's), hence the same everywhere.
  // `replace` keeps a string with invalid UTF-8 from throwing.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string config_hash(const ServerConfig& config) {
  const std::uint64_t h = fnv1a64(canonical_json(config.raw));
  static const char* kHex = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 0; i < 16; ++i) out[15 - i] = kHex[(h >> (4 * i)) & 0xF];
  return out;
}

}  // namespace mcprt
