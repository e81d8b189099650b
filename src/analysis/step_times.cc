#include "analysis/step_times.h"

#include <algorithm>

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

StepSpan FindStepSpan(const Model& model, int64_t first, int64_t last) {
  StepSpan span;
  for (uint32_t index : model.steps()) {
    if (model.StepPhaseOf(model.events()[index]) == StepPhase::kTrain) span.train_only = true;
  }
  span.start_ns = INT64_MAX;
  span.end_ns = INT64_MIN;
  for (uint32_t index : model.steps()) {
    const FrameworkEvent& step = model.events()[index];
    if (span.train_only && model.StepPhaseOf(step) != StepPhase::kTrain) continue;
    span.lowest = span.lowest < 0 ? step.step : std::min(span.lowest, step.step);
    span.highest = std::max(span.highest, step.step);
    if (step.step < first || step.step > last) continue;
    span.found = true;
    span.start_ns = std::min(span.start_ns, step.start_ns);
    span.end_ns = std::max(span.end_ns, std::max(step.end_ns, step.start_ns));
  }
  if (!span.found) span.start_ns = span.end_ns = 0;
  return span;
}

}  // namespace stepscope::analysis
