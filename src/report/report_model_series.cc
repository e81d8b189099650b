#include "report/report_model_series.h"

#include <algorithm>
#include <cmath>

namespace stepscope::report {

std::vector<size_t> MinMaxDownsample(std::span<const double> values, size_t max_points) {
  const size_t n = values.size();
  max_points = std::max<size_t>(max_points, 2);  // a bucket needs room for its min and max
  std::vector<size_t> kept;
  if (n <= max_points) {
    kept.resize(n);
    for (size_t i = 0; i < n; ++i) kept[i] = i;
    return kept;
  }
  const size_t buckets = max_points / 2;
  kept.reserve(buckets * 2);
  for (size_t b = 0; b < buckets; ++b) {
    // Bucket b covers [b*n/buckets, (b+1)*n/buckets): sizes differ by at most one.
    const size_t begin = b * n / buckets;
    const size_t end = (b + 1) * n / buckets;
    size_t min_index = end, max_index = end;
    for (size_t i = begin; i < end; ++i) {
      const double v = values[i];
      if (std::isnan(v)) continue;
      if (min_index == end || v < values[min_index]) min_index = i;
      if (max_index == end || v > values[max_index]) max_index = i;
    }
    if (min_index == end) {  // all NaN: keep the bucket's first point so time stays covered
      kept.push_back(begin);
      continue;
    }
    if (min_index == max_index) {
      kept.push_back(min_index);
    } else {
      kept.push_back(std::min(min_index, max_index));
      kept.push_back(std::max(min_index, max_index));
    }
  }
  return kept;
}

double RoundForChart(double value) {
  if (!std::isfinite(value) || std::fabs(value) >= 1e12) return value;
  return std::nearbyint(value * 1e4) / 1e4;
}

nlohmann::json TimeSeriesJson(std::span<const int64_t> time_ns, std::span<const double> values, int64_t origin_ns,
                              size_t max_points) {
  const size_t n = std::min(time_ns.size(), values.size());
  const std::vector<size_t> kept = MinMaxDownsample(values.first(n), max_points);
  nlohmann::json t_s = nlohmann::json::array();
  nlohmann::json out_values = nlohmann::json::array();
  for (size_t i : kept) {
    t_s.push_back(std::nearbyint(static_cast<double>(time_ns[i] - origin_ns) / 1e3) / 1e6);
    out_values.push_back(RoundForChart(values[i]));
  }
  return {{"t_s", std::move(t_s)},
          {"values", std::move(out_values)},
          {"downsampled", kept.size() < n},
          {"original_points", n}};
}

nlohmann::json BoundedDetails(const nlohmann::json& details, size_t max_entries, bool* truncated) {
  if (details.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    size_t count = 0;
    for (auto it = details.begin(); it != details.end(); ++it) {
      if (count++ == max_entries) {
        *truncated = true;
        break;
      }
      out[it.key()] = BoundedDetails(it.value(), max_entries, truncated);
    }
    return out;
  }
  if (details.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < details.size(); ++i) {
      if (i == max_entries) {
        *truncated = true;
        break;
      }
      out.push_back(BoundedDetails(details[i], max_entries, truncated));
    }
    return out;
  }
  return details;
}

}  // namespace stepscope::report
