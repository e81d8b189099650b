#include "analysis/clock_alignment.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

store::ClockSync Node(std::vector<store::ClockSyncSample> samples, std::string error = "") {
  store::ClockSync sync;
  sync.node = "b";
  sync.node_rank = 1;
  sync.reference_node = "a";
  sync.samples = std::move(samples);
  sync.error = std::move(error);
  return sync;
}

TEST(ClockAlignmentTest, OneBurstAlignsWithinHalfItsRoundTrip) {
  const ClockAlignment alignment = AlignClock(Node({{1000, -2'500'000'000, 80'000}}));
  EXPECT_EQ(alignment.state, ClockAlignmentState::kAligned);
  EXPECT_EQ(alignment.reference_node, "a");
  EXPECT_EQ(alignment.offset_ns, -2'500'000'000);
  EXPECT_EQ(alignment.uncertainty_ns, 40'000);
  EXPECT_EQ(alignment.drift_ns, 0);
  EXPECT_EQ(alignment.samples, 1);
}

TEST(ClockAlignmentTest, DriftWidensTheUncertaintyAroundTheMiddle) {
  // 2 ms of drift over the job: the constant offset sits in the middle, 1 ms from either end.
  const ClockAlignment alignment =
      AlignClock(Node({{0, 10'000'000, 100'000}, {60'000'000'000, 11'000'000, 60'000}, {120'000'000'000, 12'000'000, 50'000}}));
  EXPECT_EQ(alignment.offset_ns, 11'000'000);
  EXPECT_EQ(alignment.uncertainty_ns, 1'000'000 + 50'000);
  EXPECT_EQ(alignment.drift_ns, 2'000'000);
  EXPECT_EQ(alignment.samples, 3);
}

TEST(ClockAlignmentTest, TheReferenceAndNodesWithoutARecordNeedNoOffset) {
  store::ClockSync reference;
  reference.node = "a";
  reference.node_rank = 0;
  reference.reference_node = "a";
  EXPECT_EQ(AlignClock(reference).state, ClockAlignmentState::kReference);
  EXPECT_EQ(AlignClock(reference).offset_ns, 0);
  EXPECT_EQ(AlignClock(NotFoundError("none")).state, ClockAlignmentState::kNone);
}

TEST(ClockAlignmentTest, AFailedExchangeOrADamagedRecordSaysWhy) {
  const ClockAlignment failed = AlignClock(Node({}, "the clock exchange with the reference node failed: timed out"));
  EXPECT_EQ(failed.state, ClockAlignmentState::kUnaligned);
  EXPECT_EQ(failed.reason, "the clock exchange with the reference node failed: timed out");
  EXPECT_EQ(AlignClock(Node({})).reason, "no exchange with the reference node finished");
  const ClockAlignment damaged = AlignClock(DataLossError("'b/clock_sync.json' is not a clock alignment record"));
  EXPECT_EQ(damaged.state, ClockAlignmentState::kUnaligned);
  EXPECT_EQ(damaged.offset_ns, 0);
  // Later bursts that failed (the reference process ended first) keep the earlier alignment.
  EXPECT_EQ(AlignClock(Node({{0, 5, 10}}, "timed out")).state, ClockAlignmentState::kAligned);
}

}  // namespace
}  // namespace stepscope::analysis
