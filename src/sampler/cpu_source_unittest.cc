#include "sampler/cpu_source.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "platform/linux/proc_test_data.h"
#include "sampler/fake_file_system.h"

namespace stepscope {
namespace {

using testing::FakeFileSystem;
using testing::ReadProcTestData;

std::map<std::string, double> ByName(const std::vector<MetricSample>& samples) {
  std::map<std::string, double> by_name;
  for (const MetricSample& sample : samples) by_name[sample.name] = sample.value;
  return by_name;
}

class CpuSourceTest : public ::testing::Test {
 protected:
  // Polls once with /proc/stat = `text`; fails the test if the poll fails.
  std::vector<MetricSample> PollWith(const std::string& text) {
    fs_.SetFile("/proc/stat", text);
    std::vector<MetricSample> out;
    Status status = source_.Poll(now_ns_, out);
    EXPECT_TRUE(status.ok()) << status.message();
    now_ns_ += 100'000'000;
    return out;
  }

  FakeFileSystem fs_;
  CpuSource source_{fs_};
  uint64_t now_ns_ = 1'000'000'000;
};

TEST_F(CpuSourceTest, FirstPollYieldsNothing) {
  EXPECT_TRUE(PollWith("cpu  100 0 0 900 0 0 0 0 0 0\ncpu0 100 0 0 900 0 0 0 0 0 0\n").empty());
}

TEST_F(CpuSourceTest, HalfBusyCoreIsFiftyPercent) {
  PollWith("cpu  100 0 0 900 0 0 0 0 0 0\ncpu0 100 0 0 900 0 0 0 0 0 0\n");
  std::vector<MetricSample> out =
      PollWith("cpu  150 0 0 950 0 0 0 0 0 0\ncpu0 150 0 0 950 0 0 0 0 0 0\n");
  // Total first, then the cores, each as user, system, util, iowait.
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(out[0].name, "cpu/total/user_pct");
  EXPECT_EQ(out[1].name, "cpu/total/system_pct");
  EXPECT_EQ(out[2].name, "cpu/total/util_pct");
  EXPECT_EQ(out[3].name, "cpu/total/iowait_pct");
  EXPECT_EQ(out[4].name, "cpu/cpu0/user_pct");
  EXPECT_EQ(out[7].name, "cpu/cpu0/iowait_pct");
  std::map<std::string, double> values = ByName(out);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/util_pct"], 50.0);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/user_pct"], 50.0);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/system_pct"], 0.0);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/iowait_pct"], 0.0);
  EXPECT_DOUBLE_EQ(values["cpu/total/util_pct"], 50.0);
}

TEST_F(CpuSourceTest, SplitsUserSystemIowaitAndCountsStealAsBusy) {
  //              user nice system idle iowait irq softirq steal
  PollWith("cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0\n");
  std::vector<MetricSample> out =
      PollWith("cpu  30 10 15 20 10 3 2 10\ncpu0 30 10 15 20 10 3 2 10\n");
  std::map<std::string, double> values = ByName(out);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/user_pct"], 40.0);    // 30 + 10 nice
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/system_pct"], 20.0);  // 15 + 3 irq + 2 softirq
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/iowait_pct"], 10.0);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/util_pct"], 70.0);  // 100 - 20 idle - 10 iowait
}

TEST_F(CpuSourceTest, ComputesSharesBetweenTwoCapturedSnapshots) {
  PollWith(ReadProcTestData("snapshot_1/stat"));
  std::map<std::string, double> values = ByName(PollWith(ReadProcTestData("snapshot_2/stat")));
  ASSERT_EQ(values.size(), 12u);
  // total: user +283, system +58, softirq +1, idle and iowait unchanged: 342 jiffies.
  EXPECT_DOUBLE_EQ(values["cpu/total/user_pct"], 100.0 * 283 / 342);
  EXPECT_DOUBLE_EQ(values["cpu/total/system_pct"], 100.0 * 59 / 342);
  EXPECT_DOUBLE_EQ(values["cpu/total/util_pct"], 100.0);
  EXPECT_DOUBLE_EQ(values["cpu/total/iowait_pct"], 0.0);
  // cpu0: user +130, system +41.
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/user_pct"], 100.0 * 130 / 171);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/system_pct"], 100.0 * 41 / 171);
  // cpu1: user +154, system +16, idle +1, softirq +1.
  EXPECT_DOUBLE_EQ(values["cpu/cpu1/user_pct"], 100.0 * 154 / 172);
  EXPECT_DOUBLE_EQ(values["cpu/cpu1/system_pct"], 100.0 * 17 / 172);
  EXPECT_DOUBLE_EQ(values["cpu/cpu1/util_pct"], 100.0 * 171 / 172);
  EXPECT_DOUBLE_EQ(values["cpu/cpu1/iowait_pct"], 0.0);
}

