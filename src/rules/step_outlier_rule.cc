// StepOutlier (shared/RULES.md §5): steps whose duration exceeds mean + stddev·σ of all steps of
// their node and phase so far. Sticky: once triggered, met for every later window.
//
// Differences from the reference (docs/rules.md "StepOutlier"):
// - **Fixed**: one Details.step_details entry per (node, phase): with one phase on a node the
//   reference's step_details[node] = {...}; only when two phases of a node each have more than
//   100 steps, step_details[node][phase] (the reference keeps only the last phase's entry).
// - A step is assigned to the window containing its start (RULES.md §0), so a step spanning a
//   window edge is counted once.
// - As the reference, the activity of an outlier step is that of the first step of this window
//   with its number on its writer, of any phase: a TRAIN outlier whose number an EVAL step of
//   this window repeats gets that EVAL step's activity.
// - "node" is the writer of the steps, as the reference's node_id: a SageMaker rank's timeline
//   ("algo-1-0") has its own entry although its events belong to algo-1 (Model::WriterOf).
// - step_numbers keep the type the trace gave them (SageMaker's strings stay strings).
// - A `mode` adds the events named `mode` to the steps; it restricts nothing (as the
//   reference's condition, every Step:ModeKeys step still counts).
// - Findings name every outlier step in evidence ranges of consecutive step numbers, with what
//   ran there; steps that stepscope's own detail windows disturbed (int arg
//   "stepscope_disturbed" = 1) stay in the statistics, as the reference would count them, and
//   their evidence says so.
//
// Cost: a 24 h run has ~350,000 steps and 1,440 windows, so each window does only what decides
// its outcome: the mean is an exact running sum (the same additions, in the same order, as
// analysis::Mean's), σ comes from Welford's update, and the durations sit in SortedRuns so the outliers
// are counted and listed by binary search. Whenever a duration lies so close to the threshold
// that the update's rounding could put it on the other side, σ is recomputed exactly (two-pass,
// as numpy), so the outliers are always exactly the reference's. Everything that only feeds
// Details or a finding's title (σ itself, box stats, histogram, outlier step numbers) is computed
// in Report(), over the same values the last window saw.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/framework_activity.h"
#include "rules/sorted_runs.h"

namespace stepscope::rules {
namespace {

using analysis::FrameworkEvent;
using analysis::Model;

constexpr std::string_view kRuleName = "StepOutlier";
constexpr std::string_view kStepMarker = "Step:ModeKeys";
constexpr std::string_view kStepPrefix = "Step:ModeKeys.";
// The statistics start with more than this many steps of a (node, phase).
constexpr size_t kMinSteps = 100;
constexpr int kHistogramBins = 100;
constexpr size_t kTopActivity = 5;

// numpy's round(x, 2): round half to even on x·100.
double Round2(double x) { return std::nearbyint(x * 100.0) / 100.0; }

std::string FormatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f s", seconds);
  return text;
}

// One step as the findings need it (what StepSeries hands out; 24 bytes).
struct StepRecord {
  int64_t number = -1;  // FrameworkEvent::step
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// One step as StepSeries keeps it: 16 bytes, since a day holds ~2,000,000 steps at 24 steps/s
// and the report's peak holds all of them. A step whose duration or number does not fit here
// (a step over 4.29 s, a number beyond int32) is kept whole in StepSeries::wide_steps instead.
struct PackedStep {
  int64_t start_ns = 0;
  uint32_t duration_ns = 0;
  int32_t number = 0;
};

// StepSeries::flags: disturbed, and how the trace typed the step number (args.step_num).
constexpr uint8_t kDisturbed = 1;
constexpr uint8_t kNumberAsText = 2;  // the decimal text of `number` ("12", as SageMaker writes it)
constexpr uint8_t kNumberOther = 4;   // neither the number nor its text: in odd_numbers
constexpr uint8_t kWide = 8;          // the step is in wide_steps, not packed

// All steps of one (node, phase), in the order seen. Durations are not kept beside the steps:
// duration_s(j) computes the very double the statistics were fed, from the step's nanoseconds.
struct StepSeries {
  std::string node_name;
  uint32_t node = 0;
  // Deques grow without copying what they hold, and never hold unused capacity.
  std::deque<PackedStep> packed;
  std::deque<uint8_t> flags;                     // per step
  std::map<size_t, StepRecord> wide_steps;       // by step index: kWide steps
  std::map<size_t, nlohmann::json> odd_numbers;  // by step index: kNumberOther step numbers
  // Left-to-right sum of the durations: bit-identical to analysis::Mean's accumulate.
  double sum_s = 0;
  // Welford's running mean and sum of squared deviations: σ to within rounding.
  double welford_mean_s = 0;
  double welford_m2 = 0;
  SortedRuns sorted;  // the step indices ordered by duration_s (durations())

