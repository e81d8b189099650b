// Tests of LowGPUUtilization, BatchSize, GPUMemoryIncrease, LoadBalancing and
// OverallSystemUsage (shared/RULES.md §3, 4, 7, 8, 10), driven window by
// window the way the ProfilerReport driver does.
//
// Expected statistics were computed independently with /usr/bin/python3 and numpy the way the
// reference rules compute them (np.quantile linear, np.mean, np.histogram with edges
// np.arange(0, 102, 2), JS divergence with natural logs, round(np.float64, 2)), from the same
// generating formulas as the data below, printed with repr() and pasted here.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/model.h"
#include "importers/sagemaker/sagemaker_importer.h"
#include "rules/builtin_rules.h"
#include "rules/rule.h"
#include "rules/profiler_report.h"
#include "rules/system_rules_test_util.h"

namespace stepscope::rules {
namespace {

using namespace system_test;  // NOLINT: the shared test helpers

// ---------------------------------------------------------------------------------------------
// LowGPUUtilization

TEST(LowGPUUtilizationRuleTest, DeclaresTheReferenceParameters) {
  std::unique_ptr<Rule> rule = MakeLowGPUUtilizationRule();
  EXPECT_EQ(rule->Report().parameters, "threshold_p95:70\nthreshold_p5:10\nwindow:500\npatience:1000");
  EXPECT_EQ(SetError(*rule, "window", "2.5"), "LowGPUUtilization.window: 2.5 is not a whole number > 0");
  EXPECT_EQ(SetError(*rule, "threshold_p5", "abc"), "LowGPUUtilization.threshold_p5: 'abc' is not a number");
}

std::vector<double> LowGpuValues(size_t count) {
  std::vector<double> values;
  for (size_t i = 0; i < count; ++i) values.push_back(static_cast<double>((i * 7) % 50) + 0.5);
  return values;
}

TEST(LowGPUUtilizationRuleTest, ExactlyPatienceValuesDoNotTrigger) {
  Data data;
  AddGpuSeries(data, "algo-1", 0, LowGpuValues(20));
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLowGPUUtilizationRule();
  SetParameter(*rule, "patience", "20");
  SetParameter(*rule, "window", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{false});
  EXPECT_EQ(rule->Report().datapoints, 20);
  EXPECT_EQ(rule->Report().details, nlohmann::json::object());
}

TEST(LowGPUUtilizationRuleTest, PatiencePlusOneValuesTriggerWithExactDetails) {
  Data data;
  AddGpuSeries(data, "algo-1", 0, LowGpuValues(21));
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLowGPUUtilizationRule();
  SetParameter(*rule, "patience", "20");
  SetParameter(*rule, "window", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.triggered, 1);
  EXPECT_EQ(report.violations, 1);
  EXPECT_EQ(report.datapoints, 21);
  const nlohmann::json& gpu = report.details["algo-1"]["gpu0"];
  EXPECT_DOUBLE_EQ(gpu["gpu_max"].get<double>(), 49.5);
  EXPECT_DOUBLE_EQ(gpu["gpu_95"].get<double>(), 45.349999999999994);
  EXPECT_DOUBLE_EQ(gpu["gpu_5"].get<double>(), 8.65);
  EXPECT_DOUBLE_EQ(gpu["p25"].get<double>(), 13.5);
  EXPECT_DOUBLE_EQ(gpu["p50"].get<double>(), 26.5);
  EXPECT_DOUBLE_EQ(gpu["p75"].get<double>(), 35.5);
  EXPECT_DOUBLE_EQ(gpu["p95"].get<double>(), 48.5);
  EXPECT_DOUBLE_EQ(gpu["upper"].get<double>(), 49.5);
  EXPECT_DOUBLE_EQ(gpu["lower"].get<double>(), 0.5);
  EXPECT_EQ(gpu.size(), 9u);
  EXPECT_EQ(report.details["last_timestamp"], kT0 / 1000);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "LowGPUUtilization/algo-1/gpu0");
  ASSERT_EQ(report.findings[0].evidence.size(), 1u);
  EXPECT_EQ(report.findings[0].evidence[0].what, "p95 GPU utilization 45.3 % over the last 10 samples of gpu0");
}

TEST(LowGPUUtilizationRuleTest, FluctuationAndStrictThresholds) {
  std::vector<double> fluctuating;
  for (int i = 0; i < 11; ++i) fluctuating.push_back(i % 2 == 0 ? 0 : 100);
  Data data;
  AddGpuSeries(data, "algo-1", 0, fluctuating);
  AddGpuSeries(data, "algo-1", 1, Constant(11, 70));  // p95 == threshold_p95: neither < nor >
  AddGpuSeries(data, "algo-1", 2, Constant(11, 80));  // busy and steady
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLowGPUUtilizationRule();
  SetParameter(*rule, "patience", "10");
  SetParameter(*rule, "window", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 1);
  EXPECT_TRUE(report.details["algo-1"].contains("gpu0"));
  EXPECT_FALSE(report.details["algo-1"].contains("gpu1"));
  EXPECT_FALSE(report.details["algo-1"].contains("gpu2"));
  EXPECT_DOUBLE_EQ(report.details["algo-1"]["gpu0"]["gpu_95"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(report.details["algo-1"]["gpu0"]["gpu_5"].get<double>(), 0.0);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].evidence[0].what, "p95 GPU utilization 100.0 % but p5 0.0 % over the last 10 samples of gpu0");
}

TEST(LowGPUUtilizationRuleTest, EveryGpuOfEveryNode) {
  Data data;
  AddGpuSeries(data, "algo-1", 0, Constant(11, 30));
  AddGpuSeries(data, "algo-1", 1, Constant(11, 90));
  AddGpuSeries(data, "algo-2", 0, Constant(12, 20));
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLowGPUUtilizationRule();
  SetParameter(*rule, "patience", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 2);
  EXPECT_EQ(report.triggered, 2);
  EXPECT_EQ(report.datapoints, 12);  // the GPU evaluated last: algo-2's gpu0
  EXPECT_TRUE(report.details["algo-1"].contains("gpu0"));
  EXPECT_FALSE(report.details["algo-1"].contains("gpu1"));
  EXPECT_DOUBLE_EQ(report.details["algo-2"]["gpu0"]["gpu_max"].get<double>(), 20.0);
  EXPECT_EQ(report.findings.size(), 2u);
}

TEST(LowGPUUtilizationRuleTest, StickyAcrossWindowsWithEdgeSamplesInBoth) {
  // 31 samples every 100 ms over 3 s; 1 s windows. The samples at +1, +2 and +3 s belong to two
  // windows each, so the GPU's value count after the windows is 11, 22, 33, 34.
  Data data;
  AddGpuSeries(data, "algo-1", 0, Constant(31, 30));
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLowGPUUtilizationRule();
  SetParameter(*rule, "patience", "25");
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{false, false, true, true}));
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 34);
  EXPECT_EQ(report.violations, 2);
  EXPECT_EQ(report.last_trigger_ns, kT0 + 3 * kS);
  EXPECT_EQ(report.details["last_timestamp"], (kT0 + 3 * kS) / 1000);
  // Windows 2 and 3 are consecutive: one evidence range.
  ASSERT_EQ(report.findings.size(), 1u);
  ASSERT_EQ(report.findings[0].evidence.size(), 1u);
  EXPECT_EQ(report.findings[0].evidence[0].start_ns, kT0 + 2 * kS);
  EXPECT_EQ(report.findings[0].evidence[0].end_ns, kT0 + 4 * kS);
}

