// OverallFrameworkMetrics (shared/RULES.md §11): where the framework's time went over the whole
// run, as the reference's report shows it. Reporting only: never met, no findings.
//
// Every span of every window (all nodes pooled, as the reference) goes through the §11
// bucketing (framework_activity.h) with the step "others" gap; Details are rewritten after each
// window. Differences from the reference (docs/rules.md "OverallFrameworkMetrics"):
// - **Fixed**: "others" = (last step end - first step start) - total step time (the reference's
//   running value includes its own previous value); clamped at 0 when steps overlap.
// - **Fixed**: `ratio` pairs each phase with its own total.
// - Framework events belong to the window containing their start (RULES.md §0).
#include <string>

#include "rules/builtin_rules.h"
#include "rules/framework_activity.h"

namespace stepscope::rules {
namespace {

constexpr std::string_view kRuleName = "OverallFrameworkMetrics";

class OverallFrameworkMetricsRule final : public Rule {
 public:
  OverallFrameworkMetricsRule() : activity_(/*with_step_gap=*/true) {
    report_.rule = std::string(kRuleName);
    report_.reporting = true;
    report_.description =
        "Summarizes where the framework's time went: CPU and GPU operators, training and evaluation phases "
        "and the time between steps, forward and backward passes, data loading and Horovod operations.";
    report_.recommendation =
        "Check the largest phases and operators: time outside steps (\"others\") points at initialization, "
        "evaluation or checkpointing; a backward pass much longer than the forward pass, or one operator "
        "dominating, are the first places to optimize.";
  }

  std::string_view name() const override { return kRuleName; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    for (size_t i = window.events.first; i < window.events.second; ++i) activity_.Add(model, model.events()[i]);
    activity_.WriteDetails(&report_.details);
    return false;
  }

  RuleReport Report() const override {
    RuleReport report = report_;
    report.parameters = parameters_.ReportString();
    return report;
  }

 private:
  RuleReport report_;
  FrameworkActivity activity_;
};

}  // namespace

std::unique_ptr<Rule> MakeOverallFrameworkMetricsRule() { return std::make_unique<OverallFrameworkMetricsRule>(); }

}  // namespace stepscope::rules
