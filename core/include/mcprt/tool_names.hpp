#pragma once
// Agent-facing tool names (SPEC §6): `mcp_<server>_<tool>`.
//  - characters outside [A-Za-z0-9_-] become '_' (digits kept);
//  - a name over max_length keeps a prefix and ends with '_' + 8 hex chars of a stable
//    hash of the raw (server, tool) pair;
//  - when several raw pairs map to the same name, the pair that sorts first keeps the
//    plain name and the others get the hash suffix.
// Names are never parsed back: callers keep the reverse map this returns.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "mcprt/hash.hpp"

namespace mcprt {

inline constexpr std::size_t kDefaultMaxToolNameLength = 64;

struct RawToolRef {
  std::string server;
  std::string tool;
};

// The name for one pair, ignoring collisions.
std::string make_tool_name(std::string_view server, std::string_view tool,
                           std::size_t max_length = kDefaultMaxToolNameLength);

// Names for a set of pairs, collisions resolved deterministically; result[i] names
// refs[i]. The result does not depend on the order of `refs`.
std::vector<std::string> assign_tool_names(const std::vector<RawToolRef>& refs,
                                           std::size_t max_length = kDefaultMaxToolNameLength);

// Which of `servers` (configured server names) a tool name could belong to, before any
// server is connected (the CLI's `call` starts only those): each server whose prefix
// `mcp_<server>_`, as make_tool_name writes it, begins `tool_name` — or, for a name cut to
// `max_length` with a hash suffix, whose prefix agrees with the part that was kept. Longest
// prefix first; several when names overlap (servers "a" and "a_b" both fit "mcp_a_b_c").
// A guess from names only: the reverse map of the built tools stays authoritative.
std::vector<std::string> servers_for_tool_name(std::string_view tool_name,
                                               const std::vector<std::string>& servers,
                                               std::size_t max_length = kDefaultMaxToolNameLength);

}  // namespace mcprt
