// stepscope's own rules on small models built by hand, driven window by window as the driver does.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "analysis/model.h"
#include "rules/builtin_rules.h"

namespace stepscope::rules {
namespace {

using analysis::EventArg;
using analysis::FrameworkEvent;
using analysis::Model;
using analysis::ModelBuilder;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000'000'000;

class Builder {
 public:
  Builder() : builder_(analysis::ModelSource::kStepscope) {}
  uint32_t Node(const std::string& name, const std::string& type = "", int count = 0) {
    analysis::NodeFacts facts;
    facts.name = name;
    facts.instance_type = type;
    facts.instance_count = count;
    return builder_.AddNode(facts);
  }
  void Span(uint32_t node, std::string_view phase, int64_t start_ms, int64_t end_ms, int64_t step = -1,
            std::string_view category = "", int32_t device = -1, std::string_view name = "",
            std::span<const EventArg> args = {}) {
    FrameworkEvent event;
    event.node = node;
    event.pid = 100;
    event.tid = device >= 0 ? 7 : 1;
    event.device = device;
    event.start_ns = kT0 + start_ms * kMs;
    event.end_ns = kT0 + end_ms * kMs;
    event.phase = builder_.Intern(phase);
    event.name = builder_.Intern(name.empty() ? phase : name);
    event.category = builder_.Intern(category);
    event.step = step;
    builder_.AddEvent(event, args);
  }
  void Sample(uint32_t node, std::string_view type, std::string_view name, std::string_view dimension,
              int64_t time_ms, double value) {
    builder_.AddSample(builder_.SeriesFor(node, type, name, dimension), kT0 + time_ms * kMs, value);
  }
  ModelBuilder& raw() { return builder_; }
  Model Finish() { return std::move(builder_).Finish(); }

 private:
  ModelBuilder builder_;
};

// Drives `rule` over `model` in windows of `scan_ms`, as the ProfilerReport driver does.
RuleReport Drive(Rule& rule, const Model& model, int64_t scan_ms = 60'000) {
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += scan_ms * kMs) {
    Window window;
    window.model = &model;
    window.start_ns = start;
    window.end_ns = start + scan_ms * kMs;
    for (const auto& series : model.series()) window.samples.push_back(Model::SamplesIn(series, start, window.end_ns));
    window.events = model.EventsStartingIn(start, window.end_ns);
    rule.Evaluate(window);
  }
  rule.Finish(model);
  return rule.Report();
}

TEST(DataloaderStarvation, AStarvedLoopIsCriticalWithItsWorstStepsAsEvidence) {
  Builder b;
  const uint32_t node = b.Node("n1");
  const EventArg facts[] = {b.raw().IntArg("num_workers", 0), b.raw().IntArg("cores", 8),
                            b.raw().IntArg("pin_memory", 0)};
  b.Span(node, "DataLoaderIterInitialize", 0, 0, -1, "", -1, "", facts);
  for (int i = 0; i < 20; ++i) {
    const int64_t t = i * 100;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + 100, i);
    b.Span(node, "DataLoaderIter", t, t + (i == 7 ? 60 : 30));
    b.Span(node, "Forward", t + 60, t + 90);
  }
  const Model model = b.Finish();
  auto rule = MakeDataloaderStarvationRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "DataloaderStarvation/n1/TRAIN");
  EXPECT_EQ(finding.severity, Severity::kCritical);
  EXPECT_NEAR(finding.estimated_saving, (19 * 30 + 60) / 2000.0, 1e-12);
  EXPECT_NE(finding.recommendation.find("num_workers=0"), std::string::npos) << finding.recommendation;
  ASSERT_EQ(finding.evidence.size(), 5u);
  EXPECT_EQ(finding.evidence[0].steps, std::vector<int64_t>{7});
  EXPECT_EQ(report.datapoints, 20);
}

TEST(DataloaderStarvation, AFedLoopAndDisturbedStepsDoNotTrigger) {
  Builder b;
  const uint32_t node = b.Node("n1");
  const EventArg disturbed[] = {b.raw().IntArg("stepscope_disturbed", 1)};
  for (int i = 0; i < 20; ++i) {
    const int64_t t = i * 100;
    // Steps 5 and 6 waited long, but stepscope's detail profiling ran in them.
    const bool profiled = i == 5 || i == 6;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + 100, i, "", -1, "",
           profiled ? std::span<const EventArg>(disturbed) : std::span<const EventArg>());
    b.Span(node, "DataLoaderIter", t, t + (profiled ? 90 : 2));
  }
  const Model model = b.Finish();
  auto rule = MakeDataloaderStarvationRule();
  const RuleReport report = Drive(*rule, model);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.details["n1"]["TRAIN"]["disturbed_steps_left_out"], 2);
  EXPECT_DOUBLE_EQ(report.details["n1"]["TRAIN"]["data_wait_share"].get<double>(), 0.02);
}

