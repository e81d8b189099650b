#include "report/run_report.h"

#include <climits>

#include "analysis/run_loader.h"
#include "report/python_profile_tables.h"
#include "report/report_model.h"
#include "report/run_info.h"
#include "rules/profiler_report.h"

namespace stepscope::report {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

StatusOr<RunReport> BuildRunReport(const std::string& run_path, int64_t generated_at_ns,
                                   const std::string& generated_by,
                                   const std::vector<rules::InstanceType>* catalog) {
  // The run is read once: `stepscope info`'s facts (how the job ended, capabilities, drops,
  // bytes) are the model's too.
  STEPSCOPE_ASSIGN_OR_RETURN(analysis::Model model, analysis::LoadRun(run_path));
  return BuildRunReportFromModel(model, run_path, generated_at_ns, generated_by, catalog);
}

StatusOr<RunReport> BuildRunReportFromModel(const analysis::Model& model, const std::string& run_path,
                                            int64_t generated_at_ns, const std::string& generated_by,
                                            const std::vector<rules::InstanceType>* catalog,
                                            const PrecomputedRules* precomputed) {
  RunReport report;
  report.problems = model.problems();
  ReportInputs inputs;
  inputs.model = &model;
  inputs.path = run_path;
  inputs.job = BaseName(analysis::RunDirectoryOf(run_path));
  inputs.generated_by = generated_by;
  inputs.generated_at_ns = generated_at_ns;
  inputs.catalog = catalog;
  if (precomputed != nullptr && precomputed->document != nullptr) {
    inputs.rules = *precomputed->document;
    inputs.rules_source = precomputed->source;
  } else {
    STEPSCOPE_ASSIGN_OR_RETURN(inputs.rules, LoadOrEvaluateRules(rules::DefaultRulesOutputDir(run_path) + "/rules.json",
                                                                 model, &inputs.rules_source, catalog));
  }
  if (model.source() == analysis::ModelSource::kStepscope) {
    inputs.run_info = BuildRunInfo(run_path, model);
    const std::vector<analysis::DetailWindowFile> windows = analysis::ReadDetailWindows(model);
    PythonProfileOptions every_function;
    every_function.top = INT_MAX;  // the report merges windows, then cuts to its own top
    inputs.python_tables = BuildPythonProfileTables(windows, every_function);
    for (const analysis::DetailWindowFile& window : windows) {
      if (window.kind == "python" && !window.error.empty()) report.unreadable_python_windows.push_back(window);
    }
  }
  report.model = BuildReportModel(inputs);
  return report;
}

}  // namespace stepscope::report
