#pragma once
// EnvLookup fakes over a map of variables, for discovery, substitution and cache-dir tests.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "mcprt/discovery.hpp"

namespace mcprt::testing {

// A lookup over a copy of `vars`.
inline EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// A lookup that sees later changes to `vars` (which must outlive it).
inline EnvLookup env_ref(const std::map<std::string, std::string>& vars) {
  return [&vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace mcprt::testing
