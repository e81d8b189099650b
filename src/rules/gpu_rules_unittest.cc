// The GPU rules (LaunchBound, PageableCopy, LowPrecisionOpportunity) and what they share
// (step_device_work.h, kernel_launches.h) on small models built by hand, driven window by window
// as the driver does: each triggers on the case it is for, stays quiet on a healthy one, and says
// "no GPU data" on a CPU-only run.
#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model.h"
#include "rules/builtin_rules.h"
#include "rules/kernel_launches.h"
#include "rules/native_rules_test_util.h"
#include "rules/step_device_work.h"

namespace stepscope::rules {
namespace {

using analysis::EventArg;
using analysis::FrameworkEvent;
using analysis::Model;
using native_test::Drive;
using native_test::kT0;

constexpr int64_t kUs = 1000;
constexpr int32_t kHostPid = 100;
constexpr int32_t kKinetoDevicePid = 0;  // a Kineto trace's pid for GPU 0: no process of the run

// A one-node run of process kHostPid, in microseconds from kT0.
class GpuRun {
 public:
  explicit GpuRun(analysis::NodeFacts facts = {}) : builder_(analysis::ModelSource::kKineto) {
    if (facts.name.empty()) facts.name = "n1";
    node_ = builder_.AddNode(facts);
  }
  void Step(int64_t number, int64_t start_us, int64_t end_us, int32_t pid = kHostPid) {
    Add(pid, -1, "Step:ModeKeys.TRAIN", "", "ProfilerStep#" + std::to_string(number), start_us, end_us, number);
  }
  uint32_t Host(std::string_view category, std::string_view name, int64_t start_us, int64_t end_us,
                int32_t pid = kHostPid) {
    return Add(pid, -1, "cuda_runtime", category, name, start_us, end_us);
  }
  uint32_t Device(std::string_view category, std::string_view name, int64_t start_us, int64_t end_us,
                  std::span<const EventArg> args = {}, int32_t pid = kKinetoDevicePid, int32_t device = 0) {
    return Add(pid, device, "gpu_functions-dev:" + std::to_string(device), category, name, start_us, end_us, -1, args);
  }
  // A kernel launched by cudaLaunchKernel (`launch_us` long, from `launch_start_us`), with its ac2g flow.
  void LaunchedKernel(std::string_view name, int64_t launch_start_us, int64_t launch_us, int64_t start_us,
                      int64_t end_us) {
    const uint32_t launch = Host("cuda_runtime", "cudaLaunchKernel", launch_start_us, launch_start_us + launch_us);
    const uint32_t kernel = Device("kernel", name, start_us, end_us);
    builder_.AddFlow(launch, kernel, builder_.Intern("ac2g"), ++flow_id_);
  }
  void Process(int32_t pid, int32_t rank) {
    analysis::ProcessFacts facts;
    facts.node = node_;
    facts.pid = pid;
    facts.rank = rank;
    builder_.AddProcess(facts);
  }
  analysis::ModelBuilder& raw() { return builder_; }
  Model Finish() { return std::move(builder_).Finish(); }

 private:
  uint32_t Add(int32_t pid, int32_t device, std::string_view phase, std::string_view category, std::string_view name,
               int64_t start_us, int64_t end_us, int64_t step = -1, std::span<const EventArg> args = {}) {
    FrameworkEvent event;
    event.node = node_;
    event.pid = pid;
    event.tid = device >= 0 ? 7 : 1;
    event.device = device;
    event.start_ns = kT0 + start_us * kUs;
    event.end_ns = kT0 + end_us * kUs;
    event.phase = builder_.Intern(phase);
    event.name = builder_.Intern(name);
    event.category = builder_.Intern(category);
    event.step = step;
    return builder_.AddEvent(event, args);
  }

