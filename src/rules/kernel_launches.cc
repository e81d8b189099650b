#include "rules/kernel_launches.h"

#include <algorithm>

namespace stepscope::rules {

void KernelLaunches::Update(const analysis::Model& model) {
  const auto& events = model.events();
  const auto& flows = model.flows();
  if (model_ == &model && events_ == events.data() && event_count_ == events.size() && flows_ == flows.data() &&
      flow_count_ == flows.size()) {
    return;
  }
  model_ = &model;
  events_ = events.data();
  event_count_ = events.size();
  flows_ = flows.data();
  flow_count_ = flows.size();
  launch_of_.clear();
  const analysis::StringId ac2g = model.FindString("ac2g"), async = model.FindString("async_cpu_to_gpu");
  for (const analysis::Flow& flow : flows) {
    if (flow.category == analysis::kEmptyString || (flow.category != ac2g && flow.category != async)) continue;
    if (flow.to >= events.size() || flow.from >= events.size()) continue;
    if (events[flow.to].device >= 0 && events[flow.from].device < 0) launch_of_.emplace_back(flow.to, flow.from);
  }
  std::sort(launch_of_.begin(), launch_of_.end());
}

std::optional<uint32_t> KernelLaunches::LaunchOf(uint32_t device_event) const {
  auto found = std::lower_bound(launch_of_.begin(), launch_of_.end(), std::make_pair(device_event, uint32_t{0}));
  if (found == launch_of_.end() || found->first != device_event) return std::nullopt;
  return found->second;
}

}  // namespace stepscope::rules