  size_t size() const { return packed.size(); }
  StepRecord step(size_t j) const {
    if ((flags[j] & kWide) != 0) return wide_steps.at(j);
    const PackedStep& p = packed[j];
    return StepRecord{p.number, p.start_ns, p.start_ns + static_cast<int64_t>(p.duration_ns)};
  }
  int64_t start_ns(size_t j) const { return packed[j].start_ns; }  // packed even when wide
  double duration_s(size_t j) const { return DurationSeconds(step(j)); }
  // What `sorted` orders the step indices by.
  auto durations() const {
    return [this](uint32_t j) { return duration_s(j); };
  }
  bool disturbed(size_t j) const { return (flags[j] & kDisturbed) != 0; }
  // The step number as the trace typed it.
  nlohmann::json NumberJson(size_t j) const {
    if ((flags[j] & kNumberOther) != 0) return odd_numbers.at(j);
    if ((flags[j] & kNumberAsText) != 0) return std::to_string(step(j).number);
    return step(j).number;
  }
  void Add(const StepRecord& step, const nlohmann::json& number, bool is_disturbed) {
    uint8_t flag = is_disturbed ? kDisturbed : 0;
    if (number.is_string() && number.get_ref<const std::string&>() == std::to_string(step.number)) {
      flag |= kNumberAsText;
    } else if (!number.is_number_integer() || number.get<int64_t>() != step.number) {
      flag |= kNumberOther;
      odd_numbers.emplace(packed.size(), number);
    }
    const int64_t duration_ns = step.end_ns - step.start_ns;
    const bool fits = duration_ns >= 0 && duration_ns <= std::numeric_limits<uint32_t>::max() &&
                      step.number >= std::numeric_limits<int32_t>::min() &&
                      step.number <= std::numeric_limits<int32_t>::max();
    if (!fits) {
      flag |= kWide;
      wide_steps.emplace(packed.size(), step);
    }
    packed.push_back(fits ? PackedStep{step.start_ns, static_cast<uint32_t>(duration_ns), static_cast<int32_t>(step.number)}
                          : PackedStep{step.start_ns, 0, 0});
    flags.push_back(flag);
  }
  static double DurationSeconds(const StepRecord& step) {
    return static_cast<double>(step.end_ns - step.start_ns) / 1e9;
  }
};

// The statistics of a (node, phase) as of a window, the values numpy would give.
struct SeriesStats {
  double mean = 0;
  double sigma = 0;
  double threshold = 0;
};

// Exact (two-pass) statistics of the first `count` durations: analysis::Mean and
// analysis::StdDev's arithmetic, in their order, over the series' steps (no copy of the
// durations: a day's series holds millions).
SeriesStats ExactStats(const StepSeries& series, size_t count, double stddev_factor) {
  SeriesStats stats;
  const double count_d = static_cast<double>(count);
  double sum = 0;
  for (size_t j = 0; j < count; ++j) sum += series.duration_s(j);
  stats.mean = sum / count_d;
  double squares = 0;
  for (size_t j = 0; j < count; ++j) {
    const double deviation = series.duration_s(j) - stats.mean;
    squares += deviation * deviation;
  }
  stats.sigma = std::sqrt(squares / count_d);
  stats.threshold = stats.mean + stats.sigma * stddev_factor;
  return stats;
}

class StepOutlierRule final : public Rule {
 public:
  StepOutlierRule() {
    parameters_.Declare("stddev", RuleParameters::Kind::kPositive, "3");
    parameters_.Declare("mode", RuleParameters::Kind::kText, "None");
    parameters_.Declare("n_outliers", RuleParameters::Kind::kCount, "10");
    parameters_.SetReportLines({{"threshold", "stddev"}, {"mode", "mode"}, {"n_outliers", "n_outliers"}, {"stddev", "stddev"}});
    report_.rule = std::string(kRuleName);
    report_.description =
        "Detects outliers in step duration: steps of a node and phase that take longer than the mean plus "
        "stddev times the standard deviation of all its steps, once there are more than 100 steps; triggers "
        "when there are more than n_outliers of them.";
    report_.recommendation =
        "Look at what ran during the outlier steps (evidence): periodic stalls often come from checkpointing, "
        "evaluation, data-loader refills, garbage collection or other processes on the node. Check the step "
        "timeline around them and move periodic work off the training loop.";
    report_.details = {{"step_details", nlohmann::json::object()}};
  }

