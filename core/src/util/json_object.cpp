#include "mcprt/json_object.hpp"

namespace mcprt {

json json_object(std::initializer_list<std::pair<const char*, json>> members) {
  json out = json::object();
  for (const auto& [key, value] : members) out[key] = value;
  return out;
}

}  // namespace mcprt
