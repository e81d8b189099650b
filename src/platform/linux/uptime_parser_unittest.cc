#include "platform/linux/uptime_parser.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(ParseUptimeNs, ReadsSecondsAndHundredthsExactly) {
  // Captured from the build VM.
  StatusOr<uint64_t> uptime = ParseUptimeNs("1381.54 1394.64\n");
  ASSERT_TRUE(uptime.ok()) << uptime.status().message();
  EXPECT_EQ(*uptime, 1381'540'000'000ull);
}

TEST(ParseUptimeNs, AcceptsWholeSecondsAndNanoseconds) {
  EXPECT_EQ(*ParseUptimeNs("12 1\n"), 12'000'000'000ull);
  EXPECT_EQ(*ParseUptimeNs("1.000000001 1.5"), 1'000'000'001ull);
}

TEST(ParseUptimeNs, RejectsMalformedText) {
  EXPECT_FALSE(ParseUptimeNs("").ok());
  EXPECT_FALSE(ParseUptimeNs("1381.54\n").ok());  // cut short before the idle time
  EXPECT_FALSE(ParseUptimeNs("-1.00 2.00\n").ok());
  EXPECT_FALSE(ParseUptimeNs("1. 2.00\n").ok());
  EXPECT_FALSE(ParseUptimeNs("1.0000000001 2.00\n").ok());
  EXPECT_FALSE(ParseUptimeNs("99999999999999999999.00 2.00\n").ok());
  StatusOr<uint64_t> bad = ParseUptimeNs("12x.5 3.0\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(bad.status().message(), "/proc/uptime: '12x.5' is not a number of seconds");
}

}  // namespace
}  // namespace stepscope
