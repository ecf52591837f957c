#pragma once
// Captured<T>: a callback that records how often it ran and the last value it got, for
// tests of asynchronous APIs (Status, Result<json>, ...):
//
//   Captured<Status> connected;
//   session->connect(connected.fn());
//   ex.run_until_idle();
//   EXPECT_EQ(connected.calls, 1);
//   ASSERT_TRUE(connected.ok()) << connected.error();

#include <functional>
#include <optional>
#include <utility>

#include "mcprt/result.hpp"

namespace mcprt::testing {

template <class T>
struct Captured {
  int calls = 0;
  std::optional<T> last;
  std::function<void(T)> fn() {
    return [this](T v) {
      ++calls;
      last = std::move(v);
    };
  }
  bool ok() const { return last && last->ok(); }
  const Error& error() const { return last->error(); }
};

}  // namespace mcprt::testing
