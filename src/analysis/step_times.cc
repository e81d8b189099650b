#include "analysis/step_times.h"

#include <map>
#include <utility>

namespace stepscope::analysis {

std::vector<StepTimeGroup> GroupStepTimes(const Model& model) {
  std::map<std::pair<uint32_t, StringId>, StepTimeGroup> groups;
  for (uint32_t index : model.steps()) {
    const FrameworkEvent& step = model.events()[index];
    StepTimeGroup& group = groups[{step.node, step.phase}];
    group.node = step.node;
    group.phase = step.phase;
    if (model.IsDisturbedStep(step)) {
      ++group.disturbed;
      continue;
    }
    group.measured.push_back(index);
    group.duration_ms.push_back(static_cast<double>(step.duration_ns()) / 1e6);
  }
  std::vector<StepTimeGroup> out;
  out.reserve(groups.size());
  for (auto& [key, group] : groups) out.push_back(std::move(group));
  return out;
}

}  // namespace stepscope::analysis
