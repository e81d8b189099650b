// stepscope's own rules on small models built by hand, driven window by window as the driver does.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/model.h"
#include "rules/builtin_rules.h"
#include "rules/instance_capacities.h"
#include "rules/native_rules_test_util.h"
#include "rules/right_sizing_rule.h"
#include "rules/rank_step_times.h"

namespace stepscope::rules {
namespace {

using analysis::EventArg;
using analysis::FrameworkEvent;
using analysis::Model;
using analysis::ModelBuilder;

using native_test::Builder;
using native_test::Drive;
using native_test::kMs;
using native_test::kT0;

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
  EXPECT_EQ(finding.next_step,
            "Set DataLoader(num_workers=7, persistent_workers=True), run again and compare the two runs (stepscope "
            "compare).");
  ASSERT_EQ(finding.evidence.size(), 5u);
  EXPECT_EQ(finding.evidence[0].steps, std::vector<int64_t>{7});
  EXPECT_EQ(report.datapoints, 20);
}

// A loop that waits 40 % of each step for data, with 2 workers, on a host of `cores` cores whose
// total CPU is `host_pct` and whose job uses `job_cpu_pct` % of one core (not sampled when < 0).
Model StarvedLoop(int32_t cores, double host_pct, double job_cpu_pct) {
  Builder b;
  analysis::NodeFacts facts;
  facts.name = "n1";
  facts.cpu_cores = cores;
  const uint32_t node = b.raw().AddNode(facts);
  const EventArg loader[] = {b.raw().IntArg("num_workers", 2), b.raw().IntArg("cores", cores)};
  b.Span(node, "DataLoaderIterInitialize", 0, 0, -1, "", -1, "", loader);
  for (int i = 0; i < 20; ++i) {
    const int64_t t = i * 100;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + 100, i);
    b.Span(node, "DataLoaderIter", t, t + 40);
    b.Sample(node, "stepscope", "cpu/total/util_pct", "", t, host_pct);
    if (job_cpu_pct >= 0) b.Sample(node, "stepscope", "process/cpu_pct", "", t, job_cpu_pct);
  }
  return b.Finish();
}

// Issue 13 §3: on a full host, who fills it decides the advice, and more workers are never
// recommended without a free core.
TEST(DataloaderStarvation, OtherProcessesFillingTheHostAreNamedFirstAndNoWorkersAreAdded) {
  const Model model = StarvedLoop(2, 100, 37.5);  // the demo run: host 100 %, the job 37.5 % of one core
  auto rule = MakeDataloaderStarvationRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.recommendation.rfind("Other processes fill this host: the host's CPU is 100 % busy and this job "
                                         "uses 37.5 % of one core (of 2 cores)", 0), 0u)
      << finding.recommendation;
  EXPECT_EQ(finding.recommendation.find("raise"), std::string::npos) << finding.recommendation;
  EXPECT_NE(finding.next_step.find("top -o %CPU"), std::string::npos) << finding.next_step;
}

TEST(DataloaderStarvation, AHostTheJobItselfFillsGetsNoAdviceToAddWorkers) {
  const Model model = StarvedLoop(2, 100, 190);  // the job uses nearly both cores
  auto rule = MakeDataloaderStarvationRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.recommendation.rfind("There is no CPU to spare", 0), 0u) << finding.recommendation;
  EXPECT_EQ(finding.recommendation.find("raise"), std::string::npos) << finding.recommendation;
}

TEST(DataloaderStarvation, WithFreeCoresMoreWorkersAreStillTheAdvice) {
  const Model model = StarvedLoop(8, 30, -1);
  auto rule = MakeDataloaderStarvationRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_NE(report.findings[0].recommendation.find("raise it while cores are free"), std::string::npos)
      << report.findings[0].recommendation;
}

// 20 TRAIN steps of 100 ns on n1 that wait `wait_ns` each for data, but steps 5 and 6, which
// stepscope's detail profiling ran in (disturbed), wait 90.
Model StepsWithTwoDisturbed(int64_t wait_ns) {
  Builder b;
  const uint32_t node = b.Node("n1");
  const EventArg disturbed[] = {b.raw().IntArg("stepscope_disturbed", 1)};
  for (int i = 0; i < 20; ++i) {
    const int64_t t = i * 100;
    const bool profiled = i == 5 || i == 6;
    b.Span(node, "Step:ModeKeys.TRAIN", t, t + 100, i, "", -1, "",
           profiled ? std::span<const EventArg>(disturbed) : std::span<const EventArg>());
    b.Span(node, "DataLoaderIter", t, t + (profiled ? 90 : wait_ns));
  }
  return b.Finish();
}

