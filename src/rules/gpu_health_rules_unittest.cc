// GPUThrottling and GPUErrors on small models built by hand, with the series the NVML source
// writes (gpu/gpuN/throttle_<reason>, gpu/gpuN/xid, gpu/gpuN/ecc_*_errors), driven window by
// window as the driver does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "rules/builtin_rules.h"
#include "rules/native_rules_test_util.h"

namespace stepscope::rules {
namespace {

using ::testing::HasSubstr;
using native_test::Builder;
using native_test::Drive;
using native_test::kMs;
using native_test::kT0;

// One poll of every throttle reason of `gpu` at `time_ms`: those in `active` are 1.
void ThrottlePoll(Builder& b, uint32_t node, int gpu, int64_t time_ms, std::initializer_list<const char*> active) {
  for (const char* leaf : {"power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake", "sync_boost",
                           "idle", "app_clocks"}) {
    bool on = false;
    for (const char* a : active) on = on || std::string(a) == leaf;
    b.Sample(node, "stepscope", "gpu/gpu" + std::to_string(gpu) + "/throttle_" + leaf, "", time_ms, on ? 1 : 0);
  }
}

// 20 TRAIN steps from t=1000 ms: 0-9 of 100 ms, 10-19 of 150 ms while gpu0's power cap holds
// its clocks (2000..3500 ms; samples every 50 ms up to 3700 ms). Before the first step the GPU idles with a power cap
// too, which must not count: it is not training time.
Builder ThrottledRun(std::initializer_list<const char*> reasons) {
  Builder b;
  const uint32_t node = b.Node("n0");
  int64_t t = 1000;
  int64_t throttle_from = 0, throttle_to = 0;
  for (int i = 0; i < 20; ++i) {
    const int64_t length = i >= 10 ? 150 : 100;
    if (i == 10) throttle_from = t;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + length, i);
    t += length;
  }
  throttle_to = t;
  for (int64_t s = 0; s <= t + 200; s += 50) {
    if (s < 1000) {
      ThrottlePoll(b, node, 0, s, {"idle", "power_cap"});
    } else if (s >= throttle_from && s < throttle_to) {
      ThrottlePoll(b, node, 0, s, reasons);
    } else {
      ThrottlePoll(b, node, 0, s, {});
    }
    ThrottlePoll(b, node, 1, s, {});
  }
  return b;
}

TEST(GPUThrottling, APowerCappedGpuExplainsItsSlowSteps) {
  Builder b = ThrottledRun({"power_cap"});
  const auto model = b.Finish();
  auto rule = MakeGpuThrottlingRule();
  // 1 s windows: steps and throttled stretches cross window edges.
  const RuleReport report = Drive(*rule, model, 1000);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "GPUThrottling/n0/gpu0");
  EXPECT_EQ(finding.severity, Severity::kWarning);
  // Training is 1000..3500 ms plus the 200 ms after: 55 samples (the one at 1000 ms, on a window
  // edge, included), of which those at 2000..3450 ms (30) were capped.
  EXPECT_EQ(report.details["n0"]["gpu0"]["samples"], 55);
  EXPECT_EQ(report.details["n0"]["gpu0"]["throttled_samples"], 30);
  EXPECT_EQ(finding.title, "gpu0 on n0 was throttled 54.5 % of training time (power cap 54.5 %)");
  EXPECT_THAT(finding.next_step, HasSubstr("nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE"));
  ASSERT_GE(finding.evidence.size(), 3u);
  EXPECT_EQ(finding.evidence[0].start_ns, kT0 + 2000 * kMs);
  EXPECT_EQ(finding.evidence[0].end_ns, kT0 + 3450 * kMs);
  EXPECT_THAT(finding.evidence[0].what, HasSubstr("power cap for 1.45 s"));
  EXPECT_EQ(finding.evidence[1].what,
            "10 TRAIN steps ran while a GPU of n0 was throttled (power cap): 150.0 ms on average against 100.0 ms "
            "in the 10 others");
  // The slowest throttled steps, each named with its reason.
  EXPECT_EQ(finding.evidence[2].steps.size(), 1u);
  EXPECT_THAT(finding.evidence[2].what, HasSubstr("took 150.0 ms while power cap held the clocks down"));
  // 50 ms more in 10 of 20 steps: 500 of 2500 ms.
  EXPECT_DOUBLE_EQ(finding.estimated_saving, 0.2);
  EXPECT_EQ(report.details["n0"]["TRAIN steps"]["throttled_steps"], 10);
  // gpu1 never throttled: details, no finding.
  EXPECT_EQ(report.details["n0"]["gpu1"]["throttled_samples"], 0);
}

TEST(GPUThrottling, HardwareSlowdownIsCritical) {
  Builder b = ThrottledRun({"hw_thermal", "sw_thermal"});
  const auto model = b.Finish();
  auto rule = MakeGpuThrottlingRule();
  const RuleReport report = Drive(*rule, model, 1000);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].severity, Severity::kCritical);
  EXPECT_EQ(report.findings[0].title,
            "gpu0 on n0 was throttled 54.5 % of training time (SW thermal slowdown 54.5 %, HW thermal slowdown "
            "54.5 %)");
  EXPECT_THAT(report.findings[0].recommendation, HasSubstr("protects the board"));
}

