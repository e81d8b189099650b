// What stepscope's own rules need to know about steps, measured once per step as the windows
// arrive: the step's interval and how much of it went to each kind of activity on its thread.
//
// The native rules keep StepFacts (numbers, never model indices) across windows, so the same
// rule object serves a growing live model and a finished one alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model.h"
#include "rules/rule.h"

namespace stepscope::rules {

// "Step:ModeKeys.TRAIN" -> "TRAIN"; other text unchanged.
std::string_view StepPhaseName(std::string_view phase);

struct StepFacts {
  uint32_t node = 0;
  int32_t pid = 0;
  int32_t rank = -1;        // the process's rank (analysis::ProcessFacts), -1 when not distributed
  std::string phase;        // "TRAIN", "EVAL", ...
  int64_t number = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool disturbed = false;   // stepscope's detail profiling ran in it (arg stepscope_disturbed)
  // Host time of the step's own process inside it, by what ran (clipped to the step; nested
  // spans are not double counted: the innermost known kind wins).
  int64_t data_wait_ns = 0;   // DataLoaderIter
  int64_t forward_ns = 0;     // Forward
  int64_t backward_ns = 0;    // Backward
  int64_t optimizer_ns = 0;   // OptimizerStep
  int64_t sync_ns = 0;        // device synchronisations (cuda_runtime *Synchronize, blocking memcpy)
  int64_t sync_count = 0;
  int64_t duration_ns() const { return end_ns - start_ns; }
};

// The model's node names, remembered across windows: a rule reports after the model it read is
// gone (a live run is reloaded every interval).
class NodeNames {
 public:
  void Update(const analysis::Model& model);
  // The node's name, or its index as text when it was never seen.
  std::string operator()(uint32_t node) const;

 private:
  std::vector<std::string> names_;
};

// The `capacity` steps with the largest `key` so far, each with what ran in it (measured while
// the window's model is at hand), largest first.
class WorstSteps {
 public:
  using Entry = std::pair<StepFacts, std::vector<ActivityShare>>;
  explicit WorstSteps(int64_t StepFacts::*key, size_t capacity = 5) : key_(key), capacity_(capacity) {}
  // Keeps `step` if it ranks; then measures its activity in `model`.
  void Offer(const analysis::Model& model, StepFacts step);
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  int64_t StepFacts::*key_;
  size_t capacity_;
  std::vector<Entry> entries_;
};

// The steps that start in the window's event range, with their facts.
std::vector<StepFacts> CollectStepFacts(const Window& window);

// Where the time in [begin_ns, end_ns] went on `node` (and process `pid`, or every process when
// pid < 0): the largest (kind, name) totals, clipped to the interval, at most `limit`. Steps and
// stepscope's own spans are left out. Kinds: "operator" (cpu_functions), "kernel" (device
// events), "python" (python_function), "phase" (Forward, DataLoaderIter, ...), "annotation".
std::vector<ActivityShare> TopActivity(const analysis::Model& model, uint32_t node, int32_t pid, int64_t begin_ns,
                                       int64_t end_ns, size_t limit = 10);

// "1.23 s", "45.6 ms", "789 µs": for findings' sentences.
std::string FormatDurationNs(int64_t ns);
std::string FormatPercent(double fraction);  // 0.1234 -> "12.3 %"

}  // namespace stepscope::rules
