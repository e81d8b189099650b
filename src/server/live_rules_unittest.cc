// LiveRules over a run that a live writer is still appending to (analysis/test_run_writer.h):
// window by window as the model is refreshed, its document must end up equal to one evaluation
// of the finished run (what `stepscope report` computes), and the run's finished rules.json
// must win whenever it appears.
#include "server/live_rules.h"

#include <memory>

#include <gtest/gtest.h>

#include "analysis/run_loader.h"
#include "analysis/test_run_writer.h"
#include "base/file_system.h"
#include "base/test/temp_directory.h"
#include "report/report_model.h"

namespace stepscope::server {
namespace {

using analysis::testing::TestManifest;
using analysis::testing::TestStream;

constexpr int64_t kSecondNs = 1'000'000'000;
constexpr int64_t kMinutes = 5;  // five 60 s scan windows, the last one partial

class LiveRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    job_ = temp_.Path("job");
    ASSERT_TRUE(CreateDirectories(job_ + "/algo-1").ok());
    WriteManifest("running");
    proc_ = std::make_unique<TestStream>(job_ + "/algo-1", "proc-200-abcd", 200, false);
    system_ = std::make_unique<TestStream>(job_ + "/algo-1", "system", 100, true);
    ASSERT_TRUE(proc_->ok() && system_->ok());
  }
  void WriteManifest(const std::string& status) {
    ASSERT_TRUE(WriteFileAtomically(job_ + "/algo-1/manifest.json", TestManifest("algo-1", status)).ok());
  }
  std::string RulesJsonPath() const { return job_ + "/rules/rules.json"; }

  // One minute of training: a step every 3 s (every tenth one slow) and every 10 s a sample of
  // CPU and GPU utilization and of GPU memory, which peaks above MemoryNearCapacity's 90 % in
  // minute 3, so the finished evaluation has a finding.
  void RecordMinute(int64_t minute) {
    for (int64_t s = 0; s < 60; s += 3) {
      const int64_t step = minute * 20 + s / 3;
      const uint64_t start = static_cast<uint64_t>((minute * 60 + s) * kSecondNs);
      const uint64_t duration = static_cast<uint64_t>(step % 10 == 9 ? 2'500'000'000 : 1'000'000'000);
      proc_->StepBegin(1, start, store::Phase::kTrain, step);
      proc_->StepEnd(1, start + duration, store::Phase::kTrain, step);
    }
    for (int64_t s = 0; s < 60; s += 10) {
      const uint64_t t = static_cast<uint64_t>((minute * 60 + s) * kSecondNs);
      system_->Sample(t, "cpu/cpu0/util_pct", 40 + static_cast<double>(s));
      system_->Sample(t, "gpu/gpu0/util_pct", 70 - static_cast<double>(s) / 2);
      system_->Sample(t, "gpu/gpu0/memory_used_pct", minute == 3 && s == 30 ? 95 : 60 + static_cast<double>(minute));
    }
  }

  // The job ends: its writers go and the manifest is final, so the model stops growing.
  void EndJob() {
    proc_->Close();
    system_->Close();
    WriteManifest("exited");
  }

  analysis::Model Load() {
    auto model = analysis::LoadRun(job_);
    EXPECT_TRUE(model.ok()) << model.status().message();
    return model.ok() ? std::move(*model) : analysis::ModelBuilder(analysis::ModelSource::kStepscope).Finish();
  }
  static void Refresh(analysis::Model& model) {
    auto refreshed = model.Refresh();
    ASSERT_TRUE(refreshed.ok()) << refreshed.status().message();
  }
  // What the report evaluates for the run as it is on disk now, in one go.
  nlohmann::json OneShot() {
    std::string source;
    auto rules = report::LoadOrEvaluateRules(RulesJsonPath(), Load(), &source);
    EXPECT_TRUE(rules.ok()) << rules.status().message();
    EXPECT_EQ(source, "evaluated");
    return rules.ok() ? *rules : nlohmann::json();
  }
  static bool Changed(LiveRules& live, const analysis::Model& model) {
    StatusOr<bool> changed = live.Update(model);
    EXPECT_TRUE(changed.ok()) << changed.status().message();
    return changed.ok() && *changed;
  }

  TempDirectory temp_;
  std::string job_;
  std::unique_ptr<TestStream> proc_;
  std::unique_ptr<TestStream> system_;
};

