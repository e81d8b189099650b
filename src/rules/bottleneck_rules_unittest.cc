// Tests of CPUBottleneck and IOBottleneck (shared/RULES.md §1, §2) and their helpers, driven window by
// window the way the ProfilerReport driver does.
//
// Expected statistics were computed independently with /usr/bin/python3 and numpy the way the
// reference rules compute them (np.quantile linear, np.mean, np.histogram with edges
// np.arange(0, 102, 2), JS divergence with natural logs, round(np.float64, 2)), from the same
// generating formulas as the data below, printed with repr() and pasted here.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/model.h"
#include "rules/builtin_rules.h"
#include "rules/rule.h"
#include "rules/system_rules_test_util.h"
#include "rules/system_snapshots.h"
#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

using namespace system_test;  // NOLINT: the shared test helpers

// ---------------------------------------------------------------------------------------------
// Helpers

TEST(SystemTotalsTest, CpuTotalDividesPerTimestampSumsByTheCoresSeen) {
  Data data;
  data.Cpu("algo-1", 0, kT0, 40).Cpu("algo-1", 1, kT0, 60).Cpu("algo-1", 0, kT0 + 100 * kMs, 80);
  data.Cpu("algo-2", 0, kT0, 10);
  const Model model = data.Finish();
  const Window window = MakeWindow(model, 0, kT0, kS);
  const std::vector<TimedValue> totals = CpuTotals(window, 0);
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].time_ns, kT0);
  EXPECT_EQ(totals[0].value, 50.0);  // (40 + 60) / 2
  EXPECT_EQ(totals[1].value, 40.0);  // cpu1 missing at this timestamp: 80 / 2 cores seen
  const std::vector<TimedValue> other = CpuTotals(window, 1);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].value, 10.0);
}

TEST(SystemSnapshotsTest, SecondsKeyIsPythonFloatRepr) {
  EXPECT_EQ(SecondsKey(kT0), "1600000000.0");
  EXPECT_EQ(SecondsKey(kT0 + 100 * kMs), "1600000000.1");
  EXPECT_EQ(SecondsKey(1591160699457900000), "1591160699.4579");
}

// ---------------------------------------------------------------------------------------------
// CPUBottleneck

// `count` snapshots 100 ms apart: gpu0 at t (value gpu), cpu0 at t + 1 ms (value cpu), cpu1 at
// t + 2 ms (20 %).
void AddSnapshots(Data& data, const std::string& node, int count, double gpu, double cpu, int64_t offset_ns = 0) {
  for (int i = 0; i < count; ++i) {
    const int64_t t = kT0 + offset_ns + i * 100 * kMs;
    data.Gpu(node, 0, t, gpu).Cpu(node, 0, t + kMs, cpu).Cpu(node, 1, t + 2 * kMs, 20);
  }
}

TEST(CPUBottleneckRuleTest, DeclaresTheReferenceParameters) {
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  EXPECT_EQ(rule->name(), "CPUBottleneck");
  EXPECT_EQ(rule->Report().parameters, "threshold:50\ncpu_threshold:90\ngpu_threshold:10\npatience:1000");
  EXPECT_EQ(SetError(*rule, "cpu_threshold", "140"), "CPUBottleneck.cpu_threshold: 140 is not a percentage in [0, 100]");
  EXPECT_EQ(SetError(*rule, "patience", "0"), "CPUBottleneck.patience: 0 is not a whole number > 0");
  SetParameter(*rule, "cpu_threshold", "80");
  EXPECT_EQ(rule->Report().parameters, "threshold:50\ncpu_threshold:80\ngpu_threshold:10\npatience:1000");
}

TEST(CPUBottleneckRuleTest, NoGpuCountsSnapshotsButNeverABottleneck) {
  Data data;
  for (int i = 0; i < 20; ++i) data.Cpu("algo-1", 0, kT0 + i * 100 * kMs, 99);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  SetParameter(*rule, "patience", "5");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{false});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 20);
  EXPECT_EQ(report.violations, 0);
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.details["low_gpu_utilization"], 0);
  EXPECT_EQ(report.details["bottlenecks"], nlohmann::json::object());
  EXPECT_TRUE(report.findings.empty());
}

TEST(CPUBottleneckRuleTest, ExactlyPatienceSnapshotsDoNotTrigger) {
  Data data;
  AddSnapshots(data, "algo-1", 10, 5, 95);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  SetParameter(*rule, "patience", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{false});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 10);
  EXPECT_EQ(report.violations, 10);  // bottlenecks so far, also without a trigger
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.details["bottlenecks"].size(), 10u);
  EXPECT_EQ(report.last_trigger_ns, -1);
}

