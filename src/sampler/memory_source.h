// Host memory from /proc/meminfo: memory/used_pct, memory/used_bytes, memory/total_bytes, where
// used = MemTotal - MemAvailable (memory the host could not hand out without swapping).
// Levels, not rates: every successful poll yields all three.
//
// Threading: called from the SystemSampler's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "sampler/metric_source.h"

namespace stepscope {

class MemorySource : public MetricSource {
 public:
  // `fs` must outlive the source. Reads `proc_root`/meminfo.
  explicit MemorySource(const FileSystem& fs, std::string proc_root = "/proc");

  std::string_view name() const override { return "memory"; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

 private:
  const FileSystem& fs_;
  std::string meminfo_path_;
};

}  // namespace stepscope
