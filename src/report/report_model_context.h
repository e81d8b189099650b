// What every section builder of the report model reads (report_sections_*.h): the loaded model,
// the rules' outputs (a rules.json document, docs/rules.md), the run's facts (`stepscope info
// --json` for stepscope runs, null for imported ones) and the job's time bounds. Built once by
// BuildReportModel (report_model.h); the builders only read it. Not thread-safe to mutate.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "rules/instance_catalog.h"

namespace stepscope::report {

struct ReportContext {
  const analysis::Model* model = nullptr;
  // {"status", "finished", "rules": [FullJson...]} as ProfilerReport::RulesJson writes it.
  const nlohmann::json* rules = nullptr;
  // BuildRunInfo's document (run_info.h); null for imported runs.
  const nlohmann::json* run_info = nullptr;
  // BuildPythonProfileTables' tables (python_profile_tables.h), every function kept; null when none.
  const nlohmann::json* python_tables = nullptr;
  // The instance catalogue that prices the run; null: the built-in one.
  const std::vector<rules::InstanceType>* catalog = nullptr;
  std::string path;  // the run as the user named it
  // The job's bounds: the manifests' start and end when known, else the model's first and last
  // timestamps.
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  bool imported() const { return model->source() != analysis::ModelSource::kStepscope; }
  // The rule's entry of rules.json, or nullptr when it was not evaluated.
  const nlohmann::json* Rule(std::string_view name) const;
  // The rule's Details (an object; empty when the rule is absent or has none).
  nlohmann::json Details(std::string_view name) const;
  // What stepscope adds beside them (rules.json's "StepscopeDetails"; empty when none).
  nlohmann::json StepscopeDetails(std::string_view name) const;
  // Whether any GPU utilization or GPU memory series exists.
  bool HasGpuSeries() const;
  // The reason a stepscope run recorded no GPU (its nodes' capabilities.gpu.reason), "" if none.
  std::string NoGpuReason() const;
};

// {"available": false, "why": why}.
nlohmann::json Unavailable(const std::string& why);

// "recorded by stepscope" / "imported from SageMaker profiler output" / ..., for sentences that
// say why an imported run has no such data.
std::string SourceDescription(const analysis::Model& model);

}  // namespace stepscope::report
