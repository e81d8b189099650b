// Host-wide disk throughput and IOPS from /proc/diskstats deltas over the elapsed poll time:
//   disk/read_bytes_per_s  disk/write_bytes_per_s  disk/read_iops  disk/write_iops  disk/iops
// summed over the physical devices the parser keeps (platform/linux/diskstats_parser.h says
// which and why). The first poll yields nothing; a device that disappeared yields nothing that
// poll; a counter that went backwards yields nothing for the metrics it feeds that poll
// (sampler/keyed_counters.h).
//
// Threading: called from the SystemSampler's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "sampler/keyed_counters.h"
#include "sampler/metric_source.h"

namespace stepscope {

class DiskSource : public MetricSource {
 public:
  // `fs` must outlive the source. Reads `proc_root`/diskstats.
  explicit DiskSource(const FileSystem& fs, std::string proc_root = "/proc");

  std::string_view name() const override { return "disk"; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

 private:
  enum Counter : size_t { kReads, kSectorsRead, kWrites, kSectorsWritten, kCounterCount };

  const FileSystem& fs_;
  std::string diskstats_path_;
  KeyedCounters<kCounterCount> counters_;
  uint64_t previous_ns_ = 0;
};

}  // namespace stepscope
