// The job's timeline: initialization (job start until the first step starts), the training loop
// (until the last step ends) and finalization (until the job ends). Computed here once so the
// report, the summary and the comparison can never disagree about it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "analysis/model.h"

namespace stepscope::analysis {

struct JobPhaseSpan {
  std::string_view name;  // "initialization", "training_loop", "finalization"
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct JobTimeline {
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // >= start_ns
  // False when the run has no step: the job cannot be split, and `phases` is empty.
  bool has_steps = false;
  std::array<JobPhaseSpan, 3> phases;
};

// The phases between the job's bounds (its manifests' start and end, or the data's bounds for
// imported runs): the steps' first start and last end are clamped into [start, end], so a step
// recorded past the manifest's end never makes a phase negative.
JobTimeline ComputeJobTimeline(const Model& model, int64_t job_start_ns, int64_t job_end_ns);

}  // namespace stepscope::analysis
