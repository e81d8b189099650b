#include "sampler/disk_source.h"

#include <utility>

#include "platform/linux/diskstats_parser.h"

namespace stepscope {

DiskSource::DiskSource(const FileSystem& fs, std::string proc_root)
    : fs_(fs), diskstats_path_(std::move(proc_root) + "/diskstats") {}

Status DiskSource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, fs_.ReadFile(diskstats_path_));
  STEPSCOPE_ASSIGN_OR_RETURN(DiskStats stats, ParseDiskstats(text));
  std::vector<KeyedCounters<kCounterCount>::Row> rows;
  rows.reserve(stats.devices.size());
  for (DiskDeviceStats& device : stats.devices) {
    rows.push_back({std::move(device.name),
                    {device.reads_completed, device.sectors_read, device.writes_completed,
                     device.sectors_written}});
  }
  uint64_t previous_ns = previous_ns_;
  previous_ns_ = monotonic_ns;
  std::optional<KeyedCounters<kCounterCount>::Sums> sums = counters_.Update(std::move(rows));
  if (!sums || monotonic_ns <= previous_ns) return OkStatus();

  const double seconds = static_cast<double>(monotonic_ns - previous_ns) / 1e9;
  const auto& s = *sums;
  if (s[kSectorsRead]) {
    out.push_back({"disk/read_bytes_per_s",
                   static_cast<double>(*s[kSectorsRead]) * kDiskstatsSectorBytes / seconds});
  }
  if (s[kSectorsWritten]) {
    out.push_back({"disk/write_bytes_per_s",
                   static_cast<double>(*s[kSectorsWritten]) * kDiskstatsSectorBytes / seconds});
  }
  if (s[kReads]) out.push_back({"disk/read_iops", static_cast<double>(*s[kReads]) / seconds});
  if (s[kWrites]) out.push_back({"disk/write_iops", static_cast<double>(*s[kWrites]) / seconds});
  if (s[kReads] && s[kWrites]) {
    out.push_back({"disk/iops",
                   (static_cast<double>(*s[kReads]) + static_cast<double>(*s[kWrites])) / seconds});
  }
  return OkStatus();
}

}  // namespace stepscope