TEST_F(CpuSourceTest, ACoreWhoseCounterWentBackwardsYieldsNothingThatPoll) {
  PollWith("cpu  200 0 0 1800 10 0 0 0\ncpu0 100 0 0 900 5 0 0 0\ncpu1 100 0 0 900 5 0 0 0\n");
  // cpu1's iowait went from 5 to 4 (an accounting quirk of some NO_HZ kernels).
  std::map<std::string, double> values = ByName(
      PollWith("cpu  300 0 0 1900 9 0 0 0\ncpu0 150 0 0 950 5 0 0 0\ncpu1 150 0 0 950 4 0 0 0\n"));
  EXPECT_EQ(values.count("cpu/cpu1/util_pct"), 0u);
  EXPECT_EQ(values.count("cpu/cpu1/user_pct"), 0u);
  EXPECT_EQ(values.count("cpu/total/util_pct"), 0u);  // the total's iowait went back too
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/util_pct"], 50.0);
  // The backwards reading is the new baseline: the next poll is normal again.
  values = ByName(PollWith(
      "cpu  400 0 0 2000 9 0 0 0\ncpu0 200 0 0 1000 5 0 0 0\ncpu1 200 0 0 1000 4 0 0 0\n"));
  EXPECT_DOUBLE_EQ(values["cpu/cpu1/util_pct"], 50.0);
  EXPECT_DOUBLE_EQ(values["cpu/total/util_pct"], 50.0);
}

TEST_F(CpuSourceTest, AnOfflineCoreRestartsFromABaselineWhenItReturns) {
  PollWith("cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0\n");
  std::map<std::string, double> values =
      ByName(PollWith("cpu  10 0 0 10 0 0 0 0\ncpu0 10 0 0 10 0 0 0 0\n"));
  EXPECT_EQ(values.count("cpu/cpu1/util_pct"), 0u);
  EXPECT_DOUBLE_EQ(values["cpu/cpu0/util_pct"], 50.0);
  values =
      ByName(PollWith("cpu  20 0 0 20 0 0 0 0\ncpu0 20 0 0 20 0 0 0 0\ncpu1 50 0 0 50 0 0 0 0\n"));
  EXPECT_EQ(values.count("cpu/cpu1/util_pct"), 0u);
  values =
      ByName(PollWith("cpu  30 0 0 60 0 0 0 0\ncpu0 30 0 0 30 0 0 0 0\ncpu1 50 0 0 80 0 0 0 0\n"));
  EXPECT_DOUBLE_EQ(values["cpu/cpu1/util_pct"], 0.0);
  EXPECT_DOUBLE_EQ(values["cpu/cpu1/user_pct"], 0.0);
}

TEST_F(CpuSourceTest, NoJiffiesElapsedYieldsNothing) {
  PollWith("cpu  1 0 0 1 0 0 0 0\n");
  EXPECT_TRUE(PollWith("cpu  1 0 0 1 0 0 0 0\n").empty());
}

TEST_F(CpuSourceTest, ReportsAMissingFileAndMalformedText) {
  std::vector<MetricSample> out;
  Status missing = source_.Poll(now_ns_, out);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  fs_.SetFile("/proc/stat", "cpu  1 0 0\n");
  Status malformed = source_.Poll(now_ns_, out);
  EXPECT_EQ(malformed.code(), StatusCode::kDataLoss);
  EXPECT_EQ(malformed.message(), "/proc/stat line 1: 'cpu' has 3 columns, expected at least 8");
  EXPECT_TRUE(out.empty());
}

TEST(CpuSource, ReadsStatUnderTheGivenProcRoot) {
  FakeFileSystem fs;
  fs.SetFile("/host/proc/stat", "cpu  1 0 0 1 0 0 0 0\n");
  CpuSource source(fs, "/host/proc");
  std::vector<MetricSample> out;
  EXPECT_TRUE(source.Poll(0, out).ok());
}

}  // namespace
}  // namespace stepscope
