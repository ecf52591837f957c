#include "util/sort_order.hpp"

#include <algorithm>
#include <numeric>

namespace mcprt::detail {

std::vector<std::size_t> sorted_order(std::size_t n,
                                      const std::function<bool(std::size_t, std::size_t)>& less) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (less(a, b)) return true;
    if (less(b, a)) return false;
    return a < b;
  });
  return order;
}

}  // namespace mcprt::detail
