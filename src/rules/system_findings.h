// Findings of the system-metric rules: one per subject (a GPU, a node, a GPU pair), with the
// violating windows as evidence. Consecutive violating windows merge into one time range, so a
// GPU that stays under-utilized for an hour is one evidence entry, not sixty; at most
// kMaxEvidence ranges are kept per finding (the latest), bounding the output.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/rule.h"

namespace stepscope::rules {

class FindingLog {
 public:
  static constexpr size_t kMaxEvidence = 20;

  // Creates the finding `id` on first use (title etc. are refreshed on every call, so the
  // finding describes the latest violation); adds [start_ns, end_ns] as evidence.
  void Record(const Finding& finding, const std::string& node, int64_t start_ns, int64_t end_ns,
              const std::string& what);
  // In first-recorded order.
  std::vector<Finding> findings() const;

 private:
  std::map<std::string, size_t> index_;
  std::vector<Finding> findings_;
};

// What a per-window system rule (LowGPUUtilization, BatchSize, GPUMemoryIncrease,
// LoadBalancing) counts and reports, kept once: RULES.md §13's RuleTriggered, Violations,
// Datapoints and last trigger, with the rule's Details and findings.
struct SystemRuleTally {
  int64_t triggered = 0;
  int64_t violations = 0;
  int64_t datapoints = 0;
  int64_t last_trigger_ns = -1;
  nlohmann::json details = nlohmann::json::object();
  FindingLog findings;

  // A violating window: each counts as one trigger of the rule (RULES.md §13).
  void Trigger(int64_t window_start_ns) {
    ++triggered;
    ++violations;
    last_trigger_ns = window_start_ns;
  }
  // Copies the tally into `report`; the description, recommendation and parameters are the
  // rule's own.
  void FillReport(RuleReport& report) const {
    report.triggered = triggered;
    report.violations = violations;
    report.datapoints = datapoints;
    report.last_trigger_ns = last_trigger_ns;
    report.details = details;
    report.findings = findings.findings();
  }
};

// "%.*f" of a value for evidence texts ("23.5").
std::string FormatNumber(double value, int decimals = 1);

}  // namespace stepscope::rules
