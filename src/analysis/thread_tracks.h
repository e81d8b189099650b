// Threads of a model and the tracks their slices are drawn on. Trace viewers need the slices of
// one thread to nest (a child lies inside its parent); real data does not always (async work
// recorded on one thread, clock jitter between a launch and its bookkeeping, unfinished spans).
// An event that would overlap a sibling without nesting goes to the thread's next lane, a
// synthetic track ("<thread> (overlap 1)"), so no track ever holds overlapping siblings.
//
//   thread (node, pid, tid, device)  ->  lane 0 (the thread itself), lane 1, lane 2, ...
//
// Tracks are numbered in (thread, lane) order, threads in (node, pid, device, tid) order, so a
// thread's overflow lanes sort right after it. Callers: the Chrome trace and table exporters, the
// dashboard's timeline (timeline_view.h).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model.h"

namespace stepscope::analysis {

struct ThreadKey {
  uint32_t node = 0;
  int32_t pid = 0;
  int32_t device = -1;  // GPU index for device streams, -1 on the host
  int64_t tid = 0;      // host thread, or the GPU stream

  auto operator<=>(const ThreadKey&) const = default;
};

struct Track {
  uint32_t thread = 0;  // index into TrackLayout::threads
  uint32_t lane = 0;    // 0: the thread itself; > 0: overflow lanes
};

struct TrackLayout {
  std::vector<ThreadKey> threads;       // sorted
  std::vector<Track> tracks;            // sorted by (thread, lane)
  std::vector<uint32_t> event_thread;   // per model event: index into threads
  std::vector<uint32_t> event_track;    // per model event: index into tracks (instants, counters: lane 0)
  std::vector<uint8_t> event_depth;     // per model event: spans enclosing it on its track (0: top level; capped at 255)
  std::vector<uint32_t> process_of_thread;  // per thread: index into processes
  std::vector<std::pair<uint32_t, int32_t>> processes;  // (node, pid), sorted
};

// Assigns every event of `model` to its thread and every span to the lowest lane where it nests.
// Track names: trace_names.h.
TrackLayout LayoutTracks(const Model& model);

}  // namespace stepscope::analysis
