// StepTimeBreakdown (RULES.md §native, reporting): where each step's wall time went, every
// instant counted once.
//
// With device events (a Kineto trace or CUPTI data) the categories, by priority, are: GPU kernel
// > memcpy > memset > communication > runtime/launch > data-loader wait > CPU compute > other —
// an instant in which a kernel runs is "kernel" whatever the host does. Without device data:
// data wait > forward > backward > optimizer > other, from the spans on the step's thread.
// Summed per (node, step phase) over the run. Steps that stepscope's detail profiling disturbed
// are left out, as DataloaderStarvation and the step-time statistics leave them out, so the
// report's data-wait share is the finding's. Reporting only: never triggers.
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rules/builtin_rules.h"
#include "rules/step_facts.h"

namespace stepscope::rules {
namespace {

enum Category : int {
  kKernel, kMemcpy, kMemset, kCommunication, kRuntime, kDataWait, kCpuCompute,  // with device data
  kForward, kBackward, kOptimizer,                                             // host only
  kOther, kCategoryCount
};
constexpr std::array<const char*, kCategoryCount> kCategoryNames = {
    "gpu_kernel", "memcpy", "memset", "communication", "runtime_launch", "data_wait", "cpu_compute",
    "forward", "backward", "optimizer", "other"};

struct Totals {
  int64_t steps = 0;
  int64_t disturbed_steps = 0;
  int64_t step_ns = 0;
  bool device_data = false;
  std::array<int64_t, kCategoryCount> ns{};
};

// The category of one event inside a step, or -1 to ignore it.
int Classify(const analysis::Model& model, const analysis::FrameworkEvent& event, bool device_data) {
  const std::string_view category = model.String(event.category);
  const std::string_view phase = model.String(event.phase);
  const std::string_view name = model.String(event.name);
  if (phase.starts_with("Step:ModeKeys.") || phase == "stepscope") return -1;
  if (event.device >= 0 || phase.starts_with("gpu_functions")) {
    if (category == "gpu_memcpy") return kMemcpy;
    if (category == "gpu_memset") return kMemset;
    if (name.find("nccl") != std::string_view::npos || category == "collective_comm") return kCommunication;
    if (category == "kernel") return kKernel;
    return -1;  // gpu_user_annotation and friends only group kernels
  }
  if (category == "collective_comm") return kCommunication;
  if (category == "cuda_runtime" || category == "cuda_driver") return kRuntime;
  if (phase == "DataLoaderIter") return kDataWait;
  if (device_data) return kCpuCompute;  // any other host span of the step's process
  if (phase == "Forward") return kForward;
  if (phase == "Backward") return kBackward;
  if (phase == "OptimizerStep") return kOptimizer;
  return -1;  // other host spans: their time stays "other" unless a known phase covers it
}

class StepTimeBreakdownRule final : public Rule {
 public:
  std::string_view name() const override { return "StepTimeBreakdown"; }

  bool Evaluate(const Window& window) override {
    const analysis::Model& model = *window.model;
    node_names_.Update(model);
    const auto& events = model.events();
    for (size_t i = window.events.first; i < window.events.second; ++i) {
      const analysis::FrameworkEvent& step = events[i];
      const std::string_view phase = model.String(step.phase);
      if (!phase.starts_with("Step:ModeKeys.") || step.kind != analysis::EventKind::kSpan) continue;
      Totals& totals = totals_[{step.node, std::string(StepPhaseName(phase))}];
      if (model.IsDisturbedStep(step)) {
        ++totals.disturbed_steps;
        continue;
      }
      auto [begin, end] = model.EventsStartingIn(step.start_ns, step.end_ns + 1);
      bool device_data = false;
      for (size_t j = begin; j < end && !device_data; ++j) device_data = events[j].device >= 0;
      // Boundaries: +1 at an interval's start, -1 at its end, per category; a sweep gives each
      // elementary piece of the step to the highest-priority category active in it.
      std::vector<std::pair<int64_t, int>> edges;  // (time, +-(category + 1))
      for (size_t j = begin; j < end; ++j) {
        const analysis::FrameworkEvent& event = events[j];
        if (j == i || event.node != step.node || event.kind != analysis::EventKind::kSpan) continue;
        if (event.device < 0 && event.pid != step.pid) continue;
        const int category = Classify(model, event, device_data);
        const int64_t stop = std::min(event.end_ns, step.end_ns);
        if (category < 0 || stop <= event.start_ns) continue;
        edges.emplace_back(event.start_ns, category + 1);
        edges.emplace_back(stop, -(category + 1));
      }
      std::sort(edges.begin(), edges.end());
      std::array<int, kCategoryCount> active{};
      int64_t at = step.start_ns;
      auto assign = [&](int64_t until) {
        if (until <= at) return;
        int winner = kOther;
        for (int c = 0; c < kCategoryCount; ++c) {
          if (active[c] > 0) {
            winner = c;
            break;
          }
        }
        totals.ns[winner] += until - at;
        at = until;
      };
      for (const auto& [time, delta] : edges) {
        assign(time);
        active[std::abs(delta) - 1] += delta > 0 ? 1 : -1;
      }
      assign(step.end_ns);
      ++totals.steps;
      totals.step_ns += step.duration_ns();
      totals.device_data = totals.device_data || device_data;
    }
    return false;
  }

  RuleReport Report() const override {
    RuleReport report;
    report.rule = std::string(name());
    report.reporting = true;
    report.description = "Splits each step's wall time into what ran in it, each instant counted once by priority.";
    report.recommendation = "Start with the largest share: it bounds what any optimisation can win.";
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [key, totals] : totals_) {
      const auto& [node, phase] = key;
      const std::string node_name = node_names_(node);
      report.datapoints += totals.steps;
      nlohmann::json categories = nlohmann::json::object();
      for (int c = 0; c < kCategoryCount; ++c) {
        const bool applies = totals.device_data ? (c <= kCpuCompute || c == kOther) : (c == kDataWait || c >= kForward);
        if (!applies) continue;
        categories[kCategoryNames[c]] = {
            {"ns", totals.ns[c]},
            {"share", totals.step_ns > 0 ? static_cast<double>(totals.ns[c]) / totals.step_ns : 0.0}};
      }
      details[node_name][phase] = {{"steps", totals.steps},
                                   {"disturbed_steps_left_out", totals.disturbed_steps},
                                   {"step_ns", totals.step_ns},
                                   {"mean_step_ns", totals.steps ? totals.step_ns / totals.steps : 0},
                                   {"device_data", totals.device_data},
                                   {"categories", categories}};
    }
    report.details = std::move(details);
    return report;
  }

 private:
  std::map<std::pair<uint32_t, std::string>, Totals> totals_;
  NodeNames node_names_;
};

}  // namespace

std::unique_ptr<Rule> MakeStepTimeBreakdownRule() { return std::make_unique<StepTimeBreakdownRule>(); }

}  // namespace stepscope::rules
