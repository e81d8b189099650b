#include "platform/perf/perf_counter_set.h"

#include <linux/perf_event.h>

#include <cerrno>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "platform/perf/fake_perf_event_api.h"

namespace stepscope {
namespace {

using ::testing::HasSubstr;
using testing::FakePerfEventApi;

bool IsHardware(const PerfEventRequest& request) { return request.type == PERF_TYPE_HARDWARE; }

PerfCounterOptions TwoCpusAndJob() {
  PerfCounterOptions options;
  options.cpus = {0, 1};
  options.job_pid = 4242;
  options.paranoid_level = 2;
  return options;
}

TEST(PerfCounterSetTest, CountsEveryEventPerCpuWhenPermitted) {
  FakePerfEventApi api;
  PerfCounterSet set = PerfCounterSet::Open(api, TwoCpusAndJob());
  EXPECT_EQ(set.scope(), PerfScope::kPerCpu);
  EXPECT_EQ(set.slots(), 2u);
  for (const PerfEventStatus& status : set.statuses()) {
    // task-clock per CPU would be wall time: never opened there.
    EXPECT_EQ(status.counted, status.event != PerfEvent::kTaskClock) << PerfEventInfoOf(status.event).name;
  }
  EXPECT_THAT(set.statuses()[static_cast<size_t>(PerfEvent::kTaskClock)].reason, HasSubstr("wall time"));
  EXPECT_EQ(api.open_count(), 7u * 2u);
  EXPECT_FALSE(api.AnyOpen([](const PerfEventRequest& r) { return r.pid != -1 || r.inherit || r.exclude_kernel; }));
}

TEST(PerfCounterSetTest, HardwareMissingInAVmLeavesSoftwareCountedWithTheReason) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest& r) { return IsHardware(r) ? ENOENT : 0; };
  PerfCounterSet set = PerfCounterSet::Open(api, TwoCpusAndJob());
  EXPECT_EQ(set.scope(), PerfScope::kPerCpu);
  EXPECT_FALSE(set.counted(PerfEvent::kCycles));
  EXPECT_FALSE(set.counted(PerfEvent::kInstructions));
  EXPECT_TRUE(set.counted(PerfEvent::kContextSwitches));
  EXPECT_TRUE(set.counted(PerfEvent::kPageFaults));
  const PerfEventStatus& cycles = set.statuses()[static_cast<size_t>(PerfEvent::kCycles)];
  EXPECT_EQ(cycles.error, ENOENT);
  EXPECT_THAT(cycles.reason, HasSubstr("not supported"));
  EXPECT_THAT(set.Summary(), HasSubstr("per CPU: context-switches, page-faults, cpu-migrations"));
  EXPECT_THAT(set.Summary(), HasSubstr("not counted: cycles, instructions, cache-misses, branch-misses (not supported"));
  EXPECT_EQ(api.open_count(), 3u * 2u);
}

TEST(PerfCounterSetTest, AnEventFailingOnOneCpuIsClosedOnAll) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest& r) {
    return r.type == PERF_TYPE_SOFTWARE && r.config == PERF_COUNT_SW_PAGE_FAULTS && r.cpu == 1 ? EMFILE : 0;
  };
  PerfCounterSet set = PerfCounterSet::Open(api, TwoCpusAndJob());
  EXPECT_FALSE(set.counted(PerfEvent::kPageFaults));
  EXPECT_THAT(set.statuses()[static_cast<size_t>(PerfEvent::kPageFaults)].reason, HasSubstr("ulimit -n"));
  EXPECT_FALSE(api.AnyOpen([](const PerfEventRequest& r) { return r.config == PERF_COUNT_SW_PAGE_FAULTS && r.type == PERF_TYPE_SOFTWARE; }));
  EXPECT_EQ(api.bad_closes, 0);
}

TEST(PerfCounterSetTest, FallsBackToTheJobsProcessesWhenPerCpuIsNotPermitted) {
  FakePerfEventApi api;
  // paranoid 2, unprivileged: no per-CPU counting, user space only for one's own processes.
  api.open_error = [](const PerfEventRequest& r) { return r.pid == -1 || !r.exclude_kernel ? EACCES : 0; };
  PerfCounterSet set = PerfCounterSet::Open(api, TwoCpusAndJob());
  ASSERT_EQ(set.scope(), PerfScope::kJob);
  EXPECT_EQ(set.slots(), 1u);
  EXPECT_EQ(set.job_pid(), 4242);
  for (PerfEvent event : {PerfEvent::kCycles, PerfEvent::kInstructions, PerfEvent::kTaskClock, PerfEvent::kPageFaults}) {
    const PerfEventStatus& status = set.statuses()[static_cast<size_t>(event)];
    EXPECT_TRUE(status.counted) << PerfEventInfoOf(event).name;
    EXPECT_TRUE(status.user_only);
  }
  // Counted only in the kernel: a user-space-only count would be a silent 0.
  const PerfEventStatus& switches = set.statuses()[static_cast<size_t>(PerfEvent::kContextSwitches)];
  EXPECT_FALSE(switches.counted);
  EXPECT_EQ(switches.error, EACCES);
  EXPECT_THAT(switches.reason, HasSubstr("kernel.perf_event_paranoid=2"));
  EXPECT_THAT(switches.reason, HasSubstr("kernel mode only"));
  EXPECT_FALSE(api.AnyOpen([](const PerfEventRequest& r) {
    return r.pid != 4242 || r.cpu != -1 || !r.inherit || !r.exclude_kernel;
  }));
  EXPECT_THAT(set.Summary(), HasSubstr("the job's processes (user space only): cycles"));
}

