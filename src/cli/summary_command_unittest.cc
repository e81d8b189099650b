// The terminal summary of a small run written with the real store writer
// (analysis/test_run_writer.h): exact timing, step statistics, findings from a rules.json
// document, overhead spans, the width limit and colour only when asked for.
#include "cli/summary_command.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "analysis/run_loader.h"
#include "analysis/test_run_writer.h"
#include "base/file_system.h"

namespace stepscope::cli {
namespace {

using analysis::testing::kTestEpochNs;
using analysis::testing::TestManifest;
using analysis::testing::TestStream;

constexpr uint64_t kMs = 1'000'000;

class SummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = ::testing::TempDir() + "/summary-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    const std::string node = job_ + "/worker-1";
    ASSERT_TRUE(CreateDirectories(node).ok());
    // The test epoch is 2023-11-14 22:13:20 UTC; the job runs 10 s.
    const std::string extra = R"("job":"train-x","start_time_ns":)" + std::to_string(kStartNs) +
                              R"(,"end_time_ns":)" + std::to_string(kStartNs + 10'000 * kMs) +
                              R"(,"ended":"exited with code 0","instance_type":"p3.2xlarge","instance_count":2)";
    ASSERT_TRUE(WriteFileAtomically(node + "/manifest.json", TestManifest("worker-1", "exited", extra)).ok());
    TestStream proc(node, "proc-7-abcd", 7, /*system=*/false);
    ASSERT_TRUE(proc.ok());
    // Relative to the test epoch: TRAIN steps of 100, 200, 300, 400 ms from 1 s, the third one
    // disturbed by a detail window; an EVAL step of 60 ms; one DetailWindowStop of 30 ms.
    const uint64_t offset = static_cast<uint64_t>(kStartNs - kTestEpochNs);
    uint64_t t = offset + 1000 * kMs;
    const uint64_t durations[] = {100, 200, 300, 400};
    for (int i = 0; i < 4; ++i) {
      proc.StepBegin(11, t, store::Phase::kTrain, i);
      if (i == 2) proc.Begin(11, t, "DetailWindow:operators");
      const uint64_t end = t + durations[i] * kMs;
      if (i == 2) {
        proc.Begin(11, end - 30 * kMs, "DetailWindowStop");
        proc.End(11, end, "DetailWindowStop");
        proc.End(11, end, "DetailWindow:operators");
      }
      proc.StepEnd(11, end, store::Phase::kTrain, i);
      t = end;
    }
    proc.StepBegin(11, t, store::Phase::kEval, 0);
    proc.StepEnd(11, t + 60 * kMs, store::Phase::kEval, 0);
    // Drops of both causes, counted in the ring header as the recorder's slow path does.
    proc.CountDropped(2, store::RingFile::DropCause::kBuffersFull);
    proc.CountDropped(1, store::RingFile::DropCause::kWriteFailed);
  }

  static constexpr int64_t kStartNs = kTestEpochNs + 1;
  std::string job_;
};

const char* kRulesJson = R"({"rules": [
  {"Rule": "StepOutlier", "findings": [
    {"rule": "StepOutlier", "severity": "warning", "title": "Step 3 took 4 times the median",
     "recommendation": "Look at what else ran on the node at that time.", "estimated_saving": 0.1}]},
  {"Rule": "DataloaderStarvation", "findings": [
    {"rule": "DataloaderStarvation", "severity": "critical", "title": "The loop waits for data 40 % of each step",
     "recommendation": "Raise num_workers of the DataLoader from 0 to 4 and set pin_memory=True; the node has 8 cores that sit idle while the training loop waits for the next batch.",
     "estimated_saving": 0.4}]}]})";