  std::string_view name() const override { return kRuleName; }

  bool Evaluate(const Window& window) override {
    const Model& model = *window.model;
    report_.parameters = parameters_.ReportString();
    const double stddev_factor = parameters_.Number("stddev");
    const std::string& mode = parameters_.Text("mode");
    const int64_t n_outliers = static_cast<int64_t>(parameters_.Number("n_outliers"));

    ++evaluations_;
    stddev_factor_ = stddev_factor;
    std::map<StepSeries*, std::vector<uint32_t>> batches;  // the indices of this window's steps
    // The reference's step_intervals: per writer, step number -> the first step of this window
    // with it (numbers compared as the trace typed them).
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> window_steps;
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const FrameworkEvent& event = model.events()[i];
      const std::string_view phase = model.String(event.phase);
      if (phase == "DataLoaderIterInitialize") {
        EpochStarts& epochs = epochs_[std::string(model.WriterOf(event))];
        epochs.start_ns.push_back(event.start_ns);
        if (const analysis::EventArg* arg = model.FindArg(event, "persistent_workers")) {
          epochs.persistent_workers = arg->int_value != 0;
        }
        continue;
      }
      if (!IsStep(phase, model.String(event.name), mode)) continue;
      ++report_.datapoints;
      const std::string node_name(model.WriterOf(event));
      StepSeries& series = series_[{node_name, std::string(phase)}];
      series.node_name = node_name;
      series.node = event.node;
      const double duration_s = static_cast<double>(event.end_ns - event.start_ns) / 1e9;
      batches[&series].push_back(static_cast<uint32_t>(series.size()));
      series.sum_s += duration_s;
      const double delta = duration_s - series.welford_mean_s;
      series.welford_mean_s += delta / static_cast<double>(series.size() + 1);
      series.welford_m2 += delta * (duration_s - series.welford_mean_s);
      const nlohmann::json number = StepNumberJson(model, event);
      series.Add(StepRecord{event.step, event.start_ns, event.end_ns}, number, model.IsDisturbedStep(event));
      window_steps.try_emplace({node_name, number.dump()}, event.start_ns, event.end_ns);
    }
    // After the loop: the steps are in their series, where durations() reads them.
    for (auto& [series, batch] : batches) series->sorted.Add(std::move(batch), series->durations());

    for (auto& [key, series] : series_) {
      const auto& [node_name, phase] = key;
      if (series.size() <= kMinSteps) continue;
      // Online evaluation reloads the model every window: find the node's index in this one.
      for (uint32_t n = 0; n < model.nodes().size(); ++n) {
        if (model.nodes()[n].name == node_name) series.node = n;
      }

      const double threshold = Threshold(series, stddev_factor);
      // As the reference: a value exactly at the threshold is neither outlier nor normal.
      const size_t outlier_count = series.sorted.CountAbove(threshold, series.durations());
      if (static_cast<int64_t>(outlier_count) > n_outliers) {
        const std::vector<size_t> outliers = series.sorted.IndicesAbove(threshold, series.durations());
        report_.violations += static_cast<int64_t>(outliers.size());
        report_.triggered += 1;
        report_.last_trigger_ns = window.start_ns;
        // What ran during the outlier steps whose numbers this window's steps carry (the
        // reference looks only at this window's steps).
        for (size_t j : outliers) {
          auto step = window_steps.find({node_name, series.NumberJson(j).dump()});
          if (step == window_steps.end()) continue;
          activity_.AddOver(model, series.node, step->second.first, step->second.second);
        }
        activity_.WriteDetails(&report_.details);
        findings_[key] = MakeFinding(model, series, phase, outliers, stddev_factor);
      }
    }
    return report_.triggered > 0;
  }

