#include "report/report_rule_charts.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model.h"
#include "base/json_fields.h"
#include "report/phase_display_names.h"

namespace stepscope::report {
namespace {

// Details shares are percentages (framework_activity.h); the report model's shares are of 1.
nlohmann::json SharesLargestFirst(const nlohmann::json& percentages, const char* name_key,
                                  std::string (*rename)(const std::string&)) {
  std::vector<std::pair<std::string, double>> shares;
  if (percentages.is_object()) {
    for (const auto& [name, pct] : percentages.items()) {
      if (pct.is_number() && pct.get<double>() > 0) shares.emplace_back(rename(name), pct.get<double>() / 100.0);
    }
  }
  std::stable_sort(shares.begin(), shares.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, share] : shares) out.push_back({{name_key, name}, {"share", share}});
  return out;
}

std::string Readable(const std::string& phase) { return PhaseDisplayName(phase); }

// "Step:ModeKeys.TRAIN" -> "TRAIN"; other names ("others") as they are.
std::string StepPhaseOfRulesName(const std::string& name) {
  for (auto phase : {analysis::StepPhase::kTrain, analysis::StepPhase::kEval, analysis::StepPhase::kPredict,
                     analysis::StepPhase::kGlobal}) {
    if (analysis::StepPhaseRulesName(phase) == name) return analysis::StepPhaseName(phase);
  }
  return name;
}

// "gpu0" -> "GPU 0", "gpu0_memory" -> "GPU 0 memory", "cpu" -> "CPU".
std::string BoxLabel(const std::string& series) {
  if (series == "cpu") return "CPU";
  std::string label = series;
  const bool memory = label.ends_with("_memory");
  if (memory) label.resize(label.size() - 7);
  if (label.starts_with("gpu")) label = "GPU " + label.substr(3);
  return memory ? label + " memory" : label;
}

}  // namespace

nlohmann::json WorkloadHistograms(const nlohmann::json& details) {
  if (!details.is_object()) return nullptr;
  nlohmann::json gpus = nlohmann::json::array(), distances = nlohmann::json::array();
  size_t bins = 0;
  for (const auto& [node, entry] : details.items()) {
    const nlohmann::json* workloads = JsonField(entry, "workloads");
    if (workloads == nullptr || !workloads->is_object()) continue;
    for (const auto& [gpu, counts] : workloads->items()) {
      if (!counts.is_array() || counts.empty()) continue;
      bins = std::max(bins, counts.size());
      gpus.push_back({{"node", node}, {"gpu", gpu}, {"counts", counts}});
    }
    const nlohmann::json* pairs = JsonField(entry, "distances");
    if (pairs == nullptr || !pairs->is_object()) continue;
    for (const auto& [a, others] : pairs->items()) {
      if (!others.is_object()) continue;
      for (const auto& [b, distance] : others.items()) {
        if (distance.is_number()) distances.push_back({{"node", node}, {"a", a}, {"b", b}, {"distance", distance}});
      }
    }
  }
  if (gpus.empty()) return nullptr;
  // LoadBalancing's bins split 0..100 % equally (2 % each: RULES.md §7).
  nlohmann::json edges = nlohmann::json::array();
  for (size_t i = 0; i <= bins; ++i) edges.push_back(100.0 * static_cast<double>(i) / static_cast<double>(bins));
  return {{"bin_edges_pct", std::move(edges)}, {"gpus", std::move(gpus)}, {"distances", std::move(distances)}};
}

nlohmann::json BatchSizeBoxes(const nlohmann::json& details, int64_t start_ns) {
  if (!details.is_object()) return nullptr;
  nlohmann::json boxes = nlohmann::json::array();
  for (const auto& [node, entry] : details.items()) {
    if (!entry.is_object()) continue;  // last_timestamp
    // Keys in order ("cpu", "gpu0", "gpu0_memory", "gpu1", ...): CPU first, each GPU then its memory.
    std::vector<std::string> names;
    for (const auto& [series, stats] : entry.items()) {
      if (stats.is_object()) names.push_back(series);
    }
    for (const std::string& series : names) {
      const nlohmann::json& stats = entry[series];
      nlohmann::json box = {{"node", node}, {"series", series}, {"label", BoxLabel(series)}};
      for (const char* key : {"lower", "p25", "p50", "p75", "p95", "upper"}) box[key] = JsonDouble(stats, key, 0.0);
      boxes.push_back(std::move(box));
    }
  }
  if (boxes.empty()) return nullptr;
  // The rule's last_timestamp is the triggering window's start in µs since the epoch.
  const int64_t last_us = JsonInt(details, "last_timestamp", -1);
  return {{"boxes", std::move(boxes)},
          {"triggered_at_s", last_us >= 0 ? nlohmann::json(static_cast<double>(last_us * 1000 - start_ns) / 1e9)
                                          : nlohmann::json()}};
}

nlohmann::json BottleneckCauses(const nlohmann::json& details) {
  return {{"causes", SharesLargestFirst(JsonObject(details, "general"), "name", Readable)},
          {"step_phases", SharesLargestFirst(JsonObject(details, "phase"), "phase", StepPhaseOfRulesName)}};
}

}  // namespace stepscope::report
