#include "analysis/annotation_durations.h"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/numerics.h"

namespace stepscope::analysis {

AnnotationSummary ComputeAnnotationDurations(const Model& model) {
  const StringId host_annotation = model.FindString("user_annotation");
  const StringId gpu_annotation = model.FindString("gpu_user_annotation");
  std::map<std::pair<StringId, bool>, std::vector<double>> durations;
  for (const FrameworkEvent& event : model.events()) {
    if (event.kind != EventKind::kSpan || event.unfinished || model.StepPhaseOf(event) != StepPhase::kNone) continue;
    bool wanted = false;
    if (model.source() == ModelSource::kKineto) {
      wanted = event.category != kEmptyString && (event.category == host_annotation || event.category == gpu_annotation);
    } else if (model.source() == ModelSource::kStepscope) {
      // Recorded spans are their own phase (vocabulary.h): stepscope's own events have the phase
      // "stepscope", detail-window operators and kernels a category.
      wanted = event.category == kEmptyString && event.device < 0 && event.phase == event.name;
    }
    if (!wanted) continue;
    const bool on_gpu = event.category != kEmptyString && event.category == gpu_annotation;
    durations[{event.name, on_gpu}].push_back(static_cast<double>(event.duration_ns()));
  }
  // Moved, not copied: on a run of millions of annotated spans the lists are the largest thing
  // this builds, and a copy held beside them doubled the report's peak here.
  std::vector<std::pair<std::pair<StringId, bool>, std::vector<double>>> ranked;
  ranked.reserve(durations.size());
  for (auto& [key, values] : durations) ranked.emplace_back(key, std::move(values));
  durations.clear();
  auto name = [&](const auto& entry) { return model.String(entry.first.first); };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    if (a.second.size() != b.second.size()) return a.second.size() > b.second.size();
    if (name(a) != name(b)) return name(a) < name(b);
    return a.first.second < b.first.second;
  });
  AnnotationSummary summary;
  summary.names_total = ranked.size();
  if (ranked.size() > kMaxAnnotationNames) ranked.resize(kMaxAnnotationNames);
  for (auto& [key, values] : ranked) {
    std::sort(values.begin(), values.end());
    AnnotationDurations row;
    row.name = std::string(model.String(key.first));
    row.on_gpu = key.second;
    row.count = static_cast<int64_t>(values.size());
    for (double value : values) row.total_ns += static_cast<int64_t>(value);
    row.min_ns = values.front();
    row.max_ns = values.back();
    row.p50_ns = SortedQuantile(values, 0.5);
    row.p95_ns = SortedQuantile(values, 0.95);
    Histogram histogram = EqualBinHistogram(values, kAnnotationBins);
    row.edges_ns = std::move(histogram.edges);
    row.counts = std::move(histogram.counts);
    summary.annotations.push_back(std::move(row));
  }
  return summary;
}

}  // namespace stepscope::analysis