  RuleReport Report() const override {
    // Report() is const and may be called from several threads at once: the cache is shared.
    const std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cached_evaluations_ != evaluations_) {
      cached_step_details_ = StepDetails();
      cached_titles_.clear();
      for (const auto& [key, pending] : findings_) {
        const SeriesStats stats = ExactStats(series_.at(key), pending.step_count, pending.stddev_factor);
        cached_titles_[key] = std::to_string(pending.outlier_count) + " " + pending.short_phase + " steps on " +
                              key.first + " took longer than " + FormatSeconds(stats.threshold) + " (mean " +
                              FormatSeconds(stats.mean) + " + " + pending.stddev_text + " x stddev " +
                              FormatSeconds(stats.sigma) + ")" + pending.pattern;
      }
      cached_evaluations_ = evaluations_;
    }
    RuleReport report = report_;
    report.parameters = parameters_.ReportString();
    report.details["step_details"] = cached_step_details_;
    for (const auto& [key, pending] : findings_) {
      report.findings.push_back(pending.finding);
      report.findings.back().title = cached_titles_.at(key);
    }
    return report;
  }

 private:
  using SeriesKey = std::pair<std::string, std::string>;  // (node name, phase)

  // A finding as of the window that made it; its title needs the exact σ of the first
  // step_count steps, computed in Report().
  struct PendingFinding {
    Finding finding;
    size_t step_count = 0;
    size_t outlier_count = 0;
    double stddev_factor = 0;
    std::string stddev_text;
    std::string short_phase;
    std::string pattern;  // ": the first step of every epoch", ": every 100 steps", or ""
  };

  // Outliers that recur are one cause with a likely name (issue 13 §3): the first step of each
  // epoch (the DataLoader starts its workers again unless persistent_workers), or every N steps
  // (checkpointing, evaluation, logging). Sets the finding's advice and returns the title's
  // suffix; "" when the outliers follow no pattern.
  // Where each epoch began on a writer: the DataLoader iterators it created (one per epoch).
  struct EpochStarts {
    std::vector<int64_t> start_ns;  // ascending
    int persistent_workers = -1;    // -1 unknown, 0, 1
  };

