// GpuIdle (RULES.md §native): inside steps, the time each GPU ran nothing (no kernel, copy or
// set), attributed to why:
// - data_wait:   the host was waiting for its next batch (DataLoaderIter) meanwhile;
// - kernel_wait: gaps shorter than `kernel_gap_us` between device work: launch latency, the
//                classic case for CUDA graphs or fused kernels;
// - host_wait:   the host was busy with other work of the step (Python, CPU operators) and had
//                not issued the next kernel yet;
// - other:       nothing recorded explains it.
// Needs device events (Kineto traces, CUPTI); triggers when idle time exceeds `threshold_pct` %
// of the time of steps with device data.
#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rules/builtin_rules.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

enum Cause : int { kDataWait, kKernelWait, kHostWait, kOther, kCauseCount };
constexpr std::array<const char*, kCauseCount> kCauseNames = {"data_wait", "kernel_wait", "host_wait", "other"};
using Intervals = std::vector<std::pair<int64_t, int64_t>>;

int64_t Overlap(const Intervals& sorted, int64_t begin, int64_t end) {
  int64_t total = 0;
  for (const auto& [start, stop] : sorted) {
    if (start >= end) break;
    total += std::max<int64_t>(0, std::min(stop, end) - std::max(start, begin));
  }
  return total;
}

struct Totals {
  int64_t steps = 0;
  int64_t step_ns = 0;  // per device: step time × devices seen
  std::array<int64_t, kCauseCount> idle_ns{};
  int64_t last_end_ns = 0;
  int64_t worst_idle_ns = -1;
  int64_t worst_step = -1, worst_start_ns = 0, worst_end_ns = 0;
};

