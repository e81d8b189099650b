#include "report/report_sections_gpu.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <tuple>
#include <vector>

#include "analysis/numerics.h"
#include "analysis/vocabulary.h"
#include "report/report_model_series.h"
#include "report/report_sections_gpu_health.h"

namespace stepscope::report {

nlohmann::json BuildGpuSection(const ReportContext& context, std::string_view dimension) {
  const analysis::Model& model = *context.model;
  std::vector<std::tuple<uint32_t, int, const analysis::SystemSeries*>> gpus;
  for (const analysis::SystemSeries& series : model.series()) {
    if (model.String(series.type) != "gpu" || model.String(series.dimension) != dimension) continue;
    if (series.value.empty()) continue;
    gpus.emplace_back(series.node, analysis::DeviceIndex(model.String(series.name), "gpu"), &series);
  }
  if (gpus.empty()) {
    const char* what = dimension == "GPUUtilization" ? "utilization" : "memory utilization";
    if (!context.HasGpuSeries() && !context.imported()) {
      const std::string reason = context.NoGpuReason();
      return Unavailable(std::string("No GPU was seen on any node") + (reason.empty() ? "." : ": " + reason));
    }
    return Unavailable(std::string("No GPU ") + what + " was recorded (" + SourceDescription(model) + ").");
  }
  std::sort(gpus.begin(), gpus.end(), [&](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  // The utilization rows carry what else NVML recorded of the GPU (PCIe, throttling, errors,
  // the job's processes), where it did.
  std::map<std::pair<uint32_t, int>, nlohmann::json> health;
  if (dimension == "GPUUtilization") health = BuildGpuHealth(context);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [node, gpu, series] : gpus) {
    // Values come from disk: a NaN would break the sort's ordering (and means no sample).
    std::vector<double> sorted;
    sorted.reserve(series->value.size());
    for (double v : series->value) {
      if (!std::isnan(v)) sorted.push_back(v);
    }
    std::sort(sorted.begin(), sorted.end());
    nlohmann::json row = {{"node", model.nodes()[node].name}, {"gpu", gpu}};
    for (const auto& [key, q] : {std::pair<const char*, double>{"min", 0.0}, {"p5", 0.05}, {"p25", 0.25}, {"p50", 0.5},
                                 {"p75", 0.75}, {"p95", 0.95}, {"max", 1.0}}) {
      row[key] = analysis::SortedQuantile(sorted, q);
    }
    row["series"] = TimeSeriesJson(series->time_ns, series->value, context.start_ns);
    if (auto it = health.find({node, gpu}); it != health.end()) row["health"] = std::move(it->second);
    rows.push_back(std::move(row));
  }
  return {{"available", true}, {"gpus", std::move(rows)}};
}

}  // namespace stepscope::report
