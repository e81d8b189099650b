// The GPU rules (LaunchBound, PageableCopy, LowPrecisionOpportunity) through the driver, on real
// PyTorch profiler traces (tests/fixtures/kineto, from HTA's test data) that the report goldens do
// not cover: five ResNet-like steps on a V100 whose trace names the GPU only in deviceProperties
// (which the importer does not keep), and a CPU-only trace with a step.
// The AlexNet and two-rank NCCL traces are pinned with every rule by tests/report_golden.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "importers/kineto/kineto_importer.h"
#include "rules/builtin_rules.h"
#include "rules/profiler_report.h"

namespace stepscope::rules {
namespace {

const std::string kFixtures = STEPSCOPE_KINETO_FIXTURES_DIR;

// The three rules' reports on `trace`, evaluated offline by the driver with only them selected.
std::vector<RuleReport> GpuRulesOn(const std::string& trace) {
  auto model = analysis::ImportKineto({kFixtures + "/" + trace});
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto driver = ProfilerReport::Create(BuiltinRules(), {"LaunchBound", "PageableCopy", "LowPrecisionOpportunity"});
  EXPECT_TRUE(driver.ok()) << driver.status().message();
  std::vector<RuleReport> reports;
  if (!model.ok() || !driver.ok()) return reports;
  (*driver)->Finish(*model);
  for (const auto& rule : (*driver)->rules()) reports.push_back(rule->Report());
  return reports;
}

TEST(GpuRulesOnKineto, TheV100TraceLeavesFp32MatrixWorkOffTheTensorCoresItsDevicePropertiesName) {
  const std::vector<RuleReport> reports =
      GpuRulesOn("ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  ASSERT_EQ(reports.size(), 3u);
  const RuleReport& launch = reports[0];
  ASSERT_EQ(launch.rule, "LaunchBound");
  EXPECT_EQ(launch.datapoints, 5);
  EXPECT_TRUE(launch.findings.empty());  // cuDNN and cuBLAS kernels of a real model: not launch-bound
  EXPECT_GT(launch.details["gpus"][0]["kernels_with_launch"].get<int64_t>(), 0);

  const RuleReport& pageable = reports[1];
  ASSERT_EQ(pageable.rule, "PageableCopy");
  EXPECT_TRUE(pageable.findings.empty());  // its copies are device to device
  EXPECT_EQ(pageable.details["steps"][0]["pageable_htod"]["count"], 0);

  const RuleReport& precision = reports[2];
  ASSERT_EQ(precision.rule, "LowPrecisionOpportunity");
  ASSERT_EQ(precision.findings.size(), 1u);
  // volta_sgemm kernels alone would only bound the GPU from below (GeForce GTX 16 GPUs run them
  // too); the trace's deviceProperties name a Tesla V100, which has tensor cores.
  EXPECT_NE(precision.findings[0].severity, Severity::kInfo);
  EXPECT_GT(precision.findings[0].estimated_saving, 0);
  const nlohmann::json& gpu = precision.details["gpus"][0];
  EXPECT_EQ(gpu["architecture"], "Volta");
  EXPECT_NE(gpu["architecture_source"].get<std::string>().find("Tesla V100-SXM2-32GB"), std::string::npos);
  EXPECT_GT(gpu["fp32_matrix_share"].get<double>(), 0.1);
}

TEST(GpuRulesOnKineto, ACpuOnlyTraceSaysNoGpuData) {
  const std::vector<RuleReport> reports = GpuRulesOn("cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  ASSERT_EQ(reports.size(), 3u);
  for (const RuleReport& report : reports) {
    SCOPED_TRACE(report.rule);
    EXPECT_EQ(report.triggered, 0);
    EXPECT_EQ(report.details["gpu_data"], false);
  }
}

}  // namespace
}  // namespace stepscope::rules
