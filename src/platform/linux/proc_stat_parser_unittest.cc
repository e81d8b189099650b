#include "platform/linux/proc_stat_parser.h"

#include <gtest/gtest.h>

#include "platform/linux/proc_test_data.h"

namespace stepscope {
namespace {

using testing::ReadProcTestData;

TEST(ParseProcStat, ReadsTotalAndEveryCoreOfACapturedFile) {
  // Captured on the 2-core build VM: "cpu  6179 0 4024 69294 517 0 83 20 0 0" ...
  StatusOr<ProcStat> stat = ParseProcStat(ReadProcTestData("snapshot_1/stat"));
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->total.user, 6179u);
  EXPECT_EQ(stat->total.nice, 0u);
  EXPECT_EQ(stat->total.system, 4024u);
  EXPECT_EQ(stat->total.idle, 69294u);
  EXPECT_EQ(stat->total.iowait, 517u);
  EXPECT_EQ(stat->total.irq, 0u);
  EXPECT_EQ(stat->total.softirq, 83u);
  EXPECT_EQ(stat->total.steal, 20u);
  EXPECT_EQ(stat->total.Total(), 6179u + 4024 + 69294 + 517 + 83 + 20);
  ASSERT_EQ(stat->cores.size(), 2u);
  EXPECT_EQ(stat->cores[0].core, 0u);
  EXPECT_EQ(stat->cores[0].jiffies.user, 2497u);
  EXPECT_EQ(stat->cores[0].jiffies.idle, 36066u);
  EXPECT_EQ(stat->cores[1].core, 1u);
  EXPECT_EQ(stat->cores[1].jiffies.system, 2559u);
  EXPECT_EQ(stat->cores[1].jiffies.iowait, 497u);
  EXPECT_EQ(stat->cores[1].jiffies.softirq, 72u);
  EXPECT_EQ(stat->cores[1].jiffies.steal, 12u);
}

TEST(ParseProcStat, IgnoresGuestColumnsBecauseUserAlreadyIncludesThem) {
  StatusOr<ProcStat> stat =
      ParseProcStat("cpu  10 1 2 3 4 5 6 7 500 600\ncpu0 10 1 2 3 4 5 6 7 500 600\n");
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->total.Total(), 38u);
}

TEST(ParseProcStat, KeepsTheKernelsCoreNumbersWhenACoreIsOffline) {
  StatusOr<ProcStat> stat = ParseProcStat(
      "cpu  2 0 2 2 0 0 0 0 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\ncpu3 1 0 1 1 0 0 0 0 0 0\nintr 1 2\n");
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  ASSERT_EQ(stat->cores.size(), 2u);
  EXPECT_EQ(stat->cores[1].core, 3u);
}

TEST(ParseProcStat, RejectsTextWithoutTotalLine) {
  StatusOr<ProcStat> stat = ParseProcStat("intr 1 2 3\nctxt 5\n");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(stat.status().message(), "/proc/stat: no 'cpu' total line");
}

TEST(ParseProcStat, RejectsEmptyText) { EXPECT_FALSE(ParseProcStat("").ok()); }

TEST(ParseProcStat, RejectsALineCutShort) {
  // A read that stopped in the middle of the cpu block.
  StatusOr<ProcStat> stat = ParseProcStat("cpu  6179 0 4024 69294 517 0 83 20 0 0\ncpu0 2497 0 14");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().message(), "/proc/stat line 2: cut short (no newline): 'cpu0 2497 0 14'");
}

TEST(ParseProcStat, RejectsTooFewColumns) {
  StatusOr<ProcStat> stat = ParseProcStat("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4\n");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().message(),
            "/proc/stat line 2: 'cpu0' has 4 columns, expected at least 8");
}

TEST(ParseProcStat, RejectsANonNumericColumn) {
  StatusOr<ProcStat> stat = ParseProcStat("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 x 4 5 6 7 8\n");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().message(),
            "/proc/stat line 2: column 'system' of 'cpu0' is not a number: 'x'");
}

TEST(ParseProcStat, RejectsANegativeOrOverflowingCounter) {
  EXPECT_FALSE(ParseProcStat("cpu  1 2 3 -4 5 6 7 8\n").ok());
  EXPECT_FALSE(ParseProcStat("cpu  1 2 3 99999999999999999999999 5 6 7 8\n").ok());
}

TEST(ParseProcStat, RejectsABadCoreLabel) {
  StatusOr<ProcStat> stat = ParseProcStat("cpu  1 2 3 4 5 6 7 8\ncpuX 1 2 3 4 5 6 7 8\n");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().message(), "/proc/stat line 2: bad cpu label 'cpuX'");
}

TEST(ParseProcStat, RejectsASecondTotalLine) {
  EXPECT_FALSE(ParseProcStat("cpu  1 2 3 4 5 6 7 8\ncpu  1 2 3 4 5 6 7 8\n").ok());
}

}  // namespace
}  // namespace stepscope
