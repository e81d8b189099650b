#include "report/report_sections_gpu_idle.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/gpu_idle_attribution.h"
#include "report/report_model_series.h"

namespace stepscope::report {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// "compute_ms": ..., "host_bound_ms": ..., "busy_ms", "idle_ms" of summed parts.
void AddParts(nlohmann::json& row, const std::array<int64_t, analysis::kStepGpuPartCount>& part_ns) {
  int64_t busy = 0, idle = 0;
  for (int p = 0; p < analysis::kStepGpuPartCount; ++p) {
    row[std::string(analysis::StepGpuPartName(static_cast<analysis::StepGpuPart>(p))) + "_ms"] = Ms(part_ns[p]);
    (p < analysis::kStepGpuBusyParts ? busy : idle) += part_ns[p];
  }
  row["busy_ms"] = Ms(busy);
  row["idle_ms"] = Ms(idle);
}

std::string WhyNoRows(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  if (model.steps().empty()) {
    return "The run has no steps (ProfilerStep#N ranges of a PyTorch profiler trace, stepscope's steps): the GPU "
           "time is broken down per step.";
  }
  if (model.source() == analysis::ModelSource::kSageMaker) {
    return "SageMaker profiler output records no GPU kernels; import a PyTorch profiler (Kineto) trace of the job "
           "to break its steps down.";
  }
  return "No step ran GPU work that the run recorded: kernels, copies and memsets come from CUPTI in an operators "
         "detail window (docs/detail-windows.md) or from an imported PyTorch profiler trace recorded with "
         "ProfilerActivity.CUDA.";
}

}  // namespace

nlohmann::json BuildGpuIdleSection(const ReportContext& context) {
  const analysis::Model& model = *context.model;
  const std::vector<analysis::StepGpuBreakdown> rows = analysis::ComputeGpuIdleAttribution(model);
  if (rows.empty()) return Unavailable(WhyNoRows(context));

  // One entry per (node, GPU, process, phase), rows in step order.
  std::map<std::tuple<uint32_t, int32_t, int32_t, analysis::StepPhase>, std::vector<const analysis::StepGpuBreakdown*>>
      groups;
  for (const analysis::StepGpuBreakdown& row : rows) groups[{row.node, row.device, row.pid, row.phase}].push_back(&row);

  nlohmann::json gpus = nlohmann::json::array();
  for (auto& [key, steps] : groups) {
    const analysis::StepGpuBreakdown& first = *steps.front();
    std::array<int64_t, analysis::kStepGpuPartCount> totals{};
    int64_t step_ns = 0, kernels = 0, graph_kernels = 0;
    for (const analysis::StepGpuBreakdown* step : steps) {
      for (int p = 0; p < analysis::kStepGpuPartCount; ++p) totals[p] += step->part_ns[p];
      step_ns += step->duration_ns();
      kernels += step->kernels;
      graph_kernels += step->graph_kernels;
    }
    // The steps the GPU idled most in, shown in step order.
    std::vector<const analysis::StepGpuBreakdown*> shown = steps;
    if (shown.size() > kMaxTableRows) {
      std::stable_sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) { return a->idle_ns() > b->idle_ns(); });
      shown.resize(kMaxTableRows);
      std::sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) { return a->event < b->event; });
    }
    nlohmann::json step_rows = nlohmann::json::array();
    for (const analysis::StepGpuBreakdown* step : shown) {
      nlohmann::json row = {{"step", step->step},
                            {"start_s", static_cast<double>(step->start_ns - context.start_ns) / 1e9},
                            {"duration_ms", Ms(step->duration_ns())},
                            {"disturbed", step->disturbed},
                            {"kernels", step->kernels},
                            {"graph_kernels", step->graph_kernels}};
      AddParts(row, step->part_ns);
      step_rows.push_back(std::move(row));
    }
    nlohmann::json total = {{"step_ms", Ms(step_ns)}, {"kernels", kernels}, {"graph_kernels", graph_kernels}};
    AddParts(total, totals);
    gpus.push_back({{"node", first.node < model.nodes().size() ? model.nodes()[first.node].name : ""},
                    {"gpu", first.device},
                    {"rank", first.rank >= 0 ? nlohmann::json(first.rank) : nlohmann::json()},
                    {"pid", first.pid},
                    {"phase", analysis::StepPhaseName(first.phase)},
                    {"steps_total", steps.size()},
                    {"total", std::move(total)},
                    {"steps", std::move(step_rows)}});
  }
  nlohmann::json parts = nlohmann::json::array();
  for (int p = 0; p < analysis::kStepGpuPartCount; ++p) {
    parts.push_back(analysis::StepGpuPartName(static_cast<analysis::StepGpuPart>(p)));
  }
  return {{"available", true}, {"parts", std::move(parts)}, {"gpus", std::move(gpus)}};
}

}  // namespace stepscope::report
