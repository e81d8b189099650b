#include "rules/step_device_work.h"

#include <utility>

namespace stepscope::rules {

std::optional<analysis::GpuWork> DeviceWorkOf(const analysis::Model& model, const analysis::FrameworkEvent& event) {
  if (event.device < 0 || event.kind != analysis::EventKind::kSpan) return std::nullopt;
  const std::string_view category = model.String(event.category);
  if (category == "kernel") return analysis::GpuWork::kKernel;
  if (category == "gpu_memcpy") return analysis::GpuWork::kMemcpy;
  if (category == "gpu_memset") return analysis::GpuWork::kMemset;
  return std::nullopt;
}

std::vector<StepDeviceWork> CollectStepDeviceWork(const Window& window) {
  const analysis::Model& model = *window.model;
  const auto& events = model.events();
  std::vector<StepDeviceWork> result;
  for (StepFacts& step : CollectStepFacts(window)) {
    StepDeviceWork& entry = result.emplace_back();
    std::map<int32_t, bool> of_step;  // device work's pid -> whether it belongs to the step's process
    auto [begin, end] = model.EventsStartingIn(step.start_ns, step.end_ns);
    for (size_t i = begin; i < end; ++i) {
      const analysis::FrameworkEvent& event = events[i];
      if (event.node != step.node || !DeviceWorkOf(model, event)) continue;
      auto [known, inserted] = of_step.try_emplace(event.pid, false);
      if (inserted) known->second = event.pid == step.pid || model.FindProcess(step.node, event.pid) == nullptr;
      if (known->second) entry.work[event.device].push_back(static_cast<uint32_t>(i));
    }
    entry.step = std::move(step);
  }
  return result;
}

bool WindowHasDeviceWork(const Window& window) {
  for (size_t i = window.events.first; i < window.events.second; ++i) {
    if (DeviceWorkOf(*window.model, window.model->events()[i])) return true;
  }
  return false;
}

nlohmann::json NoGpuDataDetails() {
  return {{"gpu_data", false},
          {"why", "No GPU data: the run has no kernel, copy or memset events (a PyTorch profiler trace with CUDA "
                  "activities, or stepscope's GPU tracing, records them)."}};
}

RuleReport GpuRuleReport(const Rule& rule, std::string description, std::string recommendation, bool gpu_data) {
  RuleReport report;
  report.rule = std::string(rule.name());
  report.description = std::move(description);
  report.recommendation = std::move(recommendation);
  report.parameters = rule.parameters().ReportString();
  if (!gpu_data) report.details = NoGpuDataDetails();
  return report;
}

Evidence GpuEvidence(std::string node, int32_t rank, std::string phase, int64_t start_ns, int64_t end_ns,
                     std::string what, std::vector<int64_t> steps) {
  Evidence evidence;
  evidence.node = std::move(node);
  evidence.rank = rank;
  evidence.start_ns = start_ns;
  evidence.end_ns = end_ns;
  evidence.step_phase = std::move(phase);
  evidence.steps = std::move(steps);
  evidence.what = std::move(what);
  return evidence;
}

std::vector<ActivityShare> LargestKernels(const std::map<std::string, KernelTotal>& kernels, int64_t span_ns,
                                          size_t limit) {
  std::vector<ActivityShare> shares;
  for (const auto& [name, total] : kernels) {
    shares.push_back({"kernel", name, total.total_ns,
                      span_ns > 0 ? static_cast<double>(total.total_ns) / static_cast<double>(span_ns) : 0.0});
  }
  std::stable_sort(shares.begin(), shares.end(),
                   [](const ActivityShare& a, const ActivityShare& b) { return a.total_ns > b.total_ns; });
  if (shares.size() > limit) shares.resize(limit);
  return shares;
}

std::string GpuSubject(std::string_view node_name, int32_t rank, int32_t device) {
  const std::string gpu = "gpu" + std::to_string(device);
  if (rank < 0) return gpu;
  const std::string rank_name = "rank-" + std::to_string(rank);
  return node_name == rank_name ? gpu : rank_name + "/" + gpu;
}

}  // namespace stepscope::rules
