// Writes the system sampler's polls into the node's "system" stream, so system samples use the
// same crash-safe, compact store (and the same tick clock) as framework events.
//
// Callers: the run command creates it and hands it to the SystemSampler. Threading: the
// sampler thread calls WriteSamples; Finish is called after the sampler stopped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "sampler/metric_source.h"
#include "store/stream_writer.h"

namespace stepscope::launcher {

class SystemStreamSink : public SampleSink {
 public:
  // Creates <node_dir>/system.{ring,log}.
  static StatusOr<std::unique_ptr<SystemStreamSink>> Create(const std::string& node_dir, const std::string& meta_json,
                                                            const ClockPair& clock_anchor);

  void WriteSamples(uint64_t ticks, const std::vector<MetricSample>& samples) override;

  // Compresses whatever is left into the log and writes final stats.
  Status Finish();

  uint64_t samples_written() const { return samples_written_; }
  uint64_t samples_dropped() const { return samples_dropped_; }  // all causes
  // The part of samples_dropped() lost because the log could not be written (disk full).
  uint64_t samples_dropped_write_failed() const { return samples_dropped_write_failed_; }

 private:
  explicit SystemStreamSink(std::unique_ptr<store::StreamWriter> stream) : stream_(std::move(stream)) {}
  uint32_t MetricId(const std::string& name);
  bool EnsureBlock();

  std::unique_ptr<store::StreamWriter> stream_;
  std::unordered_map<std::string, uint32_t> metric_ids_;
  store::BlockHeader* block_ = nullptr;
  uint64_t samples_written_ = 0;
  uint64_t samples_dropped_ = 0;
  uint64_t samples_dropped_write_failed_ = 0;
  uint64_t last_calibration_ns_ = 0;
  bool reported_error_ = false;
  // The last flush failed: the ring fills because nothing can leave it.
  bool log_write_failing_ = false;
};

}  // namespace stepscope::launcher
