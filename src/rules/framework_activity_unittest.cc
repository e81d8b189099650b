#include "rules/framework_activity.h"

#include <gtest/gtest.h>

namespace stepscope::rules {
namespace {

using analysis::EventKind;
using analysis::FrameworkEvent;
using analysis::Model;
using analysis::ModelBuilder;
using analysis::ModelSource;
using analysis::NodeFacts;

constexpr int64_t kUs = 1000;

class ModelMaker {
 public:
  ModelMaker() : builder_(ModelSource::kSageMaker) {
    for (const char* name : {"algo-1", "algo-2"}) {
      NodeFacts facts;
      facts.name = name;
      builder_.AddNode(facts);
    }
  }
  void Span(std::string_view phase, std::string_view name, int64_t start_ns, int64_t end_ns, uint32_t node = 0,
            int64_t step = -1, EventKind kind = EventKind::kSpan, std::string_view category = "") {
    FrameworkEvent event;
    event.start_ns = start_ns;
    event.end_ns = end_ns;
    event.phase = builder_.Intern(phase);
    event.name = builder_.Intern(name);
    event.category = builder_.Intern(category);
    event.node = node;
    event.step = step;
    event.kind = kind;
    builder_.AddEvent(event);
  }
  Model Finish() { return std::move(builder_).Finish(); }

