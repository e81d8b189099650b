// Straggler (RULES.md §native): one member of a data-parallel job that the others wait for.
// Synchronous data-parallel training runs at the pace of its slowest member.
//
// Members: the job's ranks when its steps come from two or more (torchrun, on one node or
// many: analysis::ProcessFacts::rank via StepFacts::rank, global across nodes; steps of
// processes without a rank are left out), else its nodes (each node's steps pooled: imported
// SageMaker jobs know nodes, not ranks). In a job of several nodes a slow rank's evidence also
// compares its node's CPU and GPU with the other nodes' (is the node busier, or its GPU idler?).
//
// Per window and step phase, each member's medians are compared with the median of the other
// members' medians (`reference`):
//   step time         slow when its median step > reference * (1 + threshold_pct / 100); for a
//                     rank, only if it does not wait longer in backward than the others (a
//                     rank that waits longer is held back, not holding back: synchronous ranks
//                     take turns waiting, so their median steps can differ by chance).
//   outside backward  ranks only: DDP all-reduces gradients inside backward, where every rank
//                     waits for the slowest, so the ranks' steps last alike and the step time
//                     cannot tell them apart. What differs is the time *outside* backward
//                     (step − Backward): the slow rank does more there, the others make up for
//                     it waiting in backward. Slow when the others' median backward is longer
//                     than its own and its median outside backward exceeds theirs by more than
//                     threshold_pct % of their median step (which holds their wait, so this
//                     share stays under 100 %).
// The excess (seconds) is that of the criterion met (the larger when both are); the estimated
// saving is excess / the member's median step (the step every member would take without it).
// A member is a straggler when it was slow in at least min(patience, windows compared) windows
// and in at least half of the windows in which it was compared: a run shorter than `patience`
// windows needs every one of them.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/numerics.h"
#include "rules/builtin_rules.h"
#include "rules/step_facts.h"
#include "rules/system_totals.h"

