// StepOutlier, Dataloader, MaxInitializationTime and OverallFrameworkMetrics driven window by
// window over synthetic models. Expected numbers come from numpy running the reference's
// algorithm on the same data (throwaway scripts, see the comments at each test).
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "importers/sagemaker/sagemaker_importer.h"
#include "rules/builtin_rules.h"

namespace stepscope::rules {
namespace {

using analysis::EventArg;
using analysis::FrameworkEvent;
using analysis::Model;
using analysis::ModelBuilder;
using analysis::ModelSource;
using analysis::NodeFacts;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kScan = 60 * kSecond;
constexpr int64_t kT0 = 1'600'000'000 * kSecond;

// Windows of kScan from the run's first timestamp while a window's start is within the data
// (RULES.md §0): samples closed at both ends, events by their start.
std::vector<Window> MakeWindows(const Model& model, int64_t scan_ns = kScan) {
  std::vector<Window> windows;
  size_t index = 0;
  for (int64_t start = model.first_ns(); start <= model.last_ns(); start += scan_ns) {
    Window window;
    window.model = &model;
    window.index = index++;
    window.start_ns = start;
    window.end_ns = start + scan_ns;
    for (const auto& series : model.series()) {
      window.samples.push_back(Model::SamplesIn(series, window.start_ns, window.end_ns));
    }
    window.events = model.EventsStartingIn(window.start_ns, window.end_ns);
    windows.push_back(std::move(window));
  }
  return windows;
}

std::vector<bool> Drive(Rule& rule, const Model& model) {
  std::vector<bool> met;
  for (const Window& window : MakeWindows(model)) met.push_back(rule.Evaluate(window));
  return met;
}

class Maker {
 public:
  Maker() : builder_(ModelSource::kSageMaker) {}
  uint32_t Node(const std::string& name) {
    NodeFacts facts;
    facts.name = name;
    return builder_.AddNode(facts);
  }
  void Span(uint32_t node, std::string_view phase, std::string_view name, int64_t start_ns, int64_t end_ns,
            int64_t step = -1, int32_t pid = 0, std::vector<EventArg> args = {}) {
    FrameworkEvent event;
    event.node = node;
    event.phase = builder_.Intern(phase);
    event.name = builder_.Intern(name);
    event.start_ns = start_ns;
    event.end_ns = end_ns;
    event.step = step;
    event.pid = pid;
    builder_.AddEvent(event, args);
  }
  void Sample(uint32_t node, std::string_view type, std::string_view name, std::string_view dimension, int64_t t_ns,
              double value) {
    builder_.AddSample(builder_.SeriesFor(node, type, name, dimension), t_ns, value);
  }
  ModelBuilder& builder() { return builder_; }
  Model Finish() { return std::move(builder_).Finish(); }

