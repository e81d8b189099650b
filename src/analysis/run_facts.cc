#include "analysis/run_facts.h"

#include <algorithm>
#include <limits>

#include "analysis/job_timeline.h"
#include "analysis/step_times.h"

namespace stepscope::analysis {
namespace {

std::string LastPathComponent(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

RunFacts ComputeRunFacts(const Model& model, const std::string& path) {
  RunFacts facts;
  facts.path = path;
  facts.source = ModelSourceName(model.source());
  int64_t manifest_start_ns = std::numeric_limits<int64_t>::max();
  int64_t manifest_end_ns = std::numeric_limits<int64_t>::min();
  bool every_node_ended = !model.nodes().empty();
  for (const NodeFacts& node : model.nodes()) {
    facts.nodes.push_back(node.name);
    if (facts.instance_type.empty()) facts.instance_type = node.instance_type;
    facts.instance_count = std::max(facts.instance_count, node.instance_count);
    if (!node.has_manifest) {
      every_node_ended = false;
      continue;
    }
    const store::RunManifest& manifest = node.manifest;
    if (facts.job.empty()) facts.job = manifest.job;
    if (facts.ended.empty()) facts.ended = manifest.ended;
    const int64_t start_ns = manifest.start_time_ns;
    const int64_t end_ns = manifest.end_time_ns;
    if (start_ns > 0) manifest_start_ns = std::min(manifest_start_ns, start_ns);
    if (end_ns > 0) manifest_end_ns = std::max(manifest_end_ns, end_ns);
    else every_node_ended = false;
  }
  if (facts.job.empty()) facts.job = LastPathComponent(path);
  // One instance per node is the natural default once the type is known.
  if (facts.instance_count == 0 && !facts.instance_type.empty()) {
    facts.instance_count = static_cast<int32_t>(model.nodes().size());
  }
  // The manifests time the job itself (stepscope's start to the job's exit), which is what the
  // instances were held for; a node still running (or killed before its manifest was finished)
  // and imported runs fall back to the data's bounds.
  const bool have_start = manifest_start_ns != std::numeric_limits<int64_t>::max();
  facts.start_ns = have_start ? manifest_start_ns : model.first_ns();
  facts.end_ns = have_start && every_node_ended ? manifest_end_ns : model.last_ns();
  if (facts.end_ns < facts.start_ns) facts.end_ns = facts.start_ns;
  facts.duration_s = static_cast<double>(facts.end_ns - facts.start_ns) / 1e9;

  const JobTimeline timeline = ComputeJobTimeline(model, facts.start_ns, facts.end_ns);
  if (timeline.has_steps) {
    facts.phases.assign(timeline.phases.begin(), timeline.phases.end());
  }
  return facts;
}

std::map<std::string, std::vector<double>> StepDurationsMs(const Model& model, int node) {
  std::map<std::string, std::vector<double>> durations;
  for (const StepTimeGroup& group : GroupStepTimes(model)) {
    if (node >= 0 && group.node != static_cast<uint32_t>(node)) continue;
    std::vector<double>& out = durations[StepPhaseName(model.StepPhaseOfId(group.phase))];
    out.insert(out.end(), group.duration_ms.begin(), group.duration_ms.end());
  }
  // A phase whose every step was disturbed has nothing to measure.
  std::erase_if(durations, [](const auto& entry) { return entry.second.empty(); });
  return durations;
}

size_t DisturbedStepCount(const Model& model, int node) {
  size_t count = 0;
  for (const StepTimeGroup& group : GroupStepTimes(model)) {
    if (node < 0 || group.node == static_cast<uint32_t>(node)) count += group.disturbed;
  }
  return count;
}

}  // namespace stepscope::analysis
