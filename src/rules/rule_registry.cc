// The explicit list of built-in rules (STYLE.md §8.4: no self-registration the linker could
// drop): SageMaker's ProfilerReport set in the order of shared/RULES.md §13, then stepscope's
// own rules (RULES.md §native).
//
// A rule is listed once its source file exists (all of RULES.md §13 and §native are, as of
// this writing). The factory's name must equal the rule's name(): the driver's overrides and
// --only match on it (profiler_report_unittest checks a few, the golden tests all).
#include <vector>

#include "rules/builtin_rules.h"

namespace stepscope::rules {

std::span<const RuleFactory> BuiltinRules() {
  // Immutable after first use; a function-local static so the order of static initialisation
  // across files cannot matter.
  static const std::vector<RuleFactory> kRules = {
      // SageMaker's ProfilerReport set, in the reference driver's order.
      {"CPUBottleneck", &MakeCPUBottleneckRule, true},
      {"IOBottleneck", &MakeIOBottleneckRule, true},
      {"LowGPUUtilization", &MakeLowGPUUtilizationRule, true},
      {"StepOutlier", &MakeStepOutlierRule, true},
      {"GPUMemoryIncrease", &MakeGPUMemoryIncreaseRule, true},
      {"BatchSize", &MakeBatchSizeRule, true},
      {"MaxInitializationTime", &MakeMaxInitializationTimeRule, true},
      {"LoadBalancing", &MakeLoadBalancingRule, true},
      {"OverallSystemUsage", &MakeOverallSystemUsageRule, true},
      {"Dataloader", &MakeDataloaderRule, true},
      {"OverallFrameworkMetrics", &MakeOverallFrameworkMetricsRule, true},
      // stepscope's own rules.
      {"StepTimeBreakdown", &MakeStepTimeBreakdownRule, false},
      {"DataloaderStarvation", &MakeDataloaderStarvationRule, false},
      {"GpuIdle", &MakeGpuIdleRule, false},
      {"LaunchBound", &MakeLaunchBoundRule, false},
      {"PageableCopy", &MakePageableCopyRule, false},
      {"LowPrecisionOpportunity", &MakeLowPrecisionOpportunityRule, false},
      {"SyncHeavy", &MakeSyncHeavyRule, false},
      {"MemoryNearCapacity", &MakeMemoryNearCapacityRule, false},
      {"Straggler", &MakeStragglerRule, false},
      {"RightSizing", &MakeRightSizingRule, false},
      {"GPUThrottling", &MakeGpuThrottlingRule, false},
      {"GPUErrors", &MakeGpuErrorsRule, false},
  };
  return kRules;
}

}  // namespace stepscope::rules
