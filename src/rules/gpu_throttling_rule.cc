// GPUThrottling (RULES.md §native, docs/rules.md): a GPU's clocks were held down by something
// other than idleness (power cap, thermal slowdown, HW slowdown or power brake, sync boost,
// application clocks) for more than `threshold_pct` % of training time, and the steps that ran
// while it was show what it cost.
//
// Reads the NVML source's gpu/gpuN/throttle_<reason> series (1 while the reason holds the clocks
// down; analysis/vocabulary.h GpuThrottleReasons). Training time is the samples from the node's
// first TRAIN step on (every sample when the node has no steps): the windows before the one
// that holds the first step lie wholly before it, so their counts are dropped when it comes. A step is throttled when a
// slowdown was active on any GPU of its node at any time inside it; the node's state between
// samples is the last sample's. Each window's samples are merged by time into one reason mask
// per GPU and per node, and the node's mask is kept only where it changes, so memory grows with
// the number of throttling episodes, not with the run. Steps wait until the samples have passed
// their end.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/vocabulary.h"
#include "rules/builtin_rules.h"
#include "rules/samples_read_once.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

using ReasonMask = uint16_t;
constexpr size_t kMaxReasons = 16;
constexpr size_t kSlowestSteps = 3;

ReasonMask SlowdownMask() {
  ReasonMask mask = 0;
  const auto reasons = analysis::GpuThrottleReasons();
  for (size_t r = 0; r < reasons.size() && r < kMaxReasons; ++r) {
    if (reasons[r].slowdown) mask |= static_cast<ReasonMask>(1u << r);
  }
  return mask;
}

ReasonMask HardwareMask() {
  ReasonMask mask = 0;
  const auto reasons = analysis::GpuThrottleReasons();
  for (size_t r = 0; r < reasons.size() && r < kMaxReasons; ++r) {
    if (reasons[r].hardware) mask |= static_cast<ReasonMask>(1u << r);
  }
  return mask;
}

// "power cap, HW thermal slowdown"
std::string ReasonLabels(ReasonMask mask) {
  std::string labels;
  const auto reasons = analysis::GpuThrottleReasons();
  for (size_t r = 0; r < reasons.size() && r < kMaxReasons; ++r) {
    if ((mask & (1u << r)) == 0) continue;
    if (!labels.empty()) labels += ", ";
    labels += reasons[r].label;
  }
  return labels;
}

struct GpuTally {
  int64_t samples = 0;            // in training time
  int64_t throttled_samples = 0;  // a slowdown reason active
  int64_t hardware_samples = 0;   // a hardware slowdown active
  std::array<int64_t, kMaxReasons> reason_samples{};
  // The longest run of throttled samples: [start, end] and its reasons.
  int64_t run_start_ns = -1;
  int64_t run_last_ns = -1;
  ReasonMask run_mask = 0;
  int64_t longest_start_ns = -1;
  int64_t longest_end_ns = -1;
  ReasonMask longest_mask = 0;
};

struct ThrottledStep {
  StepFacts step;
  ReasonMask reasons = 0;
  std::vector<ActivityShare> activity;
};

struct NodeState {
  int64_t first_step_ns = INT64_MAX;  // the first TRAIN step's start, once seen
  int64_t last_sample_ns = INT64_MIN;
  // Where the node's slowdown mask (OR over its GPUs) changes: (time, mask from then on).
  std::vector<std::pair<int64_t, ReasonMask>> changes;
  std::vector<StepFacts> pending;  // TRAIN steps not yet passed by the samples
  int64_t throttled_steps = 0, throttled_step_ns = 0;
  int64_t other_steps = 0, other_step_ns = 0;
  ReasonMask step_reasons = 0;
  std::vector<ThrottledStep> slowest;  // the slowest throttled steps, slowest first
};

class GpuThrottlingRule final : public Rule {
 public:
  GpuThrottlingRule() {
    parameters_.Declare("threshold_pct", RuleParameters::Kind::kPercent, "10");
    parameters_.Declare("min_samples", RuleParameters::Kind::kCount, "10");
  }
  std::string_view name() const override { return "GPUThrottling"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    // Steps first, so that the window's samples after the first step count as training time.
    for (StepFacts& step : CollectStepFacts(window)) {
      if (step.phase != "TRAIN" || step.disturbed) continue;
      NodeState& node = nodes_[step.node];
      if (node.first_step_ns == INT64_MAX) {
        // Training starts: what the node's GPUs did before (start-up, loading) is not counted.
        for (auto it = gpus_.lower_bound({step.node, INT_MIN}); it != gpus_.end() && it->first.first == step.node; ++it) {
          it->second = GpuTally{};
        }
      }
      node.first_step_ns = std::min(node.first_step_ns, step.start_ns);
      node.pending.push_back(std::move(step));
    }
    const bool throttled_here = ReadSamples(model, window.samples, window.end_ns);
    reads_.WindowRead(window.end_ns);
    for (auto& [node_index, node] : nodes_) ResolveSteps(model, node_index, node, /*all=*/false);
    return throttled_here;
  }

