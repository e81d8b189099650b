// DataloaderStarvation (RULES.md §native): the training loop waits for its next batch for more
// than `moderate_pct` % of step time (warning) or more than `severe_pct` % (critical).
//
// Measured per (node, step phase) over the whole run so far, from the DataLoaderIter spans on
// the step's own thread (the loop's wait inside next()). Steps that stepscope's detail profiling
// disturbed are left out: their waits include the profiler's cost, not the loader's.
// The estimated saving is the wait's share of step time: what overlapping loading with compute
// (enough workers, prefetching) can win at best.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rules/builtin_rules.h"
#include "rules/cpu_headroom.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

struct LoaderFacts {
  int64_t num_workers = -1;  // -1: unknown (no DataLoaderIterInitialize seen)
  int64_t prefetch_factor = -1;
  int64_t cores = -1;
  int64_t batch_size = -1;
  bool pin_memory = false;
};

struct PhaseTotals {
  int64_t steps = 0;
  int64_t disturbed_steps = 0;
  int64_t step_ns = 0;
  int64_t wait_ns = 0;
  int64_t first_start_ns = INT64_MAX;
  int64_t last_end_ns = 0;
  int32_t pid = 0;
  WorstSteps worst{&StepFacts::data_wait_ns};  // the largest waits, for evidence
};

