// The report model's job-level sections (docs/report-model.md): "run" (what ran, where, how it
// ended), "job_summary" (initialization / training loop / finalization) and "system_usage"
// (OverallSystemUsage's per-node statistics plus the node-wide timelines from the model and the
// utilization heatmap of every core and GPU, report_sections_heatmap.h).
// Called by BuildReportModel; pure over the context.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "report/report_model_context.h"

namespace stepscope::report {

// `job` and `path` name the run when the run's facts do not (imported runs).
nlohmann::json BuildRunSection(const ReportContext& context, const std::string& job, const std::string& path);

// Phases: initialization = job start -> first step start, training loop = first step start ->
// last step end, finalization = last step end -> job end, each clamped into the job.
nlohmann::json BuildJobSummary(const ReportContext& context);

nlohmann::json BuildSystemUsage(const ReportContext& context);

// The mean, per exact timestamp, of several series (a node's per-core CPU utilization into the
// node's total). Times ascending; each series' samples must be ascending.
struct TimedValues {
  std::vector<int64_t> time_ns;
  std::vector<double> values;
};
TimedValues MeanByTimestamp(std::span<const analysis::SystemSeries* const> series);

}  // namespace stepscope::report
