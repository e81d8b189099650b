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

}  // namespace stepscope::analysis
