#include "rules/sorted_runs.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace stepscope::rules {
namespace {

// The caller's values, by index (SortedRuns keeps only the indices).
struct Values {
  std::vector<double> of;
  double operator()(uint32_t index) const { return of.at(index); }
};

TEST(SortedRunsTest, EmptyAnswersZero) {
  SortedRuns runs;
  const Values values;
  EXPECT_EQ(runs.size(), 0u);
  EXPECT_EQ(runs.CountAbove(0, values), 0u);
  EXPECT_EQ(runs.CountBetween(-1, 1, values), 0u);
  EXPECT_TRUE(runs.IndicesAbove(0, values).empty());
  EXPECT_TRUE(runs.SortedValues(values).empty());
}

TEST(SortedRunsTest, CountsAreStrictAboveAndClosedBetween) {
  SortedRuns runs;
  const Values values{{3, 1, 2, 2, 5}};
  runs.Add({0, 1, 2}, values);
  runs.Add({3, 4}, values);
  EXPECT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs.CountAbove(2, values), 2u);  // 3 and 5; the two 2s are not above 2
  EXPECT_EQ(runs.CountAbove(0.5, values), 5u);
  EXPECT_EQ(runs.CountAbove(5, values), 0u);
  EXPECT_EQ(runs.CountBetween(2, 3, values), 3u);
  EXPECT_EQ(runs.CountBetween(3, 2, values), 0u);
  EXPECT_EQ(runs.IndicesAbove(2, values), (std::vector<size_t>{0, 4}));
  EXPECT_EQ(runs.SortedValues(values), (std::vector<double>{1, 2, 2, 3, 5}));
}

TEST(SortedRunsTest, SparseAndRepeatedIndicesStillComeOutSorted) {
  Values values;
  values.of.assign(1'000'001, 0);
  values.of[1'000'000] = 9, values.of[7] = 8, values.of[3] = 1;
  SortedRuns runs;
  runs.Add({1'000'000, 7, 7, 3}, values);
  EXPECT_EQ(runs.IndicesAbove(5, values), (std::vector<size_t>{7, 7, 1'000'000}));
  SortedRuns dense;
  dense.Add({5, 5, 2}, Values{{0, 0, 7, 0, 0, 9}});
  EXPECT_EQ(dense.IndicesAbove(1, Values{{0, 0, 7, 0, 0, 9}}), (std::vector<size_t>{2, 5, 5}));
}

// Against brute force over many uneven batches (which exercises the run merging).
TEST(SortedRunsTest, MatchesBruteForceOverManyBatches) {
  SortedRuns runs;
  Values all;
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>((state >> 33) % 1000) / 10.0;
  };
  for (int batch = 0; batch < 300; ++batch) {
    std::vector<uint32_t> indices;
    const int size = 1 + batch % 17;
    for (int i = 0; i < size; ++i) {
      indices.push_back(static_cast<uint32_t>(all.of.size()));
      all.of.push_back(next());
    }
    runs.Add(std::move(indices), all);
    const double x = next();
    std::vector<size_t> expected_indices;
    for (size_t j = 0; j < all.of.size(); ++j) {
      if (all.of[j] > x) expected_indices.push_back(j);
    }
    ASSERT_EQ(runs.CountAbove(x, all), expected_indices.size()) << "batch " << batch;
    ASSERT_EQ(runs.IndicesAbove(x, all), expected_indices) << "batch " << batch;
    const size_t between = static_cast<size_t>(
        std::count_if(all.of.begin(), all.of.end(), [&](double v) { return v >= x - 5 && v <= x + 5; }));
    ASSERT_EQ(runs.CountBetween(x - 5, x + 5, all), between) << "batch " << batch;
  }
  std::vector<double> sorted = all.of;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(runs.size(), all.of.size());
  EXPECT_EQ(runs.SortedValues(all), sorted);
}

}  // namespace
}  // namespace stepscope::rules
