#include "compare/utilization.h"

#include <map>
#include <utility>

#include "analysis/numerics.h"

namespace stepscope::compare {
namespace {

// Per (node, exact timestamp), the mean of the values of every series of `type` whose dimension
// (or name, when `by_name`) is `key`; then all those means pooled. Exact timestamps, as the
// SageMaker reference derives its CPU total (a sampler writes all cores at one instant).
std::vector<double> MeansPerTimestamp(const analysis::Model& model, std::string_view type, std::string_view key,
                                      bool by_name) {
  std::map<std::pair<uint32_t, int64_t>, std::pair<double, int>> sums;
  for (const analysis::SystemSeries& series : model.series()) {
    if (model.String(series.type) != type) continue;
    if ((by_name ? model.String(series.name) : model.String(series.dimension)) != key) continue;
    for (size_t i = 0; i < series.time_ns.size(); ++i) {
      auto& [sum, count] = sums[{series.node, series.time_ns[i]}];
      sum += series.value[i];
      ++count;
    }
  }
  std::vector<double> means;
  means.reserve(sums.size());
  for (const auto& [key_time, sum_count] : sums) means.push_back(sum_count.first / sum_count.second);
  return means;
}

std::optional<double> P95(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return analysis::Quantile(values, 0.95);
}

}  // namespace

std::vector<UtilizationP95> ComputeUtilizationP95(const analysis::Model& model) {
  return {
      {"CPU", P95(MeansPerTimestamp(model, "cpu", "CPUUtilization", /*by_name=*/false))},
      {"GPU", P95(MeansPerTimestamp(model, "gpu", "GPUUtilization", /*by_name=*/false))},
      {"CPU memory", P95(MeansPerTimestamp(model, "memory", "MemoryUsedPercent", /*by_name=*/true))},
      {"GPU memory", P95(MeansPerTimestamp(model, "gpu", "GPUMemoryUtilization", /*by_name=*/false))},
  };
}

}  // namespace stepscope::compare
