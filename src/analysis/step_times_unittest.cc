#include "analysis/step_times.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(StepTimes, DisturbedStepsAreCountedApartAndLeftOutOfTheDurations) {
  ModelBuilder builder(ModelSource::kStepscope);
  NodeFacts node;
  node.name = "n1";
  const uint32_t n = builder.AddNode(node);
  for (int i = 0; i < 5; ++i) {
    FrameworkEvent step;
    step.node = n;
    step.start_ns = i * 100 * kMs;
    step.end_ns = step.start_ns + (10 + i) * kMs;
    step.step = i;
    step.phase = builder.Intern(i < 4 ? "Step:ModeKeys.TRAIN" : "Step:ModeKeys.EVAL");
    step.name = builder.Intern("Step");
    const EventArg disturbed = builder.IntArg(kDisturbedStepArg, 1);
    builder.AddEvent(step, i == 2 ? std::span<const EventArg>(&disturbed, 1) : std::span<const EventArg>());
  }
  const Model model = std::move(builder).Finish();
  const std::vector<StepTimeGroup> groups = GroupStepTimes(model);
  ASSERT_EQ(groups.size(), 2u);
  const StepTimeGroup& train = model.String(groups[0].phase) == "Step:ModeKeys.TRAIN" ? groups[0] : groups[1];
  const StepTimeGroup& eval = &train == &groups[0] ? groups[1] : groups[0];
  EXPECT_EQ(train.duration_ms, (std::vector<double>{10, 11, 13}));
  EXPECT_EQ(train.measured.size(), 3u);
  EXPECT_EQ(train.disturbed, 1u);
  EXPECT_EQ(eval.duration_ms, (std::vector<double>{14}));
  EXPECT_EQ(eval.disturbed, 0u);
}

}  // namespace
}  // namespace stepscope::analysis