TEST(GPUThrottling, IdleClocksAreNotThrottling) {
  Builder b = ThrottledRun({"idle"});
  const auto model = b.Finish();
  auto rule = MakeGpuThrottlingRule();
  const RuleReport report = Drive(*rule, model, 1000);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.details["n0"]["gpu0"]["throttled_samples"], 0);
  EXPECT_EQ(report.details["n0"]["TRAIN steps"]["throttled_steps"], 0);
}

TEST(GPUThrottling, BelowTheThresholdIsOnlyDetails) {
  Builder b = ThrottledRun({"power_cap"});
  const auto model = b.Finish();
  auto rule = MakeGpuThrottlingRule();
  ASSERT_TRUE(rule->parameters().Set("GPUThrottling", "threshold_pct", "80").ok());
  const RuleReport report = Drive(*rule, model, 1000);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.datapoints, 110);  // both GPUs' training samples
}

TEST(GPUThrottling, WithoutStepsEverySampleIsTrainingTime) {
  Builder b;
  const uint32_t node = b.Node("n0");
  for (int64_t s = 0; s < 40; ++s) ThrottlePoll(b, node, 3, s * 100, s < 10 ? std::initializer_list<const char*>{"sync_boost"} : std::initializer_list<const char*>{});
  const auto model = b.Finish();
  auto rule = MakeGpuThrottlingRule();
  const RuleReport report = Drive(*rule, model, 1000);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].title, "gpu3 on n0 was throttled 25.0 % of training time (sync boost 25.0 %)");
  EXPECT_DOUBLE_EQ(report.findings[0].estimated_saving, -1);
  EXPECT_EQ(report.findings[0].evidence.size(), 1u);
}

TEST(GPUErrors, XidEventsAreCriticalAndNamedByCode) {
  Builder b;
  const uint32_t node = b.Node("n0");
  for (int64_t s = 0; s <= 3000; s += 500) b.Sample(node, "gpu", "gpu0", "GPUUtilization", s, 90);
  // Two events in one poll, exactly on a window edge (1000 ms), and a third later.
  b.Sample(node, "stepscope", "gpu/gpu0/xid", "", 1000, 79);
  b.Sample(node, "stepscope", "gpu/gpu0/xid", "", 1000, 13);
  b.Sample(node, "stepscope", "gpu/gpu0/xid", "", 2500, 79);
  const auto model = b.Finish();
  auto rule = MakeGpuErrorsRule();
  const RuleReport report = Drive(*rule, model, 1000);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "GPUErrors/n0/gpu0/xid");
  EXPECT_EQ(finding.severity, Severity::kCritical);
  EXPECT_EQ(finding.title, "gpu0 on n0 reported 3 Xid errors (Xid 13, 79)");
  ASSERT_EQ(finding.evidence.size(), 2u);
  EXPECT_EQ(finding.evidence[1].what, "Xid 79 (GPU has fallen off the bus) on gpu0, 2 times");
  EXPECT_EQ(finding.evidence[1].start_ns, kT0 + 1000 * kMs);
  EXPECT_EQ(finding.evidence[1].end_ns, kT0 + 2500 * kMs);
  EXPECT_THAT(finding.recommendation, HasSubstr("points at the hardware"));
  EXPECT_EQ(report.details["n0"]["gpu0"]["xid"]["79"], 2);
}

TEST(GPUErrors, EccRisesDuringTheRunAreFindingsAndAResetStartsANewBase) {
  Builder b;
  const uint32_t node = b.Node("n0");
  // Corrected: 100 at start (before the run: not counted), +3, then the driver reloads (0), +2.
  const double corrected[] = {100, 100, 103, 103, 0, 2, 2};
  const double uncorrected[] = {0, 0, 0, 1, 1, 1, 1};
  for (int i = 0; i < 7; ++i) {
    b.Sample(node, "stepscope", "gpu/gpu1/ecc_corrected_errors", "", i * 500, corrected[i]);
    b.Sample(node, "stepscope", "gpu/gpu1/ecc_uncorrected_errors", "", i * 500, uncorrected[i]);
  }
  const auto model = b.Finish();
  auto rule = MakeGpuErrorsRule();
  const RuleReport report = Drive(*rule, model, 1000);
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_EQ(report.findings[0].title, "gpu1 on n0 had 1 uncorrected ECC memory error during the run");
  EXPECT_EQ(report.findings[0].severity, Severity::kCritical);
  EXPECT_EQ(report.findings[0].evidence[0].start_ns, kT0 + 1500 * kMs);
  EXPECT_EQ(report.findings[1].title, "gpu1 on n0 had 5 corrected ECC memory errors during the run");
  EXPECT_EQ(report.findings[1].severity, Severity::kInfo);
  EXPECT_THAT(report.findings[1].next_step, HasSubstr("-i 1` on n0"));
  EXPECT_EQ(report.datapoints, 14);
}

TEST(GPUErrors, ACleanGpuHasNoFinding) {
  Builder b;
  const uint32_t node = b.Node("n0");
  for (int i = 0; i < 5; ++i) b.Sample(node, "stepscope", "gpu/gpu0/ecc_corrected_errors", "", i * 500, 7);
  const auto model = b.Finish();
  auto rule = MakeGpuErrorsRule();
  const RuleReport report = Drive(*rule, model, 1000);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.details["n0"]["gpu0"]["ecc_corrected"], 0);
}

}  // namespace
}  // namespace stepscope::rules
