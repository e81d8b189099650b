#include "base/clock.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

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

// Scripted clocks for ReadClockPair() and MeasureTicksPerNs(): each read is the next value of
// a list, or a point on a line through a fake time that every read moves forward.
struct Script {
  std::vector<uint64_t> ticks;
  std::vector<uint64_t> monotonic_ns;
  size_t next_tick = 0;
  size_t next_monotonic = 0;
  uint64_t fake_ns = 0;
};
Script g_script;

uint64_t ScriptedTicks() { return g_script.ticks.at(g_script.next_tick++); }
uint64_t ScriptedMonotonicNs() { return g_script.monotonic_ns.at(g_script.next_monotonic++); }
// Time moves 100 ns per read; the tick clock runs at 3 ticks per ns from 7.
uint64_t LineTicks() { return 3 * (g_script.fake_ns += 100) + 7; }
uint64_t LineMonotonicNs() { return g_script.fake_ns += 100; }

TEST(ReadClockPair, KeepsTheMiddleOfTheNarrowestBracket) {
  // Five tries: brackets 50, 10, 30, 10 and 40 ticks wide.
  g_script = {};
  g_script.ticks = {100, 150, 200, 210, 300, 330, 400, 410, 500, 540};
  g_script.monotonic_ns = {1000, 2000, 3000, 4000, 5000};
  ClockPair pair = ReadClockPair({ScriptedTicks, ScriptedMonotonicNs});
  EXPECT_EQ(pair.ticks, 205u);  // the first of the two narrowest
  EXPECT_EQ(pair.monotonic_ns, 2000u);
  EXPECT_EQ(g_script.next_tick, 10u);
  EXPECT_EQ(g_script.next_monotonic, 5u);
}

TEST(MeasureTicksPerNs, IsTheSlopeBetweenTwoPairsAtLeastSpinNsApart) {
  g_script = {};
  EXPECT_EQ(MeasureTicksPerNs(1'000'000, {LineTicks, LineMonotonicNs}), 3.0);
  // It read until the monotonic clock had moved the whole spin.
  EXPECT_GE(g_script.fake_ns, 1'000'000u);
}

TEST(MeasureTicksPerNs, OnTheRealClocksIsAPositiveRate) {
  const double ticks_per_ns = MeasureTicksPerNs(1'000'000);
  if (CurrentTickSource() == TickSource::kMonotonicNs) {
    EXPECT_EQ(ticks_per_ns, 1.0);
  } else {
    EXPECT_GT(ticks_per_ns, 0.0);
    EXPECT_TRUE(std::isfinite(ticks_per_ns));
  }
}

TEST(TickConverter, FollowsItsLineExactlyOverAnHour) {
  // 2.5 ticks per ns: an hour of ticks after the anchor is an hour of ns, to the nanosecond.
  const ClockPair anchor{5'000'000'000, 1'000'000'000};
  TickConverter converter(anchor, 2.5);
  constexpr uint64_t kHourNs = 3600ull * 1'000'000'000;
  EXPECT_EQ(converter.ToMonotonicNs(anchor.ticks), anchor.monotonic_ns);
  EXPECT_EQ(converter.ToMonotonicNs(anchor.ticks + 5 * kHourNs / 2), anchor.monotonic_ns + kHourNs);
  EXPECT_EQ(converter.ToMonotonicNs(anchor.ticks + 5), anchor.monotonic_ns + 2);
}

TEST(TickConverter, HandlesTicksBeforeTheAnchor) {
  TickConverter converter({1000, 5000}, 2.0);
  EXPECT_EQ(converter.ToMonotonicNs(1000), 5000u);
  EXPECT_EQ(converter.ToMonotonicNs(3000), 6000u);
  EXPECT_EQ(converter.ToMonotonicNs(0), 4500u);
}

}  // namespace
}  // namespace stepscope
