#include "report/report_sections_overhead.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/vocabulary.h"
#include "report/report_model_series.h"
#include "base/json_fields.h"

namespace stepscope::report {

namespace {

// The system sampler's own CPU time as a share of one core over the job (the model's overhead
// facts, from each node's manifest); the highest node's, or null when no node recorded both.
nlohmann::json SamplerCpuPct(const analysis::Model& model) {
  const double share = model.Overhead().sampler_cpu_share;
  return share < 0 ? nlohmann::json(nullptr) : nlohmann::json(share * 100.0);
}

}  // namespace

nlohmann::json BuildOverhead(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  if (context.imported() || context.run_info == nullptr) {
    return Unavailable("This run was " + SourceDescription(model) +
                       ", not recorded by stepscope: there is no recording overhead to show.");
  }
  const nlohmann::json& info = *context.run_info;
  // stepscope's own spans (detail windows stopping and writing, control files applied) are time
  // the job spent on profiling.
  struct SpanTotal {
    int64_t count = 0;
    int64_t ns = 0;
  };
  std::unordered_map<analysis::StringId, SpanTotal> totals;
  const analysis::StringId own_phase = model.FindString(analysis::kStepscopePhase);
  if (own_phase != analysis::kEmptyString) {
    for (const analysis::FrameworkEvent& event : model.events()) {
      if (event.phase != own_phase || event.kind != analysis::EventKind::kSpan) continue;
      SpanTotal& total = totals[event.name];
      ++total.count;
      total.ns += event.duration_ns();
    }
  }
  std::vector<std::pair<std::string_view, SpanTotal>> rows;
  for (const auto& [name, total] : totals) rows.emplace_back(model.String(name), total);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.ns != b.second.ns ? a.second.ns > b.second.ns : a.first < b.first;
  });
  nlohmann::json spans = nlohmann::json::array();
  for (size_t i = 0; i < rows.size() && i < kMaxTableRows; ++i) {
    spans.push_back({{"name", rows[i].first}, {"count", rows[i].second.count}, {"total_ms", NsToMs(rows[i].second.ns)}});
  }
  return {{"available", true},
          {"dropped_events", JsonUint(info, "dropped_events", 0)},
          {"bytes_on_disk", JsonObject(info, "bytes_on_disk")},
          {"spans", std::move(spans)},
          {"sampler_cpu_pct", SamplerCpuPct(model)}};
}

nlohmann::json BuildCapabilities(const ReportContext& context) {
  if (context.imported() || context.run_info == nullptr) {
    return Unavailable("This run was " + SourceDescription(*context.model) +
                       ": what its machines could measure (NVML, CUPTI, perf counters) was not recorded.");
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const nlohmann::json& node : JsonArray(*context.run_info, "nodes")) {
    nodes.push_back({{"node", JsonString(node, "name")}, {"capabilities", JsonObject(node, "capabilities")}});
  }
  return {{"available", true}, {"nodes", std::move(nodes)}};
}

}  // namespace stepscope::report
