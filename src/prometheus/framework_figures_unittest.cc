#include "prometheus/framework_figures.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/model.h"

namespace stepscope::prometheus {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000'000'000;

// A node's TRAIN steps of `durations_ms` back to back, each waiting `wait_ms` for its batch
// first, on rank `rank`; the model complete until `complete_ms` (default: the last step's end).
analysis::Model Steps(const std::vector<int64_t>& durations_ms, int64_t wait_ms, int32_t rank = 0,
                      int64_t complete_ms = -1) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts facts;
  facts.name = "n0";
  const uint32_t node = builder.AddNode(facts);
  analysis::ProcessFacts process;
  process.node = node;
  process.pid = 100;
  process.rank = rank;
  builder.AddProcess(process);
  int64_t t = 0;
  for (size_t i = 0; i < durations_ms.size(); ++i) {
    analysis::FrameworkEvent step;
    step.node = node;
    step.pid = 100;
    step.tid = 1;
    step.start_ns = kT0 + t * kMs;
    step.end_ns = kT0 + (t + durations_ms[i]) * kMs;
    step.phase = step.name = builder.Intern("Step:ModeKeys.TRAIN");
    step.step = static_cast<int64_t>(i);
    builder.AddEvent(step);
    analysis::FrameworkEvent wait = step;
    wait.end_ns = wait.start_ns + wait_ms * kMs;
    wait.phase = wait.name = builder.Intern("DataLoaderIter");
    wait.step = -1;
    builder.AddEvent(wait);
    t += durations_ms[i];
  }
  builder.SetCompleteUntil(kT0 + (complete_ms >= 0 ? complete_ms : t) * kMs);
  return std::move(builder).Finish();
}

bool Has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

const std::string kBase = "stepscope_job=\"j\",node=\"n0\"";

TEST(FrameworkFiguresTest, CountsStepsTheirTimesAndTheDataWaitShare) {
  FrameworkFigures figures("n0");
  figures.Update(Steps(std::vector<int64_t>(10, 100), 25));
  const std::string text = figures.Render(kBase);
  EXPECT_TRUE(Has(text, "stepscope_steps_total{" + kBase + ",rank=\"0\",phase=\"TRAIN\"} 10\n")) << text;
  EXPECT_TRUE(Has(text, "stepscope_step_duration_seconds{" + kBase + ",rank=\"0\",phase=\"TRAIN\",quantile=\"0.5\"} 0.10000000000000001\n"));
  EXPECT_TRUE(Has(text, "stepscope_step_duration_seconds_count{" + kBase + ",rank=\"0\",phase=\"TRAIN\"} 10\n"));
  EXPECT_TRUE(Has(text, "stepscope_data_wait_ratio{" + kBase + ",rank=\"0\",phase=\"TRAIN\"} 0.25\n"));
  EXPECT_TRUE(Has(text, "# TYPE stepscope_step_duration_seconds summary\n"));
  EXPECT_TRUE(Has(text, "stepscope_dropped_events_total{" + kBase + ",cause=\"ring_full\"} 0\n"));
}

TEST(FrameworkFiguresTest, CountsOutliersAsStepOutlierTestsThemOnceAPhaseHasMoreThan100Steps) {
  // Two values, each exactly 1 σ from the mean (105 ± 5): none is over 1.5 σ.
  std::vector<int64_t> durations(150, 100);
  for (size_t i = 0; i < durations.size(); i += 2) durations[i] = 110;
  durations[110] = 118;   // over mean + 2.5 σ of the steps before it, under + 3 σ
  durations[120] = 1000;  // over every factor
  FrameworkFigures figures("n0");
  figures.Update(Steps(durations, 0));
  const std::string text = figures.Render(kBase);
  const std::string series = "stepscope_step_outliers_total{" + kBase + ",rank=\"0\",phase=\"TRAIN\",stddev=";
  EXPECT_TRUE(Has(text, series + "\"1.5\"} 2\n")) << text;
  EXPECT_TRUE(Has(text, series + "\"2.5\"} 2\n")) << text;
  EXPECT_TRUE(Has(text, series + "\"3\"} 1\n")) << text;
  EXPECT_TRUE(Has(text, series + "\"6\"} 1\n")) << text;
}

TEST(FrameworkFiguresTest, AStepStillOpenIsAddedOnceByTheLaterPassThatSeesItEnd) {
  FrameworkFigures figures("n0");
  // The third step ends at 300 ms, after what the first pass has complete (250 ms).
  figures.Update(Steps({100, 100, 100}, 10, 0, 250));
  EXPECT_TRUE(Has(figures.Render(kBase), "stepscope_steps_total{" + kBase + ",rank=\"0\",phase=\"TRAIN\"} 2\n"));
  figures.Update(Steps({100, 100, 100, 100}, 10));
  EXPECT_TRUE(Has(figures.Render(kBase), "stepscope_steps_total{" + kBase + ",rank=\"0\",phase=\"TRAIN\"} 4\n"));
  figures.Update(Steps({100, 100, 100, 100}, 10));  // nothing new
  EXPECT_TRUE(Has(figures.Render(kBase), "stepscope_steps_total{" + kBase + ",rank=\"0\",phase=\"TRAIN\"} 4\n"));
}

TEST(FrameworkFiguresTest, AnotherNodesStepsAreNotThisNodes) {
  FrameworkFigures figures("n1");
  figures.Update(Steps({100, 100}, 10));
  EXPECT_FALSE(Has(figures.Render(kBase), "stepscope_steps_total"));
}

}  // namespace
}  // namespace stepscope::prometheus
