#include "rules/profiler_report.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepscope::rules {
namespace {

constexpr int64_t kSecondNs = 1'000'000'000;
// On the minute (UTC), so stepscope's own grid, floored to the interval, starts at kT0.
constexpr int64_t kT0 = 1'600'000'020 * kSecondNs;

// Records what it was shown; meets its condition in the windows listed in `met_windows`.
class FakeRule : public Rule {
 public:
  FakeRule(std::string name, std::vector<std::string>* log, std::vector<size_t> met_windows = {})
      : name_(std::move(name)), log_(log), met_windows_(std::move(met_windows)) {
    parameters_.Declare("threshold", RuleParameters::Kind::kPercent, "50");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "3");
  }
  std::string_view name() const override { return name_; }
  bool Evaluate(const Window& window) override {
    if (log_ != nullptr) log_->push_back(name_ + "@" + std::to_string(window.index));
    int64_t samples = 0;
    for (const auto& [begin, end] : window.samples) samples += static_cast<int64_t>(end - begin);
    const int64_t events = static_cast<int64_t>(window.events.second - window.events.first);
    windows_.push_back({{"index", window.index},
                        {"start_s", (window.start_ns - kT0) / kSecondNs},
                        {"end_s", (window.end_ns - kT0) / kSecondNs},
                        {"samples", samples},
                        {"events", events}});
    datapoints_ += samples;
    bool met = false;
    for (size_t index : met_windows_) met = met || index == window.index;
    if (met) ++triggered_;
    return met;
  }
  void Finish(const analysis::Model& model) override { ++finish_calls_; }
  RuleReport Report() const override {
    RuleReport report;
    report.rule = name_;
    report.triggered = triggered_;
    report.datapoints = datapoints_;
    report.details = {{"windows", windows_}, {"finish_calls", finish_calls_}};
    report.parameters = parameters_.ReportString();
    return report;
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
  std::vector<size_t> met_windows_;
  nlohmann::json windows_ = nlohmann::json::array();
  int64_t datapoints_ = 0;
  int64_t triggered_ = 0;
  int finish_calls_ = 0;
};

std::unique_ptr<Rule> MakeAlpha() { return std::make_unique<FakeRule>("Alpha", nullptr); }
std::unique_ptr<Rule> MakeBeta() { return std::make_unique<FakeRule>("Beta", nullptr); }
const RuleFactory kFactories[] = {{"Alpha", &MakeAlpha, true}, {"Beta", &MakeBeta, false}};

// System samples (one series) and events at the given offsets in seconds from kT0; the model's
// data is complete until `complete_until_s` (-1: all of it).
analysis::Model MakeModel(const std::vector<double>& sample_s, const std::vector<double>& event_s,
                          double complete_until_s = -1, const analysis::FileGrid& file_grid = {}) {
  analysis::ModelBuilder builder(analysis::ModelSource::kSageMaker);
  builder.SetFileGrid(file_grid);
  analysis::NodeFacts node;
  node.name = "algo-1";
  const uint32_t node_index = builder.AddNode(node);
  const uint32_t series = builder.SeriesFor(node_index, "cpu", "cpu0", "CPUUtilization");
  for (double s : sample_s) builder.AddSample(series, kT0 + static_cast<int64_t>(s * kSecondNs), 10);
  for (double s : event_s) {
    analysis::FrameworkEvent event;
    event.start_ns = kT0 + static_cast<int64_t>(s * kSecondNs);
    event.end_ns = event.start_ns + kSecondNs / 10;
    event.phase = builder.Intern("Step:ModeKeys.TRAIN");
    event.name = event.phase;
    builder.AddEvent(event);
  }
  if (complete_until_s >= 0) builder.SetCompleteUntil(kT0 + static_cast<int64_t>(complete_until_s * kSecondNs));
  return std::move(builder).Finish();
}

std::unique_ptr<ProfilerReport> TwoRules(std::vector<std::string>* log, std::vector<size_t> beta_met = {}) {
  std::vector<std::unique_ptr<Rule>> rules;
  rules.push_back(std::make_unique<FakeRule>("Alpha", log));
  rules.push_back(std::make_unique<FakeRule>("Beta", log, std::move(beta_met)));
  return std::make_unique<ProfilerReport>(std::move(rules), kFactories);
}

TEST(ProfilerReport, EvaluatesEveryRuleInOrderOnEachWindow) {
  std::vector<std::string> log;
  auto report = TwoRules(&log);
  report->Finish(MakeModel({0, 61, 125}, {}));
  EXPECT_EQ(log, (std::vector<std::string>{"Alpha@0", "Beta@0", "Alpha@1", "Beta@1", "Alpha@2", "Beta@2"}));
  EXPECT_EQ(report->windows_evaluated(), 3u);
}

TEST(ProfilerReport, SamplesBelongToBothEdgesEventsToTheWindowOfTheirStart) {
  auto report = TwoRules(nullptr);
  // Windows [0, 60] and [60, 120] for samples; [0, 60) and [60, 120) for events. The last window
  // starts at 120 s <= last timestamp 120.5 s.
  report->Finish(MakeModel({0, 30, 60, 90, 120}, {59.9, 60, 120.5}));
  const nlohmann::json windows = report->Reports()[0].details["windows"];
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0], (nlohmann::json{{"index", 0}, {"start_s", 0}, {"end_s", 60}, {"samples", 3}, {"events", 1}}));
  EXPECT_EQ(windows[1], (nlohmann::json{{"index", 1}, {"start_s", 60}, {"end_s", 120}, {"samples", 3}, {"events", 1}}));
  EXPECT_EQ(windows[2], (nlohmann::json{{"index", 2}, {"start_s", 120}, {"end_s", 180}, {"samples", 1}, {"events", 1}}));
  EXPECT_EQ(report->Reports()[0].details["finish_calls"], 1);
}

