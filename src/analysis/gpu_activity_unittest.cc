#include "analysis/gpu_activity.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

class GpuTrace {
 public:
  uint32_t Add(std::string_view category, std::string_view name, int64_t start, int64_t end, int32_t device,
               int64_t tid = 7, std::span<const EventArg> args = {}) {
    FrameworkEvent event;
    event.start_ns = start;
    event.end_ns = end;
    event.device = device;
    event.tid = tid;
    event.category = builder.Intern(category);
    event.name = builder.Intern(name);
    event.phase = builder.Intern(device >= 0 ? "gpu_functions-dev:0" : "cpu_functions");
    return builder.AddEvent(event, args);
  }
  ModelBuilder builder{ModelSource::kKineto};
};

// GPU 0, in ns:
//   kernel sgemm     [100, 200)   stream 7
//   kernel triton    [150, 250)   stream 8, launched inside aten::_scaled_mm
//   memcpy HtoD      [240, 300)   pageable, 1000 bytes (overlaps the kernel for 10 ns)
//   memset           [300, 320)   64 bytes
//   sync             [320, 380)
//   idle             [380, 400)
//   memcpy DtoH      [400, 410)   pinned, no byte count
// and a GPU annotation over [50, 500) that is no device work. GPU 1: one FP16 kernel.
Model ScriptedTrace() {
  GpuTrace trace;
  const EventArg bytes_1000 = trace.builder.IntArg("bytes", 1000), bytes_64 = trace.builder.IntArg("bytes", 64);
  trace.Add("kernel", "ampere_sgemm_32x32_sliced1x4_tn", 100, 200, 0);
  const uint32_t triton = trace.Add("kernel", "triton_poi_fused_add_0", 150, 250, 0, 8);
  trace.Add("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 240, 300, 0, 7, {&bytes_1000, 1});
  trace.Add("gpu_memset", "Memset (Device)", 300, 320, 0, 7, {&bytes_64, 1});
  trace.Add("cuda_sync", "Stream Sync", 320, 380, 0);
  trace.Add("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 400, 410, 0);
  trace.Add("gpu_user_annotation", "forward", 50, 500, 0);
  trace.Add("kernel", "volta_h884gemm_64x64_nn", 0, 10, 1);
  trace.Add("cpu_op", "aten::_scaled_mm", 10, 60, -1, 1);
  const uint32_t launch = trace.Add("cuda_runtime", "cudaLaunchKernel", 20, 30, -1, 1);
  trace.builder.AddFlow(launch, triton, trace.builder.Intern("ac2g"), 1);
  return std::move(trace.builder).Finish();
}

TEST(GpuActivity, SplitsTheActiveSpanSoThatEachInstantCountsOnce) {
  const Model model = ScriptedTrace();
  const std::vector<GpuActivity> gpus = ComputeGpuActivity(model);
  ASSERT_EQ(gpus.size(), 2u);
  const GpuActivity& gpu = gpus[0];
  EXPECT_EQ(gpu.device, 0);
  EXPECT_EQ(gpu.first_ns, 100);
  EXPECT_EQ(gpu.last_ns, 410);  // the annotation does not stretch the span
  EXPECT_EQ(gpu.exclusive_ns, (std::array<int64_t, 4>{150, 60, 20, 60}));
  EXPECT_EQ(gpu.idle_ns, 20);
  EXPECT_EQ(gpu.busy_ns(), 230);
  EXPECT_EQ(gpu.summed_ns, (std::array<int64_t, 4>{200, 70, 20, 60}));
  EXPECT_EQ(gpu.count, (std::array<int64_t, 4>{2, 2, 1, 1}));
  EXPECT_EQ(gpus[1].device, 1);
  EXPECT_EQ(gpus[1].span_ns(), 10);
  EXPECT_EQ(gpus[1].idle_ns, 0);
}

TEST(GpuActivity, SplitsMemoryOperationsByKindAndHostMemory) {
  const std::vector<GpuActivity> gpus = ComputeGpuActivity(ScriptedTrace());
  const auto& rows = gpus[0].memory_operations;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kind, "HtoD");
  EXPECT_EQ(rows[0].host_memory, "pageable");
  EXPECT_EQ(rows[0].total_ns, 60);
  EXPECT_EQ(rows[0].bytes, 1000);
  EXPECT_EQ(rows[0].with_bytes, 1);
  EXPECT_EQ(rows[1].kind, "memset");
  EXPECT_EQ(rows[1].host_memory, "");
  EXPECT_EQ(rows[1].bytes, 64);
  EXPECT_EQ(rows[2].kind, "DtoH");
  EXPECT_EQ(rows[2].host_memory, "pinned");
  EXPECT_EQ(rows[2].count, 1);
  EXPECT_EQ(rows[2].with_bytes, 0);
}

TEST(GpuActivity, TakesTheLaunchingOperatorsPrecisionWhenTheKernelNameStatesNone) {
  const std::vector<GpuActivity> gpus = ComputeGpuActivity(ScriptedTrace());
  const auto& rows = gpus[0].precisions;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].precision, KernelPrecision::kFp8);
  EXPECT_EQ(rows[0].launches, 1);
  EXPECT_EQ(rows[0].from_operator, 1);
  EXPECT_EQ(rows[0].total_ns, 100);
  ASSERT_EQ(rows[0].examples.size(), 1u);
  EXPECT_EQ(rows[0].examples[0].kernel, "triton_poi_fused_add_0");
  EXPECT_EQ(rows[0].examples[0].pattern, "_scaled_mm");
  EXPECT_TRUE(rows[0].examples[0].from_operator);
  EXPECT_EQ(rows[1].precision, KernelPrecision::kFp32);
  EXPECT_EQ(rows[1].examples[0].pattern, "s<shape>gemm");
  EXPECT_EQ(gpus[1].precisions.at(0).precision, KernelPrecision::kFp16);
}

TEST(GpuActivity, KeepsAKernelWithoutAKnownLauncherUnknown) {
  GpuTrace trace;
  trace.Add("kernel", "triton_poi_fused_add_0", 0, 5, 0);
  trace.Add("kernel", "triton_poi_fused_add_0", 10, 12, 0);
  const std::vector<GpuActivity> gpus = ComputeGpuActivity(std::move(trace.builder).Finish());
  ASSERT_EQ(gpus.size(), 1u);
  ASSERT_EQ(gpus[0].precisions.size(), 1u);
  EXPECT_EQ(gpus[0].precisions[0].precision, KernelPrecision::kUnknown);
  EXPECT_EQ(gpus[0].precisions[0].launches, 2);
  EXPECT_EQ(gpus[0].precisions[0].total_ns, 7);
  EXPECT_EQ(gpus[0].idle_ns, 5);
}

TEST(GpuActivity, HasNothingToSayWithoutDeviceEvents) {
  GpuTrace trace;
  trace.Add("cpu_op", "aten::mm", 0, 10, -1);
  EXPECT_TRUE(ComputeGpuActivity(std::move(trace.builder).Finish()).empty());
}

}  // namespace
}  // namespace stepscope::analysis
