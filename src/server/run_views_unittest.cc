#include "server/run_views.h"

#include <gtest/gtest.h>

#include "server/series_buckets.h"

namespace stepscope::server {
namespace {

constexpr int64_t kMs = 1'000'000;

analysis::FrameworkEvent Span(analysis::ModelBuilder& builder, uint32_t node, int32_t pid, const char* phase,
                              int64_t start_ns, int64_t end_ns, int64_t step = -1) {
  analysis::FrameworkEvent event;
  event.node = node;
  event.pid = pid;
  event.tid = pid;
  event.phase = builder.Intern(phase);
  event.name = builder.Intern(phase);
  event.start_ns = start_ns;
  event.end_ns = end_ns;
  event.step = step;
  return event;
}

// Two nodes; node 0 has 40 TRAIN steps of 100 ms: 20 ms data wait, 30 forward, 40 backward, 5 optimizer.
analysis::Model StepModel() {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "algo-1";
  const uint32_t a = builder.AddNode(facts);
  facts.name = "algo-2";
  const uint32_t b = builder.AddNode(facts);
  for (int64_t i = 0; i < 40; ++i) {
    const int64_t t = 1'000'000 * kMs + i * 100 * kMs;
    builder.AddEvent(Span(builder, a, 7, "Step:ModeKeys.TRAIN", t, t + 100 * kMs, i));
    builder.AddEvent(Span(builder, a, 7, "DataLoaderIter", t, t + 20 * kMs));
    builder.AddEvent(Span(builder, a, 7, "Forward", t + 20 * kMs, t + 50 * kMs));
    builder.AddEvent(Span(builder, a, 7, "Backward", t + 50 * kMs, t + 90 * kMs));
    builder.AddEvent(Span(builder, a, 7, "OptimizerStep", t + 90 * kMs, t + 95 * kMs));
  }
  builder.AddEvent(Span(builder, b, 9, "Step:ModeKeys.EVAL", 1'000'000 * kMs, 1'000'000 * kMs + 10 * kMs, 0));
  const uint32_t cpu = builder.SeriesFor(a, "stepscope", "cpu/total/util_pct", "");
  const uint32_t core = builder.SeriesFor(b, "cpu", "cpu3", "CPUUtilization");
  for (int64_t i = 0; i < 10000; ++i) {
    builder.AddSample(cpu, 1'000'000 * kMs + i * kMs, static_cast<double>(i % 100));
    builder.AddSample(core, 1'000'000 * kMs + i * kMs, 50);
  }
  return std::move(builder).Finish();
}

TEST(RunViewsTest, MetricKeyPatterns) {
  EXPECT_TRUE(MetricKeyMatches("cpu/total/util_pct", "cpu/total/util_pct"));
  EXPECT_TRUE(MetricKeyMatches("cpu/cpu*/util_pct", "cpu/cpu12/util_pct"));
  EXPECT_FALSE(MetricKeyMatches("cpu/cpu*/util_pct", "cpu/total/util_pct"));
  EXPECT_TRUE(MetricKeyMatches("*", "gpu/gpu0/memory_used_bytes"));
  EXPECT_TRUE(MetricKeyMatches("gpu/*/util*", "gpu/gpu1/util_pct"));
  EXPECT_FALSE(MetricKeyMatches("gpu", "gpu/gpu1/util_pct"));
  EXPECT_FALSE(MetricKeyMatches("", "x"));
}

TEST(RunViewsTest, SeriesAreBoundedPerNodeAndListEveryKey) {
  const analysis::Model model = StepModel();
  SeriesQuery query;
  query.keys = {"cpu/*/util_pct"};
  query.points = 100;
  const nlohmann::json answer = SeriesAnswer(model, query);
  EXPECT_EQ(answer["keys"].size(), 2u);
  ASSERT_EQ(answer["series"].size(), 2u);
  for (const nlohmann::json& series : answer["series"]) {
    EXPECT_LE(series["t_ns"].size(), 100u);
    EXPECT_EQ(series["min"].size(), series["t_ns"].size());
  }
  EXPECT_EQ(answer["series"][0]["node"], "algo-1");
  EXPECT_EQ(answer["series"][0]["key"], "cpu/total/util_pct");
  EXPECT_EQ(answer["series"][0]["max"][0], 99.0);
  EXPECT_EQ(answer["series"][1]["node"], "algo-2");
  EXPECT_EQ(answer["series"][1]["key"], "cpu/cpu3/util_pct");

  query.points = 1'000'000;  // asking for more than the cap gets the cap
  for (const nlohmann::json& series : SeriesAnswer(model, query)["series"]) {
    EXPECT_LE(series["t_ns"].size(), kMaxSeriesPoints);
  }
  query.keys.clear();
  EXPECT_TRUE(SeriesAnswer(model, query)["series"].empty());
}

TEST(RunViewsTest, RecentStepsSplitTheLastStepsOfEachProcess) {
  const analysis::Model model = StepModel();
  const nlohmann::json answer = RecentStepsAnswer(model, 30);
  const nlohmann::json& steps = answer["steps"];
  ASSERT_EQ(steps.size(), 31u);  // 30 of algo-1's 40, algo-2's only one
  EXPECT_EQ(steps[0]["node"], "algo-1");
  EXPECT_EQ(steps[0]["step"], 10);
  EXPECT_EQ(steps[29]["step"], 39);
  EXPECT_EQ(steps[30]["node"], "algo-2");
  EXPECT_EQ(steps[30]["phase"], "EVAL");
  const nlohmann::json& parts = steps[0]["parts"];
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[0]["name"], "forward");
  EXPECT_DOUBLE_EQ(parts[0]["ms"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(parts[1]["ms"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(parts[2]["ms"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(parts[3]["ms"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(parts[4]["ms"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(steps[0]["duration_ms"].get<double>(), 100);
  EXPECT_EQ(RecentStepsAnswer(model, 0)["steps"].size(), 2u);  // at least one each
  EXPECT_TRUE(RecentStepsAnswer(analysis::Model(), 30)["steps"].empty());
}

}  // namespace
}  // namespace stepscope::server
