// Fuzzing the config parser end to end: parse a file, validate and hash every server,
// describe every error. Nothing may crash, hang or throw, and every message must be
// valid JSON text when dumped (i.e. valid UTF-8).

#include <cstddef>
#include <cstdint>
#include <string>

#include "mcprt/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t mode = bytes[0];
  std::string_view text(reinterpret_cast<const char*>(bytes) + 1, size - 1);

  mcprt::ParseOptions o;
  o.servers_key = (mode & 1) ? "servers" : "mcpServers";
  o.allow_comments = (mode & 2) != 0;
  o.validate = (mode & 4) != 0;
  o.validation.stdio_available = (mode & 8) != 0;

  mcprt::ParsedConfig p = mcprt::parse_mcp_servers_json(text, "/fuzz/.mcp.json", o);
  for (const auto& s : p.servers) {
    (void)mcprt::validate_server_config(s, o.validation);
    if (mcprt::config_hash(s).size() != 16) __builtin_trap();
    (void)mcprt::is_valid_http_url(s.url);
  }
  for (const auto& e : p.errors) {
    // Strict dump: throws (and so aborts the fuzzer) on invalid UTF-8.
    (void)mcprt::json(e.describe()).dump();
  }
  for (const auto& w : p.warnings) (void)mcprt::json(w.describe()).dump();
  return 0;
}
