#include "analysis/thread_tracks.h"

#include <algorithm>
#include <map>

namespace stepscope::analysis {

TrackLayout LayoutTracks(const Model& model) {
  const auto& events = model.events();
  TrackLayout layout;

  // Threads first, so their numbering is sorted and independent of event order.
  std::map<ThreadKey, uint32_t> thread_index;
  for (const FrameworkEvent& event : events) {
    thread_index.emplace(ThreadKey{event.node, event.pid, event.device, event.tid}, 0);
  }
  std::map<std::pair<uint32_t, int32_t>, uint32_t> process_index;
  for (auto& [key, index] : thread_index) {
    index = static_cast<uint32_t>(layout.threads.size());
    layout.threads.push_back(key);
    process_index.emplace(std::make_pair(key.node, key.pid), 0);
  }
  for (auto& [key, index] : process_index) {
    index = static_cast<uint32_t>(layout.processes.size());
    layout.processes.push_back(key);
  }
  for (const ThreadKey& key : layout.threads) layout.process_of_thread.push_back(process_index[{key.node, key.pid}]);

  // Per thread and lane, the end times of the open slices (a stack). Events come sorted by
  // (start, -end), so a parent always precedes its children and a lane's stack only needs the
  // slices that ended by the new start popped.
  std::vector<std::vector<std::vector<int64_t>>> open(layout.threads.size());
  std::vector<uint32_t> event_lane(events.size(), 0);
  layout.event_thread.resize(events.size());
  layout.event_depth.assign(events.size(), 0);
  std::vector<uint32_t> lanes_of_thread(layout.threads.size(), 1);
  for (size_t i = 0; i < events.size(); ++i) {
    const FrameworkEvent& event = events[i];
    const uint32_t thread = thread_index[ThreadKey{event.node, event.pid, event.device, event.tid}];
    layout.event_thread[i] = thread;
    if (event.kind != EventKind::kSpan) continue;
    const int64_t end_ns = std::max(event.end_ns, event.start_ns);
    auto& lanes = open[thread];
    uint32_t lane = 0;
    for (;; ++lane) {
      if (lane == lanes.size()) lanes.emplace_back();
      std::vector<int64_t>& stack = lanes[lane];
      while (!stack.empty() && stack.back() <= event.start_ns) stack.pop_back();
      if (stack.empty() || stack.back() >= end_ns) {
        layout.event_depth[i] = static_cast<uint8_t>(std::min<size_t>(stack.size(), UINT8_MAX));
        stack.push_back(end_ns);
        break;
      }
    }
    event_lane[i] = lane;
    lanes_of_thread[thread] = std::max<uint32_t>(lanes_of_thread[thread], lane + 1);
  }

  std::vector<uint32_t> first_track(layout.threads.size(), 0);
  for (uint32_t thread = 0; thread < layout.threads.size(); ++thread) {
    first_track[thread] = static_cast<uint32_t>(layout.tracks.size());
    for (uint32_t lane = 0; lane < lanes_of_thread[thread]; ++lane) layout.tracks.push_back(Track{thread, lane});
  }
  layout.event_track.resize(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    layout.event_track[i] = first_track[layout.event_thread[i]] + event_lane[i];
  }
  return layout;
}

}  // namespace stepscope::analysis
