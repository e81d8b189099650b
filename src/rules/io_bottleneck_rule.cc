// IOBottleneck (shared/RULES.md §2): the GPUs wait for storage. Counts system snapshots in
// which a GPU is below `gpu_threshold` while a core's I/O wait is above `io_threshold` on the
// same node; met, per window, once more than `patience` snapshots were seen and bottlenecks exceed
// `threshold` % of them. Window-local: Evaluate is true only for windows where that holds.
#include <memory>

#include "rules/builtin_rules.h"
#include "rules/system_snapshots.h"

namespace stepscope::rules {
namespace {

class IOBottleneckRule : public Rule {
 public:
  IOBottleneckRule()
      : core_({.rule = "IOBottleneck",
               .high_parameter = "io_threshold",
               .high_label = "the I/O wait of a core",
               .description =
                   "Checks whether the GPUs sit idle because the host waits for storage: counts the system "
                   "snapshots in which a GPU's utilization is below gpu_threshold while a CPU core's I/O wait is "
                   "above io_threshold, and reports when such bottlenecks exceed threshold % of the snapshots.",
               .recommendation =
                   "Reading the training data keeps the GPUs waiting. Use faster storage or a local copy of the "
                   "dataset, larger sequential files (record/shard formats instead of many small files), "
                   "prefetching, and enough data-loader workers to overlap reading with compute.",
               .next_step = "Look at the framework activity at the bottleneck instants (Details) and at the "
                            "dataset's storage and file layout."},
              "I/OWaitPercentage") {
    parameters_.Declare("threshold", RuleParameters::Kind::kPercent, "50");
    parameters_.Declare("io_threshold", RuleParameters::Kind::kPercent, "50");
    parameters_.Declare("gpu_threshold", RuleParameters::Kind::kPercent, "10");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "1000");
  }

  std::string_view name() const override { return "IOBottleneck"; }
  bool Evaluate(const Window& window) override { return core_.Evaluate(window, parameters_); }
  RuleReport Report() const override { return core_.Report(parameters_); }

 private:
  BottleneckRuleCore core_;
};

}  // namespace

std::unique_ptr<Rule> MakeIOBottleneckRule() { return std::make_unique<IOBottleneckRule>(); }

}  // namespace stepscope::rules
