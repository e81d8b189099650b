// How long each named annotation took, every time it ran: the dashboard GPU page's histogram of
// the annotation the user picks (SageMaker Profiler's "histogram for any user annotation"), and
// the report's "annotations" section (docs/report-model.md).
//
// Annotations are the spans a user (or a framework on the user's behalf) names:
// - imported PyTorch profiler traces: Kineto's "user_annotation" (host: record_function,
//   profiler ranges) and "gpu_user_annotation" (the same ranges as the GPU ran them), kept apart;
//   the ProfilerStep#N ranges became steps and are left to the step-time sections;
// - stepscope runs: the spans recorded through stepscope.annotate and the torch integration
//   (Forward, Backward, DataLoaderIter, ...), not stepscope's own events nor steps.
// SageMaker profiler output has no such spans and gives none.
// Bounded: the kMaxAnnotationNames names that ran most often (ties by name), kAnnotationBins
// equal bins each. Pure over the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model.h"

namespace stepscope::analysis {

inline constexpr size_t kMaxAnnotationNames = 50;
inline constexpr int kAnnotationBins = 50;

struct AnnotationDurations {
  std::string name;
  bool on_gpu = false;  // a gpu_user_annotation: the range as the GPU ran it
  int64_t count = 0;
  int64_t total_ns = 0;
  double min_ns = 0, max_ns = 0, p50_ns = 0, p95_ns = 0;  // numpy's linear quantiles
  std::vector<double> edges_ns;  // kAnnotationBins + 1 (numpy.histogram's equal bins)
  std::vector<double> counts;    // kAnnotationBins
};

struct AnnotationSummary {
  size_t names_total = 0;  // distinct (name, on_gpu) seen, before the bound
  std::vector<AnnotationDurations> annotations;  // most frequent first, at most kMaxAnnotationNames
};

AnnotationSummary ComputeAnnotationDurations(const Model& model);

}  // namespace stepscope::analysis
