#include "analysis/gpu_idle_attribution.h"

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

class StepTrace {
 public:
  uint32_t Host(std::string_view category, std::string_view name, int64_t start, int64_t end, int32_t pid = 1) {
    return Add(category, name, "cpu_functions", start, end, -1, pid);
  }
  uint32_t Device(std::string_view category, std::string_view name, int64_t start, int64_t end, int32_t device = 0,
                  int64_t stream = 7) {
    return Add(category, name, "gpu_functions-dev:0", start, end, device, device, stream);
  }
  void Launch(uint32_t launch, uint32_t operation) {
    builder.AddFlow(launch, operation, builder.Intern("ac2g"), ++flow_id_);
  }
  uint32_t Step(int64_t number, int64_t start, int64_t end, int32_t pid = 1) {
    FrameworkEvent event = Span(start, end, pid, pid);
    event.step = number;
    event.phase = event.name = builder.Intern("Step:ModeKeys.TRAIN");
    return builder.AddEvent(event);
  }
  ModelBuilder builder{ModelSource::kKineto};

 private:
  static FrameworkEvent Span(int64_t start, int64_t end, int32_t pid, int64_t tid) {
    FrameworkEvent event;
    event.start_ns = start;
    event.end_ns = end;
    event.pid = pid;
    event.tid = tid;
    return event;
  }
  uint32_t Add(std::string_view category, std::string_view name, std::string_view phase, int64_t start, int64_t end,
               int32_t device, int32_t pid, int64_t tid = 1) {
    FrameworkEvent event = Span(start, end, pid, tid);
    event.device = device;
    event.category = builder.Intern(category);
    event.name = builder.Intern(name);
    event.phase = builder.Intern(phase);
    return builder.AddEvent(event);
  }
  int64_t flow_id_ = 0;
};

int64_t Part(const StepGpuBreakdown& row, StepGpuPart part) { return row.ns(part); }

