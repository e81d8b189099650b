#include "launcher/online_rules.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "base/test/manual_wait_clock.h"

namespace stepscope::launcher {
namespace {

constexpr int64_t kSecondNs = 1'000'000'000;
// A whole minute (UTC), so stepscope's grid, floored to the 60 s interval, starts at the first sample.
constexpr int64_t kT0 = 1'700'000'040 * kSecondNs;

// Counts samples per window and meets its condition when a window holds a sample above 90.
class HighValueRule : public rules::Rule {
 public:
  explicit HighValueRule(bool throw_on_window_1 = false) : throw_(throw_on_window_1) {}
  std::string_view name() const override { return "HighValue"; }
  bool Evaluate(const rules::Window& window) override {
    if (throw_ && window.index == 1) throw std::runtime_error("boom");
    bool met = false;
    int64_t count = 0;
    for (size_t s = 0; s < window.samples.size(); ++s) {
      const auto& series = window.model->series()[s];
      for (size_t i = window.samples[s].first; i < window.samples[s].second; ++i) {
        met = met || series.value[i] > 90;
        ++count;
      }
    }
    per_window_.push_back(count);
    datapoints_ += count;
    if (met) ++triggered_;
    return met;
  }
  rules::RuleReport Report() const override {
    rules::RuleReport report;
    report.rule = "HighValue";
    report.triggered = triggered_;
    report.datapoints = datapoints_;
    report.details = {{"per_window", per_window_}};
    return report;
  }

