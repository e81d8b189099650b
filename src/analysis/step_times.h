// Step durations per node and step phase, computed once for every front end (report, summary,
// comparison): the steps that stepscope's own detail windows ran in ("disturbed",
// Model::IsDisturbedStep) are counted apart and left out of the durations, so every front end
// shows the same count and the same statistics for the same run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/model.h"

namespace stepscope::analysis {

struct StepTimeGroup {
  uint32_t node = 0;
  StringId phase = kEmptyString;  // the step phase as the model spells it ("Step:ModeKeys.TRAIN")
  std::vector<uint32_t> measured;  // indices into Model::events() of the undisturbed steps, start order
  std::vector<double> duration_ms;  // their durations, in the same order
  size_t disturbed = 0;             // steps left out
};

// One group per (node, step phase) that has steps, ordered by node then phase id.
std::vector<StepTimeGroup> GroupStepTimes(const Model& model);

// Where the steps numbered `first` to `last` (both included) ran: the TRAIN steps of every node
// and rank, or the steps of any phase when the run has no TRAIN step, from the earliest of them
// to start to the latest to end. What `stepscope export --steps` and the dashboard's "zoom to a
// step" cut. `found` is false when no such step exists; the run's lowest and highest numbers of
// the same steps are given either way (both -1 without steps).
struct StepSpan {
  bool found = false;
  bool train_only = false;  // the run has TRAIN steps, and only they were looked at
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t lowest = -1;
  int64_t highest = -1;
};
StepSpan FindStepSpan(const Model& model, int64_t first, int64_t last);

}  // namespace stepscope::analysis