  void Finish(const analysis::Model& model) override {
    // The samples on the last window's end edge, which no later window read.
    std::vector<std::pair<size_t, size_t>> all;
    int64_t end_ns = 0;
    if (reads_.LastEdge(model, &all, &end_ns)) ReadSamples(model, all, end_ns);
    for (auto& [node_index, node] : nodes_) ResolveSteps(model, node_index, node, /*all=*/true);
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = std::string(name());
    report.description = "Checks whether GPU clocks were held down (power cap, thermal or hardware slowdown, sync "
                         "boost, application clocks) for a significant share of training time.";
    report.recommendation = "Keep the GPUs at full clocks: check cooling and airflow, and the power limit "
                            "(nvidia-smi -q -d POWER); hardware slowdowns point to the power supply or the board.";
    report.parameters = parameters_.ReportString();
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    const auto min_samples = static_cast<int64_t>(parameters_.Number("min_samples"));
    nlohmann::json details = nlohmann::json::object();
    const auto reasons = analysis::GpuThrottleReasons();
    for (const auto& [key, tally] : gpus_) {
      const auto& [node_index, gpu] = key;
      const std::string node_name = node_names_(node_index);
      const std::string gpu_name = "gpu" + std::to_string(gpu);
      report.datapoints += tally.samples;
      const double share = tally.samples > 0 ? static_cast<double>(tally.throttled_samples) / tally.samples : 0.0;
      nlohmann::json per_reason = nlohmann::json::object();
      for (size_t r = 0; r < reasons.size() && r < kMaxReasons; ++r) {
        per_reason[std::string(reasons[r].leaf)] =
            tally.samples > 0 ? static_cast<double>(tally.reason_samples[r]) / tally.samples : 0.0;
      }
      details[node_name][gpu_name] = {{"samples", tally.samples},
                                      {"throttled_samples", tally.throttled_samples},
                                      {"throttled_share", share},
                                      {"reason_share", std::move(per_reason)}};
      if (tally.samples < min_samples || share <= threshold) continue;
      ++report.violations;
      ++report.triggered;
      report.last_trigger_ns = std::max(report.last_trigger_ns, tally.longest_end_ns);
      auto node = nodes_.find(node_index);
      report.findings.push_back(
          MakeFinding(node_name, gpu_name, tally, share, node == nodes_.end() ? nullptr : &node->second));
    }
    for (const auto& [node_index, node] : nodes_) {
      if (node.throttled_steps + node.other_steps == 0) continue;
      details[node_names_(node_index)]["TRAIN steps"] = {
          {"throttled_steps", node.throttled_steps},
          {"throttled_mean_ns", node.throttled_steps ? node.throttled_step_ns / node.throttled_steps : 0},
          {"other_steps", node.other_steps},
          {"other_mean_ns", node.other_steps ? node.other_step_ns / node.other_steps : 0}};
    }
    report.details = std::move(details);
    return report;
  }

