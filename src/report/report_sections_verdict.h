// The report's first screen (docs/report-model.md "verdict"): one sentence saying what holds the
// job back most and what fixing it could save, the headline figures, and the findings grouped by
// rule and cause (one card naming every node and rank concerned, with its evidence and next
// step). The HTML report shows it first, `stepscope summary` leads with the same sentence and
// figures, and the dashboard will render the same object.
//
// Built last, from the sections already in the document (findings, step_time_breakdown,
// system_usage, overhead) and the model's steps (analysis/run_facts.h), so every figure is the
// one the section below it shows. Reads no file.
#pragma once

#include <nlohmann/json.hpp>

#include "report/report_model_context.h"

namespace stepscope::report {

// {"sentence", "severity": "critical"|"warning"|"info"|"ok", "top_group": index | null,
//  "host_contention": "Other processes fill the CPU of vm: ..." | null (also the sentence's start),
//  "expected_saving": fraction | null,
//  "figures": [{"key", "label", "value": number | null,
//               "unit": "ms"|"%"|"steps/s"|"samples/s"|"events"|"USD"|"USD/h"}],
//  "groups": [{"rule", "severity", "title", "nodes": [...], "ranks": [...], "findings": n,
//              "finding_ids": [...], "estimated_saving", "saving_basis", "recommendation",
//              "next_step", "evidence": [...]}]}
nlohmann::json BuildVerdict(const ReportContext& context, const nlohmann::json& document);

}  // namespace stepscope::report
