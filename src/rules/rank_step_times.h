// Per-rank step times: what the report's and the terminal summary's per-rank tables show. On
// every node that ran several ranks (analysis::Model::RanksOnNode: torchrun --nproc-per-node > 1),
// per rank and step phase, the durations of its steps split the way the Straggler rule splits
// them (StepFacts): time in backward, where DDP waits for the other ranks in the gradient
// all-reduce, and time outside it. In synchronous data-parallel training the ranks' step times
// agree; the split shows which rank the others wait for.
//
// Steps of processes without a rank are left out, as are steps that stepscope's detail windows
// ran in (their time includes the profiler's). Callers: src/report (steps.ranks),
// src/cli/summary_command.cc. Pure over the model; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model.h"

namespace stepscope::rules {

struct RankStepTimes {
  uint32_t node = 0;
  int32_t rank = -1;
  int32_t local_rank = -1;   // of the rank's first process (analysis::ProcessFacts)
  int32_t world_size = -1;
  std::string phase;         // "TRAIN", "EVAL", ...
  std::vector<int32_t> pids; // the rank's processes with steps, ascending (a restarted rank has several)
  int32_t pid = -1;          // the one with the most steps
  // Per step, each ascending (quantiles read them directly).
  std::vector<double> step_ms;
  std::vector<double> backward_ms;
  std::vector<double> outside_backward_ms;  // step − backward
  int64_t step_ns = 0;       // totals, for the data-wait share
  int64_t data_wait_ns = 0;
  double data_wait_share() const {
    return step_ns > 0 ? static_cast<double>(data_wait_ns) / static_cast<double>(step_ns) : 0.0;
  }
};

// Ordered by node, rank, step phase; empty when no node ran several ranks.
std::vector<RankStepTimes> CollectRankStepTimes(const analysis::Model& model);

}  // namespace stepscope::rules