class DataloaderStarvationRule final : public Rule {
 public:
  DataloaderStarvationRule() {
    parameters_.Declare("moderate_pct", RuleParameters::Kind::kPercent, "5");
    parameters_.Declare("severe_pct", RuleParameters::Kind::kPercent, "20");
    parameters_.Declare("min_steps", RuleParameters::Kind::kCount, "10");
  }
  std::string_view name() const override { return "DataloaderStarvation"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    cpu_.Add(window);
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const analysis::FrameworkEvent& event = model.events()[i];
      if (model.String(event.phase) != "DataLoaderIterInitialize") continue;
      LoaderFacts& facts = loaders_[event.node];
      auto number = [&](const char* key, int64_t* out) {
        if (const analysis::EventArg* arg = model.FindArg(event, key)) *out = arg->int_value;
      };
      number("num_workers", &facts.num_workers);
      number("prefetch_factor", &facts.prefetch_factor);
      number("cores", &facts.cores);
      number("batch_size", &facts.batch_size);
      if (const analysis::EventArg* pin = model.FindArg(event, "pin_memory")) facts.pin_memory = pin->int_value != 0;
      has_gpu_ = has_gpu_ || model.nodes()[event.node].gpu_count > 0;
    }
    for (StepFacts& step : CollectStepFacts(window)) {
      PhaseTotals& totals = totals_[{step.node, step.phase}];
      if (step.disturbed) {
        ++totals.disturbed_steps;
        continue;
      }
      ++totals.steps;
      totals.pid = step.pid;
      totals.step_ns += step.duration_ns();
      totals.wait_ns += step.data_wait_ns;
      totals.first_start_ns = std::min(totals.first_start_ns, step.start_ns);
      totals.last_end_ns = std::max(totals.last_end_ns, step.end_ns);
      totals.worst.Offer(model, std::move(step));
    }
    return false;  // concluded over the run so far, in Report()
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = std::string(name());
    report.description = "Checks how much of each step the training loop spends waiting for its next batch.";
    report.recommendation =
        "Load data in parallel with compute: more DataLoader workers (up to the free cores), prefetching, "
        "pin_memory=True with a GPU, lighter per-sample work.";
    report.parameters = parameters_.ReportString();
    const double moderate = parameters_.Number("moderate_pct") / 100.0;
    const double severe = parameters_.Number("severe_pct") / 100.0;
    const auto min_steps = static_cast<int64_t>(parameters_.Number("min_steps"));
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, totals] : totals_) {
      const auto& [node, phase] = key;
      const std::string node_name = node_names_(node);
      report.datapoints += totals.steps;
      const double share = totals.step_ns > 0 ? static_cast<double>(totals.wait_ns) / totals.step_ns : 0.0;
      details[node_name][phase] = {{"steps", totals.steps},
                                   {"disturbed_steps_left_out", totals.disturbed_steps},
                                   {"data_wait_share", share},
                                   {"mean_step_ns", totals.steps ? totals.step_ns / totals.steps : 0},
                                   {"mean_wait_ns", totals.steps ? totals.wait_ns / totals.steps : 0}};
      if (totals.steps < min_steps || share <= moderate) continue;
      ++report.violations;
      report.triggered += 1;
      report.last_trigger_ns = totals.last_end_ns;
      report.findings.push_back(MakeFinding(node, node_name, phase, totals, share, share > severe));
    }
    report.details = std::move(details);
    return report;
  }

 private:
  Finding MakeFinding(uint32_t node, const std::string& node_name, const std::string& phase,
                      const PhaseTotals& totals, double share, bool severe) const {
    Finding finding;
    finding.id = "DataloaderStarvation/" + node_name + "/" + phase;
    finding.rule = "DataloaderStarvation";
    finding.severity = severe ? Severity::kCritical : Severity::kWarning;
    finding.title = phase + " steps on " + node_name + " wait for data " + FormatPercent(share) + " of the time (" +
                    FormatDurationNs(totals.wait_ns / std::max<int64_t>(totals.steps, 1)) + " per step)";
    finding.estimated_saving = share;
    finding.saving_basis = "the data wait's share of " + phase + " step time; loading overlapped with compute "
                           "removes up to all of it";
    auto it = loaders_.find(node);
    const LoaderFacts facts = it == loaders_.end() ? LoaderFacts{} : it->second;
    std::string advice;
    const int64_t suggested_workers = std::max<int64_t>(2, std::min<int64_t>(facts.cores > 1 ? facts.cores - 1 : 2, 8));
    if (facts.num_workers == 0) {
      advice = "The DataLoader loads in the training process (num_workers=0): set num_workers to " +
               std::to_string(suggested_workers) + " so batches are prepared while the model computes.";
    } else if (facts.num_workers > 0) {
      advice = "num_workers=" + std::to_string(facts.num_workers) +
               (facts.cores > 0 ? " of " + std::to_string(facts.cores) + " cores" : std::string()) +
               ": raise it while cores are free, raise prefetch_factor" +
               (facts.prefetch_factor > 0 ? " (now " + std::to_string(facts.prefetch_factor) + ")" : std::string()) +
               ", or make per-sample work cheaper (decode/augment once, cache).";
    } else {
      advice = "Use a DataLoader with workers (num_workers > 0) and prefetching, or make data preparation cheaper.";
    }
    if (has_gpu_ && !facts.pin_memory) advice += " With a GPU, pin_memory=True speeds host-to-device copies.";
    finding.recommendation = advice;
    // The one thing to try first: the change itself when it is clear, else a closer look.
    finding.next_step = facts.num_workers == 0
                            ? "Set DataLoader(num_workers=" + std::to_string(suggested_workers) +
                                  ", persistent_workers=True), run again and compare the two runs (stepscope compare)."
                            : "Open the data-loader detail window (stepscope run --dataloader-steps START:COUNT) to see "
                              "per-batch times in each worker.";
    // More workers need free cores: on a full host, say who fills it instead.
    AdviseOnAFullHost(cpu_.Of(node), node_name, finding);
    for (const auto& [step, activity] : totals.worst.entries()) {
      Evidence evidence;
      evidence.node = node_name;
      evidence.start_ns = step.start_ns;
      evidence.end_ns = step.end_ns;
      evidence.step_phase = phase;
      evidence.steps = {step.number};
      evidence.what = "step " + std::to_string(step.number) + " waited " + FormatDurationNs(step.data_wait_ns) +
                      " of " + FormatDurationNs(step.duration_ns()) + " for its batch";
      evidence.top_activity = activity;
      finding.evidence.push_back(std::move(evidence));
    }
    return finding;
  }

  std::map<std::pair<uint32_t, std::string>, PhaseTotals> totals_;
  std::map<uint32_t, LoaderFacts> loaders_;
  NodeNames node_names_;
  bool has_gpu_ = false;
  CpuHeadroomTally cpu_;  // host CPU vs the job's, for the advice
};

}  // namespace

std::unique_ptr<Rule> MakeDataloaderStarvationRule() { return std::make_unique<DataloaderStarvationRule>(); }

}  // namespace stepscope::rules
