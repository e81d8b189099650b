#include "prometheus/framework_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "analysis/numerics.h"
#include "rules/step_facts.h"

namespace stepscope::prometheus {
namespace {

// StepOutlier evaluates a phase once it has more than this many steps (RULES.md §5).
constexpr int64_t kMinStepsForOutliers = 100;

std::string Value(double value) {
  if (std::isnan(value)) return "NaN";
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

void Family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

}  // namespace

void FrameworkFigures::Add(Series& series, double duration_s, int64_t end_ns) {
  // The outlier test first: against the steps before this one.
  if (series.steps > kMinStepsForOutliers) {
    const double sigma = std::sqrt(series.welford_m2 / static_cast<double>(series.steps));
    for (size_t k = 0; k < kOutlierFactors; ++k) {
      if (duration_s > series.welford_mean_s + kOutlierStddevs[k] * sigma) ++series.outliers[k];
    }
  }
  ++series.steps;
  series.sum_s += duration_s;
  const double delta = duration_s - series.welford_mean_s;
  series.welford_mean_s += delta / static_cast<double>(series.steps);
  series.welford_m2 += delta * (duration_s - series.welford_mean_s);
  series.recent_s.push_back(duration_s);
  if (series.recent_s.size() > kRecentSteps) series.recent_s.pop_front();
  series.recent_end_ns.push_back(end_ns);
}

void FrameworkFigures::Update(const analysis::Model& model) {
  uint32_t node = UINT32_MAX;
  for (uint32_t n = 0; n < model.nodes().size(); ++n) {
    if (model.nodes()[n].name == node_name_) node = n;
  }
  if (node == UINT32_MAX) return;

  // Drops: every stream of this node, as the store counts them (they only grow).
  dropped_.clear();
  for (const analysis::StreamFacts& stream : model.streams()) {
    if (stream.node != node) continue;
    dropped_["write_failed"] += static_cast<int64_t>(stream.dropped_write_failed);
    dropped_["ring_full"] += static_cast<int64_t>(stream.dropped_events - stream.dropped_write_failed);
  }

  const int64_t complete_until = model.complete_until_ns();
  if (complete_until <= next_start_ns_) return;
  rules::Window window;
  window.model = &model;
  window.start_ns = next_start_ns_;
  window.end_ns = complete_until;
  window.events = model.EventsStartingIn(next_start_ns_ == INT64_MIN ? model.first_ns() : next_start_ns_, complete_until);
  // A step still open (provisional, or ending past what is complete) waits for a later pass:
  // nothing at or after its start is added yet, so every step is added once, in order.
  std::unordered_set<int64_t> open_starts;
  for (uint32_t index : model.provisional()) open_starts.insert(model.events()[index].start_ns);
  std::vector<rules::StepFacts> steps = rules::CollectStepFacts(window);
  int64_t boundary = complete_until;
  for (const rules::StepFacts& step : steps) {
    if (step.node == node && (step.end_ns > complete_until || open_starts.contains(step.start_ns))) {
      boundary = std::min(boundary, step.start_ns);
    }
  }
  int64_t latest_end = INT64_MIN;
  for (const rules::StepFacts& step : steps) {
    if (step.node != node || step.start_ns >= boundary) continue;
    Series& series = series_[{std::to_string(std::max(step.rank, 0)), step.phase}];
    Add(series, static_cast<double>(step.duration_ns()) / 1e9, step.end_ns);
    if (!step.disturbed) {
      series.measured_step_ns += step.duration_ns();
      series.wait_ns += step.data_wait_ns;
    }
    latest_end = std::max(latest_end, step.end_ns);
  }
  if (latest_end != INT64_MIN) {
    for (auto& [key, series] : series_) {
      while (!series.recent_end_ns.empty() && series.recent_end_ns.front() <= latest_end - kRateWindowNs) {
        series.recent_end_ns.pop_front();
      }
    }
  }
  next_start_ns_ = boundary;
}

void FrameworkFigures::UpdateRules(const rules::ProfilerReport& report) {
  for (const rules::RuleReport& rule : report.Reports()) triggers_[rule.rule] = rule.triggered;
}

std::string FrameworkFigures::Render(const std::string& base) const {
  std::string out;
  auto labels = [&](const std::pair<std::string, std::string>& key) {
    return base + ",rank=\"" + EscapeLabelValue(key.first) + "\",phase=\"" + EscapeLabelValue(key.second) + "\"";
  };
  if (!series_.empty()) {
    Family(out, kSteps, "counter", "Steps finished, per rank and phase.");
    for (const auto& [key, s] : series_) out += std::string(kSteps) + "{" + labels(key) + "} " + Value(s.steps) + "\n";

    Family(out, kStepDuration, "summary",
           "Step duration: quantiles over the last 1000 steps; sum and count over the whole job.");
    for (const auto& [key, s] : series_) {
      std::vector<double> sorted(s.recent_s.begin(), s.recent_s.end());
      std::sort(sorted.begin(), sorted.end());
      for (const char* quantile : {"0.5", "0.9", "0.95", "0.99"}) {
        const double value = sorted.empty() ? NAN : analysis::SortedQuantile(sorted, std::stod(quantile));
        out += std::string(kStepDuration) + "{" + labels(key) + ",quantile=\"" + quantile + "\"} " + Value(value) + "\n";
      }
      out += std::string(kStepDuration) + "_sum{" + labels(key) + "} " + Value(s.sum_s) + "\n";
      out += std::string(kStepDuration) + "_count{" + labels(key) + "} " + Value(s.steps) + "\n";
    }

    Family(out, kStepDurationMean, "gauge", "Mean step duration over the whole job.");
    for (const auto& [key, s] : series_) {
      out += std::string(kStepDurationMean) + "{" + labels(key) + "} " + Value(s.welford_mean_s) + "\n";
    }
    Family(out, kStepDurationStddev, "gauge", "Population standard deviation of the step durations (StepOutlier's σ).");
    for (const auto& [key, s] : series_) {
      const double sigma = s.steps > 0 ? std::sqrt(s.welford_m2 / static_cast<double>(s.steps)) : 0;
      out += std::string(kStepDurationStddev) + "{" + labels(key) + "} " + Value(sigma) + "\n";
    }
    Family(out, kStepsPerSecond, "gauge", "Steps finished per second over the last minute of the job.");
    for (const auto& [key, s] : series_) {
      out += std::string(kStepsPerSecond) + "{" + labels(key) + "} " +
             Value(static_cast<double>(s.recent_end_ns.size()) / (static_cast<double>(kRateWindowNs) / 1e9)) + "\n";
    }
    Family(out, kStepOutliers, "counter",
           "Steps longer than mean + stddev x sigma of the steps before them (StepOutlier's test), per stddev.");
    for (const auto& [key, s] : series_) {
      for (size_t k = 0; k < kOutlierFactors; ++k) {
        out += std::string(kStepOutliers) + "{" + labels(key) + ",stddev=\"" + StddevLabel(kOutlierStddevs[k]) + "\"} " +
               Value(static_cast<double>(s.outliers[k])) + "\n";
      }
    }
    Family(out, kDataWaitRatio, "gauge",
           "Share of step time the training loop waited for its next batch (DataloaderStarvation's measure).");
    for (const auto& [key, s] : series_) {
      const double ratio =
          s.measured_step_ns > 0 ? static_cast<double>(s.wait_ns) / static_cast<double>(s.measured_step_ns) : 0;
      out += std::string(kDataWaitRatio) + "{" + labels(key) + "} " + Value(ratio) + "\n";
    }
  }
  Family(out, kDroppedEvents, "counter", "Events stepscope's recorders dropped, by cause.");
  for (const char* cause : {"ring_full", "write_failed"}) {
    const auto it = dropped_.find(cause);
    out += std::string(kDroppedEvents) + "{" + base + ",cause=\"" + cause + "\"} " +
           Value(static_cast<double>(it == dropped_.end() ? 0 : it->second)) + "\n";
  }
  if (!triggers_.empty()) {
    Family(out, kRuleTriggers, "counter", "Times each built-in rule triggered in the online evaluation (RuleTriggered).");
    for (const auto& [rule, count] : triggers_) {
      out += std::string(kRuleTriggers) + "{" + base + ",rule=\"" + EscapeLabelValue(rule) + "\"} " +
             Value(static_cast<double>(count)) + "\n";
    }
  }
  return out;
}

}  // namespace stepscope::prometheus
