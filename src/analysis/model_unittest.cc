#include "analysis/model.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

FrameworkEvent Span(ModelBuilder& builder, std::string_view phase, int64_t start, int64_t end, int64_t step = -1) {
  FrameworkEvent event;
  event.start_ns = start;
  event.end_ns = end;
  event.phase = builder.Intern(phase);
  event.name = event.phase;
  event.step = step;
  return event;
}

TEST(Model, SortsEventsParentsFirstAndKeepsFlowsPointingAtTheirEvents) {
  ModelBuilder builder(ModelSource::kKineto);
  const uint32_t kernel = builder.AddEvent(Span(builder, "kernel", 50, 60));
  const uint32_t launch = builder.AddEvent(Span(builder, "cuda_runtime", 20, 25));
  builder.AddEvent(Span(builder, "Step:ModeKeys.TRAIN", 20, 100, 0));
  builder.AddFlow(launch, kernel, builder.Intern("ac2g"), 7);
  const Model model = std::move(builder).Finish();
  ASSERT_EQ(model.events().size(), 3u);
  EXPECT_EQ(model.String(model.events()[0].phase), "Step:ModeKeys.TRAIN");
  EXPECT_EQ(model.String(model.events()[1].phase), "cuda_runtime");
  const Flow& flow = model.flows()[0];
  EXPECT_EQ(model.String(model.events()[flow.from].phase), "cuda_runtime");
  EXPECT_EQ(model.String(model.events()[flow.to].phase), "kernel");
  EXPECT_EQ(model.steps(), std::vector<uint32_t>{0});
  EXPECT_EQ(model.first_ns(), 20);
  EXPECT_EQ(model.last_ns(), 100);
}

TEST(Model, QueriesByStartAndByOverlap) {
  ModelBuilder builder(ModelSource::kStepscope);
  for (int i = 0; i < 1000; ++i) builder.AddEvent(Span(builder, "Forward", i * 10, i * 10 + 5));
  builder.AddEvent(Span(builder, "Long", 0, 100000));
  const Model model = std::move(builder).Finish();
  auto [begin, end] = model.EventsStartingIn(100, 200);
  EXPECT_EQ(end - begin, 10u);
  // [203, 207]: the span starting at 200 (ends 205) and the long one.
  EXPECT_EQ(model.EventsOverlapping(203, 207).size(), 2u);
  EXPECT_EQ(model.EventsOverlapping(206, 209).size(), 1u);
}

TEST(Model, SamplesInIsClosedAtBothEnds) {
  ModelBuilder builder(ModelSource::kSageMaker);
  NodeFacts facts;
  facts.name = "algo-1";
  const uint32_t node = builder.AddNode(facts);
  const uint32_t series = builder.SeriesFor(node, "cpu", "cpu0", "CPUUtilization");
  for (int64_t t : {30, 10, 20, 40}) builder.AddSample(series, t, static_cast<double>(t));
  EXPECT_EQ(builder.SeriesFor(node, "cpu", "cpu0", "CPUUtilization"), series);
  const Model model = std::move(builder).Finish();
  const SystemSeries& cpu = model.series()[series];
  EXPECT_EQ(cpu.time_ns, (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_EQ(cpu.value, (std::vector<double>{10, 20, 30, 40}));
  auto [begin, end] = Model::SamplesIn(cpu, 20, 30);
  EXPECT_EQ(begin, 1u);
  EXPECT_EQ(end, 3u);
}

TEST(Model, FindsArgsByKey) {
  ModelBuilder builder(ModelSource::kStepscope);
  const EventArg args[] = {builder.IntArg("num_workers", 4), builder.StringArg("dataset", "Images")};
  builder.AddEvent(Span(builder, "DataLoaderIterInitialize", 5, 5), args);
  const Model model = std::move(builder).Finish();
  const EventArg* workers = model.FindArg(model.events()[0], "num_workers");
  ASSERT_NE(workers, nullptr);
  EXPECT_EQ(workers->int_value, 4);
  EXPECT_EQ(model.String(model.FindArg(model.events()[0], "dataset")->string_value), "Images");
  EXPECT_EQ(model.FindArg(model.events()[0], "pin_memory"), nullptr);
}

TEST(Model, ProcessesAreSortedMergedAndFoundByNodeAndPid) {
  ModelBuilder builder(ModelSource::kStepscope);
  const uint32_t a = builder.AddNode(NodeFacts{.name = "a"});
  const uint32_t b = builder.AddNode(NodeFacts{.name = "b"});
  ProcessFacts late;
  late.node = b;
  late.pid = 7;
  late.rank = 3;
  builder.AddProcess(late);
  ProcessFacts first;
  first.node = a;
  first.pid = 9;
  first.rank = 1;
  builder.AddProcess(first);
  ProcessFacts again = first;  // the same process learnt twice: known fields fill unknown ones
  again.rank = 5;
  again.local_rank = 1;
  builder.AddProcess(again);
  ProcessFacts other;
  other.node = a;
  other.pid = 2;
  other.rank = 0;
  builder.AddProcess(other);
  ProcessFacts no_rank;
  no_rank.node = a;
  no_rank.pid = 4;
  builder.AddProcess(no_rank);
  const Model model = std::move(builder).Finish();
  ASSERT_EQ(model.processes().size(), 4u);
  EXPECT_EQ(model.processes()[0].pid, 2);
  EXPECT_EQ(model.processes()[1].pid, 4);
  EXPECT_EQ(model.processes()[2].pid, 9);
  EXPECT_EQ(model.processes()[3].node, b);
  const ProcessFacts* merged = model.FindProcess(a, 9);
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->rank, 1);  // the first known value wins
  EXPECT_EQ(merged->local_rank, 1);
  EXPECT_EQ(model.RankOf(b, 7), 3);
  EXPECT_EQ(model.RankOf(a, 7), -1);  // pid 7 is on node b only
  EXPECT_EQ(model.RankOf(a, 4), -1);
  EXPECT_EQ(model.RanksOnNode(a), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(model.RanksOnNode(b), (std::vector<int32_t>{3}));
}

}  // namespace
}  // namespace stepscope::analysis
