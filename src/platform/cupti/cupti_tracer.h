// The CUPTI activity tracer: registers CUPTI's buffer callbacks, hands CUPTI fixed-size buffers
// from a bounded pool, turns each completed buffer's records into GpuActivityRecords for a
// GpuActivitySink, and counts what is lost and why.
//
//   training threads ──(CUDA calls; CUPTI records into our buffers)──► CUPTI
//   CUPTI ──buffer requested──► pool: a free buffer, a new one while under the cap, else none
//                               (CUPTI then drops records and counts them: "cupti_dropped")
//   CUPTI ──buffer completed──► converter ──► mode filter ──► sink ──► buffer back to the pool
//
// Modes: whole-job (kernels, memcpy, and the runtime/driver calls that launch device work) or
// everything (also memset, synchronization, every runtime/driver call, CUPTI's overhead, NVTX
// markers, contexts). Coexistence: CUPTI has one set of buffer callbacks per process, and
// torch's profiler (Kineto) registers its own when it starts. Yield() flushes every buffer
// back to us and disables our kinds before that; Resume() registers ours again afterwards.
// Fork: CUPTI does not survive fork, but a completion that still arrives in a child (an atexit
// flush) is discarded there and counted: the sink writes the parent's stream.
//
// One tracer per process: CUPTI's callbacks carry no user data, so they reach the tracer
// through one process-wide pointer, set by Start() and cleared by the destructor. Threading:
// the public functions may be called from any thread; sink calls are serialised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "platform/cupti/gpu_activity_record.h"

namespace stepscope {

enum class GpuTracingMode : uint8_t { kWholeJob = 0, kEverything = 1 };
const char* GpuTracingModeName(GpuTracingMode mode);  // "whole_job", "everything"

struct CuptiTracerOptions {
  std::string library;                         // "" = the process's CUPTI (cupti_library.h)
  size_t buffer_bytes = 1u << 20;              // one CUPTI buffer
  size_t max_pool_bytes = 32u << 20;           // all buffers together, in flight or free
  GpuTracingMode mode = GpuTracingMode::kWholeJob;
};

struct CuptiTracerStats {
  uint64_t buffers_requested = 0;
  uint64_t buffers_refused = 0;       // the pool was at its cap: CUPTI dropped what it had no room for
  uint64_t buffers_completed = 0;
  uint64_t records = 0;               // handed to the sink
  uint64_t records_filtered = 0;      // runtime/driver calls that launch nothing, in whole-job mode
  uint64_t records_dropped_by_cupti = 0;
  uint64_t buffers_discarded_in_child = 0;  // completed in a forked child
  uint64_t pool_bytes = 0;            // allocated so far (never above max_pool_bytes)
  uint64_t yields = 0;
  uint64_t resumes = 0;
};

class CuptiTracer {
 public:
  // Loads CUPTI, registers the callbacks and enables the mode's kinds. kUnavailable (one line:
  // the call, CUPTI's code and text, the next step, "GPU tracing is off") when CUPTI is missing,
  // has no GPU (CUPTI_ERROR_UNKNOWN), refuses, or a tracer already runs in this process.
  // `sink` must outlive the tracer.
  static StatusOr<std::unique_ptr<CuptiTracer>> Start(const CuptiTracerOptions& options, GpuActivitySink* sink);
  ~CuptiTracer();  // Stop(), then the callbacks reach no tracer
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  // Hands CUPTI to another user (torch's profiler): every buffer is flushed to the sink, our
  // kinds are disabled, and the state and `reason` are told to the sink. Ok when not tracing.
  Status Yield(const std::string& reason);
  // Takes CUPTI back after a Yield: registers our callbacks, enables the mode's kinds. When
  // CUPTI refuses, tracing stays off with that reason (also told to the sink).
  Status Resume(const std::string& reason);
  // Changes which kinds are traced; takes effect at once while tracing, else at Resume.
  Status SetMode(GpuTracingMode mode);
  // Completed buffers to the sink now; `forced` also the buffers CUPTI is still filling.
  void Flush(bool forced);
  // Flushes everything and disables tracing for good.
  void Stop();

  // CUPTI's clock now (the records' timebase), 0 if CUPTI cannot say.
  uint64_t TimestampNs() const;
  GpuTracerState state() const;
  std::string reason() const;  // why tracing is yielded or off
  GpuTracingMode mode() const;
  CuptiTracerStats Stats() const;
  const std::string& library_path() const;
  uint32_t library_version() const;

  struct Impl;

 private:
  explicit CuptiTracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace stepscope