TEST(StepTimeBreakdown, HostOnlyStepsSplitIntoDataForwardBackwardOptimizerOther) {
  Builder b;
  const uint32_t node = b.Node("n1");
  for (int i = 0; i < 3; ++i) {
    const int64_t t = i * 100;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + 100, i);
    b.Span(node, "DataLoaderIter", t, t + 10);
    b.Span(node, "Forward", t + 10, t + 50);
    b.Span(node, "Forward", t + 20, t + 30);  // nested: counted once
    b.Span(node, "Backward", t + 50, t + 80);
    b.Span(node, "OptimizerStep", t + 80, t + 90);
  }
  const Model model = b.Finish();
  auto rule = MakeStepTimeBreakdownRule();
  const RuleReport report = Drive(*rule, model);
  const auto& categories = report.details["n1"]["TRAIN"]["categories"];
  EXPECT_DOUBLE_EQ(categories["data_wait"]["share"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(categories["forward"]["share"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(categories["backward"]["share"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(categories["optimizer"]["share"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(categories["other"]["share"].get<double>(), 0.1);
  EXPECT_FALSE(categories.contains("gpu_kernel"));
  EXPECT_EQ(report.triggered, 0);
}

TEST(StepTimeBreakdown, AKernelWinsOverTheHostWorkBesideIt) {
  Builder b;
  const uint32_t node = b.Node("n1");
  b.Span(node, "Step:ModeKeys.TRAIN", 0, 100, 0);
  b.Span(node, "cpu_functions", 0, 60, -1, "cpu_op", -1, "aten::mm");
  b.Span(node, "cuda_runtime", 10, 20, -1, "cuda_runtime", -1, "cudaLaunchKernel");
  b.Span(node, "gpu_functions-dev:0", 15, 45, -1, "kernel", 0, "volta_sgemm");
  b.Span(node, "gpu_functions-dev:0", 50, 55, -1, "gpu_memcpy", 0, "Memcpy HtoD");
  const Model model = b.Finish();
  auto rule = MakeStepTimeBreakdownRule();
  const RuleReport report = Drive(*rule, model);
  const auto& categories = report.details["n1"]["TRAIN"]["categories"];
  EXPECT_DOUBLE_EQ(categories["gpu_kernel"]["share"].get<double>(), 0.30);      // 15-45
  EXPECT_DOUBLE_EQ(categories["memcpy"]["share"].get<double>(), 0.05);          // 50-55
  EXPECT_DOUBLE_EQ(categories["runtime_launch"]["share"].get<double>(), 0.05);  // 10-15
  EXPECT_DOUBLE_EQ(categories["cpu_compute"]["share"].get<double>(), 0.20);     // 0-10, 45-50, 55-60
  EXPECT_DOUBLE_EQ(categories["other"]["share"].get<double>(), 0.40);           // 60-100
}

TEST(RightSizing, TheSeedExampleRecommendsTwoSmallInstances) {
  // 3 × p3.8xlarge (12 V100s) whose GPUs are busy 12 % at p95: 1.44 GPUs of work, 1.8 at an
  // 80 % target -> 2 GPUs; 2 × p3.2xlarge ($7.65/h) beats 1 × p3.8xlarge ($14.688/h).
  Builder b;
  for (int n = 0; n < 3; ++n) {
    const uint32_t node = b.Node("algo-" + std::to_string(n + 1), "ml.p3.8xlarge", 3);
    for (int64_t t = 0; t < 100; ++t) {
      for (int g = 0; g < 4; ++g) {
        const std::string gpu = "gpu" + std::to_string(g);
        b.Sample(node, "gpu", gpu, "GPUUtilization", t * 500, t % 10 == 0 ? 12.0 : 5.0);
        b.Sample(node, "gpu", gpu, "GPUMemoryUtilization", t * 500, 20.0);
      }
      for (int c = 0; c < 32; ++c) b.Sample(node, "cpu", "cpu" + std::to_string(c), "CPUUtilization", t * 500, 5.0);
      b.Sample(node, "memory", "MemoryUsedPercent", "", t * 500, 10.0);
    }
  }
  const Model model = b.Finish();
  auto rule = MakeRightSizingRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u) << report.details.dump();
  const auto& recommended = report.details["recommended"];
  EXPECT_EQ(recommended["instance_type"], "p3.2xlarge");
  EXPECT_EQ(recommended["instance_count"], 2);
  EXPECT_NEAR(report.findings[0].estimated_saving, 1.0 - 7.65 / 44.064, 1e-12);
  EXPECT_NE(report.findings[0].title.find("82.6 % less"), std::string::npos) << report.findings[0].title;
}

TEST(RightSizing, AnUnknownInstanceSaysWhyThereIsNoRecommendation) {
  Builder b;
  const uint32_t node = b.Node("n1");
  b.Sample(node, "gpu", "gpu0", "GPUUtilization", 0, 50);
  const Model model = b.Finish();
  auto rule = MakeRightSizingRule();
  const RuleReport report = Drive(*rule, model);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_NE(report.details["why_no_recommendation"].get<std::string>().find("--instance"), std::string::npos);
}

TEST(MemoryNearCapacity, APeakAboveTheThresholdIsReportedWithItsTime) {
  Builder b;
  const uint32_t node = b.Node("n1");
  for (int64_t t = 0; t < 10; ++t) {
    b.Sample(node, "gpu", "gpu0", "GPUMemoryUtilization", t * 500, t == 6 ? 95.5 : 60.0);
    b.Sample(node, "gpu", "gpu1", "GPUMemoryUtilization", t * 500, 85.0);
  }
  const Model model = b.Finish();
  auto rule = MakeMemoryNearCapacityRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "MemoryNearCapacity/n1/gpu0");
  EXPECT_EQ(report.findings[0].evidence[0].start_ns, kT0 + 3000 * kMs);
  ASSERT_TRUE(rule->parameters().Set("MemoryNearCapacity", "threshold_pct", "80").ok());
  EXPECT_EQ(rule->Report().findings.size(), 2u);
  EXPECT_EQ(rule->parameters().Set("MemoryNearCapacity", "threshold_pct", "101").message(),
            "MemoryNearCapacity.threshold_pct: 101 is not a percentage in [0, 100]");
}

TEST(Straggler, TheConsistentlySlowNodeIsNamedAndOnlyIt) {
  Builder b;
  const uint32_t fast = b.Node("algo-1");
  const uint32_t slow = b.Node("algo-2");
  for (int i = 0; i < 40; ++i) {  // 4 windows of 10 s
    b.Span(fast, "Step:ModeKeys.TRAIN", i * 1000, i * 1000 + 600, i);
    b.Span(slow, "Step:ModeKeys.TRAIN", i * 1000, i * 1000 + 900, i);
  }
  const Model model = b.Finish();
  auto rule = MakeStragglerRule();
  const RuleReport report = Drive(*rule, model, 10'000);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "Straggler/algo-2/TRAIN");
  EXPECT_EQ(report.details["algo-2"]["TRAIN"]["windows_slow"], 4);
  EXPECT_EQ(report.details["algo-1"]["TRAIN"]["windows_slow"], 0);
}

TEST(SyncHeavy, StepsBlockedInSynchronizationsTrigger) {
  Builder b;
  const uint32_t node = b.Node("n1");
  for (int i = 0; i < 10; ++i) {
    const int64_t t = i * 100;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + 100, i);
    b.Span(node, "cuda_runtime", t + 40, t + 55, -1, "cuda_runtime", -1, "cudaStreamSynchronize");
    b.Span(node, "cuda_runtime", t + 60, t + 70, -1, "cuda_runtime", -1, "cudaMemcpy");
    b.Span(node, "cuda_runtime", t + 70, t + 71, -1, "cuda_runtime", -1, "cudaMemcpyAsync");
  }
  const Model model = b.Finish();
  auto rule = MakeSyncHeavyRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_DOUBLE_EQ(report.details["n1"]["TRAIN"]["sync_share"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(report.details["n1"]["TRAIN"]["syncs_per_step"].get<double>(), 2.0);
}

TEST(GpuIdle, IdleTimeIsAttributedToWhatTheHostDid) {
  Builder b;
  const uint32_t node = b.Node("n1");
  for (int i = 0; i < 4; ++i) {
    const int64_t t = i * 100;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + 100, i);
    b.Span(node, "DataLoaderIter", t, t + 20);              // GPU idle 0-20: data wait
    b.Span(node, "Forward", t + 20, t + 100);
    b.Span(node, "gpu_functions-dev:0", t + 20, t + 40, -1, "kernel", 0, "k1");
    b.Span(node, "gpu_functions-dev:0", t + 70, t + 100, -1, "kernel", 0, "k2");  // 40-70: host wait
  }
  const Model model = b.Finish();
  auto rule = MakeGpuIdleRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const auto& idle = report.details["n1"]["TRAIN"]["idle_ns"];
  EXPECT_EQ(idle["data_wait"], 4 * 20 * kMs);
  EXPECT_EQ(idle["host_wait"], 4 * 30 * kMs);
  EXPECT_DOUBLE_EQ(report.details["n1"]["TRAIN"]["idle_share"].get<double>(), 0.5);
}

}  // namespace
}  // namespace stepscope::rules