TEST(PerfCounterSetTest, NothingPermittedAndNoJobMeansNoneWithTheReason) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest&) { return EACCES; };
  PerfCounterOptions options = TwoCpusAndJob();
  options.job_pid = 0;
  options.paranoid_level = 3;
  PerfCounterSet set = PerfCounterSet::Open(api, options);
  EXPECT_EQ(set.scope(), PerfScope::kNone);
  EXPECT_FALSE(set.any_counted());
  EXPECT_EQ(api.open_count(), 0u);
  EXPECT_THAT(set.statuses()[0].reason, HasSubstr("kernel.perf_event_paranoid=3"));
  EXPECT_THAT(set.Summary(), HasSubstr("not counted: cycles"));
  std::vector<PerfCounterValue> values;
  set.Read(values);
  EXPECT_TRUE(values.empty());
}

TEST(PerfCounterSetTest, JobScopeCanBeAskedFor) {
  FakePerfEventApi api;
  PerfCounterOptions options = TwoCpusAndJob();
  options.scope = PerfCounterOptions::Scope::kJob;
  PerfCounterSet set = PerfCounterSet::Open(api, options);
  EXPECT_EQ(set.scope(), PerfScope::kJob);
  EXPECT_TRUE(set.counted(PerfEvent::kTaskClock));
  EXPECT_FALSE(set.statuses()[0].user_only);
}

TEST(PerfCounterSetTest, ReadsScaledInputsAndClosesEveryDescriptor) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest& r) { return IsHardware(r) ? EOPNOTSUPP : 0; };
  PerfCounterSet set = PerfCounterSet::Open(api, TwoCpusAndJob());
  api.Advance(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, 77, 1000, 500);
  api.FailReads(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, true);
  std::vector<PerfCounterValue> values;
  set.Read(values);
  ASSERT_EQ(values.size(), kPerfEventCount * 2);
  const PerfCounterValue& switches_cpu1 = values[static_cast<size_t>(PerfEvent::kContextSwitches) * 2 + 1];
  EXPECT_TRUE(switches_cpu1.valid);
  EXPECT_EQ(switches_cpu1.reading.value, 77u);
  EXPECT_EQ(switches_cpu1.reading.time_running_ns, 500u);
  EXPECT_FALSE(values[static_cast<size_t>(PerfEvent::kPageFaults) * 2].valid);
  EXPECT_FALSE(values[static_cast<size_t>(PerfEvent::kCycles) * 2].valid);

  PerfCounterSet moved = std::move(set);
  EXPECT_EQ(api.open_count(), 3u * 2u);
  moved.Close();
  EXPECT_EQ(api.open_count(), 0u);
  moved.Close();
  EXPECT_EQ(api.bad_closes, 0);
  moved.Read(values);
  EXPECT_FALSE(values[static_cast<size_t>(PerfEvent::kContextSwitches) * 2 + 1].valid);
}

TEST(PerfCounterSetTest, ErrorReasonsSayWhatToDo) {
  EXPECT_THAT(PerfOpenErrorReason(EACCES, 2, PerfScope::kPerCpu), HasSubstr("CAP_PERFMON"));
  EXPECT_THAT(PerfOpenErrorReason(EACCES, std::nullopt, PerfScope::kJob), HasSubstr("paranoid=unknown"));
  EXPECT_THAT(PerfOpenErrorReason(EBUSY, 0, PerfScope::kPerCpu), HasSubstr("busy"));
  EXPECT_THAT(PerfOpenErrorReason(E2BIG, 0, PerfScope::kPerCpu), HasSubstr("errno"));
}

TEST(ParseCpuListTest, ReadsRangesAndSingles) {
  auto cpus = ParseCpuList("0-3,6,8-9\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status().message();
  EXPECT_EQ(*cpus, (std::vector<int32_t>{0, 1, 2, 3, 6, 8, 9}));
  EXPECT_EQ(*ParseCpuList("0"), (std::vector<int32_t>{0}));
}

TEST(ParseCpuListTest, RefusesWhatIsNotACpuList) {
  for (const char* text : {"", "a", "3-1", "0,,1", "-1", "0-99999999", "1-"}) {
    EXPECT_FALSE(ParseCpuList(text).ok()) << text;
  }
}

}  // namespace
}  // namespace stepscope
