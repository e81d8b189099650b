// The ProfilerReport driver (shared/RULES.md §13): owns one instance of each selected rule, cuts
// the run into consecutive scan windows (RULES.md §0), builds each window once and hands it to
// every rule in registry order, and writes the rules' outputs.
//
// Offline (`stepscope rules RUN`): Finish(model) evaluates every window whose start is <=
// model.last_ns(), then calls Rule::Finish. Online (during `stepscope run`): EvaluateAvailable
// is called with a fresh reload of the run each time and evaluates only the windows that end at
// or before model.complete_until_ns() and were not evaluated before; the driver keeps a window
// counter (never indices into an earlier model), so a sequence of EvaluateAvailable calls
// followed by Finish gives exactly what one offline Finish gives on the final data.
//
// The windows' grid (shared/RULES.md §0) is fixed at the first evaluation: on imported SageMaker
// data the reference's (Model::file_grid: origin at the first file timestamp, offline evaluation
// stopping before the window that reaches the latest file); otherwise model.first_ns() floored to
// the scan interval, with every window up to the last timestamp evaluated. It is stable online
// because a window is only evaluated once data up to its end is complete, so no earlier data can
// arrive.
//
// Callers: the rules command, the online evaluator of the run command, the golden tests.
// Threading: not thread-safe; one thread drives one ProfilerReport.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"
#include "rules/builtin_rules.h"
#include "rules/rule.h"

namespace stepscope::rules {

inline constexpr int64_t kDefaultScanIntervalUs = 60'000'000;  // 60 s, as SageMaker
// The driver's own name for parameters ("ProfilerReport.scan_interval_us=30000000").
inline constexpr std::string_view kDriverName = "ProfilerReport";

class ProfilerReport {
 public:
  // The rules of `factories` (all when `only` is empty, else those named, in `factories`
  // order). An unknown name in `only` is an error listing the known ones.
  static StatusOr<std::unique_ptr<ProfilerReport>> Create(std::span<const RuleFactory> factories,
                                                          const std::vector<std::string>& only = {});
  // The given rules in the given order (tests use fake rules). `factories` is what parameter
  // overrides are validated against when they name a rule that is not among `rules`.
  explicit ProfilerReport(std::vector<std::unique_ptr<Rule>> rules,
                          std::span<const RuleFactory> factories = {});

  // One override: "CPUBottleneck.threshold=40", the reference's "CPUBottleneck_threshold=40",
  // or the driver's "scan_interval_us=30000000" (also "ProfilerReport.scan_interval_us=...").
  // Errors are one line naming the rule and parameter; an unknown rule lists the known ones.
  // Overrides of known rules that are not selected are validated and otherwise ignored.
  Status SetParameter(std::string_view assignment);
  Status SetParameter(std::string_view rule, std::string_view parameter, std::string_view value);
  // A parameter section: {"CPUBottleneck": {"threshold": 40}, "scan_interval_us": 30000000,
  // "ProfilerReport": {"scan_interval_us": ...}} (a config file's `rules` table, parameters.json).
  // `origin` names where it came from in messages ("parameters.json").
  Status ApplyParameterObject(const nlohmann::json& section, std::string_view origin);

  // Evaluates the windows that end at or before model.complete_until_ns() and were not
  // evaluated yet. Returns how many it evaluated.
  size_t EvaluateAvailable(const analysis::Model& model);
  // Evaluates the remaining windows of the grid and lets every rule conclude.
  // Later calls do nothing.
  void Finish(const analysis::Model& model);

  // "IssuesFound" once any rule's Evaluate returned true, or once a rule that concludes over the
  // run (stepscope's own rules, whose Evaluate only collects) reports a trigger; else
  // "NoIssuesFound". A finding shown with "NoIssuesFound" would contradict itself.
  std::string_view status() const;
  size_t windows_evaluated() const { return windows_evaluated_; }
  int64_t scan_interval_us() const { return scan_interval_us_; }
  bool finished() const { return finished_; }
  const std::vector<std::unique_ptr<Rule>>& rules() const { return rules_; }
  std::vector<RuleReport> Reports() const;

  // {"format_version":1, "status", "finished", "windows_evaluated", "scan_interval_us",
  //  "window_grid" {origin_ns, kind, tail_evaluated, description} (null before any window),
  //  "complete_until_ns", "rules":[FullJson...]}.
  nlohmann::json RulesJson() const;
  // What WriteOutputs writes: (path relative to the output directory, document) for
  // <RuleName>.json (ReferenceJson) and ProfilerReport/<RuleName>.json (the driver's copy, as the
  // reference writes it) of every rule, and rules.json (RulesJson).
  std::vector<std::pair<std::string, nlohmann::json>> OutputFiles() const;
  // Every OutputFiles() document under `dir`, each written atomically; creates `dir`.
  Status WriteOutputs(const std::string& dir) const;

 private:
  const RuleFactory* FindFactory(std::string_view rule) const;
  Rule* FindRule(std::string_view rule) const;
  std::string KnownRuleNames() const;
  // Evaluates window number windows_evaluated_ of `model`.
  void EvaluateNextWindow(const analysis::Model& model);
  int64_t WindowStartNs(const analysis::Model& model) const;
  // RULES.md §0: the reference's grid on imported SageMaker data (Model::file_grid), else
  // stepscope's own (floored to the interval, tail evaluated).
  int64_t GridOriginNs(const analysis::Model& model) const;
  bool HasWindowLeft(const analysis::Model& model) const;
  nlohmann::json WindowGridJson() const;

  std::vector<std::unique_ptr<Rule>> rules_;
  std::span<const RuleFactory> factories_;
  int64_t scan_interval_us_ = kDefaultScanIntervalUs;
  size_t windows_evaluated_ = 0;
  bool origin_set_ = false;
  int64_t origin_ns_ = 0;
  bool file_grid_ = false;  // the origin came from Model::file_grid
  int64_t complete_until_ns_ = 0;
  bool any_met_ = false;
  bool finished_ = false;
};

// A document as the driver writes it: indented, newline-terminated, invalid UTF-8 replaced.
std::string DumpJson(const nlohmann::json& document);

// Where a run's rule outputs live (`stepscope rules RUN` without --out, the end of `stepscope
// run`, the report reading rules.json): <RUN>/rules for a directory, else a "rules" directory
// beside the file (an imported run's model.stepscope).
std::string DefaultRulesOutputDir(const std::string& run);

}  // namespace stepscope::rules
