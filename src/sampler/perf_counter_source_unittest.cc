#include "sampler/perf_counter_source.h"

#include <linux/perf_event.h>

#include <cerrno>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "platform/perf/fake_perf_event_api.h"

namespace stepscope {
namespace {

using testing::FakePerfEventApi;
using ::testing::IsEmpty;

constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint32_t kHw = PERF_TYPE_HARDWARE;
constexpr uint32_t kSw = PERF_TYPE_SOFTWARE;

std::map<std::string, double> Poll(PerfCounterSource& source, uint64_t monotonic_ns) {
  std::vector<MetricSample> samples;
  EXPECT_TRUE(source.Poll(monotonic_ns, samples).ok());
  std::map<std::string, double> by_name;
  for (const MetricSample& sample : samples) {
    EXPECT_TRUE(by_name.emplace(sample.name, sample.value).second) << "twice: " << sample.name;
  }
  return by_name;
}

PerfCounterSet OpenPerCpu(FakePerfEventApi& api) {
  PerfCounterOptions options;
  options.cpus = {0, 1};
  options.job_pid = 99;
  return PerfCounterSet::Open(api, options);
}

TEST(PerfCounterSourceTest, SoftwareOnlyVmGivesPerCpuAndTotalRatesAndNoHardwareMetrics) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest& r) { return r.type == kHw ? ENOENT : 0; };
  PerfCounterSource source(OpenPerCpu(api));
  EXPECT_THAT(Poll(source, 10 * kSecond), IsEmpty());  // the baseline

  api.Advance(kSw, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 200, 2 * kSecond, 2 * kSecond);
  api.Advance(kSw, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, 100, 2 * kSecond, 2 * kSecond);
  api.Advance(kSw, PERF_COUNT_SW_PAGE_FAULTS, 0, 4000, 2 * kSecond, 2 * kSecond);
  api.Advance(kSw, PERF_COUNT_SW_PAGE_FAULTS, 1, 0, 2 * kSecond, 2 * kSecond);
  api.Advance(kSw, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0, 2 * kSecond, 2 * kSecond);
  api.Advance(kSw, PERF_COUNT_SW_CPU_MIGRATIONS, 1, 0, 2 * kSecond, 2 * kSecond);
  const std::map<std::string, double> expected = {
      {"perf/cpu0/context_switches_per_s", 100}, {"perf/cpu1/context_switches_per_s", 50},
      {"perf/total/context_switches_per_s", 150}, {"perf/cpu0/page_faults_per_s", 2000},
      {"perf/cpu1/page_faults_per_s", 0},         {"perf/total/page_faults_per_s", 2000},
      {"perf/cpu0/cpu_migrations_per_s", 0},      {"perf/cpu1/cpu_migrations_per_s", 0},
      {"perf/total/cpu_migrations_per_s", 0}};
  EXPECT_EQ(Poll(source, 12 * kSecond), expected);
}

TEST(PerfCounterSourceTest, IpcFromInstructionsAndCyclesWithMultiplexingScaledPerInterval) {
  FakePerfEventApi api;
  PerfCounterSet set = OpenPerCpu(api);
  PerfCounterSource source(std::move(set));
  // Before the first poll the counters ran unmultiplexed: that history must not scale this one.
  api.Advance(kHw, PERF_COUNT_HW_INSTRUCTIONS, 0, 5000, kSecond, kSecond);
  Poll(source, kSecond);
  // cpu0: instructions ran half of the interval (multiplexed): 1500 counted -> 3000.
  api.Advance(kHw, PERF_COUNT_HW_INSTRUCTIONS, 0, 1500, kSecond, kSecond / 2);
  api.Advance(kHw, PERF_COUNT_HW_CPU_CYCLES, 0, 1000, kSecond, kSecond);
  api.Advance(kHw, PERF_COUNT_HW_INSTRUCTIONS, 1, 500, kSecond, kSecond);
  api.Advance(kHw, PERF_COUNT_HW_CPU_CYCLES, 1, 1000, kSecond, kSecond);
  std::map<std::string, double> samples = Poll(source, 2 * kSecond);
  EXPECT_DOUBLE_EQ(samples.at("perf/cpu0/instructions_per_s"), 3000);
  EXPECT_DOUBLE_EQ(samples.at("perf/cpu0/ipc"), 3.0);
  EXPECT_DOUBLE_EQ(samples.at("perf/cpu1/ipc"), 0.5);
  EXPECT_DOUBLE_EQ(samples.at("perf/total/ipc"), 3500.0 / 2000.0);
  EXPECT_DOUBLE_EQ(samples.at("perf/total/cycles_per_s"), 2000);
  EXPECT_EQ(samples.count("perf/cpu0/cache_misses_per_s"), 1u);
  EXPECT_EQ(samples.count("perf/job/task_clock_pct"), 0u);
}

