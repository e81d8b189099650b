// The counter set against this machine's kernel: the software events count what this process
// does, and every hardware event is either counted or absent with a reason (in a VM without a
// virtual PMU: "not supported"), never silently nothing. No timing is asserted: each check
// compares a counter with work the test did (CPU burnt by its own clock, sleeps, pages touched).
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/file_system.h"
#include "platform/perf/perf_counter_set.h"

namespace stepscope {
namespace {

uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Sum over the set's slots of an event's raw count; false when a read failed.
bool Total(PerfCounterSet& set, PerfEvent event, uint64_t& total) {
  std::vector<PerfCounterValue> values;
  set.Read(values);
  total = 0;
  for (size_t slot = 0; slot < set.slots(); ++slot) {
    const PerfCounterValue& value = values[static_cast<size_t>(event) * set.slots() + slot];
    if (!value.valid) return false;
    total += value.reading.value;
  }
  return true;
}

void BurnCpu(uint64_t ns) {
  const uint64_t until = ThreadCpuNs() + ns;
  volatile uint64_t sink = 0;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 10000; ++i) sink = sink + static_cast<uint64_t>(i) * 3;
  }
}

void SleepOften(int times) {
  for (int i = 0; i < times; ++i) {
    timespec ts{0, 1'000'000};
    nanosleep(&ts, nullptr);
  }
}

// Touches `pages` fresh anonymous pages, one fault each (huge pages off for the mapping).
bool TouchFreshPages(size_t pages) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* memory = mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return false;
  madvise(memory, pages * page, MADV_NOHUGEPAGE);
  for (size_t i = 0; i < pages; ++i) static_cast<volatile char*>(memory)[i * page] = 1;
  munmap(memory, pages * page);
  return true;
}

// A software event must count unless the kernel forbids perf_event_open to this process
// altogether (a locked-down container); then the reason must say so and the test is skipped.
void RequireCountedOrSkip(const PerfCounterSet& set, PerfEvent event) {
  const PerfEventStatus& status = set.statuses()[static_cast<size_t>(event)];
  if (status.counted) return;
  ASSERT_FALSE(status.reason.empty()) << PerfEventInfoOf(event).name << " is neither counted nor explained";
  ASSERT_TRUE(status.error == EACCES || status.error == EPERM || status.error == ENOSYS)
      << PerfEventInfoOf(event).name << ": " << status.reason;
  GTEST_SKIP() << "perf_event_open is not permitted here: " << status.reason;
}

PerfCounterSet OpenForThisProcess() {
  PerfCounterOptions options;
  options.scope = PerfCounterOptions::Scope::kJob;
  options.job_pid = static_cast<int32_t>(getpid());
  options.paranoid_level = ReadPerfParanoidLevel(LocalFileSystem());
  return PerfCounterSet::Open(SystemPerfEventApi(), options);
}

TEST(PerfEventsOnThisMachineTest, EveryEventIsCountedOrSaysWhyNot) {
  PerfCounterSet set = OpenForThisProcess();
  for (const PerfEventStatus& status : set.statuses()) {
    const std::string_view name = PerfEventInfoOf(status.event).name;
    if (status.counted) {
      EXPECT_TRUE(status.reason.empty()) << name;
      EXPECT_EQ(status.error, 0) << name;
    } else {
      EXPECT_NE(status.error, 0) << name;
      EXPECT_FALSE(status.reason.empty()) << name;
    }
  }
  EXPECT_FALSE(set.Summary().empty());
  std::printf("perf events here: %s\n", set.Summary().c_str());
}

TEST(PerfEventsOnThisMachineTest, BusyLoopRaisesTaskClock) {
  PerfCounterSet set = OpenForThisProcess();
  RequireCountedOrSkip(set, PerfEvent::kTaskClock);
  uint64_t before = 0, after = 0;
  ASSERT_TRUE(Total(set, PerfEvent::kTaskClock, before));
  BurnCpu(30'000'000);
  ASSERT_TRUE(Total(set, PerfEvent::kTaskClock, after));
  // 30 ms of this thread's CPU time by its own clock; task-clock counts it in ns.
  EXPECT_GE(after - before, 15'000'000u);
}

