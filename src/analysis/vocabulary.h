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

#include <string>
#include <string_view>

namespace stepscope::analysis {

// Series type of metrics that have no SageMaker counterpart.
inline constexpr std::string_view kStepscopeSeriesType = "stepscope";
// Phase of stepscope's own events (detail windows, lifecycle marks, applied control files):
// kept in the model for evidence, left out of activity totals by the rules.
inline constexpr std::string_view kStepscopePhase = "stepscope";

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

// Whether an event name is one stepscope records about itself: DetailWindow:<kind>,
// DetailWindowStop, DetailWindowWrite, Lifecycle:*, Control.
bool IsStepscopeOwnEventName(std::string_view name);

// The phase of a recorded span, instant or counter: kStepscopePhase for stepscope's own events;
// the name itself otherwise (Forward, Backward, OptimizerStep, DataLoaderIter, DataLoaderWorker,
// DataLoaderIterInitialize and user annotations are their own phases, as SageMaker's are). Steps
// are already named "Step:ModeKeys.<PHASE>" by the store and keep that name as their phase.
std::string_view PhaseForEventName(std::string_view name);

}  // namespace stepscope::analysis
