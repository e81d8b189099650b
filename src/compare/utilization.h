// The utilization figures compare shows side by side: the 95th percentile over the whole run of
// CPU (per node and timestamp, the mean over the node's cores, as RULES.md §0 "CPU total"), GPU
// (the mean over the node's GPUs), CPU memory (MemoryUsedPercent) and GPU memory (the mean
// GPUMemoryUtilization over the node's GPUs), every node's values pooled.
//
// Callers: run_comparison.cc. Pure function of a Model; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/model.h"

namespace stepscope::compare {

struct UtilizationP95 {
  std::string metric;           // "CPU", "GPU", "CPU memory", "GPU memory"
  std::optional<double> p95;    // percent; nullopt when the run has no such samples
};

// Always the four metrics, in the order above.
std::vector<UtilizationP95> ComputeUtilizationP95(const analysis::Model& model);

}  // namespace stepscope::compare
