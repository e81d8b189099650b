// The real tracer and stream writer against the fake libcupti, read back through the analysis
// loader: what a run holds after GPU tracing (device events as the Kineto importer makes them,
// their args, launch -> kernel flows, drops, the tracer's reasons).
#include "gpu_tracer/gpu_tracing_session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "analysis/gpu_activity.h"
#include "analysis/stepscope_loader.h"
#include "base/clock.h"
#include "platform/cupti/fake/fake_cupti_testing.h"

namespace stepscope {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kCudaLaunchKernel = 211;  // CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
constexpr uint32_t kCudaMemcpyAsync = 41;    // CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020
constexpr uint32_t kCuLaunchKernel = 307;    // CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel

class GpuTracingSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("stepscope_gpu_tracer_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    base_ns_ = MonotonicNowNs();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  GpuTracingOptions Options(size_t buffers = 3) {
    GpuTracingOptions options;
    options.node_dir = dir_.string();
    options.tracer.library = testing::kFakeCuptiPath;
    options.tracer.buffer_bytes = 4096;
    options.tracer.max_pool_bytes = 4096 * buffers;
    return options;
  }

  FakeCuptiActivity Kernel(uint32_t device, uint32_t stream, uint32_t correlation, uint64_t start_us, const char* name) {
    FakeCuptiActivity a{};
    a.kind = FAKE_CUPTI_KERNEL;
    a.device = device;
    a.context = 1 + device;
    a.stream = stream;
    a.correlation = correlation;
    a.start = base_ns_ + start_us * 1000;
    a.end = a.start + 40'000;
    a.grid[0] = 128;
    a.grid[1] = 2;
    a.grid[2] = 1;
    a.block[0] = 256;
    a.block[1] = 1;
    a.block[2] = 1;
    a.registers = 64;
    a.static_shared = 1024;
    a.dynamic_shared = 3072;
    a.name = name;
    return a;
  }
  FakeCuptiActivity Launch(int kind, uint32_t cbid, uint32_t correlation, uint64_t start_us) {
    FakeCuptiActivity a{};
    a.kind = kind;
    a.callback_id = cbid;
    a.thread_id = 4321;
    a.correlation = correlation;
    a.start = base_ns_ + start_us * 1000;
    a.end = a.start + 5'000;
    return a;
  }
  FakeCuptiActivity Memcpy(uint32_t correlation, uint64_t start_us) {
    FakeCuptiActivity a{};
    a.kind = FAKE_CUPTI_MEMCPY;
    a.device = 0;
    a.stream = 7;
    a.correlation = correlation;
    a.start = base_ns_ + start_us * 1000;
    a.end = a.start + 20'000;
    a.bytes = 1 << 20;
    a.copy_kind = 1;  // HtoD
    a.src_kind = 1;   // pageable
    a.dst_kind = 3;   // device
    return a;
  }

  analysis::Model Load() {
    auto model = analysis::LoadStepscopeRun(dir_.string());
    EXPECT_TRUE(model.ok()) << model.status().message();
    return model.ok() ? std::move(*model) : analysis::Model();
  }

  std::filesystem::path dir_;
  uint64_t base_ns_ = 0;
  testing::FakeCupti fake_;
};

std::string ArgText(const analysis::Model& model, const analysis::FrameworkEvent& event, std::string_view key) {
  const analysis::EventArg* arg = model.FindArg(event, key);
  if (arg == nullptr) return "<none>";
  if (arg->type == analysis::EventArg::Type::kString) return std::string(model.String(arg->string_value));
  return std::to_string(arg->int_value);
}