TEST(ProfilerReport, WindowsStopWhenAStartPassesTheEndOfTheData) {
  auto report = TwoRules(nullptr);
  report->Finish(MakeModel({0, 120}, {}));  // 120 s is the start of window 2: it is evaluated
  EXPECT_EQ(report->windows_evaluated(), 3u);
  auto shorter = TwoRules(nullptr);
  shorter->Finish(MakeModel({0, 119.5}, {}));
  EXPECT_EQ(shorter->windows_evaluated(), 2u);
}

// RULES.md §0: without file timestamps (stepscope's own runs), the grid starts at the first
// timestamp floored to the interval and the partial last window is evaluated.
TEST(ProfilerReport, OwnGridIsFlooredToTheIntervalAndEvaluatesTheTail) {
  auto report = TwoRules(nullptr);
  report->Finish(MakeModel({17.25, 70, 130.5}, {}));
  const nlohmann::json windows = report->Reports()[0].details["windows"];
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0]["start_s"], 0);  // not 17.25
  EXPECT_EQ(windows[2]["start_s"], 120);
  EXPECT_EQ(report->RulesJson()["window_grid"]["kind"], "floored");
  EXPECT_EQ(report->RulesJson()["window_grid"]["tail_evaluated"], true);
}

// RULES.md §0: on imported SageMaker data, the reference's grid: from the first file timestamp,
// stopping before the window whose start reaches the latest file, whatever data lies beyond.
TEST(ProfilerReport, SageMakerFileGridStopsBeforeTheWindowReachingTheLatestFile) {
  auto report = TwoRules(nullptr);
  const analysis::FileGrid grid{.known = true, .origin_ns = kT0 - 60 * kSecondNs, .stop_ns = kT0 + 120 * kSecondNs};
  report->Finish(MakeModel({17.25, 70, 130.5, 190}, {}, -1, grid));
  const nlohmann::json windows = report->Reports()[0].details["windows"];
  ASSERT_EQ(windows.size(), 3u);  // starts -60, 0, 60; 120 reaches the latest file
  EXPECT_EQ(windows[0]["start_s"], -60);
  EXPECT_EQ(windows[2]["start_s"], 60);
  EXPECT_EQ(windows[2]["samples"], 1);
  EXPECT_EQ(report->RulesJson()["window_grid"]["kind"], "sagemaker_files");
  EXPECT_EQ(report->RulesJson()["window_grid"]["tail_evaluated"], false);
}