TEST(DataloaderStarvation, AFedLoopAndDisturbedStepsDoNotTrigger) {
  const Model model = StepsWithTwoDisturbed(2);
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

TEST(StepTimeBreakdown, LeavesOutDisturbedStepsSoItsDataWaitIsDataloaderStarvations) {
  // The report's data-wait figure (this breakdown) and the finding's share (DataloaderStarvation)
  // are one number: both leave out the steps stepscope's detail profiling ran in.
  const Model model = StepsWithTwoDisturbed(30);
  auto breakdown = MakeStepTimeBreakdownRule();
  const RuleReport report = Drive(*breakdown, model);
  EXPECT_EQ(report.details["n1"]["TRAIN"]["steps"], 18);
  EXPECT_EQ(report.details["n1"]["TRAIN"]["disturbed_steps_left_out"], 2);
  const double share = report.details["n1"]["TRAIN"]["categories"]["data_wait"]["share"].get<double>();
  EXPECT_DOUBLE_EQ(share, 0.3);
  auto starvation = MakeDataloaderStarvationRule();
  EXPECT_DOUBLE_EQ(Drive(*starvation, model).details["n1"]["TRAIN"]["data_wait_share"].get<double>(), share);
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

// One node of `type` with 4 GPUs and 48 cores, of which the job keeps one GPU 50 % busy and 4
// cores fully busy, and 5 % of the host memory used.
Model OneBusyGpuJobOn(const std::string& type) {
  Builder b;
  const uint32_t node = b.Node("algo-1", type, 1);
  for (int64_t t = 0; t < 100; ++t) {
    for (int g = 0; g < 4; ++g) {
      b.Sample(node, "gpu", "gpu" + std::to_string(g), "GPUUtilization", t * 500, g == 0 ? 50.0 : 0.0);
    }
    for (int c = 0; c < 48; ++c) b.Sample(node, "cpu", "cpu" + std::to_string(c), "CPUUtilization", t * 500, c < 4 ? 100.0 : 0.0);
    b.Sample(node, "memory", "MemoryUsedPercent", "", t * 500, 5.0);
  }
  return b.Finish();
}

// RightSizing over `model` with `catalog` (null: the built-in example).
RuleReport RightSize(const Model& model, const std::vector<InstanceType>* catalog = nullptr) {
  auto rule = MakeRightSizingRule();
  if (catalog != nullptr) SetRightSizingCatalog(*rule, *catalog);
  return Drive(*rule, model);
}

TEST(RightSizing, AKnownTypeWithoutAPriceIsSizedByCapacity) {
  // g5.8xlarge is not in the built-in example's prices; its capacity is known. Need: 1 GPU, 5
  // vCPUs (4 busy / 0.8), 8 GiB (5 % of 128 GiB / 0.8): a g5.2xlarge (1 GPU, 8 vCPUs, 32 GiB).
  const RuleReport report = RightSize(OneBusyGpuJobOn("ml.g5.8xlarge"));
  ASSERT_EQ(report.findings.size(), 1u) << report.details.dump();
  EXPECT_EQ(report.details["recommended"],
            (nlohmann::json{{"instance_type", "g5.2xlarge"}, {"instance_count", 1}, {"basis", "capacity"}}));
  EXPECT_EQ(report.details["why_no_saving"],
            "no price for g5.8xlarge and g5.2xlarge: pass --prices FILE with them (docs/rules.md)");
  EXPECT_EQ(report.findings[0].title, "1 × g5.2xlarge's capacity fits the work of 1 × g5.8xlarge; pass --prices FILE "
                                      "with your prices to see the saving");
  EXPECT_LT(report.findings[0].estimated_saving, 0) << "no prices, no saving estimate";
  EXPECT_EQ(report.triggered, 1);
}

TEST(RightSizing, APricedCatalogueTurnsTheCapacityFitIntoASaving) {
  InstanceType current = *FindKnownInstanceType("g5.8xlarge");
  current.price_per_hour = 2.45;
  InstanceType smaller = *FindKnownInstanceType("g5.2xlarge");
  smaller.price_per_hour = 1.21;
  const std::vector<InstanceType> catalog = {current, smaller};
  const RuleReport report = RightSize(OneBusyGpuJobOn("g5.8xlarge"), &catalog);
  ASSERT_EQ(report.findings.size(), 1u) << report.details.dump();
  EXPECT_EQ(report.details["recommended"]["instance_type"], "g5.2xlarge");
  EXPECT_FALSE(report.details["recommended"].contains("basis"));
  EXPECT_NEAR(report.findings[0].estimated_saving, 1.0 - 1.21 / 2.45, 1e-12);
}

TEST(RightSizing, TheSmallestKnownFitIsNotRecommendedOverItself) {
  const RuleReport report = RightSize(OneBusyGpuJobOn("g5.2xlarge"));
  EXPECT_TRUE(report.findings.empty()) << report.details.dump();
  EXPECT_EQ(report.details["why_no_recommendation"], "the current instances are the smallest known ones that fit the need");
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

// A single-node DDP job, torchrun --nproc-per-node 3: pids 100..102 are ranks 0..2, each with 20
// TRAIN steps of 100 ms that start and end together, as synchronous training makes them. Rank r
// spends backward_ms[r] of each step in Backward (the others wait there for the slowest).
// Besides: torchrun's agent (pid 99, no rank, no steps) and a DataLoader worker of rank 1 (pid
// 201, rank 1 inherited, no steps).
Model SingleNodeDdpJob(const std::array<int64_t, 3>& backward_ms,
                       const std::array<int64_t, 3>& step_ms = {100, 100, 100}) {
  Builder b;
  const uint32_t node = b.Node("n");
  b.Process(node, 99, -1);
  b.Process(node, 201, 1, 1, 3);
  for (int32_t rank = 0; rank < 3; ++rank) {
    const int32_t pid = 100 + rank;
    b.Process(node, pid, rank, rank, 3);
    for (int i = 0; i < 20; ++i) {
      const int64_t t = i * 200;
      b.ProcessSpan(node, pid, "Step:ModeKeys.TRAIN", t, t + step_ms[rank], i);
      b.ProcessSpan(node, pid, "DataLoaderIter", t, t + 5);
      b.ProcessSpan(node, pid, "Forward", t + 5, t + 20);
      b.ProcessSpan(node, pid, "Backward", t + 20, t + 20 + backward_ms[rank]);
    }
  }
  return b.Finish();
}

TEST(Straggler, InASingleNodeJobTheRankTheOthersWaitForInBackwardIsNamed) {
  // Rank 1 works 50 ms more before its backward; ranks 0 and 2 wait those 50 ms in theirs.
  const Model model = SingleNodeDdpJob({70, 20, 70});
  auto rule = MakeStragglerRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "Straggler/n/rank-1/TRAIN");
  EXPECT_EQ(finding.severity, Severity::kCritical);
  EXPECT_NE(finding.title.find("rank 1 on n (pid 101)"), std::string::npos) << finding.title;
  EXPECT_NE(finding.title.find("wait for it in backward"), std::string::npos) << finding.title;
  EXPECT_NEAR(finding.estimated_saving, 0.5, 1e-9);  // 50 ms of every 100 ms step
  ASSERT_EQ(finding.evidence.size(), 1u);
  const Evidence& evidence = finding.evidence[0];
  EXPECT_EQ(evidence.rank, 1);
  EXPECT_EQ(evidence.pid, 101);
  EXPECT_EQ(evidence.start_ns, kT0);                       // its steps, not the whole window
  EXPECT_EQ(evidence.end_ns, kT0 + (19 * 200 + 100) * kMs);
  EXPECT_EQ(evidence.steps.size(), 20u);
  EXPECT_NE(evidence.what.find("outside backward 80.0 ms vs 30.0 ms"), std::string::npos) << evidence.what;
  EXPECT_NE(evidence.what.find("+50.0 ms in the training script's own code"), std::string::npos) << evidence.what;
  EXPECT_EQ(report.details["n"]["ranks"]["1"]["TRAIN"]["windows_slow"], 1);
  EXPECT_EQ(report.details["n"]["ranks"]["1"]["TRAIN"]["pids"], nlohmann::json::array({101}));
  EXPECT_EQ(report.details["n"]["ranks"]["0"]["TRAIN"]["windows_slow"], 0);
  EXPECT_EQ(report.details["n"]["ranks"]["2"]["TRAIN"]["windows_slow"], 0);
  // The agent and the worker have no steps: they are no members.
  EXPECT_EQ(report.details["n"]["ranks"].size(), 3u);
  EXPECT_EQ(report.datapoints, 3);
  const nlohmann::json json = FullJson(report);
  EXPECT_EQ(json["findings"][0]["evidence"][0]["rank"], 1);
  EXPECT_EQ(json["findings"][0]["evidence"][0]["pid"], 101);
}

TEST(Straggler, RanksThatWaitAlikeAreQuiet) {
  // 4 ms of difference outside backward is under 10 % of the 100 ms step.
  const Model model = SingleNodeDdpJob({70, 66, 70});
  auto rule = MakeStragglerRule();
  const RuleReport report = Drive(*rule, model);
  EXPECT_TRUE(report.findings.empty()) << report.findings[0].title;
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.details["n"]["ranks"]["1"]["TRAIN"]["windows_compared"], 1);
  EXPECT_EQ(report.details["n"]["ranks"]["1"]["TRAIN"]["windows_slow"], 0);
}

TEST(Straggler, ARankHeldBackInBackwardIsNoStraggler) {
  // Rank 0's steps are 20 % longer, all of it waiting in backward: it is held back, not holding
  // the others back, and its time outside backward is theirs.
  for (const auto& [backward_ms, step_ms] : {std::make_pair(90, 120),
                                              // and also 15 ms more outside backward: still held back
                                              std::make_pair(80, 125)}) {
    const Model model = SingleNodeDdpJob({backward_ms, 70, 70}, {step_ms, 100, 100});
    auto rule = MakeStragglerRule();
    const RuleReport report = Drive(*rule, model);
    EXPECT_TRUE(report.findings.empty()) << report.findings[0].title;
    EXPECT_EQ(report.details["n"]["ranks"]["0"]["TRAIN"]["windows_slow"], 0) << step_ms;
  }
}

TEST(Straggler, ARankWhoseStepsAreLongerIsNamedWithoutBackward) {
  // Ranks that do not synchronise (or record no Backward): plain step time decides.
  const Model model = SingleNodeDdpJob({0, 0, 0}, {100, 100, 150});
  auto rule = MakeStragglerRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "Straggler/n/rank-2/TRAIN");
  EXPECT_NE(report.findings[0].title.find("50 % slower than the other ranks'"), std::string::npos)
      << report.findings[0].title;
  EXPECT_NEAR(report.findings[0].estimated_saving, 50.0 / 150.0, 1e-9);
}