namespace stepscope::rules {
namespace {

constexpr int32_t kWholeNode = -1;  // the member is a node, not one of its ranks
constexpr size_t kMaxEvidence = 10;

// Medians over one member's steps in one window (seconds).
struct MemberMedians {
  double step_s = 0;
  double outside_backward_s = 0;  // step − Backward
  double backward_s = 0;
  double data_wait_s = 0;
  double forward_s = 0;
  double optimizer_s = 0;
  double other_s = 0;             // step − data wait − forward − backward − optimizer
};

MemberMedians MediansOf(const std::vector<const StepFacts*>& steps) {
  std::vector<double> step, outside, backward, data, forward, optimizer, other;
  for (const StepFacts* s : steps) {
    const double duration = static_cast<double>(s->duration_ns()) / 1e9;
    step.push_back(duration);
    outside.push_back(static_cast<double>(s->duration_ns() - s->backward_ns) / 1e9);
    backward.push_back(static_cast<double>(s->backward_ns) / 1e9);
    data.push_back(static_cast<double>(s->data_wait_ns) / 1e9);
    forward.push_back(static_cast<double>(s->forward_ns) / 1e9);
    optimizer.push_back(static_cast<double>(s->optimizer_ns) / 1e9);
    const int64_t known = s->data_wait_ns + s->forward_ns + s->backward_ns + s->optimizer_ns;
    other.push_back(static_cast<double>(std::max<int64_t>(0, s->duration_ns() - known)) / 1e9);
  }
  return {analysis::Median(step), analysis::Median(outside), analysis::Median(backward), analysis::Median(data),
          analysis::Median(forward), analysis::Median(optimizer), analysis::Median(other)};
}

// The median of each field over the other members' medians.
MemberMedians OthersOf(const std::vector<MemberMedians>& others) {
  auto median = [&](double MemberMedians::*field) {
    std::vector<double> values;
    for (const MemberMedians& m : others) values.push_back(m.*field);
    return analysis::Median(values);
  };
  return {median(&MemberMedians::step_s), median(&MemberMedians::outside_backward_s),
          median(&MemberMedians::backward_s), median(&MemberMedians::data_wait_s), median(&MemberMedians::forward_s),
          median(&MemberMedians::optimizer_s), median(&MemberMedians::other_s)};
}

std::string Ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f ms", seconds * 1e3);
  return text;
}

std::string Share(double part, double whole) { return FormatPercent(whole > 0 ? part / whole : 0.0); }

// Which part of the step the member's extra time went to (largest positive difference).
std::string WhereTheExcessWent(const MemberMedians& member, const MemberMedians& others, double excess_s) {
  const std::pair<double, const char*> parts[] = {
      {member.other_s - others.other_s,
       "in the training script's own code, outside forward, backward, the optimizer step and the data wait"},
      {member.data_wait_s - others.data_wait_s, "waiting for its data loader"},
      {member.forward_s - others.forward_s, "in forward"},
      {member.optimizer_s - others.optimizer_s, "in the optimizer step"},
  };
  const auto* largest = std::max_element(std::begin(parts), std::end(parts),
                                         [](const auto& a, const auto& b) { return a.first < b.first; });
  // Named only when it accounts for most of the excess.
  if (largest->first <= 0 || largest->first < 0.5 * excess_s) return "";
  return "+" + Ms(largest->first) + " " + largest->second;
}

struct SlowWindow {
  int64_t window_start_ns = 0;
  int64_t start_ns = 0, end_ns = 0;  // the window (nodes), the member's steps in it (ranks)
  MemberMedians member, others;
  double excess_s = 0;            // of the criterion met (the larger when both were)
  bool outside_backward = false;  // that criterion: outside backward (ranks), else step time
  int32_t pid = -1;               // the member's process with most steps in the window (ranks)
  std::vector<int64_t> steps;
  std::vector<ActivityShare> activity;  // the member's process in the window (first windows only)
  // A rank in a job of several nodes: its node's mean CPU and GPU utilization in the window and
  // the other nodes' (-1 when unknown).
  double node_cpu_pct = -1, others_cpu_pct = -1, node_gpu_pct = -1, others_gpu_pct = -1;

