#include "platform/nvml/gpu_capability.h"

namespace stepscope {

GpuCapability DescribeGpuCapability(const StatusOr<std::unique_ptr<NvmlLoader>>& load_result) {
  GpuCapability capability;
  if (!load_result.ok()) {
    capability.reason = load_result.status().message();
    return capability;
  }
  const NvmlLoader& nvml = **load_result;
  capability.driver_version = nvml.driver_version();
  size_t usable = 0;
  for (const NvmlGpu& gpu : nvml.gpus()) {
    capability.gpu_names.push_back(gpu.name);
    if (gpu.status.ok()) {
      ++usable;
    } else {
      if (!capability.reason.empty()) capability.reason += "; ";
      capability.reason += gpu.status.message();
    }
  }
  if (nvml.gpus().empty()) {
    capability.reason = "NVML (driver " + nvml.driver_version() +
                        ") reports no GPUs: in a container, expose them (docker --gpus all); "
                        "GPU metrics are off";
  }
  capability.available = usable > 0;
  return capability;
}

std::string FormatGpuCapability(const GpuCapability& capability) {
  if (!capability.available) return "GPU/NVML: off (" + capability.reason + ")";
  std::string line = "GPU/NVML: " + std::to_string(capability.gpu_names.size()) +
                     (capability.gpu_names.size() == 1 ? " GPU (" : " GPUs (");
  for (size_t i = 0; i < capability.gpu_names.size(); ++i) {
    if (i > 0) line += ", ";
    line += capability.gpu_names[i];
  }
  line += "), driver " + capability.driver_version;
  if (!capability.reason.empty()) line += "; " + capability.reason;
  return line;
}

}  // namespace stepscope