TEST(LowGPUUtilizationRuleTest, NoGpuNoFinding) {
  Data data;
  for (int i = 0; i < 20; ++i) data.Cpu("algo-1", 0, kT0 + i * 100 * kMs, 5);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLowGPUUtilizationRule();
  SetParameter(*rule, "patience", "1");
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{false, false}));
  EXPECT_EQ(rule->Report().datapoints, 0);
  EXPECT_EQ(rule->Report().details, nlohmann::json::object());
}

// ---------------------------------------------------------------------------------------------
// BatchSize

// Per timestamp i (100 ms apart): cpu0 20 + (3i mod 17), cpu1 10 + (5i mod 13), gpu0 (11i mod
// 60), gpu0 memory 30 + (i mod 3) and 60 for the last.
Data BatchSizeData(int count, const std::string& node = "algo-1") {
  Data data;
  for (int i = 0; i < count; ++i) {
    const int64_t t = kT0 + i * 100 * kMs;
    data.Cpu(node, 0, t, 20 + (i * 3) % 17).Cpu(node, 1, t, 10 + (i * 5) % 13);
    data.Gpu(node, 0, t, (i * 11) % 60).GpuMemory(node, 0, t, i == count - 1 ? 60 : 30 + i % 3);
  }
  return data;
}

std::unique_ptr<Rule> SmallBatchSizeRule() {
  std::unique_ptr<Rule> rule = MakeBatchSizeRule();
  EXPECT_TRUE(rule->parameters().Set("BatchSize", "patience", "20").ok());
  EXPECT_TRUE(rule->parameters().Set("BatchSize", "window", "10").ok());
  return rule;
}

