// The framework side of one node's exposition: step counts, step-time quantiles, mean and σ,
// outlier counts, step rate and data-wait share per rank and phase, recording drops by cause
// and rule triggers, kept across the online rules' passes over the run.
//
// Each pass hands the freshly loaded model; the steps that finished since the last pass are
// added (a step still open is taken by a later pass, once it ended). Outliers are counted as
// StepOutlier tests them (RULES.md §5: longer than mean + stddev·σ of the phase's steps, once it
// has more than 100), against the steps before each one, for every `stddev` in
// metric_names.h's kOutlierStddevs.
//
// Callers: the launcher's online-rules observer. Threading: one thread (the online rules').
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/model.h"
#include "prometheus/metric_names.h"
#include "rules/profiler_report.h"

namespace stepscope::prometheus {

class FrameworkFigures {
 public:
  explicit FrameworkFigures(std::string node_name) : node_name_(std::move(node_name)) {}

  // Adds this node's steps that finished since the last call, and its streams' drops.
  void Update(const analysis::Model& model);
  // RuleTriggered per rule, as the online rules count them.
  void UpdateRules(const rules::ProfilerReport& report);

  // The families in the Prometheus text format, each series labelled with `base` first
  // (`stepscope_job="...",node="..."`, already escaped).
  std::string Render(const std::string& base) const;

 private:
  static constexpr size_t kOutlierFactors = std::size(kOutlierStddevs);
  static constexpr size_t kRecentSteps = 1000;             // the summary's quantiles
  static constexpr int64_t kRateWindowNs = 60'000'000'000;  // steps per second

  struct Series {
    int64_t steps = 0;
    double sum_s = 0;
    double welford_mean_s = 0;
    double welford_m2 = 0;
    std::array<int64_t, kOutlierFactors> outliers{};
    int64_t measured_step_ns = 0;  // steps stepscope's detail profiling did not disturb
    int64_t wait_ns = 0;
    std::deque<double> recent_s;      // the last kRecentSteps durations
    std::deque<int64_t> recent_end_ns;  // ends within kRateWindowNs of the latest
  };
  void Add(Series& series, double duration_s, int64_t end_ns);

  std::string node_name_;
  int64_t next_start_ns_ = INT64_MIN;  // steps starting before this were added
  std::map<std::pair<std::string, std::string>, Series> series_;  // by (rank, phase)
  std::map<std::string, int64_t> dropped_;  // by cause
  std::map<std::string, int64_t> triggers_;  // by rule
};

}  // namespace stepscope::prometheus
