#include "sampler/disk_source.h"

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

std::map<std::string, double> ByName(const std::vector<MetricSample>& samples) {
  std::map<std::string, double> by_name;
  for (const MetricSample& sample : samples) by_name[sample.name] = sample.value;
  return by_name;
}

// One 20-column diskstats line with the four counters the source reads.
std::string Line(const std::string& name, uint64_t reads, uint64_t sectors_read, uint64_t writes,
                 uint64_t sectors_written) {
  return " 8 0 " + name + " " + std::to_string(reads) + " 0 " + std::to_string(sectors_read) +
         " 0 " + std::to_string(writes) + " 0 " + std::to_string(sectors_written) +
         " 0 0 0 0 0 0 0 0 0 0\n";
}

class DiskSourceTest : public ::testing::Test {
 protected:
  std::map<std::string, double> PollWith(const std::string& text, uint64_t now_ns) {
    fs_.SetFile("/proc/diskstats", text);
    std::vector<MetricSample> out;
    Status status = source_.Poll(now_ns, out);
    EXPECT_TRUE(status.ok()) << status.message();
    return ByName(out);
  }

  FakeFileSystem fs_;
  DiskSource source_{fs_};
};

TEST_F(DiskSourceTest, ComputesRatesBetweenTwoCapturedSnapshots) {
  EXPECT_TRUE(PollWith(ReadProcTestData("snapshot_1/diskstats"), 10 * kSecondNs).empty());
  // vda between the captures (a 64 MiB O_DIRECT write, then reading it back): reads +29,
  // sectors read +131504, writes +64, sectors written +131072; loop and zram are ignored.
  std::map<std::string, double> values =
      PollWith(ReadProcTestData("snapshot_2/diskstats"), 12 * kSecondNs);
  ASSERT_EQ(values.size(), 5u);
  EXPECT_DOUBLE_EQ(values["disk/read_bytes_per_s"], 131504.0 * 512 / 2);
  EXPECT_DOUBLE_EQ(values["disk/write_bytes_per_s"], 64.0 * 1024 * 1024 / 2);
  EXPECT_DOUBLE_EQ(values["disk/read_iops"], 14.5);
  EXPECT_DOUBLE_EQ(values["disk/write_iops"], 32.0);
  EXPECT_DOUBLE_EQ(values["disk/iops"], 46.5);
}

TEST_F(DiskSourceTest, SumsDevicesWithoutCountingPartitionsTwice) {
  PollWith(Line("sda", 0, 0, 0, 0) + Line("sda1", 0, 0, 0, 0) + Line("nvme0n1", 0, 0, 0, 0),
           kSecondNs);
  std::map<std::string, double> values = PollWith(
      Line("sda", 10, 80, 20, 160) + Line("sda1", 10, 80, 20, 160) + Line("nvme0n1", 1, 8, 2, 16),
      2 * kSecondNs);
  EXPECT_DOUBLE_EQ(values["disk/read_bytes_per_s"], 88.0 * 512);
  EXPECT_DOUBLE_EQ(values["disk/write_bytes_per_s"], 176.0 * 512);
  EXPECT_DOUBLE_EQ(values["disk/iops"], 33.0);
}

TEST_F(DiskSourceTest, ACounterResetYieldsNoSampleForTheMetricsItFeeds) {
  PollWith(Line("sda", 100, 800, 100, 800), kSecondNs);
  // Reads went backwards (the device was re-probed); writes are fine.
  std::map<std::string, double> values = PollWith(Line("sda", 3, 24, 110, 880), 2 * kSecondNs);
  EXPECT_EQ(values.count("disk/read_iops"), 0u);
  EXPECT_EQ(values.count("disk/read_bytes_per_s"), 0u);
  EXPECT_EQ(values.count("disk/iops"), 0u);
  EXPECT_DOUBLE_EQ(values["disk/write_iops"], 10.0);
  EXPECT_DOUBLE_EQ(values["disk/write_bytes_per_s"], 80.0 * 512);
  for (const auto& [name, value] : values) EXPECT_GE(value, 0.0) << name;
}

TEST_F(DiskSourceTest, ADeviceThatDisappearedYieldsNoSampleThatPoll) {
  PollWith(Line("sda", 0, 0, 0, 0) + Line("sdb", 0, 0, 0, 0), kSecondNs);
  EXPECT_TRUE(PollWith(Line("sda", 5, 40, 5, 40), 2 * kSecondNs).empty());
  std::map<std::string, double> values = PollWith(Line("sda", 6, 48, 6, 48), 3 * kSecondNs);
  EXPECT_DOUBLE_EQ(values["disk/iops"], 2.0);
}

TEST_F(DiskSourceTest, ATimeThatDidNotAdvanceYieldsNoRate) {
  PollWith(Line("sda", 0, 0, 0, 0), kSecondNs);
  EXPECT_TRUE(PollWith(Line("sda", 5, 40, 5, 40), kSecondNs).empty());
}

TEST_F(DiskSourceTest, ReportsMalformedText) {
  fs_.SetFile("/proc/diskstats", " 8 0 sda 1 2 3\n");
  std::vector<MetricSample> out;
  EXPECT_EQ(source_.Poll(kSecondNs, out).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace stepscope