TEST(BatchSizeRuleTest, DeclaresTheReferenceParameters) {
  std::unique_ptr<Rule> rule = MakeBatchSizeRule();
  EXPECT_EQ(rule->Report().parameters,
            "cpu_threshold_p95:70\ngpu_threshold_p95:70\ngpu_memory_threshold_p95:70\npatience:1000\nwindow:500");
  EXPECT_EQ(SetError(*rule, "gpu_memory_threshold_p95", "100.5"),
            "BatchSize.gpu_memory_threshold_p95: 100.5 is not a percentage in [0, 100]");
}

TEST(BatchSizeRuleTest, ExactlyPatienceCpuTotalsDoNotTrigger) {
  Data data = BatchSizeData(20);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = SmallBatchSizeRule();
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{false});
  EXPECT_EQ(rule->Report().datapoints, 20);
  EXPECT_EQ(rule->Report().violations, 0);
}

TEST(BatchSizeRuleTest, PatiencePlusOneTriggersWithExactBoxStats) {
  Data data = BatchSizeData(21);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = SmallBatchSizeRule();
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 21);
  EXPECT_EQ(report.violations, 1);
  const nlohmann::json expected = {
      {"cpu", {{"p25", 19.0}, {"p50", 21.5}, {"p75", 24.0}, {"p95", 27.0}, {"upper", 28.5}, {"lower", 15.0}}},
      {"gpu0", {{"p25", 12.0}, {"p50", 28.0}, {"p75", 40.0}, {"p95", 55.0}, {"upper", 56.0}, {"lower", 0.0}}},
      // Fixed whiskers from the memory quartiles: the reference (utilization p25) gives upper 60.
      {"gpu0_memory", {{"p25", 30.0}, {"p50", 31.0}, {"p75", 32.0}, {"p95", 32.0}, {"upper", 35.0}, {"lower", 30.0}}}};
  EXPECT_EQ(report.details["algo-1"], expected);
  EXPECT_EQ(report.details["last_timestamp"], kT0 / 1000);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "BatchSize/algo-1/gpu0");
  EXPECT_EQ(report.findings[0].evidence[0].what,
            "p95 over the last 10 samples: GPU utilization 51.0 %, GPU memory 47.4 %, CPU total 25.0 %");
}

TEST(BatchSizeRuleTest, ANodeWithoutGpuIsSkipped) {
  Data data;
  for (int i = 0; i < 30; ++i) data.Cpu("algo-1", 0, kT0 + i * 100 * kMs, 5);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = SmallBatchSizeRule();
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{false});
  EXPECT_EQ(rule->Report().datapoints, 30);
  EXPECT_EQ(rule->Report().details, nlohmann::json::object());
}

