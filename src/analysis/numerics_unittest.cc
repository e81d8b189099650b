#include "analysis/numerics.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace stepscope::analysis {
namespace {

// Expected values from numpy 1.24: np.quantile(v, q), np.std(v), np.histogram(v, bins).
TEST(Numerics, QuantileInterpolatesLinearlyLikeNumpy) {
  const std::vector<double> values = {7, 1, 3, 10, 4};
  EXPECT_DOUBLE_EQ(Quantile(values, 0.0), 1);
  EXPECT_DOUBLE_EQ(Quantile(values, 0.25), 3);
  EXPECT_DOUBLE_EQ(Quantile(values, 0.5), 4);
  EXPECT_DOUBLE_EQ(Quantile(values, 0.95), 9.4);
  EXPECT_DOUBLE_EQ(Quantile(values, 1.0), 10);
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{1, 2, 3, 4}), 2.5);
  EXPECT_TRUE(std::isnan(Quantile(std::vector<double>{}, 0.5)));
}

TEST(Numerics, StdDevIsThePopulationOne) {
  EXPECT_DOUBLE_EQ(StdDev(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9}), 2.0);
  EXPECT_DOUBLE_EQ(Mean(std::vector<double>{1, 2, 3}), 2.0);
}

TEST(Numerics, EqualBinHistogramClosesTheLastBin) {
  const Histogram h = EqualBinHistogram(std::vector<double>{0, 1, 2, 3, 4}, 4);
  EXPECT_EQ(h.counts, (std::vector<double>{1, 1, 1, 2}));
  EXPECT_EQ(h.edges, (std::vector<double>{0, 1, 2, 3, 4}));
}

TEST(Numerics, EqualBinHistogramOfOneValueWidensByHalf) {
  const Histogram h = EqualBinHistogram(std::vector<double>{5, 5}, 2);
  EXPECT_EQ(h.edges, (std::vector<double>{4.5, 5, 5.5}));
  EXPECT_EQ(h.counts, (std::vector<double>{0, 2}));
}

TEST(Numerics, EdgeHistogramDropsValuesOutsideTheEdges) {
  const std::vector<double> edges = {0, 50, 100};
  const Histogram h = EdgeHistogram(std::vector<double>{-1, 0, 49.9, 50, 100, 101}, edges);
  EXPECT_EQ(h.counts, (std::vector<double>{2, 2}));
}

TEST(Numerics, JensenShannonOfDisjointHistogramsIsLnTwo) {
  EXPECT_NEAR(JensenShannonDivergence(std::vector<double>{1, 0}, std::vector<double>{0, 3}), std::log(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(JensenShannonDivergence(std::vector<double>{1, 1}, std::vector<double>{2, 2}), 0);
  EXPECT_DOUBLE_EQ(JensenShannonDivergence(std::vector<double>{0, 0}, std::vector<double>{2, 2}), 0);
}

TEST(Numerics, BoxStatsClampWhiskersToTheData) {
  const BoxStats s = ComputeBoxStats(std::vector<double>{1, 2, 3, 4, 100});
  EXPECT_DOUBLE_EQ(s.p25, 2);
  EXPECT_DOUBLE_EQ(s.p75, 4);
  EXPECT_DOUBLE_EQ(s.upper, 7);   // 4 + 1.5 * 2
  EXPECT_DOUBLE_EQ(s.lower, 1);   // max(2 - 3, 1)
  EXPECT_DOUBLE_EQ(s.max, 100);
}

}  // namespace
}  // namespace stepscope::analysis