TEST(PerfEventsOnThisMachineTest, SleepingRaisesContextSwitches) {
  PerfCounterSet set = OpenForThisProcess();
  RequireCountedOrSkip(set, PerfEvent::kContextSwitches);
  uint64_t before = 0, after = 0;
  ASSERT_TRUE(Total(set, PerfEvent::kContextSwitches, before));
  SleepOften(50);  // each sleep gives up the CPU
  ASSERT_TRUE(Total(set, PerfEvent::kContextSwitches, after));
  EXPECT_GE(after - before, 25u);
}

TEST(PerfEventsOnThisMachineTest, TouchingFreshPagesRaisesPageFaults) {
  PerfCounterSet set = OpenForThisProcess();
  RequireCountedOrSkip(set, PerfEvent::kPageFaults);
  uint64_t before = 0, after = 0;
  ASSERT_TRUE(Total(set, PerfEvent::kPageFaults, before));
  ASSERT_TRUE(TouchFreshPages(2048));
  ASSERT_TRUE(Total(set, PerfEvent::kPageFaults, after));
  EXPECT_GE(after - before, 1024u);
}

TEST(PerfEventsOnThisMachineTest, HardwareEventsCountOrAreHonestlyAbsent) {
  PerfCounterSet set = OpenForThisProcess();
  for (PerfEvent event : {PerfEvent::kCycles, PerfEvent::kInstructions, PerfEvent::kCacheMisses,
                          PerfEvent::kBranchMisses}) {
    const PerfEventStatus& status = set.statuses()[static_cast<size_t>(event)];
    if (!status.counted) {
      // In a VM without a virtual PMU (this project's CI): ENOENT/EOPNOTSUPP, "not supported".
      EXPECT_FALSE(status.reason.empty()) << PerfEventInfoOf(event).name;
      if (status.error == ENOENT || status.error == EOPNOTSUPP || status.error == ENODEV) {
        EXPECT_THAT(status.reason, ::testing::HasSubstr("not supported"));
      }
    }
  }
  if (set.counted(PerfEvent::kInstructions)) {
    uint64_t before = 0, after = 0;
    ASSERT_TRUE(Total(set, PerfEvent::kInstructions, before));
    BurnCpu(5'000'000);
    ASSERT_TRUE(Total(set, PerfEvent::kInstructions, after));
    EXPECT_GT(after, before);
  }
}

TEST(PerfEventsOnThisMachineTest, PerCpuCountingSeesThisProcessSleepOrSaysItIsNotPermitted) {
  PerfCounterOptions options;
  options.scope = PerfCounterOptions::Scope::kPerCpu;
  options.cpus = OnlineCpus(LocalFileSystem());
  options.paranoid_level = ReadPerfParanoidLevel(LocalFileSystem());
  ASSERT_FALSE(options.cpus.empty());
  PerfCounterSet set = PerfCounterSet::Open(SystemPerfEventApi(), options);
  if (set.scope() == PerfScope::kNone) {
    const PerfEventStatus& status = set.statuses()[static_cast<size_t>(PerfEvent::kContextSwitches)];
    EXPECT_FALSE(status.reason.empty());
    GTEST_SKIP() << "per-CPU counting is not permitted here: " << status.reason;
  }
  ASSERT_EQ(set.scope(), PerfScope::kPerCpu);
  EXPECT_EQ(set.slots(), options.cpus.size());
  EXPECT_FALSE(set.counted(PerfEvent::kTaskClock));
  RequireCountedOrSkip(set, PerfEvent::kContextSwitches);
  uint64_t before = 0, after = 0;
  ASSERT_TRUE(Total(set, PerfEvent::kContextSwitches, before));
  SleepOften(50);
  ASSERT_TRUE(Total(set, PerfEvent::kContextSwitches, after));
  EXPECT_GE(after - before, 25u);
}

}  // namespace
}  // namespace stepscope
