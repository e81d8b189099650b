#include "sampler/keyed_counters.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

using Counters = KeyedCounters<2>;

TEST(KeyedCounters, FirstUpdateYieldsNothing) {
  Counters counters;
  EXPECT_FALSE(counters.Update({{"a", {1, 2}}}).has_value());
}

TEST(KeyedCounters, SumsDeltasOverKeysInAnyOrder) {
  Counters counters;
  (void)counters.Update({{"b", {10, 100}}, {"a", {1, 2}}});
  std::optional<Counters::Sums> sums = counters.Update({{"a", {4, 2}}, {"b", {20, 150}}});
  ASSERT_TRUE(sums.has_value());
  EXPECT_EQ((*sums)[0], std::optional<uint64_t>(13));
  EXPECT_EQ((*sums)[1], std::optional<uint64_t>(50));
}

TEST(KeyedCounters, ABackwardsCounterInvalidatesOnlyItsOwnSum) {
  Counters counters;
  (void)counters.Update({{"a", {10, 10}}, {"b", {10, 10}}});
  std::optional<Counters::Sums> sums = counters.Update({{"a", {12, 13}}, {"b", {5, 11}}});
  ASSERT_TRUE(sums.has_value());
  EXPECT_FALSE((*sums)[0].has_value());
  EXPECT_EQ((*sums)[1], std::optional<uint64_t>(4));
}

TEST(KeyedCounters, ADisappearedKeyInvalidatesEverySumOnce) {
  Counters counters;
  (void)counters.Update({{"a", {10, 10}}, {"b", {10, 10}}});
  std::optional<Counters::Sums> sums = counters.Update({{"a", {12, 13}}});
  ASSERT_TRUE(sums.has_value());
  EXPECT_FALSE((*sums)[0].has_value());
  EXPECT_FALSE((*sums)[1].has_value());
  sums = counters.Update({{"a", {15, 13}}});
  EXPECT_EQ((*sums)[0], std::optional<uint64_t>(3));
}

TEST(KeyedCounters, ANewKeyIsOnlyABaseline) {
  Counters counters;
  (void)counters.Update({{"a", {10, 10}}});
  std::optional<Counters::Sums> sums = counters.Update({{"a", {11, 11}}, {"new", {1000, 1000}}});
  EXPECT_EQ((*sums)[0], std::optional<uint64_t>(1));
  sums = counters.Update({{"a", {12, 12}}, {"new", {1005, 1000}}});
  EXPECT_EQ((*sums)[0], std::optional<uint64_t>(6));
  EXPECT_EQ((*sums)[1], std::optional<uint64_t>(1));
}

TEST(KeyedCounters, DuplicateKeysInvalidateEverySum) {
  Counters counters;
  (void)counters.Update({{"a", {1, 1}}});
  std::optional<Counters::Sums> sums = counters.Update({{"a", {2, 2}}, {"a", {3, 3}}});
  EXPECT_FALSE((*sums)[0].has_value());
  EXPECT_FALSE((*sums)[1].has_value());
}

}  // namespace
}  // namespace stepscope
