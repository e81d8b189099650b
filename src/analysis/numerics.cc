#include "analysis/numerics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace stepscope::analysis {

double SortedQuantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  // numpy's _lerp: a + (b - a) * t, switching to b - (b - a) * (1 - t) for t >= 0.5.
  const double a = sorted[below], b = sorted[above];
  const double difference = b - a;
  return fraction >= 0.5 ? b - difference * (1.0 - fraction) : a + difference * fraction;
}

double Quantile(std::span<const double> values, double q) {
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  return SortedQuantile(sorted, q);
}

double Median(std::span<const double> values) { return Quantile(values, 0.5); }

double Mean(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double StdDev(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double mean = Mean(values);
  double sum = 0;
  for (double v : values) sum += (v - mean) * (v - mean);
  return std::sqrt(sum / static_cast<double>(values.size()));
}

Histogram EqualBinHistogram(std::span<const double> values, int bins) {
  Histogram histogram;
  bins = std::max(bins, 1);
  double low = 0, high = 1;
  if (!values.empty()) {
    auto [min_it, max_it] = std::minmax_element(values.begin(), values.end());
    low = *min_it;
    high = *max_it;
    if (low == high) {
      low -= 0.5;
      high += 0.5;
    }
  }
  histogram.edges.resize(static_cast<size_t>(bins) + 1);
  // numpy.linspace: start + i * step, the last edge exactly `high`.
  const double step = (high - low) / bins;
  for (int i = 0; i <= bins; ++i) histogram.edges[static_cast<size_t>(i)] = low + i * step;
  histogram.edges.back() = high;
  histogram.counts.assign(static_cast<size_t>(bins), 0.0);
  for (double v : values) {
    // numpy computes the bin from the normalised position, then corrects against the edges.
    auto bin = static_cast<int64_t>((v - low) / (high - low) * bins);
    bin = std::clamp<int64_t>(bin, 0, bins - 1);
    if (v < histogram.edges[static_cast<size_t>(bin)]) --bin;
    else if (bin + 1 < bins && v >= histogram.edges[static_cast<size_t>(bin) + 1]) ++bin;
    histogram.counts[static_cast<size_t>(std::clamp<int64_t>(bin, 0, bins - 1))] += 1;
  }
  return histogram;
}

Histogram EdgeHistogram(std::span<const double> values, std::span<const double> edges) {
  Histogram histogram;
  histogram.edges.assign(edges.begin(), edges.end());
  if (edges.size() < 2) return histogram;
  histogram.counts.assign(edges.size() - 1, 0.0);
  for (double v : values) {
    if (v < edges.front() || v > edges.back()) continue;
    auto it = std::upper_bound(edges.begin(), edges.end(), v);
    size_t bin = static_cast<size_t>(it - edges.begin());
    bin = bin == 0 ? 0 : bin - 1;
    if (bin >= histogram.counts.size()) bin = histogram.counts.size() - 1;  // v == last edge
    histogram.counts[bin] += 1;
  }
  return histogram;
}

double JensenShannonDivergence(std::span<const double> p, std::span<const double> q) {
  const size_t n = std::min(p.size(), q.size());
  const double p_sum = std::accumulate(p.begin(), p.begin() + n, 0.0);
  const double q_sum = std::accumulate(q.begin(), q.begin() + n, 0.0);
  if (p_sum <= 0 || q_sum <= 0) return 0;
  double divergence = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = p[i] / p_sum, b = q[i] / q_sum, m = (a + b) / 2;
    if (a > 0) divergence += 0.5 * a * std::log(a / m);
    if (b > 0) divergence += 0.5 * b * std::log(b / m);
  }
  return std::max(divergence, 0.0);
}

BoxStats ComputeBoxStats(std::span<const double> values) {
  BoxStats stats;
  if (values.empty()) return stats;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.p05 = SortedQuantile(sorted, 0.05);
  stats.p25 = SortedQuantile(sorted, 0.25);
  stats.p50 = SortedQuantile(sorted, 0.50);
  stats.p75 = SortedQuantile(sorted, 0.75);
  stats.p95 = SortedQuantile(sorted, 0.95);
  stats.p99 = SortedQuantile(sorted, 0.99);
  const double iqr = stats.p75 - stats.p25;
  stats.upper = std::min(stats.p75 + 1.5 * iqr, stats.max);
  stats.lower = std::max(stats.p25 - 1.5 * iqr, stats.min);
  return stats;
}

}  // namespace stepscope::analysis
