#include "platform/linux/meminfo_parser.h"

#include <gtest/gtest.h>

#include "platform/linux/proc_test_data.h"

namespace stepscope {
namespace {

using testing::ReadProcTestData;

TEST(ParseMeminfo, ReadsTotalAndAvailableOfACapturedFile) {
  StatusOr<Meminfo> info = ParseMeminfo(ReadProcTestData("snapshot_1/meminfo"));
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->total_bytes, 24684092ull * 1024);
  EXPECT_EQ(info->available_bytes, 24094768ull * 1024);
  EXPECT_FALSE(info->available_estimated);
  EXPECT_EQ(info->used_bytes(), (24684092ull - 24094768ull) * 1024);
}

TEST(ParseMeminfo, EstimatesAvailableOnKernelsWithoutMemAvailable) {
  StatusOr<Meminfo> info = ParseMeminfo(
      "MemTotal:        1000 kB\nMemFree:          100 kB\nBuffers:           20 kB\nCached:       "
      "    300 kB\n");
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->available_bytes, 420u * 1024);
  EXPECT_TRUE(info->available_estimated);
  EXPECT_EQ(info->used_bytes(), 580u * 1024);
}

TEST(ParseMeminfo, IgnoresUnneededLinesWithoutUnits) {
  StatusOr<Meminfo> info = ParseMeminfo(
      "MemTotal: 1000 kB\nHugePages_Total:       0\nMemAvailable: 250 kB\nWeird line\n");
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->used_bytes(), 750u * 1024);
}

TEST(ParseMeminfo, RejectsMissingMemTotal) {
  StatusOr<Meminfo> info = ParseMeminfo("MemAvailable: 250 kB\n");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(info.status().message(), "/proc/meminfo: no MemTotal (or it is 0)");
}

TEST(ParseMeminfo, RejectsMissingAvailableAndEstimateInputs) {
  StatusOr<Meminfo> info = ParseMeminfo("MemTotal: 1000 kB\nMemFree: 10 kB\n");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().message(),
            "/proc/meminfo: no MemAvailable, and no MemFree/Buffers/Cached to estimate it");
}

TEST(ParseMeminfo, RejectsAValueCutShortBeforeItsUnit) {
  StatusOr<Meminfo> info = ParseMeminfo("MemTotal:       24684092 kB\nMemAvailable:   2409");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().message(),
            "/proc/meminfo: 'MemAvailable' is not '<number> kB': '   2409'");
}

TEST(ParseMeminfo, RejectsANonNumericValue) {
  StatusOr<Meminfo> info = ParseMeminfo("MemTotal: 12x4 kB\nMemAvailable: 1 kB\n");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().message(), "/proc/meminfo: 'MemTotal' is not a number: '12x4'");
}

TEST(ParseMeminfo, RejectsAvailableAboveTotal) {
  StatusOr<Meminfo> info = ParseMeminfo("MemTotal: 100 kB\nMemAvailable: 101 kB\n");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().message(),
            "/proc/meminfo: MemAvailable (101 kB) exceeds MemTotal (100 kB)");
}

TEST(ParseMeminfo, RejectsADuplicatedKey) {
  EXPECT_FALSE(ParseMeminfo("MemTotal: 100 kB\nMemTotal: 100 kB\nMemAvailable: 1 kB\n").ok());
}

TEST(ParseMeminfo, RejectsAValueThatWouldOverflowInBytes) {
  EXPECT_FALSE(ParseMeminfo("MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n").ok());
}

}  // namespace
}  // namespace stepscope