class GpuIdleRule final : public Rule {
 public:
  GpuIdleRule() {
    parameters_.Declare("threshold_pct", RuleParameters::Kind::kPercent, "20");
    parameters_.Declare("kernel_gap_us", RuleParameters::Kind::kPositive, "50");
  }
  std::string_view name() const override { return "GpuIdle"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    const auto gap_ns = static_cast<int64_t>(parameters_.Number("kernel_gap_us") * 1000);
    const auto& events = model.events();
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const analysis::FrameworkEvent& step = events[i];
      const std::string_view phase = model.String(step.phase);
      if (!phase.starts_with("Step:ModeKeys.") || step.kind != analysis::EventKind::kSpan) continue;
      std::map<int32_t, Intervals> busy;  // device -> device work
      Intervals data_wait, host_work;
      auto [begin, end] = model.EventsStartingIn(step.start_ns, step.end_ns + 1);
      for (size_t j = begin; j < end; ++j) {
        const analysis::FrameworkEvent& event = events[j];
        if (j == i || event.node != step.node || event.kind != analysis::EventKind::kSpan) continue;
        const int64_t stop = std::min(event.end_ns, step.end_ns);
        if (stop <= event.start_ns) continue;
        const std::string_view category = model.String(event.category);
        if (event.device >= 0) {
          if (category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset") {
            busy[event.device].emplace_back(event.start_ns, stop);
          }
        } else if (event.pid == step.pid) {
          (model.String(event.phase) == "DataLoaderIter" ? data_wait : host_work).emplace_back(event.start_ns, stop);
        }
      }
      if (busy.empty()) continue;
      Totals& totals = totals_[{step.node, std::string(StepPhaseName(phase))}];
      ++totals.steps;
      totals.last_end_ns = std::max(totals.last_end_ns, step.end_ns);
      int64_t step_idle = 0;
      for (auto& [device, intervals] : busy) {
        std::sort(intervals.begin(), intervals.end());
        totals.step_ns += step.duration_ns();
        int64_t cursor = step.start_ns;
        auto idle = [&](int64_t gap_begin, int64_t gap_end, bool between_work) {
          if (gap_end <= gap_begin) return;
          const int64_t length = gap_end - gap_begin;
          Cause cause = kOther;
          if (2 * Overlap(data_wait, gap_begin, gap_end) >= length) cause = kDataWait;
          else if (between_work && length < gap_ns) cause = kKernelWait;
          else if (2 * Overlap(host_work, gap_begin, gap_end) >= length) cause = kHostWait;
          totals.idle_ns[cause] += length;
          step_idle += length;
        };
        for (const auto& [start, stop] : intervals) {
          idle(cursor, start, cursor != step.start_ns);
          cursor = std::max(cursor, stop);
        }
        idle(cursor, step.end_ns, false);
      }
      if (step_idle > totals.worst_idle_ns) {
        totals.worst_idle_ns = step_idle;
        totals.worst_step = step.step;
        totals.worst_start_ns = step.start_ns;
        totals.worst_end_ns = step.end_ns;
      }
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = "GpuIdle";
    report.description = "Measures when GPUs ran nothing inside steps, and why.";
    report.recommendation = "Remove the largest cause: data wait → faster loading; kernel wait → CUDA graphs or "
                            "fused kernels (torch.compile); host wait → less Python per step, larger batches.";
    report.parameters = parameters_.ReportString();
    const double threshold = parameters_.Number("threshold_pct") / 100.0;
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, totals] : totals_) {
      const auto& [node, phase] = key;
      const std::string node_name = node_names_(node);
      report.datapoints += totals.steps;
      int64_t idle = 0;
      nlohmann::json causes = nlohmann::json::object();
      int largest = kOther;
      for (int c = 0; c < kCauseCount; ++c) {
        idle += totals.idle_ns[c];
        causes[kCauseNames[c]] = totals.idle_ns[c];
        if (totals.idle_ns[c] > totals.idle_ns[largest]) largest = c;
      }
      const double share = totals.step_ns > 0 ? static_cast<double>(idle) / totals.step_ns : 0.0;
      details[node_name][phase] = {{"steps", totals.steps}, {"idle_share", share}, {"idle_ns", causes}};
      if (share <= threshold) continue;
      ++report.triggered;
      ++report.violations;
      report.last_trigger_ns = std::max(report.last_trigger_ns, totals.last_end_ns);
      Finding finding;
      finding.id = "GpuIdle/" + node_name + "/" + phase;
      finding.rule = report.rule;
      finding.severity = share > 0.5 ? Severity::kCritical : Severity::kWarning;
      finding.title = "GPUs on " + node_name + " idle " + FormatPercent(share) + " of " + phase +
                      " step time, mostly " + kCauseNames[largest];
      finding.estimated_saving = static_cast<double>(totals.idle_ns[largest]) / totals.step_ns;
      finding.saving_basis = std::string("the largest cause's share (") + kCauseNames[largest] + ") of step time";
      static constexpr std::array<const char*, kCauseCount> kAdvice = {
          "Load data faster: more DataLoader workers, prefetching, pin_memory=True.",
          "Launch fewer, larger kernels: CUDA graphs (torch.cuda.graphs), torch.compile, fused optimizers.",
          "Issue GPU work sooner: move Python work out of the step, avoid per-step host computations, larger batches.",
          "Look at the step's timeline in the report for what the host did meanwhile."};
      finding.recommendation = kAdvice[largest];
      finding.next_step = "Open step " + std::to_string(totals.worst_step) + " in the timeline (the idlest one).";
      Evidence evidence;
      evidence.node = node_name;
      evidence.start_ns = totals.worst_start_ns;
      evidence.end_ns = totals.worst_end_ns;
      evidence.step_phase = phase;
      evidence.steps = {totals.worst_step};
      evidence.what = "the idlest step: " + FormatDurationNs(totals.worst_idle_ns) + " of device idle time";
      finding.evidence.push_back(std::move(evidence));
      report.findings.push_back(std::move(finding));
    }
    report.details = std::move(details);
    return report;
  }

 private:
  std::map<std::pair<uint32_t, std::string>, Totals> totals_;
  NodeNames node_names_;
};

}  // namespace

std::unique_ptr<Rule> MakeGpuIdleRule() { return std::make_unique<GpuIdleRule>(); }

}  // namespace stepscope::rules
