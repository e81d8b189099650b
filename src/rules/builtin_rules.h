// The built-in rules' factories. rule_registry.cc lists them in the ProfilerReport order
// (shared/RULES.md §13), then stepscope's own rules (RULES.md §native).
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "rules/rule.h"

namespace stepscope::rules {

// SageMaker's rule set (one file each: cpu_bottleneck_rule.cc, ...).
std::unique_ptr<Rule> MakeCPUBottleneckRule();
std::unique_ptr<Rule> MakeIOBottleneckRule();
std::unique_ptr<Rule> MakeLowGPUUtilizationRule();
std::unique_ptr<Rule> MakeStepOutlierRule();
std::unique_ptr<Rule> MakeGPUMemoryIncreaseRule();
std::unique_ptr<Rule> MakeBatchSizeRule();
std::unique_ptr<Rule> MakeMaxInitializationTimeRule();
std::unique_ptr<Rule> MakeLoadBalancingRule();
std::unique_ptr<Rule> MakeOverallSystemUsageRule();
std::unique_ptr<Rule> MakeDataloaderRule();
std::unique_ptr<Rule> MakeOverallFrameworkMetricsRule();

// stepscope's own rules.
std::unique_ptr<Rule> MakeStepTimeBreakdownRule();
std::unique_ptr<Rule> MakeDataloaderStarvationRule();
std::unique_ptr<Rule> MakeGpuIdleRule();
std::unique_ptr<Rule> MakeLaunchBoundRule();
std::unique_ptr<Rule> MakePageableCopyRule();
std::unique_ptr<Rule> MakeLowPrecisionOpportunityRule();
std::unique_ptr<Rule> MakeSyncHeavyRule();
std::unique_ptr<Rule> MakeMemoryNearCapacityRule();
std::unique_ptr<Rule> MakeStragglerRule();
std::unique_ptr<Rule> MakeRightSizingRule();
std::unique_ptr<Rule> MakeGpuThrottlingRule();
std::unique_ptr<Rule> MakeGpuErrorsRule();

struct RuleFactory {
  std::string_view name;
  std::unique_ptr<Rule> (*make)();
  bool sagemaker;  // part of the reference's ProfilerReport set
};
// Every built-in rule, in evaluation order.
std::span<const RuleFactory> BuiltinRules();

}  // namespace stepscope::rules
