#include "report/report_sections_gpu_activity.h"

#include <string>

#include "analysis/annotation_durations.h"
#include "analysis/gpu_activity.h"

namespace stepscope::report {
namespace {

double Ms(double ns) { return ns / 1e6; }
double Share(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

std::string NoDeviceEventsWhy(const ReportContext& context) {
  switch (context.model->source()) {
    case analysis::ModelSource::kKineto:
      return "The trace has no GPU kernels, copies, memsets or synchronization: it was recorded without "
             "ProfilerActivity.CUDA, or on a machine without a GPU.";
    case analysis::ModelSource::kSageMaker:
      return "SageMaker profiler output records no GPU kernels; import a PyTorch profiler (Kineto) trace of the job "
             "to see them.";
    case analysis::ModelSource::kStepscope:
      break;
  }
  return "No GPU kernel was recorded: kernels come from CUPTI in an operators detail window of a stepscope run on a "
         "GPU (docs/detail-windows.md) or from imported PyTorch profiler (Kineto) traces.";
}

nlohmann::json GpuJson(const analysis::Model& model, const analysis::GpuActivity& gpu) {
  const int64_t span = gpu.span_ns();
  nlohmann::json split = nlohmann::json::array();
  for (int w = 0; w < analysis::kGpuWorkCount; ++w) {
    split.push_back({{"work", analysis::GpuWorkName(static_cast<analysis::GpuWork>(w))},
                     {"ms", Ms(static_cast<double>(gpu.exclusive_ns[w]))},
                     {"share", Share(gpu.exclusive_ns[w], span)},
                     {"summed_ms", Ms(static_cast<double>(gpu.summed_ns[w]))},
                     {"count", gpu.count[w]}});
  }
  split.push_back({{"work", "idle"}, {"ms", Ms(static_cast<double>(gpu.idle_ns))}, {"share", Share(gpu.idle_ns, span)},
                   {"summed_ms", nullptr}, {"count", nullptr}});
  nlohmann::json memory = nlohmann::json::array();
  for (const analysis::MemoryOperationRow& row : gpu.memory_operations) {
    memory.push_back({{"kind", row.kind},
                      {"host_memory", row.host_memory},
                      {"count", row.count},
                      {"total_ms", Ms(static_cast<double>(row.total_ns))},
                      {"bytes", row.with_bytes > 0 ? nlohmann::json(row.bytes) : nlohmann::json()},
                      {"with_bytes", row.with_bytes}});
  }
  nlohmann::json precisions = nlohmann::json::array();
  for (const analysis::PrecisionRow& row : gpu.precisions) {
    nlohmann::json examples = nlohmann::json::array();
    for (const analysis::PrecisionExample& example : row.examples) {
      examples.push_back({{"kernel", example.kernel},
                          {"pattern", example.pattern},
                          {"from_operator", example.from_operator},
                          {"total_ms", Ms(static_cast<double>(example.total_ns))},
                          {"launches", example.launches}});
    }
    precisions.push_back({{"precision", analysis::KernelPrecisionName(row.precision)},
                          {"total_ms", Ms(static_cast<double>(row.total_ns))},
                          {"launches", row.launches},
                          {"from_operator", row.from_operator},
                          {"examples", std::move(examples)}});
  }
  const std::string node = gpu.node < model.nodes().size() ? model.nodes()[gpu.node].name : "";
  return {{"node", node},
          {"gpu", gpu.device},
          {"span_ms", Ms(static_cast<double>(span))},
          {"busy_ms", Ms(static_cast<double>(gpu.busy_ns()))},
          {"busy_share", Share(gpu.busy_ns(), span)},
          {"idle_ms", Ms(static_cast<double>(gpu.idle_ns))},
          {"idle_share", Share(gpu.idle_ns, span)},
          {"split", std::move(split)},
          {"memory_operations", std::move(memory)},
          {"precisions", std::move(precisions)}};
}

}  // namespace

nlohmann::json BuildGpuActivitySection(const ReportContext& context) {
  const std::vector<analysis::GpuActivity> gpus = analysis::ComputeGpuActivity(*context.model);
  if (gpus.empty()) return Unavailable(NoDeviceEventsWhy(context));
  nlohmann::json rows = nlohmann::json::array();
  for (const analysis::GpuActivity& gpu : gpus) rows.push_back(GpuJson(*context.model, gpu));
  return {{"available", true}, {"gpus", std::move(rows)}};
}

nlohmann::json BuildAnnotationsSection(const ReportContext& context) {
  const analysis::AnnotationSummary summary = analysis::ComputeAnnotationDurations(*context.model);
  if (summary.annotations.empty()) {
    if (context.model->source() == analysis::ModelSource::kSageMaker) {
      return Unavailable("SageMaker profiler output has no user annotations.");
    }
    return Unavailable(
        "No user annotation was recorded: name a range with stepscope.annotate (or torch.profiler.record_function in "
        "a PyTorch profiler trace) to see how long it takes.");
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const analysis::AnnotationDurations& row : summary.annotations) {
    nlohmann::json edges = nlohmann::json::array();
    for (double edge : row.edges_ns) edges.push_back(Ms(edge));
    rows.push_back({{"name", row.name},
                    {"where", row.on_gpu ? "gpu" : "host"},
                    {"count", row.count},
                    {"total_ms", Ms(static_cast<double>(row.total_ns))},
                    {"min_ms", Ms(row.min_ns)},
                    {"p50_ms", Ms(row.p50_ns)},
                    {"p95_ms", Ms(row.p95_ns)},
                    {"max_ms", Ms(row.max_ns)},
                    {"histogram", {{"edges_ms", std::move(edges)}, {"counts", row.counts}}}});
  }
  return {{"available", true},
          {"names_total", summary.names_total},
          {"max_names", analysis::kMaxAnnotationNames},
          {"bins", analysis::kAnnotationBins},
          {"annotations", std::move(rows)}};
}

}  // namespace stepscope::report
