// `stepscope import sagemaker DIR` and `stepscope import kineto FILE...`: reads foreign profiler
// output into the analysis model and stores it as an imported run:
//
//   <out>/<job>/manifest.json    {"format_version":1,"job","source","imported_from","imported_at_ns","nodes"}
//   <out>/<job>/model.stepscope  the whole model (analysis/model_file.h)
//
// Prints the run directory and a one-line summary. Exit codes: 0 ok, 1 error (one line
// "stepscope import: <what>; <next step>"), 2 usage.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"

namespace stepscope::cli {

struct ImportInvocation {
  std::string format;               // "sagemaker" or "kineto"
  std::vector<std::string> inputs;  // the profiler-output directory, or the trace files
  std::string out;                  // root of runs; default ./stepscope-runs
  std::string job;                  // default "<basename of the first input>-import"
};

int ImportCommand(const ImportInvocation& invocation);

// The imported run's manifest (exposed for tests).
nlohmann::json ImportManifest(const analysis::Model& model, const std::string& job,
                              const std::vector<std::string>& imported_from, int64_t imported_at_ns);
// "2 nodes, 40 series, 1234 samples, 5678 events, 2020-06-03T05:04:59Z .. 2020-06-03T07:51:39Z (10000.000 s)"
std::string ImportSummary(const analysis::Model& model);
// Default job name: "<basename of input without trailing / and extensions>-import".
std::string DefaultImportJobName(const std::string& input);

}  // namespace stepscope::cli
