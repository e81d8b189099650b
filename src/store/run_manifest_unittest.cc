#include "store/run_manifest.h"

#include <gtest/gtest.h>

namespace stepscope::store {
namespace {

RunManifest FinishedManifest() {
  RunManifest m;
  m.format_version = 1;
  m.job = "train";
  m.node = "node-a";
  m.hosts = {"host-a"};
  m.command = {"python", "train.py", "--lr", "0.1"};
  m.config = {{"interval", {{"value", "500ms"}, {"ns", 500'000'000}, {"from", "default"}}}};
  m.versions = {{"stepscope", "0.1"}};
  m.capabilities.gpu_available = true;
  m.capabilities.gpus = {"H100", "H100"};
  m.capabilities.gpu_memory_bytes = {80'000'000'000, 80'000'000'000};
  m.capabilities.tick_clock = "tsc";
  m.has_clock = true;
  m.clock_monotonic_ns = 1'000;
  m.clock_realtime_ns = 1'700'000'000'000'000'000;
  m.start_time_ns = 1'700'000'000'000'000'000;
  m.end_time_ns = 1'700'000'010'000'000'000;
  m.launcher_pid = 10;
  m.job_pid = 11;
  m.status = ManifestStatus::kKilled;
  m.exit = {true, true, 0, 9, "SIGKILL", false, 137};
  m.ended = "killed by SIGKILL";
  m.sampler = {true, 20, 1, 4000, 0, 12'000'000, 250'000'000};
  ManifestControl control;
  control.sequence = 1;
  control.applied_at_ns = 1'700'000'005'000'000'000;
  control.interval_ns = 250'000'000;
  control.previous_interval_ns = 500'000'000;
  m.control.push_back(control);
  m.instance_type = "ml.p4d.24xlarge";
  m.instance_count = 2;
  m.nodes_expected = 4;
  m.node_rank = 0;
  m.metrics_url = "http://127.0.0.1:9400/metrics";
  m.streams_listed = true;
  m.streams = {"proc-11-ab", "system"};
  return m;
}

TEST(RunManifestTest, WhatTheWriterWritesTheReaderReadsBack) {
  const RunManifest written = FinishedManifest();
  auto read = ParseRunManifest(ManifestText(written), "manifest.json");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->job, "train");
  EXPECT_EQ(read->command, written.command);
  EXPECT_EQ(read->status, ManifestStatus::kKilled);
  EXPECT_TRUE(read->exit.signaled);
  EXPECT_EQ(read->exit.signal_name, "SIGKILL");
  EXPECT_EQ(read->exit.launcher_exit_code, 137);
  EXPECT_EQ(read->capabilities.gpus, written.capabilities.gpus);
  EXPECT_EQ(read->capabilities.gpu_memory_bytes, written.capabilities.gpu_memory_bytes);
  EXPECT_EQ(read->ClockOffsetNs(), written.clock_realtime_ns - written.clock_monotonic_ns);
  EXPECT_EQ(read->sampler.cpu_ns, 12'000'000u);
  EXPECT_EQ(read->instance_count, 2);
  EXPECT_EQ(read->nodes_expected, 4);
  EXPECT_EQ(read->node_rank, 0);  // rank 0 is written, not taken for "unknown"
  EXPECT_EQ(read->metrics_url, "http://127.0.0.1:9400/metrics");
  EXPECT_EQ(read->streams, written.streams);
  EXPECT_TRUE(read->streams_listed);
  // The writer's text is a fixed point: read and written again, it is the same bytes.
  EXPECT_EQ(ManifestText(*read), ManifestText(written));
}

TEST(RunManifestTest, AbsentGpuMetricsAreKeptAndLeftOutWhenNone) {
  RunManifest written = FinishedManifest();
  EXPECT_EQ(ManifestText(written).find("metrics_absent"), std::string::npos);
  written.capabilities.gpu_metrics_absent = {"gpu0 (H100): ECC error counts absent: not supported",
                                             "Xid error events absent: no event functions"};
  auto read = ParseRunManifest(ManifestText(written), "manifest.json");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->capabilities.gpu_metrics_absent, written.capabilities.gpu_metrics_absent);
  EXPECT_EQ(ManifestText(*read), ManifestText(written));
}

