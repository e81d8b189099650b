#include "analysis/annotation_durations.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

FrameworkEvent Span(ModelBuilder& builder, std::string_view category, std::string_view name, int64_t start, int64_t end,
                    std::string_view phase = "") {
  FrameworkEvent event;
  event.start_ns = start;
  event.end_ns = end;
  event.category = builder.Intern(category);
  event.name = builder.Intern(name);
  event.phase = builder.Intern(phase.empty() ? name : phase);
  return event;
}

TEST(AnnotationDurations, CountsEachKinetoAnnotationOnHostAndGpuApart) {
  ModelBuilder builder(ModelSource::kKineto);
  // "forward" ran 4 times on the host (10, 20, 30, 40 ns), twice on the GPU; "loss" once.
  for (int i = 1; i <= 4; ++i) builder.AddEvent(Span(builder, "user_annotation", "forward", i * 100, i * 100 + i * 10));
  builder.AddEvent(Span(builder, "gpu_user_annotation", "forward", 1000, 1100));
  builder.AddEvent(Span(builder, "gpu_user_annotation", "forward", 2000, 2300));
  builder.AddEvent(Span(builder, "user_annotation", "loss", 3000, 3001));
  builder.AddEvent(Span(builder, "cpu_op", "aten::mm", 3000, 3050));
  FrameworkEvent step = Span(builder, "user_annotation", "Step:ModeKeys.TRAIN", 0, 5000, "Step:ModeKeys.TRAIN");
  step.step = 0;
  builder.AddEvent(step);
  const AnnotationSummary summary = ComputeAnnotationDurations(std::move(builder).Finish());
  EXPECT_EQ(summary.names_total, 3u);
  ASSERT_EQ(summary.annotations.size(), 3u);
  const AnnotationDurations& forward = summary.annotations[0];
  EXPECT_EQ(forward.name, "forward");
  EXPECT_FALSE(forward.on_gpu);
  EXPECT_EQ(forward.count, 4);
  EXPECT_EQ(forward.total_ns, 100);
  EXPECT_DOUBLE_EQ(forward.min_ns, 10);
  EXPECT_DOUBLE_EQ(forward.max_ns, 40);
  EXPECT_DOUBLE_EQ(forward.p50_ns, 25);    // numpy: between 20 and 30
  EXPECT_DOUBLE_EQ(forward.p95_ns, 38.5);  // 30 + 0.85 * 10
  ASSERT_EQ(forward.edges_ns.size(), static_cast<size_t>(kAnnotationBins) + 1);
  EXPECT_DOUBLE_EQ(forward.edges_ns.front(), 10);
  EXPECT_DOUBLE_EQ(forward.edges_ns.back(), 40);
  EXPECT_DOUBLE_EQ(forward.counts.front(), 1);
  EXPECT_DOUBLE_EQ(forward.counts.back(), 1);
  double sum = 0;
  for (double count : forward.counts) sum += count;
  EXPECT_DOUBLE_EQ(sum, 4);
  EXPECT_EQ(summary.annotations[1].name, "forward");
  EXPECT_TRUE(summary.annotations[1].on_gpu);
  EXPECT_EQ(summary.annotations[1].count, 2);
  EXPECT_DOUBLE_EQ(summary.annotations[1].p50_ns, 200);
  EXPECT_EQ(summary.annotations[2].name, "loss");
}

TEST(AnnotationDurations, ReadsStepscopeSpansButNotItsOwnEventsStepsOrOperators) {
  ModelBuilder builder(ModelSource::kStepscope);
  builder.AddEvent(Span(builder, "", "Forward", 0, 10));
  builder.AddEvent(Span(builder, "", "Forward", 20, 40));
  builder.AddEvent(Span(builder, "", "DetailWindowWrite", 0, 5, "stepscope"));
  builder.AddEvent(Span(builder, "cpu_op", "aten::conv2d", 0, 5, "cpu_functions"));
  FrameworkEvent step = Span(builder, "", "Step:ModeKeys.TRAIN", 0, 50);
  step.step = 0;
  builder.AddEvent(step);
  const AnnotationSummary summary = ComputeAnnotationDurations(std::move(builder).Finish());
  ASSERT_EQ(summary.annotations.size(), 1u);
  EXPECT_EQ(summary.annotations[0].name, "Forward");
  EXPECT_EQ(summary.annotations[0].count, 2);
  EXPECT_DOUBLE_EQ(summary.annotations[0].p50_ns, 15);
}

TEST(AnnotationDurations, KeepsTheMostFrequentNamesWithinTheBound) {
  ModelBuilder builder(ModelSource::kKineto);
  for (size_t n = 0; n < kMaxAnnotationNames + 5; ++n) {
    const std::string name = "range" + std::to_string(100 + n);
    for (size_t k = 0; k <= n % 3; ++k) builder.AddEvent(Span(builder, "user_annotation", name, k * 10, k * 10 + 5));
  }
  const AnnotationSummary summary = ComputeAnnotationDurations(std::move(builder).Finish());
  EXPECT_EQ(summary.names_total, kMaxAnnotationNames + 5);
  ASSERT_EQ(summary.annotations.size(), kMaxAnnotationNames);
  EXPECT_EQ(summary.annotations.front().count, 3);
  EXPECT_EQ(summary.annotations.front().name, "range102");  // ties by name
  EXPECT_EQ(summary.annotations.back().count, 1);
}

TEST(AnnotationDurations, GivesNoneForSageMakerData) {
  ModelBuilder builder(ModelSource::kSageMaker);
  builder.AddEvent(Span(builder, "", "Forward", 0, 10));
  EXPECT_TRUE(ComputeAnnotationDurations(std::move(builder).Finish()).annotations.empty());
}

}  // namespace
}  // namespace stepscope::analysis
