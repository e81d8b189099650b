// The terminal summary of a run: printed at the end of `stepscope run` and by
// `stepscope summary RUN`. It shows the job's timing (start, duration, initialization /
// training loop / finalization), step-time statistics per node and step phase (and per rank on
// nodes that ran several: analysis::ProcessFacts), the top
// findings with their recommendations (from <RUN>/rules/rules.json when the run has it, else
// evaluated now without writing anything), stepscope's own overhead (dropped events, detail
// window stop spans) and where the HTML report is.
//
// At most 100 columns (long text is wrapped); ANSI colour only when `out` is a terminal and
// NO_COLOR is unset. Callers: main.cc, the run command's end-of-run hook. Reads files only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"
#include "rules/instance_catalog.h"

namespace stepscope::cli {

inline constexpr size_t kSummaryWidth = 100;
// Findings shown; the rest are counted and `stepscope rules RUN` lists them.
inline constexpr size_t kSummaryFindings = 5;

struct SummaryOptions {
  bool color = false;
  // The rules' outputs (rules.json's document); null: none, the summary evaluates the rules.
  nlohmann::json rules_json;
  std::string report_path;     // "<RUN>/report.html"
  bool report_exists = false;
  // Prices the run's cost and RightSizing when the rules are evaluated here (`stepscope run
  // --prices`); null: the built-in example. Not owned.
  const std::vector<rules::InstanceType>* catalog = nullptr;
};

// The summary text of a loaded run (pure: tests call it with fixed options).
std::string FormatRunSummary(const analysis::Model& model, const std::string& run_path, const SummaryOptions& options);

// Loads `run_path`, gathers the options from the run directory and prints the summary to `out`,
// pricing with `catalog` (null: the built-in example). Returns 0, or 1 after printing one line on
// stderr when the run cannot be loaded.
int PrintRunSummary(const std::string& run_path, FILE* out, const std::vector<rules::InstanceType>* catalog = nullptr);

// `stepscope summary RUN`.
int SummaryCommand(const std::string& run_path);

}  // namespace stepscope::cli
