// CPU performance counters of a node, opened once for a whole run: which events are counted,
// on whom, and why the others are not (the manifest's `capabilities.perf_counters`).
//
// Events, each opened on its own (no group: one the machine lacks never takes the others
// down): hardware cycles, instructions, cache-misses, branch-misses; software task-clock,
// context-switches, page-faults, cpu-migrations. In a VM without a virtual PMU the hardware
// ones fail with ENOENT/EOPNOTSUPP and the software ones still count.
//
// Scope, decided once by Open():
//   per CPU  (pid = -1, cpu = N for every online CPU): everything the node runs, the job and
//            whatever competes with it. Needs kernel.perf_event_paranoid <= 0, root or
//            CAP_PERFMON. task-clock is not opened per CPU: there it only measures wall time
//            (cpu/<core>/util_pct already has the busy share).
//   job      (pid = the job's root process, cpu = -1, inherit): the job's process tree, its
//            DataLoader workers included as long as they are forked after Open() (the launcher
//            opens right after starting the job, before its Python even imports torch).
//            Chosen when per-CPU counting is not permitted and a job pid is given. Under
//            paranoid 2 only user space may be counted: events that exist in user space are
//            reopened that way (`user_only`), the kernel-only ones (context-switches,
//            cpu-migrations) are absent with the reason.
// An event that fails on one CPU is closed on all (a partial sum would be wrong) and absent.
//
// Threading: Open() from any thread; Read() from one thread at a time (the sampler's). Closing
// (Close() or the destructor) must not race with Read().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_system.h"
#include "base/status.h"
#include "platform/perf/perf_event_api.h"

namespace stepscope {

enum class PerfEvent : uint8_t {
  kCycles,
  kInstructions,
  kCacheMisses,
  kBranchMisses,
  kTaskClock,
  kContextSwitches,
  kPageFaults,
  kCpuMigrations,
};
inline constexpr size_t kPerfEventCount = 8;

struct PerfEventInfo {
  PerfEvent event;
  std::string_view name;  // perf's name: "cycles", "context-switches", ...
  uint32_t type;          // PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE
  uint64_t config;
  bool hardware;
  bool kernel_only;  // only ever counted in kernel mode (a user-space-only count would be 0)
};
// In PerfEvent order.
const std::array<PerfEventInfo, kPerfEventCount>& PerfEventCatalogue();
const PerfEventInfo& PerfEventInfoOf(PerfEvent event);

enum class PerfScope : uint8_t { kNone, kPerCpu, kJob };
const char* PerfScopeName(PerfScope scope);  // "none", "per_cpu", "job"

// What Open() made of one event.
struct PerfEventStatus {
  PerfEvent event;
  bool counted = false;
  bool user_only = false;  // counted with exclude_kernel (paranoid 2): user space only
  int error = 0;           // errno of the failure that decided it, 0 when counted
  std::string reason;      // not counted: why, and what to do; "" when counted
};

struct PerfCounterOptions {
  enum class Scope : uint8_t { kAuto, kPerCpu, kJob };
  Scope scope = Scope::kAuto;
  std::vector<int32_t> cpus;  // online CPUs for per-CPU counting (OnlineCpus())
  int32_t job_pid = 0;        // > 0: the process tree counted when per CPU is not permitted
  std::optional<int> paranoid_level;  // kernel.perf_event_paranoid, for the reasons
};

// One counter of the set, read at one moment: `valid` false when its read failed.
struct PerfCounterValue {
  PerfEventReading reading;
  bool valid = false;
};

class PerfCounterSet {
 public:
  // Opens what the machine allows; never fails: an event that cannot be opened is absent with
  // its reason. `api` must outlive the set.
  static PerfCounterSet Open(PerfEventApi& api, const PerfCounterOptions& options);

  PerfCounterSet() = default;  // nothing open, scope kNone
  ~PerfCounterSet();
  PerfCounterSet(PerfCounterSet&& other) noexcept;
  PerfCounterSet& operator=(PerfCounterSet&& other) noexcept;
  PerfCounterSet(const PerfCounterSet&) = delete;
  PerfCounterSet& operator=(const PerfCounterSet&) = delete;

  PerfScope scope() const { return scope_; }
  bool any_counted() const;
  bool counted(PerfEvent event) const { return statuses_[static_cast<size_t>(event)].counted; }
  // One per catalogue entry, in PerfEvent order.
  const std::vector<PerfEventStatus>& statuses() const { return statuses_; }
  // Per CPU: the CPUs counted, one slot each. Job: one slot, the job (cpus() empty).
  const std::vector<int32_t>& cpus() const { return cpus_; }
  size_t slots() const { return scope_ == PerfScope::kPerCpu ? cpus_.size() : (scope_ == PerfScope::kJob ? 1 : 0); }
  int32_t job_pid() const { return job_pid_; }

  // Reads every open counter into `values`, resized to kPerfEventCount * slots(), indexed
  // [event * slots() + slot]; events not counted stay invalid. A failed read (the counter's
  // task is gone in a way the kernel reports as an error) leaves that value invalid.
  void Read(std::vector<PerfCounterValue>& values);
  // Closes every descriptor; the set then counts nothing (statuses are kept). Idempotent.
  void Close();

  // One line for `stepscope info` and the report: what is counted where, and why not the rest,
  // e.g. "per CPU: context-switches, page-faults, cpu-migrations; not counted: cycles,
  // instructions, cache-misses, branch-misses (not supported: ...)".
  std::string Summary() const;

 private:
  PerfEventApi* api_ = nullptr;
  PerfScope scope_ = PerfScope::kNone;
  std::vector<int32_t> cpus_;
  int32_t job_pid_ = 0;
  std::vector<PerfEventStatus> statuses_;
  std::vector<int> fds_;  // [event * slots() + slot], -1 where not open
};

// Why perf_event_open failed with `error` (an errno), in words with what to do.
std::string PerfOpenErrorReason(int error, std::optional<int> paranoid_level, PerfScope scope);

// "0-3,6,8-9" (the format of /sys/devices/system/cpu/online) -> {0,1,2,3,6,8,9}. InvalidArgument
// on anything else; at most 1 << 16 CPUs.
StatusOr<std::vector<int32_t>> ParseCpuList(std::string_view text);
// The online CPUs from `root`/devices/system/cpu/online; {0 .. sysconf(NPROCESSORS_ONLN) - 1}
// when that cannot be read.
std::vector<int32_t> OnlineCpus(const FileSystem& fs, const std::string& sys_root = "/sys");
// kernel.perf_event_paranoid from `proc_root`/sys/kernel/perf_event_paranoid (-1 is a level:
// everything allowed); nullopt when unreadable.
std::optional<int> ReadPerfParanoidLevel(const FileSystem& fs, const std::string& proc_root = "/proc");

}  // namespace stepscope