  static std::string NamePeriodicOutliers(const EpochStarts* epochs, const StepSeries& series,
                                          const std::vector<int64_t>& numbers, Finding& finding) {
    if (numbers.size() < 3) return "";
    auto list = [&](size_t limit) {
      std::string text;
      for (size_t i = 0; i < numbers.size() && i < limit; ++i) text += (i ? ", " : "") + std::to_string(numbers[i]);
      return text + (numbers.size() > limit ? ", ..." : "");
    };
    // Epoch starts: the first step of the series that starts after each new DataLoader iterator.
    std::vector<int64_t> epoch_firsts;
    const int persistent = epochs != nullptr ? epochs->persistent_workers : -1;
    static const std::vector<int64_t> kNoEpochs;
    for (int64_t start_ns : epochs != nullptr ? epochs->start_ns : kNoEpochs) {
      // Steps arrive in start order.
      auto first = std::lower_bound(series.packed.begin(), series.packed.end(), start_ns,
                                    [](const PackedStep& step, int64_t t) { return step.start_ns < t; });
      if (first != series.packed.end()) {
        epoch_firsts.push_back(series.step(static_cast<size_t>(first - series.packed.begin())).number);
      }
    }
    std::sort(epoch_firsts.begin(), epoch_firsts.end());
    epoch_firsts.erase(std::unique(epoch_firsts.begin(), epoch_firsts.end()), epoch_firsts.end());
    size_t at_epoch_start = 0;
    for (int64_t number : numbers) {
      at_epoch_start += std::binary_search(epoch_firsts.begin(), epoch_firsts.end(), number);
    }
    if (epoch_firsts.size() >= 3 && 3 * at_epoch_start >= 2 * numbers.size() && 2 * at_epoch_start >= epoch_firsts.size()) {
      if (persistent == 1) {
        finding.recommendation = "The slow steps are the first of each epoch (steps " + list(6) +
                                 ") although the DataLoader keeps its workers (persistent_workers=True): look at "
                                 "what else happens at the epoch boundary (evaluation, checkpointing, re-shuffling "
                                 "a large dataset) and move it off the training loop or make it asynchronous.";
      } else {
        finding.recommendation = "The slow steps are the first of each epoch (steps " + list(6) +
                                 "): the DataLoader starts its worker processes again for every epoch. Set "
                                 "persistent_workers=True (with num_workers > 0) so they survive between epochs; "
                                 "if the epoch boundary also evaluates or checkpoints, make that asynchronous.";
      }
      finding.next_step = persistent == 1 ? "Open step " + std::to_string(numbers[1]) +
                                                " in the timeline (stepscope export --format chrome) and look at "
                                                "what runs before it."
                                          : "Set persistent_workers=True on the DataLoader and compare the first "
                                            "step of an epoch with the others.";
      return ": the first step of every epoch";
    }
    // Every N steps: equal gaps, the first outlier (often the warm-up step) aside.
    for (size_t skip = 0; skip <= 1 && numbers.size() - skip >= 3; ++skip) {
      const int64_t period = numbers[skip + 1] - numbers[skip];
      bool regular = period >= 2;
      for (size_t i = skip + 1; regular && i < numbers.size(); ++i) regular = numbers[i] - numbers[i - 1] == period;
      if (!regular) continue;
      finding.recommendation = "The slow steps recur every " + std::to_string(period) + " steps (steps " + list(6) +
                               "): something periodic runs in the loop, most often checkpointing, evaluation, "
                               "logging or metrics written to disk. Do it less often, asynchronously (a background "
                               "thread or process), or outside the timed loop.";
      finding.next_step = "Open step " + std::to_string(numbers[skip + 1]) +
                          " in the timeline (stepscope export --format chrome) and compare it with step " +
                          std::to_string(numbers[skip + 1] - 1) + ".";
      return ": every " + std::to_string(period) + " steps";
    }
    return "";
  }

  // mean + σ·stddev_factor over every step of the series so far, exact wherever it decides which
  // steps are above it: the incremental σ may differ from numpy's two-pass σ in the last bits,
  // so when any duration lies within a bound of that difference of the threshold, σ is
  // recomputed the numpy way. (Bound: Welford's and the two-pass σ each err by O(n·ε·|mean|);
  // the margin below is a generous multiple of both plus 1e-9 relative.)
  static double Threshold(const StepSeries& series, double stddev_factor) {
    const size_t count = series.size();
    const double count_d = static_cast<double>(count);
    const double mean = series.sum_s / count_d;  // == analysis::Mean of the durations, bit for bit
    const double sigma = std::sqrt(std::max(series.welford_m2, 0.0) / count_d);
    const double threshold = mean + sigma * stddev_factor;
    const double epsilon = std::numeric_limits<double>::epsilon();
    const double margin =
        (1 + stddev_factor) * (std::abs(mean) + sigma) * (1e-9 + 16 * count_d * epsilon);
    if (std::isfinite(threshold) && series.sorted.CountBetween(threshold - margin, threshold + margin, series.durations()) == 0) {
      return threshold;
    }
    return ExactStats(series, count, stddev_factor).threshold;
  }

