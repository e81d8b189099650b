// MaxInitializationTime (shared/RULES.md §9): the training loop has not started (no step seen)
// more than `threshold` minutes after the run's first timestamp. Window-local: met only for the
// windows in which that holds.
//
// Details as the reference: job_start / job_end = earliest / latest system sample (s), step_num
// {first: start of the first step (µs), last: start of the latest step (µs)}.
//
// Differences from the reference (docs/rules.md "MaxInitializationTime"):
// - **Fixed**: the clock is the window's start, whether the rule runs standalone or inside the
//   ProfilerReport driver (the reference driver never advances it, so it never fires there).
// - Framework events belong to the window containing their start (RULES.md §0).
#include <cstdio>
#include <optional>
#include <string>

#include "rules/builtin_rules.h"
#include "rules/framework_activity.h"

namespace stepscope::rules {
namespace {

using analysis::FrameworkEvent;
using analysis::Model;

constexpr std::string_view kRuleName = "MaxInitializationTime";
constexpr std::string_view kStepMarker = "Step:ModeKeys";
constexpr double kNsPerMinute = 60e9;

class MaxInitializationTimeRule final : public Rule {
 public:
  MaxInitializationTimeRule() {
    parameters_.Declare("threshold", RuleParameters::Kind::kPositive, "20");
    report_.rule = std::string(kRuleName);
    report_.description =
        "Checks that the training loop starts (the first step is seen) within threshold minutes of the start "
        "of the job.";
    report_.recommendation =
        "Initialization is slow: look at what the job does before its first step (downloading or "
        "decompressing data, building the model, compiling, waiting for other nodes) and cache, stream or "
        "parallelize it.";
    report_.details = {{"step_num", nlohmann::json::object()}};
  }

  std::string_view name() const override { return kRuleName; }

  bool Evaluate(const Window& window) override {
    const Model& model = *window.model;
    for (size_t s = 0; s < model.series().size() && s < window.samples.size(); ++s) {
      const auto [begin, end] = window.samples[s];
      if (begin == end) continue;
      // Samples are sorted: the window's first and last are its extremes.
      const auto& times = model.series()[s].time_ns;
      if (!any_sample_ || times[begin] < job_start_ns_) job_start_ns_ = times[begin];
      if (!any_sample_ || times[end - 1] > job_end_ns_) job_end_ns_ = times[end - 1];
      any_sample_ = true;
    }
    if (any_sample_) {
      report_.details["job_start"] = static_cast<double>(job_start_ns_) / 1e9;
      report_.details["job_end"] = static_cast<double>(job_end_ns_) / 1e9;
    }

    nlohmann::json& step_num = report_.details["step_num"];
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const FrameworkEvent& event = model.events()[i];
      if (model.String(event.phase).find(kStepMarker) == std::string_view::npos) continue;
      ++report_.datapoints;
      if (!step_num.contains("first")) {
        step_num["first"] = MicrosecondsJson(event.start_ns);
      } else {
        step_num["last"] = MicrosecondsJson(event.start_ns);
      }
    }

    const double threshold_ns = parameters_.Number("threshold") * kNsPerMinute;
    const bool met = static_cast<double>(window.start_ns - model.first_ns()) > threshold_ns && step_num.empty();
    if (met) {
      ++report_.violations;
      ++report_.triggered;
      report_.last_trigger_ns = window.start_ns;
      finding_ = MakeFinding(model, window);
    }
    return met;
  }

  RuleReport Report() const override {
    RuleReport report = report_;
    report.parameters = parameters_.ReportString();
    if (finding_.has_value()) report.findings.push_back(*finding_);
    return report;
  }

 private:
  Finding MakeFinding(const Model& model, const Window& window) const {
    const double waited_min = static_cast<double>(window.start_ns - model.first_ns()) / kNsPerMinute;
    char waited[32];
    std::snprintf(waited, sizeof(waited), "%.1f", waited_min);
    Finding finding;
    finding.id = std::string(kRuleName) + "/job/initialization";
    finding.rule = std::string(kRuleName);
    finding.severity = Severity::kWarning;
    finding.title = "No training step " + std::string(waited) + " minutes after the job started (threshold " +
                    parameters_.Text("threshold") + " minutes)";
    finding.recommendation = report_.recommendation;
    finding.next_step = "Profile the script's start-up (stepscope run --python-steps or py-spy) to see where it waits.";
    Evidence evidence;
    evidence.node = model.nodes().empty() ? "" : model.nodes()[0].name;
    evidence.start_ns = model.first_ns();
    evidence.end_ns = window.start_ns;
    evidence.what = "no step event between the job's first timestamp and this window";
    finding.evidence.push_back(std::move(evidence));
    return finding;
  }

  RuleReport report_;
  bool any_sample_ = false;
  int64_t job_start_ns_ = 0;
  int64_t job_end_ns_ = 0;
  std::optional<Finding> finding_;
};

}  // namespace

std::unique_ptr<Rule> MakeMaxInitializationTimeRule() { return std::make_unique<MaxInitializationTimeRule>(); }

}  // namespace stepscope::rules