TEST(Straggler, StepsOfProcessesWithoutARankAreLeftOutOfTheRankComparison) {
  Builder b;
  const uint32_t node = b.Node("n");
  b.Process(node, 100, 0);
  for (int i = 0; i < 10; ++i) {
    b.ProcessSpan(node, 100, "Step:ModeKeys.TRAIN", i * 200, i * 200 + 100, i);
    b.ProcessSpan(node, 300, "Step:ModeKeys.TRAIN", i * 200, i * 200 + 190, i);  // no rank: not compared
  }
  const Model model = b.Finish();
  auto rule = MakeStragglerRule();
  const RuleReport report = Drive(*rule, model);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.datapoints, 0);
}

TEST(Straggler, MultiNodeJobsCompareEveryRankOfEveryNode) {
  // Two nodes with two ranks each (global ranks 0-3); rank 1 on algo-1 works 60 ms more outside
  // backward while the other three wait for it in theirs. Pooled per node the steps agree: only
  // comparing ranks across the nodes finds it.
  Builder b;
  const uint32_t nodes[] = {b.Node("algo-1"), b.Node("algo-2")};
  for (uint32_t n = 0; n < 2; ++n) {
    for (int32_t local = 0; local < 2; ++local) {
      const int32_t pid = 100 + local;
      b.Process(nodes[n], pid, static_cast<int32_t>(n) * 2 + local, local, 4);
      for (int i = 0; i < 10; ++i) {
        b.ProcessSpan(nodes[n], pid, "Step:ModeKeys.TRAIN", i * 200, i * 200 + 100, i);
        b.ProcessSpan(nodes[n], pid, "Backward", i * 200 + 20, i * 200 + (n == 0 && local == 1 ? 30 : 90));
      }
    }
  }
  const Model model = b.Finish();
  auto rule = MakeStragglerRule();
  const RuleReport report = Drive(*rule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "Straggler/algo-1/rank-1/TRAIN");
  EXPECT_NE(report.findings[0].title.find("rank 1 on algo-1 (pid 101)"), std::string::npos) << report.findings[0].title;
  EXPECT_EQ(report.details["algo-1"]["ranks"]["1"]["TRAIN"]["windows_slow"], 1);
  EXPECT_EQ(report.details["algo-2"]["ranks"]["2"]["TRAIN"]["windows_slow"], 0);
  EXPECT_EQ(report.details["algo-2"]["ranks"]["3"]["TRAIN"]["windows_compared"], 1);
}