 private:
  // Reads the throttle samples of `ranges` (per series of the model) from where the last read
  // stopped to `end_ns`. Windows hold both edges (RULES.md §0): a sample on a window's end is read
  // by the next window, where it is at the start, so that a first step starting there finds it;
  // Finish reads the last edge.
  // Returns whether any was throttled.
  bool ReadSamples(const analysis::Model& model, const std::vector<std::pair<size_t, size_t>>& ranges,
                   int64_t end_ns) {
    // The samples by poll: (node, time) -> (gpu -> mask).
    std::map<std::pair<uint32_t, int64_t>, std::map<int, ReasonMask>> polls;
    for (size_t s = 0; s < model.series().size() && s < ranges.size(); ++s) {
      const analysis::SystemSeries& series = model.series()[s];
      if (model.String(series.type) != analysis::kStepscopeSeriesType) continue;
      const std::string_view metric = model.String(series.name);
      const analysis::GpuMetricParts parts = analysis::ParseGpuMetric(metric);
      if (parts.gpu < 0 || parts.pid >= 0) continue;
      const analysis::GpuThrottleReason* reason = analysis::FindGpuThrottleReason(parts.leaf);
      if (reason == nullptr || !parts.leaf.starts_with("throttle_")) continue;
      const auto bit = static_cast<ReasonMask>(1u << (reason - analysis::GpuThrottleReasons().data()));
      reads_.Read(series, metric, ranges[s], end_ns, [&](int64_t t, double value) {
        ReasonMask& mask = polls[{series.node, t}][parts.gpu];
        if (value >= 0.5) mask |= bit;
      });
    }
    bool throttled_here = false;
    const ReasonMask slowdown = SlowdownMask();
    const ReasonMask hardware = HardwareMask();
    for (const auto& [key, gpus] : polls) {
      const auto& [node_index, t] = key;
      NodeState& node = nodes_[node_index];
      ReasonMask node_mask = 0;
      for (const auto& [gpu, mask] : gpus) {
        const ReasonMask active = mask & slowdown;
        node_mask |= active;
        if (node.first_step_ns != INT64_MAX && t < node.first_step_ns) continue;  // before training
        GpuTally& tally = gpus_[{node_index, gpu}];
        ++tally.samples;
        for (size_t r = 0; r < kMaxReasons; ++r) {
          if (mask & (1u << r)) ++tally.reason_samples[r];
        }
        if (active == 0) {
          tally.run_start_ns = -1;
          continue;
        }
        throttled_here = true;
        ++tally.throttled_samples;
        if (active & hardware) ++tally.hardware_samples;
        if (tally.run_start_ns < 0) {
          tally.run_start_ns = t;
          tally.run_mask = 0;
        }
        tally.run_last_ns = t;
        tally.run_mask |= active;
        if (tally.run_last_ns - tally.run_start_ns >= tally.longest_end_ns - tally.longest_start_ns) {
          tally.longest_start_ns = tally.run_start_ns;
          tally.longest_end_ns = tally.run_last_ns;
          tally.longest_mask = tally.run_mask;
        }
      }
      if (node.changes.empty() || node.changes.back().second != node_mask) node.changes.emplace_back(t, node_mask);
      node.last_sample_ns = std::max(node.last_sample_ns, t);
    }
    return throttled_here;
  }

  // Classifies the pending steps the samples have passed (all of them when `all`).
  void ResolveSteps(const analysis::Model& model, uint32_t node_index, NodeState& node, bool all) {
    if (node.changes.empty()) {
      // No throttle sample on the node (the NVML source records them from the job's start, before
      // any step): its steps cannot be told apart, and are not kept.
      node.pending.clear();
      return;
    }
    auto kept = node.pending.begin();
    for (StepFacts& step : node.pending) {
      if (!all && step.end_ns > node.last_sample_ns) {
        *kept++ = std::move(step);
        continue;
      }
      const ReasonMask reasons = MaskDuring(node, step.start_ns, step.end_ns);
      if (reasons == 0) {
        ++node.other_steps;
        node.other_step_ns += step.duration_ns();
        continue;
      }
      ++node.throttled_steps;
      node.throttled_step_ns += step.duration_ns();
      node.step_reasons |= reasons;
      auto slower = [&step](const ThrottledStep& other) { return other.step.duration_ns() < step.duration_ns(); };
      auto at = std::find_if(node.slowest.begin(), node.slowest.end(), slower);
      if (at == node.slowest.end() && node.slowest.size() >= kSlowestSteps) continue;
      ThrottledStep entry{step, reasons, TopActivity(model, node_index, step.pid, step.start_ns, step.end_ns, 5)};
      node.slowest.insert(at, std::move(entry));
      if (node.slowest.size() > kSlowestSteps) node.slowest.pop_back();
    }
    node.pending.erase(kept, node.pending.end());
  }

  // The OR of the node's slowdown masks over [start, end): the mask in force at start (the last
  // change at or before it) and every change inside.
  static ReasonMask MaskDuring(const NodeState& node, int64_t start_ns, int64_t end_ns) {
    auto it = std::upper_bound(node.changes.begin(), node.changes.end(), start_ns,
                               [](int64_t t, const auto& change) { return t < change.first; });
    ReasonMask mask = it == node.changes.begin() ? 0 : std::prev(it)->second;
    for (; it != node.changes.end() && it->first < end_ns; ++it) mask |= it->second;
    return mask;
  }

