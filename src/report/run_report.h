// The report of a run, assembled: the run loaded once (analysis::LoadRun), the rules' outputs
// (<RUN>/rules/rules.json when finished, else evaluated in process, or what the caller already
// holds: the dashboard's live evaluation), the run's facts
// (run_info.h) and the tables of its Python profiles (python_profile_tables.h), built into the
// report model (report_model.h). `stepscope report`, the end of `stepscope run`, the golden
// tests, the benchmarks and the dashboard (from the model it holds) build it here.
//
// Reads the run and its rules.json; prints nothing: what the caller should say about the run
// (its problems, the Python profiles that could not be read) comes back with the model. Each
// call works on its own data, so calls may run on any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/detail_window_files.h"
#include "analysis/model.h"
#include "analysis/problem.h"
#include "base/status.h"
#include "rules/instance_catalog.h"

namespace stepscope::report {

struct RunReport {
  nlohmann::json model;                      // the report model document
  std::vector<analysis::Problem> problems;   // the loaded run's (the commands print them)
  // Python windows that were captured but cannot be read: left out of the report's tables,
  // to be named by the caller (cli::PrintCorruptPythonWindows).
  std::vector<analysis::DetailWindowFile> unreadable_python_windows;
};

// Rules' outputs the caller already holds for the run (the dashboard's, evaluated incrementally
// as the run grows: server/live_rules.h), so the report evaluates none itself.
struct PrecomputedRules {
  const nlohmann::json* document = nullptr;  // ProfilerReport::RulesJson's shape; not owned
  std::string source;                        // run.rules.source: "live", "evaluated", "rules.json"
};

// The report of the run at `run_path` (a job or node directory, or an imported run), stamped
// with `generated_at_ns` (Unix ns; tests pass 0) and `generated_by` ("stepscope 0.1.0"). Errors
// are one line naming the run and what to pass instead. Imported runs have no facts or Python
// profiles; their sections say so.
// `catalog` prices the run and is RightSizing's when the rules are evaluated here (--prices);
// null: the built-in catalogue.
StatusOr<RunReport> BuildRunReport(const std::string& run_path, int64_t generated_at_ns,
                                   const std::string& generated_by,
                                   const std::vector<rules::InstanceType>* catalog = nullptr);

// The same from a model the caller already holds for `run_path` (the dashboard's loaded run,
// refreshed while its job runs): nothing is read again but the rules.json, the run's facts and
// its detail windows. With `precomputed` (not null) its document is used as it is and no rules.json
// is read. The caller keeps `model` and `precomputed` unchanged until this returns.
StatusOr<RunReport> BuildRunReportFromModel(const analysis::Model& model, const std::string& run_path,
                                            int64_t generated_at_ns, const std::string& generated_by,
                                            const std::vector<rules::InstanceType>* catalog = nullptr,
                                            const PrecomputedRules* precomputed = nullptr);

}  // namespace stepscope::report