TEST_F(LiveRulesTest, WindowByWindowAsTheRunGrowsEqualsOneEvaluationOfTheFinishedRun) {
  RecordMinute(0);
  analysis::Model model = Load();
  ASSERT_TRUE(model.CanGrow());
  LiveRules live(RulesJsonPath());
  EXPECT_TRUE(Changed(live, model));  // the first document: the windows complete in minute 0
  EXPECT_EQ(live.source(), "live");
  EXPECT_EQ(live.document()["finished"], false);

  size_t windows_seen = live.document()["windows_evaluated"].get<size_t>();
  for (int64_t minute = 1; minute < kMinutes; ++minute) {
    RecordMinute(minute);
    Refresh(model);
    ASSERT_TRUE(model.CanGrow());
    EXPECT_TRUE(Changed(live, model)) << "minute " << minute << " completed a window";
    const size_t windows = live.document()["windows_evaluated"].get<size_t>();
    EXPECT_GT(windows, windows_seen);
    windows_seen = windows;
    EXPECT_FALSE(Changed(live, model)) << "nothing new: nothing evaluated again";
    EXPECT_EQ(live.document()["finished"], false);
  }
  EXPECT_EQ(live.source(), "live");

  EndJob();
  Refresh(model);
  ASSERT_FALSE(model.CanGrow());
  EXPECT_TRUE(Changed(live, model));  // the remaining windows and the rules' conclusions
  EXPECT_EQ(live.document()["finished"], true);
  EXPECT_GT(live.document()["windows_evaluated"].get<size_t>(), windows_seen);
  EXPECT_EQ(live.source(), "live");
  EXPECT_FALSE(Changed(live, model));

  const nlohmann::json one_shot = OneShot();
  EXPECT_EQ(live.document(), one_shot);
  // The comparison has findings to compare.
  EXPECT_EQ(one_shot["status"], "IssuesFound");
  bool memory_finding = false;
  for (const nlohmann::json& rule : one_shot["rules"]) {
    memory_finding = memory_finding || (rule["Rule"] == "MemoryNearCapacity" && rule["RuleTriggered"] > 0);
  }
  EXPECT_TRUE(memory_finding) << one_shot.dump(1);
}

TEST_F(LiveRulesTest, ARunThatCannotGrowIsEvaluatedOnceAsTheReportDoes) {
  for (int64_t minute = 0; minute < kMinutes; ++minute) RecordMinute(minute);
  EndJob();
  const analysis::Model model = Load();
  ASSERT_FALSE(model.CanGrow());
  LiveRules live(RulesJsonPath());
  EXPECT_TRUE(Changed(live, model));
  EXPECT_EQ(live.source(), "evaluated");
  EXPECT_EQ(live.document(), OneShot());
  EXPECT_FALSE(Changed(live, model));
}

TEST_F(LiveRulesTest, TheRunsFinishedRulesJsonWinsWheneverItAppears) {
  RecordMinute(0);
  RecordMinute(1);
  analysis::Model model = Load();
  LiveRules live(RulesJsonPath());
  EXPECT_TRUE(Changed(live, model));
  ASSERT_EQ(live.source(), "live");

  // What online rules write while the job runs is not the run's final word.
  ASSERT_TRUE(CreateDirectories(job_ + "/rules").ok());
  ASSERT_TRUE(WriteFileAtomically(RulesJsonPath(), R"({"finished": false, "status": "IssuesFound", "rules": []})").ok());
  EXPECT_FALSE(Changed(live, model));
  EXPECT_EQ(live.source(), "live");

  const nlohmann::json finished = {{"finished", true}, {"status", "NoIssuesFound"}, {"windows_evaluated", 7},
                                   {"rules", nlohmann::json::array()}};
  ASSERT_TRUE(WriteFileAtomically(RulesJsonPath(), finished.dump()).ok());
  EXPECT_TRUE(Changed(live, model));
  EXPECT_EQ(live.source(), "rules.json");
  EXPECT_EQ(live.document(), finished);

  // It stays the answer as the run grows and ends.
  RecordMinute(2);
  Refresh(model);
  EXPECT_FALSE(Changed(live, model));
  EndJob();
  Refresh(model);
  EXPECT_FALSE(Changed(live, model));
  EXPECT_EQ(live.document(), finished);
}

TEST_F(LiveRulesTest, AFinishedFileAfterTheOwnConclusionStillWins) {
  RecordMinute(0);
  EndJob();
  const analysis::Model model = Load();
  LiveRules live(RulesJsonPath());
  EXPECT_TRUE(Changed(live, model));
  ASSERT_EQ(live.document()["finished"], true);
  ASSERT_EQ(live.source(), "evaluated");

  // The end of `stepscope run` writes its rules.json (with the run's rule settings) last.
  const nlohmann::json finished = {{"finished", true}, {"status", "IssuesFound"}, {"rules", nlohmann::json::array()}};
  ASSERT_TRUE(CreateDirectories(job_ + "/rules").ok());
  ASSERT_TRUE(WriteFileAtomically(RulesJsonPath(), finished.dump()).ok());
  EXPECT_TRUE(Changed(live, model));
  EXPECT_EQ(live.source(), "rules.json");
  EXPECT_EQ(live.document(), finished);
}

}  // namespace
}  // namespace stepscope::server