TEST(ProfilerReport, OnlineInStepsGivesTheOfflineResult) {
  const std::vector<double> samples = {0, 10, 60, 70, 119, 120, 150, 185, 200};
  const std::vector<double> events = {1, 59.5, 60, 121, 179.9, 181};
  auto offline = TwoRules(nullptr, {1});
  offline->Finish(MakeModel(samples, events));

  auto online = TwoRules(nullptr, {1});
  // A first reload with data up to 100 s, complete until 70 s: only window 0 closes.
  EXPECT_EQ(online->EvaluateAvailable(MakeModel({0, 10, 60, 70}, {1, 59.5, 60}, 70)), 1u);
  EXPECT_EQ(online->windows_evaluated(), 1u);
  EXPECT_EQ(online->status(), "NoIssuesFound");
  // Nothing new complete: nothing evaluated twice.
  EXPECT_EQ(online->EvaluateAvailable(MakeModel({0, 10, 60, 70}, {1, 59.5, 60}, 70)), 0u);
  // A later reload, complete until 185 s: windows 1 and 2 close ([120, 180] ends before 185).
  EXPECT_EQ(online->EvaluateAvailable(MakeModel({0, 10, 60, 70, 119, 120, 150, 185}, {1, 59.5, 60, 121, 179.9, 181}, 185)), 2u);
  EXPECT_EQ(online->status(), "IssuesFound");
  online->Finish(MakeModel(samples, events));
  EXPECT_EQ(online->windows_evaluated(), 4u);
  EXPECT_EQ(online->RulesJson(), offline->RulesJson());
  EXPECT_EQ(online->RulesJson()["complete_until_ns"], kT0 + 200 * kSecondNs);
}

TEST(ProfilerReport, StatusIsIssuesFoundOnceAnyRuleMetItsCondition) {
  auto quiet = TwoRules(nullptr);
  quiet->Finish(MakeModel({0, 100}, {}));
  EXPECT_EQ(quiet->status(), "NoIssuesFound");
  auto loud = TwoRules(nullptr, {1});
  loud->Finish(MakeModel({0, 100}, {}));
  EXPECT_EQ(loud->status(), "IssuesFound");
  // Met only in a window that never exists: still no issue.
  auto late = TwoRules(nullptr, {5});
  late->Finish(MakeModel({0, 100}, {}));
  EXPECT_EQ(late->status(), "NoIssuesFound");
}

// A rule that concludes over the run (stepscope's own): Evaluate only collects, Report decides.
class ConcludingRule : public Rule {
 public:
  ConcludingRule(bool reporting, int64_t triggered) : reporting_(reporting), triggered_(triggered) {}
  std::string_view name() const override { return reporting_ ? "Reporting" : "Concluding"; }
  bool Evaluate(const Window&) override { return false; }
  RuleReport Report() const override {
    RuleReport report;
    report.rule = std::string(name());
    report.reporting = reporting_;
    report.triggered = triggered_;
    return report;
  }

 private:
  bool reporting_;
  int64_t triggered_;
};

TEST(ProfilerReport, StatusCountsRulesThatConcludeInTheirReport) {
  std::vector<std::unique_ptr<Rule>> quiet;
  quiet.push_back(std::make_unique<ConcludingRule>(false, 0));
  quiet.push_back(std::make_unique<ConcludingRule>(true, 3));  // a reporting rule never makes an issue
  ProfilerReport quiet_report(std::move(quiet));
  quiet_report.Finish(MakeModel({0, 100}, {}));
  EXPECT_EQ(quiet_report.status(), "NoIssuesFound");
  std::vector<std::unique_ptr<Rule>> found;
  found.push_back(std::make_unique<ConcludingRule>(false, 1));
  ProfilerReport found_report(std::move(found));
  found_report.Finish(MakeModel({0, 100}, {}));
  EXPECT_EQ(found_report.status(), "IssuesFound");
  EXPECT_EQ(found_report.RulesJson()["status"], "IssuesFound");
}