  // Details.step_details as the last window left it: every (node, phase) with more than
  // kMinSteps steps, over all of its steps.
  nlohmann::json StepDetails() const {
    // Phases with statistics per node: one keeps the reference's shape, step_details[node].
    std::map<std::string, int> phases_per_node;
    for (const auto& [key, series] : series_) {
      if (series.size() > kMinSteps) ++phases_per_node[key.first];
    }
    nlohmann::json step_details = nlohmann::json::object();
    for (const auto& [key, series] : series_) {
      const auto& [node_name, phase] = key;
      if (series.size() <= kMinSteps) continue;
      const SeriesStats stats = ExactStats(series, series.size(), stddev_factor_);
      // The figures that need every value sorted, taken before the outliers' list is built so
      // the two are never held together (on a day's run: 2 M values, and 650 k outliers as JSON).
      double p99 = 0, p95 = 0, p50 = 0, max = 0, min = 0;
      analysis::Histogram histogram;
      {
        const std::vector<double> sorted = series.sorted.SortedValues(series.durations());
        // As the reference: a value exactly at the threshold is neither outlier nor normal.
        const auto normal_end = std::lower_bound(sorted.begin(), sorted.end(), stats.threshold);
        const std::span<const double> normal(sorted.data(), static_cast<size_t>(normal_end - sorted.begin()));
        // analysis::ComputeBoxStats's figures, read from the values already sorted (it would sort
        // another copy).
        p99 = analysis::SortedQuantile(sorted, 0.99);
        p95 = analysis::SortedQuantile(sorted, 0.95);
        p50 = analysis::SortedQuantile(sorted, 0.50);
        max = sorted.back();
        min = sorted.front();
        histogram = analysis::EqualBinHistogram(normal, kHistogramBins);
      }
      // The outliers in arrival order (IndicesAbove ascends), as a scan of the steps lists them.
      nlohmann::json outlier_numbers = nlohmann::json::array();
      for (size_t j : series.sorted.IndicesAbove(stats.threshold, series.durations())) outlier_numbers.push_back(series.NumberJson(j));
      nlohmann::json probs = nlohmann::json::array();
      for (double count : histogram.counts) probs.push_back(static_cast<int64_t>(count));
      nlohmann::json& entry = phases_per_node[node_name] > 1 ? step_details[node_name][phase] : step_details[node_name];
      entry = {
          {"step_stats",
           {{"mean", stats.mean},
            {"max", max},
            {"p99", p99},
            {"p95", p95},
            {"p50", p50},
            {"min", min}}},
          {"number_of_outliers", outlier_numbers.size()},
          {"phase", phase},
          {"stddev", Round2(stats.sigma)},
          {"probs", probs},
          {"binedges", histogram.edges},
          {"step_numbers", outlier_numbers},
      };
    }
    return step_details;
  }

  // As the reference's condition: every Step:ModeKeys step, and with a mode also the events
  // named like it (a mode never leaves a step out: RULES.md §5).
  static bool IsStep(std::string_view phase, std::string_view name, const std::string& mode) {
    if (phase.find(kStepMarker) != std::string_view::npos) return true;
    return !mode.empty() && mode != "None" && name == mode;
  }

  // args.step_num as the trace wrote it (SageMaker: a string); the parsed number otherwise.
  static nlohmann::json StepNumberJson(const Model& model, const FrameworkEvent& event) {
    const analysis::EventArg* arg = model.FindArg(event, "step_num");
    return arg != nullptr ? ArgJson(model, *arg) : nlohmann::json(event.step);
  }