 private:
  ModelBuilder builder_;
};

TEST(FrameworkActivity, InstantCountsOnlyEventsStrictlySpanningIt) {
  ModelMaker maker;
  maker.Span("cpu_functions", "conv", 100 * kUs, 200 * kUs);
  maker.Span("cpu_functions", "relu", 140 * kUs, 160 * kUs);
  maker.Span("cpu_functions", "other_node", 100 * kUs, 300 * kUs, /*node=*/1);
  const Model model = maker.Finish();

  // Starting exactly at t does not span it; ending exactly at t neither.
  EXPECT_EQ(FrameworkActivityAt(model, 0, 100 * kUs).value("CPU_total", nlohmann::json::object()).size(), 0u);
  EXPECT_EQ(FrameworkActivityAt(model, 0, 200 * kUs).value("CPU_total", nlohmann::json::object()).size(), 0u);
  const nlohmann::json at = FrameworkActivityAt(model, 0, 150 * kUs + 500);
  EXPECT_EQ(at["CPU_total"], (nlohmann::json{{"conv", 100}, {"relu", 20}}));
  // The other node's event spans the instant but is not counted for node 0; kAllNodes counts it.
  const nlohmann::json all = FrameworkActivityAt(model, kAllNodes, 150 * kUs + 500);
  EXPECT_EQ(all["CPU_total"], (nlohmann::json{{"conv", 100}, {"other_node", 200}, {"relu", 20}}));
}

TEST(FrameworkActivity, IntervalIsClosedAtBothEnds) {
  ModelMaker maker;
  maker.Span("Forward", "fw", 100 * kUs, 200 * kUs);
  maker.Span("DataLoaderIter", "next", 300 * kUs, 400 * kUs);
  const Model model = maker.Finish();
  // [200, 300] touches both events (end >= b, start <= e).
  EXPECT_EQ(FrameworkActivityOver(model, 0, 200 * kUs, 300 * kUs)["general"],
            (nlohmann::json{{"DataLoaderIter", 50.0}, {"Forward", 50.0}}));
  // [201 µs, 299 µs] touches neither: no general key at all.
  EXPECT_FALSE(FrameworkActivityOver(model, 0, 201 * kUs, 299 * kUs).contains("general"));
}

TEST(FrameworkActivity, FiltersOperatorsAtTwoPercentAndRenormalises) {
  ModelMaker maker;
  // 60 + 30 + 8 + 2 = 100 µs; "d" is exactly 2 % and so dropped (the filter is "> 2").
  maker.Span("cpu_functions", "a", 0, 60 * kUs);
  maker.Span("cpu_functions", "b", 0, 30 * kUs);
  maker.Span("cpu_functions", "c", 0, 8 * kUs);
  maker.Span("cpu_functions", "d", 0, 2 * kUs);
  const Model model = maker.Finish();
  const nlohmann::json details = FrameworkActivityOver(model, 0, 0, 100 * kUs);
  // Expected from the reference's filter_events in Python: [x / sum(kept) * 100 for x in kept]
  // with kept = [60.0, 30.0, 8.0].
  ASSERT_EQ(details["CPU"].size(), 3u);
  EXPECT_DOUBLE_EQ(details["CPU"]["a"].get<double>(), 61.224489795918366);
  EXPECT_DOUBLE_EQ(details["CPU"]["b"].get<double>(), 30.612244897959183);
  EXPECT_DOUBLE_EQ(details["CPU"]["c"].get<double>(), 8.16326530612245);
  EXPECT_EQ(details["CPU_total"], (nlohmann::json{{"a", 60}, {"b", 30}, {"c", 8}}));
  EXPECT_EQ(details["ratio"], (nlohmann::json{{"cpu_functions", 100.0}}));
  EXPECT_FALSE(details.contains("GPU"));
}

TEST(FrameworkActivity, RatioPairsEachPhaseWithItsOwnTotal) {
  ModelMaker maker;
  maker.Span("cpu_functions", "op", 0, 100 * kUs);
  maker.Span("gpu_functions-dev:0", "kernel", 0, 300 * kUs);
  const Model model = maker.Finish();
  const nlohmann::json details = FrameworkActivityOver(model, 0, 0, 300 * kUs);
  // The reference would print cpu_functions: 75 (CPU labels zipped with GPU totals first).
  EXPECT_EQ(details["ratio"], (nlohmann::json{{"cpu_functions", 25.0}, {"gpu_functions-dev:0", 75.0}}));
  EXPECT_EQ(details["GPU"], (nlohmann::json{{"kernel", 100.0}}));
  EXPECT_EQ(details["GPU_total"], (nlohmann::json{{"kernel", 300}}));
}

TEST(FrameworkActivity, BucketsStepsForwardBackwardHorovodAndGeneral) {
  ModelMaker maker;
  maker.Span("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", 0, 300 * kUs, 0, /*step=*/1);
  maker.Span("Step:ModeKeys.EVAL", "Step:ModeKeys.EVAL", 0, 100 * kUs, 0, /*step=*/1);
  maker.Span("Forward-SubModuleInternal", "layer1", 0, 10 * kUs);
  maker.Span("Backward-SubModuleInternal", "layer1", 0, 30 * kUs);
  maker.Span("Adam_Allreduce/HorovodAllreduce_dense_0", "ALLREDUCE", 0, 99 * kUs);
  maker.Span("whatever", "NEGOTIATE", 0, 1 * kUs, 0, -1, EventKind::kSpan, "horovod");
  maker.Span("DataLoaderIter", "next", 0, 20 * kUs);
  // Never counted: stepscope's own events, instants.
  maker.Span("stepscope", "DetailWindow:operators", 0, 500 * kUs);
  maker.Span("Forward", "mark", 5 * kUs, 5 * kUs, 0, -1, EventKind::kInstant);
  const Model model = maker.Finish();
  const nlohmann::json details = FrameworkActivityOver(model, 0, 0, 300 * kUs);
  EXPECT_EQ(details["phase"], (nlohmann::json{{"Step:ModeKeys.TRAIN", 75.0}, {"Step:ModeKeys.EVAL", 25.0}}));
  EXPECT_EQ(details["phase_time"], nlohmann::json::object());
  EXPECT_EQ(details["forward_backward"], (nlohmann::json{{"Forward pass", 25.0}, {"Backward pass", 75.0}}));
  // NEGOTIATE is 1 % of Horovod time: filtered out, ALLREDUCE renormalised to 100.
  EXPECT_EQ(details["horovod"], (nlohmann::json{{"ALLREDUCE", 100.0}}));
  EXPECT_EQ(details["general"], (nlohmann::json{{"DataLoaderIter", 100.0}}));
  // The §12 aggregation never writes the step gap.
  EXPECT_FALSE(details["phase"].contains("others"));
  EXPECT_EQ(details["ratio"], nlohmann::json::object());
}

TEST(FrameworkActivity, StepGapIsSpanMinusStepTime) {
  ModelMaker maker;
  // Steps 0..10 µs and 30..40 µs: span 40, step time 20, others 20.
  maker.Span("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", 0, 10 * kUs, 0, 0);
  maker.Span("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", 30 * kUs, 40 * kUs, 0, 1);
  const Model model = maker.Finish();
  FrameworkActivity activity(/*with_step_gap=*/true);
  for (const FrameworkEvent& event : model.events()) activity.Add(model, event);
  EXPECT_EQ(activity.ToJson()["phase"], (nlohmann::json{{"Step:ModeKeys.TRAIN", 50.0}, {"others", 50.0}}));
}

TEST(FrameworkActivity, AllZeroTotalsGiveZeroSharesNotNaN) {
  ModelMaker maker;
  maker.Span("cpu_functions", "empty", 10, 10);
  maker.Span("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", 10, 10, 0, 0);
  maker.Span("Forward-SubModuleInternal", "m", 10, 10);
  maker.Span("Backward-SubModuleInternal", "m", 10, 10);
  const Model model = maker.Finish();
  const nlohmann::json details = FrameworkActivityOver(model, 0, 0, 100);
  EXPECT_EQ(details["ratio"], (nlohmann::json{{"cpu_functions", 0.0}}));
  EXPECT_EQ(details["CPU"], nlohmann::json::object());
  EXPECT_EQ(details["phase"], (nlohmann::json{{"Step:ModeKeys.TRAIN", 0.0}}));
  EXPECT_EQ(details["forward_backward"], (nlohmann::json{{"Forward pass", 0.0}, {"Backward pass", 0.0}}));
  EXPECT_EQ(details.dump().find("null"), std::string::npos);
}

TEST(FrameworkActivity, AccumulatesOverCallsAndKeepsOtherDetailKeys) {
  ModelMaker maker;
  maker.Span("cpu_functions", "a", 0, 10 * kUs);
  maker.Span("cpu_functions", "b", 100 * kUs, 130 * kUs);
  const Model model = maker.Finish();
  FrameworkActivity activity;
  activity.AddAt(model, 0, 5 * kUs);
  activity.AddAt(model, 0, 110 * kUs);
  nlohmann::json details = {{"low_gpu_utilization", 3}};
  activity.WriteDetails(&details);
  EXPECT_EQ(details["low_gpu_utilization"], 3);
  EXPECT_EQ(details["CPU_total"], (nlohmann::json{{"a", 10}, {"b", 30}}));
  EXPECT_EQ(details["CPU"], (nlohmann::json{{"a", 25.0}, {"b", 75.0}}));
}

TEST(FrameworkActivity, TopListsLargestNonStepActivityWithShares) {
  ModelMaker maker;
  maker.Span("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", 0, 100 * kUs, 0, 3);
  maker.Span("cpu_functions", "aten::conv2d", 0, 40 * kUs);
  maker.Span("gpu_functions-dev:0", "sgemm", 0, 30 * kUs);
  maker.Span("DataLoaderIter", "next", 0, 50 * kUs);
  const Model model = maker.Finish();
  FrameworkActivity activity;
  activity.AddOver(model, 0, 0, 100 * kUs);
  const std::vector<ActivityShare> top = activity.Top(2, 100 * kUs);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].kind, "phase");
  EXPECT_EQ(top[0].name, "DataLoaderIter");
  EXPECT_EQ(top[0].total_ns, 50 * kUs);
  EXPECT_DOUBLE_EQ(top[0].share, 0.5);
  EXPECT_EQ(top[1].kind, "operator");
  EXPECT_EQ(top[1].name, "aten::conv2d");
}

TEST(FrameworkActivity, MicrosecondsAreIntegersWhenWhole) {
  EXPECT_EQ(MicrosecondsJson(1'591'160'699'000'000'000).dump(), "1591160699000000");
  EXPECT_EQ(MicrosecondsJson(1500).dump(), "1.5");
}

}  // namespace
}  // namespace stepscope::rules