TEST(ProfilerReport, EmptyModelHasNoWindows) {
  auto report = TwoRules(nullptr);
  report->Finish(MakeModel({}, {}));
  EXPECT_EQ(report->windows_evaluated(), 0u);
  EXPECT_EQ(report->status(), "NoIssuesFound");
  EXPECT_TRUE(report->finished());
}

TEST(ProfilerReport, ScanIntervalOverrideChangesTheWindows) {
  auto report = TwoRules(nullptr);
  ASSERT_TRUE(report->SetParameter("scan_interval_us=30000000").ok());
  report->Finish(MakeModel({0, 100}, {}));
  EXPECT_EQ(report->windows_evaluated(), 4u);  // starts 0, 30, 60, 90
  EXPECT_EQ(report->RulesJson()["scan_interval_us"], 30000000);
  EXPECT_EQ(report->SetParameter("ProfilerReport.scan_interval_us=10").message(),
            "ProfilerReport.scan_interval_us: cannot change once windows were evaluated");
  auto fresh = TwoRules(nullptr);
  EXPECT_EQ(fresh->SetParameter("ProfilerReport_scan_interval_us=-5").message(),
            "ProfilerReport.scan_interval_us: '-5' is not a whole number of microseconds > 0");
}

TEST(ProfilerReport, ParameterOverridesInBothSpellings) {
  auto report = TwoRules(nullptr);
  ASSERT_TRUE(report->SetParameter("Alpha.threshold=40").ok());
  ASSERT_TRUE(report->SetParameter("Beta_patience=7").ok());
  EXPECT_EQ(report->Reports()[0].parameters, "threshold:40\npatience:3");
  EXPECT_EQ(report->Reports()[1].parameters, "threshold:50\npatience:7");
  EXPECT_EQ(report->SetParameter("Alpha.threshold=140").message(),
            "Alpha.threshold: 140 is not a percentage in [0, 100]");
  EXPECT_EQ(report->SetParameter("Alpha.bogus=1").message(),
            "Alpha.bogus: no such parameter; Alpha has threshold, patience");
  EXPECT_EQ(report->SetParameter("Gamma.threshold=1").message(),
            "unknown rule 'Gamma' in Gamma.threshold; known rules: Alpha, Beta");
  EXPECT_EQ(report->SetParameter("Alpha.threshold").message(),
            "'Alpha.threshold': expected RULE.PARAM=VALUE, e.g. CPUBottleneck.threshold=40");
}

TEST(ProfilerReport, OverridesOfKnownButUnselectedRulesAreValidated) {
  auto created = ProfilerReport::Create(kFactories, {"Beta"});
  ASSERT_TRUE(created.ok());
  auto& report = *created;
  ASSERT_EQ(report->rules().size(), 1u);
  EXPECT_EQ(report->rules()[0]->name(), "Beta");
  EXPECT_TRUE(report->SetParameter("Alpha.threshold=40").ok());
  EXPECT_EQ(report->SetParameter("Alpha.patience=0").message(), "Alpha.patience: 0 is not a whole number > 0");
}

TEST(ProfilerReport, CreateRejectsUnknownRulesListingTheKnownOnes) {
  auto created = ProfilerReport::Create(kFactories, {"Alpha", "Nope"});
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().message(), "unknown rule 'Nope'; known rules: Alpha, Beta");
  auto all = ProfilerReport::Create(kFactories);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)->rules().size(), 2u);
  EXPECT_EQ((*all)->rules()[0]->name(), "Alpha");
}

