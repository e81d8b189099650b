#include "prometheus/alert_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules/configured_profiler_report.h"

namespace stepscope::prometheus {
namespace {

std::string Yaml(const std::vector<std::string>& overrides, AlertOptions options = {}) {
  auto rules = rules::MakeConfiguredProfilerReport("", nlohmann::json(), overrides);
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  StatusOr<std::string> yaml = AlertRulesYaml(**rules, options);
  EXPECT_TRUE(yaml.ok()) << yaml.status().message();
  return yaml.ok() ? *yaml : "";
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(AlertRulesTest, EverySystemRuleHasItsAlertWithTheRulesDefaults) {
  const std::string yaml = Yaml({});
  for (const char* alert : {"StepscopeLowGPUUtilization", "StepscopeGPUUtilizationFluctuating", "StepscopeCPUBottleneck",
                            "StepscopeIOBottleneck", "StepscopeGPUMemoryIncrease", "StepscopeStepOutliers",
                            "StepscopeDataloaderStarvation", "StepscopeDataloaderStarvationSevere",
                            "StepscopeGPUMemoryNearCapacity", "StepscopeHostMemoryNearCapacity"}) {
    EXPECT_TRUE(Has(yaml, std::string("alert: \"") + alert + "\"")) << alert;
  }
  // LowGPUUtilization: window=500 values at 500 ms are the last 250 s; patience=1000 values 500 s.
  EXPECT_TRUE(Has(yaml, "quantile_over_time(0.95, stepscope_gpu_util_percent[250s]) < 70"));
  EXPECT_TRUE(Has(yaml, "time() - stepscope_start_time_seconds > 500"));
  // CPUBottleneck: a core over 90 % while a GPU is under 10 %, in more than 50 % of the samples.
  EXPECT_TRUE(Has(yaml, "stepscope_cpu_util_percent{cpu!=\\\"total\\\"}) > bool 90"));
  EXPECT_TRUE(Has(yaml, "stepscope_gpu_util_percent) < bool 10"));
  EXPECT_TRUE(Has(yaml, "[500s:15s]) > 50"));
  EXPECT_TRUE(Has(yaml, "stepscope_step_outliers_total{stddev=\\\"3\\\"} > 10"));
  EXPECT_TRUE(Has(yaml, "stepscope_data_wait_ratio > 20"));
  EXPECT_TRUE(Has(yaml, "stepscope_steps_total >= 10"));
}

TEST(AlertRulesTest, ParametersAndIntervalsChangeTheExpressions) {
  AlertOptions options;
  options.sample_interval_ns = 1'000'000'000;
  options.scrape_interval_ns = 30'000'000'000;
  const std::string yaml = Yaml({"LowGPUUtilization.threshold_p95=60", "GPUMemoryIncrease.window=10",
                                 "StepOutlier.stddev=2.5", "StepOutlier.mode=Step:ModeKeys.TRAIN"},
                                options);
  EXPECT_TRUE(Has(yaml, "stepscope_gpu_util_percent[500s]) < 60"));
  // 10 samples at 1 s are shorter than two scrapes: Prometheus could not see them.
  EXPECT_TRUE(Has(yaml, "stepscope_gpu_memory_used_percent[60s] offset 60s"));
  EXPECT_TRUE(Has(yaml, "{stddev=\\\"2.5\\\", phase=\\\"TRAIN\\\"} > 10"));
}

TEST(AlertRulesTest, AStddevWithoutACounterIsAUsageErrorNamingTheChoices) {
  auto rules = rules::MakeConfiguredProfilerReport("", nlohmann::json(), {"StepOutlier.stddev=2.7"});
  ASSERT_TRUE(rules.ok());
  StatusOr<std::string> yaml = AlertRulesYaml(**rules, AlertOptions{});
  ASSERT_FALSE(yaml.ok());
  EXPECT_TRUE(Has(yaml.status().message(), "StepOutlier.stddev: 2.7"));
  EXPECT_TRUE(Has(yaml.status().message(), "2.5, 3"));
}

TEST(AlertRulesTest, NamesAndTextsAreQuotedSoYamlReadsThemVerbatim) {
  AlertOptions options;
  options.group = "team: \"vision\"";
  auto rules = rules::MakeConfiguredProfilerReport("", nlohmann::json(), {});
  ASSERT_TRUE(rules.ok());
  StatusOr<std::string> yaml = AlertRulesYaml(**rules, options);
  ASSERT_TRUE(yaml.ok());
  EXPECT_TRUE(Has(*yaml, "- name: \"team: \\\"vision\\\"\""));
}

}  // namespace
}  // namespace stepscope::prometheus
