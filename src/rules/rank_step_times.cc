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
  // Every step, measured as the rules measure it, a slice of the model's events at a time: a
  // step's facts depend only on the step and the events starting inside it, and a whole run's
  // StepFacts at once (~120 B a step) cost a 2-node, 8-rank day 240 MB.
  constexpr size_t kEventsPerSlice = 1 << 18;
  Window slice;
  slice.model = &model;
  slice.start_ns = model.first_ns();
  slice.end_ns = model.last_ns() + 1;
  std::map<std::tuple<uint32_t, int32_t, std::string>, RankStepTimes> groups;
  std::map<std::tuple<uint32_t, int32_t, std::string>, std::map<int32_t, size_t>> steps_per_pid;
  for (size_t first = 0; first < model.events().size(); first += kEventsPerSlice) {
    slice.events = {first, std::min(model.events().size(), first + kEventsPerSlice)};
    for (const StepFacts& step : CollectStepFacts(slice)) {
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