TEST(Straggler, ARunShorterThanPatienceNeedsEveryOneOfItsWindows) {
  // patience 3 windows; the run has 2 (10 s each). Slow in both: named; slow in one: not.
  for (const bool slow_in_both : {true, false}) {
    Builder b;
    const uint32_t fast = b.Node("algo-1");
    const uint32_t slow = b.Node("algo-2");
    for (int i = 0; i < 20; ++i) {
      b.Span(fast, "Step:ModeKeys.TRAIN", i * 1000, i * 1000 + 600, i);
      b.Span(slow, "Step:ModeKeys.TRAIN", i * 1000, i * 1000 + (i < 10 || slow_in_both ? 900 : 600), i);
    }
    const Model model = b.Finish();
    auto rule = MakeStragglerRule();
    const RuleReport report = Drive(*rule, model, 10'000);
    EXPECT_EQ(report.details["algo-2"]["TRAIN"]["windows_compared"], 2);
    ASSERT_EQ(report.findings.size(), slow_in_both ? 1u : 0u) << slow_in_both;
    if (slow_in_both) EXPECT_EQ(report.findings[0].id, "Straggler/algo-2/TRAIN");
  }
}

TEST(RankStepTimes, NodesWithSeveralRanksGetOneRowPerRankAndPhase) {
  Builder b;
  const uint32_t node = b.Node("n");
  const uint32_t single = b.Node("solo");  // one rank: no rows
  b.Process(node, 99, -1);                 // torchrun's agent
  b.Process(node, 100, 0, 0, 2);
  b.Process(node, 101, 1, 1, 2);
  b.Process(single, 500, 2, 0, 2);
  const EventArg disturbed[] = {b.raw().IntArg("stepscope_disturbed", 1)};
  for (int i = 0; i < 4; ++i) {
    const int64_t t = i * 100;
    b.ProcessSpan(node, 100, "Step:ModeKeys.TRAIN", t, t + 40, i, i == 3 ? disturbed : std::span<const EventArg>{});
    b.ProcessSpan(node, 100, "DataLoaderIter", t, t + 10);
    b.ProcessSpan(node, 100, "Backward", t + 10, t + 40);
    b.ProcessSpan(node, 101, "Step:ModeKeys.TRAIN", t, t + 40, i);
    b.ProcessSpan(node, 101, "Backward", t + 30, t + 35);
    b.ProcessSpan(single, 500, "Step:ModeKeys.TRAIN", t, t + 40, i);
  }
  b.ProcessSpan(node, 101, "Step:ModeKeys.EVAL", 500, 520, 0);
  const Model model = b.Finish();
  const std::vector<RankStepTimes> ranks = CollectRankStepTimes(model);
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(std::tie(ranks[0].rank, ranks[0].phase, ranks[0].pid), std::make_tuple(0, std::string("TRAIN"), 100));
  EXPECT_EQ(ranks[0].step_ms.size(), 3u);  // the disturbed step is left out
  EXPECT_EQ(ranks[0].backward_ms, std::vector<double>({30, 30, 30}));
  EXPECT_EQ(ranks[0].outside_backward_ms, std::vector<double>({10, 10, 10}));
  EXPECT_DOUBLE_EQ(ranks[0].data_wait_share(), 0.25);
  EXPECT_EQ(ranks[0].local_rank, 0);
  EXPECT_EQ(ranks[0].world_size, 2);
  EXPECT_EQ(std::tie(ranks[1].rank, ranks[1].phase), std::make_tuple(1, std::string("EVAL")));
  EXPECT_EQ(std::tie(ranks[2].rank, ranks[2].phase), std::make_tuple(1, std::string("TRAIN")));
  EXPECT_EQ(ranks[2].outside_backward_ms, std::vector<double>({35, 35, 35, 35}));
  EXPECT_EQ(ranks[2].pids, std::vector<int32_t>({101}));
  for (const RankStepTimes& rank : ranks) EXPECT_EQ(rank.node, node);
}

TEST(RankStepTimes, NoNodeWithSeveralRanksGivesNothing) {
  Builder b;
  const uint32_t node = b.Node("n");
  b.Process(node, 100, 0, 0, 1);
  b.ProcessSpan(node, 100, "Step:ModeKeys.TRAIN", 0, 40, 0);
  EXPECT_TRUE(CollectRankStepTimes(b.Finish()).empty());
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
