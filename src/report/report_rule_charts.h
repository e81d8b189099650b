// Chart data the report model draws from rules' Details (docs/report-model.md), so the page
// charts what a rule measured instead of printing its Details as keys and values:
// - LoadBalancing: each GPU's utilization histogram (the rule's 2 % bins), for an overlay per node;
// - BatchSize: the box-plot statistics of CPU, GPU and GPU memory utilization the rule recorded
//   when it last triggered;
// - CPUBottleneck / IOBottleneck: the framework activity at the bottleneck instants, split by
//   framework phase (the cause) and by step phase (TRAIN vs EVAL).
// Called by AddRuleDetailSections (report_sections_rules.h); pure functions over a Details object.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace stepscope::report {

// {"bin_edges_pct": [0, 2, ..., 100], "gpus": [{"node", "gpu": "gpu0", "counts": [...]}],
// "distances": [{"node", "a", "b", "distance"}]} from LoadBalancing's Details; null when it
// recorded no workload.
nlohmann::json WorkloadHistograms(const nlohmann::json& details);

// {"boxes": [{"node", "series": "cpu"|"gpu0"|"gpu0_memory", "label", "p25", "p50", "p75", "p95",
// "lower", "upper"}], "triggered_at_s": seconds after `start_ns` of the last trigger} from
// BatchSize's Details; null when it recorded none.
nlohmann::json BatchSizeBoxes(const nlohmann::json& details, int64_t start_ns);

// {"causes": [{"name" (readable: phase_display_names.h), "share"}], "step_phases": [{"phase": "TRAIN", "share"}]} (shares of 1,
// largest first) from CPUBottleneck's or IOBottleneck's Details; each empty when the rule never
// triggered or saw no such activity.
nlohmann::json BottleneckCauses(const nlohmann::json& details);

}  // namespace stepscope::report
