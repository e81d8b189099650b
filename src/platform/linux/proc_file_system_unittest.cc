#include "platform/linux/proc_file_system.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "platform/linux/pid_stat_parser.h"

namespace stepscope {
namespace {

TEST(ProcFileSystem, RereadsAnOpenProcFileWithFreshContent) {
  ProcFileSystem fs;
  StatusOr<std::string> first = fs.ReadFile("/proc/self/stat");
  ASSERT_TRUE(first.ok()) << first.status().message();
  StatusOr<PidStat> before = ParsePidStat(*first);
  ASSERT_TRUE(before.ok());
  // Burn CPU until utime+stime has grown by a clock tick, rereading the same open file each time:
  // /proc regenerates the text at offset 0. However fast the machine, it grows in the end; the
  // bound only keeps a reader stuck on stale text from looping for ever.
  volatile uint64_t sink = 0;
  StatusOr<PidStat> after = before;
  for (int round = 0; round < 10'000 && after->utime_ticks + after->stime_ticks ==
                                            before->utime_ticks + before->stime_ticks; ++round) {
    for (uint64_t i = 0; i < 1'000'000; ++i) sink = sink + i;
    StatusOr<std::string> again = fs.ReadFile("/proc/self/stat");
    ASSERT_TRUE(again.ok()) << again.status().message();
    after = ParsePidStat(*again);
    ASSERT_TRUE(after.ok());
  }
  EXPECT_EQ(fs.open_files(), 1u);
  EXPECT_EQ(after->pid, getpid());
  EXPECT_GT(after->utime_ticks + after->stime_ticks, before->utime_ticks + before->stime_ticks);
}

TEST(ProcFileSystem, ReportsAGoneProcessAsNotFoundAndDropsItsDescriptor) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  ProcFileSystem fs;
  std::string path = "/proc/" + std::to_string(child) + "/stat";
  StatusOr<std::string> alive = fs.ReadFile(path);
  ASSERT_TRUE(alive.ok()) << alive.status().message();
  EXPECT_EQ(fs.open_files(), 1u);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  StatusOr<std::string> gone = fs.ReadFile(path);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs.open_files(), 0u);
}

TEST(ProcFileSystem, KeepsAtMostTheMaximumOfDescriptorsOpen) {
  ProcFileSystem fs;
  const char* kFiles[] = {"stat", "statm", "status", "io", "cmdline", "comm", "limits", "maps"};
  // More distinct paths than the cap: extra slashes name the same file under a new key.
  std::string pid = std::to_string(getpid());
  int read = 0;
  for (int round = 0; round < 9 && read < static_cast<int>(ProcFileSystem::kMaxOpenFiles) + 8;
       ++round) {
    for (const char* file : kFiles) {
      std::string path = "/proc/" + pid + std::string(static_cast<size_t>(round), '/') + "/" + file;
      if (fs.ReadFile(path).ok()) ++read;
    }
  }
  ASSERT_GT(read, static_cast<int>(ProcFileSystem::kMaxOpenFiles));
  EXPECT_EQ(fs.open_files(), ProcFileSystem::kMaxOpenFiles);
}

TEST(ProcFileSystem, ReportsAMissingFile) {
  ProcFileSystem fs;
  StatusOr<std::string> missing = fs.ReadFile("/proc/does-not-exist");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs.open_files(), 0u);
}

TEST(ProcFileSystem, ListsDirectories) {
  ProcFileSystem fs;
  StatusOr<std::vector<std::string>> entries = fs.ListDirectory("/proc/self");
  ASSERT_TRUE(entries.ok());
  EXPECT_NE(std::find(entries->begin(), entries->end(), "stat"), entries->end());
}

}  // namespace
}  // namespace stepscope