// Step 5 of rank 3 (pid 1) over [0, 1000) ns on GPU 0:
//   [0, 20)     host_bound  nothing launched yet (the first launch ends at 20)
//   [20, 100)   other       the sgemm is queued
//   [100, 200)  compute     sgemm; the NCCL kernel on stream 20 starts at 150 under it
//   [200, 300)  comm        NCCL all-reduce
//   [300, 400)  data_wait   enumerate(DataLoader)
//   [400, 420)  host_bound  the copy's launch ends at 420
//   [420, 450)  other       the copy is queued
//   [450, 500)  memcpy
//   [500, 600)  sync        cudaStreamSynchronize on the host
//   [600, 710)  host_bound  until the graph launch ends
//   [710, 720)  other       graph queued; [720, 760) compute; [760, 780) other: the gap inside
//   [780, 800)  compute     the graph's second kernel
//   [800, 808)  host_bound; [808, 810) other; [810, 830) memset
//   [830, 850)  host_bound; [850, 870) sync (the GPU's Context Sync record)
//   [870, 995)  host_bound; [995, 1000) other: a kernel launched at the end starts after the step
Model ScriptedStep() {
  StepTrace trace;
  trace.Step(5, 0, 1000);
  ProcessFacts process;
  process.pid = 1;
  process.rank = 3;
  trace.builder.AddProcess(process);
  trace.Launch(trace.Host("cuda_runtime", "cudaLaunchKernel", 10, 20),
               trace.Device("kernel", "ampere_sgemm_32x32_sliced1x4_tn", 100, 200));
  trace.Launch(trace.Host("cuda_runtime", "cudaLaunchKernel", 30, 40),
               trace.Device("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 150, 300, 0, 20));
  trace.Host("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 300, 400);
  trace.Launch(trace.Host("cuda_runtime", "cudaMemcpyAsync", 410, 420),
               trace.Device("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 450, 500));
  trace.Host("cuda_runtime", "cudaStreamSynchronize", 500, 600);
  const uint32_t graph = trace.Host("cuda_runtime", "cudaGraphLaunch", 700, 710);
  trace.Launch(graph, trace.Device("kernel", "void at::native::vectorized_elementwise_kernel<4>", 720, 760));
  trace.Launch(graph, trace.Device("kernel", "void at::native::reduce_kernel<512, 1>", 780, 800));
  trace.Launch(trace.Host("cuda_runtime", "cudaMemsetAsync", 805, 808),
               trace.Device("gpu_memset", "Memset (Device)", 810, 830));
  trace.Device("cuda_sync", "Context Sync", 850, 870);
  trace.Device("gpu_user_annotation", "forward", 0, 1000);  // no device work
  trace.Launch(trace.Host("cuda_runtime", "cudaLaunchKernel", 990, 995),
               trace.Device("kernel", "ampere_sgemm_32x32_sliced1x4_tn", 1010, 1020));
  return std::move(trace.builder).Finish();
}

TEST(GpuIdleAttribution, SplitsTheStepSoThatEachInstantCountsOnceAndAttributesIdleToItsCause) {
  const Model model = ScriptedStep();
  const std::vector<StepGpuBreakdown> rows = ComputeGpuIdleAttribution(model);
  ASSERT_EQ(rows.size(), 1u);
  const StepGpuBreakdown& row = rows[0];
  EXPECT_EQ(row.step, 5);
  EXPECT_EQ(row.rank, 3);
  EXPECT_EQ(row.device, 0);
  EXPECT_EQ(row.phase, StepPhase::kTrain);
  EXPECT_EQ(Part(row, StepGpuPart::kCompute), 160);
  EXPECT_EQ(Part(row, StepGpuPart::kCommunication), 100);
  EXPECT_EQ(Part(row, StepGpuPart::kMemcpy), 50);
  EXPECT_EQ(Part(row, StepGpuPart::kMemset), 20);
  EXPECT_EQ(Part(row, StepGpuPart::kDataWait), 100);
  EXPECT_EQ(Part(row, StepGpuPart::kSync), 120);
  EXPECT_EQ(Part(row, StepGpuPart::kOtherIdle), 80 + 30 + 10 + 20 + 2 + 5);
  EXPECT_EQ(Part(row, StepGpuPart::kHostBound), 20 + 20 + 110 + 8 + 20 + 125);
  EXPECT_EQ(row.busy_ns(), 330);
  EXPECT_EQ(row.idle_ns(), 670);
  int64_t total = 0;
  for (int64_t part : row.part_ns) total += part;
  EXPECT_EQ(total, row.duration_ns());
  EXPECT_EQ(row.kernels, 4);  // the kernel that starts after the step is not the step's
  EXPECT_EQ(row.graph_kernels, 2);
}

// Without launch flows nothing passes for host-bound while any work could have been queued: an
// operation whose launch is unknown counts as queued since the device's previous one ended.
TEST(GpuIdleAttribution, WithoutFlowsUnknownLaunchesCountAsQueued) {
  StepTrace trace;
  trace.Step(1, 0, 1000);
  trace.Device("kernel", "ampere_sgemm_32x32_sliced1x4_tn", 100, 200);
  trace.Device("kernel", "ampere_sgemm_32x32_sliced1x4_tn", 300, 400);
  const std::vector<StepGpuBreakdown> rows = ComputeGpuIdleAttribution(std::move(trace.builder).Finish());
  ASSERT_EQ(rows.size(), 1u);  // the node's one stepping process owns its GPU
  EXPECT_EQ(Part(rows[0], StepGpuPart::kCompute), 200);
  EXPECT_EQ(Part(rows[0], StepGpuPart::kOtherIdle), 200);
  EXPECT_EQ(Part(rows[0], StepGpuPart::kHostBound), 600);  // after the last work of the trace
}

// Two ranks on one node, no flows: each step is measured on its local rank's GPU only.
TEST(GpuIdleAttribution, RanksWithoutFlowsTakeTheGpuOfTheirLocalRank) {
  StepTrace trace;
  for (int32_t rank = 0; rank < 2; ++rank) {
    ProcessFacts process;
    process.pid = 10 + rank;
    process.rank = rank;
    process.local_rank = rank;
    trace.builder.AddProcess(process);
    trace.Step(7, 0, 100, 10 + rank);
    trace.Device("kernel", "ampere_sgemm_32x32_sliced1x4_tn", 0, 40 + 20 * rank, rank);
  }
  const std::vector<StepGpuBreakdown> rows = ComputeGpuIdleAttribution(std::move(trace.builder).Finish());
  ASSERT_EQ(rows.size(), 2u);
  for (const StepGpuBreakdown& row : rows) {
    EXPECT_EQ(row.device, row.rank);
    EXPECT_EQ(Part(row, StepGpuPart::kCompute), 40 + 20 * row.rank);
  }
}

TEST(GpuIdleAttribution, RunsWithoutStepsOrDeviceWorkGiveNoRows) {
  StepTrace no_steps;
  no_steps.Device("kernel", "ampere_sgemm_32x32_sliced1x4_tn", 0, 10);
  EXPECT_TRUE(ComputeGpuIdleAttribution(std::move(no_steps.builder).Finish()).empty());
  StepTrace no_gpu;
  no_gpu.Step(1, 0, 10);
  no_gpu.Host("cpu_op", "aten::add", 1, 2);
  EXPECT_TRUE(ComputeGpuIdleAttribution(std::move(no_gpu.builder).Finish()).empty());
}

TEST(GpuIdleAttribution, CommunicationIsNcclsKernelsAsHtaCountsThem) {
  EXPECT_TRUE(IsCommunicationKernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_TRUE(IsCommunicationKernel("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"));
  EXPECT_FALSE(IsCommunicationKernel("ampere_sgemm_32x32_sliced1x4_tn"));
  EXPECT_FALSE(IsCommunicationKernel("void nccl_helper()"));
}

}  // namespace
}  // namespace stepscope::analysis