TEST_F(GpuTracingSessionTest, DeviceWorkAndLaunchesLandAsKinetoShapedEventsWithFlows) {
  auto session = GpuTracingSession::Start(Options());
  ASSERT_TRUE(session.ok()) << session.status().message();
  // Two buffers completed out of order: device work first, its launches after.
  const int device_work = fake_.Fill({Kernel(0, 7, 10, 100, "ampere_sgemm_128x64_nn"), Memcpy(11, 200),
                                      Kernel(1, 13, 12, 150, "triton_poi_fused_add_0")});
  const int launches = fake_.Fill({Launch(FAKE_CUPTI_RUNTIME, kCudaLaunchKernel, 10, 90),
                                   Launch(FAKE_CUPTI_RUNTIME, kCudaMemcpyAsync, 11, 190),
                                   Launch(FAKE_CUPTI_DRIVER, kCuLaunchKernel, 12, 140)});
  ASSERT_GE(device_work, 0);
  ASSERT_GE(launches, 0);
  fake_.complete_buffer(launches, 0);
  fake_.complete_buffer(device_work, 0);
  session->reset();  // the writer is gone, as when the traced process ends: every event is final

  const analysis::Model model = Load();
  std::map<std::string, const analysis::FrameworkEvent*> by_name;
  for (const auto& event : model.events()) by_name[std::string(model.String(event.name))] = &event;
  ASSERT_TRUE(by_name.count("ampere_sgemm_128x64_nn"));
  const auto& kernel = *by_name["ampere_sgemm_128x64_nn"];
  EXPECT_EQ(model.String(kernel.category), "kernel");
  EXPECT_EQ(model.String(kernel.phase), "gpu_functions-dev:0");
  EXPECT_EQ(kernel.device, 0);
  EXPECT_EQ(kernel.tid, 7);
  EXPECT_EQ(kernel.pid, getpid());
  EXPECT_EQ(kernel.duration_ns(), 40'000);
  EXPECT_EQ(ArgText(model, kernel, "grid"), "[128, 2, 1]");
  EXPECT_EQ(ArgText(model, kernel, "block"), "[256, 1, 1]");
  EXPECT_EQ(ArgText(model, kernel, "registers per thread"), "64");
  EXPECT_EQ(ArgText(model, kernel, "shared memory"), "4096");
  EXPECT_EQ(ArgText(model, kernel, "correlation"), "10");
  EXPECT_EQ(ArgText(model, kernel, "device"), "0");
  EXPECT_EQ(ArgText(model, kernel, "stream"), "7");

  const auto& other = *by_name["triton_poi_fused_add_0"];
  EXPECT_EQ(other.device, 1);
  EXPECT_EQ(other.tid, 13);

  ASSERT_TRUE(by_name.count("Memcpy HtoD (Pageable -> Device)"));
  const auto& copy = *by_name["Memcpy HtoD (Pageable -> Device)"];
  EXPECT_EQ(model.String(copy.category), "gpu_memcpy");
  EXPECT_EQ(ArgText(model, copy, "bytes"), std::to_string(1 << 20));

  ASSERT_TRUE(by_name.count("cudaLaunchKernel"));
  const auto& launch = *by_name["cudaLaunchKernel"];
  EXPECT_EQ(model.String(launch.category), "cuda_runtime");
  EXPECT_EQ(launch.device, -1);
  EXPECT_EQ(launch.tid, 4321);
  EXPECT_EQ(model.String(by_name["cuLaunchKernel"]->category), "cuda_driver");

  // One ac2g flow per launch -> device work, by correlation.
  std::map<int64_t, std::pair<std::string, std::string>> flows;
  for (const analysis::Flow& flow : model.flows()) {
    ASSERT_EQ(model.String(flow.category), "ac2g");
    flows[flow.id] = {std::string(model.String(model.events()[flow.from].name)),
                      std::string(model.String(model.events()[flow.to].name))};
  }
  EXPECT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[10], std::make_pair(std::string("cudaLaunchKernel"), std::string("ampere_sgemm_128x64_nn")));
  EXPECT_EQ(flows[11], std::make_pair(std::string("cudaMemcpyAsync"), std::string("Memcpy HtoD (Pageable -> Device)")));
  EXPECT_EQ(flows[12], std::make_pair(std::string("cuLaunchKernel"), std::string("triton_poi_fused_add_0")));

  // The analysis core reads them as it reads imported Kineto GPU events.
  const auto activity = analysis::ComputeGpuActivity(model);
  ASSERT_EQ(activity.size(), 2u);
  EXPECT_EQ(activity[0].device, 0);
  EXPECT_EQ(activity[0].count[static_cast<int>(analysis::GpuWork::kKernel)], 1);
  EXPECT_EQ(activity[0].count[static_cast<int>(analysis::GpuWork::kMemcpy)], 1);
  ASSERT_EQ(activity[0].memory_operations.size(), 1u);
  EXPECT_EQ(activity[0].memory_operations[0].kind, "HtoD");
  EXPECT_EQ(activity[0].memory_operations[0].host_memory, "pageable");
  EXPECT_EQ(activity[1].device, 1);

  // The stream is the process's: known pid, nothing dropped.
  const auto gpu_stream = std::find_if(model.streams().begin(), model.streams().end(),
                                       [](const analysis::StreamFacts& s) { return s.name.starts_with("gpu-"); });
  ASSERT_NE(gpu_stream, model.streams().end());
  EXPECT_EQ(gpu_stream->pid, getpid());
  EXPECT_EQ(gpu_stream->dropped_events, 0u);
}