  // One Evidence per run of consecutive outlier step numbers with the same "disturbed" state. The
  // ranks of one node share its series (RULES.md §5: per node), so a slow step of a synchronous
  // job is an outlier on every rank: equal numbers belong to one range, named once.
  PendingFinding MakeFinding(const Model& model, const StepSeries& series, const std::string& phase,
                             const std::vector<size_t>& outliers, double stddev_factor) {
    const std::string short_phase =
        phase.starts_with(kStepPrefix) ? phase.substr(kStepPrefix.size()) : phase;
    const double mean = series.sum_s / static_cast<double>(series.size());
    PendingFinding pending;
    pending.step_count = series.size();
    pending.outlier_count = outliers.size();
    pending.stddev_factor = stddev_factor;
    pending.stddev_text = parameters_.Text("stddev");
    pending.short_phase = short_phase;
    Finding& finding = pending.finding;
    finding.id = std::string(kRuleName) + "/" + series.node_name + "/" + short_phase;
    finding.rule = std::string(kRuleName);
    finding.severity = Severity::kWarning;
    finding.recommendation = report_.recommendation;
    finding.next_step = "Open the timeline at the first outlier step and compare it with a normal step.";

    struct OutlierStep {
      StepRecord step;
      bool disturbed = false;
    };
    std::vector<OutlierStep> steps;
    for (size_t j : outliers) steps.push_back({series.step(j), series.disturbed(j)});
    std::stable_sort(steps.begin(), steps.end(),
                     [](const OutlierStep& a, const OutlierStep& b) { return a.step.number < b.step.number; });
    std::vector<int64_t> numbers;
    for (const OutlierStep& step : steps) numbers.push_back(step.step.number);
    auto epochs = epochs_.find(series.node_name);
    pending.pattern = NamePeriodicOutliers(epochs == epochs_.end() ? nullptr : &epochs->second, series, numbers, finding);
    double outlier_excess_s = 0;
    for (size_t j : outliers) outlier_excess_s += series.duration_s(j) - mean;
    const double total_s = mean * static_cast<double>(series.size());
    if (total_s > 0) {
      finding.estimated_saving = std::clamp(outlier_excess_s / total_s, 0.0, 1.0);
      finding.saving_basis = "outlier steps' time above the mean step time, of all " + short_phase + " step time";
    }

    size_t begin = 0;
    while (begin < steps.size()) {
      size_t end = begin + 1;
      while (end < steps.size() && steps[end].step.number - steps[end - 1].step.number <= 1 &&
             steps[end].disturbed == steps[begin].disturbed) {
        ++end;
      }
      Evidence evidence;
      evidence.node = series.node_name;
      evidence.step_phase = short_phase;
      evidence.start_ns = steps[begin].step.start_ns;
      evidence.end_ns = steps[begin].step.end_ns;
      double duration_s = 0;
      for (size_t k = begin; k < end; ++k) {
        if (evidence.steps.empty() || evidence.steps.back() != steps[k].step.number) {
          evidence.steps.push_back(steps[k].step.number);
        }
        evidence.start_ns = std::min(evidence.start_ns, steps[k].step.start_ns);
        evidence.end_ns = std::max(evidence.end_ns, steps[k].step.end_ns);
        duration_s += static_cast<double>(steps[k].step.end_ns - steps[k].step.start_ns) / 1e9;
      }
      const size_t count = end - begin;  // the steps (of every rank) the average is over
      evidence.what = (evidence.steps.size() == 1 ? "step " + std::to_string(steps[begin].step.number)
                                  : "steps " + std::to_string(steps[begin].step.number) + "-" +
                                        std::to_string(steps[end - 1].step.number)) +
                      " took " + FormatSeconds(duration_s / static_cast<double>(count)) +
                      (count == 1 ? "" : " on average") + " against a mean of " + FormatSeconds(mean);
      if (steps[begin].disturbed) {
        evidence.what += "; stepscope's own detail window ran in " +
                         std::string(evidence.steps.size() == 1 ? "this step" : "these steps") +
                         ", so part of the time may be profiling overhead";
      }
      // Cached: the finding is rebuilt in every triggering window, and its ranges rarely change.
      auto [cached, inserted] = top_activity_cache_.try_emplace(
          std::make_tuple(series.node_name, phase, evidence.start_ns, evidence.end_ns));
      if (inserted) {
        FrameworkActivity activity;
        activity.AddOver(model, series.node, evidence.start_ns, evidence.end_ns);
        cached->second = activity.Top(kTopActivity, evidence.end_ns - evidence.start_ns);
      }
      evidence.top_activity = cached->second;
      finding.evidence.push_back(std::move(evidence));
      begin = end;
    }
    return pending;
  }

  RuleReport report_;
  std::map<SeriesKey, StepSeries> series_;
  FrameworkActivity activity_;
  std::map<SeriesKey, PendingFinding> findings_;
  std::map<std::string, EpochStarts> epochs_;  // by writer (as series_ keys)
  size_t evaluations_ = 0;
  double stddev_factor_ = 0;  // as of the last window
  // What Report() computed, valid while cached_evaluations_ == evaluations_.
  mutable std::mutex cache_mutex_;
  mutable size_t cached_evaluations_ = std::numeric_limits<size_t>::max();
  mutable nlohmann::json cached_step_details_;
  mutable std::map<SeriesKey, std::string> cached_titles_;
  // (node name, phase, start, end) of an evidence range -> what ran there.
  std::map<std::tuple<std::string, std::string, int64_t, int64_t>, std::vector<ActivityShare>> top_activity_cache_;
};

}  // namespace

std::unique_ptr<Rule> MakeStepOutlierRule() { return std::make_unique<StepOutlierRule>(); }

}  // namespace stepscope::rules
