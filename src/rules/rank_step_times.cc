#include "rules/rank_step_times.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "rules/step_facts.h"

namespace stepscope::rules {

std::vector<RankStepTimes> CollectRankStepTimes(const analysis::Model& model) {
  std::vector<bool> multi_rank(model.nodes().size(), false);
  bool any = false;
  for (uint32_t node = 0; node < model.nodes().size(); ++node) {
    multi_rank[node] = model.RanksOnNode(node).size() > 1;
    any = any || multi_rank[node];
  }
  std::vector<RankStepTimes> out;
  if (!any) return out;
  // One window over the whole model: every step, measured as the rules measure it.
  Window all;
  all.model = &model;
  all.start_ns = model.first_ns();
  all.end_ns = model.last_ns() + 1;
  all.events = {0, model.events().size()};
  std::map<std::tuple<uint32_t, int32_t, std::string>, RankStepTimes> groups;
  std::map<std::tuple<uint32_t, int32_t, std::string>, std::map<int32_t, size_t>> steps_per_pid;
  for (const StepFacts& step : CollectStepFacts(all)) {
    if (step.node >= multi_rank.size() || !multi_rank[step.node] || step.rank < 0 || step.disturbed) continue;
    const auto key = std::make_tuple(step.node, step.rank, step.phase);
    RankStepTimes& group = groups[key];
    if (group.rank < 0) {
      group.node = step.node;
      group.rank = step.rank;
      group.phase = step.phase;
      if (const analysis::ProcessFacts* process = model.FindProcess(step.node, step.pid)) {
        group.local_rank = process->local_rank;
        group.world_size = process->world_size;
      }
    }
    ++steps_per_pid[key][step.pid];
    group.step_ms.push_back(static_cast<double>(step.duration_ns()) / 1e6);
    group.backward_ms.push_back(static_cast<double>(step.backward_ns) / 1e6);
    group.outside_backward_ms.push_back(static_cast<double>(step.duration_ns() - step.backward_ns) / 1e6);
    group.step_ns += step.duration_ns();
    group.data_wait_ns += step.data_wait_ns;
  }
  for (auto& [key, group] : groups) {
    size_t most = 0;
    for (const auto& [pid, count] : steps_per_pid[key]) {
      group.pids.push_back(pid);
      if (count > most) {
        most = count;
        group.pid = pid;
      }
    }
    std::sort(group.step_ms.begin(), group.step_ms.end());
    std::sort(group.backward_ms.begin(), group.backward_ms.end());
    std::sort(group.outside_backward_ms.begin(), group.outside_backward_ms.end());
    out.push_back(std::move(group));
  }
  return out;
}

}  // namespace stepscope::rules
