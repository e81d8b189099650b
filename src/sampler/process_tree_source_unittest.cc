#include "sampler/process_tree_source.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "platform/linux/proc_test_data.h"
#include "sampler/fake_file_system.h"

namespace stepscope {
namespace {

using testing::FakeFileSystem;
using testing::ReadProcTestData;

constexpr uint64_t kSecondNs = 1'000'000'000;
constexpr HostConstants kHost{100, 4096};

// A /proc/<pid>/stat line with the fields the source reads.
std::string Stat(int pid, int ppid, uint64_t utime, uint64_t stime, uint64_t start, uint64_t rss) {
  return std::to_string(pid) + " (worker) S " + std::to_string(ppid) + " 0 0 0 -1 0 0 0 0 0 " +
         std::to_string(utime) + " " + std::to_string(stime) + " 0 0 20 0 1 0 " +
         std::to_string(start) + " 0 " + std::to_string(rss) + "\n";
}

std::map<std::string, double> ByName(const std::vector<MetricSample>& samples) {
  std::map<std::string, double> by_name;
  for (const MetricSample& sample : samples) by_name[sample.name] = sample.value;
  return by_name;
}

class ProcessTreeSourceTest : public ::testing::Test {
 protected:
  std::map<std::string, double> PollWith(ProcessTreeSource& source, const std::string& pid_stats,
                                         uint64_t now_ns) {
    fs_.SetPidStats("/proc", pid_stats);
    std::vector<MetricSample> out;
    Status status = source.Poll(now_ns, out);
    EXPECT_TRUE(status.ok()) << status.message();
    return ByName(out);
  }

  FakeFileSystem fs_;
};

TEST_F(ProcessTreeSourceTest, MeasuresACapturedJobWithItsGrandchild) {
  // tree.sh (6871) -> "a b) (c" (6873), bash (6874, busy) -> sleep (6875); 78 processes on the
  // host. Between the captures the tree used 396 -> 528 ticks, all in the busy bash.
  ProcessTreeSource source(fs_, 6871, kHost);
  std::map<std::string, double> first =
      PollWith(source, ReadProcTestData("snapshot_1/pid_stats"), 10 * kSecondNs);
  EXPECT_EQ(first.count("process/cpu_pct"), 0u);
  EXPECT_DOUBLE_EQ(first["process/count"], 4.0);
  EXPECT_DOUBLE_EQ(first["process/rss_bytes"], 2361.0 * 4096);
  std::map<std::string, double> second =
      PollWith(source, ReadProcTestData("snapshot_2/pid_stats"), 10 * kSecondNs + 1'320'000'000);
  ASSERT_EQ(second.size(), 3u);
  EXPECT_DOUBLE_EQ(second["process/cpu_pct"], 100.0);  // 132 ticks = 1.32 s of CPU in 1.32 s
  EXPECT_DOUBLE_EQ(second["process/count"], 4.0);
}

TEST_F(ProcessTreeSourceTest, UsesTheInjectedTickRateAndPageSize) {
  ProcessTreeSource source(fs_, 6871, HostConstants{250, 16384});
  PollWith(source, ReadProcTestData("snapshot_1/pid_stats"), 10 * kSecondNs);
  std::map<std::string, double> values =
      PollWith(source, ReadProcTestData("snapshot_2/pid_stats"), 10 * kSecondNs + 1'320'000'000);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 40.0);  // 132 ticks / 250 Hz / 1.32 s
  EXPECT_DOUBLE_EQ(values["process/rss_bytes"], 2361.0 * 16384);
}

TEST_F(ProcessTreeSourceTest, ExitedProcessesLeaveTheTree) {
  // Under init, two python3 workers exited between the captures; four processes used CPU:
  // 1 (+1), 6874 (+132), 6890 (+4), 6828 (+168) = 305 ticks.
  ProcessTreeSource source(fs_, 1, kHost);
  std::map<std::string, double> first =
      PollWith(source, ReadProcTestData("snapshot_1/pid_stats"), kSecondNs);
  EXPECT_DOUBLE_EQ(first["process/count"], 20.0);
  EXPECT_DOUBLE_EQ(first["process/rss_bytes"], 152138.0 * 4096);
  std::map<std::string, double> second =
      PollWith(source, ReadProcTestData("snapshot_2/pid_stats"), 2 * kSecondNs);
  EXPECT_DOUBLE_EQ(second["process/count"], 18.0);
  EXPECT_DOUBLE_EQ(second["process/rss_bytes"], 79494.0 * 4096);
  EXPECT_DOUBLE_EQ(second["process/cpu_pct"], 305.0);
}

TEST_F(ProcessTreeSourceTest, IsMemberNamesTheTreeOfTheLastPoll) {
  ProcessTreeSource source(fs_, 100, kHost);
  EXPECT_FALSE(source.IsMember(100));  // nothing read yet
  PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 5, 0, 500, 1) + Stat(101, 100, 1, 0, 510, 1) +
                       Stat(200, 1, 1, 0, 520, 1),
           kSecondNs);
  EXPECT_TRUE(source.IsMember(100));
  EXPECT_TRUE(source.IsMember(101));
  EXPECT_FALSE(source.IsMember(200));  // another process on the host
  EXPECT_FALSE(source.IsMember(1));
  PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 6, 0, 500, 1) + Stat(200, 1, 1, 0, 520, 1), 2 * kSecondNs);
  EXPECT_TRUE(source.IsMember(100));
  EXPECT_FALSE(source.IsMember(101));  // exited
}

