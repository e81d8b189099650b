// The report model: the versioned JSON document (docs/report-model.md, kind "report") that the
// HTML report, `stepscope report --json` and the terminal summary render. It is built from a
// loaded run (analysis/model.h), the rules' outputs (rules.json, docs/rules.md) and the run's
// facts (`stepscope info --json`, run_info.h); the front end computes no statistic.
//
// Callers: run_report.h (which gathers the inputs for `stepscope report`, the end of a run and
// the golden tests), the report benchmark, the dashboard's live rules (server/live_rules.h).
// Building reads no file; LoadFinishedRules and LoadOrEvaluateRules read rules.json. Each call
// works on its own data, so calls may run on any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"
#include "rules/instance_catalog.h"
#include "rules/profiler_report.h"

namespace stepscope::report {

inline constexpr const char* kReportSchema = "stepscope.report";
inline constexpr int kReportModelVersion = 1;

struct ReportInputs {
  const analysis::Model* model = nullptr;  // required
  std::string job;   // the job's name when the run's facts have none (imported runs)
  std::string path;  // the run as the user named it (run.path)
  // A rules.json document ({"status", "finished", "rules": [...]}, ProfilerReport::RulesJson).
  nlohmann::json rules = nlohmann::json::object();
  // How `rules` was obtained, shown in the report: "rules.json", "evaluated" or "live"
  // (docs/report-model.md, run.rules.source).
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

// The document at `rules_json_path` when it exists, parses and says "finished": true (what
// `stepscope rules` and the end of `stepscope run` write); nullopt otherwise. A live run's
// rules.json is rewritten as its windows close: only a finished one is the run's.
std::optional<nlohmann::json> LoadFinishedRules(const std::string& rules_json_path);

// The rules the report evaluates itself when a run has no finished rules.json: every built-in
// rule with default parameters (a run does not record the rule settings it ran with; its
// finished rules.json holds their outcome), RightSizing priced by `catalog` when not null (not
// kept). LoadOrEvaluateRules and the dashboard's live evaluation both start from these.
StatusOr<std::unique_ptr<rules::ProfilerReport>> MakeReportRules(const std::vector<rules::InstanceType>* catalog);

// The rules' outputs for `model`: LoadFinishedRules(rules_json_path) when there is one;
// otherwise MakeReportRules(catalog) evaluated now over the whole model, in process (nothing is
// written). *source is set to "rules.json" or "evaluated". A file that exists but is unusable
// is not an error: the rules are evaluated instead.
StatusOr<nlohmann::json> LoadOrEvaluateRules(const std::string& rules_json_path, const analysis::Model& model,
                                            std::string* source,
                                            const std::vector<rules::InstanceType>* catalog = nullptr);

}  // namespace stepscope::report