TEST(CPUBottleneckRuleTest, PatiencePlusOneSnapshotsTrigger) {
  Data data;
  AddSnapshots(data, "algo-1", 11, 5, 95);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  SetParameter(*rule, "patience", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 11);
  EXPECT_EQ(report.violations, 11);
  EXPECT_EQ(report.triggered, 1);
  EXPECT_EQ(report.last_trigger_ns, kT0);
  EXPECT_EQ(report.details["low_gpu_utilization"], 11);
  const nlohmann::json expected_first = {{"GPUs", 1}, {"CPUs", 1}};
  EXPECT_EQ(report.details["bottlenecks"]["1600000000.0"], expected_first);
  EXPECT_EQ(report.details["bottlenecks"]["1600000001.0"], expected_first);  // the 11th, at +1.0 s
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "CPUBottleneck/algo-1/gpu-starved");
  ASSERT_EQ(report.findings[0].evidence.size(), 1u);
  EXPECT_EQ(report.findings[0].evidence[0].node, "algo-1");
  EXPECT_EQ(report.findings[0].evidence[0].start_ns, kT0);
  EXPECT_EQ(report.findings[0].evidence[0].end_ns, kT0 + kHour);
  EXPECT_EQ(report.findings[0].evidence[0].what, "11 bottleneck snapshot(s) in this window, the first at 1600000000.0 s");
}

TEST(CPUBottleneckRuleTest, ThresholdIsAStrictPercentage) {
  // 20 snapshots, every other one a bottleneck: exactly 50 %.
  Data data;
  for (int i = 0; i < 20; ++i) {
    const int64_t t = kT0 + i * 100 * kMs;
    data.Gpu("algo-1", 0, t, i % 2 == 0 ? 5 : 50).Cpu("algo-1", 0, t + kMs, 95);
  }
  const Model model = data.Finish();
  std::unique_ptr<Rule> at_threshold = MakeCPUBottleneckRule();
  SetParameter(*at_threshold, "patience", "10");
  EXPECT_EQ(Drive(*at_threshold, model, kHour), std::vector<bool>{false});
  EXPECT_EQ(at_threshold->Report().violations, 10);
  std::unique_ptr<Rule> below = MakeCPUBottleneckRule();
  SetParameter(*below, "patience", "10");
  SetParameter(*below, "threshold", "49.9");
  EXPECT_EQ(Drive(*below, model, kHour), std::vector<bool>{true});
}

TEST(CPUBottleneckRuleTest, ManyGpusCountLowGpusAndHighCoresPerSnapshot) {
  Data data;
  for (int i = 0; i < 11; ++i) {
    const int64_t t = kT0 + i * 100 * kMs;
    data.Gpu("algo-1", 0, t, 5).Gpu("algo-1", 1, t, 9.9).Gpu("algo-1", 2, t, 10).Gpu("algo-1", 3, t, 50);
    data.Cpu("algo-1", 0, t + kMs, 95).Cpu("algo-1", 1, t + kMs, 90.5).Cpu("algo-1", 2, t + kMs, 90);
  }
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  SetParameter(*rule, "patience", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  const nlohmann::json expected = {{"GPUs", 2}, {"CPUs", 2}};  // < 10 and > 90 are strict
  EXPECT_EQ(report.details["bottlenecks"]["1600000000.5"], expected);
  EXPECT_EQ(report.details["low_gpu_utilization"], 11);
}

TEST(CPUBottleneckRuleTest, ABottleneckNeedsLowGpuAndHighCpuOnTheSameNode) {
  Data data;
  AddSnapshots(data, "algo-1", 11, 5, 20);   // low GPU, idle CPU
  AddSnapshots(data, "algo-2", 11, 80, 95);  // busy GPU, busy CPU
  AddSnapshots(data, "algo-3", 11, 5, 95, 7 * kMs);  // both, 7 ms later than the others
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  SetParameter(*rule, "patience", "10");
  SetParameter(*rule, "threshold", "30");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 33);  // snapshots summed over nodes
  EXPECT_EQ(report.violations, 11);  // algo-3 only: 11 / 33 = 33 % > 30 %
  EXPECT_EQ(report.details["low_gpu_utilization"], 22);
  EXPECT_TRUE(report.details["bottlenecks"].contains("1600000000.007"));
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "CPUBottleneck/algo-3/gpu-starved");
}

TEST(CPUBottleneckRuleTest, SamplesWithin20MsShareASnapshot) {
  Data data;
  data.Gpu("algo-1", 0, kT0, 5).Cpu("algo-1", 0, kT0 + 20 * kMs, 95);         // same snapshot
  data.Gpu("algo-1", 0, kT0 + kS, 5).Cpu("algo-1", 0, kT0 + kS + 21 * kMs, 95);  // two snapshots
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  Drive(*rule, model, kHour);
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 3);
  EXPECT_EQ(report.violations, 1);
  EXPECT_TRUE(report.details["bottlenecks"].contains("1600000000.0"));
}

