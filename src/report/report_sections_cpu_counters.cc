#include "report/report_sections_cpu_counters.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/numerics.h"
#include "analysis/vocabulary.h"

namespace stepscope::report {
namespace {

// The node-level rows, in the report's order: the total over CPUs, or the job's processes.
struct CounterRow {
  std::string_view leaf;
  const char* label;
  const char* unit;
};
constexpr std::array<CounterRow, 7> kRows = {{
    {analysis::kPerfIpc, "IPC", "instructions/cycle"},
    {analysis::kPerfCacheMissesPerS, "Cache misses", "/s"},
    {analysis::kPerfBranchMissesPerS, "Branch misses", "/s"},
    {analysis::kPerfContextSwitchesPerS, "Context switches", "/s"},
    {analysis::kPerfPageFaultsPerS, "Page faults", "/s"},
    {analysis::kPerfCpuMigrationsPerS, "CPU migrations", "/s"},
    {analysis::kPerfTaskClockPct, "Job CPU time (task-clock)", "% of one core"},
}};

// Σ instructions / Σ cycles of one CPU over the job (each sample a rate over one interval).
struct CpuIpc {
  int index = -1;
  std::string name;
  double instructions = 0, cycles = 0;
};

}  // namespace

nlohmann::json BuildCpuCounters(const ReportContext& context, uint32_t node) {
  const analysis::Model& model = *context.model;
  const analysis::NodeFacts& facts = model.nodes()[node];
  const bool stepscope_node = facts.has_manifest && !context.imported();
  const store::ManifestCapabilities& capabilities = facts.manifest.capabilities;

  std::array<const analysis::SystemSeries*, kRows.size()> total{}, job{};
  std::vector<CpuIpc> cpus;
  auto cpu = [&](std::string_view name) -> CpuIpc& {
    auto it = std::find_if(cpus.begin(), cpus.end(), [&](const CpuIpc& c) { return c.name == name; });
    if (it != cpus.end()) return *it;
    cpus.push_back({analysis::DeviceIndex(name, "cpu"), std::string(name)});
    return cpus.back();
  };
  for (const analysis::SystemSeries& series : model.series()) {
    if (series.node != node || series.value.empty() || model.String(series.type) != analysis::kStepscopeSeriesType) {
      continue;
    }
    const analysis::PerfMetricParts parts = analysis::SplitPerfMetric(model.String(series.name));
    if (parts.leaf.empty()) continue;
    if (parts.scope == analysis::kPerfScopeTotal || parts.scope == analysis::kPerfScopeJob) {
      for (size_t i = 0; i < kRows.size(); ++i) {
        if (kRows[i].leaf == parts.leaf) (parts.scope == analysis::kPerfScopeJob ? job : total)[i] = &series;
      }
    } else if (analysis::DeviceIndex(parts.scope, "cpu") >= 0) {
      if (parts.leaf == analysis::kPerfInstructionsPerS) {
        for (double v : series.value) cpu(parts.scope).instructions += v;
      } else if (parts.leaf == analysis::kPerfCyclesPerS) {
        for (double v : series.value) cpu(parts.scope).cycles += v;
      }
    }
  }

  nlohmann::json metrics = nlohmann::json::array();
  const bool has_total = std::any_of(total.begin(), total.end(), [](const auto* s) { return s != nullptr; });
  for (size_t i = 0; i < kRows.size(); ++i) {
    const analysis::SystemSeries* series = has_total ? total[i] : job[i];
    if (series == nullptr) continue;
    nlohmann::json row = {{"metric", kRows[i].label}, {"unit", kRows[i].unit}};
    const std::vector<double> sorted = [&] {
      std::vector<double> values = series->value;
      std::sort(values.begin(), values.end());
      return values;
    }();
    row["max"] = sorted.back();
    row["p99"] = analysis::SortedQuantile(sorted, 0.99);
    row["p95"] = analysis::SortedQuantile(sorted, 0.95);
    row["p50"] = analysis::SortedQuantile(sorted, 0.50);
    row["min"] = sorted.front();
    metrics.push_back(std::move(row));
  }
  if (metrics.empty() && !stepscope_node) return nullptr;

  std::sort(cpus.begin(), cpus.end(), [](const CpuIpc& a, const CpuIpc& b) { return a.index < b.index; });
  nlohmann::json per_cpu = nlohmann::json::array();
  for (const CpuIpc& c : cpus) {
    if (c.cycles > 0) per_cpu.push_back({{"cpu", c.name}, {"ipc", c.instructions / c.cycles}});
  }

  std::string scope = capabilities.perf_scope;
  if (scope.empty() && !metrics.empty()) scope = has_total ? "per_cpu" : "job";
  nlohmann::json section = {{"scope", scope}, {"summary", capabilities.perf_reason},
                            {"metrics", std::move(metrics)}, {"per_cpu", std::move(per_cpu)}};
  if (section["metrics"].empty()) {
    // The capability says why; a run from before stepscope counted events says nothing.
    const bool opened = !capabilities.perf_scope.empty();
    section["why"] = !opened ? "No CPU performance counter was recorded on node " + facts.name +
                                   ": this run predates stepscope's counters."
                     : capabilities.perf_counters_available
                         ? "The counters on node " + facts.name + " were opened but gave no sample (the job ended "
                           "within one sampling interval, or the sampler was off)."
                         : "No CPU performance counter could be opened on node " + facts.name + ": " +
                               capabilities.perf_reason + ".";
  }
  return section;
}

}  // namespace stepscope::report
