#include "analysis/vocabulary.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stepscope::analysis {
namespace {

struct Row {
  std::string metric;
  SeriesKey key;
};

// docs/formats.md metric names and their SageMaker keys (shared/FORMATS.md).
const std::vector<Row>& SageMakerRows() {
  static const std::vector<Row> rows = {
      {"cpu/cpu0/util_pct", {"cpu", "cpu0", "CPUUtilization"}},
      {"cpu/cpu17/util_pct", {"cpu", "cpu17", "CPUUtilization"}},
      {"cpu/cpu3/iowait_pct", {"cpu", "cpu3", "I/OWaitPercentage"}},
      {"gpu/gpu0/util_pct", {"gpu", "gpu0", "GPUUtilization"}},
      {"gpu/gpu7/memory_used_pct", {"gpu", "gpu7", "GPUMemoryUtilization"}},
      {"memory/used_pct", {"memory", "MemoryUsedPercent", ""}},
      {"network/rx_bytes_per_s", {"network", "ReceiveBytesPerSecond", "Algorithm"}},
      {"network/tx_bytes_per_s", {"network", "TransmitBytesPerSecond", "Algorithm"}},
      {"disk/iops", {"i/o", "IOPS", ""}},
      {"disk/read_bytes_per_s", {"i/o", "ReadThroughputInBytesPerSecond", ""}},
      {"disk/write_bytes_per_s", {"i/o", "WriteThroughputInBytesPerSecond", ""}},
  };
  return rows;
}

TEST(Vocabulary, MapsSageMakerMetricsOntoTheirSeriesKeys) {
  for (const Row& row : SageMakerRows()) {
    EXPECT_EQ(SeriesKeyForMetric(row.metric), row.key) << row.metric;
  }
}

TEST(Vocabulary, MapsSeriesKeysBackToTheMetricNames) {
  for (const Row& row : SageMakerRows()) {
    EXPECT_EQ(MetricForSeriesKey(row.key.type, row.key.name, row.key.dimension), row.metric) << row.metric;
  }
}

TEST(Vocabulary, KeepsEveryOtherMetricUnderTypeStepscope) {
  for (const std::string metric :
       {"cpu/total/util_pct", "cpu/total/iowait_pct", "cpu/cpu0/user_pct", "cpu/cpu0/system_pct", "gpu/gpu0/power_w",
        "gpu/gpu0/temperature_c", "gpu/gpu1/sm_clock_mhz", "gpu/gpu0/memory_used_bytes", "gpu/gpu0/memory_total_bytes",
        "memory/used_bytes", "memory/total_bytes", "disk/read_iops", "process/cpu_pct", "process/rss_bytes",
        "process/count", "gpu/gpu0/throttle_power_cap", "gpu/gpu1/pcie_rx_bytes_per_s", "gpu/gpu0/xid",
        "gpu/gpu0/ecc_uncorrected_errors", "gpu/gpu0/pid4242/sm_util_pct", "cpu/cpux/util_pct", "cpu/cpu/util_pct", "cpu/cpu0/util_pct/extra", "gpu/cpu0/util_pct",
        "custom"}) {
    const SeriesKey key = SeriesKeyForMetric(metric);
    EXPECT_EQ(key, (SeriesKey{"stepscope", metric, ""})) << metric;
    EXPECT_EQ(MetricForSeriesKey(key.type, key.name, key.dimension), metric) << metric;
  }
}

TEST(Vocabulary, ParsesGpuMetricsWithAndWithoutAProcess) {
  const GpuMetricParts throttle = ParseGpuMetric("gpu/gpu12/throttle_hw_thermal");
  EXPECT_EQ(throttle.gpu, 12);
  EXPECT_EQ(throttle.pid, -1);
  EXPECT_EQ(throttle.leaf, "throttle_hw_thermal");
  const GpuMetricParts process = ParseGpuMetric("gpu/gpu1/pid4242/memory_used_bytes");
  EXPECT_EQ(process.gpu, 1);
  EXPECT_EQ(process.pid, 4242);
  EXPECT_EQ(process.leaf, "memory_used_bytes");
  for (const char* other : {"cpu/cpu0/util_pct", "gpu/total/util_pct", "gpu/gpu0", "gpu/gpu0/", "gpu/gpu0/pid/x",
                            "gpu/gpu0/pidx1/x", "gpu/gpu0/pid1/x/y", "gpu/gpu0/proc1/x", "gpu//util_pct"}) {
    EXPECT_EQ(ParseGpuMetric(other).gpu, -1) << other;
  }
}

TEST(Vocabulary, KnowsEveryThrottleReasonAndWhichAreSlowdowns) {
  ASSERT_EQ(GpuThrottleReasons().size(), 8u);
  ASSERT_NE(FindGpuThrottleReason("throttle_power_cap"), nullptr);
  EXPECT_EQ(FindGpuThrottleReason("power_cap")->label, "power cap");
  EXPECT_TRUE(FindGpuThrottleReason("hw_thermal")->hardware);
  EXPECT_FALSE(FindGpuThrottleReason("throttle_idle")->slowdown);
  EXPECT_TRUE(FindGpuThrottleReason("sync_boost")->slowdown);
  EXPECT_EQ(FindGpuThrottleReason("throttle_unknown"), nullptr);
}

TEST(Vocabulary, KeysStepscopeNeverWritesHaveNoMetricName) {
  EXPECT_EQ(MetricForSeriesKey("cpu", "cpu0", "Unknown"), "");
  EXPECT_EQ(MetricForSeriesKey("cpu", "total", "CPUUtilization"), "");
  EXPECT_EQ(MetricForSeriesKey("gpu", "gpu0", "CPUUtilization"), "");
  EXPECT_EQ(MetricForSeriesKey("network", "ReceiveBytesPerSecond", ""), "");
  EXPECT_EQ(MetricForSeriesKey("i/o", "IOPS", "Algorithm"), "");
  // A SageMaker metric filed under "stepscope" would be a second copy of a real series.
  EXPECT_EQ(MetricForSeriesKey("stepscope", "cpu/cpu0/util_pct", ""), "");
  EXPECT_EQ(MetricForSeriesKey("stepscope", "process/rss_bytes", "x"), "");
  EXPECT_EQ(MetricForSeriesKey("stepscope", "", ""), "");
}

TEST(Vocabulary, FrameworkNamesAreTheirOwnPhases) {
  for (const char* name : {"Forward", "Backward", "OptimizerStep", "DataLoaderIter", "DataLoaderWorker",
                           "DataLoaderIterInitialize", "DataLoaderFetchSample", "my_annotation", "loss"}) {
    EXPECT_EQ(PhaseForEventName(name), name);
    EXPECT_FALSE(IsStepscopeOwnEventName(name)) << name;
  }
}

TEST(Vocabulary, StepscopesOwnEventsShareThePhaseStepscope) {
  for (const char* name : {"DetailWindow:operators", "DetailWindow:dataloader", "DetailWindow:python",
                           "DetailWindowStop", "DetailWindowWrite", "Lifecycle:ProcessStart", "Lifecycle:FirstStep",
                           "Lifecycle:LastStep", "Lifecycle:Exit", "Control"}) {
    EXPECT_EQ(PhaseForEventName(name), "stepscope") << name;
    EXPECT_TRUE(IsStepscopeOwnEventName(name)) << name;
  }
  EXPECT_EQ(PhaseForEventName("ControlFlow"), "ControlFlow");
}

TEST(Vocabulary, KeepsPerfCounterMetricsUnderTypeStepscopeAndSplitsThem) {
  for (const std::string metric : {"perf/cpu0/ipc", "perf/total/context_switches_per_s", "perf/job/task_clock_pct"}) {
    EXPECT_EQ(SeriesKeyForMetric(metric), (SeriesKey{"stepscope", metric, ""})) << metric;
  }
  const PerfMetricParts parts = SplitPerfMetric("perf/cpu12/ipc");
  EXPECT_EQ(parts.scope, "cpu12");
  EXPECT_EQ(parts.leaf, kPerfIpc);
  EXPECT_EQ(SplitPerfMetric("perf/job/page_faults_per_s").scope, kPerfScopeJob);
  for (const char* other : {"perf/cpu0", "perf//ipc", "perf/cpu0/", "perf/cpu0/ipc/x", "cpu/cpu0/ipc", "perf"}) {
    EXPECT_TRUE(SplitPerfMetric(other).leaf.empty()) << other;
  }
}

}  // namespace
}  // namespace stepscope::analysis
