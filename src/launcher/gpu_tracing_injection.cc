#include "launcher/gpu_tracing_injection.h"

#include <sys/stat.h>

namespace stepscope::launcher {
namespace {

bool IsRegularFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// The job always learns the mode: a STEPSCOPE_GPU_TRACER_MODE the launcher inherited (a job
// under a job) must not switch the Python side on for another tool's injected library.
GpuTracingPlan Off(std::string reason) {
  GpuTracingPlan plan;
  plan.reason = std::move(reason);
  plan.environment = {"STEPSCOPE_GPU_TRACER_MODE=off"};
  return plan;
}

}  // namespace

GpuTracingPlan PlanGpuTracing(const GpuTracingFacts& facts) {
  if (facts.requested_mode == "off") return Off("turned off (gpu_tracing = off)");
  if (!facts.gpu_available) return Off("no NVIDIA GPU here (NVML found none)");
  if (!facts.cupti_found) {
    return Off("CUPTI cannot be loaded: " + facts.cupti_reason +
               " (install torch's CUDA build, which brings nvidia-cuda-cupti, or the CUDA toolkit)");
  }
  // One injection per process: the driver loads the library CUDA_INJECTION64_PATH names, and
  // another tool's (Nsight Systems under `nsys profile -- stepscope run ...`) must keep CUPTI.
  if (!facts.existing_injection.empty()) {
    return Off("another tool already injects into CUDA (CUDA_INJECTION64_PATH=" + facts.existing_injection +
               "); stepscope leaves CUPTI to it");
  }
  const std::string library =
      facts.package_parent.empty() ? "" : facts.package_parent + "/stepscope/" + kGpuTracerLibraryName;
  if (library.empty() || !IsRegularFile(library)) {
    return Off("this stepscope was built without its GPU tracer (no CUPTI 13 headers when it was built); "
               "rebuild it where torch's CUDA build or the CUDA 13 toolkit is installed");
  }
  GpuTracingPlan plan;
  plan.mode = facts.requested_mode;
  plan.library = library;
  plan.environment = {"CUDA_INJECTION64_PATH=" + library, "STEPSCOPE_GPU_TRACER_MODE=" + plan.mode};
  return plan;
}

}  // namespace stepscope::launcher
