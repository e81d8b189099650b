// The chart data drawn from rules' Details (report_rule_charts.h): LoadBalancing's histograms,
// BatchSize's boxes and the bottleneck rules' cause split, from Details written as the rules
// write them.
#include "report/report_rule_charts.h"

#include <gtest/gtest.h>

namespace stepscope::report {
namespace {

TEST(WorkloadHistogramsTest, EveryGpusCountsOnTheRulesEqualBinsAndThePairsOverThreshold) {
  const nlohmann::json details = nlohmann::json::parse(R"({
      "algo-1": {"workloads": {"gpu0": [3, 1, 0, 0], "gpu1": [0, 0, 1, 3]},
                 "distances": {"gpu0": {"gpu1": 0.83}}},
      "algo-2": {"workloads": {"gpu0": [1, 1, 1, 1]}}})");
  const nlohmann::json histograms = WorkloadHistograms(details);
  EXPECT_EQ(histograms["bin_edges_pct"], nlohmann::json::parse("[0.0, 25.0, 50.0, 75.0, 100.0]"));
  ASSERT_EQ(histograms["gpus"].size(), 3u);
  EXPECT_EQ(histograms["gpus"][1], nlohmann::json::parse(R"({"node": "algo-1", "gpu": "gpu1", "counts": [0, 0, 1, 3]})"));
  EXPECT_EQ(histograms["gpus"][2]["node"], "algo-2");
  EXPECT_EQ(histograms["distances"],
            nlohmann::json::parse(R"([{"node": "algo-1", "a": "gpu0", "b": "gpu1", "distance": 0.83}])"));
}

TEST(WorkloadHistogramsTest, NoWorkloadIsNull) {
  EXPECT_TRUE(WorkloadHistograms(nlohmann::json::object()).is_null());
  EXPECT_TRUE(WorkloadHistograms(nlohmann::json::parse(R"({"node_distances": {}})")).is_null());
}

TEST(BatchSizeBoxesTest, CpuThenEachGpuAndItsMemoryPerNodeWithTheTriggerTime) {
  const nlohmann::json details = nlohmann::json::parse(R"({
      "last_timestamp": 1700000005000000,
      "n": {"gpu0_memory": {"p25": 5, "p50": 6, "p75": 7, "p95": 9, "upper": 10, "lower": 4},
            "gpu0": {"p25": 20, "p50": 30, "p75": 40, "p95": 55, "upper": 60, "lower": 10},
            "cpu": {"p25": 1, "p50": 2, "p75": 3, "p95": 4, "upper": 5, "lower": 0}}})");
  const nlohmann::json boxes = BatchSizeBoxes(details, 1'700'000'000'000'000'000);
  EXPECT_DOUBLE_EQ(boxes["triggered_at_s"].get<double>(), 5.0);
  ASSERT_EQ(boxes["boxes"].size(), 3u);
  EXPECT_EQ(boxes["boxes"][0]["label"], "CPU");
  EXPECT_EQ(boxes["boxes"][1]["label"], "GPU 0");
  EXPECT_EQ(boxes["boxes"][2]["label"], "GPU 0 memory");
  EXPECT_EQ(boxes["boxes"][1], nlohmann::json::parse(R"({"node": "n", "series": "gpu0", "label": "GPU 0",
      "lower": 10.0, "p25": 20.0, "p50": 30.0, "p75": 40.0, "p95": 55.0, "upper": 60.0})"));
}

TEST(BatchSizeBoxesTest, NeverTriggeredIsNull) {
  EXPECT_TRUE(BatchSizeBoxes(nlohmann::json::object(), 0).is_null());
}

TEST(BottleneckCausesTest, FrameworkPhasesAndStepPhasesAsSharesOfOneLargestFirst) {
  const nlohmann::json details = nlohmann::json::parse(R"({
      "general": {"DataLoaderIter": 25.0, "Forward": 75.0, "Idle": 0.0},
      "phase": {"Step:ModeKeys.EVAL": 40.0, "Step:ModeKeys.TRAIN": 60.0},
      "bottlenecks": {"1700000000.5": {"GPUs": 1, "CPUs": 2}}})");
  const nlohmann::json causes = BottleneckCauses(details);
  EXPECT_EQ(causes["causes"], nlohmann::json::parse(
      R"([{"name": "Forward", "share": 0.75}, {"name": "DataLoaderIter", "share": 0.25}])"));
  EXPECT_EQ(causes["step_phases"], nlohmann::json::parse(
      R"([{"phase": "TRAIN", "share": 0.6}, {"phase": "EVAL", "share": 0.4}])"));
}

TEST(BottleneckCausesTest, ARuleThatNeverTriggeredHasNoCause) {
  const nlohmann::json causes = BottleneckCauses(nlohmann::json::parse(R"({"bottlenecks": {}, "low_gpu_utilization": 3})"));
  EXPECT_EQ(causes["causes"], nlohmann::json::array());
  EXPECT_EQ(causes["step_phases"], nlohmann::json::array());
}

}  // namespace
}  // namespace stepscope::report
