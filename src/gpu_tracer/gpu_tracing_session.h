// One process's GPU tracing: the CUPTI tracer (platform/cupti) writing into its gpu stream
// (gpu_stream_writer.h) in the node directory. The injected library (cupti_injection.cc) holds
// one for the life of the process; tests start and stop them against the fake CUPTI.
//
// When CUPTI is missing or refuses, Start() fails with the tracer's one-line reason, and the
// stream (if the node directory takes it) already holds a GpuTracing:off instant saying so.
// Threading: any thread; Yield/Resume/SetMode/Stop are serialised with the tracer's sink calls.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <sys/types.h>

#include "base/status.h"
#include "gpu_tracer/gpu_stream_writer.h"
#include "platform/cupti/cupti_tracer.h"

namespace stepscope {

struct GpuTracingOptions {
  std::string node_dir;
  CuptiTracerOptions tracer;
  // The ring holds NVTX records and state changes only (GpuStreamWriterOptions).
  uint32_t block_bytes = 16 * 1024;
  uint32_t block_count = 16;
};

class GpuTracingSession {
 public:
  static StatusOr<std::unique_ptr<GpuTracingSession>> Start(const GpuTracingOptions& options);
  ~GpuTracingSession();  // Stop()

  Status Yield(const std::string& reason);
  Status Resume(const std::string& reason);
  Status SetMode(GpuTracingMode mode);
  // Every buffer CUPTI holds to the stream now (forced), for a process about to _exit.
  void Flush();
  // Flushes, stops tracing and writes the stream's final stats. Idempotent.
  void Stop();

  const GpuStreamWriter& writer() const { return *writer_; }
  const CuptiTracer& tracer() const { return *tracer_; }

 private:
  GpuTracingSession() = default;
  std::unique_ptr<GpuStreamWriter> writer_;
  std::unique_ptr<CuptiTracer> tracer_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
  pid_t pid_ = 0;  // a forked child's copy never writes the parent's stream
};

nlohmann::json CuptiTracerStatsJson(const CuptiTracerStats& stats);

}  // namespace stepscope
