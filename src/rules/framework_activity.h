// What the framework was doing around an instant or over an interval (shared/RULES.md §11, §12):
// the SageMaker reference's bucketing of framework events into CPU operators, GPU operators,
// step phases, forward/backward modules, general phases and Horovod operations, and the
// Details keys the reference's rules write from those buckets.
//
// Callers:
// - CPUBottleneck / IOBottleneck: the framework activity at each bottleneck instant. Keep one
//   FrameworkActivity per rule, call AddAt(model, node, anchor_ns) for every bottleneck snapshot
//   and WriteDetails(&report.details) afterwards: the reference accumulates over all instants
//   seen so far (its "buffer"), and so does this class.
// - StepOutlier: AddOver() for every outlier step found in the window.
// - OverallFrameworkMetrics: Add() for every event of every window, with the step "others" gap.
// - Evidence of any rule: Top() lists what took the time.
//
// Which events count:
// - around an instant t: events with start < t < end (strict: an event starting or ending
//   exactly at t does not span it);
// - over an interval [b, e]: events with end >= b and start <= e (closed, touching counts);
// - only spans of the given node (kAllNodes for every node), never instants or counters, never
//   stepscope's own events (phase "stepscope", analysis/vocabulary.h).
//
// Buckets (first match, on the event's phase): lower-cased phase contains "cpu" -> CPU operator
// (by name); contains "gpu" -> GPU operator (by name); contains "Step" -> step phase;
// "Forward-SubModuleInternal" / "Backward-SubModuleInternal" -> forward / backward module;
// Horovod (category "horovod" or a phase naming a Horovod operation) -> Horovod operation by
// name; anything else -> "general" time per phase.
//
// Details keys written (percentages in 0..100, totals in microseconds):
//   ratio             {cpu/gpu phase: share of CPU+GPU operator time}  (labels aligned: the
//                     reference pairs CPU labels with GPU totals, **Fixed**)
//   CPU, CPU_total    {operator: share, µs} operators > 2 % of CPU time, shares renormalised
//   GPU, GPU_total    the same for GPU operators
//   phase             {step phase (and "others"): share of step time}
//   phase_time        {} (the reference always writes it empty)
//   general           {phase: share}                       only when there is any
//   forward_backward  {"Forward pass", "Backward pass"}     only when both exist
//   horovod           {operation: share} operations > 2 %, renormalised; only when any
// An all-zero total gives shares of 0 (the reference divides by zero and stops).
//
// Threading: a FrameworkActivity is a plain value; use one per thread. Names are copied, so it
// outlives the Model it was fed from (online evaluation reloads the model every window).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "rules/rule.h"

namespace stepscope::rules {

// Node argument meaning "events of every node".
inline constexpr uint32_t kAllNodes = std::numeric_limits<uint32_t>::max();

class FrameworkActivity {
 public:
  // with_step_gap: also track the time between steps as the step phase "others" = (last step
  // end - first step start) - total step time, clamped at 0 (RULES.md §11, OverallFrameworkMetrics
  // only; the §12 aggregation never writes "others").
  explicit FrameworkActivity(bool with_step_gap = false) : with_step_gap_(with_step_gap) {}

  // Buckets one event (no node or time filter; instants, counters and stepscope's own events are
  // skipped).
  void Add(const analysis::Model& model, const analysis::FrameworkEvent& event);
  // Buckets the events of `node` (or kAllNodes) with start_ns < t_ns < end_ns.
  void AddAt(const analysis::Model& model, uint32_t node, int64_t t_ns);
  // Buckets the events of `node` (or kAllNodes) with end_ns >= begin_ns and start_ns <= end_ns.
  void AddOver(const analysis::Model& model, uint32_t node, int64_t begin_ns, int64_t end_ns);

  // Sets the keys listed above in `details` (an object), replacing earlier values of them and
  // leaving every other key alone.
  void WriteDetails(nlohmann::json* details) const;
  // The same keys as a fresh object.
  nlohmann::json ToJson() const;

  // The largest contributors outside the step phases, largest first, at most `limit`; shares
  // are of `range_ns` (the evidence's time range; 0 leaves share 0). Kinds: "operator" (CPU
  // operators, Horovod operations), "kernel" (GPU operators), "annotation" (forward/backward
  // modules), "phase" (general phases).
  std::vector<ActivityShare> Top(size_t limit, int64_t range_ns) const;

  // Whether any event was bucketed.
  bool empty() const { return events_ == 0; }

 private:
  // std::less<> allows lookups by string_view without building a std::string per event.
  using Totals = std::map<std::string, int64_t, std::less<>>;

  static void AddTo(Totals* totals, std::string_view key, int64_t ns);

  bool with_step_gap_ = false;
  int64_t events_ = 0;
  std::map<std::string, Totals, std::less<>> cpu_;  // phase -> operator -> ns
  std::map<std::string, Totals, std::less<>> gpu_;
  Totals step_phases_;
  Totals forward_;
  Totals backward_;
  Totals general_;
  Totals horovod_;
  // For "others": the first numbered step's start and the latest numbered step end.
  bool any_numbered_step_ = false;
  int64_t first_step_start_ns_ = 0;
  int64_t last_step_end_ns_ = 0;
};

// One-shot forms: the Details keys of the activity of `node` around t_ns / over [begin, end].
nlohmann::json FrameworkActivityAt(const analysis::Model& model, uint32_t node, int64_t t_ns);
nlohmann::json FrameworkActivityOver(const analysis::Model& model, uint32_t node, int64_t begin_ns,
                                     int64_t end_ns);

// A time in nanoseconds as the reference's microseconds: an integer when whole, else a double.
nlohmann::json MicrosecondsJson(int64_t ns);

}  // namespace stepscope::rules