  Finding MakeFinding(const std::string& node_name, const std::string& gpu_name, const GpuTally& tally, double share,
                      const NodeState* node) const {
    const auto reasons = analysis::GpuThrottleReasons();
    const ReasonMask slowdown = SlowdownMask();
    Finding finding;
    finding.id = "GPUThrottling/" + node_name + "/" + gpu_name;
    finding.rule = "GPUThrottling";
    const bool hardware = tally.samples > 0 &&
                          static_cast<double>(tally.hardware_samples) / tally.samples >
                              parameters_.Number("threshold_pct") / 100.0;
    finding.severity = hardware ? Severity::kCritical : Severity::kWarning;
    // The reasons by share, largest first.
    std::vector<std::pair<int64_t, size_t>> ranked;
    for (size_t r = 0; r < reasons.size() && r < kMaxReasons; ++r) {
      if ((slowdown & (1u << r)) && tally.reason_samples[r] > 0) ranked.emplace_back(-tally.reason_samples[r], r);
    }
    std::sort(ranked.begin(), ranked.end());
    std::string by_reason;
    for (const auto& [negative, r] : ranked) {
      if (!by_reason.empty()) by_reason += ", ";
      by_reason += std::string(reasons[r].label) + " " +
                   FormatPercent(static_cast<double>(-negative) / static_cast<double>(tally.samples));
    }
    finding.title = gpu_name + " on " + node_name + " was throttled " + FormatPercent(share) +
                    " of training time (" + by_reason + ")";
    finding.recommendation =
        hardware ? "A hardware slowdown (HW slowdown, HW thermal slowdown or power brake) protects the board: check "
                   "its cooling and power supply, and have the machine's operator look at it; move the job to "
                   "other GPUs meanwhile."
                 : "Keep the GPU at full clocks: check cooling and airflow (temperatures near the slowdown "
                   "threshold), the power limit (nvidia-smi -q -d POWER; a limit below the default caps clocks under "
                   "load) and application clocks (nvidia-smi -rac resets them).";
    finding.next_step = "Run `nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE` on " + node_name +
                        " while the job trains: it lists the active throttle reasons, the power limit and the "
                        "temperatures.";
    Evidence stretch;
    stretch.node = node_name;
    stretch.start_ns = tally.longest_start_ns;
    stretch.end_ns = tally.longest_end_ns;
    stretch.what = "the longest throttled stretch of " + gpu_name + ": " + ReasonLabels(tally.longest_mask) + " for " +
                   FormatDurationNs(tally.longest_end_ns - tally.longest_start_ns) + " (" +
                   std::to_string(tally.throttled_samples) + " of " + std::to_string(tally.samples) +
                   " samples throttled)";
    finding.evidence.push_back(std::move(stretch));
    if (node != nullptr && node->throttled_steps > 0) {
      const int64_t throttled_mean = node->throttled_step_ns / node->throttled_steps;
      std::string what = std::to_string(node->throttled_steps) + " TRAIN steps ran while a GPU of " + node_name +
                         " was throttled (" + ReasonLabels(node->step_reasons) + "): " +
                         FormatDurationNs(throttled_mean) + " on average";
      if (node->other_steps > 0) {
        const int64_t other_mean = node->other_step_ns / node->other_steps;
        what += " against " + FormatDurationNs(other_mean) + " in the " + std::to_string(node->other_steps) +
                " others";
        if (throttled_mean > other_mean) {
          const double total = static_cast<double>(node->throttled_step_ns + node->other_step_ns);
          finding.estimated_saving =
              static_cast<double>(throttled_mean - other_mean) * static_cast<double>(node->throttled_steps) / total;
          finding.saving_basis = "throttled TRAIN steps took " + FormatDurationNs(throttled_mean - other_mean) +
                                 " longer than the others on average; at full clocks they would not";
        }
      }
      Evidence steps;
      steps.node = node_name;
      steps.step_phase = "TRAIN";
      steps.what = what;
      finding.evidence.push_back(std::move(steps));
      for (const ThrottledStep& slow : node->slowest) {
        Evidence evidence;
        evidence.node = node_name;
        evidence.rank = slow.step.rank;
        evidence.pid = slow.step.pid;
        evidence.start_ns = slow.step.start_ns;
        evidence.end_ns = slow.step.end_ns;
        evidence.step_phase = "TRAIN";
        evidence.steps = {slow.step.number};
        evidence.what = "step " + std::to_string(slow.step.number) + " took " +
                        FormatDurationNs(slow.step.duration_ns()) + " while " + ReasonLabels(slow.reasons) +
                        " held the clocks down";
        evidence.top_activity = slow.activity;
        finding.evidence.push_back(std::move(evidence));
      }
    }
    return finding;
  }

  std::map<std::pair<uint32_t, int>, GpuTally> gpus_;
  std::map<uint32_t, NodeState> nodes_;
  SamplesReadOnce reads_;  // each window reads [start, end), Finish the last edge
  NodeNames node_names_;
};

}  // namespace

std::unique_ptr<Rule> MakeGpuThrottlingRule() { return std::make_unique<GpuThrottlingRule>(); }

}  // namespace stepscope::rules
