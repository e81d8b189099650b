// The Mann-Whitney U test against values computed independently: scipy's documented example
// and pair counting (U = #{x > y} + #{x == y} / 2) with the tie-corrected normal approximation
// worked out by hand in Python (math.erfc), as docs/compare.md shows.
#include "compare/mann_whitney.h"

#include <gtest/gtest.h>

#include <vector>

namespace stepscope::compare {
namespace {

TEST(MannWhitneyTest, MatchesScipyDocumentedExample) {
  // scipy.stats.mannwhitneyu(males, females, method="asymptotic") documents
  // statistic=17.0, pvalue=0.11134688653314041.
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const MannWhitneyResult result = MannWhitneyU(males, females);
  ASSERT_TRUE(result.valid);
  EXPECT_DOUBLE_EQ(result.u, 17.0);
  EXPECT_NEAR(result.z, 1.5921683328090657, 1e-12);
  EXPECT_NEAR(result.p_value, 0.11134688653314041, 1e-12);
}

TEST(MannWhitneyTest, CorrectsForTies) {
  // Ties within and across samples: U = 8.5 by pair counting; tie groups 2 (x2), 3 (x3),
  // 4 (x3), 5 (x2), 6 (x2) give sum(t^3 - t) = 6 + 24 + 24 + 6 + 6 = 66.
  const std::vector<double> x = {1, 2, 2, 3, 3, 3, 4};
  const std::vector<double> y = {2, 3, 4, 4, 5, 5, 6, 6};
  const MannWhitneyResult result = MannWhitneyU(x, y);
  EXPECT_DOUBLE_EQ(result.u, 8.5);
  EXPECT_NEAR(result.z, 2.2391714737574007, 1e-12);
  EXPECT_NEAR(result.p_value, 0.025144761173357396, 1e-12);
}

TEST(MannWhitneyTest, SeparatedSamplesAreSignificant) {
  const std::vector<double> x = {10.0, 10.5, 11.0, 10.2, 10.1, 10.3};
  const std::vector<double> y = {12.0, 12.5, 11.9, 12.2, 13.0, 12.1, 12.4};
  const MannWhitneyResult result = MannWhitneyU(x, y);
  EXPECT_DOUBLE_EQ(result.u, 0.0);
  EXPECT_NEAR(result.p_value, 0.0034052358212947687, 1e-12);
  // Swapping the samples gives the other U and the same two-sided p-value.
  const MannWhitneyResult swapped = MannWhitneyU(y, x);
  EXPECT_DOUBLE_EQ(swapped.u, 42.0);
  EXPECT_NEAR(swapped.p_value, result.p_value, 1e-15);
}

TEST(MannWhitneyTest, AllEqualValuesGiveOne) {
  const std::vector<double> x = {5, 5, 5};
  const std::vector<double> y = {5, 5};
  const MannWhitneyResult result = MannWhitneyU(x, y);
  ASSERT_TRUE(result.valid);
  EXPECT_DOUBLE_EQ(result.u, 3.0);
  EXPECT_EQ(result.p_value, 1.0);
}

TEST(MannWhitneyTest, EmptySampleIsInvalid) {
  const std::vector<double> x = {1, 2};
  EXPECT_FALSE(MannWhitneyU(x, {}).valid);
  EXPECT_FALSE(MannWhitneyU({}, x).valid);
}

}  // namespace
}  // namespace stepscope::compare
