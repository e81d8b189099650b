// The report model: the versioned JSON document (docs/report-model.md, kind "report") that the
// HTML report, `stepscope report --json` and the terminal summary render. It is built from a
// loaded run (analysis/model.h), the rules' outputs (rules.json, docs/rules.md) and the run's
// facts (`stepscope info --json`, run_info.h); the front end computes no statistic.
//
// Callers: run_report.h (which gathers the inputs for `stepscope report`, the end of a run and
// the golden tests), the report benchmark. Building reads no file; LoadOrEvaluateRules
// reads rules.json. Each call works on its own data, so calls may run on any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"
#include "rules/instance_catalog.h"

namespace stepscope::report {

inline constexpr const char* kReportSchema = "stepscope.report";
inline constexpr int kReportModelVersion = 1;

struct ReportInputs {
  const analysis::Model* model = nullptr;  // required
  std::string job;   // the job's name when the run's facts have none (imported runs)
  std::string path;  // the run as the user named it (run.path)
  // A rules.json document ({"status", "finished", "rules": [...]}, ProfilerReport::RulesJson).
  nlohmann::json rules = nlohmann::json::object();
  // How `rules` was obtained, shown in the report: "rules.json" or "evaluated".
  std::string rules_source;
  // BuildRunInfo's document for stepscope runs; null for imported runs.
  nlohmann::json run_info;
  // BuildPythonProfileTables' tables (python_profile_tables.h) with every function kept (array); null when none.
  nlohmann::json python_tables;
  // The instance catalogue that prices the run (`--prices FILE`); null: the built-in one.
  const std::vector<rules::InstanceType>* catalog = nullptr;
  std::string generated_by;    // "stepscope 0.1.0"
  int64_t generated_at_ns = 0; // Unix ns; tests pass 0
};

// The whole document. Never fails: a section the data cannot fill says why.
nlohmann::json BuildReportModel(const ReportInputs& inputs);

// The rules' outputs for `model`: the document at `rules_json_path` when it exists, parses and
// says "finished": true (what `stepscope rules` and the end of `stepscope run` write); otherwise
// the built-in rules evaluated now, in process, with default parameters (nothing is written).
// *source is set to "rules.json" or "evaluated". A file that exists but is unusable is not an
// error: the rules are evaluated instead. `catalog` (when not null) is RightSizing's.
StatusOr<nlohmann::json> LoadOrEvaluateRules(const std::string& rules_json_path, const analysis::Model& model,
                                            std::string* source,
                                            const std::vector<rules::InstanceType>* catalog = nullptr);

}  // namespace stepscope::report
