#include "launcher/system_stream_sink.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace stepscope::launcher {
namespace {
constexpr uint64_t kCalibrationIntervalNs = 10'000'000'000;  // a (ticks, ns) pair every 10 s
}

StatusOr<std::unique_ptr<SystemStreamSink>> SystemStreamSink::Create(const std::string& node_dir,
                                                                     const std::string& meta_json,
                                                                     const ClockPair& clock_anchor) {
  store::StreamWriterOptions options;
  options.directory = node_dir;
  options.name = "system";
  options.block_bytes = 64 * 1024;
  options.block_count = 8;  // one thread; blocks are flushed as soon as they fill
  options.meta_json = meta_json;
  options.clock_anchor = clock_anchor;
  STEPSCOPE_ASSIGN_OR_RETURN(auto stream, store::StreamWriter::Create(options));
  auto sink = std::unique_ptr<SystemStreamSink>(new SystemStreamSink(std::move(stream)));
  sink->last_calibration_ns_ = clock_anchor.monotonic_ns;
  return sink;
}

uint32_t SystemStreamSink::MetricId(const std::string& name) {
  auto it = metric_ids_.find(name);
  if (it != metric_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(metric_ids_.size()) + 1;
  if (!stream_->AppendStrings({{id, name}}).ok()) return 0;
  metric_ids_.emplace(name, id);
  return id;
}

bool SystemStreamSink::EnsureBlock() {
  if (block_ != nullptr && block_->count.load(std::memory_order_relaxed) < block_->capacity) return true;
  if (block_ != nullptr) {
    stream_->ring().Seal(block_);
    block_ = nullptr;
    auto flushed = stream_->FlushSealed();
    log_write_failing_ = !flushed.ok();
    if (!flushed.ok() && !reported_error_) {
      reported_error_ = true;
      std::fprintf(stderr, "stepscope: %s; system samples stay in memory until it can be written\n",
                   flushed.status().message().c_str());
    }
  }
  block_ = stream_->ring().Claim(static_cast<uint32_t>(gettid()), 0);
  return block_ != nullptr;
}

void SystemStreamSink::WriteSamples(uint64_t ticks, const std::vector<MetricSample>& samples) {
  for (const MetricSample& sample : samples) {
    uint32_t id = MetricId(sample.name);
    if (id == 0 || !EnsureBlock()) {
      // A metric whose name could not be written, or a ring that cannot drain because the log
      // refuses writes (a full disk), loses samples for a different reason than a sampler that
      // outruns the writer: each cause is counted apart (store::RingHeader).
      const bool write_failed = id == 0 || log_write_failing_;
      ++samples_dropped_;
      samples_dropped_write_failed_ += write_failed;
      stream_->ring().CountDropped(1, write_failed ? store::RingFile::DropCause::kWriteFailed
                                                   : store::RingFile::DropCause::kBuffersFull);
      continue;
    }
    uint32_t n = block_->count.load(std::memory_order_relaxed);
    store::RawRecord& record = store::RingFile::Records(block_)[n];
    record.ticks = ticks;
    record.name_id = id;
    record.kind = static_cast<uint8_t>(store::RecordKind::kSample);
    record.phase = 0;
    record.reserved = 0;
    std::memcpy(&record.value, &sample.value, sizeof record.value);
    block_->count.store(n + 1, std::memory_order_release);
    ++samples_written_;
  }
  uint64_t now_ns = MonotonicNowNs();
  if (now_ns - last_calibration_ns_ >= kCalibrationIntervalNs) {
    (void)stream_->AppendClockPair(ReadClockPair());
    last_calibration_ns_ = now_ns;
  }
}

Status SystemStreamSink::Finish() {
  if (block_ != nullptr) {
    stream_->ring().Seal(block_);
    block_ = nullptr;
  }
  STEPSCOPE_RETURN_IF_ERROR(stream_->FlushSealed().status());
  STEPSCOPE_RETURN_IF_ERROR(stream_->AppendClockPair(ReadClockPair()));
  std::string stats = "{\"events_recorded\":" + std::to_string(samples_written_) +
                      ",\"events_dropped\":" + std::to_string(samples_dropped_) +
                      ",\"events_dropped_write_failed\":" + std::to_string(samples_dropped_write_failed_) + "}";
  return stream_->AppendStats(stats);
}

}  // namespace stepscope::launcher
