#include "rules/system_totals.h"

#include <algorithm>
#include <map>

namespace stepscope::rules {

std::pair<size_t, size_t> SampleRange(const Window& window, size_t index) {
  // A window built for another model (or a truncated vector) must not index out of range.
  if (index >= window.samples.size()) return {0, 0};
  return window.samples[index];
}

TimestampSums SumPerTimestamp(const Window& window, uint32_t node, std::string_view dimension,
                              std::string_view name) {
  TimestampSums result;
  if (window.model == nullptr) return result;
  const analysis::Model& model = *window.model;
  std::map<int64_t, double> sums;
  std::vector<analysis::StringId> seen_names;
  for (size_t i = 0; i < model.series().size(); ++i) {
    const analysis::SystemSeries& series = model.series()[i];
    if (series.node != node || model.String(series.dimension) != dimension) continue;
    if (!name.empty() && model.String(series.name) != name) continue;
    const auto [begin, end] = SampleRange(window, i);
    if (begin >= end) continue;
    if (std::find(seen_names.begin(), seen_names.end(), series.name) == seen_names.end()) {
      seen_names.push_back(series.name);
    }
    for (size_t k = begin; k < end; ++k) sums[series.time_ns[k]] += series.value[k];
  }
  result.series_count = seen_names.size();
  result.sums.reserve(sums.size());
  for (const auto& [time_ns, value] : sums) result.sums.push_back({time_ns, value});
  return result;
}

namespace {

std::vector<TimedValue> MeanPerTimestamp(const Window& window, uint32_t node, std::string_view dimension) {
  TimestampSums sums = SumPerTimestamp(window, node, dimension);
  if (sums.series_count == 0) return {};
  for (TimedValue& entry : sums.sums) entry.value /= static_cast<double>(sums.series_count);
  return std::move(sums.sums);
}

}  // namespace

std::vector<TimedValue> CpuTotals(const Window& window, uint32_t node) {
  return MeanPerTimestamp(window, node, "CPUUtilization");
}

std::vector<TimedValue> MeanGpuUtilization(const Window& window, uint32_t node) {
  return MeanPerTimestamp(window, node, "GPUUtilization");
}

analysis::BoxStats SortedBoxStats(std::span<const double> sorted) {
  analysis::BoxStats stats;
  if (sorted.empty()) return stats;
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.p05 = analysis::SortedQuantile(sorted, 0.05);
  stats.p25 = analysis::SortedQuantile(sorted, 0.25);
  stats.p50 = analysis::SortedQuantile(sorted, 0.50);
  stats.p75 = analysis::SortedQuantile(sorted, 0.75);
  stats.p95 = analysis::SortedQuantile(sorted, 0.95);
  stats.p99 = analysis::SortedQuantile(sorted, 0.99);
  const double iqr = stats.p75 - stats.p25;
  stats.upper = std::min(stats.p75 + 1.5 * iqr, stats.max);
  stats.lower = std::max(stats.p25 - 1.5 * iqr, stats.min);
  return stats;
}

void MergeSorted(std::vector<double>* sorted, std::span<const double> added) {
  const auto old_size = static_cast<std::ptrdiff_t>(sorted->size());
  sorted->insert(sorted->end(), added.begin(), added.end());
  std::sort(sorted->begin() + old_size, sorted->end());
  std::inplace_merge(sorted->begin(), sorted->begin() + old_size, sorted->end());
}

}  // namespace stepscope::rules