TEST_F(GpuTracingSessionTest, ExhaustedPoolAndCuptiDropsAreCountedInTheRun) {
  auto session = GpuTracingSession::Start(Options(/*buffers=*/1));
  ASSERT_TRUE(session.ok()) << session.status().message();
  const int held = fake_.Fill({Kernel(0, 7, 1, 10, "k1")});
  ASSERT_GE(held, 0);
  EXPECT_EQ(fake_.Fill({Kernel(0, 7, 2, 20, "k2"), Kernel(0, 7, 3, 30, "k3")}), -1) << "no second buffer";
  fake_.complete_buffer(held, /*dropped=*/4);
  (*session)->Stop();
  EXPECT_EQ((*session)->tracer().Stats().buffers_refused, 1u);

  const analysis::Model model = Load();
  const auto gpu_stream = std::find_if(model.streams().begin(), model.streams().end(),
                                       [](const analysis::StreamFacts& s) { return s.name.starts_with("gpu-"); });
  ASSERT_NE(gpu_stream, model.streams().end());
  EXPECT_EQ(gpu_stream->dropped_events, 6u) << "4 CUPTI reported plus the 2 it had no buffer for";
  bool reported = false;
  for (const auto& problem : model.problems()) reported |= problem.name == "events_dropped_buffers_full" && problem.count == 6;
  EXPECT_TRUE(reported);
}

TEST_F(GpuTracingSessionTest, ACompletionInAForkedChildLeavesTheParentsStreamIntact) {
  auto session = GpuTracingSession::Start(Options());
  ASSERT_TRUE(session.ok()) << session.status().message();
  const int buffer = fake_.Fill({Kernel(0, 7, 1, 10, "parent_kernel")});
  const int in_child = fake_.Fill({Kernel(0, 7, 2, 20, "child_kernel")});
  ASSERT_GE(in_child, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    fake_.complete_buffer(in_child, 0);
    (*session)->Stop();  // a child's copy writes nothing
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  fake_.complete_buffer(buffer, 0);
  (*session)->Stop();  // the parent's forced flush completes the buffer the child saw too
  const analysis::Model model = Load();
  EXPECT_TRUE(model.problems().empty() || std::none_of(model.problems().begin(), model.problems().end(),
                                                       [](const auto& p) { return p.name == "damaged_run_data"; }));
  int parent_kernels = 0;
  for (const auto& event : model.events()) parent_kernels += model.String(event.name) == "parent_kernel";
  EXPECT_EQ(parent_kernels, 1);
}

TEST_F(GpuTracingSessionTest, YieldAndResumeAreRecordedWithTheirReasons) {
  auto session = GpuTracingSession::Start(Options());
  ASSERT_TRUE(session.ok()) << session.status().message();
  fake_.complete_buffer(fake_.Fill({Kernel(0, 7, 1, 10, "before")}), 0);
  ASSERT_TRUE((*session)->Yield("torch.profiler: operators window at step 5").ok());
  fake_.take_over();
  fake_.complete_buffer(fake_.Fill({Kernel(0, 7, 2, 20, "kineto's")}), 0);
  ASSERT_TRUE((*session)->Resume("torch.profiler stopped").ok());
  fake_.complete_buffer(fake_.Fill({Kernel(0, 7, 3, 30, "after")}), 0);
  (*session)->Stop();

  const analysis::Model model = Load();
  std::vector<std::string> states;
  std::vector<std::string> kernels;
  for (const auto& event : model.events()) {
    const std::string name(model.String(event.name));
    if (name.starts_with("GpuTracing:")) {
      EXPECT_EQ(model.String(event.phase), "stepscope");
      states.push_back(name + " " + ArgText(model, event, "reason"));
    } else if (event.device >= 0) {
      kernels.push_back(name);
    }
  }
  EXPECT_THAT(kernels, ::testing::ElementsAre("before", "after"));
  EXPECT_THAT(states, ::testing::ElementsAre(HasSubstr("GpuTracing:tracing started in whole_job mode"),
                                             "GpuTracing:yielded torch.profiler: operators window at step 5",
                                             "GpuTracing:tracing torch.profiler stopped", "GpuTracing:off stopped"));
}

TEST_F(GpuTracingSessionTest, ADriverThatRefusesLeavesItsReasonInTheRun) {
  fake_.set_result("cuptiActivityRegisterCallbacks", 39);  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
  auto session = GpuTracingSession::Start(Options());
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("another profiler"));
  const analysis::Model model = Load();
  bool reported = false;
  for (const auto& problem : model.problems()) {
    if (problem.name != "gpu_tracing_off") continue;
    reported = true;
    EXPECT_EQ(problem.severity, analysis::ProblemSeverity::kInfo);
    EXPECT_THAT(problem.sentence, HasSubstr("cuptiActivityRegisterCallbacks failed"));
  }
  EXPECT_TRUE(reported);
}

TEST_F(GpuTracingSessionTest, UnknownErrorSaysNoGpu) {
  fake_.set_result("cuptiActivityEnable", 999);
  auto session = GpuTracingSession::Start(Options());
  ASSERT_FALSE(session.ok());
  EXPECT_THAT(session.status().message(), HasSubstr("no NVIDIA GPU or driver is usable"));
}

}  // namespace
}  // namespace stepscope
