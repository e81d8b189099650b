#include "prometheus/metric_names.h"

#include <gtest/gtest.h>

namespace stepscope::prometheus {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

TEST(MetricNamesTest, SamplerNamesBecomePrometheusNamesWithDeviceLabels) {
  ExposedName core = SystemMetric("cpu/cpu3/util_pct");
  EXPECT_EQ(core.name, kCpuUtil);
  EXPECT_EQ(core.labels, (Labels{{"cpu", "cpu3"}}));
  EXPECT_EQ(SystemMetric("cpu/total/iowait_pct").name, kCpuIowait);
  EXPECT_EQ(SystemMetric("cpu/total/iowait_pct").labels, (Labels{{"cpu", "total"}}));

  ExposedName gpu = SystemMetric("gpu/gpu1/util_pct");
  EXPECT_EQ(gpu.name, kGpuUtil);
  EXPECT_EQ(gpu.labels, (Labels{{"gpu", "1"}}));
  EXPECT_EQ(SystemMetric("gpu/gpu0/memory_used_pct").name, kGpuMemoryUsed);
  EXPECT_EQ(SystemMetric("gpu/gpu0/power_w").name, "stepscope_gpu_power_watts");
  EXPECT_EQ(SystemMetric("gpu/gpu0/temperature_c").name, "stepscope_gpu_temperature_celsius");

  EXPECT_EQ(SystemMetric("memory/used_pct").name, kMemoryUsed);
  EXPECT_TRUE(SystemMetric("memory/used_pct").labels.empty());
  EXPECT_EQ(SystemMetric("network/rx_bytes_per_s").name, "stepscope_network_rx_bytes_per_second");
  EXPECT_EQ(SystemMetric("process/count").name, "stepscope_process_count");
}

TEST(MetricNamesTest, AMetricASourceAddsIsExposedWithoutAChangeHere) {
  ExposedName added = SystemMetric("perf/cpu2/instructions_per_s");
  EXPECT_EQ(added.name, "stepscope_perf_instructions_per_second");
  EXPECT_EQ(added.labels, (Labels{{"device", "cpu2"}}));
  // A process's part of a GPU is its own family: summing the GPU's never counts it twice.
  ExposedName process = SystemMetric("gpu/gpu0/pid4242/memory_used_bytes");
  EXPECT_EQ(process.name, "stepscope_gpu_process_memory_used_bytes");
  EXPECT_EQ(process.labels, (Labels{{"gpu", "0"}, {"pid", "4242"}}));
  // Characters a metric name cannot hold become '_'.
  EXPECT_EQ(SystemMetric("disk/nvme0n1-p1/read.bytes_per_s").name, "stepscope_disk_read_bytes_per_second");
}

TEST(MetricNamesTest, LabelValuesAreEscapedForTheTextFormat) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(StddevLabel(3), "3");
  EXPECT_EQ(StddevLabel(2.5), "2.5");
}

}  // namespace
}  // namespace stepscope::prometheus
