// The two-sided Mann-Whitney U test (Wilcoxon rank-sum) with the normal approximation, tie
// correction and continuity correction, as scipy.stats.mannwhitneyu(x, y, method="asymptotic",
// alternative="two-sided") computes it. `stepscope compare` uses it to say whether two runs'
// step-time distributions differ: step times are skewed and heavy-tailed, so a rank test is
// safer than comparing means.
//
// Callers: run_comparison.cc. Pure function; thread-safe.
#pragma once

#include <span>

namespace stepscope::compare {

struct MannWhitneyResult {
  bool valid = false;  // false when either sample is empty
  double u = 0;        // U of the first sample: rank sum of x - n_x (n_x + 1) / 2 (scipy's statistic)
  double z = 0;        // (max(U_x, U_y) - n_x n_y / 2 - 0.5) / sigma; 0 when sigma is 0
  double p_value = 1;  // two-sided, in [0, 1]; 1 when every value is equal (sigma 0)
};

MannWhitneyResult MannWhitneyU(std::span<const double> x, std::span<const double> y);

}  // namespace stepscope::compare
