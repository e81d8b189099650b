#include "server/series_buckets.h"

#include <cmath>

#include <gtest/gtest.h>

namespace stepscope::server {
namespace {

TEST(SeriesBucketsTest, FewSamplesComeBackAsTheyAre) {
  const std::vector<int64_t> t = {10, 20, 30, 40};
  const std::vector<double> v = {1, NAN, 3, 4};
  const Buckets b = BucketSamples(t, v, 15, 40, 100);
  EXPECT_EQ(b.bucket_ns, 0);
  EXPECT_EQ(b.t_ns, (std::vector<int64_t>{30, 40}));  // 20 is NaN, 10 before the range
  EXPECT_EQ(b.mean, (std::vector<double>{3, 4}));
}

TEST(SeriesBucketsTest, ManySamplesNeverExceedThePointsAndKeepTheEnvelope) {
  std::vector<int64_t> t;
  std::vector<double> v;
  for (int64_t i = 0; i < 100000; ++i) {
    t.push_back(i * 100);
    v.push_back(i == 54321 ? 1000.0 : static_cast<double>(i % 10));
  }
  for (size_t points : {size_t{1}, size_t{7}, size_t{600}, size_t{4000}, size_t{1000000}}) {
    const Buckets b = BucketSamples(t, v, 0, t.back(), points);
    EXPECT_LE(b.t_ns.size(), std::min(points, kMaxSeriesPoints)) << points;
    EXPECT_GE(b.t_ns.size(), 1u);
    EXPECT_EQ(b.min.size(), b.t_ns.size());
    EXPECT_EQ(b.max.size(), b.t_ns.size());
    EXPECT_EQ(b.mean.size(), b.t_ns.size());
    EXPECT_EQ(*std::max_element(b.max.begin(), b.max.end()), 1000.0) << "the spike survives at " << points;
    EXPECT_EQ(*std::min_element(b.min.begin(), b.min.end()), 0.0);
  }
  const Buckets one = BucketSamples(t, v, 0, t.back(), 1);
  ASSERT_EQ(one.mean.size(), 1u);
  EXPECT_NEAR(one.mean[0], (4.5 * 100000 - 54321 % 10 + 1000) / 100000, 1e-9);  // one 1 became 1000
  EXPECT_EQ(one.t_ns[0], 0);
  EXPECT_GE(one.bucket_ns * 1, t.back() + 1);
}

TEST(SeriesBucketsTest, BucketsCoverOnlyTheAskedRange) {
  std::vector<int64_t> t;
  std::vector<double> v;
  for (int64_t i = 0; i < 1000; ++i) {
    t.push_back(i);
    v.push_back(static_cast<double>(i));
  }
  const Buckets b = BucketSamples(t, v, 100, 199, 10);
  ASSERT_EQ(b.t_ns.size(), 10u);
  EXPECT_EQ(b.bucket_ns, 10);
  EXPECT_EQ(b.t_ns.front(), 100);
  EXPECT_EQ(b.min.front(), 100);
  EXPECT_EQ(b.max.back(), 199);
  EXPECT_DOUBLE_EQ(b.mean[0], 104.5);
  EXPECT_TRUE(BucketSamples(t, v, 2000, 3000, 10).t_ns.empty());
  EXPECT_TRUE(BucketSamples(t, v, 300, 200, 10).t_ns.empty());
  EXPECT_TRUE(BucketSamples({}, {}, 0, 10, 10).t_ns.empty());
}

}  // namespace
}  // namespace stepscope::server