 private:
  ModelBuilder builder_;
};

// ---------------------------------------------------------------------------------------------
// StepOutlier. Data (mirrored by /tmp/fw/step_outlier_expected.py, run with /usr/bin/python3 and
// numpy 1.24): step i lasts 5000 ms when an outlier, else 1000 + 10·(i % 7) ms; 100 ms between
// steps; a 500 ms Forward at each step's start; a 3000 ms cpu_functions "checkpoint_write" in
// steps 50, 51, 52 and 210. The script runs the reference algorithm with stepscope's window
// assignment and prints the numbers asserted below.

const std::vector<int64_t> kEleven = {50, 51, 52, 120, 150, 151, 180, 190, 200, 205, 210};

struct StepSpec {
  std::string phase = "Step:ModeKeys.TRAIN";
  int count = 0;
  std::set<int64_t> outliers;
  std::set<int64_t> disturbed;
  int64_t first_start_ns = kT0;
};

// Returns the end of the last step.
int64_t AddSteps(Maker& maker, uint32_t node, const StepSpec& spec) {
  int64_t t = spec.first_start_ns;
  for (int64_t i = 0; i < spec.count; ++i) {
    const int64_t duration = spec.outliers.count(i) ? 5000 * kMs : (1000 + 10 * (i % 7)) * kMs;
    std::vector<EventArg> args;
    if (spec.disturbed.count(i)) args.push_back(maker.builder().IntArg("stepscope_disturbed", 1));
    maker.Span(node, spec.phase, spec.phase, t, t + duration, i, 0, args);
    maker.Span(node, "Forward", "Forward", t, t + 500 * kMs);
    if (i == 50 || i == 51 || i == 52 || i == 210) {
      maker.Span(node, "cpu_functions", "checkpoint_write", t + 500 * kMs, t + 3500 * kMs);
    }
    t += duration + 100 * kMs;
  }
  return t - 100 * kMs;
}

Model StepModel(const std::vector<StepSpec>& specs, const std::string& node_name = "algo-1") {
  Maker maker;
  const uint32_t node = maker.Node(node_name);
  for (const StepSpec& spec : specs) AddSteps(maker, node, spec);
  return maker.Finish();
}

TEST(StepOutlierRule, ElevenOutliersTriggerWithExactDetailsAndEvidence) {
  StepSpec spec;
  spec.count = 211;
  spec.outliers = std::set<int64_t>(kEleven.begin(), kEleven.end());
  spec.disturbed = {151};
  const Model model = StepModel({spec});
  auto rule = MakeStepOutlierRule();
  const std::vector<bool> met = Drive(*rule, model);
  EXPECT_EQ(met, (std::vector<bool>{false, false, false, false, true}));

  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 211);
  EXPECT_EQ(report.triggered, 1);
  EXPECT_EQ(report.violations, 11);
  EXPECT_EQ(report.parameters, "threshold:3\nmode:None\nn_outliers:10\nstddev:3");
  const nlohmann::json& entry = report.details["step_details"]["algo-1"];  // one phase: the reference's shape
  const nlohmann::json& stats = entry["step_stats"];
  EXPECT_DOUBLE_EQ(stats["mean"].get<double>(), 1.2371563981042655);
  EXPECT_DOUBLE_EQ(stats["max"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(stats["p99"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(stats["p95"].get<double>(), 3.0300000000000002);
  EXPECT_DOUBLE_EQ(stats["p50"].get<double>(), 1.03);
  EXPECT_DOUBLE_EQ(stats["min"].get<double>(), 1.0);
  EXPECT_EQ(entry["number_of_outliers"], 11);
  EXPECT_EQ(entry["phase"], "Step:ModeKeys.TRAIN");
  EXPECT_DOUBLE_EQ(entry["stddev"].get<double>(), 0.88);
  EXPECT_EQ(entry["step_numbers"], nlohmann::json(kEleven));
  ASSERT_EQ(entry["probs"].size(), 100u);
  ASSERT_EQ(entry["binedges"].size(), 101u);
  EXPECT_EQ(entry["probs"][0], 30);
  EXPECT_EQ(entry["probs"][16], 27);
  EXPECT_EQ(entry["probs"][99], 30);
  EXPECT_EQ(entry["probs"][1], 0);
  EXPECT_DOUBLE_EQ(entry["binedges"][0].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(entry["binedges"][1].get<double>(), 1.0006);
  EXPECT_DOUBLE_EQ(entry["binedges"][100].get<double>(), 1.06);
  // Activity during the outlier steps that started in the triggering window (the script's
  // general {Forward: 2000 ms}, cpu {checkpoint_write: 3000 ms}: step 210's checkpoint only).
  EXPECT_EQ(report.details["general"], (nlohmann::json{{"Forward", 100.0}}));
  EXPECT_EQ(report.details["CPU_total"], (nlohmann::json{{"checkpoint_write", 3'000'000}}));
  EXPECT_EQ(report.details["CPU"], (nlohmann::json{{"checkpoint_write", 100.0}}));
  EXPECT_EQ(report.details["phase"], (nlohmann::json{{"Step:ModeKeys.TRAIN", 100.0}}));

  // The finding names exactly the outlier steps, in ranges of consecutive numbers; 151 was
  // disturbed by stepscope and gets its own evidence saying so.
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_EQ(finding.id, "StepOutlier/algo-1/TRAIN");
  std::vector<std::vector<int64_t>> ranges;
  std::vector<int64_t> named;
  for (const Evidence& evidence : finding.evidence) {
    ranges.push_back(evidence.steps);
    named.insert(named.end(), evidence.steps.begin(), evidence.steps.end());
    EXPECT_EQ(evidence.step_phase, "TRAIN");
    EXPECT_EQ(evidence.what.find("stepscope") != std::string::npos, evidence.steps == std::vector<int64_t>{151})
        << evidence.what;
  }
  EXPECT_EQ(named, kEleven);
  EXPECT_EQ(ranges, (std::vector<std::vector<int64_t>>{
                        {50, 51, 52}, {120}, {150}, {151}, {180}, {190}, {200}, {205}, {210}}));
  ASSERT_FALSE(finding.evidence[0].top_activity.empty());
  EXPECT_EQ(finding.evidence[0].top_activity[0].name, "checkpoint_write");
  EXPECT_EQ(finding.evidence[0].top_activity[0].total_ns, 9 * kSecond);
  EXPECT_GT(finding.estimated_saving, 0.0);
}

// Issue 13 §3: outliers that recur are named with their likely cause.
RuleReport StepOutlierReport(const Model& model) {
  auto rule = MakeStepOutlierRule();
  Drive(*rule, model);
  rule->Finish(model);
  return rule->Report();
}

TEST(StepOutlierRule, OutliersEveryNStepsAreNamedAsPeriodic) {
  StepSpec spec;
  spec.count = 260;
  for (int64_t i = 19; i < spec.count; i += 20) spec.outliers.insert(i);  // 13 outliers: 19, 39, ...
  const Model model = StepModel({spec});
  const RuleReport report = StepOutlierReport(model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_TRUE(finding.title.ends_with(": every 20 steps")) << finding.title;
  EXPECT_EQ(finding.recommendation.rfind("The slow steps recur every 20 steps (steps 19, 39, 59, 79, 99, 119, ...)", 0),
            0u)
      << finding.recommendation;
  EXPECT_NE(finding.recommendation.find("checkpointing"), std::string::npos);
}

TEST(StepOutlierRule, TheFirstStepOfEveryEpochIsNamedWithTheWorkersThatRestart) {
  Maker maker;
  const uint32_t node = maker.Node("algo-1");
  int64_t t = kT0;
  for (int epoch = 0; epoch < 12; ++epoch) {
    // A new DataLoader iterator per epoch, its workers not persistent; the epoch's first step is slow.
    maker.Span(node, "DataLoaderIterInitialize", "DataLoaderIterInitialize", t, t + kMs, -1, 0,
               {maker.builder().BoolArg("persistent_workers", false)});
    for (int k = 0; k < 20; ++k) {
      const int64_t step = epoch * 20 + k;
      const int64_t duration = (k == 0 ? 5000 : 1000 + 10 * (step % 7)) * kMs;
      maker.Span(node, "Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", t + 2 * kMs, t + 2 * kMs + duration, step);
      t += duration + 100 * kMs;
    }
  }
  const Model model = maker.Finish();
  const RuleReport report = StepOutlierReport(model);
  ASSERT_EQ(report.findings.size(), 1u);
  const Finding& finding = report.findings[0];
  EXPECT_TRUE(finding.title.ends_with(": the first step of every epoch")) << finding.title;
  EXPECT_NE(finding.recommendation.find("persistent_workers=True"), std::string::npos) << finding.recommendation;
  EXPECT_NE(finding.next_step.find("persistent_workers=True"), std::string::npos) << finding.next_step;
}

TEST(StepOutlierRule, IrregularOutliersKeepTheGeneralAdvice) {
  StepSpec spec;
  spec.count = 211;
  spec.outliers = std::set<int64_t>(kEleven.begin(), kEleven.end());
  const Model model = StepModel({spec});
  auto rule = MakeStepOutlierRule();
  Drive(*rule, model);
  const RuleReport report = rule->Report();
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].recommendation, report.recommendation);
  EXPECT_FALSE(report.findings[0].title.ends_with("steps")) << report.findings[0].title;
}

TEST(StepOutlierRule, ExactlyNOutliersDoNotTrigger) {
  StepSpec spec;
  spec.count = 211;
  spec.outliers = std::set<int64_t>(kEleven.begin(), kEleven.end() - 1);
  const Model model = StepModel({spec});
  auto rule = MakeStepOutlierRule();
  EXPECT_EQ(Drive(*rule, model), (std::vector<bool>(5, false)));
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.violations, 0);
  EXPECT_TRUE(report.findings.empty());
  const nlohmann::json& entry = report.details["step_details"]["algo-1"];  // one phase: the reference's shape
  EXPECT_EQ(entry["number_of_outliers"], 10);
  EXPECT_DOUBLE_EQ(entry["step_stats"]["mean"].get<double>(), 1.2181990521327015);
  EXPECT_DOUBLE_EQ(entry["stddev"].get<double>(), 0.84);
  EXPECT_FALSE(report.details.contains("general"));
}

TEST(StepOutlierRule, StatisticsStartAfterMoreThanHundredSteps) {
  StepSpec spec;
  spec.count = 100;
  auto rule = MakeStepOutlierRule();
  const Model hundred = StepModel({spec});
  Drive(*rule, hundred);
  EXPECT_EQ(rule->Report().datapoints, 100);
  EXPECT_EQ(rule->Report().details["step_details"], nlohmann::json::object());

  spec.count = 101;
  auto rule101 = MakeStepOutlierRule();
  const Model hundred_one = StepModel({spec});
  Drive(*rule101, hundred_one);
  const RuleReport report = rule101->Report();
  EXPECT_EQ(report.datapoints, 101);
  const nlohmann::json& entry = report.details["step_details"]["algo-1"];  // one phase: the reference's shape
  EXPECT_DOUBLE_EQ(entry["step_stats"]["mean"].get<double>(), 1.0294059405940594);
  EXPECT_DOUBLE_EQ(entry["stddev"].get<double>(), 0.02);
  EXPECT_EQ(entry["number_of_outliers"], 0);
  EXPECT_EQ(entry["step_numbers"], nlohmann::json::array());
  EXPECT_EQ(entry["probs"][0], 15);
  EXPECT_EQ(entry["probs"][50], 14);
}

TEST(StepOutlierRule, StepSpanningAWindowEdgeIsCountedOnce) {
  StepSpec spec;
  spec.count = 211;
  const Model model = StepModel({spec});
  // Some step must cross a window edge for this test to mean anything.
  bool crosses = false;
  for (uint32_t index : model.steps()) {
    const FrameworkEvent& step = model.events()[index];
    const int64_t edge = kT0 + ((step.start_ns - kT0) / kScan + 1) * kScan;
    crosses |= step.end_ns > edge;
  }
  ASSERT_TRUE(crosses);
  auto rule = MakeStepOutlierRule();
  Drive(*rule, model);
  EXPECT_EQ(rule->Report().datapoints, 211);
}

// RULES.md §5: two phases with more than 100 steps each get one entry each (**Fixed**); a mode
// leaves no step out, as the reference's condition ("Step:ModeKeys" in the name, or the name
// equal to mode).
TEST(StepOutlierRule, KeepsOneEntryPerPhaseAndModeLeavesNoStepOut) {
  StepSpec train;
  train.count = 101;
  StepSpec eval;
  eval.phase = "Step:ModeKeys.EVAL";
  eval.count = 101;
  eval.first_start_ns = kT0 + 500 * kMs;  // interleaved with TRAIN, same step numbers
  const Model model = StepModel({train, eval});

  for (const char* mode : {"None", "Step:ModeKeys.EVAL"}) {
    auto rule = MakeStepOutlierRule();
    ASSERT_TRUE(rule->parameters().Set("StepOutlier", "mode", mode).ok());
    Drive(*rule, model);
    const RuleReport report = rule->Report();
    EXPECT_EQ(report.datapoints, 202) << mode;
    const nlohmann::json& node = report.details["step_details"]["algo-1"];
    ASSERT_EQ(node.size(), 2u) << mode;
    EXPECT_EQ(node["Step:ModeKeys.TRAIN"]["phase"], "Step:ModeKeys.TRAIN");
    EXPECT_EQ(node["Step:ModeKeys.EVAL"]["phase"], "Step:ModeKeys.EVAL");
    EXPECT_EQ(report.parameters, "threshold:3\nmode:" + std::string(mode) + "\nn_outliers:10\nstddev:3");
  }
}

TEST(StepOutlierRule, CustomParametersAndRejectedValues) {
  auto rule = MakeStepOutlierRule();
  EXPECT_FALSE(rule->parameters().Set("StepOutlier", "n_outliers", "0").ok());
  EXPECT_FALSE(rule->parameters().Set("StepOutlier", "n_outliers", "2.5").ok());
  EXPECT_FALSE(rule->parameters().Set("StepOutlier", "stddev", "-1").ok());
  const Status unknown = rule->parameters().Set("StepOutlier", "threshold", "3");
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("StepOutlier.threshold"), std::string::npos) << unknown.message();

  // With n_outliers=9 the ten outliers of the data set trigger.
  ASSERT_TRUE(rule->parameters().Set("StepOutlier", "n_outliers", "9").ok());
  StepSpec spec;
  spec.count = 211;
  spec.outliers = std::set<int64_t>(kEleven.begin(), kEleven.end() - 1);
  const Model model = StepModel({spec});
  EXPECT_EQ(Drive(*rule, model), (std::vector<bool>{false, false, false, false, true}));
  EXPECT_EQ(rule->Report().violations, 10);
  EXPECT_EQ(rule->Report().parameters, "threshold:3\nmode:None\nn_outliers:9\nstddev:3");
}

TEST(StepOutlierRule, StaysMetThroughLaterEmptyWindows) {
  StepSpec spec;
  spec.count = 211;
  spec.outliers = std::set<int64_t>(kEleven.begin(), kEleven.end());
  Maker maker;
  const uint32_t node = maker.Node("algo-1");
  const int64_t last_end = AddSteps(maker, node, spec);
  // A system sample three windows later: windows without framework events follow.
  maker.Sample(node, "cpu", "cpu0", "CPUUtilization", last_end + 3 * kScan, 10);
  const Model model = maker.Finish();
  auto rule = MakeStepOutlierRule();
  const std::vector<bool> met = Drive(*rule, model);
  ASSERT_EQ(met.size(), 8u);
  EXPECT_EQ(met, (std::vector<bool>{false, false, false, false, true, true, true, true}));
  // The empty windows re-evaluate the same statistics (as the reference): 11 more each.
  EXPECT_EQ(rule->Report().violations, 4 * 11);
  EXPECT_EQ(rule->Report().datapoints, 211);
}

// ---------------------------------------------------------------------------------------------
// Dataloader. Expected quantiles and histogram from /tmp/fw/dataloader_expected.py (numpy on the
// 48 durations below).

Model DataloaderModel(int seconds, const std::vector<std::pair<std::string, int>>& nodes_cores, int pids_per_second,
                      bool second_window_empty = false) {
  Maker maker;
  for (const auto& [name, cores] : nodes_cores) {
    const uint32_t node = maker.Node(name);
    for (int c = 0; c < cores; ++c) maker.Sample(node, "cpu", "cpu" + std::to_string(c), "CPUUtilization", kT0, 50);
    // The same pids on every node: the reference would count them once.
    for (int s = 0; s < seconds; ++s) {
      for (int p = 0; p < pids_per_second; ++p) {
        const int64_t start = kT0 + s * kSecond + 100 * kMs;
        const int64_t duration = p == 0 ? (10 + s) * kMs : 20 * kMs;
        maker.Span(node, "DataLoaderWorker", "worker", start, start + duration, -1, 101 + p);
      }
    }
    if (second_window_empty) maker.Sample(node, "cpu", "cpu0", "CPUUtilization", kT0 + 90 * kSecond, 50);
  }
  const std::vector<EventArg> args = {maker.builder().IntArg("num_workers", 2),
                                      maker.builder().StringArg("pin_memory", "False")};
  maker.Span(0, "DataLoaderIterInitialize", "init", kT0, kT0 + kMs, -1, 7, args);
  return maker.Finish();
}

TEST(DataloaderRule, JudgesEachNodeAgainstItsOwnCores) {
  const Model model = DataloaderModel(12, {{"algo-1", 8}, {"algo-2", 2}}, 2, /*second_window_empty=*/true);
  auto rule = MakeDataloaderRule();
  // Window 1 has no data-loader events: the rule stays met (sticky).
  EXPECT_EQ(Drive(*rule, model), (std::vector<bool>{true, true}));
  const RuleReport report = rule->Report();
  // algo-1: median 2 < 8 * 0.7; algo-2: 2 within [1.4, 4].
  EXPECT_EQ(report.violations, 1);
  EXPECT_EQ(report.triggered, 1);
  EXPECT_EQ(report.datapoints, 48);
  EXPECT_EQ(report.parameters, "min_threshold:70\nmax_threshold:200");  // as the reference: no patience
  const nlohmann::json& details = report.details;
  EXPECT_EQ(details["cores"], 8);
  EXPECT_EQ(details["dataloaders"], 2);
  EXPECT_EQ(details["nodes"], (nlohmann::json{{"algo-1", {{"cores", 8}, {"dataloaders", 2}}},
                                              {"algo-2", {{"cores", 2}, {"dataloaders", 2}}}}));
  EXPECT_EQ(details["num_workers"], 2);
  EXPECT_EQ(details["pin_memory"], "False");
  EXPECT_FALSE(details.contains("prefetch"));  // unknown once data-loader events are seen
  const nlohmann::json& time = details["dataloading_time"];
  EXPECT_DOUBLE_EQ(time["p25"].get<double>(), 0.01575);
  EXPECT_DOUBLE_EQ(time["p50"].get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(time["p95"].get<double>(), 0.02);
  EXPECT_EQ(time["probs"][0], 2);
  EXPECT_EQ(time["probs"][90], 26);
  EXPECT_EQ(time["probs"][99], 2);
  EXPECT_EQ(time["probs"][1], 0);
  EXPECT_DOUBLE_EQ(time["binedges"][0].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(time["binedges"][1].get<double>(), 0.010110000000000001);
  EXPECT_DOUBLE_EQ(time["binedges"][100].get<double>(), 0.021);

  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].id, "Dataloader/algo-1/too_few");
  EXPECT_NE(report.findings[0].recommendation.find("num_workers"), std::string::npos);
  EXPECT_NE(report.findings[0].recommendation.find("pin_memory"), std::string::npos);
  EXPECT_NE(report.findings[0].recommendation.find("prefetch"), std::string::npos);
}

TEST(DataloaderRule, PatienceCountsOneSecondBuckets) {
  auto ten = MakeDataloaderRule();
  const Model model10 = DataloaderModel(10, {{"algo-1", 8}}, 2);
  EXPECT_EQ(Drive(*ten, model10), (std::vector<bool>{false}));
  EXPECT_EQ(ten->Report().violations, 0);
  // One node: the reference's keys only.
  EXPECT_FALSE(ten->Report().details.contains("nodes"));
  EXPECT_EQ(ten->Report().details["dataloaders"], 2);

  auto eleven = MakeDataloaderRule();
  const Model model11 = DataloaderModel(11, {{"algo-1", 8}}, 2);
  EXPECT_EQ(Drive(*eleven, model11), (std::vector<bool>{true}));
  EXPECT_EQ(eleven->Report().violations, 1);
}

TEST(DataloaderRule, TooManyWorkersAndCustomThresholds) {
  const Model model = DataloaderModel(11, {{"algo-1", 1}}, 4);
  auto rule = MakeDataloaderRule();
  Drive(*rule, model);
  ASSERT_EQ(rule->Report().findings.size(), 1u);
  EXPECT_EQ(rule->Report().findings[0].id, "Dataloader/algo-1/too_many");
  EXPECT_EQ(rule->Report().details["dataloaders"], 4);

  // max_threshold 400 % of one core allows 4.
  auto relaxed = MakeDataloaderRule();
  EXPECT_FALSE(relaxed->parameters().Set("Dataloader", "max_threshold", "abc").ok());
  EXPECT_FALSE(relaxed->parameters().Set("Dataloader", "patience", "0").ok());
  ASSERT_TRUE(relaxed->parameters().Set("Dataloader", "max_threshold", "400").ok());
  EXPECT_EQ(Drive(*relaxed, model), (std::vector<bool>{false}));
  EXPECT_EQ(relaxed->Report().violations, 0);
}

// ---------------------------------------------------------------------------------------------
// MaxInitializationTime: one CPU sample per minute for 30 minutes; windows start at minute k.

Model InitModel(std::vector<int64_t> step_minutes) {
  Maker maker;
  const uint32_t node = maker.Node("algo-1");
  for (int k = 0; k <= 30; ++k) maker.Sample(node, "cpu", "cpu0", "CPUUtilization", kT0 + k * kScan, 5);
  int64_t step = 0;
  for (int64_t minute : step_minutes) {
    const int64_t start = kT0 + minute * kScan + 250'000;  // .25 ms: µs are not whole seconds
    maker.Span(node, "Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", start, start + kSecond, step++);
  }
  return maker.Finish();
}

TEST(MaxInitializationTimeRule, FiresOnlyAfterThresholdWhileNoStep) {
  const Model model = InitModel({});
  auto rule = MakeMaxInitializationTimeRule();
  const std::vector<bool> met = Drive(*rule, model);
  ASSERT_EQ(met.size(), 31u);
  // Window k starts k minutes after the first timestamp: met when k > 20 (strictly).
  for (size_t k = 0; k < met.size(); ++k) EXPECT_EQ(met[k], k > 20) << k;
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.violations, 10);
  EXPECT_EQ(report.triggered, 10);
  EXPECT_EQ(report.datapoints, 0);
  EXPECT_EQ(report.parameters, "threshold:20");
  EXPECT_DOUBLE_EQ(report.details["job_start"].get<double>(), 1'600'000'000.0);
  EXPECT_DOUBLE_EQ(report.details["job_end"].get<double>(), 1'600'001'800.0);
  EXPECT_EQ(report.details["step_num"], nlohmann::json::object());
  ASSERT_EQ(report.findings.size(), 1u);
}

TEST(MaxInitializationTimeRule, StepsStopItAndAreRecorded) {
  const Model early = InitModel({5, 6, 7});
  auto rule = MakeMaxInitializationTimeRule();
  for (bool met : Drive(*rule, early)) EXPECT_FALSE(met);
  const RuleReport report = rule->Report();
  EXPECT_EQ(report.datapoints, 3);
  EXPECT_EQ(report.details["step_num"]["first"], 1'600'000'300'000'250);
  EXPECT_EQ(report.details["step_num"]["last"], 1'600'000'420'000'250);

  // First step at minute 25: windows 21..24 fire, later ones do not (window-local).
  const Model late = InitModel({25});
  auto late_rule = MakeMaxInitializationTimeRule();
  const std::vector<bool> met = Drive(*late_rule, late);
  for (size_t k = 0; k < met.size(); ++k) EXPECT_EQ(met[k], k >= 21 && k <= 24) << k;
  EXPECT_EQ(late_rule->Report().violations, 4);
}

TEST(MaxInitializationTimeRule, CustomThreshold) {
  auto rule = MakeMaxInitializationTimeRule();
  EXPECT_FALSE(rule->parameters().Set("MaxInitializationTime", "threshold", "0").ok());
  ASSERT_TRUE(rule->parameters().Set("MaxInitializationTime", "threshold", "10").ok());
  const Model model = InitModel({});
  Drive(*rule, model);
  EXPECT_EQ(rule->Report().violations, 20);
  EXPECT_EQ(rule->Report().parameters, "threshold:10");
}

// ---------------------------------------------------------------------------------------------
// OverallFrameworkMetrics: shares computed by hand (sums of whole seconds).

TEST(OverallFrameworkMetricsRule, AccumulatesOverWindowsWithStepGap) {
  Maker maker;
  const uint32_t node = maker.Node("algo-1");
  maker.Span(node, "Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", kT0, kT0 + 10 * kSecond, 0);
  maker.Span(node, "Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", kT0 + 30 * kSecond, kT0 + 40 * kSecond, 1);
  maker.Span(node, "cpu_functions", "a", kT0 + 1 * kSecond, kT0 + 2 * kSecond);
  maker.Span(node, "DataLoaderIter", "next", kT0 + 3 * kSecond, kT0 + 5 * kSecond);
  maker.Span(node, "Step:ModeKeys.EVAL", "Step:ModeKeys.EVAL", kT0 + 70 * kSecond, kT0 + 80 * kSecond, 0);
  maker.Span(node, "cpu_functions", "b", kT0 + 71 * kSecond, kT0 + 74 * kSecond);
  maker.Span(node, "gpu_functions-dev:0", "k", kT0 + 71 * kSecond, kT0 + 75 * kSecond);
  const Model model = maker.Finish();
  auto rule = MakeOverallFrameworkMetricsRule();
  const std::vector<Window> windows = MakeWindows(model);
  ASSERT_EQ(windows.size(), 2u);

  EXPECT_FALSE(rule->Evaluate(windows[0]));
  // After window 0: TRAIN 20 s of a 40 s span, others 20 s.
  EXPECT_EQ(rule->Report().details["phase"], (nlohmann::json{{"Step:ModeKeys.TRAIN", 50.0}, {"others", 50.0}}));

  EXPECT_FALSE(rule->Evaluate(windows[1]));
  const RuleReport report = rule->Report();
  // Span 80 s, steps 30 s, others 50 s.
  EXPECT_EQ(report.details["phase"],
            (nlohmann::json{{"Step:ModeKeys.TRAIN", 25.0}, {"Step:ModeKeys.EVAL", 12.5}, {"others", 62.5}}));
  EXPECT_EQ(report.details["ratio"], (nlohmann::json{{"cpu_functions", 50.0}, {"gpu_functions-dev:0", 50.0}}));
  EXPECT_EQ(report.details["CPU"], (nlohmann::json{{"a", 25.0}, {"b", 75.0}}));
  EXPECT_EQ(report.details["CPU_total"], (nlohmann::json{{"a", 1'000'000}, {"b", 3'000'000}}));
  EXPECT_EQ(report.details["GPU_total"], (nlohmann::json{{"k", 4'000'000}}));
  EXPECT_EQ(report.details["general"], (nlohmann::json{{"DataLoaderIter", 100.0}}));
  EXPECT_FALSE(report.details.contains("forward_backward"));
  EXPECT_EQ(report.triggered, 0);
  EXPECT_EQ(report.violations, 0);
  EXPECT_TRUE(report.reporting);
  EXPECT_EQ(report.parameters, "");
  EXPECT_TRUE(report.findings.empty());
}

TEST(FrameworkRules, DescribeThemselves) {
  for (auto make : {MakeStepOutlierRule, MakeDataloaderRule, MakeMaxInitializationTimeRule,
                    MakeOverallFrameworkMetricsRule}) {
    auto rule = make();
    const RuleReport report = rule->Report();
    EXPECT_EQ(report.rule, rule->name());
    EXPECT_FALSE(report.description.empty()) << rule->name();
    EXPECT_FALSE(report.recommendation.empty()) << rule->name();
  }
}

// ---------------------------------------------------------------------------------------------
// The shared SageMaker fixtures, imported and driven window by window. Expected shares from
// /tmp/fw/fixture_expected.py: the reference's sums straight from the trace JSON.

#ifdef STEPSCOPE_FIXTURES_DIR
TEST(OverallFrameworkMetricsRule, SageMakerModelTimelineFixture) {
  auto model = analysis::ImportSageMaker(std::string(STEPSCOPE_FIXTURES_DIR) + "/sagemaker/model_timeline_traces");
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto rule = MakeOverallFrameworkMetricsRule();
  for (bool met : Drive(*rule, *model)) EXPECT_FALSE(met);
  const nlohmann::json details = rule->Report().details;
  const nlohmann::json& general = details["general"];
  ASSERT_EQ(general.size(), 2u) << general.dump();
  EXPECT_DOUBLE_EQ(general["DataIterator"].get<double>(), 1.1460687375597463);
  EXPECT_DOUBLE_EQ(general["NcclManager"].get<double>(), 98.85393126244026);
  EXPECT_EQ(details["phase"], nlohmann::json::object());
}

TEST(OverallFrameworkMetricsRule, SageMakerHorovodFixture) {
  auto model = analysis::ImportSageMaker(std::string(STEPSCOPE_FIXTURES_DIR) + "/sagemaker/horovod_timeline_traces");
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto rule = MakeOverallFrameworkMetricsRule();
  Drive(*rule, *model);
  const nlohmann::json details = rule->Report().details;
  EXPECT_FALSE(details.contains("general")) << details.dump();
  const nlohmann::json& horovod = details["horovod"];
  ASSERT_EQ(horovod.size(), 3u) << horovod.dump();
  EXPECT_DOUBLE_EQ(horovod["4"].get<double>(), 73.68422030693816);
  EXPECT_DOUBLE_EQ(horovod["5"].get<double>(), 10.526313211143218);
  EXPECT_DOUBLE_EQ(horovod["7"].get<double>(), 15.789466481918621);
}
#endif

}  // namespace
}  // namespace stepscope::rules
