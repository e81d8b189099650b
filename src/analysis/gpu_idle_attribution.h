// Where each step's time went on each GPU of its rank, and why the GPU was idle: the step-time
// breakdown of issue 15 §2, behind the report's "gpu_idle" section (docs/report-model.md).
//
// A step (a step span: ProfilerStep#N of a PyTorch profiler trace, a stepscope step) runs in a
// process on a node; its GPUs are the devices that process's launches sent work to (ac2g flows),
// else every GPU of the node when one process there has steps, else the GPU of its local rank.
// The step's host interval [start, end) is split on each of them so that each instant counts
// once (SplitTimeByPriority, shared with gpu_activity.h), for the first of:
//   compute        a kernel that is not communication runs
//   communication  an NCCL kernel ("nccl...Kernel", HTA's definition) runs
//   memcpy, memset a copy or a memset runs
//   then the GPU is idle, and the idle instant goes to the first cause that holds:
//   data_wait      the step's process waits for its DataLoader (stepscope's DataLoaderIter spans,
//                  PyTorch's "enumerate(DataLoader)#..." ranges)
//   sync           the process is in a synchronizing CUDA call (cuda_runtime/cuda_driver
//                  *Synchronize, blocking cudaMemcpy) or the GPU has a synchronization record
//                  (Kineto's cuda_sync: Stream Sync, Event Sync, Context Sync, Stream Wait Event)
//   other          work is queued — launched but not started — and waits for something else (an
//                  event, another stream); a device operation whose launch is unknown counts as
//                  queued since the device's previous operation ended, so missing flows never
//                  pass for host-bound
//   host_bound     nothing is queued: the GPU waits for the CPU to launch (launch-bound)
// Work launched at once by a CUDA graph (cudaGraphLaunch: one launch, many kernels linked to it)
// is queued from the graph's launch, so the gaps inside a graph are never host-bound.
// Time is wall-clock: a kernel launched in step N that runs on while step N+1 has begun counts in
// step N+1. The parts add up to the step's duration exactly. Pure over the model; call again
// after Model::Refresh().
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/model.h"

namespace stepscope::analysis {

// In priority order: the first running part takes the instant; kHostBound is what is left.
enum class StepGpuPart : uint8_t {
  kCompute,
  kCommunication,
  kMemcpy,
  kMemset,
  kDataWait,
  kSync,
  kOtherIdle,
  kHostBound,
};
inline constexpr int kStepGpuPartCount = 8;
inline constexpr int kStepGpuBusyParts = 4;  // compute, communication, memcpy, memset
// "compute", "communication", "memcpy", "memset", "data_wait", "sync", "other", "host_bound".
const char* StepGpuPartName(StepGpuPart part);

struct StepGpuBreakdown {
  uint32_t node = 0;
  int32_t pid = 0;          // the step's process
  int32_t rank = -1;        // its rank (Model::RankOf), -1 when unknown
  int32_t device = 0;       // the GPU
  StepPhase phase = StepPhase::kNone;
  int64_t step = -1;        // the step's number
  uint32_t event = 0;       // the step event, index into Model::events()
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool disturbed = false;   // Model::IsDisturbedStep
  std::array<int64_t, kStepGpuPartCount> part_ns{};  // by StepGpuPart; adds up to duration_ns()
  int64_t kernels = 0;        // kernels of the device that started in the step
  int64_t graph_kernels = 0;  // of them, launched by a CUDA graph launch

  int64_t duration_ns() const { return end_ns - start_ns; }
  int64_t ns(StepGpuPart part) const { return part_ns[static_cast<int>(part)]; }
  int64_t busy_ns() const {
    return part_ns[0] + part_ns[1] + part_ns[2] + part_ns[3];
  }
  int64_t idle_ns() const { return duration_ns() - busy_ns(); }
};

// One entry per (step, GPU of its process), in step order (Model::steps()) then device order.
// Steps of processes that sent no work to a GPU, and runs without device events, give none.
std::vector<StepGpuBreakdown> ComputeGpuIdleAttribution(const Model& model);

// NCCL's kernels ("ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_..."): what HTA and
// this file count as communication.
bool IsCommunicationKernel(std::string_view name);

}  // namespace stepscope::analysis
