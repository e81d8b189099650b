#include "compare/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace stepscope::compare {

MannWhitneyResult MannWhitneyU(std::span<const double> x, std::span<const double> y) {
  MannWhitneyResult result;
  if (x.empty() || y.empty()) return result;
  const double n_x = static_cast<double>(x.size());
  const double n_y = static_cast<double>(y.size());
  const double n = n_x + n_y;

  // Pool the samples, remembering which came from x, and give ties their average rank.
  struct Value {
    double value;
    bool from_x;
  };
  std::vector<Value> pooled;
  pooled.reserve(x.size() + y.size());
  for (double v : x) pooled.push_back({v, true});
  for (double v : y) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(), [](const Value& a, const Value& b) { return a.value < b.value; });
  double rank_sum_x = 0;
  double tie_term = 0;  // sum over tie groups of t^3 - t
  for (size_t begin = 0; begin < pooled.size();) {
    size_t end = begin + 1;
    while (end < pooled.size() && pooled[end].value == pooled[begin].value) ++end;
    const double t = static_cast<double>(end - begin);
    const double average_rank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2.0;
    for (size_t i = begin; i < end; ++i) {
      if (pooled[i].from_x) rank_sum_x += average_rank;
    }
    tie_term += t * t * t - t;
    begin = end;
  }

  const double u_x = rank_sum_x - n_x * (n_x + 1) / 2.0;
  const double u_y = n_x * n_y - u_x;
  const double mean_u = n_x * n_y / 2.0;
  const double variance = n_x * n_y / 12.0 * ((n + 1) - tie_term / (n * (n - 1)));
  result.valid = true;
  result.u = u_x;
  if (!(variance > 0)) return result;  // every value equal: no evidence of a difference
  // scipy takes the larger U, so the continuity correction (-0.5) moves z toward 0.
  result.z = (std::max(u_x, u_y) - mean_u - 0.5) / std::sqrt(variance);
  // Two-sided: 2 * P(Z > z) = erfc(z / sqrt 2); the correction can make z slightly negative.
  result.p_value = std::min(1.0, std::erfc(result.z / std::sqrt(2.0)));
  return result;
}

}  // namespace stepscope::compare
