#include "platform/linux/process_tree.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/linux/proc_test_data.h"

namespace stepscope {
namespace {

using testing::ReadProcTestData;

// pid_stats holds every /proc/<pid>/stat of the build VM captured at one moment, one per line.
// The job under test: tree.sh (6871) -> "a b) (c" (6873), bash (6874) -> sleep (6875).
std::vector<std::string_view> Lines(const std::string& text) {
  std::vector<std::string_view> lines;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    size_t length = end == std::string_view::npos ? rest.size() : end + 1;
    lines.push_back(rest.substr(0, length));
    rest.remove_prefix(length);
  }
  return lines;
}

std::vector<int32_t> Pids(const std::vector<PidStat>& tree) {
  std::vector<int32_t> pids;
  for (const PidStat& stat : tree) pids.push_back(stat.pid);
  return pids;
}

PidStat Process(int32_t pid, int32_t ppid) {
  PidStat stat;
  stat.pid = pid;
  stat.ppid = ppid;
  return stat;
}

TEST(BuildProcessTreeFromStatTexts, FindsTheJobAndItsGrandchildInACapturedSnapshot) {
  std::string text = ReadProcTestData("snapshot_1/pid_stats");
  std::vector<std::string_view> texts = Lines(text);
  ASSERT_EQ(texts.size(), 78u);
  StatusOr<std::vector<PidStat>> tree = BuildProcessTreeFromStatTexts(6871, texts);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ(Pids(*tree), (std::vector<int32_t>{6871, 6873, 6874, 6875}));
  EXPECT_EQ((*tree)[1].comm, "a b) (c");
  EXPECT_EQ((*tree)[2].utime_ticks, 309u);
}

TEST(BuildProcessTreeFromStatTexts, SplitsUserProcessesFromKernelThreads) {
  std::string text = ReadProcTestData("snapshot_1/pid_stats");
  std::vector<std::string_view> texts = Lines(text);
  StatusOr<std::vector<PidStat>> init_tree = BuildProcessTreeFromStatTexts(1, texts);
  StatusOr<std::vector<PidStat>> kthreadd_tree = BuildProcessTreeFromStatTexts(2, texts);
  ASSERT_TRUE(init_tree.ok() && kthreadd_tree.ok());
  EXPECT_EQ(init_tree->size(), 20u);
  EXPECT_EQ(kthreadd_tree->size(), 58u);
  // Breadth first, children in pid order.
  std::vector<int32_t> first_pids = Pids(*init_tree);
  first_pids.resize(7);
  EXPECT_EQ(first_pids, (std::vector<int32_t>{1, 1194, 5383, 5402, 6227, 6871, 1195}));
}

TEST(BuildProcessTreeFromStatTexts, NamesTheTextThatDoesNotParse) {
  std::vector<std::string_view> texts = {
      "1 (init) S 0 0 0 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 99 0 12\n", "2 (cut) S 1 0 0"};
  StatusOr<std::vector<PidStat>> tree = BuildProcessTreeFromStatTexts(1, texts);
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(
      tree.status().message(),
      "stat text #1: /proc/<pid>/stat: pid 2 has 4 fields after the comm, expected at least 22");
}

TEST(BuildProcessTree, IsEmptyWhenTheRootIsGone) {
  std::vector<PidStat> processes = {Process(1, 0), Process(10, 1)};
  EXPECT_TRUE(BuildProcessTree(99, processes).empty());
}

TEST(BuildProcessTree, LeavesOutReparentedOrphans) {
  // 12 was a child of 11; 11 exited and 12 now belongs to init.
  std::vector<PidStat> processes = {Process(1, 0), Process(10, 1), Process(12, 1), Process(13, 10)};
  EXPECT_EQ(Pids(BuildProcessTree(10, processes)), (std::vector<int32_t>{10, 13}));
}

TEST(BuildProcessTree, VisitsCyclesAndDuplicatesOnce) {
  std::vector<PidStat> processes = {Process(5, 6), Process(6, 5), Process(7, 6), Process(7, 6)};
  EXPECT_EQ(Pids(BuildProcessTree(5, processes)), (std::vector<int32_t>{5, 6, 7}));
}

}  // namespace
}  // namespace stepscope
