// What every rule is: a stateful evaluator fed the analysis model window by window
// (shared/RULES.md §0 "Windows"), that reports a RuleReport at any time.
//
// Rules are pure over the model: no I/O, no clocks, no platform calls. The driver
// (profiler_report.h) owns the window loop, the order (RULES.md §13) and the outputs; the same
// rule objects serve offline (`stepscope rules RUN`) and online (during `stepscope run`), so both
// give identical results for the windows they have seen.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/model.h"
#include "base/status.h"

namespace stepscope::rules {

// One evaluation window: [start_ns, end_ns) for framework events (an event belongs to the window
// containing its start), [start_ns, end_ns] for system samples (RULES.md §0, both edges).
struct Window {
  const analysis::Model* model = nullptr;
  size_t index = 0;           // 0, 1, ... from the run's first timestamp
  int64_t start_ns = 0;
  int64_t end_ns = 0;         // start_ns + scan interval
  // Per series of model->series(): [begin, end) into its samples with start_ns <= t <= end_ns.
  std::vector<std::pair<size_t, size_t>> samples;
  // [begin, end) into model->events(): events starting in [start_ns, end_ns).
  std::pair<size_t, size_t> events;
};

// A rule's parameters: ordered (the order of RuleParameters lines), typed, validated once.
class RuleParameters {
 public:
  enum class Kind : uint8_t {
    kPercent,   // a number in [0, 100]
    kCount,     // an integer > 0
    kPositive,  // a number > 0
    kNumber,    // any finite number
    kText,      // a string (e.g. StepOutlier.mode: "None" or a phase name)
  };
  struct Parameter {
    std::string name;
    Kind kind = Kind::kNumber;
    std::string text;   // as given / as printed ("50", "0.2", "None")
    double number = 0;  // parsed, for numeric kinds
  };

  // Declares a parameter with its default (the rule's constructor does this).
  void Declare(std::string name, Kind kind, std::string default_text);
  // Sets a declared parameter from text; errors name the rule, the parameter and what is valid:
  // "CPUBottleneck.threshold: 140 is not a percentage in [0, 100]".
  Status Set(std::string_view rule, std::string_view name, std::string_view text);
  double Number(std::string_view name) const;
  const std::string& Text(std::string_view name) const;
  const std::vector<Parameter>& all() const { return parameters_; }
  // "threshold:50\ncpu_threshold:90\n..." in declaration order (the reports' RuleParameters),
  // or as SetReportLines says.
  std::string ReportString() const;
  // RuleParameters as the reference writes it where that is not one line per parameter in
  // declaration order: (label, parameter) per line. StepOutlier's reference writes stddev twice
  // ("threshold:3\nmode:None\nn_outliers:10\nstddev:3"); Dataloader's leaves patience out.
  void SetReportLines(std::vector<std::pair<std::string, std::string>> lines) { report_lines_ = std::move(lines); }

 private:
  const Parameter* Find(std::string_view name) const;
  std::vector<Parameter> parameters_;
  std::vector<std::pair<std::string, std::string>> report_lines_;  // empty: every parameter
};

// Evidence: where a finding holds and what ran there.
struct ActivityShare {
  std::string kind;     // "operator", "annotation", "python", "phase", "kernel"
  std::string name;
  int64_t total_ns = 0;
  double share = 0;     // of the evidence range's time, 0..1
};
struct Evidence {
  std::string node;
  int32_t rank = -1;             // the rank concerned (ProcessFacts::rank); -1 when not about one
  int64_t pid = -1;              // its process; -1 when not about one
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string step_phase;        // "TRAIN", ... ("" when not about steps)
  std::vector<int64_t> steps;    // step numbers concerned (may be empty)
  std::string what;              // one sentence: what was seen there
  std::vector<ActivityShare> top_activity;  // largest first, at most 10
};

enum class Severity : uint8_t { kInfo, kWarning, kCritical };
const char* SeverityName(Severity severity);  // "info", "warning", "critical"

// A finding: the user-facing result of a rule that met its condition. Stable id: the same data
// gives the same id ("<Rule>/<node>/<subject>").
struct Finding {
  std::string id;
  std::string rule;
  Severity severity = Severity::kWarning;
  std::string title;            // one line
  std::string recommendation;   // what to change
  std::string next_step;        // the first concrete thing to do or look at
  // Estimated saving as a fraction of step time or cost (0..1); < 0 when it cannot be estimated.
  double estimated_saving = -1;
  std::string saving_basis;     // how the estimate was made ("data wait 23 % of step time")
  std::vector<Evidence> evidence;
};

struct RuleReport {
  std::string rule;              // "CPUBottleneck"
  std::string description;       // what the rule checks (report's rules table)
  std::string recommendation;    // the rule's generic advice
  int64_t triggered = 0;         // RuleTriggered
  int64_t violations = 0;        // Violations
  int64_t datapoints = 0;        // Datapoints
  int64_t last_trigger_ns = -1;  // start of the last window in which it triggered; -1 never
  bool reporting = false;        // OverallSystemUsage, OverallFrameworkMetrics, StepTimeBreakdown
  nlohmann::json details = nlohmann::json::object();  // Details, as the reference writes it
  // What stepscope adds beside the reference's Details (rules.json's "StepscopeDetails"), kept
  // out of <RuleName>.json so that file stays the reference's to the key.
  nlohmann::json stepscope_details = nlohmann::json::object();
  std::string parameters;        // RuleParameters
  std::vector<Finding> findings; // empty when nothing was found
};

class Rule {
 public:
  virtual ~Rule() = default;
  virtual std::string_view name() const = 0;
  RuleParameters& parameters() { return parameters_; }
  const RuleParameters& parameters() const { return parameters_; }

  // Called once per window in time order. Returns whether the rule's condition is met for this
  // window (RULES.md §0 "Triggered semantics": window-local or sticky, per rule).
  virtual bool Evaluate(const Window& window) = 0;
  // Called after the last window of an offline evaluation (and at the end of a live run):
  // rules that only conclude over the whole run (native rules) do it here. Default: nothing.
  virtual void Finish(const analysis::Model& model) {}
  // The report so far; cheap enough to call after every window.
  virtual RuleReport Report() const = 0;

 protected:
  RuleParameters parameters_;
};

// An event arg as the JSON value the trace gave it (a bool stays a bool, a string a string), as
// the reference copies args into its Details.
nlohmann::json ArgJson(const analysis::Model& model, const analysis::EventArg& arg);

// The reference's per-rule JSON object: {"RuleTriggered", "Violations", "Details",
// "Datapoints", "RuleParameters"}.
nlohmann::json ReferenceJson(const RuleReport& report);
// Everything, for stepscope's own outputs: the reference fields plus description,
// recommendation, last_trigger_ns, reporting and findings with evidence.
nlohmann::json FullJson(const RuleReport& report);

}  // namespace stepscope::rules
