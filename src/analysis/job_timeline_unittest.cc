#include "analysis/job_timeline.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

constexpr int64_t kS = 1'000'000'000;

Model StepsAt(std::initializer_list<std::pair<int64_t, int64_t>> steps) {
  ModelBuilder builder(ModelSource::kStepscope);
  NodeFacts node;
  node.name = "n1";
  const uint32_t n = builder.AddNode(node);
  int64_t number = 0;
  for (const auto& [start, end] : steps) {
    FrameworkEvent step;
    step.node = n;
    step.start_ns = start;
    step.end_ns = end;
    step.step = number++;
    step.phase = builder.Intern("Step:ModeKeys.TRAIN");
    step.name = builder.Intern("Step");
    builder.AddEvent(step);
  }
  return std::move(builder).Finish();
}

TEST(JobTimeline, SplitsTheJobAtTheFirstStepStartAndTheLastStepEnd) {
  const JobTimeline timeline = ComputeJobTimeline(StepsAt({{3 * kS, 4 * kS}, {4 * kS, 8 * kS}}), 0, 10 * kS);
  ASSERT_TRUE(timeline.has_steps);
  EXPECT_EQ(timeline.phases[0].name, "initialization");
  EXPECT_EQ(timeline.phases[0].duration_ns(), 3 * kS);
  EXPECT_EQ(timeline.phases[1].name, "training_loop");
  EXPECT_EQ(timeline.phases[1].start_ns, 3 * kS);
  EXPECT_EQ(timeline.phases[1].end_ns, 8 * kS);
  EXPECT_EQ(timeline.phases[2].name, "finalization");
  EXPECT_EQ(timeline.phases[2].duration_ns(), 2 * kS);
}

TEST(JobTimeline, StepsOutsideTheJobAreClampedSoNoPhaseIsNegative) {
  const JobTimeline timeline = ComputeJobTimeline(StepsAt({{-2 * kS, kS}, {kS, 12 * kS}}), 0, 10 * kS);
  ASSERT_TRUE(timeline.has_steps);
  for (const JobPhaseSpan& phase : timeline.phases) EXPECT_GE(phase.duration_ns(), 0) << phase.name;
  EXPECT_EQ(timeline.phases[1].duration_ns(), 10 * kS);
}

TEST(JobTimeline, WithoutStepsTheJobIsNotSplitAndAnEndBeforeTheStartIsTheStart) {
  const JobTimeline timeline = ComputeJobTimeline(StepsAt({}), 5 * kS, 4 * kS);
  EXPECT_FALSE(timeline.has_steps);
  EXPECT_EQ(timeline.end_ns, 5 * kS);
}

}  // namespace
}  // namespace stepscope::analysis
