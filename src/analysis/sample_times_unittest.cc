#include "analysis/sample_times.h"

#include <gtest/gtest.h>

#include <vector>

#include "analysis/model.h"

namespace stepscope::analysis {
namespace {

std::vector<int64_t> Times(const SampleTimes& times) { return times.ToVector(); }

TEST(SampleTimesTest, SeriesPolledTogetherShareOneTimeline) {
  SampleTimelines node;
  SampleTimes cpu0, cpu1, gpu0;
  for (int64_t t = 0; t < 1000; ++t) {
    node.Append(cpu0, t * 10);
    node.Append(cpu1, t * 10);
    node.Append(gpu0, t * 10);
  }
  EXPECT_EQ(cpu0.data(), cpu1.data());
  EXPECT_EQ(cpu0.data(), gpu0.data());
  EXPECT_EQ(gpu0.size(), 1000u);
  EXPECT_EQ(gpu0.back(), 9990);
  // One timeline, its bytes split among the three.
  EXPECT_LT(cpu0.ApproximateBytes() + cpu1.ApproximateBytes() + gpu0.ApproximateBytes(), 2 * 1000 * sizeof(int64_t));
}

TEST(SampleTimesTest, ASeriesThatSkipsAPollKeepsItsOwnTimesAndTheOthersStillShare) {
  SampleTimelines node;
  SampleTimes a, b, c;
  std::vector<int64_t> expected_b;
  for (int64_t t = 0; t < 100; ++t) {
    node.Append(a, t);
    if (t != 50) {
      node.Append(b, t);
      expected_b.push_back(t);
    }
    node.Append(c, t);
  }
  EXPECT_EQ(a.data(), c.data());
  EXPECT_NE(a.data(), b.data());
  EXPECT_EQ(Times(b), expected_b);
  EXPECT_EQ(a.size(), 100u);
  EXPECT_EQ(a[50], 50);
}

TEST(SampleTimesTest, AppendingNeverChangesWhatAnotherSeriesAlreadyHas) {
  SampleTimelines node;
  SampleTimes leader, follower;
  for (int64_t t = 0; t < 10; ++t) node.Append(leader, t);
  for (int64_t t = 0; t < 5; ++t) node.Append(follower, t);
  // The follower departs from the leader's timeline: the leader's timestamps stay.
  node.Append(follower, 100);
  EXPECT_EQ(Times(leader), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(Times(follower), (std::vector<int64_t>{0, 1, 2, 3, 4, 100}));
}

TEST(SampleTimesTest, TwoPollRatesOnOneNodeEachShareTheirOwnTimeline) {
  SampleTimelines node;
  std::vector<SampleTimes> fast(4), slow(4);
  for (int64_t t = 0; t < 200; ++t) {
    // The slow series are created first and poll every other instant.
    if (t % 2 == 0) {
      for (SampleTimes& series : slow) node.Append(series, t);
    }
    for (SampleTimes& series : fast) node.Append(series, t);
  }
  for (const SampleTimes& series : fast) {
    EXPECT_EQ(series.size(), 200u);
    EXPECT_EQ(series.data(), fast[0].data());
  }
  for (const SampleTimes& series : slow) {
    EXPECT_EQ(series.size(), 100u);
    EXPECT_EQ(series.data(), slow[0].data());
    EXPECT_EQ(series.back(), 198);
  }
}

TEST(SampleTimesTest, IrregularSeriesEndUpAloneWithEveryTimestamp) {
  SampleTimelines node;
  SampleTimes regular, irregular;
  std::vector<int64_t> expected;
  for (int64_t t = 0; t < 1000; ++t) {
    node.Append(regular, t * 2);
    const int64_t mine = t * 2 + (t % 3 == 0 ? 1 : 0);
    node.Append(irregular, mine);
    expected.push_back(mine);
  }
  EXPECT_EQ(Times(irregular), expected);
  EXPECT_EQ(regular.size(), 1000u);
  EXPECT_EQ(regular.back(), 1998);
}

TEST(SampleTimesTest, PlainPushBackCopiesOnlyWhenItMustDepart) {
  SampleTimes own = {1, 2, 3};
  SampleTimes copy = own;  // shares
  copy.push_back(4);       // at the end: extends the timeline, `own` still ends at 3
  EXPECT_EQ(Times(own), (std::vector<int64_t>{1, 2, 3}));
  own.push_back(5);  // the timeline has 4 here: `own` departs on a copy
  EXPECT_EQ(Times(own), (std::vector<int64_t>{1, 2, 3, 5}));
  EXPECT_EQ(Times(copy), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(SampleTimesTest, TheModelBuilderSharesANodesTimestampsAndKeepsEachSeriesExact) {
  ModelBuilder builder(ModelSource::kStepscope);
  NodeFacts facts;
  facts.name = "n0";
  const uint32_t node = builder.AddNode(facts);
  const uint32_t cpu = builder.SeriesFor(node, "cpu", "cpu0", "CPUUtilization");
  const uint32_t gpu = builder.SeriesFor(node, "gpu", "gpu0", "GPUUtilization");
  const uint32_t late = builder.SeriesFor(node, "process", "p", "CPUUtilization");
  for (int64_t t = 1; t <= 100; ++t) {
    builder.AddSample(cpu, t * 1000, static_cast<double>(t));
    builder.AddSample(gpu, t * 1000, static_cast<double>(2 * t));
    if (t > 40) builder.AddSample(late, t * 1000, 1.0);
  }
  Model model = std::move(builder).Finish();
  const SystemSeries& cpu_series = model.series()[cpu];
  const SystemSeries& gpu_series = model.series()[gpu];
  const SystemSeries& late_series = model.series()[late];
  EXPECT_EQ(cpu_series.time_ns.data(), gpu_series.time_ns.data());
  EXPECT_EQ(gpu_series.time_ns.size(), 100u);
  EXPECT_EQ(gpu_series.value[99], 200.0);
  EXPECT_EQ(late_series.time_ns.size(), 60u);
  EXPECT_EQ(late_series.time_ns.front(), 41000);

  // A refresh continues the same timelines.
  ModelBuilder more(std::move(model));
  const uint32_t cpu_again = more.SeriesFor(0, "cpu", "cpu0", "CPUUtilization");
  const uint32_t gpu_again = more.SeriesFor(0, "gpu", "gpu0", "GPUUtilization");
  more.AddSample(cpu_again, 101000, 1.0);
  more.AddSample(gpu_again, 101000, 1.0);
  Model refreshed = std::move(more).Finish();
  EXPECT_EQ(refreshed.series()[cpu].time_ns.size(), 101u);
  EXPECT_EQ(refreshed.series()[cpu].time_ns.data(), refreshed.series()[gpu].time_ns.data());
}

}  // namespace
}  // namespace stepscope::analysis
