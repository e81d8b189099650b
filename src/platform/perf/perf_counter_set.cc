#include "platform/perf/perf_counter_set.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace stepscope {
namespace {

constexpr std::array<PerfEventInfo, kPerfEventCount> kCatalogue = {{
    {PerfEvent::kCycles, "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true, false},
    {PerfEvent::kInstructions, "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true, false},
    {PerfEvent::kCacheMisses, "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true, false},
    {PerfEvent::kBranchMisses, "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true, false},
    {PerfEvent::kTaskClock, "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false, false},
    // The scheduler counts these in kernel mode only: with exclude_kernel they would read 0.
    {PerfEvent::kContextSwitches, "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false, true},
    {PerfEvent::kPageFaults, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false, false},
    {PerfEvent::kCpuMigrations, "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false, true},
}};

bool IsDenied(int error) { return error == EACCES || error == EPERM; }

}  // namespace

const std::array<PerfEventInfo, kPerfEventCount>& PerfEventCatalogue() { return kCatalogue; }

const PerfEventInfo& PerfEventInfoOf(PerfEvent event) { return kCatalogue[static_cast<size_t>(event)]; }

const char* PerfScopeName(PerfScope scope) {
  switch (scope) {
    case PerfScope::kPerCpu:
      return "per_cpu";
    case PerfScope::kJob:
      return "job";
    case PerfScope::kNone:
      break;
  }
  return "none";
}

std::string PerfOpenErrorReason(int error, std::optional<int> paranoid_level, PerfScope scope) {
  const std::string paranoid =
      "kernel.perf_event_paranoid=" + (paranoid_level ? std::to_string(*paranoid_level) : std::string("unknown"));
  switch (error) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return "not supported: this CPU or hypervisor exposes no such counter (a VM without a virtual PMU; "
             "enable the vPMU in the hypervisor or use a bare-metal machine to see it)";
    case EINVAL:
      return "not supported by this kernel (perf_event_open: invalid argument)";
    case EACCES:
    case EPERM:
      if (scope == PerfScope::kPerCpu) {
        return "not permitted per CPU (" + paranoid +
               "; counting a whole CPU needs 0 or less, root or CAP_PERFMON): run stepscope as root, give it "
               "CAP_PERFMON, or `sysctl kernel.perf_event_paranoid=0`";
      }
      return "not permitted (" + paranoid +
             "): run stepscope as root, give it CAP_PERFMON, or `sysctl kernel.perf_event_paranoid=1`";
    case EMFILE:
    case ENFILE:
      return "too many open files (one descriptor per event and CPU): raise the limit with `ulimit -n`";
    case EBUSY:
      return "busy: another tool holds the performance monitoring unit exclusively";
    case ESRCH:
      return "the job's process had already exited";
    default:
      break;
  }
  return std::string("perf_event_open failed: ") + std::strerror(error) + " (errno " + std::to_string(error) + ")";
}

PerfCounterSet::~PerfCounterSet() { Close(); }

PerfCounterSet::PerfCounterSet(PerfCounterSet&& other) noexcept
    : api_(other.api_),
      scope_(other.scope_),
      cpus_(std::move(other.cpus_)),
      job_pid_(other.job_pid_),
      statuses_(std::move(other.statuses_)),
      fds_(std::move(other.fds_)) {
  other.fds_.clear();
}

PerfCounterSet& PerfCounterSet::operator=(PerfCounterSet&& other) noexcept {
  if (this != &other) {
    Close();
    api_ = other.api_;
    scope_ = other.scope_;
    cpus_ = std::move(other.cpus_);
    job_pid_ = other.job_pid_;
    statuses_ = std::move(other.statuses_);
    fds_ = std::move(other.fds_);
    other.fds_.clear();
  }
  return *this;
}

PerfCounterSet PerfCounterSet::Open(PerfEventApi& api, const PerfCounterOptions& options) {
  PerfCounterSet set;
  set.api_ = &api;
  // Opens every event of the catalogue in `scope` over `slots` targets; false when none opened.
  auto open_all = [&](PerfScope scope) {
    set.Close();
    set.scope_ = scope;
    set.cpus_ = scope == PerfScope::kPerCpu ? options.cpus : std::vector<int32_t>();
    set.job_pid_ = scope == PerfScope::kJob ? options.job_pid : 0;
    const size_t slots = set.slots();
    set.fds_.assign(kPerfEventCount * slots, -1);
    set.statuses_.clear();
    for (const PerfEventInfo& info : kCatalogue) {
      PerfEventStatus status;
      status.event = info.event;
      int* fds = set.fds_.data() + static_cast<size_t>(info.event) * slots;
      if (scope == PerfScope::kPerCpu && info.event == PerfEvent::kTaskClock) {
        status.reason =
            "not opened per CPU: there it counts wall time, not busy time (cpu/<core>/util_pct has each core's "
            "busy share)";
        set.statuses_.push_back(std::move(status));
        continue;
      }
      // Every slot or none: an event missing on one CPU would make its node total wrong.
      auto try_open = [&](bool exclude_kernel) {
        for (size_t slot = 0; slot < slots; ++slot) {
          PerfEventRequest request;
          request.type = info.type;
          request.config = info.config;
          request.pid = scope == PerfScope::kPerCpu ? -1 : options.job_pid;
          request.cpu = scope == PerfScope::kPerCpu ? set.cpus_[slot] : -1;
          request.inherit = scope == PerfScope::kJob;
          request.exclude_kernel = exclude_kernel;
          const int fd = api.Open(request);
          if (fd >= 0) {
            fds[slot] = fd;
            continue;
          }
          for (size_t opened = 0; opened < slot; ++opened) {
            api.Close(fds[opened]);
            fds[opened] = -1;
          }
          return -fd;
        }
        return 0;
      };
      int error = try_open(false);
      // Paranoid 2 lets an unprivileged user count its own processes in user space only.
      if (IsDenied(error) && scope == PerfScope::kJob && !info.kernel_only) {
        if (try_open(true) == 0) {
          error = 0;
          status.user_only = true;
        }
      }
      status.counted = error == 0;
      status.error = error;
      if (error != 0) {
        status.reason = PerfOpenErrorReason(error, options.paranoid_level, scope);
        if (IsDenied(error) && scope == PerfScope::kJob && info.kernel_only) {
          status.reason += "; the kernel counts " + std::string(info.name) + " in kernel mode only";
        }
      }
      set.statuses_.push_back(std::move(status));
    }
    return set.any_counted();
  };

  const bool may_per_cpu = options.scope != PerfCounterOptions::Scope::kJob && !options.cpus.empty();
  const bool may_job = options.scope != PerfCounterOptions::Scope::kPerCpu && options.job_pid > 0;
  if (may_per_cpu) {
    if (open_all(PerfScope::kPerCpu)) return set;
    const bool denied = std::any_of(set.statuses_.begin(), set.statuses_.end(),
                                    [](const PerfEventStatus& status) { return IsDenied(status.error); });
    // Per CPU not permitted: the job's own processes may still be.
    if (!(may_job && denied)) {
      set.scope_ = PerfScope::kNone;
      set.cpus_.clear();
      set.fds_.clear();
      return set;
    }
  }
  if (may_job && open_all(PerfScope::kJob)) return set;
  if (!may_per_cpu && !may_job) {
    set.statuses_.clear();
    for (const PerfEventInfo& info : kCatalogue) {
      set.statuses_.push_back({info.event, false, false, 0, "not opened: no CPU and no job process to count"});
    }
  }
  set.scope_ = PerfScope::kNone;
  set.cpus_.clear();
  set.job_pid_ = 0;
  set.fds_.clear();
  return set;
}

bool PerfCounterSet::any_counted() const {
  return std::any_of(statuses_.begin(), statuses_.end(), [](const PerfEventStatus& status) { return status.counted; });
}

void PerfCounterSet::Read(std::vector<PerfCounterValue>& values) {
  const size_t slots = this->slots();
  values.assign(kPerfEventCount * slots, PerfCounterValue{});
  if (fds_.size() != values.size()) return;  // closed
  for (size_t i = 0; i < fds_.size(); ++i) {
    if (fds_[i] < 0) continue;
    values[i].valid = api_->Read(fds_[i], values[i].reading) == 0;
  }
}

void PerfCounterSet::Close() {
  for (int& fd : fds_) {
    if (fd >= 0) api_->Close(fd);
    fd = -1;
  }
  fds_.clear();
}

std::string PerfCounterSet::Summary() const {
  std::string counted;
  bool user_only = false;
  for (const PerfEventStatus& status : statuses_) {
    if (!status.counted) continue;
    counted += (counted.empty() ? "" : ", ") + std::string(PerfEventInfoOf(status.event).name);
    user_only = user_only || status.user_only;
  }
  std::string summary;
  if (!counted.empty()) {
    summary = (scope_ == PerfScope::kPerCpu ? "per CPU: " : "the job's processes") +
              std::string(scope_ == PerfScope::kJob ? (user_only ? " (user space only): " : ": ") : "") + counted;
  }
  // The events not counted, grouped by reason in catalogue order.
  std::vector<std::pair<std::string, std::string>> groups;  // reason, events
  for (const PerfEventStatus& status : statuses_) {
    if (status.counted) continue;
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == status.reason; });
    if (group == groups.end()) {
      groups.emplace_back(status.reason, std::string(PerfEventInfoOf(status.event).name));
    } else {
      group->second += ", " + std::string(PerfEventInfoOf(status.event).name);
    }
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    summary += (i == 0 ? (summary.empty() ? "not counted: " : "; not counted: ") : "; ") + groups[i].second + " (" +
               groups[i].first + ")";
  }
  return summary;
}

StatusOr<std::vector<int32_t>> ParseCpuList(std::string_view text) {
  constexpr int32_t kMaxCpus = 1 << 16;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int32_t> cpus;
  if (text.empty()) return InvalidArgumentError("empty CPU list");
  auto bad = [&] { return InvalidArgumentError("not a CPU list: '" + std::string(text.substr(0, 64)) + "'"); };
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view range = text.substr(start, end - start);
    const size_t dash = range.find('-');
    int32_t first = 0, last = 0;
    auto number = [](std::string_view digits, int32_t& value) {
      if (digits.empty()) return false;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      return ec == std::errc() && ptr == digits.data() + digits.size() && value >= 0 && value < kMaxCpus;
    };
    if (dash == std::string_view::npos) {
      if (!number(range, first)) return bad();
      last = first;
    } else if (!number(range.substr(0, dash), first) || !number(range.substr(dash + 1), last) || last < first) {
      return bad();
    }
    if (cpus.size() + static_cast<size_t>(last - first) + 1 > static_cast<size_t>(kMaxCpus)) return bad();
    for (int32_t cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    start = end + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int32_t> OnlineCpus(const FileSystem& fs, const std::string& sys_root) {
  if (StatusOr<std::string> text = fs.ReadFile(sys_root + "/devices/system/cpu/online"); text.ok()) {
    if (StatusOr<std::vector<int32_t>> cpus = ParseCpuList(*text); cpus.ok()) return std::move(*cpus);
  }
  std::vector<int32_t> cpus;
  const long count = sysconf(_SC_NPROCESSORS_ONLN);
  for (int32_t cpu = 0; cpu < static_cast<int32_t>(std::max(count, 1L)); ++cpu) cpus.push_back(cpu);
  return cpus;
}

std::optional<int> ReadPerfParanoidLevel(const FileSystem& fs, const std::string& proc_root) {
  StatusOr<std::string> text = fs.ReadFile(proc_root + "/sys/kernel/perf_event_paranoid");
  if (!text.ok()) return std::nullopt;
  std::string_view digits = *text;
  while (!digits.empty() && (digits.back() == '\n' || digits.back() == ' ')) digits.remove_suffix(1);
  int level = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), level);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  return level;
}

}  // namespace stepscope
