#include "gpu_tracer/gpu_tracing_session.h"

#include <unistd.h>

#include <atomic>

namespace stepscope {

nlohmann::json CuptiTracerStatsJson(const CuptiTracerStats& stats) {
  return {{"buffers_requested", stats.buffers_requested},
          {"buffers_refused", stats.buffers_refused},
          {"buffers_completed", stats.buffers_completed},
          {"records", stats.records},
          {"records_filtered", stats.records_filtered},
          {"records_dropped_by_cupti", stats.records_dropped_by_cupti},
          {"buffers_discarded_in_child", stats.buffers_discarded_in_child},
          {"pool_bytes", stats.pool_bytes},
          {"yields", stats.yields},
          {"resumes", stats.resumes}};
}

StatusOr<std::unique_ptr<GpuTracingSession>> GpuTracingSession::Start(const GpuTracingOptions& options) {
  std::unique_ptr<GpuTracingSession> session(new GpuTracingSession);
  session->pid_ = getpid();
  // The writer reads CUPTI's clock through the tracer once it exists; the tracer's first call
  // into the writer (its state) brings a timestamp of its own.
  auto tracer_slot = std::make_shared<std::atomic<const CuptiTracer*>>(nullptr);
  GpuStreamWriterOptions writer_options;
  writer_options.node_dir = options.node_dir;
  writer_options.pid = getpid();
  writer_options.block_bytes = options.block_bytes;
  writer_options.block_count = options.block_count;
  writer_options.meta_extra = {{"cupti", {{"mode", GpuTracingModeName(options.tracer.mode)}}}};
  writer_options.gpu_clock_ns = [tracer_slot] {
    const CuptiTracer* tracer = tracer_slot->load(std::memory_order_acquire);
    return tracer != nullptr ? tracer->TimestampNs() : uint64_t{0};
  };
  session->writer_ = std::make_unique<GpuStreamWriter>(std::move(writer_options));
  auto tracer = CuptiTracer::Start(options.tracer, session->writer_.get());
  if (!tracer.ok()) {
    session->writer_->Finish(nlohmann::json::object());
    return tracer.status();
  }
  session->tracer_ = std::move(*tracer);
  tracer_slot->store(session->tracer_.get(), std::memory_order_release);
  return session;
}

GpuTracingSession::~GpuTracingSession() { Stop(); }

Status GpuTracingSession::Yield(const std::string& reason) { return tracer_->Yield(reason); }
Status GpuTracingSession::Resume(const std::string& reason) { return tracer_->Resume(reason); }
Status GpuTracingSession::SetMode(GpuTracingMode mode) { return tracer_->SetMode(mode); }
void GpuTracingSession::Flush() { tracer_->Flush(/*forced=*/true); }

void GpuTracingSession::Stop() {
  std::lock_guard lock(stop_mutex_);
  if (stopped_ || tracer_ == nullptr || getpid() != pid_) return;
  stopped_ = true;
  tracer_->Stop();
  // No buffer is left with CUPTI and tracing is off: nothing else calls the writer now.
  writer_->Finish(CuptiTracerStatsJson(tracer_->Stats()));
}

}  // namespace stepscope
