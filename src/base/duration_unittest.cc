#include "base/duration.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(ParseDurationNs, AcceptsEveryUnit) {
  EXPECT_EQ(*ParseDurationNs("10ms"), 10'000'000);
  EXPECT_EQ(*ParseDurationNs("500ms"), 500'000'000);
  EXPECT_EQ(*ParseDurationNs("1.5s"), 1'500'000'000);
  EXPECT_EQ(*ParseDurationNs("2"), 2'000'000'000);
  EXPECT_EQ(*ParseDurationNs("60s"), 60'000'000'000);
  EXPECT_EQ(*ParseDurationNs("1m"), 60'000'000'000);
  EXPECT_EQ(*ParseDurationNs("250us"), 250'000);
  EXPECT_EQ(*ParseDurationNs("7ns"), 7);
  EXPECT_EQ(*ParseDurationNs("1h"), 3600'000'000'000);
}

TEST(ParseDurationNs, AddsUpPartsLikeOneHourThirtyMinutes) {
  EXPECT_EQ(*ParseDurationNs("1h30m"), 5400'000'000'000);
  EXPECT_EQ(*ParseDurationNs("20h5m"), 72300'000'000'000);
  EXPECT_EQ(*ParseDurationNs("1m30s500ms"), 90'500'000'000);
}

TEST(ParseDurationNs, RejectsGarbageWithAHelpfulMessage) {
  for (const char* bad : {"", "ms", "fast", "10 ms", "10parsecs", "-5s", "1e999s", "1h30", "1h 30m", "5x", "1s-2s"}) {
    auto parsed = ParseDurationNs(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("500ms"), std::string::npos);
  }
}

TEST(FormatDurationNs, PicksTheLargestExactUnit) {
  EXPECT_EQ(FormatDurationNs(500'000'000), "500ms");
  EXPECT_EQ(FormatDurationNs(2'000'000'000), "2s");
  EXPECT_EQ(FormatDurationNs(60'000'000'000), "1m");
  EXPECT_EQ(FormatDurationNs(1'500'000'000), "1500ms");
  EXPECT_EQ(FormatDurationNs(1'234), "1234ns");
}

}  // namespace
}  // namespace stepscope
