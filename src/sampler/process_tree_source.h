// CPU and memory of the training job's process tree (a root pid and all its descendants: the
// launcher, the training processes, DataLoader workers), from /proc/<pid>/stat:
//   process/cpu_pct    CPU time of the tree over the interval, in % of one core (400 = four
//                      cores busy); from the second poll on
//   process/rss_bytes  resident memory summed over the tree
//   process/count      processes in the tree (0 once the root has exited)
//
// Cost. Listing the proc root and reading a /proc/<pid>/stat are each expensive for the
// kernel (~200 us and ~15-25 us right after the sampler wakes up on a small VM), and reading
// every process on the host every 100 ms would alone break the sampler's budget (SPEC §6:
// 0.5 % of one core). So each poll re-reads only the tree's members; the proc root is listed
// at most every kListingPeriodNs (every poll at the default 500 ms interval) to find new pids,
// and only those are read. A pid known to be outside the tree stays outside (processes join a
// tree only by fork, and a fork makes a new pid) and is not read again, except by a full scan
// every kFullScanPeriodNs that catches an outside pid recycled for a new process of the job.
//
// CPU accounting. A member read at the last poll (same pid AND start time, so a recycled pid
// is a new process) contributes its utime+stime delta. A member without such a reading (born
// since, or found late by a listing or full scan) contributes its CPU time scaled by
// min(1, interval / its age), its age coming from /proc/uptime: all of it if it was born
// during the interval, otherwise its average rate since birth, so a late find neither loses
// the process nor makes a spike. A process that exited between polls takes its last partial
// interval with it. The root is identified by its start time at the first poll that finds it,
// so a recycled root pid is not mistaken for the job.
//
// Threading: called from the SystemSampler's thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/file_system.h"
#include "platform/linux/host_constants.h"
#include "platform/linux/pid_stat_parser.h"
#include "sampler/metric_source.h"

namespace stepscope {

class ProcessTreeSource : public MetricSource {
 public:
  // How often the proc root is listed for new pids, and how often every pid is read (above).
  static constexpr uint64_t kListingPeriodNs = 400'000'000;
  static constexpr uint64_t kFullScanPeriodNs = 10'000'000'000;

  // `fs` must outlive the source. `root_pid` > 0 is the job's top process. `host` gives the
  // units of /proc/<pid>/stat (HostConstants::FromSysconf() outside tests).
  ProcessTreeSource(const FileSystem& fs, int32_t root_pid, HostConstants host,
                    std::string proc_root = "/proc");

  std::string_view name() const override { return "process_tree"; }
  // A process whose stat cannot be read is skipped (it exited after the listing). A stat text
  // that does not parse, or an unreadable /proc/uptime, is skipped too, and the first such
  // problem is returned after the samples are appended, so the metrics survive one odd file.
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

  // Whether `pid` was in the job's tree at the last poll. For sources polled after this one on
  // the same sampler thread (NvmlGpuSource keeps per-process GPU metrics of these pids only).
  bool IsMember(int32_t pid) const;

 private:
  // What the source knows about a pid from the listings and its last reading.
  struct Known {
    uint64_t start_time_ticks = 0;  // at the last reading
    uint64_t cpu_ticks = 0;         // utime + stime at the last reading
    bool member = false;            // in the tree at the last reading; outsiders are not re-read
    uint64_t listing = 0;           // the last listing that contained the pid
    uint64_t read_in_poll = 0;      // the last poll that read it
  };

  // Appends the stat of `pid` to processes_, or notes why not.
  void ReadPid(std::string_view pid, Status& first_problem);
  // CPU ticks of members without a reading at the previous poll, scaled by their age.
  uint64_t EstimateUnbaselinedTicks(const std::vector<const PidStat*>& processes,
                                    uint64_t interval_ns, Status& first_problem);

  const FileSystem& fs_;
  const int32_t root_pid_;
  const HostConstants host_;
  const std::string proc_root_;
  std::optional<uint64_t> root_start_time_ticks_;  // fixed at the first poll that finds the root
  uint64_t polls_ = 0;
  uint64_t listings_ = 0;
  uint64_t previous_ns_ = 0;
  uint64_t last_listing_ns_ = 0;
  uint64_t last_full_scan_ns_ = 0;
  std::unordered_map<int32_t, Known> known_;
  // Reused every poll to keep their capacity.
  std::vector<PidStat> processes_;
  std::vector<int32_t> to_read_;
  std::string path_;
};

}  // namespace stepscope
