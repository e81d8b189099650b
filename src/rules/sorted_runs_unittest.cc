#include "rules/sorted_runs.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace stepscope::rules {
namespace {

TEST(SortedRunsTest, EmptyAnswersZero) {
  SortedRuns runs;
  EXPECT_EQ(runs.size(), 0u);
  EXPECT_EQ(runs.CountAbove(0), 0u);
  EXPECT_EQ(runs.CountBetween(-1, 1), 0u);
  EXPECT_TRUE(runs.IndicesAbove(0).empty());
  EXPECT_TRUE(runs.SortedValues().empty());
}

TEST(SortedRunsTest, CountsAreStrictAboveAndClosedBetween) {
  SortedRuns runs;
  runs.Add({{3, 0}, {1, 1}, {2, 2}});
  runs.Add({{2, 3}, {5, 4}});
  EXPECT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs.CountAbove(2), 2u);  // 3 and 5; the two 2s are not above 2
  EXPECT_EQ(runs.CountAbove(0.5), 5u);
  EXPECT_EQ(runs.CountAbove(5), 0u);
  EXPECT_EQ(runs.CountBetween(2, 3), 3u);
  EXPECT_EQ(runs.CountBetween(3, 2), 0u);
  EXPECT_EQ(runs.IndicesAbove(2), (std::vector<size_t>{0, 4}));
  EXPECT_EQ(runs.SortedValues(), (std::vector<double>{1, 2, 2, 3, 5}));
}

TEST(SortedRunsTest, SparseAndRepeatedIndicesStillComeOutSorted) {
  SortedRuns runs;
  runs.Add({{9, 1'000'000}, {8, 7}, {7, 7}, {1, 3}});
  EXPECT_EQ(runs.IndicesAbove(5), (std::vector<size_t>{7, 7, 1'000'000}));
  SortedRuns dense;
  dense.Add({{9, 5}, {8, 5}, {7, 2}});
  EXPECT_EQ(dense.IndicesAbove(1), (std::vector<size_t>{2, 5, 5}));
}

// Against brute force over many uneven batches (which exercises the run merging).
TEST(SortedRunsTest, MatchesBruteForceOverManyBatches) {
  SortedRuns runs;
  std::vector<double> all;
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>((state >> 33) % 1000) / 10.0;
  };
  for (int batch = 0; batch < 300; ++batch) {
    std::vector<SortedRuns::Entry> entries;
    const int size = 1 + batch % 17;
    for (int i = 0; i < size; ++i) {
      entries.push_back({next(), all.size()});
      all.push_back(entries.back().value);
    }
    runs.Add(std::move(entries));
    const double x = next();
    std::vector<size_t> expected_indices;
    for (size_t j = 0; j < all.size(); ++j) {
      if (all[j] > x) expected_indices.push_back(j);
    }
    ASSERT_EQ(runs.CountAbove(x), expected_indices.size()) << "batch " << batch;
    ASSERT_EQ(runs.IndicesAbove(x), expected_indices) << "batch " << batch;
    const size_t between = static_cast<size_t>(
        std::count_if(all.begin(), all.end(), [&](double v) { return v >= x - 5 && v <= x + 5; }));
    ASSERT_EQ(runs.CountBetween(x - 5, x + 5), between) << "batch " << batch;
  }
  std::vector<double> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(runs.size(), all.size());
  EXPECT_EQ(runs.SortedValues(), sorted);
}

}  // namespace
}  // namespace stepscope::rules
