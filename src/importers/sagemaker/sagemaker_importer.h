// Imports a SageMaker Debugger profiler-output directory (shared/FORMATS.md §1) into the
// analysis model: system metrics become SystemSeries keyed (node, Type, Name, Dimension);
// pevents timelines and TF profiler traces become FrameworkEvents (phase = process name).
//
// The readers of single files are sagemaker_system_reader.h and sagemaker_trace_reader.h; this
// file finds the files, reads them and fills a ModelBuilder. What was skipped (truncated last
// lines, orphan E events, negative durations) is listed in Model::problems().
//
// Callers: `stepscope import sagemaker`, the Python readers, tests. Stateless; safe from any
// thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model.h"
#include "base/status.h"
#include "importers/sagemaker/sagemaker_trace_reader.h"

namespace stepscope::analysis {

// The files of one profiler-output directory, by kind, each list sorted by path.
struct SageMakerFiles {
  std::vector<std::string> system;       // system/**/<10 digits>.algo-<N>.json
  std::vector<std::string> pevents;      // framework/pevents/**/<ts>_<node>_<suffix>.json
  std::vector<std::string> tf_traces;    // framework/**/*.trace.json.gz
  std::vector<std::string> end_markers;  // system/training_job_end.ts, framework/training_job_end.ts
};
// NotFound when `root_dir` is not a directory or holds neither system/ nor framework/.
StatusOr<SageMakerFiles> FindSageMakerFiles(const std::string& root_dir);

// The events of every pevents file under `root_dir` whose suffix is `suffix` ("pythontimeline",
// "model_timeline", "horovod_timeline", "smdataparallel_timeline"; all when empty), overlapping
// the closed interval [start_us, end_us], in file order.
StatusOr<std::vector<SageMakerTraceEvent>> ReadPeventsEvents(const std::string& root_dir, const std::string& suffix,
                                                             int64_t start_us, int64_t end_us);

// One timeline of all pevents suffixes in [start_us, end_us]: the union of the per-suffix reads,
// stably sorted by start time.
StatusOr<std::vector<SageMakerTraceEvent>> MergeSageMakerTraces(const std::string& root_dir, int64_t start_us,
                                                                int64_t end_us);

struct SageMakerImportStats {
  int64_t system_files = 0;
  int64_t system_records = 0;
  int64_t truncated_system_files = 0;
  int64_t pevents_files = 0;
  int64_t tf_trace_files = 0;
  int64_t events = 0;
  bool job_end_marker = false;  // a training_job_end.ts was found: the job finished
};

// Reads everything under `root_dir` (a profiler-output directory). A bad file is an error
// naming it (and the line or byte); `stats` (optional) receives the counts.
StatusOr<Model> ImportSageMaker(const std::string& root_dir, SageMakerImportStats* stats);
StatusOr<Model> ImportSageMaker(const std::string& root_dir);

}  // namespace stepscope::analysis