 private:
  bool throw_;
  std::vector<int64_t> per_window_;
  int64_t datapoints_ = 0;
  int64_t triggered_ = 0;
};

std::unique_ptr<rules::ProfilerReport> MakeReport(bool throwing = false) {
  std::vector<std::unique_ptr<rules::Rule>> rules;
  rules.push_back(std::make_unique<HighValueRule>(throwing));
  return std::make_unique<rules::ProfilerReport>(std::move(rules));
}

// Samples at `seconds` (value 95 at 100 s, else 10), complete until `complete_s`.
analysis::Model MakeModel(const std::vector<double>& seconds, double complete_s) {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts node;
  node.name = "n1";
  const uint32_t series = builder.SeriesFor(builder.AddNode(node), "cpu", "cpu0", "CPUUtilization");
  for (double s : seconds) builder.AddSample(series, kT0 + static_cast<int64_t>(s * kSecondNs), s == 100 ? 95 : 10);
  builder.SetCompleteUntil(kT0 + static_cast<int64_t>(complete_s * kSecondNs));
  return std::move(builder).Finish();
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TempDir() {
  char pattern[] = "/tmp/online_rules_unittest_XXXXXX";
  return mkdtemp(pattern) == nullptr ? std::string() : std::string(pattern);
}

const std::vector<double> kAll = {0, 30, 60, 100, 130, 170};

TEST(OnlineRules, FinalFilesEqualTheOfflineEvaluation) {
  const std::string job = TempDir();
  ASSERT_FALSE(job.empty());
  // The live run grows between reloads; the last reload is the finished run.
  std::deque<analysis::Model> reloads;
  reloads.push_back(MakeModel({0, 30}, 30));
  reloads.push_back(MakeModel({0, 30, 60, 100}, 100));
  reloads.push_back(MakeModel(kAll, 170));
  std::vector<std::string> problems;
  OnlineRules online(job, MakeReport(),
                     [&reloads](const std::string&) -> StatusOr<analysis::Model> {
                       analysis::Model model = std::move(reloads.front());
                       reloads.pop_front();
                       return model;
                     },
                     [&problems](const std::string& line) { problems.push_back(line); });
  online.EvaluateNow();
  EXPECT_EQ(online.report().windows_evaluated(), 0u);
  online.EvaluateNow();
  EXPECT_EQ(online.report().windows_evaluated(), 1u);
  const nlohmann::json live = nlohmann::json::parse(ReadText(job + "/rules/rules.json"));
  EXPECT_EQ(live["finished"], false);
  EXPECT_EQ(live["windows_evaluated"], 1);
  online.Finish();
  EXPECT_TRUE(problems.empty());

  auto offline = MakeReport();
  offline->Finish(MakeModel(kAll, 170));
  const nlohmann::json final_rules = nlohmann::json::parse(ReadText(job + "/rules/rules.json"));
  EXPECT_EQ(final_rules, offline->RulesJson());
  // Windows [0, 60], [60, 120], [120, 180].
  EXPECT_EQ(final_rules["rules"][0]["Details"]["per_window"], (nlohmann::json{3, 2, 2}));
  EXPECT_EQ(final_rules["status"], "IssuesFound");
  EXPECT_EQ(nlohmann::json::parse(ReadText(job + "/rules/HighValue.json")),
            rules::ReferenceJson(offline->Reports()[0]));
  std::system(("rm -rf " + job).c_str());
}

TEST(OnlineRules, LoadFailuresAreLoggedOnceAndOnlyFailTheFinalPassLoudly) {
  const std::string job = TempDir();
  std::vector<std::string> problems;
  OnlineRules online(job, MakeReport(),
                     [](const std::string& path) -> StatusOr<analysis::Model> {
                       return NotFoundError(path + ": no run here yet");
                     },
                     [&problems](const std::string& line) { problems.push_back(line); });
  online.EvaluateNow();
  online.EvaluateNow();
  EXPECT_TRUE(problems.empty());
  online.Finish();
  EXPECT_EQ(problems, (std::vector<std::string>{"rules: cannot load the run: " + job + ": no run here yet"}));
  std::system(("rm -rf " + job).c_str());
}

TEST(OnlineRules, AThrowingRuleStopsOnlineEvaluationWithOneLine) {
  const std::string job = TempDir();
  std::vector<std::string> problems;
  OnlineRules online(job, MakeReport(/*throwing=*/true),
                     [](const std::string&) -> StatusOr<analysis::Model> { return MakeModel(kAll, 170); },
                     [&problems](const std::string& line) { problems.push_back(line); });
  online.EvaluateNow();
  online.Finish();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "rules: evaluation stopped (a rule failed: boom); run `stepscope rules " + job +
                             "` after the job");
  EXPECT_TRUE(online.disabled());
  std::system(("rm -rf " + job).c_str());
}

TEST(OnlineRules, BackgroundThreadEvaluatesOncePerPeriod) {
  const std::string job = TempDir();
  ManualWaitClock clock;
  std::atomic<int> loads{0};
  OnlineRules online(
      job, MakeReport(),
      [&loads](const std::string&) -> StatusOr<analysis::Model> {
        ++loads;
        return MakeModel(kAll, 170);
      },
      nullptr, &clock);
  ASSERT_TRUE(online.Start(/*period_ns=*/kSecondNs).ok());
  // Nothing before the first period has passed.
  ASSERT_TRUE(clock.AwaitSleeperUntil(kSecondNs));
  EXPECT_EQ(loads.load(), 0);
  // One pass per period: the next period counts from the end of the pass.
  clock.AdvanceNs(kSecondNs);
  ASSERT_TRUE(clock.AwaitSleeperUntil(2 * kSecondNs));
  EXPECT_EQ(loads.load(), 1);
  // Data complete until 170 s: windows [0, 60] and [60, 120]; [120, 180] waits for the end.
  EXPECT_EQ(online.report().windows_evaluated(), 2u);
  EXPECT_FALSE(online.report().finished());
  clock.AdvanceNs(kSecondNs);
  ASSERT_TRUE(clock.AwaitSleeperUntil(3 * kSecondNs));
  EXPECT_EQ(loads.load(), 2);
  // Finish() stops the thread without waiting for the next period, then does the final pass.
  online.Finish();
  EXPECT_EQ(loads.load(), 3);
  EXPECT_EQ(online.report().windows_evaluated(), 3u);
  EXPECT_TRUE(online.report().finished());
  std::system(("rm -rf " + job).c_str());
}

}  // namespace
}  // namespace stepscope::launcher
