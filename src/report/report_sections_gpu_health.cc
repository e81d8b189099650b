#include "report/report_sections_gpu_health.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/vocabulary.h"

namespace stepscope::report {
namespace {

constexpr size_t kMaxXidListed = 50;

// {mean, max} of a series' values, NaNs (no sample) left out; null when there is none.
nlohmann::json MeanMax(const analysis::SystemSeries& series) {
  double sum = 0, max = 0;
  size_t count = 0;
  for (double v : series.value) {
    if (std::isnan(v)) continue;
    max = count == 0 ? v : std::max(max, v);
    sum += v;
    ++count;
  }
  if (count == 0) return nullptr;
  return {{"mean", sum / static_cast<double>(count)}, {"max", max}};
}

// The rise of a volatile total over the run: positive steps summed; a fall (a driver reload)
// starts a new base.
double Rise(const analysis::SystemSeries& series) {
  double rise = 0, last = NAN;
  for (double v : series.value) {
    if (std::isnan(v)) continue;
    if (!std::isnan(last) && v > last) rise += v - last;
    last = v;
  }
  return rise;
}

// Whether two series were sampled at the same times (the NVML source writes a GPU's throttle
// reasons in the same poll), so their samples pair up index by index.
bool SameTimes(const analysis::SystemSeries& a, const analysis::SystemSeries& b) {
  if (a.time_ns.size() != b.time_ns.size()) return false;
  for (size_t i = 0; i < a.time_ns.size(); ++i) {
    if (a.time_ns[i] != b.time_ns[i]) return false;
  }
  return true;
}

struct GpuSeries {
  std::vector<std::pair<const analysis::GpuThrottleReason*, const analysis::SystemSeries*>> throttle;
  std::map<int64_t, nlohmann::json> processes;  // by pid
};

}  // namespace

std::map<std::pair<uint32_t, int>, nlohmann::json> BuildGpuHealth(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  std::map<std::pair<uint32_t, int>, nlohmann::json> health;
  std::map<std::pair<uint32_t, int>, GpuSeries> gpus;
  for (const analysis::SystemSeries& series : model.series()) {
    if (model.String(series.type) != analysis::kStepscopeSeriesType || series.value.empty()) continue;
    const analysis::GpuMetricParts parts = analysis::ParseGpuMetric(model.String(series.name));
    if (parts.gpu < 0) continue;
    const std::pair<uint32_t, int> key{series.node, parts.gpu};
    const std::string leaf(parts.leaf);
    if (parts.pid >= 0) {
      if (leaf != "sm_util_pct" && leaf != "memory_used_bytes") continue;
      nlohmann::json& process = gpus[key].processes[parts.pid];
      process["pid"] = parts.pid;
      if (nlohmann::json figures = MeanMax(series); !figures.is_null()) process[leaf] = std::move(figures);
      continue;
    }
    if (leaf == "pcie_tx_bytes_per_s" || leaf == "pcie_rx_bytes_per_s" || leaf == "sm_activity_pct" ||
        leaf == "tensor_activity_pct") {
      if (nlohmann::json figures = MeanMax(series); !figures.is_null()) health[key][leaf] = std::move(figures);
    } else if (leaf == "ecc_corrected_errors" || leaf == "ecc_uncorrected_errors") {
      health[key][leaf] = Rise(series);
    } else if (leaf == "xid") {
      nlohmann::json& events = health[key]["xid"];
      if (!events.is_array()) events = nlohmann::json::array();
      for (size_t i = 0; i < series.value.size(); ++i) {
        if (std::isnan(series.value[i])) continue;
        health[key]["xid_count"] = health[key].value("xid_count", 0) + 1;
        if (events.size() >= kMaxXidListed) continue;
        events.push_back({{"t_s", static_cast<double>(series.time_ns[i] - context.start_ns) / 1e9},
                          {"code", static_cast<int64_t>(series.value[i])}});
      }
    } else if (parts.leaf.starts_with("throttle_")) {
      if (const analysis::GpuThrottleReason* reason = analysis::FindGpuThrottleReason(parts.leaf)) {
        gpus[key].throttle.emplace_back(reason, &series);
      }
    }
  }
  for (auto& [key, series] : gpus) {
    if (!series.throttle.empty()) {
      nlohmann::json reasons = nlohmann::json::object();
      for (const auto& [reason, s] : series.throttle) {
        const nlohmann::json figures = MeanMax(*s);
        if (!figures.is_null()) reasons[std::string(reason->leaf)] = figures["mean"];
      }
      nlohmann::json throttle = {{"samples", series.throttle.front().second->value.size()},
                                 {"reasons", std::move(reasons)}};
      // The share of samples with any slowdown (idle is none), where the reasons pair up.
      bool aligned = true;
      for (const auto& [reason, s] : series.throttle) aligned = aligned && SameTimes(*s, *series.throttle.front().second);
      if (aligned) {
        size_t throttled = 0;
        const size_t samples = series.throttle.front().second->value.size();
        for (size_t i = 0; i < samples; ++i) {
          bool any = false;
          for (const auto& [reason, s] : series.throttle) any = any || (reason->slowdown && s->value[i] >= 0.5);
          throttled += any ? 1 : 0;
        }
        throttle["throttled_share"] = samples ? static_cast<double>(throttled) / static_cast<double>(samples) : 0.0;
      }
      health[key]["throttle"] = std::move(throttle);
    }
    if (!series.processes.empty()) {
      nlohmann::json processes = nlohmann::json::array();
      for (auto& [pid, process] : series.processes) processes.push_back(std::move(process));
      health[key]["processes"] = std::move(processes);
    }
  }
  return health;
}

}  // namespace stepscope::report