TEST(ProfilerReport, ParameterObjectSection) {
  auto report = TwoRules(nullptr);
  const nlohmann::json section = nlohmann::json::parse(
      R"({"Alpha": {"threshold": 40.5}, "Beta_patience": 2, "ProfilerReport": {"scan_interval_us": 1000000}})");
  ASSERT_TRUE(report->ApplyParameterObject(section, "parameters.json").ok());
  EXPECT_EQ(report->Reports()[0].parameters, "threshold:40.5\npatience:3");
  EXPECT_EQ(report->Reports()[1].parameters, "threshold:50\npatience:2");
  EXPECT_EQ(report->scan_interval_us(), 1000000);
  EXPECT_EQ(report->ApplyParameterObject(nlohmann::json::parse(R"({"Alpha": {"threshold": [1]}})"), "p.json").message(),
            "p.json: Alpha.threshold: expected a number or a string, got array");
  EXPECT_EQ(report->ApplyParameterObject(nlohmann::json::parse(R"({"Alpha": {"threshold": 101}})"), "p.json").message(),
            "p.json: Alpha.threshold: 101 is not a percentage in [0, 100]");
  EXPECT_FALSE(report->ApplyParameterObject(nlohmann::json::array(), "p.json").ok());
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ProfilerReport, WritesEveryRulesReferenceJsonAndRulesJson) {
  char pattern[] = "/tmp/profiler_report_unittest_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = std::string(pattern) + "/rules";
  auto report = TwoRules(nullptr, {0});
  report->Finish(MakeModel({0, 10}, {}));
  ASSERT_TRUE(report->WriteOutputs(dir).ok());
  const nlohmann::json alpha = nlohmann::json::parse(ReadText(dir + "/Alpha.json"));
  EXPECT_EQ(alpha["RuleTriggered"], 0);
  EXPECT_EQ(alpha["Datapoints"], 2);
  EXPECT_EQ(alpha["RuleParameters"], "threshold:50\npatience:3");
  const nlohmann::json beta = nlohmann::json::parse(ReadText(dir + "/Beta.json"));
  EXPECT_EQ(beta["RuleTriggered"], 1);
  const nlohmann::json rules = nlohmann::json::parse(ReadText(dir + "/rules.json"));
  EXPECT_EQ(rules["format_version"], 1);
  EXPECT_EQ(rules["status"], "IssuesFound");
  EXPECT_EQ(rules["windows_evaluated"], 1);
  EXPECT_EQ(rules["scan_interval_us"], 60000000);
  EXPECT_EQ(rules["finished"], true);
  ASSERT_EQ(rules["rules"].size(), 2u);
  EXPECT_EQ(rules["rules"][1]["Rule"], "Beta");
  EXPECT_EQ(rules, report->RulesJson());
  // The driver's own copies, as the reference's ProfilerReport writes them.
  EXPECT_EQ(nlohmann::json::parse(ReadText(dir + "/ProfilerReport/Alpha.json")), alpha);
  EXPECT_EQ(nlohmann::json::parse(ReadText(dir + "/ProfilerReport/Beta.json")), beta);
  std::system(("rm -rf " + std::string(pattern)).c_str());
}

TEST(BuiltinRules, ListTheProfilerReportSetInOrderThenTheNativeRulesUnderTheirOwnNames) {
  const std::vector<std::string> sagemaker_order = {
      "CPUBottleneck", "IOBottleneck",       "LowGPUUtilization",    "StepOutlier",
      "GPUMemoryIncrease", "BatchSize",      "MaxInitializationTime", "LoadBalancing",
      "OverallSystemUsage", "Dataloader",    "OverallFrameworkMetrics"};
  std::vector<std::string> sagemaker;
  bool native_seen = false;
  for (const RuleFactory& factory : BuiltinRules()) {
    EXPECT_EQ(factory.make()->name(), factory.name);
    if (factory.sagemaker) {
      EXPECT_FALSE(native_seen) << factory.name << " comes after a native rule";
      sagemaker.emplace_back(factory.name);
    } else {
      native_seen = true;
    }
  }
  EXPECT_EQ(sagemaker, sagemaker_order);
}

TEST(ProfilerReportOutputs, DefaultOutputDirIsBesideTheRun) {
  EXPECT_EQ(DefaultRulesOutputDir("/tmp/"), "/tmp/rules");
  EXPECT_EQ(DefaultRulesOutputDir("/nonexistent/dir/model.stepscope"), "/nonexistent/dir/rules");
  EXPECT_EQ(DefaultRulesOutputDir("model.stepscope"), "rules");
}

}  // namespace
}  // namespace stepscope::rules
