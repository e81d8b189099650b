// The report model's rule sections (docs/report-model.md): "rules" (every rule's outcome with its
// Details), "findings" (every rule's findings, most severe and most costly first) and the
// SageMaker report sections that are a rule's Details: workload_balancing (LoadBalancing),
// data_loading (Dataloader, DataloaderStarvation), batch_size, cpu_bottlenecks, io_bottlenecks,
// step_time_breakdown, with the chart data drawn from those Details (report_rule_charts.h).
// Called by BuildReportModel; pure over the context.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

// Objects and arrays inside a rule's Details keep at most this many entries: Details that grow
// with the run (one CPUBottleneck entry per bottleneck snapshot) must not blow the HTML budget.
inline constexpr size_t kMaxDetailEntries = 500;
// Evidence items kept per finding.
inline constexpr size_t kMaxEvidencePerFinding = 30;

nlohmann::json BuildRulesList(const ReportContext& context);
nlohmann::json BuildFindings(const ReportContext& context);
// Adds the Details-backed sections to `document`.
void AddRuleDetailSections(const ReportContext& context, nlohmann::json& document);

}  // namespace stepscope::report
