#include "util/string_order.hpp"

namespace mcprt::detail {

bool StringOrder::operator()(const std::string& a, const std::string& b) const { return a < b; }

}  // namespace mcprt::detail
