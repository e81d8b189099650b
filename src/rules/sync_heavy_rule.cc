// SyncHeavy (RULES.md §native): the host waits for the device inside steps more than
// `threshold_pct` % of step time, through explicit synchronizations (cudaDeviceSynchronize,
// cudaStreamSynchronize, cudaEventSynchronize) or blocking copies (cudaMemcpy: `.item()`,
// `.cpu()`, printing a tensor). Each one drains the GPU's queue, so the GPU idles while the host
// catches up. Needs runtime events (a Kineto trace or CUPTI data); CPU-only runs have none.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rules/builtin_rules.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

struct Totals {
  int64_t steps = 0;
  int64_t step_ns = 0;
  int64_t sync_ns = 0;
  int64_t syncs = 0;
  int64_t last_end_ns = 0;
  WorstSteps worst{&StepFacts::sync_ns};  // most sync time first, for evidence
};

class SyncHeavyRule final : public Rule {
 public:
  SyncHeavyRule() {
    parameters_.Declare("threshold_pct", RuleParameters::Kind::kPercent, "5");
    parameters_.Declare("min_syncs_per_step", RuleParameters::Kind::kPositive, "1");
  }
  std::string_view name() const override { return "SyncHeavy"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    for (StepFacts& step : CollectStepFacts(window)) {
      Totals& totals = totals_[{step.node, step.phase}];
      ++totals.steps;
      totals.step_ns += step.duration_ns();
      totals.sync_ns += step.sync_ns;
      totals.syncs += step.sync_count;
      totals.last_end_ns = std::max(totals.last_end_ns, step.end_ns);
      if (step.sync_count > 0) totals.worst.Offer(model, std::move(step));
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "SyncHeavy";
    report.description = "Checks how often and how long steps wait for the GPU through synchronizations.";
    report.recommendation = "Keep values on the GPU inside the step: log losses every N steps instead of "
                            "calling .item() each step, avoid .cpu()/print of tensors, use non_blocking copies.";
    report.parameters = parameters_.ReportString();
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    const double min_syncs = parameters_.Number("min_syncs_per_step");
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, totals] : totals_) {
      const auto& [node, phase] = key;
      const std::string node_name = node_names_(node);
      report.datapoints += totals.steps;
      const double share = totals.step_ns > 0 ? static_cast<double>(totals.sync_ns) / totals.step_ns : 0.0;
      const double per_step = totals.steps ? static_cast<double>(totals.syncs) / totals.steps : 0.0;
      details[node_name][phase] = {{"steps", totals.steps}, {"syncs_per_step", per_step}, {"sync_share", share}};
      if (share <= threshold || per_step < min_syncs) continue;
      ++report.triggered;
      ++report.violations;
      report.last_trigger_ns = std::max(report.last_trigger_ns, totals.last_end_ns);
      Finding finding;
      finding.id = "SyncHeavy/" + node_name + "/" + phase;
      finding.rule = report.rule;
      finding.severity = share > 0.2 ? Severity::kCritical : Severity::kWarning;
      char text[200];
      std::snprintf(text, sizeof(text), "%s steps on %s synchronize with the GPU %.1f times per step, waiting %s",
                    phase.c_str(), node_name.c_str(), per_step, FormatPercent(share).c_str());
      finding.title = std::string(text) + " of step time";
      finding.estimated_saving = share;
      finding.saving_basis = "time the host spent blocked in synchronizations, if the work overlapped instead";
      finding.recommendation = report.recommendation;
      finding.next_step = "Look at the Python functions around the synchronizations in a python detail window "
                          "(stepscope pyprof RUN) to find the .item()/.cpu() calls.";
      for (const auto& [step, activity] : totals.worst.entries()) {
        Evidence evidence;
        evidence.node = node_name;
        evidence.start_ns = step.start_ns;
        evidence.end_ns = step.end_ns;
        evidence.step_phase = phase;
        evidence.steps = {step.number};
        evidence.what = "step " + std::to_string(step.number) + ": " + std::to_string(step.sync_count) +
                        " synchronizations, " + FormatDurationNs(step.sync_ns) + " blocked";
        evidence.top_activity = activity;
        finding.evidence.push_back(std::move(evidence));
      }
      report.findings.push_back(std::move(finding));
    }
    report.details = std::move(details);
    return report;
  }

 private:
  std::map<std::pair<uint32_t, std::string>, Totals> totals_;
  NodeNames node_names_;
};

}  // namespace

std::unique_ptr<Rule> MakeSyncHeavyRule() { return std::make_unique<SyncHeavyRule>(); }

}  // namespace stepscope::rules
