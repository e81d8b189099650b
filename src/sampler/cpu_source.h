// CPU utilization per core and for the whole machine, from /proc/stat jiffy deltas between two
// polls. Metrics (see metric_source.h), for <core> = cpu0, cpu1, ... and total:
//   cpu/<core>/user_pct    (user + nice) share of the interval
//   cpu/<core>/system_pct  (system + irq + softirq) share
//   cpu/<core>/util_pct    busy share: 100 - (idle + iowait) share (steal counts as busy: the
//                          core was not available to us)
//   cpu/<core>/iowait_pct  iowait share
// The first poll, a core seen for the first time, a core whose counters went backwards and an
// interval with no jiffies yield nothing for that core.
//
// Threading: called from the SystemSampler's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "platform/linux/proc_stat_parser.h"
#include "sampler/metric_source.h"

namespace stepscope {

class CpuSource : public MetricSource {
 public:
  // `fs` must outlive the source. Reads `proc_root`/stat.
  explicit CpuSource(const FileSystem& fs, std::string proc_root = "/proc");

  std::string_view name() const override { return "cpu"; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

 private:
  struct CoreState {
    bool seen = false;  // has `previous` from the last poll
    CpuJiffies previous;
    // Built once: the names are the same every poll.
    std::string user_name, system_name, util_name, iowait_name;
  };
  static void InitNames(std::string_view label, CoreState& state);
  static void Emit(const CpuJiffies& current, CoreState& state, std::vector<MetricSample>& out);

  const FileSystem& fs_;
  std::string stat_path_;
  CoreState total_;
  std::vector<CoreState> cores_;  // indexed by core number
};

}  // namespace stepscope
