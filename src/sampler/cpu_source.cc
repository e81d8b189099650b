#include "sampler/cpu_source.h"

#include <utility>

namespace stepscope {

CpuSource::CpuSource(const FileSystem& fs, std::string proc_root)
    : fs_(fs), stat_path_(std::move(proc_root) + "/stat") {
  InitNames("total", total_);
}

void CpuSource::InitNames(std::string_view label, CoreState& state) {
  std::string prefix = "cpu/" + std::string(label) + "/";
  state.user_name = prefix + "user_pct";
  state.system_name = prefix + "system_pct";
  state.util_name = prefix + "util_pct";
  state.iowait_name = prefix + "iowait_pct";
}

void CpuSource::Emit(const CpuJiffies& current, CoreState& state, std::vector<MetricSample>& out) {
  const CpuJiffies previous = state.previous;
  bool had_previous = state.seen;
  state.previous = current;
  state.seen = true;
  if (!had_previous) return;
  // Any column going backwards (a kernel accounting quirk seen with iowait on NO_HZ kernels,
  // or a core replaced by hotplug) makes every share of this interval untrustworthy.
  if (current.user < previous.user || current.nice < previous.nice ||
      current.system < previous.system || current.idle < previous.idle ||
      current.iowait < previous.iowait || current.irq < previous.irq ||
      current.softirq < previous.softirq || current.steal < previous.steal) {
    return;
  }
  uint64_t total = current.Total() - previous.Total();
  if (total == 0) return;  // polled twice within one jiffy
  const double scale = 100.0 / static_cast<double>(total);
  auto share = [&](uint64_t delta) { return static_cast<double>(delta) * scale; };
  uint64_t user = (current.user - previous.user) + (current.nice - previous.nice);
  uint64_t system = (current.system - previous.system) + (current.irq - previous.irq) +
                    (current.softirq - previous.softirq);
  uint64_t iowait = current.iowait - previous.iowait;
  uint64_t not_busy = (current.idle - previous.idle) + iowait;
  out.push_back({state.user_name, share(user)});
  out.push_back({state.system_name, share(system)});
  out.push_back({state.util_name, share(total - not_busy)});
  out.push_back({state.iowait_name, share(iowait)});
}

Status CpuSource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, fs_.ReadFile(stat_path_));
  STEPSCOPE_ASSIGN_OR_RETURN(ProcStat stat, ParseProcStat(text));
  Emit(stat.total, total_, out);

  std::vector<bool> present(cores_.size(), false);
  for (const CoreJiffies& core : stat.cores) {
    if (core.core >= cores_.size()) {
      // Hostile text could claim cpu4000000000; a real index is below the kernel's NR_CPUS.
      constexpr uint32_t kMaxCores = 1u << 16;
      if (core.core >= kMaxCores) {
        return DataLossError(stat_path_ + ": implausible core 'cpu" + std::to_string(core.core) +
                             "'");
      }
      size_t old_size = cores_.size();
      cores_.resize(core.core + 1);
      present.resize(core.core + 1, false);
      for (size_t i = old_size; i < cores_.size(); ++i) {
        InitNames("cpu" + std::to_string(i), cores_[i]);
      }
    }
    present[core.core] = true;
    Emit(core.jiffies, cores_[core.core], out);
  }
  // A core that went offline starts over when it returns: its baseline is from before the gap.
  for (size_t i = 0; i < cores_.size(); ++i) {
    if (!present[i]) cores_[i].seen = false;
  }
  return OkStatus();
}

}  // namespace stepscope