  analysis::ModelBuilder builder_;
  uint32_t node_ = 0;
  int64_t flow_id_ = 0;
};

RuleReport Evaluated(std::unique_ptr<Rule> (*make)(), const Model& model) {
  auto rule = make();
  return Drive(*rule, model);
}

// 10 steps of 1 ms; in each, 40 kernels of 5 µs with 15 µs between them, each launched by an
// 8 µs cudaLaunchKernel 20 µs before it starts: a GPU that waits for every launch.
Model LaunchBoundSteps() {
  GpuRun run;
  for (int64_t s = 0; s < 10; ++s) {
    const int64_t t = s * 1000;
    run.Step(s, t, t + 1000);
    for (int64_t k = 0; k < 40; ++k) {
      const int64_t start = t + 100 + k * 20;
      run.LaunchedKernel(k % 2 ? "void at::native::vectorized_elementwise_kernel<4, add>" : "void relu_kernel",
                         start - 20, 8, start, start + 5);
    }
  }
  return run.Finish();
}

TEST(LaunchBound, ShortKernelsWithTheGpuIdleBetweenThemTrigger) {
  const Model model = LaunchBoundSteps();
  const RuleReport report = Evaluated(&MakeLaunchBoundRule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "LaunchBound/n1/gpu0/TRAIN");
  EXPECT_EQ(finding.severity, Severity::kCritical);
  EXPECT_NEAR(finding.estimated_saving, 39 * 15 / 1000.0, 1e-12);  // 39 gaps of 15 µs per 1 ms step
  EXPECT_NE(finding.recommendation.find("CUDA graph"), std::string::npos);
  EXPECT_NE(finding.recommendation.find("reduce-overhead"), std::string::npos);
  ASSERT_EQ(finding.evidence.size(), 6u);  // the summary and the five idlest steps
  EXPECT_NE(finding.evidence[0].what.find("400 of 400 kernels in 10 steps were shorter than 10 µs"), std::string::npos)
      << finding.evidence[0].what;
  EXPECT_NE(finding.evidence[0].what.find("median launch call 8.0 µs, launch to kernel start 20.0 µs; 400 of 400"),
            std::string::npos)
      << finding.evidence[0].what;
  ASSERT_EQ(finding.evidence[0].top_activity.size(), 2u);
  EXPECT_EQ(finding.evidence[0].top_activity[0].kind, "kernel");
  EXPECT_EQ(finding.evidence[1].steps, std::vector<int64_t>{0});
  const nlohmann::json& gpu = report.details["gpus"][0];
  EXPECT_EQ(gpu["kernels"], 400);
  EXPECT_EQ(gpu["short_kernel_share"], 1.0);
  EXPECT_EQ(gpu["kernels_with_launch"], 400);
  EXPECT_EQ(gpu["median_launch_to_start_us"], 20.0);
  EXPECT_EQ(report.datapoints, 10);
}

TEST(LaunchBound, LongKernelsBackToBackStayQuiet) {
  GpuRun run;
  for (int64_t s = 0; s < 10; ++s) {
    const int64_t t = s * 1000;
    run.Step(s, t, t + 1000);
    for (int64_t k = 0; k < 4; ++k) run.LaunchedKernel("ampere_sgemm_128x64_nn", t + k * 240, 8, t + 10 + k * 240,
                                                      t + 245 + k * 240);
  }
  const Model model = run.Finish();
  const RuleReport report = Evaluated(&MakeLaunchBoundRule, model);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.details["gpus"][0]["short_kernel_share"], 0.0);
  EXPECT_EQ(report.details["gpus"][0]["idle_between_work_ns"], 10 * 3 * 5 * kUs);
}

TEST(LaunchBound, ShortKernelsKeepingTheGpuBusyAreNotLaunchBound) {
  GpuRun run;
  for (int64_t s = 0; s < 10; ++s) {
    const int64_t t = s * 1000;
    run.Step(s, t, t + 1000);
    for (int64_t k = 0; k < 200; ++k) run.Device("kernel", "void relu_kernel", t + k * 5, t + k * 5 + 5);
  }
  const Model model = run.Finish();
  const RuleReport report = Evaluated(&MakeLaunchBoundRule, model);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_TRUE(report.details["gpus"][0]["median_launch_us"].is_null());  // no launch recorded
}

Model CpuOnlySteps() {
  GpuRun run;
  for (int64_t s = 0; s < 5; ++s) {
    run.Step(s, s * 1000, s * 1000 + 1000);
    run.Host("cpu_op", "aten::mm", s * 1000 + 10, s * 1000 + 900);
  }
  return run.Finish();
}

TEST(GpuRules, ACpuOnlyRunSaysNoGpuDataAndNeverTriggers) {
  const Model model = CpuOnlySteps();
  for (auto make : {&MakeLaunchBoundRule, &MakePageableCopyRule, &MakeLowPrecisionOpportunityRule}) {
    const RuleReport report = Evaluated(make, model);
    SCOPED_TRACE(report.rule);
    EXPECT_EQ(report.triggered, 0);
    EXPECT_TRUE(report.findings.empty());
    EXPECT_EQ(report.details["gpu_data"], false);
    EXPECT_TRUE(report.details["why"].get<std::string>().starts_with("No GPU data")) << report.details.dump();
  }
}

// 10 steps of 100 ms, each copying its batch from pageable memory (10 ms, 40 MB) and a small
// tensor from pinned memory (1 ms).
Model PageableBatches(std::string_view batch_copy) {
  GpuRun run;
  const EventArg batch[] = {run.raw().IntArg("bytes", 40'000'000)};
  const EventArg small[] = {run.raw().IntArg("bytes", 4096)};
  for (int64_t s = 0; s < 10; ++s) {
    const int64_t t = s * 100'000;
    run.Step(s, t, t + 100'000);
    run.Device("gpu_memcpy", batch_copy, t + 1000, t + (s == 3 ? 16'000 : 11'000), batch);
    run.Device("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", t + 20'000, t + 21'000, small);
    run.Device("kernel", "ampere_sgemm_128x64_nn", t + 22'000, t + 90'000);
  }
  return run.Finish();
}

TEST(PageableCopy, BatchesCopiedFromPageableMemoryTriggerWithTheirLargestSteps) {
  const Model model = PageableBatches("Memcpy HtoD (Pageable -> Device)");
  const RuleReport report = Evaluated(&MakePageableCopyRule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "PageableCopy/n1/TRAIN");
  EXPECT_EQ(finding.severity, Severity::kCritical);  // over 10 % of step time
  EXPECT_NEAR(finding.estimated_saving, (9 * 10 + 15) / 1000.0, 1e-12);
  EXPECT_NE(finding.recommendation.find("pin_memory=True"), std::string::npos);
  EXPECT_NE(finding.recommendation.find("non_blocking=True"), std::string::npos);
  ASSERT_EQ(finding.evidence.size(), 6u);
  EXPECT_EQ(finding.evidence[0].what,
            "10 host-to-device copies from pageable memory in 10 steps: 400.0 MB, 105.0 ms (10 from pinned memory: "
            "10.0 ms)");
  EXPECT_EQ(finding.evidence[1].steps, std::vector<int64_t>{3});  // the longest copy first
  EXPECT_EQ(finding.evidence[1].what, "step 3: 1 pageable copies, 40.0 MB, 15.0 ms (15.0 % of the step)");
  const nlohmann::json& steps = report.details["steps"][0];
  EXPECT_EQ(steps["pageable_htod"]["bytes"], 400'000'000);
  EXPECT_EQ(steps["pinned_htod"]["count"], 10);
  EXPECT_EQ(report.details["pageable_htod_by_node"]["n1"]["count"], 10);
}

TEST(PageableCopy, PinnedCopiesStayQuiet) {
  const Model model = PageableBatches("Memcpy HtoD (Pinned -> Device)");
  const RuleReport report = Evaluated(&MakePageableCopyRule, model);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.details["steps"][0]["pageable_htod"]["count"], 0);
  EXPECT_EQ(report.details["steps"][0]["pinned_htod"]["count"], 20);
}

TEST(PageableCopy, DeviceToHostCopiesAreNotItsConcern) {
  const Model model = PageableBatches("Memcpy DtoH (Device -> Pageable)");
  EXPECT_TRUE(Evaluated(&MakePageableCopyRule, model).findings.empty());
}

TEST(PageableCopy, ATraceWithoutStepsShowsItsCopiesWithoutJudgingThem) {
  GpuRun run;
  const EventArg bytes[] = {run.raw().IntArg("bytes", 1'000'000)};
  run.Device("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 5000, bytes);
  const Model model = run.Finish();
  const RuleReport report = Evaluated(&MakePageableCopyRule, model);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.details["pageable_htod_by_node"]["n1"]["bytes"], 1'000'000);
  EXPECT_TRUE(report.details.contains("why"));
}

// 10 steps of 10 ms on `facts`' node: a 6 ms FP32 GEMM (`gemm`) and 1 ms of FP32 element-wise work.
Model Fp32Gemms(analysis::NodeFacts facts, std::string_view gemm = "ampere_sgemm_128x64_nn") {
  GpuRun run(std::move(facts));
  for (int64_t s = 0; s < 10; ++s) {
    const int64_t t = s * 10'000;
    run.Step(s, t, t + 10'000);
    run.Device("kernel", gemm, t + 1000, t + 7000);
    run.Device("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >",
               t + 7000, t + 8000);
  }
  return run.Finish();
}

analysis::NodeFacts WithGpuName(std::string name) {
  analysis::NodeFacts facts;
  facts.name = "n1";
  facts.has_manifest = true;
  facts.manifest.capabilities.gpus = {std::move(name)};
  return facts;
}

TEST(LowPrecisionOpportunity, Fp32GemmsOnAnAmpereGpuRecommendTf32OrBf16) {
  const Model model = Fp32Gemms(WithGpuName("NVIDIA A100-SXM4-40GB"));
  const RuleReport report = Evaluated(&MakeLowPrecisionOpportunityRule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "LowPrecisionOpportunity/n1/gpu0");
  EXPECT_EQ(finding.severity, Severity::kCritical);  // 6 of 7 ms
  EXPECT_NEAR(finding.estimated_saving, 0.6, 1e-12);
  EXPECT_NE(finding.recommendation.find("torch.set_float32_matmul_precision(\"high\")"), std::string::npos);
  EXPECT_NE(finding.recommendation.find("torch.bfloat16"), std::string::npos);
  ASSERT_EQ(finding.evidence.size(), 1u);
  EXPECT_NE(finding.evidence[0].what.find("GPU: Ampere, from GPU name \"NVIDIA A100-SXM4-40GB\""), std::string::npos)
      << finding.evidence[0].what;
  ASSERT_EQ(finding.evidence[0].top_activity.size(), 1u);
  EXPECT_EQ(finding.evidence[0].top_activity[0].name, "ampere_sgemm_128x64_nn");
  const nlohmann::json& gpu = report.details["gpus"][0];
  EXPECT_EQ(gpu["tensor_cores"], true);
  EXPECT_NEAR(gpu["fp32_matrix_share"].get<double>(), 6.0 / 7.0, 1e-12);
}

TEST(LowPrecisionOpportunity, OnVoltaTheAdviceIsFp16WithAGradScaler) {
  analysis::NodeFacts facts;
  facts.name = "n1";
  facts.instance_type = "ml.p3.2xlarge";
  const Model model = Fp32Gemms(facts, "volta_sgemm_128x64_nn");
  const RuleReport report = Evaluated(&MakeLowPrecisionOpportunityRule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_NE(report.findings[0].recommendation.find("torch.float16"), std::string::npos);
  EXPECT_NE(report.findings[0].recommendation.find("GradScaler"), std::string::npos);
  EXPECT_EQ(report.findings[0].recommendation.find("set_float32_matmul_precision"), std::string::npos);
  EXPECT_EQ(report.details["gpus"][0]["architecture_source"], "instance type ml.p3.2xlarge (V100)");
}

TEST(LowPrecisionOpportunity, AnUnknownGpuGivesAnInformationalFindingWithoutASaving) {
  const Model model = Fp32Gemms({}, "volta_sgemm_128x64_nn");  // Volta-built kernels run on Turing GTX 16 too
  const RuleReport report = Evaluated(&MakeLowPrecisionOpportunityRule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.severity, Severity::kInfo);
  EXPECT_LT(finding.estimated_saving, 0);
  EXPECT_NE(finding.title.find("the GPU model is unknown"), std::string::npos) << finding.title;
  EXPECT_NE(finding.evidence[0].what.find("GPU: unknown"), std::string::npos) << finding.evidence[0].what;
  EXPECT_TRUE(report.details["gpus"][0]["tensor_cores"].is_null());
}

TEST(LowPrecisionOpportunity, KernelsBuiltForAmpereEstablishTensorCores) {
  const Model model = Fp32Gemms({});
  const RuleReport report = Evaluated(&MakeLowPrecisionOpportunityRule, model);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].severity, Severity::kCritical);
  EXPECT_EQ(report.details["gpus"][0]["architecture_source"],
            "kernels built for Ampere or newer (\"ampere_sgemm_128x64_nn\")");
}

TEST(LowPrecisionOpportunity, AGpuWithoutTensorCoresOrTf32KernelsStayQuiet) {
  const Model pascal = Fp32Gemms(WithGpuName("Tesla P100-PCIE-16GB"), "maxwell_sgemm_128x64_nn");
  EXPECT_TRUE(Evaluated(&MakeLowPrecisionOpportunityRule, pascal).findings.empty());
  const Model tf32 = Fp32Gemms(WithGpuName("NVIDIA H100 80GB HBM3"), "sm90_xmma_gemm_tf32f32_tf32f32_f32_nn_n");
  const RuleReport report = Evaluated(&MakeLowPrecisionOpportunityRule, tf32);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_EQ(report.details["gpus"][0]["matrix_ns_by_precision"]["TF32"], 10 * 6000 * kUs);
}

TEST(StepDeviceWork, AnotherRanksWorkOnTheNodeIsLeftOutAndKinetoDeviceWorkKept) {
  GpuRun run;
  run.Process(kHostPid, 0);
  run.Process(200, 1);
  run.Step(0, 0, 1000);
  run.Device("kernel", "mine", 10, 20, {}, kHostPid);
  run.Device("kernel", "theirs", 10, 20, {}, 200, 1);
  run.Device("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 30, 40, {}, kKinetoDevicePid, 0);
  run.Device("cuda_sync", "Stream Sync", 50, 60);  // no work
  const Model model = run.Finish();
  Window window;
  window.model = &model;
  window.events = {0, model.events().size()};
  const std::vector<StepDeviceWork> steps = CollectStepDeviceWork(window);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].step.rank, 0);
  ASSERT_EQ(steps[0].work.size(), 1u);
  ASSERT_EQ(steps[0].work.at(0).size(), 2u);
  EXPECT_EQ(model.String(model.events()[steps[0].work.at(0)[0]].name), "mine");
  EXPECT_EQ(GpuSubject("n1", 1, 0), "rank-1/gpu0");
  EXPECT_EQ(GpuSubject("rank-1", 1, 0), "gpu0");
  EXPECT_EQ(GpuSubject("n1", -1, 2), "gpu2");
}

TEST(KernelLaunches, FollowsLaunchFlowsAndIsRebuiltForAnotherModel) {
  const Model first = LaunchBoundSteps();
  KernelLaunches launches;
  launches.Update(first);
  size_t linked = 0;
  for (uint32_t i = 0; i < first.events().size(); ++i) {
    if (const auto launch = launches.LaunchOf(i)) {
      ++linked;
      EXPECT_EQ(first.String(first.events()[*launch].name), "cudaLaunchKernel");
      EXPECT_GE(first.events()[i].device, 0);
    }
  }
  EXPECT_EQ(linked, 400u);
  const Model second = CpuOnlySteps();
  launches.Update(second);
  for (uint32_t i = 0; i < second.events().size(); ++i) EXPECT_FALSE(launches.LaunchOf(i));
}

}  // namespace
}  // namespace stepscope::rules
