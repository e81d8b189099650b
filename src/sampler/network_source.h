// Host-wide network throughput from /proc/net/dev deltas over the elapsed poll time:
//   network/rx_bytes_per_s  network/tx_bytes_per_s
// summed over the interfaces the parser keeps (all but "lo" and "ifbN", see
// platform/linux/net_dev_parser.h). The file is per network namespace: the sampler sees the
// interfaces of the namespace it runs in. The first poll yields nothing; an interface that
// disappeared yields nothing that poll; a counter that went backwards (driver reload) yields
// nothing for that direction that poll (sampler/keyed_counters.h).
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

class NetworkSource : public MetricSource {
 public:
  // `fs` must outlive the source. Reads `proc_root`/net/dev.
  explicit NetworkSource(const FileSystem& fs, std::string proc_root = "/proc");

  std::string_view name() const override { return "network"; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

 private:
  enum Counter : size_t { kRxBytes, kTxBytes, kCounterCount };

  const FileSystem& fs_;
  std::string net_dev_path_;
  KeyedCounters<kCounterCount> counters_;
  uint64_t previous_ns_ = 0;
};

}  // namespace stepscope
