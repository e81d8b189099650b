// libstepscope_cupti.so: the GPU tracer as the CUDA driver loads it into a training process with
// no change to the job. `stepscope run` sets CUDA_INJECTION64_PATH to this library (as Nsight
// Systems does with its own); the driver dlopens it during cuInit and calls InitializeInjection,
// before any kernel runs. The tracer then writes <STEPSCOPE_NODE_DIR>/gpu-<pid>-<rand>.
//
// The environment is read once, here: STEPSCOPE_NODE_DIR (set by `stepscope run` for the
// recorder too), STEPSCOPE_GPU_TRACER_MODE (the mode, "whole_job" or "everything") and, optionally,
// STEPSCOPE_CUPTI_LIBRARY (a CUPTI to load by path instead of the one the process holds).
// Exported besides InitializeInjection, for the Python package (ctypes, the library found
// through CUDA_INJECTION64_PATH; python/stepscope/torch/_gpu_tracing.py):
// stepscope_gpu_tracing_yield/_resume around torch's profiler, which takes CUPTI; _set_mode
// (0 whole-job, 1 everything); _flush before a process leaves with os._exit. Each returns 0, or
// -1 when no tracer runs in this process (set_mode, flush). A yield before the driver called
// InitializeInjection (the job started torch's profiler before its first CUDA call) is kept:
// tracing then starts at the resume, never under the profiler's feet.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "gpu_tracer/gpu_tracing_session.h"

#define STEPSCOPE_INJECTION_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::mutex g_mutex;
// Lives as long as the process: CUPTI may complete buffers during exit.
stepscope::GpuTracingSession* g_session = nullptr;
bool g_initialized = false;
bool g_yielded = false;        // torch's profiler holds CUPTI
bool g_start_pending = false;  // the driver initialised us while it did


void Say(const std::string& line) { std::fprintf(stderr, "stepscope: %s\n", line.c_str()); }

void StopAtExit() {
  std::lock_guard lock(g_mutex);
  if (g_session != nullptr) g_session->Stop();  // a forked child's copy does nothing
}

int Report(const stepscope::Status& status) {
  if (status.ok()) return 0;
  Say("GPU tracing: " + status.message());
  return -1;
}

void StartTracing() {
  const char* node_dir = std::getenv("STEPSCOPE_NODE_DIR");
  if (node_dir == nullptr || node_dir[0] == '\0') {
    Say("GPU tracing is off in process " + std::to_string(getpid()) +
        ": STEPSCOPE_NODE_DIR is not set (run the job under `stepscope run`)");
    return;
  }
  stepscope::GpuTracingOptions options;
  options.node_dir = node_dir;
  if (const char* mode = std::getenv("STEPSCOPE_GPU_TRACER_MODE"); mode != nullptr && std::string(mode) == "everything") {
    options.tracer.mode = stepscope::GpuTracingMode::kEverything;
  }
  if (const char* library = std::getenv("STEPSCOPE_CUPTI_LIBRARY"); library != nullptr) options.tracer.library = library;
  auto session = stepscope::GpuTracingSession::Start(options);
  if (!session.ok()) {
    Say("GPU tracing is off in process " + std::to_string(getpid()) + ": " + session.status().message());
    return;  // never fail the driver's initialization: the job runs untraced
  }
  g_session = session->release();
  std::atexit(StopAtExit);
}

}  // namespace

STEPSCOPE_INJECTION_EXPORT int InitializeInjection(void) {
  std::lock_guard lock(g_mutex);
  if (g_initialized) return 1;
  g_initialized = true;
  if (g_yielded) {
    g_start_pending = true;
    return 1;
  }
  StartTracing();
  return 1;
}

STEPSCOPE_INJECTION_EXPORT int stepscope_gpu_tracing_yield(const char* reason) {
  std::lock_guard lock(g_mutex);
  g_yielded = true;
  if (g_session == nullptr) return 0;
  return Report(g_session->Yield(reason != nullptr ? reason : "yielded"));
}

STEPSCOPE_INJECTION_EXPORT int stepscope_gpu_tracing_resume(const char* reason) {
  std::lock_guard lock(g_mutex);
  g_yielded = false;
  if (g_start_pending) {
    g_start_pending = false;
    StartTracing();
    return 0;
  }
  if (g_session == nullptr) return 0;
  return Report(g_session->Resume(reason != nullptr ? reason : "resumed"));
}

STEPSCOPE_INJECTION_EXPORT int stepscope_gpu_tracing_set_mode(int everything) {
  std::lock_guard lock(g_mutex);
  if (g_session == nullptr) return -1;
  return Report(g_session->SetMode(everything != 0 ? stepscope::GpuTracingMode::kEverything
                                                   : stepscope::GpuTracingMode::kWholeJob));
}

STEPSCOPE_INJECTION_EXPORT int stepscope_gpu_tracing_flush(void) {
  std::lock_guard lock(g_mutex);
  if (g_session == nullptr) return -1;
  g_session->Flush();
  return 0;
}