TEST(BatchSizeRuleTest, ManyGpusAndNodesAreJudgedSeparately) {
  Data data;
  for (int i = 0; i < 21; ++i) {
    const int64_t t = kT0 + i * 100 * kMs;
    data.Cpu("algo-1", 0, t, 10).Cpu("algo-1", 1, t, 30);  // total 20 %
    data.Gpu("algo-1", 0, t, 10).GpuMemory("algo-1", 0, t, 10);
    data.Gpu("algo-1", 1, t, 90).GpuMemory("algo-1", 1, t, 10);  // busy GPU
    data.Gpu("algo-1", 2, t, 10).GpuMemory("algo-1", 2, t, 80);  // full memory
    data.Cpu("algo-2", 0, t, 95);                                // busy CPU: skipped
    data.Gpu("algo-2", 0, t, 10).GpuMemory("algo-2", 0, t, 10);
  }
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = SmallBatchSizeRule();
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 1);
  EXPECT_TRUE(report.details["algo-1"].contains("gpu0_memory"));
  EXPECT_FALSE(report.details["algo-1"].contains("gpu1"));
  EXPECT_FALSE(report.details["algo-1"].contains("gpu2"));
  EXPECT_FALSE(report.details.contains("algo-2"));
  EXPECT_DOUBLE_EQ(report.details["algo-1"]["cpu"]["p50"].get<double>(), 20.0);
  // A stricter custom threshold: CPU total p95 20 is not < 20.
  std::unique_ptr<Rule> strict = SmallBatchSizeRule();
  SetParameter(*strict, "cpu_threshold_p95", "20");
  EXPECT_EQ(Drive(*strict, model, kHour), std::vector<bool>{false});
}

// ---------------------------------------------------------------------------------------------
// GPUMemoryIncrease

void AddMemorySeries(Data& data, const std::string& node, int gpu, const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) data.GpuMemory(node, gpu, kT0 + static_cast<int64_t>(i) * 100 * kMs, values[i]);
}

// 10 % six times, then 20 %: with window 2 the step shows in the 8th value only (mean of the
// last 2 = 20 against the 2 before = 10; at the 7th the diff is exactly 5).
std::vector<double> MemoryStep(size_t count) {
  std::vector<double> values(count, 20);
  for (size_t i = 0; i < std::min<size_t>(6, count); ++i) values[i] = 10;
  return values;
}

std::unique_ptr<Rule> SmallMemoryRule(const std::string& patience) {
  std::unique_ptr<Rule> rule = MakeGPUMemoryIncreaseRule();
  EXPECT_TRUE(rule->parameters().Set("GPUMemoryIncrease", "window", "2").ok());
  EXPECT_TRUE(rule->parameters().Set("GPUMemoryIncrease", "patience", patience).ok());
  return rule;
}

TEST(GPUMemoryIncreaseRuleTest, DeclaresTheReferenceParameters) {
  std::unique_ptr<Rule> rule = MakeGPUMemoryIncreaseRule();
  EXPECT_EQ(rule->Report().parameters, "increase:5\npatience:1000\nwindow:10");
  EXPECT_EQ(SetError(*rule, "increase", "101"), "GPUMemoryIncrease.increase: 101 is not a percentage in [0, 100]");
}

TEST(GPUMemoryIncreaseRuleTest, ComparesTheLastWindowWithTheWindowBefore) {
  Data data;
  AddMemorySeries(data, "algo-1", 0, MemoryStep(10));
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = SmallMemoryRule("5");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 1);  // only at the 8th value
  EXPECT_EQ(report.datapoints, 10);
  // Stats over the 8 values seen at the violation: 10 x6, 20 x2.
  const nlohmann::json expected = {{"increase", 10.0}, {"gpu_max", 20.0}, {"p05", 10.0}, {"p25", 10.0},
                                   {"p50", 10.0},      {"p75", 12.5},     {"p95", 20.0}, {"upper", 16.25},
                                   {"lower", 10.0}};
  EXPECT_EQ(report.details["algo-1"]["gpu0"], expected);
  EXPECT_EQ(report.details["last_timestamp"], kT0 / 1000);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "GPUMemoryIncrease/algo-1/gpu0");
}