TEST_F(ProcessTreeSourceTest, AForkedWorkerCountsWithAllItsTimeAndARecycledPidIsNew) {
  ProcessTreeSource source(fs_, 100, kHost);
  PollWith(source,
           Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10) + Stat(101, 100, 20, 0, 510, 5),
           kSecondNs);
  // 102 was forked since, 6.9 s after boot; 101 exited and its pid went to a new worker
  // started at 7.0 s. Now is 7.5 s after boot, so both were born during the 1 s interval.
  fs_.SetFile("/proc/uptime", "7.50 1.00\n");
  std::map<std::string, double> values =
      PollWith(source,
               Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 80, 20, 500, 10) +
                   Stat(101, 100, 7, 0, 700, 1) + Stat(102, 100, 3, 2, 690, 2),
               2 * kSecondNs);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 52.0);  // (30 + 10) + 7 + (3 + 2) ticks in 1 s
  EXPECT_DOUBLE_EQ(values["process/count"], 3.0);
  EXPECT_DOUBLE_EQ(values["process/rss_bytes"], 13.0 * 4096);
}

TEST_F(ProcessTreeSourceTest, ListsForNewPidsOnlyEveryListingPeriod) {
  static_assert(ProcessTreeSource::kListingPeriodNs == 400'000'000);
  constexpr uint64_t kPollNs = 100'000'000;
  ProcessTreeSource source(fs_, 100, kHost);
  const std::string base = Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10);
  PollWith(source, base, kSecondNs);
  EXPECT_EQ(fs_.listings(), 1);
  // 101 is forked 10.5 s after boot; the next polls, 100 ms apart, only read the members.
  const std::string forked = base + Stat(101, 100, 1, 0, 1050, 1);
  for (uint64_t i = 1; i <= 3; ++i) {
    std::map<std::string, double> values = PollWith(source, forked, kSecondNs + i * kPollNs);
    EXPECT_DOUBLE_EQ(values["process/count"], 1.0);
  }
  EXPECT_EQ(fs_.listings(), 1);
  EXPECT_EQ(fs_.reads("/proc/101/stat"), 0);
  EXPECT_EQ(fs_.reads("/proc/1/stat"), 1);
  EXPECT_EQ(fs_.reads("/proc/100/stat"), 4);
  // 400 ms after the last listing the next one finds 101, 300 ms old (now is 10.8 s after
  // boot) with 12 ticks used: a third of them fall in this 100 ms interval.
  fs_.SetFile("/proc/uptime", "10.80 1.00\n");
  std::map<std::string, double> values =
      PollWith(source, base + Stat(101, 100, 10, 2, 1050, 1), kSecondNs + 4 * kPollNs);
  EXPECT_EQ(fs_.listings(), 2);
  EXPECT_DOUBLE_EQ(values["process/count"], 2.0);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 40.0);  // 4 ticks in 100 ms
}

