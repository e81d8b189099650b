#include "analysis/job_timeline.h"

#include <algorithm>
#include <limits>

namespace stepscope::analysis {

JobTimeline ComputeJobTimeline(const Model& model, int64_t job_start_ns, int64_t job_end_ns) {
  JobTimeline timeline;
  timeline.start_ns = job_start_ns;
  timeline.end_ns = std::max(job_end_ns, job_start_ns);
  int64_t first_step_ns = std::numeric_limits<int64_t>::max();
  int64_t last_step_end_ns = std::numeric_limits<int64_t>::min();
  for (uint32_t index : model.steps()) {
    const FrameworkEvent& step = model.events()[index];
    first_step_ns = std::min(first_step_ns, step.start_ns);
    last_step_end_ns = std::max(last_step_end_ns, step.end_ns);
  }
  if (model.steps().empty()) return timeline;
  const int64_t loop_start = std::clamp(first_step_ns, timeline.start_ns, timeline.end_ns);
  const int64_t loop_end = std::clamp(last_step_end_ns, loop_start, timeline.end_ns);
  timeline.has_steps = true;
  timeline.phases = {JobPhaseSpan{"initialization", timeline.start_ns, loop_start},
                     JobPhaseSpan{"training_loop", loop_start, loop_end},
                     JobPhaseSpan{"finalization", loop_end, timeline.end_ns}};
  return timeline;
}

}  // namespace stepscope::analysis
