// The dashboard's per-run views computed from a loaded model (docs/dashboard.md): the system
// series of the Nodes page, bucketed for the range on screen, and the last steps of each
// node/rank split by what ran in them. Both read only the analysis model; the step split is the
// rules' own measurement (rules/step_facts.h CollectStepFacts), so the page and the findings
// agree on every step.
//
// Callers: dashboard_server.cc, with the run's lock held. Pure functions of the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"

namespace stepscope::server {

// The metric name a series is asked for by: stepscope's own ("cpu/cpu3/util_pct",
// analysis/vocabulary.h), else "type/name/dimension" for series only an import has.
std::string SeriesMetricKey(const analysis::Model& model, const analysis::SystemSeries& series);

// Whether `key` matches `pattern`, where '*' stands for any run of characters ("cpu/cpu*/util_pct").
bool MetricKeyMatches(std::string_view pattern, std::string_view key);

struct SeriesQuery {
  std::vector<std::string> keys;  // patterns; empty: none (the answer still lists what exists)
  int64_t from_ns = 0;            // 0: the run's first sample
  int64_t to_ns = 0;              // 0: its last
  size_t points = 600;
};

// {"from_ns", "to_ns", "bucket_ns", "keys": [every metric key of the run],
//  "series": [{"node", "key", "t_ns", "min", "max", "mean"}]}, at most kMaxSeriesPoints entries
// per series and kMaxSeriesPerAnswer series.
inline constexpr size_t kMaxSeriesPerAnswer = 512;
nlohmann::json SeriesAnswer(const analysis::Model& model, const SeriesQuery& query);

// {"steps": [{"node", "rank", "pid", "step", "phase", "start_ns", "end_ns", "duration_ms",
//  "disturbed", "parts": [{"name", "ms"}]}]}: the last `last` (at most kMaxRecentSteps) steps of
// every (node, process), oldest first; parts are forward, backward, optimizer, data wait and
// other (the rest of the step).
inline constexpr size_t kMaxRecentSteps = 1000;
nlohmann::json RecentStepsAnswer(const analysis::Model& model, size_t last);

}  // namespace stepscope::server
