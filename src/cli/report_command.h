// `stepscope report RUN [-o FILE] [--json]`: the run's report (assembled by
// src/report/run_report.h) rendered as one self-contained HTML file (default <RUN>/report.html)
// or written as JSON, with the run's data-loss lines and unreadable Python profiles on stderr.
//
// Callers: main.cc; the end of `stepscope run` (WriteRunReport). Plain functions, one thread.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "rules/instance_catalog.h"

namespace stepscope::cli {

struct ReportOptions {
  std::string run;   // a job directory, node directory or imported run (LoadRun)
  std::string out;   // "" = <RUN>/report.html, or stdout with --json
  bool json = false; // the model as JSON instead of HTML
  std::string prices;  // --prices FILE (JSON or TOML catalogue); "": the built-in one
};

// Builds the model and writes <RUN>/report.html (the end-of-run hook of `stepscope run`), pricing
// with `catalog` (`stepscope run --prices`; null: the built-in example); *written_path is the
// file written.
Status WriteRunReport(const std::string& run_path, const std::vector<rules::InstanceType>* catalog,
                      std::string* written_path);

// Returns the exit code: 0 written, 1 the run cannot be read or the file not written.
int ReportCommand(const ReportOptions& options);

}  // namespace stepscope::cli