TEST(GPUMemoryIncreaseRuleTest, PatienceBoundary) {
  Data data;
  AddMemorySeries(data, "algo-1", 0, MemoryStep(10));
  const Model model = data.Finish();
  std::unique_ptr<Rule> at_patience = SmallMemoryRule("8");  // the 8th value: 8 is not > 8
  EXPECT_EQ(Drive(*at_patience, model, kHour), std::vector<bool>{false});
  EXPECT_EQ(at_patience->Report().violations, 0);
  std::unique_ptr<Rule> below = SmallMemoryRule("7");
  EXPECT_EQ(Drive(*below, model, kHour), std::vector<bool>{true});
}

TEST(GPUMemoryIncreaseRuleTest, NeedsMoreThanTwoWindowsOfValues) {
  // 10, 10, 30, 30: the 4th value has exactly 2 windows (not more), so no comparison yet.
  Data data;
  AddMemorySeries(data, "algo-1", 0, {10, 10, 30, 30});
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = SmallMemoryRule("1");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{false});
  EXPECT_EQ(rule->Report().datapoints, 4);
}

TEST(GPUMemoryIncreaseRuleTest, EveryGpuOfEveryNodeAndStickyWindows) {
  Data data;
  AddMemorySeries(data, "algo-1", 0, MemoryStep(10));
  AddMemorySeries(data, "algo-1", 1, Constant(10, 40));
  AddMemorySeries(data, "algo-2", 0, MemoryStep(10));
  data.Cpu("algo-1", 0, kT0 + 2 * kS + 500 * kMs, 50);  // extends the run to a third window
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = SmallMemoryRule("5");
  // Window 0 ([0, 0.5 s]) holds 6 values per GPU, window 1 the rest (the 0.5 s sample again).
  EXPECT_EQ(Drive(*rule, model, 500 * kMs), (std::vector<bool>{false, true, true, true, true, true}));
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 2);
  EXPECT_TRUE(report.details["algo-1"].contains("gpu0"));
  EXPECT_FALSE(report.details["algo-1"].contains("gpu1"));
  EXPECT_TRUE(report.details["algo-2"].contains("gpu0"));
  EXPECT_EQ(report.details["last_timestamp"], (kT0 + 500 * kMs) / 1000);
}

TEST(GPUMemoryIncreaseRuleTest, NoGpuNothingToReport) {
  Data data;
  data.Cpu("algo-1", 0, kT0, 50).Cpu("algo-1", 0, kT0 + kS, 50);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeGPUMemoryIncreaseRule();
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{false, false}));
  EXPECT_EQ(rule->Report().datapoints, 0);
}

// ---------------------------------------------------------------------------------------------
// LoadBalancing

TEST(LoadBalancingRuleTest, DeclaresTheReferenceParameters) {
  std::unique_ptr<Rule> rule = MakeLoadBalancingRule();
  EXPECT_EQ(rule->Report().parameters, "threshold:0.2\npatience:1000");
  EXPECT_EQ(SetError(*rule, "threshold", "-1"), "LoadBalancing.threshold: -1 must be > 0");
}

