// CPUBottleneck (shared/RULES.md §1): the GPUs wait for the host. Counts system snapshots in
// which a GPU is below `gpu_threshold` while a core is above `cpu_threshold` on the same node;
// met, per window, once more than `patience` snapshots were seen and bottlenecks exceed
// `threshold` % of them. Window-local: Evaluate is true only for windows where that holds.
#include <memory>

#include "rules/builtin_rules.h"
#include "rules/system_snapshots.h"

namespace stepscope::rules {
namespace {

class CPUBottleneckRule : public Rule {
 public:
  CPUBottleneckRule()
      : core_({.rule = "CPUBottleneck",
               .high_parameter = "cpu_threshold",
               .high_label = "a CPU core",
               .description =
                   "Checks whether the GPUs sit idle because the CPU is saturated: counts the system snapshots "
                   "in which a GPU's utilization is below gpu_threshold while a CPU core's utilization is above "
                   "cpu_threshold, and reports when such bottlenecks exceed threshold % of the snapshots.",
               .recommendation =
                   "The input pipeline or host-side work keeps the GPUs waiting. Move preprocessing off the "
                   "training loop: more data-loader workers, pre-processed or cached datasets, GPU-side "
                   "augmentation, or an instance with more CPU cores per GPU.",
               .next_step = "Look at the framework activity at the bottleneck instants (Details) and at the "
                            "data-loader time per step."},
              "CPUUtilization") {
    parameters_.Declare("threshold", RuleParameters::Kind::kPercent, "50");
    parameters_.Declare("cpu_threshold", RuleParameters::Kind::kPercent, "90");
    parameters_.Declare("gpu_threshold", RuleParameters::Kind::kPercent, "10");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "1000");
  }

  std::string_view name() const override { return "CPUBottleneck"; }
  bool Evaluate(const Window& window) override { return core_.Evaluate(window, parameters_); }
  RuleReport Report() const override { return core_.Report(parameters_); }

 private:
  BottleneckRuleCore core_;
};

}  // namespace

std::unique_ptr<Rule> MakeCPUBottleneckRule() { return std::make_unique<CPUBottleneckRule>(); }

}  // namespace stepscope::rules
