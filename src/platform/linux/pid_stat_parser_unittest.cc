#include "platform/linux/pid_stat_parser.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

// Captured from the build VM: a copy of sleep named "a b) (c" (a comm with spaces and both
// parentheses), the busy shell beside it, and a kernel worker.
constexpr char kTrickyComm[] =
    "6873 (a b) (c) S 6871 6864 5427 0 -1 4194304 119 0 0 0 0 0 0 0 20 0 1 0 39901 2990080 408 "
    "18446744073709551615 93842316578816 93842316596745 140737034680288 0 0 0 0 6 0 1 0 0 17 1 0 0 "
    "0 0 0 "
    "93842316610832 93842316612096 93842661855232 140737034684850 140737034684872 140737034684872 "
    "140737034686438 0\n";
constexpr char kBusyShell[] =
    "6874 (bash) R 6871 6864 5427 0 -1 4194304 207 0 0 0 418 110 0 0 20 0 1 0 39901 4464640 779 "
    "18446744073709551615 94064207265792 94064208055197 140732271917440 0 0 0 65536 6 65536 1 0 0 "
    "17 0 0 0 0 0 0 "
    "94064208288496 94064208336740 94064686182400 140732271925700 140732271925720 140732271925720 "
    "140732271927278 0\n";
constexpr char kKernelWorker[] =
    "11 (kworker/0:1-virtio_vsock) I 2 0 0 0 -1 69238880 0 0 0 0 0 3 0 0 20 0 1 0 16 0 0 "
    "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

TEST(ParsePidStat, ReadsACommWithSpacesAndParentheses) {
  StatusOr<PidStat> stat = ParsePidStat(kTrickyComm);
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->pid, 6873);
  EXPECT_EQ(stat->comm, "a b) (c");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 6871);
  EXPECT_EQ(stat->utime_ticks, 0u);
  EXPECT_EQ(stat->stime_ticks, 0u);
  EXPECT_EQ(stat->start_time_ticks, 39901u);
  EXPECT_EQ(stat->rss_pages, 408u);
}

TEST(ParsePidStat, ReadsCpuTimesOfABusyProcess) {
  StatusOr<PidStat> stat = ParsePidStat(kBusyShell);
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->comm, "bash");
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->utime_ticks, 418u);
  EXPECT_EQ(stat->stime_ticks, 110u);
  EXPECT_EQ(stat->rss_pages, 779u);
}

TEST(ParsePidStat, ReadsAKernelThreadWithALongName) {
  StatusOr<PidStat> stat = ParsePidStat(kKernelWorker);
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->pid, 11);
  EXPECT_EQ(stat->comm, "kworker/0:1-virtio_vsock");
  EXPECT_EQ(stat->ppid, 2);
  EXPECT_EQ(stat->stime_ticks, 3u);
  EXPECT_EQ(stat->rss_pages, 0u);
}

TEST(ParsePidStat, ReadsACommContainingANewline) {
  // prctl(PR_SET_NAME) accepts any byte; only the last ')' ends the comm.
  StatusOr<PidStat> stat =
      ParsePidStat("7 (x\n) y) S 1 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 0 12\n");
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->comm, "x\n) y");
  EXPECT_EQ(stat->utime_ticks, 5u);
  EXPECT_EQ(stat->stime_ticks, 6u);
  EXPECT_EQ(stat->start_time_ticks, 99u);
  EXPECT_EQ(stat->rss_pages, 12u);
}

TEST(ParsePidStat, RejectsTextCutShortBeforeRss) {
  std::string text(kBusyShell);
  text.resize(text.find(" 4464640"));  // ends at starttime
  StatusOr<PidStat> stat = ParsePidStat(text);
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(stat.status().message(),
            "/proc/<pid>/stat: pid 6874 has 20 fields after the comm, expected at least 22");
}

TEST(ParsePidStat, RejectsTextWithoutComm) {
  StatusOr<PidStat> stat = ParsePidStat("6874 bash R 6871");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().message(), "/proc/<pid>/stat: no '(comm)' in '6874 bash R 6871'");
  EXPECT_FALSE(ParsePidStat(")( R").ok());
  EXPECT_FALSE(ParsePidStat("").ok());
}

TEST(ParsePidStat, RejectsABadPid) {
  StatusOr<PidStat> stat = ParsePidStat("-3 (x) S 1 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 0 12\n");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().message(), "/proc/<pid>/stat: bad pid '-3'");
  EXPECT_FALSE(ParsePidStat("(x) S 1 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 0 12\n").ok());
}

TEST(ParsePidStat, RejectsANonNumericCpuTime) {
  StatusOr<PidStat> stat = ParsePidStat("7 (x) S 1 0 0 0 -1 0 0 0 0 0 5z 6 0 0 20 0 1 0 99 0 12\n");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(
      stat.status().message(),
      "/proc/<pid>/stat: pid 7: a field among ppid, utime, stime, starttime, rss is not a number");
}

TEST(ParsePidStat, RejectsAMultiCharacterState) {
  EXPECT_FALSE(ParsePidStat("7 (x) SS 1 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 0 12\n").ok());
}

}  // namespace
}  // namespace stepscope