TEST_F(ProcessTreeSourceTest, DropsAnExitedMemberBetweenListings) {
  ProcessTreeSource source(fs_, 100, kHost);
  PollWith(source,
           Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10) + Stat(101, 100, 20, 0, 510, 5),
           kSecondNs);
  std::map<std::string, double> values = PollWith(
      source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 51, 10, 500, 10), kSecondNs + 100'000'000);
  EXPECT_EQ(fs_.listings(), 1);
  EXPECT_DOUBLE_EQ(values["process/count"], 1.0);
  EXPECT_DOUBLE_EQ(values["process/rss_bytes"], 10.0 * 4096);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 10.0);  // 1 tick in 100 ms
}

TEST_F(ProcessTreeSourceTest, WithoutUptimeANewMemberOnlySetsABaselineAndTheProblemIsReported) {
  ProcessTreeSource source(fs_, 100, kHost);
  PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10), kSecondNs);
  fs_.SetPidStats("/proc", Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 60, 10, 500, 10) +
                               Stat(101, 100, 90, 0, 590, 5));
  std::vector<MetricSample> out;
  Status status = source.Poll(2 * kSecondNs, out);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  std::map<std::string, double> values = ByName(out);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 10.0);  // 100's 10 ticks; 101's 90 left out
  EXPECT_DOUBLE_EQ(values["process/count"], 2.0);
}

TEST_F(ProcessTreeSourceTest, RereadsOutsidersOnlyOnAFullScan) {
  ProcessTreeSource source(fs_, 100, kHost);
  const std::string stats =
      Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10) + Stat(7, 1, 9, 9, 5, 3);
  PollWith(source, stats, kSecondNs);
  PollWith(source, stats, kSecondNs + ProcessTreeSource::kListingPeriodNs);
  EXPECT_EQ(fs_.listings(), 2);
  EXPECT_EQ(fs_.reads("/proc/1/stat"), 1);
  EXPECT_EQ(fs_.reads("/proc/7/stat"), 1);
  EXPECT_EQ(fs_.reads("/proc/100/stat"), 2);
  PollWith(source, stats, kSecondNs + ProcessTreeSource::kFullScanPeriodNs);
  EXPECT_EQ(fs_.reads("/proc/7/stat"), 2);
  EXPECT_EQ(fs_.reads("/proc/100/stat"), 3);
}

TEST_F(ProcessTreeSourceTest, ARecycledOutsiderPidIsFoundByTheFullScanAndCountedAtItsAverageRate) {
  ProcessTreeSource source(fs_, 100, kHost);
  const std::string base = Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10);
  PollWith(source, base + Stat(55, 1, 0, 0, 50, 1), kSecondNs);
  // 55 exited and its pid went to a new worker of the job, started 6 s after boot.
  const uint64_t listing_ns = kSecondNs + ProcessTreeSource::kListingPeriodNs;
  std::map<std::string, double> values =
      PollWith(source, base + Stat(55, 100, 400, 100, 600, 4), listing_ns);
  EXPECT_DOUBLE_EQ(values["process/count"],
                   1.0);  // a known outsider: a listing does not re-read it
  // The full scan finds it 16 s after boot: 500 ticks over a 10 s life, 0.5 cores on average,
  // which is what it is credited with over the interval since the last poll.
  fs_.SetFile("/proc/uptime", "16.00 1.00\n");
  const uint64_t full_scan_ns = kSecondNs + ProcessTreeSource::kFullScanPeriodNs;
  values = PollWith(source, base + Stat(55, 100, 400, 100, 600, 4), full_scan_ns);
  EXPECT_DOUBLE_EQ(values["process/count"], 2.0);
  EXPECT_DOUBLE_EQ(values["process/rss_bytes"], 14.0 * 4096);
  // 500 * 9.6 / 10 = 480 ticks in 9.6 s.
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 50.0);
  values = PollWith(source, base + Stat(55, 100, 405, 105, 600, 4), full_scan_ns + 100'000'000);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 100.0);  // 10 ticks in 0.1 s
}

