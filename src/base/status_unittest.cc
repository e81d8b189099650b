#include "base/status.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError(std::to_string(x) + " is odd");
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  STEPSCOPE_ASSIGN_OR_RETURN(int half, Half(x));
  STEPSCOPE_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(StatusOr, PropagatesTheFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  auto odd = Quarter(6);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message(), "3 is odd");
}

TEST(Status, WithContextPrefixesTheMessageAndKeepsTheCode) {
  Status s = DataLossError("checksum mismatch").WithContext("run/a/log");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "run/a/log: checksum mismatch");
  EXPECT_TRUE(OkStatus().WithContext("x").ok());
}

TEST(ErrnoError, NamesTheOperationAndTheReason) {
  Status s = ErrnoError("open 'x'", ENOENT);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), "open 'x': No such file or directory");
}

}  // namespace
}  // namespace stepscope