TEST(LoadBalancingRuleTest, PatienceBoundaryAndFullyBusyGpuCounted) {
  // gpu0 always 100 % (the reference's bins end at 98 and would drop it), gpu1 always 0 %.
  for (int count : {10, 11}) {
    Data data;
    AddGpuSeries(data, "algo-1", 0, Constant(count, 100));
    AddGpuSeries(data, "algo-1", 1, Constant(count, 0));
    const Model model = data.Finish();
    std::unique_ptr<Rule> rule = MakeLoadBalancingRule();
    SetParameter(*rule, "patience", "10");
    const bool expect = count == 11;
    EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{expect}) << count;
    const RuleReport report = rule->Report();
    EXPECT_EQ(report.violations, expect ? 1 : 0);
    EXPECT_EQ(report.datapoints, count);
    if (!expect) continue;
    EXPECT_DOUBLE_EQ(report.details["algo-1"]["distances"]["gpu0"]["gpu1"].get<double>(), 0.8325546111576977);
    std::vector<int64_t> busy(50, 0), idle(50, 0);
    busy[49] = 11;
    idle[0] = 11;
    EXPECT_EQ(report.details["algo-1"]["workloads"]["gpu0"], nlohmann::json(busy));
    EXPECT_EQ(report.details["algo-1"]["workloads"]["gpu1"], nlohmann::json(idle));
    ASSERT_EQ(report.findings.size(), 1u);
    EXPECT_EQ(report.findings[0].id, "LoadBalancing/algo-1/gpu0-gpu1");
  }
}

TEST(LoadBalancingRuleTest, ExactDistanceOfMixedWorkloads) {
  std::vector<double> a, b;
  for (int i = 0; i < 11; ++i) {
    a.push_back((i * 13) % 101);
    b.push_back((i * 7) % 61);
  }
  Data data;
  AddGpuSeries(data, "algo-1", 0, a);
  AddGpuSeries(data, "algo-1", 1, b);
  AddGpuSeries(data, "algo-1", 2, b);  // identical to gpu1: distance 0
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLoadBalancingRule();
  SetParameter(*rule, "patience", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 2);  // gpu0-gpu1 and gpu0-gpu2
  EXPECT_NEAR(report.details["algo-1"]["distances"]["gpu0"]["gpu1"].get<double>(), 0.7100049580159514, 1e-12);
  EXPECT_NEAR(report.details["algo-1"]["distances"]["gpu0"]["gpu2"].get<double>(), 0.7100049580159514, 1e-12);
  EXPECT_FALSE(report.details["algo-1"]["distances"].contains("gpu1"));
  // A threshold above the distance: no violation.
  std::unique_ptr<Rule> lenient = MakeLoadBalancingRule();
  SetParameter(*lenient, "patience", "10");
  SetParameter(*lenient, "threshold", "0.72");
  EXPECT_EQ(Drive(*lenient, model, kHour), std::vector<bool>{false});
}

TEST(LoadBalancingRuleTest, OneOrNoGpuNeverViolates) {
  Data data;
  AddGpuSeries(data, "algo-1", 0, Constant(20, 50));
  data.Cpu("algo-2", 0, kT0, 50);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLoadBalancingRule();
  SetParameter(*rule, "patience", "1");
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{false, false}));
  // As the reference, every GPU's workload is written, violation or not; algo-2 has no GPU.
  const nlohmann::json details = rule->Report().details;
  EXPECT_EQ(details.size(), 1u);
  EXPECT_EQ(details["algo-1"].size(), 1u);
  EXPECT_EQ(details["algo-1"]["workloads"]["gpu0"][25], 21);  // 50 % in [50, 52): 20 samples, one on the edge twice
}

TEST(LoadBalancingRuleTest, ComparesNodesInMultiNodeRuns) {
  Data data;
  for (int gpu : {0, 1}) {
    AddGpuSeries(data, "algo-1", gpu, Constant(11, 100));
    AddGpuSeries(data, "algo-2", gpu, Constant(11, 0));
  }
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLoadBalancingRule();
  SetParameter(*rule, "patience", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 1);  // the GPUs within each node agree; the nodes do not
  EXPECT_FALSE(report.details["algo-1"].contains("distances"));
  EXPECT_DOUBLE_EQ(report.details["node_distances"]["algo-1"]["algo-2"].get<double>(), 0.8325546111576977);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "LoadBalancing/algo-1/nodes-algo-1-algo-2");
}