TEST(PerfCounterSourceTest, ACounterThatDidNotRunOrWentBackwardsOrFailedGivesNothingThatInterval) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest& r) { return r.type == kHw ? EOPNOTSUPP : 0; };
  PerfCounterSource source(OpenPerCpu(api));
  api.SetValue(kSw, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, 1000);
  Poll(source, kSecond);
  // Multiplexed out for the whole interval on cpu0; backwards on cpu1; page faults unreadable.
  api.Advance(kSw, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, kSecond, 0);
  api.SetValue(kSw, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, 10);
  api.FailReads(kSw, PERF_COUNT_SW_PAGE_FAULTS, true);
  std::map<std::string, double> samples = Poll(source, 2 * kSecond);
  for (const char* name : {"perf/cpu0/context_switches_per_s", "perf/cpu1/context_switches_per_s",
                           "perf/total/context_switches_per_s", "perf/cpu0/page_faults_per_s",
                           "perf/total/page_faults_per_s"}) {
    EXPECT_EQ(samples.count(name), 0u) << name;
  }
  EXPECT_EQ(samples.count("perf/total/cpu_migrations_per_s"), 1u);
  // The next interval is measured from the values read now.
  api.FailReads(kSw, PERF_COUNT_SW_PAGE_FAULTS, false);
  api.Advance(kSw, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, 30, kSecond, kSecond);
  samples = Poll(source, 3 * kSecond);
  EXPECT_DOUBLE_EQ(samples.at("perf/cpu1/context_switches_per_s"), 30);
  EXPECT_EQ(samples.count("perf/total/page_faults_per_s"), 0u);  // baseline again after the failed read
  samples = Poll(source, 4 * kSecond);
  EXPECT_DOUBLE_EQ(samples.at("perf/total/page_faults_per_s"), 0);
}

TEST(PerfCounterSourceTest, JobScopeGivesTaskClockAsShareOfOneCoreAndZeroWhileTheJobSleeps) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest& r) { return r.pid == -1 ? EACCES : (r.type == kHw ? ENOENT : 0); };
  PerfCounterOptions options;
  options.cpus = {0, 1};
  options.job_pid = 99;
  PerfCounterSet set = PerfCounterSet::Open(api, options);
  ASSERT_EQ(set.scope(), PerfScope::kJob);
  PerfCounterSource source(std::move(set));
  Poll(source, kSecond);
  // 1.5 s of CPU over 1 s of wall time (two threads): enabled/running count task time.
  api.Advance(kSw, PERF_COUNT_SW_TASK_CLOCK, -1, 3 * kSecond / 2, 3 * kSecond / 2, 3 * kSecond / 2);
  api.Advance(kSw, PERF_COUNT_SW_PAGE_FAULTS, -1, 10, 3 * kSecond / 2, 3 * kSecond / 2);
  std::map<std::string, double> samples = Poll(source, 2 * kSecond);
  EXPECT_DOUBLE_EQ(samples.at("perf/job/task_clock_pct"), 150);
  EXPECT_DOUBLE_EQ(samples.at("perf/job/page_faults_per_s"), 10);
  EXPECT_EQ(samples.count("perf/total/page_faults_per_s"), 0u);
  // The job slept: its counters were neither enabled nor running, which is 0, not unknown.
  samples = Poll(source, 3 * kSecond);
  EXPECT_DOUBLE_EQ(samples.at("perf/job/task_clock_pct"), 0);
  EXPECT_DOUBLE_EQ(samples.at("perf/job/context_switches_per_s"), 0);
}

TEST(PerfCounterSourceTest, NothingCountedPollsToNothing) {
  FakePerfEventApi api;
  api.open_error = [](const PerfEventRequest&) { return EACCES; };
  PerfCounterSource source(PerfCounterSet::Open(api, PerfCounterOptions{}));
  EXPECT_THAT(Poll(source, kSecond), IsEmpty());
  EXPECT_THAT(Poll(source, 2 * kSecond), IsEmpty());
}

}  // namespace
}  // namespace stepscope
