#include "analysis/kineto_flow_linker.h"

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

struct FlowKey {
  StringId category;
  int64_t id;
  bool operator==(const FlowKey&) const = default;
};
struct FlowKeyHash {
  size_t operator()(const FlowKey& key) const { return std::hash<int64_t>{}(key.id) * 31u + key.category; }
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
    // First "s" per key; Kineto never reuses an id within a category in one file.
    std::unordered_map<FlowKey, size_t, FlowKeyHash> starts;
    std::unordered_map<FlowKey, size_t, FlowKeyHash> finishes;
    for (size_t i = 0; i < file.flow_endpoints.size(); ++i) {
      const FlowEndpoint& point = file.flow_endpoints[i];
      (point.is_start ? starts : finishes).emplace(FlowKey{point.category, point.id}, i);
    }
    for (size_t i = 0; i < file.flow_endpoints.size(); ++i) {
      const FlowEndpoint& point = file.flow_endpoints[i];
      const FlowKey key{point.category, point.id};
      const auto& partners = point.is_start ? finishes : starts;
      if (!partners.contains(key)) ++stats->unpaired_points;
    }
    // Pairs in the order of their "f" points, so the result does not depend on hashing.
    for (size_t i = 0; i < file.flow_endpoints.size(); ++i) {
      const FlowEndpoint& finish = file.flow_endpoints[i];
      if (finish.is_start) continue;
      auto start_it = starts.find(FlowKey{finish.category, finish.id});
      if (start_it == starts.end()) continue;
      auto finish_it = finishes.find(FlowKey{finish.category, finish.id});
      if (finish_it->second != i) continue;  // a repeated "f": only the first pairs
      const FlowEndpoint& start = file.flow_endpoints[start_it->second];
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

  // Correlation fallback for GPU operations without an ac2g flow.
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
