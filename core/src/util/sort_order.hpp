#pragma once
// Sorting through one std::sort instantiation: every caller sorts indexes with a type-erased
// comparator, then moves its items into that order. Each std::sort of a distinct element or
// comparator type is ~1–1.5 KB of code, and the web module's code is budgeted (SPEC §12).

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace mcprt::detail {

// 0..n-1 ordered by `less`; equal elements keep their index order (a stable order).
std::vector<std::size_t> sorted_order(std::size_t n,
                                      const std::function<bool(std::size_t, std::size_t)>& less);

// Moves `items` into `order` (a permutation of their indexes, as sorted_order gives).
template <class T>
void apply_order(std::vector<T>& items, const std::vector<std::size_t>& order) {
  std::vector<T> out;
  out.reserve(items.size());
  for (std::size_t i : order) out.push_back(std::move(items[i]));
  items = std::move(out);
}

// Stable sort of `items` by `less` on the elements.
template <class T, class Less>
void sort_by(std::vector<T>& items, Less less) {
  apply_order(items, sorted_order(items.size(), [&](std::size_t a, std::size_t b) {
                return less(items[a], items[b]);
              }));
}

}  // namespace mcprt::detail