TEST(LoadBalancingRuleTest, StickyAfterTheFirstViolation) {
  Data data;
  AddGpuSeries(data, "algo-1", 0, Constant(21, 100));
  AddGpuSeries(data, "algo-1", 1, Constant(21, 0));
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeLoadBalancingRule();
  SetParameter(*rule, "patience", "15");
  // 1 s windows: 11 values each after window 0, 22 after window 1 (the +1 s samples twice).
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(rule->Report().violations, 2);
}

// ---------------------------------------------------------------------------------------------
// OverallSystemUsage

Data UsageData(int count, const std::string& node = "algo-1") {
  Data data;
  for (int k = 0; k < count; ++k) {
    const int64_t t = kT0 + k * 100 * kMs;
    data.Cpu(node, 0, t, 10 + k * 3.3).Cpu(node, 1, t, 50 - k * 1.7);
    data.Gpu(node, 0, t, 40 + k * 5.5).Gpu(node, 1, t, 20 + k * 2.25);
    data.GpuMemory(node, 0, t, 30 + k * 1.0).GpuMemory(node, 1, t, 31 + k * 0.5);
    data.Add(node, "memory", "MemoryUsedPercent", "", t, 60 + k * 0.3);
    data.Add(node, "network", "ReceiveBytesPerSecond", "Algorithm", t, 1000.0 * k + 0.5);
    data.Add(node, "network", "TransmitBytesPerSecond", "Algorithm", t, 500 + k * 10.0);
    data.Add(node, "network", "ReceiveBytesPerSecond", "Platform", t, 99999);  // not counted
    data.IoWait(node, 0, t, k * 0.1).IoWait(node, 1, t, 0);
  }
  return data;
}

TEST(OverallSystemUsageRuleTest, ReportsRoundedPercentilesPerNodeAndNeverTriggers) {
  Data data = UsageData(10);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeOverallSystemUsageRule();
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{false});
  const RuleReport report = rule->Report();
  EXPECT_TRUE(report.reporting);
  EXPECT_EQ(report.parameters, "");
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.datapoints, 10);
  const nlohmann::json expected = {
      {"Network", {{"algo-1", {{"max", 9590.5}, {"p99", 9499.6}, {"p95", 9136.0}, {"p50", 5045.5}, {"min", 500.5}}}}},
      {"GPU", {{"algo-1", {{"max", 64.88}, {"p99", 64.53}, {"p95", 63.13}, {"p50", 47.44}, {"min", 30.0}}}}},
      {"CPU", {{"algo-1", {{"max", 37.2}, {"p99", 37.13}, {"p95", 36.84}, {"p50", 33.6}, {"min", 30.0}}}}},
      {"CPU memory", {{"algo-1", {{"max", 62.7}, {"p99", 62.67}, {"p95", 62.56}, {"p50", 61.35}, {"min", 60.0}}}}},
      {"GPU memory", {{"algo-1", {{"max", 37.25}, {"p99", 37.18}, {"p95", 36.91}, {"p50", 33.88}, {"min", 30.5}}}}},
      {"I/O", {{"algo-1", {{"max", 0.45}, {"p99", 0.45}, {"p95", 0.43}, {"p50", 0.22}, {"min", 0}}}}}};
  EXPECT_EQ(report.details, expected);
  EXPECT_TRUE(report.details["I/O"]["algo-1"]["min"].is_number_integer());  // the reference writes int 0
  EXPECT_TRUE(report.findings.empty());
  // The p90 beside them (not in the reference's Details): CPU sums 30 + 0.8k, k = 0..9, at 8.1.
  EXPECT_EQ(report.stepscope_details["CPU"]["algo-1"], (nlohmann::json{{"p90", 36.48}}));
  EXPECT_FALSE(ReferenceJson(report)["Details"]["CPU"]["algo-1"].contains("p90"));
  EXPECT_EQ(FullJson(report)["StepscopeDetails"], report.stepscope_details);
}

