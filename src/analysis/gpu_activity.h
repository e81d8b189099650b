// What each GPU spent its time on, from the device events of the model (CUPTI detail windows of
// stepscope runs, imported PyTorch profiler traces): the data behind the dashboard's GPU page and
// the report's "gpu_activity" section (docs/report-model.md).
//
// Per node and GPU:
// - the active span: from the first to the last device operation (kernel, memcpy, memset,
//   synchronization) on it;
// - the span split into kernels, memcpy, memset, synchronization and idle. Streams overlap, so
//   each instant counts once, for the first of kernel > memcpy > memset > sync running then; the
//   rest is idle (nothing ran). The five parts add up to the span exactly. Summed durations and
//   counts per kind are kept beside (they exceed the span when streams overlap);
// - memory operations by kind (HtoD, DtoH, DtoD, HtoH, PtoP, memset) and host memory (pageable,
//   pinned, from Kineto's/CUPTI's names "Memcpy HtoD (Pageable -> Device)"), with counts, time
//   and bytes where the event carries them (Kineto's args "bytes");
// - kernels by precision (kernel_precision.h): time and launches, and the kernels that weigh most
//   in each, with the pattern that decided. A kernel whose name states no precision takes its
//   launching operator's (the innermost cpu_op around the launch that an ac2g flow leads from).
// Pure over the model; call again after Model::Refresh().
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/kernel_precision.h"
#include "analysis/model.h"

namespace stepscope::analysis {

enum class GpuWork : uint8_t { kKernel, kMemcpy, kMemset, kSync };
inline constexpr int kGpuWorkCount = 4;
const char* GpuWorkName(GpuWork work);  // "kernel", "memcpy", "memset", "sync"

struct MemoryOperationRow {
  std::string kind;         // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "memset"; "other" when unnamed
  std::string host_memory;  // "pageable", "pinned", "managed", or "" (device-only or unnamed)
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t bytes = 0;        // over the operations that carried a byte count
  int64_t with_bytes = 0;   // how many did
};

struct PrecisionExample {
  std::string kernel;
  std::string pattern;   // the token that decided
  bool from_operator = false;  // decided by the launching operator's name
  int64_t total_ns = 0;
  int64_t launches = 0;
};

struct PrecisionRow {
  KernelPrecision precision = KernelPrecision::kUnknown;
  int64_t total_ns = 0;   // summed kernel durations
  int64_t launches = 0;
  int64_t from_operator = 0;  // launches decided by the operator's name
  std::vector<PrecisionExample> examples;  // most time first, at most kPrecisionExamples
};
inline constexpr size_t kPrecisionExamples = 3;

struct GpuActivity {
  uint32_t node = 0;
  int32_t device = 0;
  int64_t first_ns = 0;   // the active span
  int64_t last_ns = 0;
  std::array<int64_t, kGpuWorkCount> exclusive_ns{};  // by GpuWork, each instant counted once
  int64_t idle_ns = 0;                                // span - sum(exclusive_ns)
  std::array<int64_t, kGpuWorkCount> summed_ns{};     // summed durations
  std::array<int64_t, kGpuWorkCount> count{};
  std::vector<MemoryOperationRow> memory_operations;  // most time first
  std::vector<PrecisionRow> precisions;               // KernelPrecision order, only those seen

  int64_t span_ns() const { return last_ns - first_ns; }
  // Kernels, memcpy and memset: the GPU worked (sync is waiting).
  int64_t busy_ns() const {
    return exclusive_ns[0] + exclusive_ns[1] + exclusive_ns[2];
  }
};

// "Each instant once", shared with the per-step idle attribution (gpu_idle_attribution.h): an
// interval of a class that outranks every class with a higher `priority` (0 first).
struct PriorityInterval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int priority = 0;  // in [0, priority_count)
};
// Splits [begin_ns, end_ns) among `intervals` (any order, overlapping, clipped to the window):
// each instant goes to the lowest priority among the intervals covering it, and element
// `priority_count` of the result holds the instants none covers. The elements add up to
// end_ns - begin_ns exactly (0 when end_ns <= begin_ns).
std::vector<int64_t> SplitTimeByPriority(std::span<const PriorityInterval> intervals, int priority_count,
                                         int64_t begin_ns, int64_t end_ns);

// One entry per (node, GPU) with device operations, in (node, device) order.
std::vector<GpuActivity> ComputeGpuActivity(const Model& model);

// "Memcpy HtoD (Pageable -> Device)" -> {"HtoD", "pageable"}; "Memset (Device)" -> {"memset", ""}.
MemoryOperationRow ClassifyMemoryOperation(std::string_view name, GpuWork work);

}  // namespace stepscope::analysis
