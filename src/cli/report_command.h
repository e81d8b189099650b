// `stepscope report RUN [-o FILE] [--json]`: the run's report model (docs/report-model.md,
// src/report/report_model.h) rendered as one self-contained HTML file (default <RUN>/report.html)
// or written as JSON. This is where the model's inputs are gathered: the loaded run, the rules'
// outputs (<RUN>/rules/rules.json when finished, else evaluated in process), the run's facts
// (`stepscope info --json`) and the Python tables of its detail windows; imported runs have no
// facts and their sections say so.
//
// Callers: main.cc; the end of `stepscope run` (WriteRunReport). Plain functions, one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/problem.h"
#include "base/status.h"

namespace stepscope::cli {

struct ReportOptions {
  std::string run;   // a job directory, node directory or imported run (LoadRun)
  std::string out;   // "" = <RUN>/report.html, or stdout with --json
  bool json = false; // the model as JSON instead of HTML
};

// The report model of the run at `run_path`, stamped with `generated_at_ns` (Unix ns). Errors
// are one line naming the run and what to pass instead. `problems`, when given, receives the
// loaded run's problems (the command prints them: run_problems.h).
StatusOr<nlohmann::json> BuildRunReportModel(const std::string& run_path, int64_t generated_at_ns,
                                             std::vector<analysis::Problem>* problems = nullptr);

// Builds the model and writes <RUN>/report.html (the end-of-run hook of `stepscope run`);
// *written_path is the file written.
Status WriteRunReport(const std::string& run_path, std::string* written_path);

// Returns the exit code: 0 written, 1 the run cannot be read or the file not written.
int ReportCommand(const ReportOptions& options);

}  // namespace stepscope::cli