TEST(OverallSystemUsageRuleTest, EdgeSamplesAreSummedOnce) {
  // Samples at 0, 0.5, 1.0, 1.5 s with 1 s windows: the 1.0 s sample is in both windows.
  Data data;
  for (int k = 0; k < 4; ++k) data.Cpu("algo-1", 0, kT0 + k * 500 * kMs, k == 2 ? 80 : 10);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeOverallSystemUsageRule();
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{false, false}));
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 4);
  EXPECT_DOUBLE_EQ(report.details["CPU"]["algo-1"]["max"].get<double>(), 80.0);  // not 160
  EXPECT_EQ(report.details["GPU"], nlohmann::json::object());  // no GPU: an empty object
}

TEST(OverallSystemUsageRuleTest, SeveralNodes) {
  Data data = UsageData(10, "algo-1");
  for (int k = 0; k < 5; ++k) data.Cpu("algo-2", 0, kT0 + k * 100 * kMs, 20).Cpu("algo-2", 1, kT0 + k * 100 * kMs, 40);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeOverallSystemUsageRule();
  Drive(*rule, model, kHour);
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 10);  // the CPU timestamps of the first node
  EXPECT_DOUBLE_EQ(report.details["CPU"]["algo-2"]["p50"].get<double>(), 30.0);
  EXPECT_FALSE(report.details["GPU"].contains("algo-2"));
}


// ---------------------------------------------------------------------------------------------
// The SageMaker fixture (tests/fixtures/sagemaker/test_traces/system: 78 samples of one node,
// 2 GPUs, 32 cores), imported and driven in the default 60 s windows. Expected values: the
// reference's OverallSystemUsage and CPUBottleneck counting re-run over the same JSON lines with
// numpy (time-sorted events, one anchor, round(np.float64, 2)).

TEST(SystemRulesFixtureTest, SageMakerTestTraces) {
  StatusOr<Model> model = analysis::ImportSageMaker(std::string(STEPSCOPE_FIXTURES_DIR) + "/sagemaker/test_traces");
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::unique_ptr<Rule> usage = MakeOverallSystemUsageRule();
  std::unique_ptr<Rule> cpu = MakeCPUBottleneckRule();
  std::unique_ptr<Rule> low_gpu = MakeLowGPUUtilizationRule();
  const int64_t scan_ns = kDefaultScanIntervalUs * 1000;
  const std::vector<bool> usage_met = Drive(*usage, *model, scan_ns);
  EXPECT_TRUE(std::none_of(usage_met.begin(), usage_met.end(), [](bool met) { return met; }));
  const std::vector<bool> cpu_met = Drive(*cpu, *model, scan_ns);
  EXPECT_TRUE(std::none_of(cpu_met.begin(), cpu_met.end(), [](bool met) { return met; }));
  Drive(*low_gpu, *model, scan_ns);

  const RuleReport report = usage->Report();
  EXPECT_EQ(report.datapoints, 6);
  const nlohmann::json expected = {
      {"GPU memory", {{"algo-1", {{"max", 42.38}, {"p99", 42.13}, {"p95", 41.13}, {"p50", 22.88}, {"min", 7.38}}}}},
      {"GPU", {{"algo-1", {{"max", 17.38}, {"p99", 17.23}, {"p95", 16.63}, {"p50", 9.88}, {"min", 4.0}}}}},
      {"CPU", {{"algo-1", {{"max", 4.72}, {"p99", 4.7}, {"p95", 4.62}, {"p50", 1.56}, {"min", 0.15}}}}},
      {"CPU memory", nlohmann::json::object()},
      {"Network", nlohmann::json::object()},
      {"I/O", nlohmann::json::object()}};
  EXPECT_EQ(report.details, expected);

  const RuleReport bottleneck = cpu->Report();
  EXPECT_EQ(bottleneck.datapoints, 16);
  EXPECT_EQ(bottleneck.details["low_gpu_utilization"], 1);
  EXPECT_EQ(bottleneck.violations, 0);
  EXPECT_EQ(low_gpu->Report().datapoints, 2);  // 2 values per GPU: far below patience
  EXPECT_EQ(low_gpu->Report().triggered, 0);
}

}  // namespace
}  // namespace stepscope::rules
