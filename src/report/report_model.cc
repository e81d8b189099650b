#include "report/report_model.h"

#include <malloc.h>

#include <algorithm>

#include "base/file_system.h"
#include "report/report_model_context.h"
#include "report/report_model_series.h"
#include "report/report_sections_detail.h"
#include "report/report_sections_gpu.h"
#include "report/report_sections_gpu_activity.h"
#include "report/report_sections_gpu_idle.h"
#include "report/report_sections_job.h"
#include "report/report_sections_overhead.h"
#include "report/report_sections_rules.h"
#include "report/report_sections_steps.h"
#include "report/report_sections_verdict.h"
#include "rules/configured_profiler_report.h"
#include "base/json_fields.h"

namespace stepscope::report {

nlohmann::json BuildReportModel(const ReportInputs& inputs) {
  const analysis::Model& model = *inputs.model;
  ReportContext context;
  context.model = &model;
  context.rules = &inputs.rules;
  context.run_info = inputs.run_info.is_object() ? &inputs.run_info : nullptr;
  context.python_tables = inputs.python_tables.is_array() ? &inputs.python_tables : nullptr;
  context.catalog = inputs.catalog;
  context.path = inputs.path;
  // The manifests know when the job started and ended (before its first and after its last
  // event); imported data only knows its own timestamps.
  context.start_ns = model.first_ns();
  context.end_ns = model.last_ns();
  if (context.run_info != nullptr) {
    context.start_ns = JsonInt(inputs.run_info, "start_time_ns", context.start_ns);
    context.end_ns = JsonInt(inputs.run_info, "end_time_ns", context.end_ns);
  }
  context.end_ns = std::max(context.end_ns, context.start_ns);

  nlohmann::json document;
  document["schema"] = kReportSchema;
  document["version"] = kReportModelVersion;
  document["kind"] = "report";
  document["generated_by"] = inputs.generated_by;
  document["generated_at_ns"] = inputs.generated_at_ns;
  document["limits"] = {{"max_points_per_series", kMaxPointsPerSeries}, {"max_table_rows", kMaxTableRows}};
  document["run"] = BuildRunSection(context, inputs.job, inputs.path);
  document["run"]["rules"] = {{"source", inputs.rules_source},
                              {"status", JsonString(inputs.rules, "status")},
                              {"windows_evaluated", JsonInt(inputs.rules, "windows_evaluated", 0)},
                              {"scan_interval_us", JsonInt(inputs.rules, "scan_interval_us", 0)}};
  // Which window grid the rules used (RULES.md §0): the rules section says so in one sentence.
  if (inputs.rules.is_object() && inputs.rules.contains("window_grid") && inputs.rules["window_grid"].is_object()) {
    document["run"]["rules"]["window_grid"] = JsonString(inputs.rules["window_grid"], "description");
  }
  document["job_summary"] = BuildJobSummary(context);
  document["system_usage"] = BuildSystemUsage(context);
  document["framework"] = BuildFrameworkSection(context);
  document["rules"] = BuildRulesList(context);
  document["findings"] = BuildFindings(context);
  document["steps"] = BuildStepsSection(context);
  document["gpu_utilization"] = BuildGpuSection(context, "GPUUtilization");
  document["gpu_memory"] = BuildGpuSection(context, "GPUMemoryUtilization");
  document["gpu_activity"] = BuildGpuActivitySection(context);
  document["gpu_idle"] = BuildGpuIdleSection(context);
  document["annotations"] = BuildAnnotationsSection(context);
  AddRuleDetailSections(context, document);
  document["python_profile"] = BuildPythonProfile(context);
  document["operators"] = BuildOperatorsSection(context);
  document["overhead"] = BuildOverhead(context);
  document["capabilities"] = BuildCapabilities(context);
  // Last: the first screen is drawn from the sections above, so its figures are theirs.
  document["verdict"] = BuildVerdict(context, document);
  return document;
}

std::optional<nlohmann::json> LoadFinishedRules(const std::string& rules_json_path) {
  auto text = ReadRegularFile(rules_json_path, Symlinks::kRefuse);
  if (!text.ok()) return std::nullopt;
  auto document = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !JsonBool(document, "finished", false) || JsonField(document, "rules") == nullptr ||
      !document["rules"].is_array()) {
    return std::nullopt;
  }
  return document;
}

StatusOr<std::unique_ptr<rules::ProfilerReport>> MakeReportRules(const std::vector<rules::InstanceType>* catalog) {
  return rules::MakeConfiguredProfilerReport(/*only=*/"", /*section=*/nlohmann::json(), /*overrides=*/{}, catalog);
}

StatusOr<nlohmann::json> LoadOrEvaluateRules(const std::string& rules_json_path, const analysis::Model& model,
                                            std::string* source, const std::vector<rules::InstanceType>* catalog) {
  if (std::optional<nlohmann::json> finished = LoadFinishedRules(rules_json_path)) {
    *source = "rules.json";
    return std::move(*finished);
  }
  nlohmann::json rules;
  {
    STEPSCOPE_ASSIGN_OR_RETURN(auto report, MakeReportRules(catalog));
    report->Finish(model);
    rules = report->RulesJson();
  }
  // The rules' state is gone, but malloc keeps its pages (a day's run: ~100 MB in steps and
  // sorted copies, scattered among the model's). The report's sections allocate in other sizes
  // and would stack their peak on top of those pages: hand them back first.
  malloc_trim(0);
  *source = "evaluated";
  return rules;
}

}  // namespace stepscope::report
