// The vocabulary shared by stepscope's runs and the rules (shared/RULES.md §0): which SageMaker
// series key a stepscope metric name stands for, and which phase an event name belongs to.
//
// Callers: the stepscope loader (stepscope_loader.h) when it fills the model, and anything that
// prints a series under stepscope's own metric name (reports, exports). Pure functions over
// strings; thread-safe.
//
// Metric names (docs/formats.md "System metric names") that SageMaker also records map onto its
// (type, name, dimension) keys, so a rule reads "cpu"/"cpu3"/"CPUUtilization" whatever recorded
// it. Every other metric (cpu/total/*, user/system split, GPU power/temperature/clock, process/*,
// byte counts) is kept, under type "stepscope" with name = the metric name and dimension "":
// never dropped, and never mistaken for a SageMaker series.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace stepscope::analysis {

// Series type of metrics that have no SageMaker counterpart.
inline constexpr std::string_view kStepscopeSeriesType = "stepscope";
// Phase of stepscope's own events (detail windows, lifecycle marks, applied control files):
// kept in the model for evidence, left out of activity totals by the rules.
inline constexpr std::string_view kStepscopePhase = "stepscope";

// CPU performance counters (sampler/perf_counter_source.h writes them; docs/formats.md):
// "perf/<scope>/<leaf>", <scope> = "total" and "cpu<N>" when the node counted per CPU, "job" when
// it counted the job's process tree. They have no SageMaker counterpart: type "stepscope".
inline constexpr std::string_view kPerfMetricPrefix = "perf/";
inline constexpr std::string_view kPerfScopeTotal = "total";
inline constexpr std::string_view kPerfScopeJob = "job";
inline constexpr std::string_view kPerfIpc = "ipc";                    // instructions per cycle
inline constexpr std::string_view kPerfInstructionsPerS = "instructions_per_s";
inline constexpr std::string_view kPerfCyclesPerS = "cycles_per_s";
inline constexpr std::string_view kPerfCacheMissesPerS = "cache_misses_per_s";
inline constexpr std::string_view kPerfBranchMissesPerS = "branch_misses_per_s";
inline constexpr std::string_view kPerfContextSwitchesPerS = "context_switches_per_s";
inline constexpr std::string_view kPerfPageFaultsPerS = "page_faults_per_s";
inline constexpr std::string_view kPerfCpuMigrationsPerS = "cpu_migrations_per_s";
inline constexpr std::string_view kPerfTaskClockPct = "task_clock_pct";  // job scope: % of one core

// "perf/cpu3/ipc" -> {"cpu3", "ipc"}; empty views when `metric` is not "perf/<scope>/<leaf>".
struct PerfMetricParts {
  std::string_view scope;
  std::string_view leaf;
};
PerfMetricParts SplitPerfMetric(std::string_view metric);

struct SeriesKey {
  std::string type;       // "cpu", "gpu", "memory", "i/o", "network", or "stepscope"
  std::string name;       // "cpu3", "MemoryUsedPercent", ...; the metric name for "stepscope"
  std::string dimension;  // "CPUUtilization", "Algorithm", ... or ""

  bool operator==(const SeriesKey&) const = default;
};

// "cpu/cpu3/util_pct" -> {"cpu", "cpu3", "CPUUtilization"}; "process/rss_bytes" ->
// {"stepscope", "process/rss_bytes", ""}.
SeriesKey SeriesKeyForMetric(std::string_view metric);

// The inverse: the stepscope metric name a series key stands for; "" when stepscope never writes
// that key (for example a SageMaker-only series of an imported run).
std::string MetricForSeriesKey(std::string_view type, std::string_view name, std::string_view dimension);

// "cpu12" -> 12 for prefix "cpu"; -1 when `name` is not the prefix followed by at most six
// digits ("cpu", "cpux", "total"). Device series are named so in the store and in SageMaker data.
int DeviceIndex(std::string_view name, std::string_view prefix);

// A GPU metric's parts: "gpu/gpu3/throttle_power_cap" -> {3, -1, "throttle_power_cap"};
// "gpu/gpu0/pid4242/sm_util_pct" -> {0, 4242, "sm_util_pct"}. gpu is -1 when `metric` is not a
// GPU metric in those two shapes. The views point into `metric`.
struct GpuMetricParts {
  int gpu = -1;
  int64_t pid = -1;  // the process of a per-process metric, else -1
  std::string_view leaf;
};
GpuMetricParts ParseGpuMetric(std::string_view metric);

// A GPU clock throttle (clock event) reason as the NVML source records it: the series
// gpu/gpuN/throttle_<leaf> is 1 while the reason holds the clocks down, 0 otherwise
// (docs/formats.md; the sampler's kThrottleReasons maps NVML's bits onto the same leaves).
struct GpuThrottleReason {
  std::string_view leaf;      // "power_cap"
  std::string_view label;     // "power cap", for sentences
  bool slowdown;              // false for idle: clocks down because there is no work
  bool hardware;              // a protective hardware slowdown (HW slowdown, HW thermal, power brake)
};
// Every reason, in the sampler's order; nullptr from FindGpuThrottleReason for an unknown leaf
// (given with or without the "throttle_" prefix).
std::span<const GpuThrottleReason> GpuThrottleReasons();
const GpuThrottleReason* FindGpuThrottleReason(std::string_view leaf);

// Whether an event name is one stepscope records about itself: DetailWindow:<kind>,
// DetailWindowStop, DetailWindowWrite, Lifecycle:*, Control.
bool IsStepscopeOwnEventName(std::string_view name);

// The phase of a recorded span, instant or counter: kStepscopePhase for stepscope's own events;
// the name itself otherwise (Forward, Backward, OptimizerStep, DataLoaderIter, DataLoaderWorker,
// DataLoaderIterInitialize and user annotations are their own phases, as SageMaker's are). Steps
// are already named "Step:ModeKeys.<PHASE>" by the store and keep that name as their phase.
std::string_view PhaseForEventName(std::string_view name);

}  // namespace stepscope::analysis
