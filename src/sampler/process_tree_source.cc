#include "sampler/process_tree_source.h"

#include <cassert>
#include <charconv>
#include <unordered_set>
#include <utility>

#include "platform/linux/process_tree.h"
#include "platform/linux/uptime_parser.h"

namespace stepscope {
namespace {

std::optional<int32_t> ParsePid(std::string_view name) {
  int32_t pid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || end != name.data() + name.size() || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace

ProcessTreeSource::ProcessTreeSource(const FileSystem& fs, int32_t root_pid, HostConstants host,
                                     std::string proc_root)
    : fs_(fs), root_pid_(root_pid), host_(host), proc_root_(std::move(proc_root)) {
  assert(root_pid > 0);
  assert(host.clock_ticks_per_s > 0 && host.page_size_bytes > 0);
}

void ProcessTreeSource::ReadPid(std::string_view pid, Status& first_problem) {
  path_.assign(proc_root_).append("/").append(pid).append("/stat");
  StatusOr<std::string> text = fs_.ReadFile(path_);
  if (!text.ok()) return;  // exited since the listing
  StatusOr<PidStat> stat = ParsePidStat(*text);
  if (!stat.ok()) {
    if (first_problem.ok()) first_problem = stat.status().WithContext(path_);
    return;
  }
  processes_.push_back(std::move(stat).value());
}

uint64_t ProcessTreeSource::EstimateUnbaselinedTicks(const std::vector<const PidStat*>& processes,
                                                     uint64_t interval_ns, Status& first_problem) {
  if (processes.empty()) return 0;
  StatusOr<std::string> text = fs_.ReadFile(proc_root_ + "/uptime");
  StatusOr<uint64_t> uptime_ns =
      text.ok() ? ParseUptimeNs(*text) : StatusOr<uint64_t>(text.status());
  if (!uptime_ns.ok()) {
    // Without ages, counting their whole lives could make a spike: leave them out this once.
    if (first_problem.ok()) first_problem = uptime_ns.status();
    return 0;
  }
  const double ns_per_tick = 1e9 / static_cast<double>(host_.clock_ticks_per_s);
  double ticks = 0;
  for (const PidStat* process : processes) {
    double cpu_ticks = static_cast<double>(process->utime_ticks + process->stime_ticks);
    double age_ns = static_cast<double>(*uptime_ns) -
                    static_cast<double>(process->start_time_ticks) * ns_per_tick;
    // Both clocks have 10 ms steps, so a newborn may look a little older than the interval.
    ticks += age_ns <= static_cast<double>(interval_ns)
                 ? cpu_ticks
                 : cpu_ticks * static_cast<double>(interval_ns) / age_ns;
  }
  return static_cast<uint64_t>(ticks + 0.5);
}

bool ProcessTreeSource::IsMember(int32_t pid) const {
  auto known = known_.find(pid);
  return known != known_.end() && known->second.member;
}

Status ProcessTreeSource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  const bool first_poll = polls_ == 0;
  const bool full_scan = first_poll || monotonic_ns - last_full_scan_ns_ >= kFullScanPeriodNs;
  const bool list = full_scan || monotonic_ns - last_listing_ns_ >= kListingPeriodNs;
  // Counted only once the poll gets past the listing, so a failed listing leaves no trace.
  const uint64_t poll = polls_ + 1;
  Status first_problem;
  processes_.clear();

  if (list) {
    STEPSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> entries, fs_.ListDirectory(proc_root_));
    const uint64_t listing = ++listings_;
    last_listing_ns_ = monotonic_ns;
    if (full_scan) last_full_scan_ns_ = monotonic_ns;
    for (const std::string& entry : entries) {
      std::optional<int32_t> pid = ParsePid(entry);
      if (!pid) continue;
      auto known = known_.find(*pid);
      if (known != known_.end()) {
        known->second.listing = listing;
        // A known outsider stays outside (see the header); only a full scan looks again.
        if (!known->second.member && !full_scan) continue;
      }
      ReadPid(entry, first_problem);
    }
    // Forget pids the listing no longer has: they exited.
    for (auto it = known_.begin(); it != known_.end();) {
      it = it->second.listing == listing ? std::next(it) : known_.erase(it);
    }
  } else {
    to_read_.clear();
    for (const auto& [pid, known] : known_) {
      if (known.member) to_read_.push_back(pid);
    }
    for (int32_t pid : to_read_) {
      char digits[16];
      auto [end, ec] = std::to_chars(digits, digits + sizeof digits, pid);
      ReadPid(std::string_view(digits, static_cast<size_t>(end - digits)), first_problem);
    }
  }

  std::vector<PidStat> tree = BuildProcessTree(root_pid_, processes_);
  if (!tree.empty()) {
    if (!root_start_time_ticks_) root_start_time_ticks_ = tree.front().start_time_ticks;
    // The job's root exited and its pid went to an unrelated process.
    if (tree.front().start_time_ticks != *root_start_time_ticks_) tree.clear();
  }

  // Account CPU against the last readings, before known_ is updated below.
  uint64_t rss_pages = 0;
  uint64_t cpu_delta_ticks = 0;
  std::vector<const PidStat*> unbaselined;
  std::unordered_set<int32_t> in_tree;
  in_tree.reserve(tree.size());
  for (const PidStat& process : tree) {
    in_tree.insert(process.pid);
    rss_pages += process.rss_pages;
    uint64_t cpu_ticks = process.utime_ticks + process.stime_ticks;
    auto known = known_.find(process.pid);
    bool baselined = known != known_.end() && known->second.member &&
                     known->second.read_in_poll == poll - 1 &&
                     known->second.start_time_ticks == process.start_time_ticks;
    if (!baselined) {
      unbaselined.push_back(&process);
    } else if (cpu_ticks >= known->second.cpu_ticks) {
      cpu_delta_ticks += cpu_ticks - known->second.cpu_ticks;
    }
  }
  const bool has_interval = !first_poll && monotonic_ns > previous_ns_;
  if (has_interval) {
    cpu_delta_ticks +=
        EstimateUnbaselinedTicks(unbaselined, monotonic_ns - previous_ns_, first_problem);
  }

  for (const PidStat& process : processes_) {
    Known& known = known_[process.pid];
    known.start_time_ticks = process.start_time_ticks;
    known.cpu_ticks = process.utime_ticks + process.stime_ticks;
    known.member = in_tree.count(process.pid) != 0;
    known.listing = listings_;
    known.read_in_poll = poll;
  }
  if (!list) {
    // A member that could not be read has exited.
    for (int32_t pid : to_read_) {
      auto it = known_.find(pid);
      if (it != known_.end() && it->second.read_in_poll != poll) known_.erase(it);
    }
  }

  if (has_interval) {
    double cpu_seconds =
        static_cast<double>(cpu_delta_ticks) / static_cast<double>(host_.clock_ticks_per_s);
    double elapsed_seconds = static_cast<double>(monotonic_ns - previous_ns_) / 1e9;
    out.push_back({"process/cpu_pct", cpu_seconds / elapsed_seconds * 100.0});
  }
  out.push_back({"process/rss_bytes",
                 static_cast<double>(rss_pages) * static_cast<double>(host_.page_size_bytes)});
  out.push_back({"process/count", static_cast<double>(tree.size())});
  previous_ns_ = monotonic_ns;
  polls_ = poll;
  return first_problem;
}

}  // namespace stepscope
