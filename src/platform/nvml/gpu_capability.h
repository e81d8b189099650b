// What a run records about GPU/NVML support ("capabilities found" in the run manifest and the
// report), derived from one NvmlLoader::Load() attempt.
//
// Callers: the CLI at start-up, next to building NvmlGpuSource. Threading: pure functions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "platform/nvml/nvml_loader.h"

namespace stepscope {

struct GpuCapability {
  // True when NVML loaded and at least one GPU can be sampled.
  bool available = false;
  // Empty when every GPU found can be sampled. Otherwise a user-facing sentence: why GPU
  // metrics are off (no driver, nvmlInit failed, no GPUs), or which GPUs are left out.
  std::string reason;
  std::string driver_version;          // e.g. "550.54.15"; empty when NVML did not load
  std::vector<std::string> gpu_names;  // in NVML index order, unusable GPUs included
};

GpuCapability DescribeGpuCapability(const StatusOr<std::unique_ptr<NvmlLoader>>& load_result);

// One line for the CLI's start-up summary, e.g.
//   "GPU/NVML: 2 GPUs (NVIDIA H100 80GB HBM3, NVIDIA H100 80GB HBM3), driver 550.54.15"
//   "GPU/NVML: off (NVML not found (dlopen libnvidia-ml.so.1: ...): ...; GPU metrics are off)"
std::string FormatGpuCapability(const GpuCapability& capability);

}  // namespace stepscope
