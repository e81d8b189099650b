// CPU performance counters as system metrics: the deltas of a PerfCounterSet
// (platform/perf/perf_counter_set.h) between two polls, as per-second rates. Metrics (see
// metric_source.h and docs/formats.md), for <scope> = cpu0, cpu1, ... and total when the set
// counts per CPU, job when it counts the job's process tree:
//   perf/<scope>/cycles_per_s            CPU cycles per second
//   perf/<scope>/instructions_per_s      instructions retired per second
//   perf/<scope>/ipc                     instructions per cycle over the interval
//   perf/<scope>/cache_misses_per_s      last-level cache misses per second
//   perf/<scope>/branch_misses_per_s     mispredicted branches per second
//   perf/<scope>/context_switches_per_s
//   perf/<scope>/page_faults_per_s
//   perf/<scope>/cpu_migrations_per_s
//   perf/job/task_clock_pct              CPU time of the job's processes, % of one core (job
//                                        scope only: per CPU, task-clock is wall time)
// Only the events the set counts appear. A multiplexed counter (the kernel ran it for part of
// the interval) is scaled by time_enabled / time_running of the interval; one that did not run
// at all while enabled, that went backwards or whose read failed yields nothing this interval,
// and then neither does the node total (`total`) of that event. The first poll yields nothing.
//
// Cost: one read(2) per event and CPU per poll; no allocation after the first poll.
//
// Threading: called from the SystemSampler's thread only. The set's descriptors are closed when
// the source is destroyed (after the sampler stopped).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/perf/perf_counter_set.h"
#include "sampler/metric_source.h"

namespace stepscope {

class PerfCounterSource : public MetricSource {
 public:
  explicit PerfCounterSource(PerfCounterSet set);

  std::string_view name() const override { return "perf"; }
  Status Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) override;

 private:
  // The metrics of one scope (a CPU, the node total or the job), names built once.
  enum Metric : uint8_t {
    kCyclesPerS,
    kInstructionsPerS,
    kIpc,
    kCacheMissesPerS,
    kBranchMissesPerS,
    kTaskClockPct,
    kContextSwitchesPerS,
    kPageFaultsPerS,
    kCpuMigrationsPerS,
    kMetricCount,
  };
  using Names = std::array<std::string, kMetricCount>;
  static Names NamesFor(std::string_view scope);
  // Appends the samples of one scope from its events' deltas (negative: none this interval).
  void Emit(const Names& names, const std::array<double, kPerfEventCount>& deltas, double seconds,
            std::vector<MetricSample>& out) const;

  PerfCounterSet set_;
  std::vector<Names> names_;  // one per slot, then the node total when per CPU
  std::vector<PerfCounterValue> previous_, current_;
  bool has_previous_ = false;
  uint64_t previous_ns_ = 0;
};

}  // namespace stepscope
