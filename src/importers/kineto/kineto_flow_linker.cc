#include "importers/kineto/kineto_flow_linker.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope::analysis {
namespace {

// How far back from the last slice starting at or before a flow point the search for an
// enclosing slice goes: nesting is shallow, and a bound keeps hostile input linear.
constexpr size_t kMaxBindWalk = 256;

struct TrackKey {
  int64_t pid;
  int64_t tid;
  bool operator==(const TrackKey&) const = default;
};
struct TrackKeyHash {
  size_t operator()(const TrackKey& key) const {
    return std::hash<int64_t>{}(key.pid) * 1000003u ^ std::hash<int64_t>{}(key.tid);
  }
};

constexpr uint32_t kUnbound = UINT32_MAX;

class SliceIndex {
 public:
  explicit SliceIndex(const KinetoFile& file) : file_(file) {
    for (uint32_t i = 0; i < file.events.size(); ++i) {
      const StagedEvent& staged = file.events[i];
      if (staged.event.kind != EventKind::kSpan) continue;
      tracks_[TrackKey{staged.track_pid, staged.track_tid}].push_back(i);
    }
    for (auto& [key, slices] : tracks_) {
      std::stable_sort(slices.begin(), slices.end(), [&](uint32_t a, uint32_t b) {
        const FrameworkEvent& x = file.events[a].event;
        const FrameworkEvent& y = file.events[b].event;
        if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
        return x.end_ns > y.end_ns;  // parents first: the last one starting at t is the deepest
      });
    }
  }

  // The deepest slice on the point's track with start <= ts <= end, or kUnbound.
  uint32_t Bind(const FlowEndpoint& point) const {
    auto it = tracks_.find(TrackKey{point.track_pid, point.track_tid});
    if (it == tracks_.end()) return kUnbound;
    const std::vector<uint32_t>& slices = it->second;
    auto after = std::upper_bound(slices.begin(), slices.end(), point.ts_ns,
                                  [&](int64_t ts, uint32_t index) { return ts < file_.events[index].event.start_ns; });
    size_t walked = 0;
    while (after != slices.begin() && walked++ < kMaxBindWalk) {
      --after;
      if (file_.events[*after].event.end_ns >= point.ts_ns) return *after;
    }
    return kUnbound;
  }

 private:
  const KinetoFile& file_;
  std::unordered_map<TrackKey, std::vector<uint32_t>, TrackKeyHash> tracks_;
};

}  // namespace

std::vector<StagedFlow> LinkKinetoFlows(const KinetoFile& file, StringId ac2g, StringId legacy_ac2g,
                                        FlowLinkStats* stats) {
  std::vector<StagedFlow> flows;
  *stats = FlowLinkStats{};
  std::vector<bool> has_launch_link(file.events.size(), false);

  if (!file.flow_endpoints.empty()) {
    const SliceIndex index(file);
    // Group the points by key with one sort (hash maps of tens of thousands of nodes cost more
    // than the parse of the events). A key pairs its first "s" with its first "f"; Kineto
    // never reuses an id within a category in one file.
    const std::vector<FlowEndpoint>& points = file.flow_endpoints;
    std::vector<uint32_t> by_key(points.size());
    for (uint32_t i = 0; i < by_key.size(); ++i) by_key[i] = i;
    std::sort(by_key.begin(), by_key.end(), [&](uint32_t a, uint32_t b) {
      const FlowEndpoint& x = points[a];
      const FlowEndpoint& y = points[b];
      if (x.category != y.category) return x.category < y.category;
      if (x.id != y.id) return x.id < y.id;
      return a < b;
    });
    std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (first "f", first "s")
    for (size_t group = 0; group < by_key.size();) {
      size_t end = group;
      uint32_t first_start = kUnbound, first_finish = kUnbound;
      int64_t starts = 0, finishes = 0;
      const FlowEndpoint& head = points[by_key[group]];
      for (; end < by_key.size() && points[by_key[end]].category == head.category && points[by_key[end]].id == head.id;
           ++end) {
        const uint32_t index = by_key[end];
        if (points[index].is_start) {
          ++starts;
          if (first_start == kUnbound) first_start = index;
        } else {
          ++finishes;
          if (first_finish == kUnbound) first_finish = index;
        }
      }
      if (starts == 0) stats->unpaired_points += finishes;
      if (finishes == 0) stats->unpaired_points += starts;
      if (starts > 0 && finishes > 0) pairs.emplace_back(first_finish, first_start);
      group = end;
    }
    // Pairs in the order of their "f" points, so the result follows the file.
    std::sort(pairs.begin(), pairs.end());
    for (const auto& [finish_index, start_index] : pairs) {
      const FlowEndpoint& finish = points[finish_index];
      const FlowEndpoint& start = points[start_index];
      const uint32_t from = index.Bind(start);
      const uint32_t to = index.Bind(finish);
      if (from == kUnbound || to == kUnbound) {
        ++stats->unbound_points;
        continue;
      }
      flows.push_back(StagedFlow{from, to, finish.category, finish.id});
      ++stats->paired;
      if (finish.category == ac2g || finish.category == legacy_ac2g) has_launch_link[to] = true;
    }
  }

  // Correlation fallback for GPU operations without an ac2g flow (legacy traces; newer Kineto
  // links every kernel, and then the map below is not worth building).
  bool any_unlinked = false;
  for (uint32_t i = 0; i < file.events.size() && !any_unlinked; ++i) {
    const StagedEvent& staged = file.events[i];
    any_unlinked = staged.role == KinetoRole::kGpuOp && staged.correlation >= 0 && !has_launch_link[i];
  }
  if (!any_unlinked) return flows;
  std::unordered_map<int64_t, uint32_t> launch_by_correlation;
  for (uint32_t i = 0; i < file.events.size(); ++i) {
    const StagedEvent& staged = file.events[i];
    if (staged.role == KinetoRole::kLaunch && staged.correlation >= 0) {
      launch_by_correlation.emplace(staged.correlation, i);
    }
  }
  if (launch_by_correlation.empty()) return flows;
  for (uint32_t i = 0; i < file.events.size(); ++i) {
    const StagedEvent& staged = file.events[i];
    if (staged.role != KinetoRole::kGpuOp || staged.correlation < 0 || has_launch_link[i]) continue;
    auto it = launch_by_correlation.find(staged.correlation);
    if (it == launch_by_correlation.end()) continue;
    flows.push_back(StagedFlow{it->second, i, ac2g, staged.correlation});
    ++stats->by_correlation;
  }
  return flows;
}

}  // namespace stepscope::analysis
