#include "report/report_model_series.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace stepscope::report {
namespace {

TEST(MinMaxDownsampleTest, KeepsEveryPointWhenUnderTheLimit) {
  const std::vector<double> values = {3, 1, 2};
  EXPECT_EQ(MinMaxDownsample(values, 4), (std::vector<size_t>{0, 1, 2}));
}

TEST(MinMaxDownsampleTest, KeepsEachBucketsMinAndMaxInTimeOrder) {
  // Two buckets of five: [5 1 9 3 4] keeps 1 (index 1) and 9 (index 2); [2 8 0 7 6] keeps 8
  // (index 6) before 0 (index 7).
  const std::vector<double> values = {5, 1, 9, 3, 4, 2, 8, 0, 7, 6};
  EXPECT_EQ(MinMaxDownsample(values, 4), (std::vector<size_t>{1, 2, 6, 7}));
}

TEST(MinMaxDownsampleTest, AFlatBucketKeepsOnePoint) {
  const std::vector<double> values = {1, 1, 1, 1, 0, 5};
  EXPECT_EQ(MinMaxDownsample(values, 4), (std::vector<size_t>{0, 4, 5}));
}

TEST(MinMaxDownsampleTest, LongSeriesKeepItsSpikeAndDipWithinTheLimit) {
  std::vector<double> values(100000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<double>(i) / 50.0);
  values[31337] = 1000;   // one-sample spike
  values[77777] = -1000;  // one-sample dip
  const std::vector<size_t> kept = MinMaxDownsample(values, 2000);
  EXPECT_EQ(kept.size(), 2000u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  EXPECT_NE(std::find(kept.begin(), kept.end(), 31337u), kept.end());
  EXPECT_NE(std::find(kept.begin(), kept.end(), 77777u), kept.end());
}

TEST(MinMaxDownsampleTest, NanNeverWinsABucket) {
  const std::vector<double> values = {NAN, 2, 1, NAN, NAN, NAN};
  EXPECT_EQ(MinMaxDownsample(values, 4), (std::vector<size_t>{1, 2, 3}));
}

TEST(TimeSeriesJsonTest, SecondsFromOriginAndFlags) {
  const std::vector<int64_t> time_ns = {1'000'000'000, 1'500'000'400, 3'000'000'000};
  const std::vector<double> values = {1.234567, 2, 3};
  const nlohmann::json series = TimeSeriesJson(time_ns, values, 1'000'000'000);
  EXPECT_EQ(series["t_s"], nlohmann::json::parse("[0.0, 0.5, 2.0]"));
  EXPECT_EQ(series["values"], nlohmann::json::parse("[1.2346, 2.0, 3.0]"));
  EXPECT_EQ(series["downsampled"], false);
  EXPECT_EQ(series["original_points"], 3);

  const nlohmann::json cut = TimeSeriesJson(time_ns, values, 0, 2);
  EXPECT_EQ(cut["downsampled"], true);
  EXPECT_EQ(cut["original_points"], 3);
  EXPECT_EQ(cut["values"], nlohmann::json::parse("[1.2346, 3.0]"));
}

TEST(BoundedDetailsTest, CutsLongObjectsAndArraysAndSaysSo) {
  const nlohmann::json details = nlohmann::json::parse(R"({"a": [1, 2, 3], "b": {"x": 1, "y": 2, "z": 3}, "c": 4})");
  bool truncated = false;
  EXPECT_EQ(BoundedDetails(details, 2, &truncated), nlohmann::json::parse(R"({"a": [1, 2], "b": {"x": 1, "y": 2}})"));
  EXPECT_TRUE(truncated);
  truncated = false;
  EXPECT_EQ(BoundedDetails(details, 3, &truncated), details);
  EXPECT_FALSE(truncated);
}

}  // namespace
}  // namespace stepscope::report
