// The report model's framework sections (docs/report-model.md): "framework" (time per step
// phase, per other framework phase, per CPU and GPU operator, bucketed as OverallFrameworkMetrics
// does, shared/RULES.md §11, but in seconds and with call counts) and "steps" (per node and step
// phase: duration statistics, StepOutlier's outliers with their durations and the downsampled
// series; one histogram on shared bin edges with a series per node and phase, per rank on nodes
// that ran several; and, for those nodes, per rank and phase: count, mean, p50, p95, max).
// Called by BuildReportModel; pure over the context.
#pragma once

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

// Bins of the shared step-duration histogram.
inline constexpr int kStepHistogramBins = 50;

nlohmann::json BuildFrameworkSection(const ReportContext& context);
nlohmann::json BuildStepsSection(const ReportContext& context);

}  // namespace stepscope::report