TEST(RunManifestTest, PerfCounterEventsAreKeptAndLeftOutForRunsThatNeverOpenedThem) {
  RunManifest written = FinishedManifest();
  EXPECT_EQ(ManifestText(written).find("\"events\""), std::string::npos);
  written.capabilities.perf_counters_available = true;
  written.capabilities.perf_scope = "job";
  written.capabilities.perf_events = {{"cycles", false, false, "not supported: no PMU"}, {"page-faults", true, true, ""}};
  auto read = ParseRunManifest(ManifestText(written), "manifest.json");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->capabilities.perf_scope, "job");
  ASSERT_EQ(read->capabilities.perf_events.size(), 2u);
  EXPECT_EQ(read->capabilities.perf_events[0].reason, "not supported: no PMU");
  EXPECT_FALSE(read->capabilities.perf_events[0].counted);
  EXPECT_TRUE(read->capabilities.perf_events[1].counted);
  EXPECT_TRUE(read->capabilities.perf_events[1].user_only);
  EXPECT_EQ(ManifestText(*read), ManifestText(written));
}

TEST(RunManifestTest, TheIntervalInForceFollowsAppliedControlEntriesOnly) {
  RunManifest m = FinishedManifest();
  m.interval_ns = 500'000'000;
  ManifestControl refused;
  refused.applied_at_ns = m.control[0].applied_at_ns + 1;
  refused.interval_ns = 1'000'000;
  refused.error = "bad file";
  m.control.push_back(refused);
  EXPECT_EQ(m.IntervalAt(m.start_time_ns), 500'000'000);
  EXPECT_EQ(m.IntervalAt(m.control[0].applied_at_ns), 250'000'000);
  EXPECT_EQ(m.IntervalAt(m.end_time_ns), 250'000'000);
}

TEST(RunManifestTest, FieldsOfTheWrongTypeReadAsAbsent) {
  auto read = ParseRunManifest(R"({"schema_version": "1", "job": 7, "command": "python train.py",
                                   "status": ["exited"], "exit": 3, "pids": {"job": "x"},
                                   "capabilities": {"gpu": {"available": "yes", "gpus": [1, "A100"]}},
                                   "control": [1, {"changes": {"interval_ns": "fast"}}], "streams": "system"})",
                               "m.json");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->job, "");
  EXPECT_TRUE(read->command.empty());
  EXPECT_EQ(read->status, ManifestStatus::kUnknown);
  EXPECT_FALSE(read->exit.known);
  EXPECT_EQ(read->job_pid, 0);
  EXPECT_FALSE(read->capabilities.gpu_available);
  EXPECT_EQ(read->capabilities.gpus, std::vector<std::string>{"A100"});
  ASSERT_EQ(read->control.size(), 1u);
  EXPECT_EQ(read->control[0].interval_ns, 0);
  EXPECT_FALSE(read->streams_listed);
  EXPECT_FALSE(read->ClockOffsetNs().has_value());
  EXPECT_EQ(read->node_rank, -1);  // absent: unknown
  EXPECT_EQ(read->nodes_expected, 0);
}

TEST(RunManifestTest, TextThatIsNotAnObjectIsOneLineNamingTheFile) {
  for (const char* text : {"", "[1]", "{\"job\":", "\xff\xfe"}) {
    auto read = ParseRunManifest(text, "/runs/j/n/manifest.json");
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.status().message().find("/runs/j/n/manifest.json"), std::string::npos);
    EXPECT_EQ(read.status().message().find('\n'), std::string::npos);
  }
}

TEST(RunManifestTest, FinalStatusesAreTheOnesAfterTheLauncherLastWord) {
  EXPECT_FALSE(IsFinal(ManifestStatus::kStarting));
  EXPECT_FALSE(IsFinal(ManifestStatus::kRunning));
  EXPECT_TRUE(IsFinal(ManifestStatus::kExited));
  EXPECT_TRUE(IsFinal(ManifestStatus::kKilled));
  EXPECT_TRUE(IsFinal(ManifestStatus::kFailedToStart));
  EXPECT_FALSE(IsFinal(ManifestStatus::kUnknown));
  EXPECT_FALSE(SamplerStarted(ManifestStatus::kStarting));
  EXPECT_TRUE(SamplerStarted(ManifestStatus::kRunning));
}

}  // namespace
}  // namespace stepscope::store