TEST(CPUBottleneckRuleTest, WindowEdgesAreWindowLocalAndCountSnapshotsOnce) {
  // Snapshots every 0.5 s; 1 s windows; the snapshots at +1.0 s and +2.0 s start exactly on a
  // window edge: their GPU sample belongs to both windows, their CPU sample (+1 ms) to the later.
  Data data;
  for (int i = 0; i < 5; ++i) {
    const int64_t t = kT0 + i * 500 * kMs;
    data.Gpu("algo-1", 0, t, 5).Cpu("algo-1", 0, t + kMs, 95);
  }
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  SetParameter(*rule, "patience", "4");
  // Window 0: 3 snapshots (<= patience). Window 1: 5 snapshots, 4 bottlenecks (80 %). Window 2:
  // the +2.0 s snapshot completes: 5 of 5.
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{false, true, true}));
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 5);
  EXPECT_EQ(report.violations, 5);
  EXPECT_EQ(report.triggered, 2);
  EXPECT_EQ(report.last_trigger_ns, kT0 + 2 * kS);
  EXPECT_EQ(report.details["low_gpu_utilization"], 5);  // the edge snapshots once each
  ASSERT_EQ(report.findings.size(), 1u);
  // Consecutive triggered windows: evidence for window 1 (3 bottlenecks: +1.0, +1.5 and the
  // +2.0 GPU-only snapshot is no bottleneck there) and window 2.
  ASSERT_EQ(report.findings[0].evidence.size(), 2u);
  EXPECT_EQ(report.findings[0].evidence[0].start_ns, kT0 + kS);
  EXPECT_EQ(report.findings[0].evidence[0].what, "2 bottleneck snapshot(s) in this window, the first at 1600000001.0 s");
  EXPECT_EQ(report.findings[0].evidence[1].start_ns, kT0 + 2 * kS);
}

TEST(CPUBottleneckRuleTest, EmptyWindowsKeepTheCumulativeVerdict) {
  // Met in window 0; windows 1-4 hold no samples; window 5 holds one idle snapshot. The
  // condition is on cumulative counts (as the reference), so empty windows report it too.
  Data data;
  AddSnapshots(data, "algo-1", 6, 5, 95);
  data.Gpu("algo-1", 0, kT0 + 5 * kS + 500 * kMs, 90);
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeCPUBottleneckRule();
  SetParameter(*rule, "patience", "5");
  EXPECT_EQ(Drive(*rule, model, kS), (std::vector<bool>{true, true, true, true, true, true}));
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 7);
  EXPECT_EQ(report.violations, 6);
  EXPECT_EQ(report.triggered, 6);
}

// ---------------------------------------------------------------------------------------------
// IOBottleneck

TEST(IOBottleneckRuleTest, DeclaresTheReferenceParameters) {
  std::unique_ptr<Rule> rule = MakeIOBottleneckRule();
  EXPECT_EQ(rule->name(), "IOBottleneck");
  EXPECT_EQ(rule->Report().parameters, "threshold:50\nio_threshold:50\ngpu_threshold:10\npatience:1000");
  EXPECT_EQ(SetError(*rule, "io_threshold", "-1"), "IOBottleneck.io_threshold: -1 is not a percentage in [0, 100]");
  EXPECT_EQ(SetError(*rule, "cpu_threshold", "5"),
            "IOBottleneck.cpu_threshold: no such parameter; IOBottleneck has threshold, io_threshold, gpu_threshold, "
            "patience");
}

TEST(IOBottleneckRuleTest, CountsIoWaitNotCpuUtilization) {
  Data data;
  for (int i = 0; i < 11; ++i) {
    const int64_t t = kT0 + i * 100 * kMs;
    data.Gpu("algo-1", 0, t, 5).Cpu("algo-1", 0, t + kMs, 99);  // busy CPU: not an I/O bottleneck
    if (i < 6) data.IoWait("algo-1", 0, t + 2 * kMs, 60).IoWait("algo-1", 1, t + 2 * kMs, 51);
  }
  const Model model = data.Finish();
  std::unique_ptr<Rule> rule = MakeIOBottleneckRule();
  SetParameter(*rule, "patience", "10");
  EXPECT_EQ(Drive(*rule, model, kHour), std::vector<bool>{true});  // 6 / 11 = 54.5 % > 50 %
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 6);
  EXPECT_EQ(report.datapoints, 11);
  const nlohmann::json expected = {{"GPUs", 1}, {"CPUs", 2}};  // the reference's key names
  EXPECT_EQ(report.details["bottlenecks"]["1600000000.5"], expected);
  EXPECT_FALSE(report.details["bottlenecks"].contains("1600000000.6"));
  std::unique_ptr<Rule> custom = MakeIOBottleneckRule();
  SetParameter(*custom, "patience", "10");
  SetParameter(*custom, "io_threshold", "55");  // only cpu0's 60 % is high now
  Drive(*custom, model, kHour);
  EXPECT_EQ(custom->Report().details["bottlenecks"]["1600000000.5"]["CPUs"], 1);
}

}  // namespace
}  // namespace stepscope::rules