  double Excess() const { return excess_s; }
  double Fraction() const { return others.step_s > 0 ? excess_s / others.step_s : 0.0; }
  double Saving() const { return member.step_s > 0 ? std::min(1.0, excess_s / member.step_s) : 0.0; }
};

struct MemberRecord {
  int64_t compared = 0;
  std::vector<SlowWindow> slow;
  std::set<int32_t> pids;  // ranks: the processes that ran as this rank
};

// (node, rank or kWholeNode, step phase)
using MemberKey = std::tuple<uint32_t, int32_t, std::string>;

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
    const std::vector<StepFacts> facts = CollectStepFacts(window);
    // Ranks when the steps know two or more, else nodes.
    std::set<int32_t> ranks;
    for (const StepFacts& step : facts) {
      if (step.rank >= 0) ranks.insert(step.rank);
    }
    const bool by_rank = ranks.size() >= 2 || model.nodes().size() == 1;
    const bool several_nodes = model.nodes().size() > 1;
    std::map<std::string, std::map<std::pair<uint32_t, int32_t>, std::vector<const StepFacts*>>> by_phase;
    for (const StepFacts& step : facts) {
      if (by_rank && step.rank < 0) continue;
      by_phase[step.phase][{step.node, by_rank ? step.rank : kWholeNode}].push_back(&step);
    }
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    for (const auto& [phase, by_member] : by_phase) {
      if (by_member.size() < 2) continue;
      std::map<std::pair<uint32_t, int32_t>, MemberMedians> medians;
      for (const auto& [member, steps] : by_member) medians[member] = MediansOf(steps);
      for (const auto& [member, mine] : medians) {
        std::vector<MemberMedians> other_list;
        for (const auto& [other, theirs] : medians) {
          if (other != member) other_list.push_back(theirs);
        }
        const MemberMedians others = OthersOf(other_list);
        MemberRecord& record = records_[{member.first, member.second, phase}];
        ++record.compared;
        ++datapoints_;
        const std::vector<const StepFacts*>& steps = by_member.at(member);
        const bool is_rank = member.second != kWholeNode;
        if (is_rank) {
          for (const StepFacts* step : steps) record.pids.insert(step->pid);
        }
        if (others.step_s <= 0) continue;
        const double step_excess_s = mine.step_s - others.step_s;
        const double outside_excess_s = is_rank ? mine.outside_backward_s - others.outside_backward_s : 0.0;
        // Who waits for whom: in synchronous training the ranks the straggler holds back wait for
        // it in backward, so theirs is the longer backward; a rank that waits longer is held back.
        const bool others_wait = is_rank && others.backward_s > mine.backward_s;
        const bool held_back = is_rank && mine.backward_s > others.backward_s;
        const bool slow_steps = step_excess_s > others.step_s * threshold && !held_back;
        const bool slow_outside = others_wait && outside_excess_s > others.step_s * threshold;
        if (!slow_steps && !slow_outside) continue;
        SlowWindow slow;
        slow.window_start_ns = slow.start_ns = window.start_ns;
        slow.end_ns = window.end_ns;
        slow.member = mine;
        slow.others = others;
        slow.outside_backward = slow_outside && (!slow_steps || outside_excess_s > step_excess_s);
        slow.excess_s = slow.outside_backward ? outside_excess_s : step_excess_s;
        for (const StepFacts* step : steps) slow.steps.push_back(step->number);
        if (is_rank) {
          std::map<int32_t, size_t> per_pid;
          for (const StepFacts* step : steps) ++per_pid[step->pid];
          slow.pid = std::max_element(per_pid.begin(), per_pid.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; })->first;
          // A rank's evidence spans its steps in the window, not the whole window.
          slow.start_ns = INT64_MAX;
          slow.end_ns = INT64_MIN;
          for (const StepFacts* step : steps) {
            slow.start_ns = std::min(slow.start_ns, step->start_ns);
            slow.end_ns = std::max(slow.end_ns, step->end_ns);
          }
          // What ran in the slow rank's process: measured now, while the window's model is at hand.
          if (record.slow.size() < kMaxEvidence) {
            slow.activity = TopActivity(model, member.first, slow.pid, slow.start_ns, slow.end_ns, 5);
            if (several_nodes) CompareNodeUtilization(window, member.first, slow);
          }
        }
        record.slow.push_back(std::move(slow));
      }
    }
    return false;
  }

  // The slow rank's node against the job's other nodes, over the window.
  static void CompareNodeUtilization(const Window& window, uint32_t node, SlowWindow& slow) {
    auto mean = [](const std::vector<TimedValue>& values) {
      if (values.empty()) return -1.0;
      double sum = 0;
      for (const TimedValue& value : values) sum += value.value;
      return sum / static_cast<double>(values.size());
    };
    auto others_mean = [&](auto totals) {
      std::vector<double> means;
      for (uint32_t other = 0; other < window.model->nodes().size(); ++other) {
        if (other == node) continue;
        if (const double value = mean(totals(window, other)); value >= 0) means.push_back(value);
      }
      return means.empty() ? -1.0 : analysis::Median(means);
    };
    slow.node_cpu_pct = mean(CpuTotals(window, node));
    slow.others_cpu_pct = others_mean(CpuTotals);
    slow.node_gpu_pct = mean(MeanGpuUtilization(window, node));
    slow.others_gpu_pct = others_mean(MeanGpuUtilization);
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "Straggler";
    report.description = "Checks whether one rank (or, where ranks are unknown, one node) is consistently slower "
                         "than the others, so that they wait for it.";
    report.recommendation = "Find what differs on the slow node or rank: its data shard, its GPU (clocks, "
                            "temperature), other processes on it, its network, work only it does.";
    report.parameters = parameters_.ReportString();
    report.datapoints = datapoints_;
    const auto patience = static_cast<int64_t>(parameters_.Number("patience"));
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, record] : records_) {
      const auto& [node, rank, phase] = key;
      const std::string node_name = node_names_(node);
      const auto slow = static_cast<int64_t>(record.slow.size());
      nlohmann::json entry = {{"windows_compared", record.compared}, {"windows_slow", slow}};
      if (rank == kWholeNode) {
        details[node_name][phase] = std::move(entry);
      } else {
        entry["pids"] = record.pids;
        details[node_name]["ranks"][std::to_string(rank)][phase] = std::move(entry);
      }
      if (slow == 0 || slow < std::min(patience, record.compared) || 2 * slow < record.compared) continue;
      ++report.triggered;
      ++report.violations;
      report.last_trigger_ns = std::max(report.last_trigger_ns, record.slow.back().window_start_ns);
      report.findings.push_back(rank == kWholeNode ? NodeFinding(node_name, phase, record)
                                                   : RankFinding(node_name, rank, phase, record));
    }
    report.details = std::move(details);
    return report;
  }

 private:
  static double MeanOf(const MemberRecord& record, double (SlowWindow::*measure)() const) {
    double sum = 0;
    for (const SlowWindow& window : record.slow) sum += (window.*measure)();
    return sum / static_cast<double>(record.slow.size());
  }

  Finding NodeFinding(const std::string& node_name, const std::string& phase, const MemberRecord& record) const {
    const double excess = MeanOf(record, &SlowWindow::Fraction);
    Finding finding;
    finding.id = "Straggler/" + node_name + "/" + phase;
    finding.rule = "Straggler";
    finding.severity = excess > 0.3 ? Severity::kCritical : Severity::kWarning;
    char text[400];
    std::snprintf(text, sizeof(text), "%s is a straggler: its %s steps were %.0f %% slower than the other nodes' "
                  "in %zu of %lld windows", node_name.c_str(), phase.c_str(), excess * 100.0, record.slow.size(),
                  static_cast<long long>(record.compared));
    finding.title = text;
    finding.estimated_saving = MeanOf(record, &SlowWindow::Saving);
    finding.saving_basis = "the slow node's excess step time, which every node waits for in synchronous training";
    finding.recommendation = "Find what differs on the slow node: its data shard, its GPU (clocks, temperature), "
                             "other processes on it, its network.";
    finding.next_step = "Compare " + node_name + "'s system metrics with another node's in the report.";
    for (const SlowWindow& window : record.slow) {
      if (finding.evidence.size() == kMaxEvidence) break;
      Evidence evidence;
      evidence.node = node_name;
      evidence.start_ns = window.start_ns;
      evidence.end_ns = window.end_ns;
      evidence.step_phase = phase;
      evidence.steps = window.steps;
      std::snprintf(text, sizeof(text), "median step %.3f s vs %.3f s on the other nodes", window.member.step_s,
                    window.others.step_s);
      evidence.what = text;
      finding.evidence.push_back(std::move(evidence));
    }
    return finding;
  }

  Finding RankFinding(const std::string& node_name, int32_t rank, const std::string& phase,
                      const MemberRecord& record) const {
    const double excess = MeanOf(record, &SlowWindow::Fraction);
    const SlowWindow& first = record.slow.front();
    const bool waited_in_backward = std::count_if(record.slow.begin(), record.slow.end(), [](const SlowWindow& w) {
      return w.outside_backward;
    }) * 2 >= static_cast<long>(record.slow.size());
    const std::string who =
        "rank " + std::to_string(rank) + " on " + node_name + " (pid " + std::to_string(first.pid) + ")";
    Finding finding;
    finding.id = "Straggler/" + node_name + "/rank-" + std::to_string(rank) + "/" + phase;
    finding.rule = "Straggler";
    finding.severity = excess > 0.3 ? Severity::kCritical : Severity::kWarning;
    char text[400];
    if (waited_in_backward) {
      std::snprintf(text, sizeof(text), "%s is a straggler: the other ranks wait for it in backward; its %s steps "
                    "spend %s more outside backward than theirs (%.0f %% of their step) in %zu of %lld windows", who.c_str(),
                    phase.c_str(), Ms(MeanOf(record, &SlowWindow::Excess)).c_str(), excess * 100.0, record.slow.size(),
                    static_cast<long long>(record.compared));
    } else {
      std::snprintf(text, sizeof(text), "%s is a straggler: its %s steps were %.0f %% slower than the other ranks' in "
                    "%zu of %lld windows", who.c_str(), phase.c_str(), excess * 100.0, record.slow.size(),
                    static_cast<long long>(record.compared));
    }
    finding.title = text;
    finding.estimated_saving = MeanOf(record, &SlowWindow::Saving);
    finding.saving_basis = waited_in_backward
                               ? "the slow rank's extra time outside backward, which every rank waits for in the "
                                 "gradient all-reduce"
                               : "the slow rank's excess step time, which every rank waits for in synchronous training";
    finding.recommendation = "Find what rank " + std::to_string(rank) +
                             " does that the others do not: a larger or slower data shard (its data-loader wait), "
                             "work only it does in the training script (logging, checkpointing, evaluation), its "
                             "GPU (clocks, temperature), or other processes on its CPU cores.";
    finding.next_step = "Compare rank " + std::to_string(rank) +
                        "'s steps with the other ranks' in the report's per-rank step table, then profile what it "
                        "runs between forward, backward and the optimizer step (a python detail window).";
    for (const SlowWindow& window : record.slow) {
      if (finding.evidence.size() == kMaxEvidence) break;
      Evidence evidence;
      evidence.node = node_name;
      evidence.rank = rank;
      evidence.pid = window.pid;
      evidence.start_ns = window.start_ns;
      evidence.end_ns = window.end_ns;
      evidence.step_phase = phase;
      evidence.steps = window.steps;
      evidence.what = "median step " + Ms(window.member.step_s) + " vs " + Ms(window.others.step_s) +
                      " on the other ranks; outside backward " + Ms(window.member.outside_backward_s) + " vs " +
                      Ms(window.others.outside_backward_s) + ", in backward " + Ms(window.member.backward_s) + " vs " +
                      Ms(window.others.backward_s) + "; data-loader wait " +
                      Share(window.member.data_wait_s, window.member.step_s) + " of its step vs " +
                      Share(window.others.data_wait_s, window.others.step_s);
      if (const std::string where = WhereTheExcessWent(window.member, window.others, window.excess_s);
          !where.empty()) {
        evidence.what += "; its extra time: " + where;
      }
      if (window.node_cpu_pct >= 0 && window.others_cpu_pct >= 0) {
        std::snprintf(text, sizeof(text), "; %s's CPU %.0f %% busy vs %.0f %% on the other nodes", node_name.c_str(),
                      window.node_cpu_pct, window.others_cpu_pct);
        evidence.what += text;
      }
      if (window.node_gpu_pct >= 0 && window.others_gpu_pct >= 0) {
        std::snprintf(text, sizeof(text), ", its GPUs %.0f %% vs %.0f %%", window.node_gpu_pct, window.others_gpu_pct);
        evidence.what += text;
      }
      evidence.top_activity = window.activity;
      finding.evidence.push_back(std::move(evidence));
    }
    return finding;
  }

  std::map<MemberKey, MemberRecord> records_;
  NodeNames node_names_;
  int64_t datapoints_ = 0;
};

}  // namespace

std::unique_ptr<Rule> MakeStragglerRule() { return std::make_unique<StragglerRule>(); }

}  // namespace stepscope::rules
