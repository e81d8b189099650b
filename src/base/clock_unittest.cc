#include "base/clock.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(ReadTicks, IsMonotonic) {
  uint64_t previous = ReadTicks();
  for (int i = 0; i < 100000; ++i) {
    uint64_t now = ReadTicks();
    ASSERT_GE(now, previous);
    previous = now;
  }
}

TEST(TickConverter, MapsTicksOntoMonotonicTimeWithinAMillisecond) {
  ClockPair anchor = ReadClockPair();
  TickConverter converter(anchor, MeasureTicksPerNs(5'000'000));
  // A later pair must convert to (about) its own monotonic reading.
  ClockPair later = ReadClockPair();
  int64_t error_ns = static_cast<int64_t>(converter.ToMonotonicNs(later.ticks)) -
                     static_cast<int64_t>(later.monotonic_ns);
  EXPECT_LT(std::llabs(error_ns), 1'000'000);
}

TEST(TickConverter, HandlesTicksBeforeTheAnchor) {
  TickConverter converter({1000, 5000}, 2.0);
  EXPECT_EQ(converter.ToMonotonicNs(1000), 5000u);
  EXPECT_EQ(converter.ToMonotonicNs(3000), 6000u);
  EXPECT_EQ(converter.ToMonotonicNs(0), 4500u);
}

}  // namespace
}  // namespace stepscope
