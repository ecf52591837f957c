#include <gtest/gtest.h>

#include <sstream>

#include "mcprt/result.hpp"

namespace mcprt {
namespace result_test {  // this file's own names in a unity batch
namespace {

TEST(Result, HoldsValueOrError) {
  Result<int> good = 7;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad = Error::make(ErrorCode::timeout, "too slow");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::timeout);
}

TEST(Error, WireAndLocalErrorsDescribeThemselves) {
  EXPECT_EQ(Error::wire(-32601, "Method not found").describe(), "wire -32601: Method not found");
  EXPECT_EQ(Error::make(ErrorCode::exited, "server exited (code 1)").describe(),
            "exited: server exited (code 1)");
  std::ostringstream os;
  os << Result<void>(Error::make(ErrorCode::closed, "gone"));
  EXPECT_EQ(os.str(), "closed: gone");
}

}  // namespace
}  // namespace result_test
}  // namespace mcprt
