// Builds the compare document of docs/report-model.md ("kind": "compare") from two loaded runs:
// cost (run_cost.h), step-time distributions per step phase with a Mann-Whitney U test
// (mann_whitney.h), time per framework phase and per operator, and utilization p95
// (utilization.h). `stepscope compare` prints it as text (compare_text.h), as JSON, or as HTML.
//
// Callers: cli/compare_command.cc; the tests. Pure function of its inputs; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "rules/instance_catalog.h"

namespace stepscope::compare {

// Two-sided significance level of the step-time test.
inline constexpr double kSignificanceLevel = 0.05;
// Bins of the step-time histograms (shared edges, so the two runs overlay).
inline constexpr int kHistogramBins = 20;
// Rows kept in the phase and operator tables, largest first.
inline constexpr size_t kMaxPhaseRows = 20;
inline constexpr size_t kMaxOperatorRows = 30;

struct ComparedRun {
  const analysis::Model* model = nullptr;
  std::string path;
  // Override what the run's manifests say (--instance-a, --count-a); empty / 0: keep.
  std::string instance_type;
  int32_t instance_count = 0;
  // The run's rules.json document ({"rules": [{"Rule", "findings": [...]}, ...]}); null when the
  // rules could not be had: the findings diff then says so.
  nlohmann::json rules;
};

// `generated_by`: "stepscope 0.1.0". The document leads with "verdict" (one sentence: step
// time, cost and findings of B against A) and has "findings" (which rules found something in
// one run and not in the other).
nlohmann::json BuildComparison(const ComparedRun& a, const ComparedRun& b,
                               const std::vector<rules::InstanceType>& catalog, const std::string& generated_by);

}  // namespace stepscope::compare