TEST_F(ProcessTreeSourceTest, AGoneRootYieldsAnEmptyTree) {
  ProcessTreeSource source(fs_, 100, kHost);
  PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10), kSecondNs);
  std::map<std::string, double> values = PollWith(source, Stat(1, 0, 0, 0, 1, 0), 2 * kSecondNs);
  EXPECT_DOUBLE_EQ(values["process/count"], 0.0);
  EXPECT_DOUBLE_EQ(values["process/rss_bytes"], 0.0);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 0.0);
}

TEST_F(ProcessTreeSourceTest, ARecycledRootPidIsNotTheJob) {
  ProcessTreeSource source(fs_, 100, kHost);
  PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10), kSecondNs);
  std::map<std::string, double> values =
      PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 1, 1, 900, 99), 2 * kSecondNs);
  EXPECT_DOUBLE_EQ(values["process/count"], 0.0);
  EXPECT_DOUBLE_EQ(values["process/rss_bytes"], 0.0);
}

TEST_F(ProcessTreeSourceTest, SkipsAProcessThatExitedAfterTheListing) {
  ProcessTreeSource source(fs_, 100, kHost);
  fs_.SetFile("/proc/101/status", "listed, but its stat is gone\n");
  std::map<std::string, double> values =
      PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10), kSecondNs);
  EXPECT_DOUBLE_EQ(values["process/count"], 1.0);
}

TEST_F(ProcessTreeSourceTest, KeepsTheTreesMetricsWhenAnotherProcessStatIsMalformed) {
  ProcessTreeSource source(fs_, 100, kHost);
  fs_.SetPidStats("/proc", Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10));
  fs_.SetFile("/proc/55/stat", "55 (cut");
  std::vector<MetricSample> out;
  Status status = source.Poll(kSecondNs, out);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "/proc/55/stat: /proc/<pid>/stat: no '(comm)' in '55 (cut'");
  std::map<std::string, double> values = ByName(out);
  EXPECT_DOUBLE_EQ(values["process/count"], 1.0);
  EXPECT_DOUBLE_EQ(values["process/rss_bytes"], 10.0 * 4096);
}

TEST_F(ProcessTreeSourceTest, AFailedListingReportsAndLeavesNoTrace) {
  ProcessTreeSource source(fs_, 100, kHost);
  std::vector<MetricSample> out;
  EXPECT_EQ(source.Poll(kSecondNs, out).code(), StatusCode::kNotFound);  // no /proc at all
  EXPECT_TRUE(out.empty());
  // The next successful poll is the first: a baseline, no CPU rate over a bogus interval.
  std::map<std::string, double> values =
      PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 50, 10, 500, 10), 2 * kSecondNs);
  EXPECT_EQ(values.count("process/cpu_pct"), 0u);
  EXPECT_DOUBLE_EQ(values["process/count"], 1.0);
  values = PollWith(source, Stat(1, 0, 0, 0, 1, 0) + Stat(100, 1, 55, 10, 500, 10), 3 * kSecondNs);
  EXPECT_DOUBLE_EQ(values["process/cpu_pct"], 5.0);
}

}  // namespace
}  // namespace stepscope