TEST_F(SummaryTest, PrintsTimingStepsFindingsAndOverhead) {
  auto model = analysis::LoadRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  SummaryOptions options;
  options.rules_json = nlohmann::json::parse(kRulesJson);
  options.report_path = job_ + "/report.html";
  options.report_exists = true;
  const std::string text = FormatRunSummary(*model, job_, options);

  // The report's verdict leads: its sentence, the top cause's next step, the headline figures.
  const size_t verdict = text.find("Verdict\n  The loop waits for data 40 % of each step; fixing it could save about 40 % of "
                                   "step time.\n");
  ASSERT_NE(verdict, std::string::npos) << text;
  EXPECT_LT(verdict, text.find("started 2023-11-14")) << text;
  EXPECT_NE(text.find("  TRAIN step time p50              200 ms\n"), std::string::npos) << text;
  // 2 x p3.2xlarge (built-in catalogue, $3.825/h each) for 10 s.
  EXPECT_NE(text.find("  cost of the run                  $0.02\n  cost per hour                    $7.65/h\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  started 2023-11-14 22:13:20 UTC, ran 10.0 s; exited with code 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  1 node, 2 x p3.2xlarge (source: stepscope)\n"), std::string::npos) << text;
  // Initialization 1 s, loop 1.06 s (four TRAIN steps and the EVAL step), finalization 7.94 s.
  EXPECT_NE(text.find("  initialization 1.0 s (10 %) | training loop 1.1 s (11 %) | finalization 7.9 s (79 %)\n"),
            std::string::npos)
      << text;
  // The disturbed step (300 ms) is left out: TRAIN 100, 200, 400 -> mean 233.33, p95 380.
  EXPECT_NE(text.find("  worker-1                         TRAIN           3     233.33     200.00     380.00     400.00\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  worker-1                         EVAL            1      60.00"), std::string::npos) << text;
  EXPECT_NE(text.find("  1 step that stepscope's detail windows ran in is left out.\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("Step time per rank"), std::string::npos) << text;  // one process, no ranks
  // Critical first; the recommendation wrapped under its arrow.
  const size_t critical = text.find("  [critical] DataloaderStarvation: The loop waits for data 40 % of each step (up to 40 % saving)\n");
  const size_t warning = text.find("  [warning] StepOutlier: Step 3 took 4 times the median (up to 10 % saving)\n");
  ASSERT_NE(critical, std::string::npos) << text;
  ASSERT_NE(warning, std::string::npos) << text;
  EXPECT_LT(critical, warning);
  EXPECT_NE(text.find("      -> Raise num_workers of the DataLoader from 0 to 4 and set pin_memory=True; the node has 8\n"
                      "         cores that sit idle while the training loop waits for the next batch.\n"),
            std::string::npos)
      << text;
  // Each cause with its own count: a full disk is not blamed on the buffers.
  EXPECT_NE(text.find("  dropped events: 3 (2 while buffers were full: the job recorded faster than stepscope "
                      "flushed; 1\n    while the log could not be written: disk full or I/O error)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  DetailWindowStop spans: 1, 30.0 ms in all\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  " + job_ + "/report.html\n"), std::string::npos) << text;
  EXPECT_EQ(text.find('\033'), std::string::npos);
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    EXPECT_LE(end - start, kSummaryWidth) << text.substr(start, end - start);
    start = end + 1;
  }
}

TEST_F(SummaryTest, ColourOnlyWhenAskedAndRulesEvaluatedWithoutRulesJson) {
  auto model = analysis::LoadRun(job_);
  ASSERT_TRUE(model.ok()) << model.status().message();
  SummaryOptions options;
  options.color = true;
  options.report_path = "runs/x/report.html";
  const std::string text = FormatRunSummary(*model, "runs/x", options);
  EXPECT_NE(text.find("\033[1mJob\033[0m\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Findings\033[0m (evaluated now)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  runs/x/report.html is not written yet: stepscope report runs/x\n"), std::string::npos) << text;
}

TEST(SummaryOverheadTest, AnImportedRunHasNoDropCounts) {
  analysis::ModelBuilder builder(analysis::ModelSource::kSageMaker);
  analysis::NodeFacts node;
  node.name = "algo-1";
  builder.AddNode(node);
  const analysis::Model model = std::move(builder).Finish();
  SummaryOptions options;
  options.report_path = "runs/x/report.html";
  const std::string text = FormatRunSummary(model, "runs/x", options);
  EXPECT_NE(text.find("  dropped events: not recorded by stepscope (imported run)\n"), std::string::npos) << text;
}

TEST_F(SummaryTest, ACleanRunDroppedNothing) {
  const std::string clean = job_ + "-clean/n";
  ASSERT_TRUE(CreateDirectories(clean).ok());
  ASSERT_TRUE(WriteFileAtomically(clean + "/manifest.json", TestManifest("n", "exited")).ok());
  {
    TestStream proc(clean, "proc-8-abcd", 8, /*system=*/false);
    ASSERT_TRUE(proc.ok());
    proc.StepBegin(1, 1000, store::Phase::kTrain, 0);
    proc.StepEnd(1, 2000, store::Phase::kTrain, 0);
  }
  auto model = analysis::LoadRun(clean);
  ASSERT_TRUE(model.ok()) << model.status().message();
  SummaryOptions options;
  options.report_path = "r";
  const std::string text = FormatRunSummary(*model, clean, options);
  EXPECT_NE(text.find("  dropped events: 0\n"), std::string::npos) << text;
}

TEST_F(SummaryTest, PrintRunSummaryReadsTheRunDirectory) {
  ASSERT_TRUE(CreateDirectories(job_ + "/rules").ok());
  ASSERT_TRUE(WriteFileAtomically(job_ + "/rules/rules.json", kRulesJson).ok());
  const std::string path = job_ + "/summary.txt";
  FILE* out = std::fopen(path.c_str(), "w");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(PrintRunSummary(job_, out), 0);
  std::fclose(out);
  LocalFileSystem fs;
  auto text = fs.ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("Findings (from " + job_ + "/rules/rules.json)\n"), std::string::npos) << *text;
  EXPECT_NE(text->find("  dropped events: 3 (2 while buffers were full"), std::string::npos) << *text;
  EXPECT_EQ(text->find('\033'), std::string::npos);  // a file is not a terminal
  EXPECT_EQ(PrintRunSummary(job_ + "/missing", out = std::fopen("/dev/null", "w")), 1);
  std::fclose(out);
}

