// The facts of one loaded run that compare, the terminal summary, info and the report print: when the job ran
// (from the node manifests that `stepscope run` writes, else the data's own time bounds), its
// three phases (initialization, training loop, finalization), the instance it ran on, and its
// step durations per node and step phase.
//
// Callers: compare (run_comparison.cc), `stepscope summary`, `stepscope info` and the report
// (run info). Pure functions of a Model; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/job_timeline.h"
#include "analysis/model.h"

namespace stepscope::analysis {

struct RunFacts {
  std::string job;             // the manifests' job, else the run path's last component
  std::string path;            // as given
  std::string source;          // "stepscope", "sagemaker", "kineto"
  std::string ended;           // the manifest's "ended" sentence; "" when unknown
  int64_t start_ns = 0;        // earliest manifest start_time_ns, else Model::first_ns()
  int64_t end_ns = 0;          // latest manifest end_time_ns, else Model::last_ns()
  double duration_s = 0;       // (end_ns - start_ns) / 1e9
  std::vector<std::string> nodes;
  std::string instance_type;   // the first node that names one; "" when none does
  int32_t instance_count = 0;  // the largest count a node names; else the node count when a type is known
  // The job timeline (analysis/job_timeline.h); empty when the run has no steps (the loop
  // cannot be told from the rest).
  std::vector<JobPhaseSpan> phases;
};

// `path` is only recorded (the caller loaded the model from it).
RunFacts ComputeRunFacts(const Model& model, const std::string& path);

// Step durations in ms keyed by step phase ("TRAIN", "EVAL", ...), from analysis/step_times.h:
// steps that stepscope's own detail windows ran in are left out (their time includes the
// profiler's, not the job's). `node` -1 pools every node.
std::map<std::string, std::vector<double>> StepDurationsMs(const Model& model, int node = -1);
// How many steps StepDurationsMs left out as disturbed (same `node` meaning).
size_t DisturbedStepCount(const Model& model, int node = -1);

}  // namespace stepscope::analysis
