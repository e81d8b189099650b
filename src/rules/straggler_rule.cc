// Straggler (RULES.md §native): in a multi-node (or multi-rank) job, one node whose steps are
// consistently slower than the others'. Synchronous data-parallel training runs at the pace of
// its slowest member, so every other node waits for it.
//
// Per window and step phase, each node's median step duration is compared with the median of
// the other nodes' medians; a node is slow in that window when it exceeds it by more than
// `threshold_pct` %. It is a straggler when it was slow in at least `patience` windows and in
// at least half of the windows in which it could be compared.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

struct SlowWindow {
  int64_t start_ns = 0, end_ns = 0;
  double median_s = 0, others_s = 0;
  std::vector<int64_t> steps;
};

struct NodeRecord {
  int64_t compared = 0;
  std::vector<SlowWindow> slow;
};

class StragglerRule final : public Rule {
 public:
  StragglerRule() {
    parameters_.Declare("threshold_pct", RuleParameters::Kind::kPositive, "10");
    parameters_.Declare("patience", RuleParameters::Kind::kCount, "3");
  }
  std::string_view name() const override { return "Straggler"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    std::map<std::string, std::map<uint32_t, std::vector<StepFacts>>> by_phase;
    for (StepFacts& step : CollectStepFacts(window)) by_phase[step.phase][step.node].push_back(std::move(step));
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    for (const auto& [phase, by_node] : by_phase) {
      if (by_node.size() < 2) continue;
      std::map<uint32_t, double> medians;
      for (const auto& [node, steps] : by_node) {
        std::vector<double> durations;
        for (const StepFacts& step : steps) durations.push_back(step.duration_ns() / 1e9);
        medians[node] = analysis::Median(durations);
      }
      for (const auto& [node, median] : medians) {
        std::vector<double> others;
        for (const auto& [other, other_median] : medians) {
          if (other != node) others.push_back(other_median);
        }
        const double reference = analysis::Median(others);
        NodeRecord& record = records_[{node, phase}];
        ++record.compared;
        ++datapoints_;
        if (reference > 0 && median > reference * (1 + threshold)) {
          SlowWindow slow{window.start_ns, window.end_ns, median, reference, {}};
          for (const StepFacts& step : by_node.at(node)) slow.steps.push_back(step.number);
          record.slow.push_back(std::move(slow));
        }
      }
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "Straggler";
    report.description = "Checks whether one node's steps are consistently slower than the other nodes'.";
    report.recommendation = "Find what differs on the slow node: its data shard, its GPU (clocks, temperature), "
                            "other processes on it, its network.";
    report.parameters = parameters_.ReportString();
    report.datapoints = datapoints_;
    const auto patience = static_cast<int64_t>(parameters_.Number("patience"));
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, record] : records_) {
      const auto& [node, phase] = key;
      const std::string node_name = node_names_(node);
      const auto slow = static_cast<int64_t>(record.slow.size());
      details[node_name][phase] = {{"windows_compared", record.compared}, {"windows_slow", slow}};
      if (slow < patience || 2 * slow < record.compared) continue;
      ++report.triggered;
      ++report.violations;
      report.last_trigger_ns = std::max(report.last_trigger_ns, record.slow.back().start_ns);
      double excess = 0;
      for (const SlowWindow& window : record.slow) excess += window.median_s / window.others_s - 1;
      excess /= static_cast<double>(slow);
      Finding finding;
      finding.id = "Straggler/" + node_name + "/" + phase;
      finding.rule = report.rule;
      finding.severity = excess > 0.3 ? Severity::kCritical : Severity::kWarning;
      char text[200];
      std::snprintf(text, sizeof(text), "%s is a straggler: its %s steps were %.0f %% slower than the other nodes' "
                    "in %lld of %lld windows", node_name.c_str(), phase.c_str(), excess * 100.0,
                    static_cast<long long>(slow), static_cast<long long>(record.compared));
      finding.title = text;
      finding.estimated_saving = excess / (1 + excess);
      finding.saving_basis = "the slow node's excess step time, which every node waits for in synchronous training";
      finding.recommendation = report.recommendation;
      finding.next_step = "Compare " + node_name + "'s system metrics with another node's in the report.";
      for (const SlowWindow& window : record.slow) {
        if (finding.evidence.size() == 10) break;
        Evidence evidence;
        evidence.node = node_name;
        evidence.start_ns = window.start_ns;
        evidence.end_ns = window.end_ns;
        evidence.step_phase = phase;
        evidence.steps = window.steps;
        std::snprintf(text, sizeof(text), "median step %.3f s vs %.3f s on the other nodes", window.median_s,
                      window.others_s);
        evidence.what = text;
        finding.evidence.push_back(std::move(evidence));
      }
      report.findings.push_back(std::move(finding));
    }
    report.details = std::move(details);
    return report;
  }

 private:
  std::map<std::pair<uint32_t, std::string>, NodeRecord> records_;
  NodeNames node_names_;
  int64_t datapoints_ = 0;
};

}  // namespace

std::unique_ptr<Rule> MakeStragglerRule() { return std::make_unique<StragglerRule>(); }

}  // namespace stepscope::rules
