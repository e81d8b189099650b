#include "platform/linux/diskstats_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/linux/proc_test_data.h"

namespace stepscope {
namespace {

using testing::ReadProcTestData;

std::vector<std::string> Names(const DiskStats& stats) {
  std::vector<std::string> names;
  for (const DiskDeviceStats& device : stats.devices) names.push_back(device.name);
  return names;
}

TEST(ParseDiskstats, KeepsOnlyThePhysicalDiskOfACapturedFile) {
  // The build VM: loop0..7, vda, zram0; 20-column lines (kernel 6.x).
  StatusOr<DiskStats> stats = ParseDiskstats(ReadProcTestData("snapshot_1/diskstats"));
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(stats->devices.size(), 1u);
  const DiskDeviceStats& vda = stats->devices[0];
  EXPECT_EQ(vda.name, "vda");
  EXPECT_EQ(vda.major, 254u);
  EXPECT_EQ(vda.minor, 0u);
  EXPECT_EQ(vda.reads_completed, 35680u);
  EXPECT_EQ(vda.sectors_read, 4722746u);
  EXPECT_EQ(vda.writes_completed, 39985u);
  EXPECT_EQ(vda.sectors_written, 2792472u);
}

// A workstation's layout: NVMe with partitions under LVM (dm-0), a SATA disk with a partition,
// a RAID member partition whose disk is not listed, software RAID, loop and zram devices.
constexpr char kWorkstation[] =
    " 259       0 nvme0n1 251004 73412 19483002 52311 402218 210877 31231098 380211 0 301220 "
    "439710 0 0 0 0 12011 7188\n"
    " 259       1 nvme0n1p1 312 1200 15326 75 2 0 2 0 0 103 75 0 0 0 0 0 0\n"
    " 259       2 nvme0n1p2 250600 72212 19462068 52220 402216 210877 31231096 380211 0 301100 "
    "432431 0 0 0 0 0 0\n"
    "   8       0 sda 10234 2211 1882310 9921 5512 3301 901232 22100 0 15022 32021 0 0 0 0 0 0\n"
    "   8       1 sda1 10100 2211 1880110 9900 5512 3301 901232 22100 0 15000 32000 0 0 0 0 0 0\n"
    "   8      17 sdb1 500 0 4000 10 600 0 4800 20 0 30 30 0 0 0 0 0 0\n"
    "   8      32 sdaa 7 0 56 1 8 0 64 1 0 2 2 0 0 0 0 0 0\n"
    " 253       0 dm-0 322710 0 19460012 71310 613093 0 31231096 1201211 0 301022 1272521 0 0 0 0 "
    "0 0\n"
    "   9     127 md127 100 0 800 1 100 0 800 1 0 1 1 0 0 0 0 0 0\n"
    "   7       0 loop0 55 0 2110 9 0 0 0 0 0 12 9 0 0 0 0 0 0\n"
    "   7       1 loop0p1 20 0 100 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
    "   1       0 ram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    " 252       0 zram0 4410 0 35280 21 92310 0 738480 411 0 832 432 0 0 0 0 0 0\n";

TEST(ParseDiskstats, SkipsPartitionsOfListedDisksAndStackedOrVirtualDevices) {
  StatusOr<DiskStats> stats = ParseDiskstats(kWorkstation);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(Names(*stats), (std::vector<std::string>{"nvme0n1", "sda", "sdb1", "sdaa"}));
  EXPECT_EQ(stats->devices[0].sectors_written, 31231098u);
  EXPECT_EQ(stats->devices[2].reads_completed, 500u);
  EXPECT_EQ(stats->devices[2].sectors_written, 4800u);
}

TEST(ParseDiskstats, NvmeNamespaceTenIsNotAPartitionOfNamespaceOne) {
  StatusOr<DiskStats> stats = ParseDiskstats(
      " 259 0 nvme0n1 1 0 8 0 1 0 8 0 0 0 0 0 0 0 0 0 0\n"
      " 259 9 nvme0n10 2 0 16 0 2 0 16 0 0 0 0 0 0 0 0 0 0\n"
      " 179 0 mmcblk0 3 0 24 0 3 0 24 0 0 0 0 0 0 0 0 0 0\n"
      " 179 1 mmcblk0p1 3 0 24 0 3 0 24 0 0 0 0 0 0 0 0 0 0\n");
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(Names(*stats), (std::vector<std::string>{"nvme0n1", "nvme0n10", "mmcblk0"}));
}

TEST(ParseDiskstats, AcceptsTheFourteenColumnFormatOfOldKernels) {
  StatusOr<DiskStats> stats = ParseDiskstats("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n");
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  ASSERT_EQ(stats->devices.size(), 1u);
  EXPECT_EQ(stats->devices[0].reads_completed, 1u);
  EXPECT_EQ(stats->devices[0].sectors_read, 3u);
  EXPECT_EQ(stats->devices[0].writes_completed, 5u);
  EXPECT_EQ(stats->devices[0].sectors_written, 7u);
}

TEST(ParseDiskstats, EmptyFileMeansNoDevices) {
  StatusOr<DiskStats> stats = ParseDiskstats("");
  ASSERT_TRUE(stats.ok());
  EXPECT_TRUE(stats->devices.empty());
}

TEST(ParseDiskstats, RejectsALineCutShort) {
  StatusOr<DiskStats> stats = ParseDiskstats(
      " 254       0 vda 35680 7296 4722746 14952 39985 14746 2792472 11130 0 8808 26736 6193 19 "
      "218544 423 5541 229\n"
      " 253       0 zram0 0 0 0 0 0 0");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(stats.status().message(),
            "/proc/diskstats line 2: has 9 columns, expected at least 14: ' 253       0 zram0 0 0 "
            "0 0 0 0'");
}

TEST(ParseDiskstats, RejectsANonNumericCounter) {
  StatusOr<DiskStats> stats = ParseDiskstats("   8 0 sda 1 2 3 4 5 6 x7 8 9 10 11\n");
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().message(), "/proc/diskstats line 1: column 10 is not a number: 'x7'");
}

TEST(ParseDiskstats, RejectsAnOutOfRangeDeviceNumber) {
  EXPECT_FALSE(ParseDiskstats("   99999999999 0 sda 1 2 3 4 5 6 7 8 9 10 11\n").ok());
}

}  // namespace
}  // namespace stepscope
