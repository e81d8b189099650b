// Whether `stepscope run` injects its CUPTI tracer (libstepscope_cupti.so, src/gpu_tracer) into
// the job, and the environment that does it: CUDA_INJECTION64_PATH names the library, which the
// CUDA driver then loads into every process of the job at cuInit (as Nsight Systems does with
// its own), and STEPSCOPE_GPU_TRACER_MODE carries the mode to it and to the Python package (which
// makes the tracer give way to torch's profiler). Every reason for not injecting is one line the
// manifest keeps, so `stepscope info` and the report say why GPU tracing is off.
//
// Callers: run_job.cc. Plain data, no threads.
#pragma once

#include <string>
#include <vector>

namespace stepscope::launcher {

struct GpuTracingFacts {
  std::string requested_mode;        // the run config's gpu_tracing: whole_job, everything or off
  bool gpu_available = false;        // NVML saw a GPU
  bool cupti_found = false;          // a CUPTI library loads here
  std::string cupti_reason;          // why not, when not
  std::string package_parent;        // FindOwnPythonPackageParent(): where the library sits
  std::string existing_injection;    // CUDA_INJECTION64_PATH already in the environment
};

struct GpuTracingPlan {
  std::string mode = "off";  // what the job's tracer runs: whole_job, everything or off
  std::string reason;        // why off ("" when on)
  std::string library;       // the injected library, when on
  std::vector<std::string> environment;  // NAME=VALUE for the job
};

// The library's file name beside the Python package (src/gpu_tracer/CMakeLists.txt).
inline constexpr char kGpuTracerLibraryName[] = "libstepscope_cupti.so";

GpuTracingPlan PlanGpuTracing(const GpuTracingFacts& facts);

}  // namespace stepscope::launcher