// torchrun --nproc-per-node 2 on node "n": the agent (pid 30, no rank) and ranks 0 and 1 (pids
// 31, 32) with 10 TRAIN steps of 50 ms; rank 1 works 30 ms before its backward, so rank 0 waits
// those 30 ms in its own (40 ms of backward against rank 1's 10 ms).
TEST(SummaryRanksTest, PerRankStepTimesAndTheStragglerRank) {
  const std::string job = ::testing::TempDir() + "/summary-ranks-" + std::to_string(getpid());
  const std::string node = job + "/n";
  ASSERT_TRUE(CreateDirectories(node).ok());
  ASSERT_TRUE(WriteFileAtomically(node + "/manifest.json", TestManifest("n", "exited")).ok());
  {
    TestStream agent(node, "proc-30-a", 30, false);
    agent.Instant(1, 1 * kMs, "Lifecycle:ProcessStart");
    for (int rank = 0; rank < 2; ++rank) {
      TestStream proc(node, "proc-3" + std::to_string(rank + 1) + "-b", 31 + rank, false,
                      R"("ranks":{"RANK":")" + std::to_string(rank) + R"(","LOCAL_RANK":")" + std::to_string(rank) +
                          R"(","WORLD_SIZE":"2","GROUP_RANK":"0"})",
                      30);
      ASSERT_TRUE(proc.ok());
      for (int i = 0; i < 10; ++i) {
        const uint64_t t = (1000 + i * 100) * kMs;
        const uint64_t backward_ms = rank == 0 ? 40 : 10;
        proc.StepBegin(11, t, store::Phase::kTrain, i);
        proc.Begin(11, t + 50 * kMs - backward_ms * kMs, "Backward");
        proc.End(11, t + 50 * kMs, "Backward");
        proc.StepEnd(11, t + 50 * kMs, store::Phase::kTrain, i);
      }
    }
  }
  auto model = analysis::LoadRun(job);
  ASSERT_TRUE(model.ok()) << model.status().message();
  SummaryOptions options;
  options.report_path = job + "/report.html";
  const std::string text = FormatRunSummary(*model, job, options);
  EXPECT_NE(text.find("  n                                TRAIN          20      50.00      50.00      50.00      50.00\n"),
            std::string::npos)
      << text;
  const size_t table = text.find("Step time per rank (ms)\n"
                                 "  node                  rank pid      phase    count       p50       p95 backward p50  outside p50\n"
                                 "  n                        0 31       TRAIN       10     50.00     50.00        40.00        10.00\n"
                                 "  n                        1 32       TRAIN       10     50.00     50.00        10.00        40.00\n");
  EXPECT_NE(table, std::string::npos) << text;
  // The rules, evaluated now, name rank 1.
  EXPECT_NE(text.find("[critical] Straggler: rank 1 on n (pid 32) is a straggler: the other ranks wait for it in"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace stepscope::cli
