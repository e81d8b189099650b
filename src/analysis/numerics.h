// The statistics the rules share, with the reference implementation's numerics (numpy defaults),
// so results match it to 1e-9 relative (shared/RULES.md §0 "Numerics").
#pragma once

#include <span>
#include <vector>

namespace stepscope::analysis {

// Linear interpolation between closest ranks (numpy's default "linear", R type 7); q in [0, 1].
// Sorts a copy; NaN for no values.
double Quantile(std::span<const double> values, double q);
// The same on values already sorted ascending.
double SortedQuantile(std::span<const double> sorted, double q);
double Median(std::span<const double> values);
double Mean(std::span<const double> values);
// Population standard deviation (ddof 0).
double StdDev(std::span<const double> values);

struct Histogram {
  std::vector<double> counts;  // one per bin
  std::vector<double> edges;   // counts.size() + 1
};
// `bins` equal bins on [min, max] ([min - 0.5, max + 0.5] when min == max); half-open except
// the last (numpy.histogram). No values: bins zeros on [0, 1].
Histogram EqualBinHistogram(std::span<const double> values, int bins);
// Explicit ascending edges; values outside [edges.front(), edges.back()] are dropped; the last
// bin is closed.
Histogram EdgeHistogram(std::span<const double> values, std::span<const double> edges);

// Jensen-Shannon divergence (natural log) of two histograms, each normalised to sum 1 first;
// the rules use its square root as the distance. Empty or all-zero histograms give 0.
double JensenShannonDivergence(std::span<const double> p, std::span<const double> q);

// Box-plot statistics as the reference's rules report them.
struct BoxStats {
  double min = 0, max = 0, p05 = 0, p25 = 0, p50 = 0, p75 = 0, p95 = 0, p99 = 0;
  double upper = 0;  // min(p75 + 1.5 * IQR, max)
  double lower = 0;  // max(p25 - 1.5 * IQR, min)
};
BoxStats ComputeBoxStats(std::span<const double> values);

}  // namespace stepscope::analysis
